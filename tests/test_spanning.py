"""onlinebma.stats.spanning against independent sums over every tree and forest.

The references never use the matrix-tree theorem: spanning trees are enumerated from Prüfer
sequences (Cayley: ``n**(n-2)`` of them), rooted forests as acyclic edge subsets whose trees
each pick one root, and the sums are taken in log space (float) or with 100-digit mpmath
(positive terms only, so the reference itself loses nothing at any spread). For graphs too
large to enumerate, the reference is mpmath's LU determinant of the reduced Laplacian at a
precision chosen from the spread and checked against a second run at twice that precision.
"""

from __future__ import annotations

import itertools
import math
import warnings

import mpmath
import numpy as np
import pytest

from onlinebma.stats import elimination
from onlinebma.stats.spanning import (
    edge_probabilities,
    float_path_is_safe,
    log_forest_sum,
    log_tree_sum,
    scaled_path_is_safe,
)
from tests.support.trees import prufer_trees

NEG = -np.inf


# ---------------------------------------------------------------- independent references


def rooted_forests(n: int):
    """Every spanning forest of ``n`` nodes as ``(edges, components)`` (acyclic edge sets)."""
    pairs = list(itertools.combinations(range(n), 2))
    for size in range(n):
        for edges in itertools.combinations(pairs, size):
            parent = list(range(n))

            def find(i, parent=parent):
                while parent[i] != i:
                    i = parent[i]
                return i

            acyclic = True
            for u, v in edges:
                ru, rv = find(u), find(v)
                if ru == rv:
                    acyclic = False
                    break
                parent[ru] = rv
            if acyclic:
                comps: dict[int, list[int]] = {}
                for i in range(n):
                    comps.setdefault(find(i), []).append(i)
                yield edges, list(comps.values())


def log_sum(values) -> float:
    values = [v for v in values if v != NEG]
    if not values:
        return NEG
    top = max(values)
    return top + math.log(math.fsum(math.exp(v - top) for v in values))


def brute_tree(lw: np.ndarray) -> float:
    n = lw.shape[0]
    return log_sum(sum(lw[u, v] for u, v in t) for t in prufer_trees(n))


def brute_forest(lw: np.ndarray, r: np.ndarray) -> float:
    n = lw.shape[0]
    terms = []
    for edges, comps in rooted_forests(n):
        w = sum(lw[u, v] for u, v in edges)
        w += sum(log_sum(r[c] for c in comp) for comp in comps)
        terms.append(w)
    return log_sum(terms)


def mp_brute_tree(lw: np.ndarray, dps: int = 100) -> float:
    """``log sum_T prod w`` with every tree's weight summed in mpmath (no cancellation)."""
    n = lw.shape[0]
    with mpmath.workdps(dps):
        total = mpmath.fsum(mpmath.exp(mpmath.fsum(mpmath.mpf(lw[u, v]) for u, v in t))
                            for t in prufer_trees(n)
                            if all(lw[u, v] > NEG for u, v in t))
        return float(mpmath.log(total))


def mp_det_tree(lw: np.ndarray, ground: int = 0) -> float:
    """``log det`` of the reduced Laplacian by mpmath's LU, at a precision that covers the
    spread of the weights (LU can cancel about that many digits), confirmed by a second run
    at twice the precision. Only for moderate spreads: the precision grows with the spread."""
    finite = lw[np.isfinite(lw)]
    spread = float(finite.max() - finite.min())
    n = lw.shape[0]
    dps = int(spread / math.log(10)) + 60
    results = []
    for prec in (dps, 2 * dps):
        with mpmath.workdps(prec):
            w = [[mpmath.exp(mpmath.mpf(lw[i, j])) if i != j and lw[i, j] > NEG else mpmath.mpf(0)
                  for j in range(n)] for i in range(n)]
            keep = [i for i in range(n) if i != ground]
            lap = mpmath.matrix(n - 1, n - 1)
            for a, i in enumerate(keep):
                for b, j in enumerate(keep):
                    lap[a, b] = mpmath.fsum(w[i]) if i == j else -w[i][j]
            results.append(mpmath.log(mpmath.det(lap)))
    with mpmath.workdps(dps):
        assert abs(results[0] - results[1]) < mpmath.mpf(10) ** -40 * (1 + abs(results[1]))
        return float(results[1])


def mp_eliminate_tree(lw: np.ndarray, order, dps: int = 100) -> float:
    """The tree sum by eliminating the nodes in ``order`` (all but the last one) in 100-digit
    mpmath: pivot ``d_k = sum_j w_kj`` and ``w_ij += w_ik w_kj / d_k``, positive terms only,
    so the precision needed does not grow with the spread. Checks rounding at sizes the
    enumerations cannot reach (their correctness is checked by the enumerations)."""
    n = lw.shape[0]
    with mpmath.workdps(dps):
        w = {(i, j): mpmath.exp(mpmath.mpf(lw[i, j]))
             for i in range(n) for j in range(n) if i != j and lw[i, j] > NEG}
        log_det = mpmath.mpf(0)
        alive = list(order)
        for k in order[:-1]:
            alive.remove(k)
            row = {j: w[k, j] for j in alive if (k, j) in w}
            d = mpmath.fsum(row.values())
            if d == 0:
                return NEG
            log_det += mpmath.log(d)
            for i in row:
                for j in row:
                    if i != j:
                        w[i, j] = w.get((i, j), mpmath.mpf(0)) + row[i] * row[j] / d
        return float(log_det)


# ---------------------------------------------------------------- random graphs


def random_weights(rng, n: int, scale: float = 2.0, p_missing: float = 0.0) -> np.ndarray:
    lw = rng.normal(0.0, scale, (n, n))
    lw = np.triu(lw, 1)
    lw = lw + lw.T
    missing = np.triu(rng.random((n, n)) < p_missing, 1)
    lw[missing | missing.T] = NEG
    np.fill_diagonal(lw, rng.normal(0, 5, n))  # ignored
    return lw


def clusters(rng, sizes, strong=(2e4, 3e4), weak=(-3e4, -2e4), p_missing=0.3):
    """Clusters of strongly linked nodes joined by very weak (sometimes absent) edges."""
    n = sum(sizes)
    label = np.repeat(np.arange(len(sizes)), sizes)
    lw = np.where(label[:, None] == label[None, :], rng.uniform(*strong, (n, n)),
                 rng.uniform(*weak, (n, n)))
    missing = (rng.random((n, n)) < p_missing) & (label[:, None] != label[None, :])
    lw[missing] = NEG
    lw = np.triu(lw, 1)
    lw = lw + lw.T
    np.fill_diagonal(lw, 0.0)
    return lw


def assert_close(got, want, tol):
    got, want = float(got), float(want)
    if want == NEG:
        assert got == NEG
    else:
        assert abs(got - want) <= tol, (got, want, got - want, tol)


@pytest.fixture(autouse=True)
def _runtime_warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


# ---------------------------------------------------------------- the enumerators themselves


def test_enumerators_count_cayley_and_forests():
    for n in range(1, 7):
        trees = {frozenset(map(frozenset, t)) for t in prufer_trees(n)}
        assert len(trees) == n ** (n - 2) if n > 1 else len(trees) == 1
        assert all(len(t) == n - 1 for t in trees)
    # rooted forests of K_n number (n+1)^(n-1) (each forest counted once per choice of roots)
    for n in range(1, 6):
        count = sum(math.prod(len(c) for c in comps) for _, comps in rooted_forests(n))
        assert count == (n + 1) ** (n - 1)


# ---------------------------------------------------------------- log_tree_sum


@pytest.mark.parametrize("n", range(1, 8))
def test_tree_sum_matches_prufer_enumeration(n):
    rng = np.random.default_rng(n)
    for p_missing in (0.0, 0.3):
        lw = random_weights(rng, n, p_missing=p_missing)
        assert_close(log_tree_sum(lw), brute_tree(lw), 1e-10)


def test_small_cases():
    assert float(log_tree_sum(np.zeros((1, 1)))) == 0.0  # one tree, no edges
    assert float(log_tree_sum(np.array([[7.0, 1.5], [1.5, -3.0]]))) == pytest.approx(1.5)
    assert float(log_tree_sum(np.array([[0.0, NEG], [NEG, 0.0]]))) == NEG
    # unit triangle and K4: Cayley's n^(n-2)
    assert float(log_tree_sum(np.zeros((4, 4)))) == pytest.approx(math.log(16))


@pytest.mark.parametrize("n", [3, 5, 6])
def test_every_ground_gives_the_same_sum(n):
    rng = np.random.default_rng(10 + n)
    lw = random_weights(rng, n, p_missing=0.2)
    want = brute_tree(lw)
    for ground in range(-n, n):
        assert_close(log_tree_sum(lw, ground=ground), want, 1e-10)


def test_disconnected_graphs_have_no_spanning_tree():
    lw = random_weights(np.random.default_rng(3), 6)
    two = lw.copy()
    two[:3, 3:] = NEG
    two[3:, :3] = NEG
    isolated = lw.copy()
    isolated[4, :] = NEG
    isolated[:, 4] = NEG
    empty = np.full((5, 5), NEG)
    for g in (two, isolated):
        for ground in range(6):
            assert float(log_tree_sum(g, ground=ground)) == NEG
    assert float(log_tree_sum(empty)) == NEG


def test_batches_over_leading_axes():
    rng = np.random.default_rng(4)
    n = 5
    stack = np.stack([random_weights(rng, n, p_missing=0.25) for _ in range(12)])
    stack[3, 0, :] = NEG  # one disconnected graph in the batch
    stack[3, :, 0] = NEG
    stack = stack.reshape(3, 4, n, n)
    got = log_tree_sum(stack)
    assert got.shape == (3, 4)
    for idx in np.ndindex(3, 4):
        assert_close(got[idx], brute_tree(stack[idx]), 1e-10)
    assert log_tree_sum(np.zeros((0, n, n))).shape == (0,)


def test_input_is_not_modified():
    lw = random_weights(np.random.default_rng(5), 5)
    before = lw.copy()
    log_tree_sum(lw)
    log_forest_sum(lw, np.zeros(5))
    np.testing.assert_array_equal(lw, before)


# ---------------------------------------------------------------- log_forest_sum


@pytest.mark.parametrize("n", range(1, 6))
def test_forest_sum_matches_forest_enumeration(n):
    rng = np.random.default_rng(20 + n)
    for p_missing in (0.0, 0.4):
        lw = random_weights(rng, n, p_missing=p_missing)
        r = rng.normal(0.0, 2.0, n)
        r[rng.random(n) < p_missing] = NEG
        assert_close(log_forest_sum(lw, r), brute_forest(lw, r), 1e-10)


def test_forest_sum_without_roots_or_edges():
    lw = random_weights(np.random.default_rng(6), 4)
    assert float(log_forest_sum(lw, np.full(4, NEG))) == NEG  # no node may be a root
    r = np.array([0.5, -1.0, 2.0, 0.0])
    # no edges: every node is its own root
    assert float(log_forest_sum(np.full((4, 4), NEG), r)) == pytest.approx(r.sum())


def test_forest_sum_broadcasts_root_weights():
    rng = np.random.default_rng(7)
    lw = np.stack([random_weights(rng, 4) for _ in range(3)])
    r = rng.normal(0, 1, 4)
    got = log_forest_sum(lw, r)
    assert got.shape == (3,)
    for i in range(3):
        assert_close(got[i], brute_forest(lw[i], r), 1e-10)
    r2 = rng.normal(0, 1, (2, 1, 4))
    got = log_forest_sum(lw, r2)
    assert got.shape == (2, 3)
    for i, j in np.ndindex(2, 3):
        assert_close(got[i, j], brute_forest(lw[j], r2[i, 0]), 1e-10)


# ---------------------------------------------------------------- huge spreads (mpmath)

# Each elimination step rounds a log weight of magnitude up to |l|max once (relative 2^-53),
# and a log sum adds n - 1 pivots, each carrying the errors of up to n earlier steps: the
# absolute error is bounded by a small multiple of n^2 * eps * |l|max (measured: at most
# 0.05 of it over 40 random clustered graphs). The tolerance is 4 n^2 eps |l|max: at
# |l|max = 3e4 and n = 22, 1.3e-9 nats on log sums of ~4e5 nats (relative 3e-15), and far
# below the 1e-9 relative error the classifiers need.


def huge_tol(lw: np.ndarray) -> float:
    finite = np.abs(lw[np.isfinite(lw)])
    return 4 * np.finfo(float).eps * lw.shape[-1] ** 2 * max(1.0, float(finite.max()))


@pytest.mark.slow
def test_mpmath_brute_force_at_spreads_of_60000_nats():
    rng = np.random.default_rng(8)
    for sizes in ([3, 4], [2, 2, 3], [1, 3, 3]):
        lw = clusters(rng, sizes)
        want = mp_brute_tree(lw)
        assert want > 2e4  # the sum is dominated by the strong edges and the weak bridges
        for ground in range(lw.shape[0]):
            assert_close(log_tree_sum(lw, ground=ground), want, huge_tol(lw))


def test_mpmath_determinant_at_moderate_spreads():
    rng = np.random.default_rng(9)
    lw = random_weights(rng, 12, scale=300.0, p_missing=0.2)
    want = mp_det_tree(lw)
    assert_close(log_tree_sum(lw), want, huge_tol(lw))
    assert_close(log_tree_sum(lw, ground=5), want, huge_tol(lw))


@pytest.mark.parametrize("sizes", [[4, 5, 6, 7], [1, 12, 2, 6], [3] * 8 + [1] * 16])
def test_mpmath_elimination_of_large_clustered_graphs(sizes):
    rng = np.random.default_rng(len(sizes))
    lw = clusters(rng, sizes)
    n = lw.shape[0]
    want = mp_eliminate_tree(lw, list(rng.permutation(n)))
    for ground in (0, n - 1):
        assert_close(log_tree_sum(lw, ground=ground), want, huge_tol(lw))


@pytest.mark.slow
def test_mpmath_forests_with_tiny_and_huge_root_weights():
    rng = np.random.default_rng(10)
    n = 6
    strong = clusters(rng, [3, 3])
    weak = rng.uniform(-3e4, -1e4, (n, n))
    weak = np.triu(weak, 1) + np.triu(weak, 1).T
    cases = [
        (strong, rng.uniform(-3e4, -2e4, n)),  # tiny roots under strong edges
        (weak, rng.uniform(1e4, 3e4, n)),  # huge roots, tiny edges
        (random_weights(rng, n, scale=1e4), rng.uniform(-1e4, 1e4, n)),
    ]
    for lw, r in cases:
        big = np.full((n + 1, n + 1), NEG)
        big[:n, :n] = lw
        big[:n, n] = big[n, :n] = r
        want = mp_brute_tree(big)
        assert_close(log_forest_sum(lw, r), want, huge_tol(big))
        order = list(rng.permutation(n + 1))
        assert_close(want, mp_eliminate_tree(big, order), huge_tol(big))


# ---------------------------------------------------------------- the float path


def test_float_path_equals_log_path():
    rng = np.random.default_rng(11)
    for n in (2, 5, 21, 61):
        for scale in (1.0, 30.0, 100.0):
            a = np.stack([random_weights(rng, n, scale=scale) for _ in range(4)])
            safe = float_path_is_safe(a)
            a = a[safe]
            if not len(a):
                continue
            lin = np.exp(a - a.max(axis=(1, 2), keepdims=True))
            fast = elimination.float_eliminate(lin, 1)[0] + (n - 1) * a.max(axis=(1, 2))
            logs = a.copy()
            logs[:, np.arange(n), np.arange(n)] = NEG
            slow = elimination.log_eliminate(logs, 1)[0]
            np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(log_tree_sum(a, path="float"),
                                       log_tree_sum(a, path="log"), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="float_path_is_safe"):
        log_tree_sum(clusters(rng, [2, 2]), path="float")
    with pytest.raises(ValueError, match="path must be"):
        log_tree_sum(np.zeros((3, 3)), path="fast")


def test_float_path_bound():
    n = 10
    edge = np.log(2.0) * n + np.log(n)
    ok = np.zeros((n, n))
    ok[0, 1] = ok[1, 0] = elimination.SAFE_NATS - edge  # spread exactly at the bound
    assert bool(float_path_is_safe(ok))
    ok[0, 1] = ok[1, 0] = elimination.SAFE_NATS - edge + 1e-6
    assert not bool(float_path_is_safe(ok))
    ok[0, 1] = ok[1, 0] = NEG
    assert not bool(float_path_is_safe(ok))


def test_batch_mixing_float_and_log_paths():
    rng = np.random.default_rng(12)
    n = 6
    graphs = [random_weights(rng, n), clusters(rng, [3, 3], p_missing=0.0),
              random_weights(rng, n, p_missing=0.3), random_weights(rng, n, scale=0.1)]
    stack = np.stack(graphs)
    assert float_path_is_safe(stack).tolist() == [True, False, False, True]
    got = log_tree_sum(stack, ground=2)
    for g, lw in zip(got, graphs):
        assert_close(g, mp_brute_tree(lw), huge_tol(lw))


# ---------------------------------------------------------------- edge_probabilities


def brute_edge_probabilities(lw: np.ndarray, dps: int = 60) -> np.ndarray:
    """Probability of each edge: the mpmath sum of the trees holding it over the sum of all."""
    n = lw.shape[0]
    with mpmath.workdps(dps):
        mass = {}
        total = mpmath.mpf(0)
        for t in prufer_trees(n):
            if any(lw[u, v] == NEG for u, v in t):
                continue
            w = mpmath.exp(mpmath.fsum(mpmath.mpf(lw[u, v]) for u, v in t))
            total += w
            for u, v in t:
                key = (min(u, v), max(u, v))
                mass[key] = mass.get(key, mpmath.mpf(0)) + w
        p = np.zeros((n, n))
        for (u, v), m in mass.items():
            p[u, v] = p[v, u] = float(m / total)
        return p


def brute_forest_probabilities(lw: np.ndarray, r: np.ndarray):
    n = lw.shape[0]
    edges, roots, total = np.zeros((n, n)), np.zeros(n), 0.0
    for es, comps in rooted_forests(n):
        base = math.exp(sum(lw[u, v] for u, v in es))
        for comp in comps:
            base *= sum(math.exp(r[c]) for c in comp)
        total += base
        for u, v in es:
            edges[u, v] += base
            edges[v, u] += base
        for comp in comps:
            z = sum(math.exp(r[c]) for c in comp)
            for c in comp:
                roots[c] += base * math.exp(r[c]) / z
    return edges / total, roots / total


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_edge_probabilities_match_enumeration(n):
    rng = np.random.default_rng(30 + n)
    for p_missing in (0.0, 0.3):
        lw = random_weights(rng, n, p_missing=p_missing)
        if float(log_tree_sum(lw)) == NEG:
            continue
        p = edge_probabilities(lw)
        np.testing.assert_allclose(p, brute_edge_probabilities(lw), rtol=0, atol=1e-12)
        np.testing.assert_array_equal(p, p.T)
        assert np.diag(p).tolist() == [0.0] * n
        assert p.sum() / 2 == pytest.approx(n - 1, abs=1e-12)


def test_edge_probabilities_at_huge_spreads_and_in_batches():
    rng = np.random.default_rng(13)
    graphs = np.stack([clusters(rng, [2, 4]), clusters(rng, [3, 3]), clusters(rng, [1, 2, 3]),
                       random_weights(rng, 6, scale=3e4)])
    got = edge_probabilities(graphs.reshape(2, 2, 6, 6)).reshape(4, 6, 6)
    for p, lw in zip(got, graphs):
        np.testing.assert_allclose(p, brute_edge_probabilities(lw), rtol=0, atol=huge_tol(lw))
        assert p.sum() / 2 == pytest.approx(5, abs=1e-12)


def test_edge_probabilities_of_large_graphs_sum_to_n_minus_one():
    rng = np.random.default_rng(14)
    for n in (7, 13, 22):
        lw = clusters(rng, [n // 3, n - n // 3], p_missing=0.5)
        p = edge_probabilities(lw)
        assert p.sum() / 2 == pytest.approx(n - 1, abs=1e-9)
        assert ((p >= 0) & (p <= 1 + 1e-12)).all()
        # a bridge is in every tree
        bridge = random_weights(rng, n, p_missing=0.0)
        bridge[:1, 1:] = bridge[1:, :1] = NEG
        bridge[0, 1] = bridge[1, 0] = -2e4
        assert edge_probabilities(bridge)[0, 1] == pytest.approx(1.0, abs=1e-12)


def test_edge_probabilities_of_disconnected_graphs_are_nan():
    lw = random_weights(np.random.default_rng(15), 5)
    lw[:2, 2:] = lw[2:, :2] = NEG
    assert np.isnan(edge_probabilities(lw)).all()
    assert edge_probabilities(np.zeros((1, 1))).tolist() == [[0.0]]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_forest_edge_and_root_probabilities_match_enumeration(n):
    rng = np.random.default_rng(40 + n)
    lw = random_weights(rng, n, p_missing=0.3)
    r = rng.normal(0, 2, n)
    edges, roots = edge_probabilities(lw, r)
    want_edges, want_roots = brute_forest_probabilities(lw, r)
    np.testing.assert_allclose(edges, want_edges, rtol=0, atol=1e-12)
    np.testing.assert_allclose(roots, want_roots, rtol=0, atol=1e-12)
    assert edges.sum() / 2 + roots.sum() == pytest.approx(n, abs=1e-12)


def test_forest_probabilities_at_huge_spreads():
    rng = np.random.default_rng(16)
    n = 5
    lw = clusters(rng, [2, 3])
    r = rng.uniform(-3e4, -2e4, n)
    edges, roots = edge_probabilities(lw, r)
    big = np.full((n + 1, n + 1), NEG)
    big[1:, 1:] = lw
    big[0, 1:] = big[1:, 0] = r
    want = brute_edge_probabilities(big)
    np.testing.assert_allclose(edges, want[1:, 1:], rtol=0, atol=huge_tol(big))
    np.testing.assert_allclose(roots, want[0, 1:], rtol=0, atol=huge_tol(big))
    assert edges.sum() / 2 + roots.sum() == pytest.approx(n, abs=1e-12)


# ---------------------------------------------------------------- the row-scaled paths


EXTENDED = bool(np.finfo(np.longdouble).tiny < np.finfo(float).tiny)


def complete_clusters(rng, sizes, strong, weak):
    """Clusters with every edge present (the classifier's graphs are complete)."""
    return clusters(rng, sizes, strong=strong, weak=weak, p_missing=0.0)


def test_scaled_path_equals_log_path_and_covers_more_graphs():
    rng = np.random.default_rng(17)
    seen_wider = 0
    for n in (2, 5, 21, 61):
        for scale in (1.0, 30.0, 100.0, 150.0):
            a = np.stack([random_weights(rng, n, scale=scale) for _ in range(4)])
            safe = scaled_path_is_safe(a)
            assert (safe | ~float_path_is_safe(a)).all()  # the old bound implies the new
            seen_wider += int((safe & ~float_path_is_safe(a)).sum())
            a = a[safe]
            if len(a):
                np.testing.assert_allclose(log_tree_sum(a, path="scaled"),
                                           log_tree_sum(a, path="log"), rtol=1e-12, atol=1e-12)
    assert seen_wider > 0
    with pytest.raises(ValueError, match="scaled_path_is_safe"):
        log_tree_sum(clusters(rng, [2, 2]), path="scaled")


@pytest.mark.skipif(not EXTENDED, reason="numpy.longdouble is float64 on this platform")
@pytest.mark.parametrize("sizes", [[2, 3], [1, 2, 3], [4, 5, 6, 7]])
def test_extended_precision_path_against_mpmath_at_thousands_of_nats(sizes):
    rng = np.random.default_rng(18 + len(sizes))
    lw = complete_clusters(rng, sizes, strong=(2e3, 3e3), weak=(-3e3, -2e3))
    assert not scaled_path_is_safe(lw) and scaled_path_is_safe(lw, np.longdouble)
    n = lw.shape[0]
    want = (mp_brute_tree(lw) if n <= 6
            else mp_eliminate_tree(lw, list(rng.permutation(n))))
    for ground in (0, n - 1):
        assert_close(log_tree_sum(lw, ground=ground, path="scaled"), want, huge_tol(lw))
        assert_close(log_tree_sum(lw, ground=ground), want, huge_tol(lw))
    assert_close(log_tree_sum(lw, path="log"), want, huge_tol(lw))


def test_row_scaled_float64_at_spreads_beyond_the_global_bound():
    """Within-row spreads of ~480 nats, but ~960 nats across the graph: the global float
    bound refuses it, the row-scaled float64 path takes it."""
    rng = np.random.default_rng(21)
    n = 6
    rows = np.linspace(0.0, 1200.0, n)
    lw = (rows[:, None] + rows[None, :]) / 2 + rng.normal(0, 1, (n, n))
    lw = np.triu(lw, 1) + np.triu(lw, 1).T
    assert not float_path_is_safe(lw) and scaled_path_is_safe(lw)
    want = mp_brute_tree(lw)
    for ground in range(n):
        assert_close(log_tree_sum(lw, ground=ground, path="scaled"), want, huge_tol(lw))


def test_forest_sums_and_edge_probabilities_on_the_scaled_paths():
    rng = np.random.default_rng(22)
    n = 5
    lw = complete_clusters(rng, [2, 3], strong=(300, 900), weak=(-200, -100))
    r = np.zeros(n)  # the classifier's roots: weight 1 against edges of e^-200 to e^900
    big = np.zeros((n + 1, n + 1))
    big[1:, 1:] = lw
    assert scaled_path_is_safe(big, np.longdouble)
    assert_close(log_forest_sum(lw, r), mp_brute_tree(big), huge_tol(big))
    edges, roots = edge_probabilities(lw, r)
    want = brute_edge_probabilities(big)
    np.testing.assert_allclose(edges, want[1:, 1:], rtol=0, atol=1e-12)
    np.testing.assert_allclose(roots, want[0, 1:], rtol=0, atol=1e-12)


@pytest.mark.parametrize("m", [3, 4, 6, 9])
def test_python_float_branch_equals_the_python_log_branch(m, monkeypatch):
    """``log_tree_sums_python`` eliminates graphs whose spread is at most
    ``python_float_nats(m)`` in shifted floats: equal to its log branch (and to mpmath at
    the limit) to rounding, and graphs just beyond the limit or with a missing edge take
    the log branch."""
    rng = np.random.default_rng(m)
    limit = elimination.python_float_nats(m)
    graphs = []
    for spread in (1.0, 50.0, limit - 1.0, limit + 1.0, 5000.0):
        a = rng.uniform(0.0, 1.0, (m, m))
        a = (a + a.T) / 2
        low = a[np.tril_indices(m, -1)]
        a = 100.0 + spread * (a - low.min()) / (low.max() - low.min())
        graphs.append(a)
    holey = graphs[1].copy()
    holey[m - 1, 0] = holey[0, m - 1] = -np.inf
    graphs.append(holey)
    stack = np.array(graphs)
    taken = []
    plain = elimination._float_tree_sum
    monkeypatch.setattr(elimination, "_float_tree_sum",
                        lambda low, top: taken.append(1) or plain(low, top))
    fast = elimination.log_tree_sums_python(stack)
    assert len(taken) == 3  # the three spreads within the limit, not the hole
    monkeypatch.setattr(elimination, "python_float_nats", lambda n: -np.inf)
    slow = elimination.log_tree_sums_python(stack)
    want = log_tree_sum(stack, path="log")
    for got, ref, w in zip(fast, slow, want):
        assert_close(got, ref, 1e-12 * max(1.0, abs(ref)))
        assert_close(got, w, 1e-12 * max(1.0, abs(w)))
    at_limit = mp_brute_tree(graphs[2]) if m <= 5 else None
    if at_limit is not None:
        assert_close(fast[2], at_limit, 1e-12 * abs(at_limit))
