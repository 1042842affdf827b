"""Bad input to the naive Bayes family (issue 13): hostile values never poison a learner, every
predicted row is a distribution, a refused batch changes nothing and names the feature."""

import math
import pickle

import numpy as np
import pandas as pd
import pytest

from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
from onlinebma.stats.gaussian import MAX_ABS_VALUE

LEARNERS = [NaiveBayes(), ModelAveragedNB(), ModelAveragedNB(prior="BDeu"), BMANB(gamma=1.02),
            NaiveBayes(decay=0.99), ModelAveragedNB(decay=0.99, structure_decay=0.9)]


def trained(learner, n=200, seed=0):
    rng = np.random.default_rng(seed)
    model = learner.clone()
    for _ in range(n):
        y = int(rng.integers(3))
        model.learn_one({"b": float(rng.normal(y)), "c": "xyz"[(y + int(rng.integers(2))) % 3],
                         "d": float(rng.normal())}, y)
    return model


@pytest.mark.parametrize("learner", LEARNERS, ids=repr)
def test_a_huge_value_is_refused_clearly_and_changes_nothing(learner):
    model = trained(learner)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="'b'"):
        model.learn_one({"b": 1e200, "c": "x"}, 1)
    assert pickle.dumps(model) == before
    with pytest.raises(ValueError, match="'b'"):
        model.learn_many(pd.DataFrame({"c": ["x", "y"], "b": [1.0, -1e200]}), pd.Series([0, 1]))
    assert pickle.dumps(model) == before
    model.learn_one({"b": MAX_ABS_VALUE, "c": "x"}, 1)  # the bound itself is fine
    for _ in range(3):
        model.learn_one({"b": -MAX_ABS_VALUE}, 0)
    p = model.predict_proba_one({"b": 0.5, "c": "y"})
    assert all(math.isfinite(v) for v in p.values()) and math.isclose(sum(p.values()), 1.0)


QUERIES = [1e7, -3e9, 1e15, 1e100, 1e155, 1e200, -1e300, 1.7e308, -1.7e308, 5e-324]


@pytest.mark.parametrize("learner", LEARNERS, ids=repr)
def test_every_predicted_row_is_a_finite_distribution(learner):
    model = trained(learner)
    X = pd.DataFrame({"b": QUERIES, "d": QUERIES[::-1], "c": ["x", "y"] * 5})
    many = model.predict_proba_many(X).to_numpy()
    assert np.isfinite(many).all() and (many >= 0).all()
    np.testing.assert_allclose(many.sum(axis=1), 1.0, rtol=0, atol=1e-9)
    for (_, row), expected in zip(X.iterrows(), many):
        one = model.predict_proba_one(row.to_dict())
        assert all(math.isfinite(v) and v >= 0 for v in one.values())
        assert abs(sum(one.values()) - 1.0) <= 1e-9
        np.testing.assert_allclose([one[c] for c in model.predict_proba_many(X).columns],
                                   expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("learner", LEARNERS, ids=repr)
def test_a_refused_batch_changes_nothing_and_names_the_feature(learner):
    model = trained(learner)
    before = pickle.dumps(model)
    X = pd.DataFrame({"c": ["x", "y", "z"], "new": ["p", "q", "p"],
                      "b": pd.Series([1.0, pd.NA, "oops"], dtype=object)})
    with pytest.raises(TypeError, match="'b'"):
        model.learn_many(X, pd.Series([0, 1, 2]))
    assert pickle.dumps(model) == before
    # pd.NA in an object column of numbers is a missing value, not an error
    X = pd.DataFrame({"c": ["x", "y"], "b": pd.Series([1.5, pd.NA], dtype=object)})
    model.learn_many(X, pd.Series([0, 1]))
    assert model.predict_proba_one({"b": 1.5})
