"""Order-free weights of representations (onlinebma.tan.batch_weights): stacking against the
optimality conditions and a grid over the simplex, the cross-validated probabilities against
the folds written out with learn_one, and independence of the rows' order."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from onlinebma.tan import TAN, ModelAveragedTAN
from onlinebma.tan.batch_weights import (
    cross_validated_probabilities,
    evidence_weights,
    folds_of,
    stacking_weights,
)


def score(P, w):
    return float(np.log(P @ w).sum())


@pytest.mark.parametrize("members, seed", [(2, 0), (2, 1), (3, 2), (3, 3)])
def test_stacking_is_the_maximum_over_the_simplex(members, seed):
    rng = np.random.default_rng(seed)
    P = rng.beta(2, 2, size=(80, members)) * rng.uniform(0.2, 1.0, members)
    w = stacking_weights(P)
    assert w.min() >= 0 and math.isclose(w.sum(), 1.0, abs_tol=1e-12)
    # Karush-Kuhn-Tucker: the gradient Σ_i P_ir / (P_i · w) is n where w_r > 0, at most n
    gradient = (P / (P @ w)[:, None]).sum(axis=0)
    n = len(P)
    for g, wr in zip(gradient, w):
        if wr > 1e-8:
            assert g == pytest.approx(n, rel=1e-6)
        else:
            assert g <= n * (1 + 1e-6)
    steps = 200
    best = max(score(P, np.array([*c, steps - sum(c)]) / steps)
               for c in itertools.product(range(steps + 1), repeat=members - 1)
               if sum(c) <= steps)
    assert score(P, w) >= best - 1e-9


def test_weights_do_not_depend_on_the_order_of_the_rows():
    rng = np.random.default_rng(4)
    P = rng.uniform(0.01, 1.0, size=(500, 3))
    shuffled = P[rng.permutation(500)]
    np.testing.assert_allclose(stacking_weights(shuffled), stacking_weights(P), atol=1e-9)
    np.testing.assert_allclose(evidence_weights(shuffled), evidence_weights(P), atol=1e-12)


def test_evidence_is_the_softmax_of_the_log_scores():
    P = np.array([[0.5, 0.25], [0.5, 0.5], [1e-320, 0.5]])  # floored at 1e-300
    logs = np.array([math.log(0.5) * 2 + math.log(1e-300), math.log(0.25) + math.log(0.5) * 2])
    want = np.exp(logs - logs.max()) / np.exp(logs - logs.max()).sum()
    np.testing.assert_allclose(evidence_weights(P), want, atol=1e-12)


def test_folds_follow_the_row_positions():
    folds = folds_of(np.arange(1000), 4)
    assert set(folds.tolist()) == {0, 1, 2, 3}
    for start, stop in [(0, 10), (10, 500), (500, 1000)]:  # partitions at their offsets
        np.testing.assert_array_equal(folds_of(np.arange(start, stop), 4), folds[start:stop])
    with pytest.raises(ValueError, match="n_folds"):
        folds_of(np.arange(3), 1)
    with pytest.raises(ValueError, match="non-negative"):
        folds_of(np.array([-1, 2]))


def test_cross_validated_probabilities_equal_the_folds_written_out():
    rng = np.random.default_rng(5)
    n = 120
    y = pd.Series(rng.choice(["u", "v", "w"], n, p=[0.5, 0.45, 0.05]))
    X = pd.DataFrame({"a": [f"a{(ord(c) + rng.integers(0, 2)) % 3}" for c in y],
                      "b": rng.choice(["p", "q"], n)})
    makers = [lambda: TAN(), lambda: ModelAveragedTAN(ess=3.0)]
    got = cross_validated_probabilities(makers, X, y, n_folds=4)
    folds = folds_of(np.arange(n), 4)
    records = X.to_dict("records")
    for r, make in enumerate(makers):
        for k in range(4):
            model = make()
            for i in np.flatnonzero(folds != k):
                model.learn_one(records[i], y[i])
            for i in np.flatnonzero(folds == k):
                p = model.predict_proba_one(records[i])
                assert got[i, r] == pytest.approx(p.get(y[i], 0.0), abs=1e-9)


@pytest.mark.parametrize("bad, match", [
    (np.zeros((0, 2)), "rows"),
    (np.array([0.5, 0.5]), "rows"),
    (np.array([[0.5, 1.5]]), r"\[0, 1\]"),
    (np.array([[0.5, np.nan]]), r"\[0, 1\]"),
])
def test_bad_probabilities_are_refused(bad, match):
    for weights in (stacking_weights, evidence_weights):
        with pytest.raises(ValueError, match=match):
            weights(bad)
