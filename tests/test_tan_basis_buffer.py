"""The stack of matrices a tree-basis layout keeps is reused by every call of that layout
(:func:`onlinebma.stats.tree_basis.tree_basis_sums`): a call leaves nothing behind that
changes the next one, not even a refused graph whose ``A`` overflowed."""

from __future__ import annotations

import numpy as np
import pytest

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
def test_a_reused_layout_sums_each_call_afresh(b, stacked_bases):
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
