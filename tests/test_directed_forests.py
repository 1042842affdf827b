"""onlinebma.stats.directed_forests against independent sums over every forest and tree.

The references never use a matrix-tree theorem: every parent assignment of n <= 6 nodes that
is acyclic is enumerated (tests/support/arborescences.py), and each forest's weight is summed
in log space (float) or with mpmath (positive terms only, so the reference loses nothing at
any spread). Graphs too large to enumerate are checked through forest sums of smaller
graphs that hold an edge by construction (j merged into i) or a root (j's in-edges cut).
Symmetric weights must give back the undirected sums of stats.spanning.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from onlinebma.stats.directed_forests import (
    directed_edge_probabilities,
    directed_tree_edge_probabilities,
    log_directed_forest_sum,
    log_directed_tree_sum,
)
from onlinebma.stats.spanning import edge_probabilities, log_forest_sum, log_tree_sum
from tests.support.arborescences import ROOT, forests, trees

NEG = -np.inf


def forest_log_weight(lw, lr, parents) -> float:
    return sum(lr[v] if p == ROOT else lw[p, v] for v, p in enumerate(parents))


def brute(lw, lr, structures, dps=None):
    """``log sum`` of the weights of every forest (or tree, ``lr`` unused) by enumeration,
    in floats or, with ``dps``, in mpmath."""
    n = lw.shape[0]
    lr = np.zeros(n) if lr is None else lr
    logs = [forest_log_weight(lw, lr, p) for p in structures(n)]
    logs = [x for x in logs if x > NEG]
    if not logs:
        return NEG
    if dps is None:
        top = max(logs)
        return top + math.log(sum(math.exp(x - top) for x in logs))
    with mpmath.workdps(dps):
        return float(mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(x)) for x in logs)))


def brute_probabilities(lw, lr, structures=forests):
    """``P(i -> j)`` and ``P(v root)`` by enumeration, in mpmath (``lr`` unused for trees)."""
    n = lw.shape[0]
    lr = np.zeros(n) if lr is None else lr
    with mpmath.workdps(60):
        total = mpmath.mpf(0)
        edge = [[mpmath.mpf(0)] * n for _ in range(n)]
        root = [mpmath.mpf(0)] * n
        for parents in structures(n):
            x = forest_log_weight(lw, lr, parents)
            if x == NEG:
                continue
            w = mpmath.exp(mpmath.mpf(x))
            total += w
            for v, p in enumerate(parents):
                if p == ROOT:
                    root[v] += w
                else:
                    edge[p][v] += w
        return (np.array([[float(e / total) for e in row] for row in edge]),
                np.array([float(r / total) for r in root]))


def random_directed(rng, n, scale=3.0, p_missing=0.0):
    lw = rng.normal(0.0, scale, (n, n))
    lw[rng.random((n, n)) < p_missing] = NEG
    return lw


def assert_log_close(got, want, rel=1e-9):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert np.array_equal(np.isneginf(got), np.isneginf(want)), (got, want)
    fin = np.isfinite(want)
    assert np.all(np.abs(got[fin] - want[fin]) <= rel * np.maximum(1.0, np.abs(want[fin]))), (
        got, want)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_forest_sum_matches_enumeration_with_disallowed_edges(n):
    rng = np.random.default_rng(n)
    for trial in range(4 if n < 6 else 1):
        lw = random_directed(rng, n, p_missing=0.3 * (trial % 2))
        lr = rng.normal(0.0, 2.0, n)
        if trial == 3:
            lr[rng.random(n) < 0.5] = NEG  # some nodes may never be roots
        assert_log_close(log_directed_forest_sum(lw, lr), brute(lw, lr, forests))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_tree_sum_matches_enumeration_with_disallowed_edges(n):
    rng = np.random.default_rng(10 + n)
    for trial in range(4 if n < 6 else 1):
        lw = random_directed(rng, n, p_missing=0.35 * (trial % 2))
        assert_log_close(log_directed_tree_sum(lw), brute(lw, None, trees))


def test_tree_sum_when_only_some_nodes_can_be_the_root():
    # nodes 2..4 ("numeric") may not parent nodes 0, 1 ("nominal"): every tree is rooted at
    # 0 or 1, and node 4's ground choice must not be the last-eliminated one
    rng = np.random.default_rng(3)
    for order in ([0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2, 0, 3, 1, 4]):
        lw = random_directed(rng, 5)
        lw[2:, :2] = NEG
        lw = lw[np.ix_(order, order)]
        assert_log_close(log_directed_tree_sum(lw), brute(lw, None, trees))


def test_no_forest_or_tree():
    lw = np.zeros((3, 3))
    lr = np.array([NEG, NEG, NEG])  # no root allowed: no forest
    assert log_directed_forest_sum(lw, lr) == NEG
    lw = np.full((3, 3), NEG)
    lw[0, 1] = 1.0  # node 2 unreachable from any root
    assert log_directed_tree_sum(lw) == NEG
    lr = np.array([0.0, NEG, NEG])
    assert log_directed_forest_sum(lw, lr) == NEG
    assert np.isnan(directed_edge_probabilities(lw, lr)[0]).all()


def test_stacks_over_leading_axes_and_broadcast_roots():
    rng = np.random.default_rng(5)
    lw = rng.normal(0.0, 3.0, (2, 3, 4, 4))
    lw[0, 1, 2, 3] = NEG
    lr = rng.normal(0.0, 1.0, (3, 4))
    got = log_directed_forest_sum(lw, lr)
    trees_got = log_directed_tree_sum(lw)
    assert got.shape == trees_got.shape == (2, 3)
    for a in range(2):
        for b in range(3):
            assert_log_close(got[a, b], brute(lw[a, b], lr[b], forests))
            assert_log_close(trees_got[a, b], brute(lw[a, b], None, trees))


def test_inputs_are_not_modified():
    rng = np.random.default_rng(6)
    lw, lr = rng.normal(size=(4, 4)), rng.normal(size=4)
    keep_w, keep_r = lw.copy(), lr.copy()
    log_directed_forest_sum(lw, lr)
    log_directed_tree_sum(lw)
    directed_edge_probabilities(lw, lr)
    assert np.array_equal(lw, keep_w) and np.array_equal(lr, keep_r)


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="log_root_weights"):
        log_directed_forest_sum(np.zeros((3, 3)), np.zeros(2))
    with pytest.raises(ValueError, match="log_weights"):
        log_directed_tree_sum(np.zeros((3, 2)))


# ------------------------------------------------------------ huge spreads (mpmath)


def huge(rng, n, spread):
    """Directed log weights over ``spread`` nats, a few disallowed, roots as spread."""
    lw = rng.uniform(-spread / 2, spread / 2, (n, n))
    lw[rng.random((n, n)) < 0.2] = NEG
    return lw, rng.uniform(-spread / 2, spread / 2, n)


@pytest.mark.parametrize("spread", [1e4, 6e4])
def test_sums_against_mpmath_at_spreads_of_tens_of_thousands_of_nats(spread):
    rng = np.random.default_rng(int(spread))
    for n in (3, 4, 5):
        lw, lr = huge(rng, n, spread)
        # each step rounds log weights of size ~spread: the absolute error is a few n^2
        # eps spread, relative 1e-9 of the log sum
        assert_log_close(log_directed_forest_sum(lw, lr), brute(lw, lr, forests, dps=50))
        assert_log_close(log_directed_tree_sum(lw), brute(lw, None, trees, dps=50))
        # a near-tie: two strong edges into one node, weak everything else
        lw2 = np.full((n, n), -spread / 2)
        lw2[0, 1] = lw2[2, 1] = spread / 2
        lr2 = np.zeros(n)
        assert_log_close(log_directed_forest_sum(lw2, lr2), brute(lw2, lr2, forests, dps=50))


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_edge_and_root_probabilities_match_enumeration(n):
    rng = np.random.default_rng(20 + n)
    for spread in (4.0, 2e4):
        lw, lr = huge(rng, n, spread)
        lw[0, 1] = NEG if n > 1 else lw[0, 1]
        edges, roots = directed_edge_probabilities(lw, lr)
        want_e, want_r = brute_probabilities(lw, lr)
        # relative precision, small probabilities included
        np.testing.assert_allclose(edges, want_e, rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(roots, want_r, rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(roots + edges.sum(axis=0), 1.0, rtol=1e-12)


def merged(lw, lr, i, j):
    """The graph with ``j`` merged into ``i``: ``i``'s in-edges and root weight, the
    out-edges of both; its forests are those of the graph that hold ``i -> j``."""
    w = lw.copy()
    w[i] = np.logaddexp(lw[i], lw[j])
    keep = [v for v in range(len(lr)) if v != j]
    return w[np.ix_(keep, keep)], lr[keep]


@pytest.mark.parametrize("n", [9, 14])
def test_edge_probabilities_of_larger_graphs_by_merging_nodes(n):
    # too many forests to enumerate: P(i -> j) = w(i -> j) F(graph with j merged into i) / F,
    # P(j root) = F(graph without j's in-edges) / F
    rng = np.random.default_rng(60 + n)
    lw, lr = huge(rng, n, 2e3)
    edges, roots = directed_edge_probabilities(lw, lr)
    total = log_directed_forest_sum(lw, lr)
    for i in range(n):
        for j in range(n):
            if i != j:
                want = np.exp(lw[i, j] + log_directed_forest_sum(*merged(lw, lr, i, j)) - total)
                np.testing.assert_allclose(edges[i, j], want, rtol=1e-9, atol=1e-300)
        cut = lw.copy()
        cut[:, i] = NEG
        rooted = log_directed_forest_sum(cut, lr)
        np.testing.assert_allclose(roots[i], np.exp(rooted - total), rtol=1e-9)
    np.testing.assert_allclose(roots + edges.sum(axis=0), 1.0, rtol=1e-9)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_tree_edge_and_root_probabilities_match_enumeration(n):
    rng = np.random.default_rng(40 + n)
    for spread in (4.0, 2e4):
        lw, _ = huge(rng, n, spread)
        if n > 2:
            lw[2:, 0] = NEG  # node 0 has no parent but node 1: often the root
        edges, roots = directed_tree_edge_probabilities(lw)
        if brute(lw, None, trees) == NEG:
            assert np.isnan(roots).all()
            continue
        want_e, want_r = brute_probabilities(lw, None, trees)
        np.testing.assert_allclose(edges, want_e, rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(roots, want_r, rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(roots + edges.sum(axis=0), 1.0, rtol=1e-12)


def test_tree_probabilities_in_stacks():
    rng = np.random.default_rng(50)
    lw = rng.normal(0.0, 3.0, (2, 3, 4, 4))
    edges, roots = directed_tree_edge_probabilities(lw)
    assert edges.shape == (2, 3, 4, 4) and roots.shape == (2, 3, 4)
    for a in range(2):
        for b in range(3):
            want_e, want_r = brute_probabilities(lw[a, b], None, trees)
            np.testing.assert_allclose(edges[a, b], want_e, rtol=1e-9)
            np.testing.assert_allclose(roots[a, b], want_r, rtol=1e-9)


# ------------------------------------------------- symmetric weights: stats.spanning


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_symmetric_weights_give_the_undirected_sums(n):
    rng = np.random.default_rng(30 + n)
    for spread in (6.0, 2e4):
        lw = rng.uniform(-spread / 2, spread / 2, (n, n))
        lw = np.triu(lw, 1) + np.triu(lw, 1).T
        lw[0, n - 1] = lw[n - 1, 0] = NEG
        lr = rng.uniform(-spread / 2, spread / 2, n)
        # a rooted forest is one undirected forest with a root per component: the same sum
        assert_log_close(log_directed_forest_sum(lw, lr), log_forest_sum(lw, lr))
        # every undirected tree is n arborescences
        assert_log_close(log_directed_tree_sum(lw), log_tree_sum(lw) + math.log(n))
        # an undirected edge's probability is the sum of its two directions
        edges, roots = directed_edge_probabilities(lw, lr)
        want_edges, want_roots = edge_probabilities(lw, lr)
        np.testing.assert_allclose(edges + edges.T, want_edges, rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(roots, want_roots, rtol=1e-9, atol=1e-300)
        # trees: every undirected tree with each root equally likely
        edges, roots = directed_tree_edge_probabilities(lw)
        if n == 2:  # the one edge was removed: no tree
            assert np.isnan(edges).all() and np.isnan(roots).all()
            continue
        np.testing.assert_allclose(edges + edges.T, edge_probabilities(lw), rtol=1e-9,
                                   atol=1e-300)
        np.testing.assert_allclose(roots, 1.0 / n, rtol=1e-9)
