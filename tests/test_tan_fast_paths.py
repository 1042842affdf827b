"""ModelAveragedTAN's shared and batched computations against the plain ones they replace.

``decay="auto"`` computes its members' predictions together (one coding of the record, one
stacked elimination); here it is checked against an independent dynamic model average of
separately run learners at each rate. The tree sums' own fast paths are checked against the
log path and mpmath in tests/test_spanning.py.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from onlinebma import tuning
from onlinebma.forgetting import AUTO_GRID
from onlinebma.tan import ModelAveragedTAN
from tests.support.dma import WrittenOutWeights

# the rate axis over one interval representation (the representation axis:
# tests/test_tan_representations.py)
INTERVALS = "5 intervals"


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
    auto = ModelAveragedTAN(aode=False, numeric=INTERVALS, structures=structures, decay="auto",
                            sample_size=10)
    members = [ModelAveragedTAN(aode=False, numeric=INTERVALS, structures=structures, decay=r,
                                sample_size=10)
               for r in AUTO_GRID]
    weights = WrittenOutWeights(len(members))
    for x, y in data:
        got = auto.predict_proba_one(x)
        probas = [m.predict_proba_one(x) for m in members]
        want: dict = {}
        for w, p in zip(weights.weights(), probas):
            for label, q in p.items():
                want[label] = want.get(label, 0.0) + w * q
        total = sum(want.values())
        assert set(got) == set(want)
        for label in want:
            assert got[label] == pytest.approx(want[label] / total, abs=1e-12)
        auto.learn_one(x, y)
        for m in members:
            m.learn_one(x, y)
        weights.update([p[y] for p in probas] if y in probas[0] else None)
    posterior = auto.decay_posterior()
    np.testing.assert_allclose([posterior[r] for r in AUTO_GRID], weights.weights(), atol=1e-12)
    beta = auto.beta_posterior()
    np.testing.assert_allclose(list(beta.values()), list(weights.beta_posterior().values()),
                               atol=1e-12)


def chain_records(n, p, seed=0, strength=0.9, missing=0.05, values=3):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        y = int(rng.integers(0, 3))
        prev, x = y % values, {}
        for j in range(p):
            prev = prev if rng.random() < strength else int(rng.integers(0, values))
            if rng.random() >= missing:
                x[f"f{j}"] = f"v{prev}"
        out.append((x, f"y{y}"))
    return out


def test_fast_paths_equal_the_log_path_at_thousands_of_nats(monkeypatch):
    """A long strongly dependent stream: edge log weights of thousands of nats, so the
    float64 and the extended-precision row-scaled paths are both taken. Every prediction,
    per record and batched, equals the log path's to 1e-9."""
    import onlinebma.tan.record_sums as ma
    from onlinebma.stats import elimination

    data = chain_records(1500, 7, seed=3)
    model = ModelAveragedTAN(aode=False, numeric=INTERVALS)
    for x, y in data:
        model.learn_one(x, y)
    X = pd.DataFrame([x for x, _ in data[:300]])
    spreads = []
    plain = ma.log_tree_sum

    def spy(a, *args, **kwargs):
        a = np.asarray(a)
        diag = np.arange(a.shape[-1])
        b = a.copy()
        b[..., diag, diag] = np.nan
        spreads.append(float(np.nanmax(np.nanmax(b, -1) - np.nanmin(b, -1))))
        return plain(a, *args, **kwargs)

    monkeypatch.setattr(ma, "log_tree_sum", spy)
    # every graph through log_tree_sum (not the tree basis, not the edge lists)
    monkeypatch.setattr(tuning, "BASIS_WORK", -1)
    monkeypatch.setattr(tuning, "BASIS_NODES", 0)
    fast_one = [model.predict_proba_one(x) for x, _ in data[:300]]
    fast_many = model.predict_proba_many(X)
    assert max(spreads) > elimination.row_safe_nats(float, 8)  # the extended path ran
    monkeypatch.setattr(ma, "log_tree_sum", lambda a, *args, **kw: plain(a, path="log"))
    slow = model.predict_proba_many(X)
    np.testing.assert_allclose(fast_many.to_numpy(), slow.to_numpy(), rtol=0, atol=1e-9)
    one = pd.DataFrame(fast_one).reindex(columns=slow.columns)
    np.testing.assert_allclose(one.to_numpy(), slow.to_numpy(), rtol=0, atol=1e-9)


@pytest.mark.parametrize("p,values", [(6, 3), (34, 4)])  # row keys fit in int64 / do not
def test_batched_prediction_equals_per_record(p, values):
    data = chain_records(200, p, seed=4, strength=0.7, missing=0.2, values=values)
    model = ModelAveragedTAN(aode=False, numeric=INTERVALS)
    for x, y in data[:150]:
        model.learn_one(x, y)
    rows = [x for x, _ in data[150:]] * 2  # repeated rows are computed once
    batch = model.predict_proba_many(pd.DataFrame(rows))
    one = pd.DataFrame([model.predict_proba_one(x) for x in rows]).reindex(
        columns=batch.columns)
    np.testing.assert_allclose(batch.to_numpy(), one.to_numpy(), rtol=0, atol=1e-12)
