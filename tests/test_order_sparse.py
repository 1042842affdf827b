"""Sparse count tables of the stream learners: the counts of every family equal a dense
recount of the records after a stream with new values, missing values and removals, and a
pickle grows with the distinct records, not with the products of numbers of values."""

from __future__ import annotations

import pickle

import numpy as np

from onlinebma.order_mcmc.incremental import StreamingScores
from onlinebma.order_mcmc.sparse import SparseCounts


def _dense_recount(rows, node, parents):
    """``(N_ijk, N_ij)`` of one family counted from the records in a dense array: a parent's
    digit is its code, or one past its largest code when missing (the layout of the tables);
    records with the child missing are skipped."""
    rows = np.asarray(rows)
    room = np.maximum(rows.max(axis=0) + 1, 1)
    radix = [int(room[v] + (rows[:, v] < 0).any()) for v in parents]
    seen = rows[rows[:, node] >= 0]
    digits = [np.where(seen[:, v] >= 0, seen[:, v], room[v]) for v in parents]
    config = np.ravel_multi_index(digits, radix) if parents else np.zeros(len(seen), int)
    q = int(np.prod(radix))
    cells = np.zeros((q, int(room[node])), np.int64)
    np.add.at(cells, (config, seen[:, node]), 1)
    return cells, cells.sum(axis=1)


def _assert_counts_equal_recount(scores, rows):
    n = scores.n
    for f, (node, par) in enumerate(zip(scores.family_nodes, scores.family_parents)):
        cells, configs = scores.dense_counts(f)
        want_cells, want_configs = _dense_recount(rows, int(node), [int(v) for v in par if v < n])
        np.testing.assert_array_equal(cells, want_cells)
        np.testing.assert_array_equal(configs, want_configs)


def test_sparse_tables_equal_a_dense_recount_after_a_stream_with_new_values():
    rng = np.random.default_rng(0)
    m, n = 160, 5
    # Values arrive late (codes grow with time), node 2 is first missing at record 60, and
    # records come one by one, in small batches and in one large batch.
    rows = np.column_stack([rng.integers(0, 2 + (4 * np.arange(m)) // m * (j + 1))
                            for j in range(n)])
    rows[60:][rng.random((m - 60, n)) < 0.15] = -1
    scores = StreamingScores(n, 3, 0.5)
    for t in range(40):
        scores.add(rows[t])
    _assert_counts_equal_recount(scores, rows[:40])
    for lo in range(40, 100, 4):
        scores.add_many(rows[lo:lo + 4])
    scores.add_many(rows[100:])
    _assert_counts_equal_recount(scores, rows)
    for t in range(30):  # a window's oldest records go
        scores.remove(rows[t])
    _assert_counts_equal_recount(scores, rows[30:])
    batch = StreamingScores(n, 3, 0.5)
    batch.add_many(rows[30:])
    for i in range(n):
        np.testing.assert_allclose(scores.log_score(i), batch.log_score(i), rtol=0, atol=1e-9)
    again = pickle.loads(pickle.dumps(scores))
    _assert_counts_equal_recount(again, rows[30:])


def _distinct_stream(n_distinct, spread, m=300, n=6, seed=0):
    """``m`` records drawn from ``n_distinct`` distinct rows, each node's code in row ``r``
    ``spread * r`` shifted per node: every family sees ``n_distinct`` configurations, over
    ``spread * n_distinct`` values per node."""
    rows = (np.arange(n_distinct)[:, None] + np.arange(n)) % n_distinct * spread
    return rows[np.random.default_rng(seed).integers(0, n_distinct, m)]


def test_a_pickle_grows_with_the_distinct_records_not_with_the_numbers_of_values():
    sizes, entries = {}, {}
    for n_distinct in (10, 40):
        for spread in (1, 25):
            scores = StreamingScores(6, 3)
            scores.add_many(_distinct_stream(n_distinct, spread))
            sizes[n_distinct, spread] = len(pickle.dumps(scores))
            entries[n_distinct] = scores.n_cells
            # one configuration and one cell per distinct record and family at most
            assert scores.n_cells <= 2 * n_distinct * len(scores.family_nodes)
    # 1,000 values per node: a dense family of 3 parents would hold 10**12 cells; the
    # pickle grows by the value counts of each node (8 bytes a value) and by wider keys
    # (int64 instead of int32: 4 bytes an entry) only
    for d in (10, 40):
        assert sizes[d, 25] - sizes[d, 1] < 8 * 6 * 25 * d + 4 * entries[d] + 1000
    assert sizes[40, 25] > 2 * sizes[10, 25]  # more distinct records: more counts


def test_sparse_counts_add_lookup_merge_and_sum():
    rng = np.random.default_rng(1)
    dense = np.zeros(5000, np.int64)
    table = SparseCounts()
    for _ in range(300):  # many small additions: the buffer of new keys is merged at times
        keys = np.unique(rng.integers(0, 5000, 7))
        k = rng.integers(1, 4, len(keys))
        table.add(keys, k)
        dense[keys] += k
    np.testing.assert_array_equal(table.lookup(np.arange(5000)), dense)
    drop = np.flatnonzero(dense)[:50]
    table.add(drop, -dense[drop])  # counts falling to zero are dropped at the merge
    dense[drop] = 0
    keys, counts = table.items()
    np.testing.assert_array_equal(keys, np.flatnonzero(dense))
    np.testing.assert_array_equal(counts, dense[keys])
    other = SparseCounts.from_dense(dense[::-1].copy())
    total = table + other
    np.testing.assert_array_equal(total.lookup(np.arange(5000)), dense + dense[::-1])
    assert total == SparseCounts.from_dense(dense + dense[::-1])
    assert total != table

