"""Classify a stream record by record with learn_one / predict_proba_one.

Each record is first predicted, then learned: the model is always tested on data it has not
seen. Run: python examples/stream_learn_one.py [N_RECORDS]
"""

import sys

from onlinebma.datasets import UCIDataset
from onlinebma.naive_bayes import ModelAveragedNB

n = int(sys.argv[1]) if len(sys.argv) > 1 else None
stream = UCIDataset("house-votes-84")  # 435 US congress voting records, 16 yes/no votes
# The label is a bool: True for a Republican, False for a Democrat (stream.true_means).
model = ModelAveragedNB()

correct = seen = 0
for x, y in stream.take(n) if n else stream:
    proba = model.predict_proba_one(x)  # {} before the first record
    if proba:
        correct += max(proba, key=proba.get) == y
        seen += 1
    model.learn_one(x, y)

print(f"accuracy on {seen} records predicted before learning them: {correct / seen:.3f}")
print("last prediction:", {k: round(v, 3) for k, v in proba.items()})
