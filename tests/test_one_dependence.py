"""AODE's estimates :func:`onlinebma.tan.one_dependence.log_joint` against a straightforward
implementation of Webb, Boughton & Wang's (2005) eq. 9 with Weka 3.6's Laplace and
m-estimates (:mod:`onlinebma.tan.aode` states them), written here as loops over the classes,
the super-parents and their children, to 1e-12.

The counts are those of weighted training records (the weights of ``R`` forgetting rates)
counted here for one query record, in the layout of
:meth:`~onlinebma.stats.pairs.PairCounts.record_columns` (checked against a
:class:`~onlinebma.stats.pairs.PairCounts` of the same records). Both of the function's
paths (plain Python floats and numpy) are checked, chosen by monkeypatching
:data:`onlinebma.tuning.NARROW_AODE_TERMS`, and on both sides of its default.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from onlinebma import tuning
from onlinebma.stats.pairs import PairCounts
from onlinebma.tan.one_dependence import log_joint

RTOL = 1e-12
PATHS = {"plain": 10 ** 9, "numpy": -1}  # NARROW_AODE_TERMS forcing each path


def training(n, k, r, rates, seed, missing=0.2):
    """``n`` random records ``(n, len(r))`` of value codes (``-1`` missing), their classes
    ``(n,)`` in ``0..k-1`` and weights ``(len(rates), n)``: ``rate^age`` (a forgetting
    learner's decayed counts in record units)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(k, size=n)
    # values depend on the class, so that the estimators differ
    x = (rng.integers(0, 2, size=(n, len(r))) + y[:, None]) % np.asarray(r)
    x[rng.random(x.shape) < missing] = -1
    age = np.arange(n)[::-1]
    weights = np.array([rate ** age for rate in rates])
    return x, y, weights


def record_cells(x, y, weights, k, query):
    """The cells ``(R, K, L)`` of the record ``query`` (every feature observed) counted from
    weighted training records, in the order of ``PairCounts.record_columns``: ``N(c)``, the
    ``N(c, x_u)``, the ``N_u(c)``, then per pair ``(u, v)``, ``u < v`` in
    ``np.triu_indices`` order, ``N(c, x_u, x_v)``, ``N_uv(c, x_u)``, ``N_uv(c, x_v)`` and
    ``N_uv(c)``."""
    m = len(query)
    pairs = list(zip(*np.triu_indices(m, 1)))
    observed = x >= 0
    same = x == np.asarray(query)
    rows = []
    for w in weights:
        per_class = []
        for c in range(k):
            wc = w * (y == c)
            cells = [wc.sum()]
            cells += [wc[same[:, u]].sum() for u in range(m)]
            cells += [wc[observed[:, u]].sum() for u in range(m)]
            cells += [wc[same[:, u] & same[:, v]].sum() for u, v in pairs]
            cells += [wc[same[:, u] & observed[:, v]].sum() for u, v in pairs]
            cells += [wc[observed[:, u] & same[:, v]].sum() for u, v in pairs]
            cells += [wc[observed[:, u] & observed[:, v]].sum() for u, v in pairs]
            per_class.append(cells)
        rows.append(per_class)
    return np.array(rows, dtype=float)


def eq9(cells, r, m_estimate, frequency_limit):
    """``log P̂(c, x)`` ``(K,)`` of one count row ``cells`` ``(K, L)``: eq. 9's mean over
    the super-parents ``u`` of ``P̂(c, x_u) Π_{v ≠ u} P̂(x_v | c, x_u)``, or naive Bayes
    ``P̂(c) Π_v P̂(x_v | c)`` when no value is frequent enough (eq. 8)."""
    k, m = len(cells), len(r)
    p = m * (m - 1) // 2
    pair_index = {pair: i for i, pair in enumerate(zip(*np.triu_indices(m, 1)))}
    w = m_estimate

    def estimate(count, margin, values):  # Weka's estimate over `values` outcomes
        if w is None:
            return math.log(count + 1.0) - math.log(margin + values)
        return math.log(count + w / values) - math.log(margin + w)

    n = sum(cells[c][0] for c in range(k))
    parents = [u for u in range(m) if sum(cells[c][1 + u] for c in range(k)) >= frequency_limit]
    out = []
    for c in range(k):
        row = cells[c]
        if not parents:
            total = estimate(row[0], n, k)
            for v in range(m):
                total += estimate(row[1 + v], row[1 + m + v], r[v])
            out.append(total)
            continue
        spodes = []
        for u in parents:
            n_u = sum(cells[d][1 + m + u] for d in range(k))
            total = estimate(row[1 + u], n_u, k * r[u])
            for v in range(m):
                if v == u:
                    continue
                i = pair_index[min(u, v), max(u, v)]
                joint = row[1 + 2 * m + i]
                margin = row[1 + 2 * m + (p if u < v else 2 * p) + i]  # N_uv(c, x_u)
                total += estimate(joint, margin, r[v])
            spodes.append(total)
        top = max(spodes)
        out.append(top + math.log(sum(math.exp(s - top) for s in spodes))
                   - math.log(len(spodes)))
    return np.array(out)


def assert_matches(cells, r, m_estimate, frequency_limit):
    got = log_joint(cells, r, m_estimate, frequency_limit)
    rows = cells if cells.ndim == 3 else cells[None]
    want = np.array([eq9(row.tolist(), r.tolist(), m_estimate, frequency_limit)
                     for row in rows])
    want = want if cells.ndim == 3 else want[0]
    assert got.shape == want.shape
    assert np.isfinite(want).all() and np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=0)
    return got


def test_record_cells_are_the_layout_of_pair_counts():
    r = np.array([3, 2, 4, 2])
    rates = [1.0, 0.9]
    x, y, weights = training(30, 3, r, rates, seed=1)
    counts = PairCounts(n_members=len(rates))
    for c in range(3):
        counts.add_class(c)
    codes = np.array([counts.add_feature(u) for u in range(len(r))])
    for u, r_u in enumerate(r):
        for value in range(r_u):
            counts.add_value(u, value)
    for t in range(len(y)):
        seen = np.flatnonzero(x[t] >= 0)
        counts.add(int(y[t]), counts.record_columns(codes[seen], x[t, seen]), weights[:, t])
    query = [0, 1, 1, 0]
    gathered = counts.gather(counts.record_columns(codes, np.array(query)))
    np.testing.assert_allclose(gathered, record_cells(x, y, weights, 3, query), rtol=1e-13)


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("m_estimate", [None, 0.5, 3.0])
@pytest.mark.parametrize("rates, k, r", [
    ([1.0], 3, [3, 2, 4, 2, 3, 5, 2, 3]),
    ([1.0, 0.97, 0.9, 0.8, 0.6], 2, [2, 3, 2]),  # a narrow record of a stack
    ([1.0, 0.95], 4, [4, 3, 2, 5, 3]),
    ([0.9], 2, [3]),  # one feature: a super-parent with no child
    ([1.0, 0.9], 3, []),  # no observed feature: naive Bayes of the class counts
], ids=repr)
def test_log_joint_is_eq9_on_both_paths(monkeypatch, path, m_estimate, rates, k, r):
    monkeypatch.setattr(tuning, "NARROW_AODE_TERMS", PATHS[path])
    r = np.array(r, dtype=np.int64)
    x, y, weights = training(60, k, r, rates, seed=len(r) + k)
    query = [u % r_u for u, r_u in enumerate(r)]
    cells = record_cells(x, y, weights, k, query)
    for frequency_limit in (0, 1, 2, 10 ** 6):  # from every value to none qualifying
        stacked = assert_matches(cells, r, m_estimate, frequency_limit)
        flat = assert_matches(cells[0], r, m_estimate, frequency_limit)  # 2-D input
        np.testing.assert_allclose(flat, stacked[0], rtol=RTOL, atol=0)


@pytest.mark.parametrize("path", sorted(PATHS))
def test_unseen_values_are_no_super_parents(monkeypatch, path):
    """Values never seen at some rates (a count row's frequencies below the limit for some
    super-parents, every one for another row)."""
    monkeypatch.setattr(tuning, "NARROW_AODE_TERMS", PATHS[path])
    r = np.array([4, 3, 5, 4])
    x, y, weights = training(40, 3, r, [1.0, 0.8, 0.5], seed=7)
    query = [3, 2, 4, 3]  # values the training records (codes 0..2 over 1..3) rarely take
    cells = record_cells(x, y, weights, 3, query)
    cells[2, :, 1:1 + len(r)] = 0.0  # the third row has seen none of the record's values
    frequencies = cells[:, :, 1:1 + len(r)].sum(axis=1)
    for limit in (1, 2):
        parents = frequencies >= limit
        assert parents.any(axis=1)[:2].all() and not parents.all()
        assert not parents[2].any()
        for m_estimate in (None, 2.0):
            assert_matches(cells, r, m_estimate, limit)


@pytest.mark.parametrize("side", [0, 1])
def test_the_default_threshold_chooses_either_path_exactly(side):
    """Records just within and just past :data:`onlinebma.tuning.NARROW_AODE_TERMS`
    (``R K (m + 1)²`` terms) against eq. 9."""
    k, rates = 2, [1.0]
    m = 1
    while k * len(rates) * (m + 2) ** 2 <= tuning.NARROW_AODE_TERMS:
        m += 1
    m += side  # terms at most the threshold (side 0), past it (side 1)
    assert (k * len(rates) * (m + 1) ** 2 <= tuning.NARROW_AODE_TERMS) == (side == 0)
    r = np.array([2 + u % 3 for u in range(m)])
    x, y, weights = training(50, k, r, rates, seed=m)
    cells = record_cells(x, y, weights, k, [u % 2 for u in range(m)])
    for m_estimate in (None, 1.0):
        assert_matches(cells, r, m_estimate, 1)
