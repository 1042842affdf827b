"""The sharper rounding bound of the tree-basis sums (module docstring of
:mod:`onlinebma.stats.tree_basis`): graphs whose weights are spread over many trees (no tree
dominant, ``tr M`` in the hundreds) fail the first bound ``2 n η tr M`` at 21 nodes; the
bound from the diagonal of ``M^-1`` certifies them, and they equal a 100-digit elimination
to the tolerance. Graphs far from their tree stay refused."""

from __future__ import annotations

import numpy as np
import pytest

from onlinebma import tuning
from onlinebma.stats import tree_basis
from onlinebma.stats.spanning import log_tree_sum
from onlinebma.stats.tree_basis import (
    TOLERANCE,
    TreeBases,
    TreeBasis,
    maximum_spanning_tree,
    tree_basis_sums,
)
from tests.test_spanning import mp_eliminate_tree
from tests.test_tan_tree_basis import edges_of, matrices


def tied_forests(rng, b, g, spread=1.0):
    """Forest-like graphs of ``g`` nodes (node 0 the root, its edges at 0 nats) whose feature
    pairs are nearly tied (a few nats), as a learner's first records: ``(weights of the
    basis (E,), graphs (b, E))``."""
    i, j = edges_of(g)
    w = np.where(i == 0, 0.0, rng.normal(0.0, spread, len(i)))
    q = rng.normal(0.0, 0.5, (b, len(i))) * (i > 0)
    return w, w + q


def _first_bound_refuses(basis, ev):
    """Whether every graph fails the first bound: its trace-based test (the sharper one
    switched off)."""
    sharper = tree_basis._SHARPER_TRACE
    tree_basis._SHARPER_TRACE = -1.0
    try:
        return not tree_basis_sums(basis, ev)[1].any()
    finally:
        tree_basis._SHARPER_TRACE = sharper


@pytest.mark.parametrize("b", [3, 12])  # graph by graph, and stacked
def test_tied_graphs_are_certified_by_the_sharper_bound(b):
    g = 21
    rng = np.random.default_rng(11)
    w, ev = tied_forests(rng, b, g)
    i, j = edges_of(g)
    basis = TreeBasis(maximum_spanning_tree(matrices(w[None], g)[0]), i, j, w)
    assert _first_bound_refuses(basis, ev)
    got, ok = tree_basis_sums(basis, ev)
    assert ok.all()
    lw = matrices(ev, g)
    np.testing.assert_allclose(got, log_tree_sum(lw, path="log"), rtol=0, atol=TOLERANCE)
    order = list(range(g - 1, -1, -1))
    exact = [mp_eliminate_tree(x, order) for x in lw[:2]]
    np.testing.assert_allclose(got[:2], exact, rtol=0, atol=TOLERANCE)


def test_the_sharper_bound_keeps_each_graph_its_own_in_a_stack_of_trees():
    """A stack of two learners' bases: tied graphs in their own tree certified by the
    sharper bound, graphs given the other learner's (far) tree refused."""
    g, b = 21, 12
    rng = np.random.default_rng(12)
    i, j = edges_of(g)
    w0, ev0 = tied_forests(rng, b // 2, g)
    w1 = np.where(i == 0, 0.0, -200.0)
    w1[(i > 0) & (j == i + 1)] = 600.0  # a strong chain
    ev1 = w1 + rng.normal(0.0, 2.0, (b // 2, len(i))) * (i > 0)
    bases = TreeBases([TreeBasis(maximum_spanning_tree(matrices(w[None], g)[0]), i, j, w)
                       for w in (w0, w1)])
    ev = np.concatenate([ev0, ev1])
    tree = np.repeat([0, 1], b // 2)
    got, ok = tree_basis_sums(bases, ev, tree)
    assert ok.all()
    np.testing.assert_allclose(got, log_tree_sum(matrices(ev, g), path="log"), rtol=0,
                               atol=TOLERANCE + 1e-12 * 600 * g)
    with np.errstate(over="ignore"):
        assert not tree_basis_sums(bases, ev, 1 - tree)[1].any()


@pytest.mark.parametrize("b", [3, 12])
def test_the_sharper_bound_refuses_a_tree_far_from_maximal(b):
    """A star under chains of 8-nat pairs: the exponentials stay finite and ``tr M`` below
    the sharper bound's limit, but ``|A_ef|`` reaches e^4 and ``S^2`` is far beyond what
    the tolerance allows: refused."""
    g = 21
    rng = np.random.default_rng(13)
    i, j = edges_of(g)
    w = np.where(i == 0, 0.0, -20.0)
    w[(i > 0) & (j == i + 1)] = 8.0
    ev = w + rng.normal(0.0, 0.5, (b, len(i))) * (i > 0)
    star = TreeBasis(np.r_[-1, np.zeros(g - 1, dtype=np.int64)], i, j)
    m_trace = g - 1 + (np.exp(ev[:, i > 0] - 0.0) * 2).sum(axis=1)  # star: A_e = ±e^(l_e/2)
    assert (m_trace < tree_basis._SHARPER_TRACE).all()
    got, ok = tree_basis_sums(star, ev)
    assert not ok.any() and np.isnan(got).all()


def test_wide_random_graphs_certified_equal_the_log_path():
    """Random graphs of 21-61 nodes, log weights spread from a few nats to hundreds (sums
    of up to 4e4 nats), each stack in the maximum spanning tree of its unperturbed weights:
    every graph either bound certifies equals the log path (rounding of the sums' size
    aside), and the sharper bound certifies some the first one refuses."""
    rng = np.random.default_rng(21)
    only_sharper = 0
    for g in (21, 31, 41, 61):
        i, j = edges_of(g)
        for scale in (3.0, 30.0, 300.0):
            w = rng.normal(0.0, scale, len(i))
            ev = w + rng.normal(0.0, 1.0, (6, len(i)))
            basis = TreeBasis(maximum_spanning_tree(matrices(w[None], g)[0]), i, j, w)
            got, ok = tree_basis_sums(basis, ev)
            lw = matrices(ev, g)
            want = log_tree_sum(lw, path="log")
            tol = TOLERANCE + 4 * np.finfo(float).eps * g * np.abs(want).max()
            np.testing.assert_allclose(got[ok], want[ok], rtol=0, atol=tol)
            assert np.isnan(got[~ok]).all()
            only_sharper += int(ok.sum()) - (0 if _first_bound_refuses(basis, ev)
                                             else int(ok.sum()))
    assert only_sharper >= 6


@pytest.mark.parametrize("sparse", [False, True])
def test_the_sharper_bound_against_brute_force_enumeration(monkeypatch, sparse):
    """Graphs of 6 nodes summed in a tree that is not maximal (its edges 4 nats below the
    others: ``|A_ef|`` about e^2, ``tr M`` about 2,000, beyond the first bound):
    certified by the sharper bound and equal to the sum over all 1,296 spanning trees in
    100-digit mpmath."""
    from tests.test_spanning import mp_brute_tree

    monkeypatch.setattr(tuning, "SPARSE_PRODUCTS_COST", 0 if sparse else 10 ** 18)
    g, b = 6, 3
    rng = np.random.default_rng(14)
    i, j = edges_of(g)
    star = TreeBasis(np.r_[-1, np.zeros(g - 1, dtype=np.int64)], i, j)
    w = np.where(i == 0, 0.0, 4.0)
    ev = w + rng.normal(0.0, 0.3, (b, len(i)))
    assert _first_bound_refuses(star, ev)
    got, ok = tree_basis_sums(star, ev)
    assert ok.all()
    exact = [mp_brute_tree(x) for x in matrices(ev, g)]
    np.testing.assert_allclose(got, exact, rtol=0, atol=TOLERANCE)
