"""The layouts of the tree-basis sums (:func:`onlinebma.stats.tree_basis.tree_basis_sums`):
``M = I + A^T A`` formed from the products within ``A``'s rows (sparse ``A``) or by the
stacked product of the padded ``A`` give the same sums; and the stack of matrices a dense
layout keeps is reused by every call of that layout: a call leaves nothing behind that
changes the next one, not even a refused graph whose ``A`` overflowed."""

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
from tests.test_tan_tree_basis import classifier_like, edges_of, matrices


@pytest.mark.parametrize("b", [3, 12])  # graph by graph, and stacked
@pytest.mark.parametrize("stacked_bases", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_a_reused_layout_sums_each_call_afresh(monkeypatch, b, stacked_bases, sparse):
    monkeypatch.setattr(tuning, "SPARSE_PRODUCTS_COST", 0 if sparse else 10 ** 18)
    g = 12
    rng = np.random.default_rng(5)
    w, ev = classifier_like(rng, b, g, 600.0)
    i, j = edges_of(g)
    single = TreeBasis(maximum_spanning_tree(w), i, j, w[i, j])
    basis, tree = ((TreeBases([single, single]), np.arange(b) % 2) if stacked_bases
                   else (single, None))
    first, ok = tree_basis_sums(basis, ev, tree)
    assert ok.all()
    want = log_tree_sum(matrices(ev, g), path="log")
    np.testing.assert_allclose(first, want, rtol=0, atol=TOLERANCE)
    far = ev.copy()
    far[:, i > 0] *= -1.0  # strong pairs turned weak: A overflows, every graph refused
    with np.errstate(over="ignore"):
        assert not tree_basis_sums(basis, far, tree)[1].any()
    other = ev + rng.normal(0.0, 1.0, ev.shape) * (i > 0)
    got, ok = tree_basis_sums(basis, other, tree)  # the same layout, other weights
    assert ok.all()
    np.testing.assert_allclose(got, log_tree_sum(matrices(other, g), path="log"), rtol=0,
                               atol=TOLERANCE)
    again, ok = tree_basis_sums(basis, ev, tree)
    assert ok.all() and np.array_equal(again, first)


def test_the_products_within_rows_sum_to_a_t_a():
    """``_row_pairs``: the products of every ordered pair of entries sharing a row of ``A``,
    summed at their target, are ``A^T A`` (brute force on a random sparse ``A``)."""
    rng = np.random.default_rng(6)
    n, r = 7, 15
    a = rng.normal(size=(r, n)) * (rng.random((r, n)) < 0.35)
    rows, cols = np.nonzero(a)
    shuffle = rng.permutation(len(rows))  # entries in any order
    rows, cols = rows[shuffle], cols[shuffle]
    first, second, target = tree_basis._row_pairs(rows, cols, n)
    values = a[rows, cols]
    got = np.bincount(target, values[first] * values[second], minlength=n * n)
    np.testing.assert_allclose(got.reshape(n, n), a.T @ a, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("b", [3, 12])
def test_sparse_and_dense_layouts_give_the_same_sums(monkeypatch, b):
    g = 16
    rng = np.random.default_rng(9)
    i, j = edges_of(g)
    graphs, bases = [], []
    for strong in (600.0, 40.0):  # many entries left out, and few
        w, ev = classifier_like(rng, b, g, strong)
        graphs.append(ev)
        bases.append(TreeBasis(maximum_spanning_tree(w), i, j, w[i, j]))
    ev, tree = np.concatenate(graphs), np.repeat([0, 1], b)
    sums = {}
    for sparse in (False, True):
        monkeypatch.setattr(tuning, "SPARSE_PRODUCTS_COST", 0 if sparse else 10 ** 18)
        sums[sparse] = tree_basis_sums(TreeBases(bases), ev, tree)
    assert sums[True][1].all() and sums[False][1].all()
    np.testing.assert_allclose(sums[True][0], sums[False][0], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(sums[True][0], log_tree_sum(matrices(ev, g), path="log"),
                               rtol=0, atol=TOLERANCE + 1e-12 * 600 * g)


@pytest.mark.parametrize("sparse", [False, True])
def test_a_basis_that_leaves_out_every_entry(monkeypatch, sparse):
    """Every feature pair 200 nats below the root's edges: the star's ``A`` keeps no entry
    (all bounded as left out), ``M = I``, and the sum is the star's weight plus the bound's
    share, equal to the log path."""
    monkeypatch.setattr(tuning, "SPARSE_PRODUCTS_COST", 0 if sparse else 10 ** 18)
    g, b = 9, 3
    i, j = edges_of(g)
    w = np.where(i == 0, 0.0, -200.0)
    star = TreeBasis(np.r_[-1, np.zeros(g - 1, dtype=np.int64)], i, j, w)
    assert len(star.edge_) == 0  # each pair on a cycle of two root edges: both left out
    assert len(star.dropped_[0]) == 2 * (len(w) - (g - 1))
    ev = w + np.random.default_rng(1).normal(0.0, 1.0, (b, len(w))) * (i > 0)
    got, ok = tree_basis_sums(star, ev)
    assert ok.all()
    np.testing.assert_allclose(got, log_tree_sum(matrices(ev, g), path="log"), rtol=0,
                               atol=TOLERANCE)
