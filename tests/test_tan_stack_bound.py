"""The tree-basis sums certify a stack first by the bound of its largest terms (trace,
entries left out, their spread), which grows with each term; when that fails, each graph
is checked by its own bound: a stack mixing graphs in their own maximal tree and in
another's keeps exactly the first, equal to the log path."""

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
from tests.test_spanning import huge_tol
from tests.test_tan_tree_bases import two_weightings
from tests.test_tan_tree_basis import edges_of, matrices


@pytest.mark.parametrize("b", [6, 12])  # graph by graph, and stacked
@pytest.mark.parametrize("dropped", [False, True])  # without and with entries left out
def test_a_stack_whose_worst_graph_fails_is_certified_graph_by_graph(b, dropped):
    g = 11
    weights, ev, tree = two_weightings(g, b, 30.0, seed=4)  # exponentials stay finite
    i, j = edges_of(g)
    bases = [TreeBasis(maximum_spanning_tree(matrices(w[None], g)[0]), i, j,
                       w if dropped else None) for w in weights]
    assert all(bool(len(t.dropped_[0])) == dropped for t in bases)
    given = tree.copy()
    given[::3] = 1 - tree[::3]  # every third graph in the other weighting's tree
    got, ok = tree_basis_sums(TreeBases(bases), ev, given)
    assert (ok == (given == tree)).all()  # the others still certified, one call
    want = log_tree_sum(matrices(ev, g), path="log")
    tol = TOLERANCE + huge_tol(matrices(weights, g))
    np.testing.assert_allclose(got[ok], want[ok], rtol=0, atol=tol)
    assert np.isnan(got[~ok]).all()
    # the same graphs, each in its own tree: the whole stack passes at once
    got, ok = tree_basis_sums(TreeBases(bases), ev, tree)
    assert ok.all()
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)
