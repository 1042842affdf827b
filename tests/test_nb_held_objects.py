"""The naive Bayes learners hold objects that count into the learners' own statistics
(``naive_bayes/batches.py``'s ``BatchPaths``, ``marginals.py``'s ``MarginalLikelihoods``):
a pickled, deep-copied or merged learner must keep them pointing at its own statistics, or
``learn_many`` after the copy would count into tables the learner no longer reads. Each
copy here goes on learning (a frame, then records) beside the original, and predicts as it
does.
"""

from __future__ import annotations

import copy
import pickle
import random

import numpy as np
import pandas as pd
import pytest

from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes

LEARNERS = [
    (NaiveBayes, {}),
    (NaiveBayes, {"numeric": "Gaussian"}),
    (ModelAveragedNB, {}),
    (ModelAveragedNB, {"numeric": "Gaussian"}),
    (ModelAveragedNB, {"prior": "BDeu", "ess": 2.0, "numeric": "Gaussian"}),
    (BMANB, {"numeric": "Gaussian"}),
]


def _frame(n: int, seed: int):
    rng = random.Random(seed)
    rows, labels = [], []
    for _ in range(n):
        y = rng.choice("abc")
        rows.append({"colour": rng.choice(["red", "blue"] if y == "a" else ["blue", "green"]),
                     "size": rng.gauss(1.0 if y == "b" else 0.0, 1.0)})
        labels.append(y)
    return pd.DataFrame(rows), pd.Series(labels)


def _copies(model):
    """A pickle round trip, a deep copy and a merge with an empty learner of ``model``."""
    return {"pickle": pickle.loads(pickle.dumps(model)), "deepcopy": copy.deepcopy(model),
            "merge": model.merge(model.clone())}


@pytest.mark.parametrize(("cls", "params"), LEARNERS,
                         ids=[f"{c.__name__}{p}" for c, p in LEARNERS])
def test_a_copy_learns_into_its_own_statistics(cls, params):
    X, y = _frame(600, seed=3)
    original = cls(**params)
    original.learn_many(X.iloc[:300], y.iloc[:300])
    copies = _copies(original)
    for model in (original, *copies.values()):
        model.learn_many(X.iloc[300:500], y.iloc[300:500])
        for x, label in zip(X.iloc[500:].to_dict("records"), y.iloc[500:]):
            model.learn_one(x, label)
    expected = original.predict_proba_many(X).to_numpy()
    fresh = cls(**params)  # and the original is what one learner of the stream is
    fresh.learn_many(X.iloc[:300], y.iloc[:300])
    fresh.learn_many(X.iloc[300:500], y.iloc[300:500])
    for x, label in zip(X.iloc[500:].to_dict("records"), y.iloc[500:]):
        fresh.learn_one(x, label)
    np.testing.assert_allclose(fresh.predict_proba_many(X).to_numpy(), expected, rtol=0,
                               atol=1e-12)
    for name, model in copies.items():
        assert model.statistics.records == 600, name
        np.testing.assert_allclose(model.predict_proba_many(X).to_numpy(), expected, rtol=0,
                                   atol=1e-12, err_msg=name)
