"""A numeric feature's first value, learned with a weight other than 1 (a forgetting learner's
scaled unit), leaves its moments exactly a point: mean the value, ``m2`` 0. Before the fix
``m2`` came out about 1e-17 by rounding, so a naive Bayes learner did not skip the feature as
constant so far but gave it a variance of about 1e-26, and every class a log likelihood near
-1e15, which rounded away every other feature's evidence."""

import copy
import random

import pytest

from onlinebma.naive_bayes import BMANB, NaiveBayes
from onlinebma.stats.gaussian import GaussianMoments


@pytest.mark.parametrize("w", [2.2798907838232654, 1.0 / 3.0, 7.1, 1e-3])
def test_first_weighted_value_is_a_point(w):
    rng = random.Random(0)
    for _ in range(200):
        x = rng.uniform(-5, 5)
        m = GaussianMoments()
        m.update(x, w)
        assert (m.n, m.mean, m.m2) == (w, x, 0.0)


@pytest.mark.parametrize("make", [lambda: NaiveBayes(decay=0.99, numeric="Gaussian"),
                                  lambda: BMANB(decay=0.99, numeric="Gaussian")],
                         ids=["NaiveBayes", "BMANB"])
def test_a_feature_seen_once_is_skipped_as_constant(make):
    """The feature ``late`` first appears at record 82 of a forgetting learner (its scaled
    unit is then about 2.28); seen once, it carries no information yet for the learners with
    plug-in Gaussians (ModelAveragedNB's Normal-Gamma predictive uses a single value)."""
    rng = random.Random(1)
    rows = [({"z": rng.gauss(y, 1.0)}, y) for y in (rng.randrange(2) for _ in range(82))]
    learner = make()
    for x, y in rows:
        learner.learn_one(x, y)
    without = copy.deepcopy(learner)
    without.learn_one({"z": 0.3}, 0)
    want = without.predict_proba_one({"z": -0.1})
    for _ in range(20):  # whether m2 rounds away from 0 depends on the value
        with_late = copy.deepcopy(learner)
        with_late.learn_one({"z": 0.3, "late": rng.uniform(-1, 1)}, 0)
        got = with_late.predict_proba_one({"z": -0.1, "late": rng.uniform(-1, 1)})
        assert got == pytest.approx(want, abs=1e-12)
