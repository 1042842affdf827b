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


def test_a_retry_renews_only_the_trees_of_the_learners_that_failed():
    """RecordTreeSums on a stack of three learners: when one learner's weights move to
    another maximal tree, its graphs fail the bound in its kept tree and are summed after
    a fresh tree for that learner alone; the others keep theirs; all equal the log path."""
    from onlinebma.tan.record_sums import RecordTreeSums
    from tests.test_tan_tree_bases import chain_graph

    g, r, k = 13, 3, 4
    rng = np.random.default_rng(5)
    nodes = np.arange(1, g)
    i, j = np.triu_indices(g - 1, 1)
    ws = [chain_graph(rng, g, order, 800.0)
          for order in (nodes, rng.permutation(nodes), rng.permutation(nodes))]
    l_pairs = np.stack([w[i + 1, j + 1] for w in ws])[:, None, :]
    log_q = rng.normal(0.0, 2.0, (r, k, len(i)))
    sums = RecordTreeSums(forests=True, log_edge_prior=0.0)
    sums(b"all", g - 1, l_pairs, log_q, t=100)
    before = list(sums._bases[b"all"][0].bases_)
    moved = chain_graph(rng, g, rng.permutation(nodes), 800.0)
    l_pairs[1, 0] = moved[i + 1, j + 1]
    got = sums(b"all", g - 1, l_pairs, log_q, t=101)
    after = sums._bases[b"all"][0].bases_
    assert after[0] is before[0] and after[2] is before[2] and after[1] is not before[1]
    want = log_tree_sum(sums.graphs(g - 1, l_pairs, log_q), path="log")
    tol = TOLERANCE + huge_tol(np.stack([*ws, moved]))
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)
