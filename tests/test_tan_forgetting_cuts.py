"""A member that forgets, when a numeric feature's cut points are fixed mid-stream: its new
pairs' ``l`` is ``log W`` of its decayed counts in records (docs/tan.md, onlinebma.tan.numbers),
whatever its scaled unit λ^-k happens to be at that record.

The bug these tests pin: ``log W`` was taken of the counts in the scaled unit (every count and
pseudo-count times λ^-k), a marginal likelihood of λ^-k times as many records. At λ = 0.95 and
the 500th record that is 1.4e11 records: ``l`` of 5e5 nats on RandomRBF 20 × 10, which fixed
that member's structure posterior on one tree for the rest of the stream.
"""

from __future__ import annotations

import random

import numpy as np

from onlinebma.tan import ModelAveragedTAN, members
from tests.test_tan_exact import Brute

SAMPLE = 30
DECAY = 0.8


def stream(n=SAMPLE + 15, seed=0):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        y = rng.choice("PQ")
        nominal = rng.choice("ab" if y == "P" else "abc")
        value = rng.gauss(1.0 if y == "P" else -0.5, 1.0) + (0.7 if nominal == "a" else 0.0)
        out.append(({"n": nominal, "x": value}, y))
    return out


def learner():
    return ModelAveragedTAN(decay=DECAY, numeric="5 intervals", aode=False,
                            sample_size=SAMPLE)


def test_new_pairs_get_log_w_of_the_decayed_counts_in_records():
    """Right after the cut points of ``x`` are fixed (its ``SAMPLE``-th value), the pair
    (n, x) is new: its ``l`` is log W of the records weighted λ^age, from the brute-force
    family scores of Dirichlet counts (Brute, independent of the learner's code)."""
    data = stream()
    model = learner()
    for x, y in data[:SAMPLE]:
        model.learn_one(x, y)
    grids = model.numeric_readings["x"]
    intervals = grids.code_many(np.array([x["x"] for x, _ in data[:SAMPLE]])).ravel()
    weighted = [({"n": x["n"], "x": int(i)}, y, DECAY ** (SAMPLE - 1 - t))
                for t, ((x, y), i) in enumerate(zip(data[:SAMPLE], intervals))]
    counts = model.state.counts
    domains = {"n": list(counts.values_[counts.feature_code("n")]),
               "x": list(range(len(counts.values_[counts.feature_code("x")])))}
    brute = Brute(weighted, model.ess, list(counts.classes_), domains)
    expected = brute.family("x", "n")[0] - brute.family("x", None)[0]
    (l_pair,) = model.state.edge_log_weights[0]
    assert abs(l_pair - expected) < 1e-9 * max(1.0, abs(expected))


def test_new_pairs_do_not_depend_on_the_scaled_clock(monkeypatch):
    """The same records learned by a member whose scaled unit renormalises every few records
    give the same ``l`` and predictions: a count's scale is bookkeeping, not evidence."""
    data = stream(n=SAMPLE + 40, seed=1)
    plain, renormalising = learner(), learner()
    for x, y in data:
        plain.predict_proba_one(x)
        plain.learn_one(x, y)
    monkeypatch.setattr(members, "RENORMALISE_ABOVE", 3.0)
    for x, y in data:
        renormalising.predict_proba_one(x)
        renormalising.learn_one(x, y)
    np.testing.assert_allclose(renormalising.state.edge_log_weights,
                               plain.state.edge_log_weights, rtol=1e-9, atol=1e-9)
    x = {"n": "a", "x": 0.3}
    p, q = plain.predict_proba_one(x), renormalising.predict_proba_one(x)
    assert all(abs(p[c] - q[c]) < 1e-9 for c in p)
