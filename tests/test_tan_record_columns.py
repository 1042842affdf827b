"""PairCounts.record_columns: records of at most DESIGN_FEATURES observed features take
their columns from one int product with a design matrix; it equals the gathers that wider
records and batches take, for every subset size, capacity and value."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from onlinebma import tuning
from onlinebma.stats.pairs import PairCounts

DESIGN_FEATURES = tuning.DESIGN_FEATURES


def counts_with_values(rng, n):
    pc = PairCounts()
    pc.add_class("a")
    sizes = rng.integers(1, 7, n)  # capacities from 1 to 8 values
    for u in range(n):
        pc.add_feature(f"f{u}")
        for v in range(sizes[u]):
            pc.add_value(u, v)
    return pc, sizes


@pytest.mark.parametrize("m", [1, 2, 5, DESIGN_FEATURES, DESIGN_FEATURES + 2])
def test_the_design_product_equals_the_gathers(monkeypatch, m):
    rng = np.random.default_rng(m)
    n = DESIGN_FEATURES + 4
    pc, sizes = counts_with_values(rng, n)
    batch = []
    for _ in range(20):
        codes = np.sort(rng.choice(n, m, replace=False))
        values = np.array([rng.integers(0, sizes[u]) for u in codes])
        got = pc.record_columns(codes, values)
        monkeypatch.setattr(tuning, "DESIGN_FEATURES", -1)  # gathers only
        gathered = copy.deepcopy(pc)  # a copy's plans are empty
        want = gathered.record_columns(codes, values)
        monkeypatch.setattr(tuning, "DESIGN_FEATURES", DESIGN_FEATURES)
        np.testing.assert_array_equal(got, want)
        batch.append((codes, values, want))
    # a batch of records observing the same features: gathered, one row per record
    codes = batch[0][0]
    rows = np.stack([np.array([rng.integers(0, sizes[u]) for u in codes]) for _ in range(4)])
    many = pc.record_columns(codes, rows)
    for row, cols in zip(rows, many):
        np.testing.assert_array_equal(cols, pc.record_columns(codes, row))
