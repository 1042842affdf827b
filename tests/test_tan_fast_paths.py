"""ModelAveragedTAN's shared and batched computations against the plain ones they replace.

``decay="auto"`` computes its members' predictions together (one coding of the record, one
stacked elimination); here it is checked against an independent dynamic model average of
separately run learners at each rate. The tree sums' own fast paths are checked against the
log path and mpmath in tests/test_spanning.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from onlinebma.naive_bayes.decay import AUTO_FORGETTING, AUTO_GRID
from onlinebma.tan import ModelAveragedTAN


def drifting_stream(n, seed=0, n_features=6, missing=0.1):
    """Nominal chains whose dependence flips halfway, a numeric feature, missing values, a
    value and a class that first appear late."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(n):
        y = int(rng.integers(0, 3 if t > n // 3 else 2))
        prev = y
        x = {}
        for j in range(n_features):
            keep = rng.random() < (0.8 if t < n // 2 else 0.2)
            v = prev if keep else int(rng.integers(0, 3 if t > n // 4 else 2))
            x[f"f{j}"] = f"v{v}"
            prev = v
        x["z"] = float(rng.normal(y, 1.0))
        out.append(({f: v for f, v in x.items() if rng.random() >= missing}, f"y{y}"))
    return out


@pytest.mark.parametrize("structures", ["forests", "trees"])
def test_auto_equals_a_dynamic_average_of_separate_learners(structures):
    data = drifting_stream(160, seed=1)
    auto = ModelAveragedTAN(structures=structures, decay="auto", bin_warmup=10)
    members = [ModelAveragedTAN(structures=structures, decay=r, bin_warmup=10)
               for r in AUTO_GRID]
    log_w = np.full(len(members), -math.log(len(members)))
    for x, y in data:
        got = auto.predict_proba_one(x)
        probas = [m.predict_proba_one(x) for m in members]
        want: dict = {}
        for lw, p in zip(log_w, probas):
            for label, q in p.items():
                want[label] = want.get(label, 0.0) + math.exp(lw) * q
        total = sum(want.values())
        assert set(got) == set(want)
        for label in want:
            assert got[label] == pytest.approx(want[label] / total, abs=1e-12)
        auto.learn_one(x, y)
        for m in members:
            m.learn_one(x, y)
        if y in probas[0]:
            log_w = log_w + np.log([max(p[y], 1e-300) for p in probas])
        log_w = AUTO_FORGETTING * log_w
        log_w -= np.logaddexp.reduce(log_w)
    posterior = auto.decay_posterior()
    np.testing.assert_allclose([posterior[r] for r in AUTO_GRID], np.exp(log_w), atol=1e-12)
