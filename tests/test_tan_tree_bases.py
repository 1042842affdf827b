"""One batched tree-basis call over graphs that need different maximal trees
(:class:`onlinebma.stats.tree_basis.TreeBases`, ``decay="auto"``'s members): each graph is
certified in its own tree and equals the log path to the tolerance; given another graph's
tree it is refused, and without the bound its sum is wrong."""

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
from onlinebma.tan.record_sums import RecordTreeSums
from tests.test_spanning import huge_tol
from tests.test_tan_tree_basis import edges_of, matrices


def chain_graph(rng, g, order, strong):
    """Node 0 joined to every node at 0 nats, strong pairs (``strong`` nats, up to half
    less) along the chain ``order`` of the other nodes, weak pairs (-200) elsewhere."""
    w = rng.uniform(-220.0, -180.0, (g, g))
    for a, b in zip(order[:-1], order[1:]):
        w[a, b] = strong * rng.uniform(0.5, 1.0)
    w = np.triu(w, 1) + np.triu(w, 1).T
    w[0, :] = w[:, 0] = 0.0
    return w


def two_weightings(g, b, strong, seed=0):
    """Two weightings of the same nodes whose maximum spanning trees differ (chains in two
    orders), and ``b`` graphs alternating between them, each with a few nats of noise like
    a record's log Q: ``(weights (2, E), graphs (b, E), tree (b,))``."""
    rng = np.random.default_rng(seed)
    nodes = np.arange(1, g)
    ws = [chain_graph(rng, g, order, strong) for order in (nodes, rng.permutation(nodes))]
    i, j = edges_of(g)
    tree = np.arange(b) % 2
    noise = rng.normal(0.0, 3.0, (b, len(i))) * (i > 0)
    return np.stack([w[i, j] for w in ws]), np.stack([ws[t][i, j] for t in tree]) + noise, tree


@pytest.mark.parametrize("b", [6, 12])  # graph by graph, and stacked
@pytest.mark.parametrize("g,strong", [(11, 600.0), (16, 5e3)])
def test_each_graph_is_certified_in_its_own_tree(b, g, strong):
    weights, ev, tree = two_weightings(g, b, strong)
    i, j = edges_of(g)
    parents = [maximum_spanning_tree(matrices(w[None], g)[0]) for w in weights]
    assert (parents[0] != parents[1]).any()  # the graphs need different maximal trees
    bases = [TreeBasis(p, i, j, w) for p, w in zip(parents, weights)]
    assert all(len(t.dropped_[0]) for t in bases)  # the entries left out are bounded too
    got, ok = tree_basis_sums(TreeBases(bases), ev, tree)
    assert ok.all()
    want = log_tree_sum(matrices(ev, g), path="log")
    tol = TOLERANCE + huge_tol(matrices(weights, g))
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)
    # the same sums as one basis per call
    for t in (0, 1):
        alone, ok_alone = tree_basis_sums(bases[t], ev[tree == t])
        assert ok_alone.all()
        np.testing.assert_allclose(got[tree == t], alone, rtol=0, atol=tol)
    # another graph's tree: refused, graph by graph
    got, ok = tree_basis_sums(TreeBases(bases), ev, 1 - tree)
    assert not ok.any() and np.isnan(got).all()
    got, ok = tree_basis_sums(bases[0], ev)  # one tree for all: half the stack refused
    assert (ok == (tree == 0)).all()


@pytest.mark.parametrize("b", [6, 12])
def test_without_the_bound_another_graphs_tree_is_wrong(b):
    """Weaker pairs (30 nats): the wrong trees' exponentials stay finite, so the sums come
    out; the bound alone is what refuses them."""
    g = 10
    weights, ev, tree = two_weightings(g, b, 30.0, seed=1)
    i, j = edges_of(g)
    bases = [TreeBasis(maximum_spanning_tree(matrices(w[None], g)[0]), i, j)
             for w in weights]
    want = log_tree_sum(matrices(ev, g), path="log")
    got, ok = tree_basis_sums(TreeBases(bases), ev, tree)
    assert ok.all()
    np.testing.assert_allclose(got, want, rtol=0, atol=TOLERANCE)
    assert not tree_basis_sums(TreeBases(bases), ev, 1 - tree)[1].any()
    for t in bases:
        t.eta_ = 0.0  # broken bound (read when the stack is made)
    got, ok = tree_basis_sums(TreeBases(bases), ev, 1 - tree)
    assert ok.all() and np.abs(got - want).min() > 1e-9


def test_a_stack_of_learners_takes_one_tree_each(monkeypatch):
    """RecordTreeSums with ``l`` of several learners ``(R, 1, P)`` and their records' log Q
    ``(R, K, P)``: one call, each learner's graphs in the tree of its own ``l``, every graph
    certified and equal to the log path."""
    import onlinebma.tan.record_sums as rs

    g, r, k = 13, 3, 4
    rng = np.random.default_rng(2)
    nodes = np.arange(1, g)
    ws = [chain_graph(rng, g, order, 800.0)
          for order in (nodes, rng.permutation(nodes), rng.permutation(nodes))]
    i, j = np.triu_indices(g - 1, 1)  # the feature pairs
    l_pairs = np.stack([w[i + 1, j + 1] for w in ws])[:, None, :]
    log_q = rng.normal(0.0, 2.0, (r, k, len(i)))
    calls = []
    plain = rs.tree_basis_sums

    def spy(basis, e, tree=None):
        out = plain(basis, e, tree)
        calls.append((basis, out[1]))
        return out

    monkeypatch.setattr(rs, "tree_basis_sums", spy)
    sums = RecordTreeSums(forests=True, log_edge_prior=0.0)
    got = sums(b"all", g - 1, l_pairs, log_q, t=100)
    assert len(calls) == 1 and calls[0][1].all()
    assert len({t.tree_.tobytes() for t in calls[0][0].bases_}) == r
    want = log_tree_sum(sums.graphs(g - 1, l_pairs, log_q), path="log")
    np.testing.assert_allclose(got, want, rtol=0, atol=TOLERANCE + huge_tol(np.stack(ws)))
