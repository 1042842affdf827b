"""Forgetting over long streams: a class or a feature not seen for many records.

With ``decay`` = 0.95 a record's weight is 0.95^age, below the smallest float after some
14,500 records. The moments of a class (or a feature) not seen for that long would underflow to
zero, and the class Gaussian, a ratio of two of them, to 0 / 0. The brute force here computes
every class Gaussian from the raw records with weights normalised within the class in log
space, ``exp(log w_i - max_j log w_j)``: the class Gaussian is the same as with the decayed
weights (a ratio), and so is the prediction, the class prior staying finite through its
pseudo-count.
"""

import math
import random

import numpy as np
import pytest
from scipy.special import logsumexp

from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
from onlinebma.stats.numerics import VAR_SMOOTHING

LAMBDA = 0.95
STALE = 16_000  # records after the last of class "old": 0.95^16000 = 1e-357, below floats


def _records(seed=0):
    """20 records of class "old" (features x and gone), then STALE of class "new" (x only)."""
    rng = random.Random(seed)
    rows = [({"x": rng.gauss(0, 1), "gone": rng.gauss(5, 2)}, "old") for _ in range(20)]
    rows += [({"x": rng.gauss(3, 1)}, "new") for _ in range(STALE)]
    return rows


def _weighted(values, log_w):
    """Mean and maximum-likelihood variance with weights exp(log_w), normalised in log space."""
    w = np.exp(np.asarray(log_w) - max(log_w))
    v = np.asarray(values)
    mean = (w * v).sum() / w.sum()
    return mean, (w * (v - mean) ** 2).sum() / w.sum()


def _brute_force(rows, x, alpha=1.0):
    """NaiveBayes's P(y | x) (eq. 6, Gaussian features) from the raw records."""
    t = len(rows)  # every record decays once after it is learned: weight λ^(t - i)
    log_w = [(t - i) * math.log(LAMBDA) for i in range(t)]
    classes = list(dict.fromkeys(y for _, y in rows))
    n = math.exp(logsumexp(log_w))
    scores = {}
    for c in classes:
        n_c = math.exp(logsumexp([lw for lw, (_, y) in zip(log_w, rows) if y == c]))
        s = math.log(n_c + alpha) - math.log(n + alpha * len(classes))
        for f, v in x.items():
            seen = [(r[f], lw) for lw, (r, _) in zip(log_w, rows) if f in r]
            _, marginal_var = _weighted(*zip(*seen))
            floor = VAR_SMOOTHING * marginal_var
            mine = [(r[f], lw) for lw, (r, y) in zip(log_w, rows) if f in r and y == c] or seen
            mean, var = _weighted(*zip(*mine))
            var += floor
            s += -0.5 * (math.log(2 * math.pi * var) + (v - mean) ** 2 / var)
        scores[c] = s
    top = max(scores.values())
    norm = top + math.log(sum(math.exp(s - top) for s in scores.values()))
    return {c: math.exp(s - norm) for c, s in scores.items()}


@pytest.fixture(scope="module")
def rows():
    return _records()


@pytest.mark.parametrize("x", [{"x": 0.1}, {"x": 0.1, "gone": 4.0}, {"gone": 9.0}])
def test_naive_bayes_keeps_a_long_unseen_class_gaussian(rows, x):
    model = NaiveBayes(decay=LAMBDA, numeric="Gaussian")
    for r, y in rows:
        model.learn_one(r, y)
    p, q = model.predict_proba_one(x), _brute_force(rows, x)
    assert p.keys() == q.keys()
    for c in q:
        assert p[c] == pytest.approx(q[c], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("make", [lambda: BMANB(decay=LAMBDA, numeric="Gaussian"),
                                  lambda: ModelAveragedNB(decay=LAMBDA, structure_decay=LAMBDA)])
def test_structure_learners_stay_finite_after_a_long_unseen_class(rows, make):
    model = make()
    for i, (r, y) in enumerate(rows):
        model.learn_one(r, y)
        if i % 500 == 0 or i > len(rows) - 200:
            p = model.predict_proba_one({"x": 0.1, "gone": 4.0})
            assert all(math.isfinite(v) and v >= 0 for v in p.values())
            assert sum(p.values()) == pytest.approx(1.0, abs=1e-12)
    assert all(math.isfinite(v) for v in model.feature_posteriors().values())


@pytest.mark.slow
@pytest.mark.parametrize("cls", [NaiveBayes, BMANB])
def test_auto_keeps_a_long_unseen_class_like_its_members(rows, cls):
    """decay="auto" (one state with a member axis) against its members run one by one, mixed
    with its posterior over the rates."""
    model = cls(decay="auto")
    members = [cls(decay=rate) for rate in model.decay_posterior()]
    for r, y in rows:
        model.learn_one(r, y)
        for m in members:
            m.learn_one(r, y)
    posterior = model.decay_posterior()
    assert list(posterior) == [m.decay for m in members]
    for x in ({"x": 0.1}, {"x": 0.1, "gone": 4.0}):
        p = model.predict_proba_one(x)
        q = {}
        for m, w in zip(members, posterior.values()):
            for c, v in m.predict_proba_one(x).items():
                q[c] = q.get(c, 0.0) + w * v
        assert p.keys() == q.keys()
        for c in q:
            assert p[c] == pytest.approx(q[c], rel=1e-9, abs=1e-12)
