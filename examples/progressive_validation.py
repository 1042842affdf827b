"""River's progressive validation of the three naive Bayes learners against River's own.

Run: python examples/progressive_validation.py [N_RECORDS]
"""

import sys

from river import evaluate, metrics, preprocessing
from river import naive_bayes as river_nb

from onlinebma.datasets import UCIDataset
from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes

n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
data = UCIDataset("mushroom")  # all 22 features nominal; the label is True for poisonous
models = {
    "onlinebma NaiveBayes": NaiveBayes(),
    "onlinebma ModelAveragedNB": ModelAveragedNB(),
    "onlinebma BMANB (gamma=1.02)": BMANB(gamma=1.02),
    # River's MultinomialNB counts tokens: one-hot encode the nominal values first.
    "River MultinomialNB": preprocessing.OneHotEncoder() | river_nb.MultinomialNB(),
}
for name, model in models.items():
    # Two-class labels are bools, as River's binary metrics (LogLoss, ROCAUC, F1) expect.
    metric = metrics.Accuracy() + metrics.LogLoss() + metrics.ROCAUC()
    evaluate.progressive_val_score(data.take(n), model, metric)
    print(f"{name:<30} {metric}")
