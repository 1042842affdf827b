"""The spanning-tree basis path of the tree sums (:mod:`onlinebma.stats.tree_basis`) and
ModelAveragedTAN's use of it (:mod:`onlinebma.tan.record_sums`): certified sums equal the log
path and mpmath at spreads of thousands of nats, the bound refuses what it cannot certify,
and the classifier's predictions on this path equal the log path's to 1e-9."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from onlinebma import tuning
from onlinebma.stats.spanning import log_tree_sum
from onlinebma.stats.tree_basis import (
    TOLERANCE,
    TreeBasis,
    maximum_spanning_tree,
    tree_basis_sums,
)
from onlinebma.tan import ModelAveragedTAN
from tests.test_spanning import clusters, huge_tol, mp_eliminate_tree
from tests.test_tan_fast_paths import chain_records


def edges_of(g):
    return np.triu_indices(g, 1)


def matrices(ev, g):
    i, j = edges_of(g)
    w = np.zeros((len(ev), g, g))
    w[:, i, j] = ev
    return w + w.transpose(0, 2, 1)


def classifier_like(rng, b, g, strong, noise=3.0):
    """Forest-like graphs: node 0 joined to every node at 0 nats, a chain of strong pairs
    (``strong`` nats), the other pairs weak (-200), and per graph a few nats of noise like a
    record's log Q."""
    w = rng.uniform(-220.0, -180.0, (g, g))
    for k in range(1, g - 1):
        w[k, k + 1] = strong * rng.uniform(0.5, 1.0)
    w = np.triu(w, 1)
    w = w + w.T
    w[0, :] = w[:, 0] = 0.0
    i, j = edges_of(g)
    q = rng.normal(0.0, noise, (b, len(i)))
    q[:, i == 0] = 0.0  # log Q touches feature pairs only
    return w, w[i, j] + q


def test_maximum_spanning_tree_has_the_cycle_property():
    rng = np.random.default_rng(0)
    g = 12
    w = rng.normal(0, 50, (g, g))
    w = w + w.T
    parent = maximum_spanning_tree(w)
    assert parent[0] == -1 and (parent[1:] >= 0).all()
    i, j = edges_of(g)
    basis = TreeBasis(parent, i, j)
    ev = w[i, j]
    # every tree edge on the fundamental cycle of a non-tree edge weighs at least as much
    assert (ev[basis.edge_] <= ev[basis.tree_edge_]).all()
    assert len(basis.tree_) == g - 1


@pytest.mark.parametrize("g,strong", [(8, 50.0), (21, 700.0), (21, 5e3), (18, 2e4)])
def test_certified_sums_equal_the_log_path(g, strong):
    rng = np.random.default_rng(g)
    w, ev = classifier_like(rng, 6, g, strong)
    i, j = edges_of(g)
    basis = TreeBasis(maximum_spanning_tree(w), i, j)
    got, ok = tree_basis_sums(basis, ev)
    # the tree of the noiseless graph certifies the noisy ones (most of them when the
    # noise can reorder the weak chain)
    assert ok.all() if strong > 100 else ok.sum() >= 3
    want = log_tree_sum(matrices(ev, g), path="log")
    tol = TOLERANCE + max(huge_tol(w), 1e-12)
    np.testing.assert_allclose(got[ok], want[ok], rtol=0, atol=tol)


@pytest.mark.parametrize("sizes", [[3, 3], [2, 4, 2]])
def test_certified_sums_equal_mpmath_at_ten_thousands_of_nats(sizes):
    rng = np.random.default_rng(len(sizes))
    lw = clusters(rng, sizes, p_missing=0.0)  # pairs at +2e4..3e4 nats, bridges at -3e4
    g = lw.shape[0]
    i, j = edges_of(g)
    basis = TreeBasis(maximum_spanning_tree(lw), i, j)
    got, ok = tree_basis_sums(basis, lw[i, j][None])
    assert ok.all()
    want = mp_eliminate_tree(lw, list(range(g)))
    assert abs(got[0] - want) <= TOLERANCE + huge_tol(lw)


def test_the_bound_refuses_trees_far_from_maximal():
    """A tree that is not maximal makes some |A_ef| > 1: beyond the bound the path refuses
    the graph; with the bound switched off its answer is wrong, so the bound is what keeps
    the path exact."""
    rng = np.random.default_rng(3)
    g = 10
    w, ev = classifier_like(rng, 3, g, 400.0, noise=0.0)
    i, j = edges_of(g)
    star = np.r_[-1, np.zeros(g - 1, dtype=np.int64)]  # every node hangs off node 0
    basis = TreeBasis(star, i, j)
    got, ok = tree_basis_sums(basis, ev)
    assert not ok.any() and np.isnan(got).all()
    # weaker pairs (30 nats): exponentials stay finite but the trace is far too large
    w, ev = classifier_like(rng, 3, g, 30.0, noise=0.0)
    basis = TreeBasis(star, i, j)
    got, ok = tree_basis_sums(basis, ev)
    assert not ok.any()
    basis.eta_ = 0.0  # broken bound
    got, _ = tree_basis_sums(basis, ev)
    want = log_tree_sum(matrices(ev, g), path="log")
    assert np.abs(got - want).max() > 1e-9


@pytest.mark.parametrize("b", [3, 12])  # graph by graph, and stacked
def test_graphs_far_from_their_basis_are_refused_without_warnings(b):
    """A tree far from maximal (exponentials overflow) and a record that lifts a left-out
    entry by a thousand nats (its bound overflows) are refused quietly: no numpy warning
    reaches the user of a classifier whose record took this path."""
    g = 10
    rng = np.random.default_rng(4)
    i, j = edges_of(g)
    star = TreeBasis(np.r_[-1, np.zeros(g - 1, dtype=np.int64)], i, j)
    w, ev = classifier_like(rng, b, g, 600.0)
    basis = TreeBasis(maximum_spanning_tree(w), i, j, w[i, j])
    lifted = ev.copy()
    lifted[0, basis.dropped_[0][0]] += 1040.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got, ok = tree_basis_sums(star, ev)
        assert not ok.any() and np.isnan(got).all()
        got, ok = tree_basis_sums(basis, lifted)
    assert not ok[0] and ok[1:].all()


@pytest.mark.parametrize("p,params", [(4, {}), (14, {}),
                                      (14, {"structures": "trees"}),
                                      (12, {"edge_prior": 0.3})])
def test_classifier_predictions_on_the_basis_path_equal_the_log_path(monkeypatch, p, params):
    """Predict then learn from an empty model. 14 features (15 nodes, in the basis' range):
    early records fall back to elimination, later ones are certified; 4 features: the
    plain-Python elimination from edge lists. Every prediction equals that of a learner
    summing every graph on the log path."""
    import onlinebma.tan.record_sums as rs
    from onlinebma.stats import tree_basis

    data = chain_records(260, p, seed=5, strength=0.8, missing=0.05)
    certified = []
    plain = rs.tree_basis_sums

    def spy(basis, e, tree=None):
        out = plain(basis, e, tree)
        certified.append(int(out[1].sum()))
        return out

    monkeypatch.setattr(rs, "tree_basis_sums", spy)
    fast = ModelAveragedTAN(**params)
    got = []
    for x, y in data:
        got.append(fast.predict_proba_one(x))
        fast.learn_one(x, y)
    if p > 10:
        assert sum(certified) > 300 and min(certified) == 0  # both routes ran
    else:
        assert not certified
    monkeypatch.setattr(tuning, "BASIS_NODES", 0)
    monkeypatch.setattr(tuning, "BASIS_WORK", -1)
    log_path = rs.log_tree_sum
    monkeypatch.setattr(rs, "log_tree_sum", lambda a: log_path(a, path="log"))
    slow = ModelAveragedTAN(**params)
    want = []
    for x, y in data:
        want.append(slow.predict_proba_one(x))
        slow.learn_one(x, y)
    got = pd.DataFrame(got[1:])
    want = pd.DataFrame(want[1:]).reindex(columns=got.columns)
    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=0, atol=1e-9)
    assert tree_basis.TOLERANCE <= 1e-10


def test_entries_left_out_are_bounded_record_by_record():
    """A basis built from weights ``l`` leaves out the entries of A below e^-60 in them;
    sums of ``l + log Q`` equal the log path while those entries stay small, and a record
    that lifts one of them is refused (with the bound switched off, its sum is wrong)."""
    rng = np.random.default_rng(7)
    g = 16
    w, ev = classifier_like(rng, 4, g, 600.0)
    i, j = edges_of(g)
    basis = TreeBasis(maximum_spanning_tree(w), i, j, w[i, j])
    full = TreeBasis(maximum_spanning_tree(w), i, j)
    assert len(basis.dropped_[0]) > len(basis.edge_) > 0
    got, ok = tree_basis_sums(basis, ev)
    assert ok.all()
    want = log_tree_sum(matrices(ev, g), path="log")
    np.testing.assert_allclose(got, want, rtol=0, atol=TOLERANCE + huge_tol(w))
    # lift one left-out entry: a weak pair now 20 nats below the weakest tree edge on its
    # cycle (A entries of e^-10)
    lifted = ev[:1].copy()
    e = basis.dropped_[0][ev[0, basis.dropped_[0]] < -100][0]
    lifted[0, e] = ev[0, full.tree_edge_[full.edge_ == e]].min() - 20.0
    got, ok = tree_basis_sums(basis, lifted)
    assert not ok[0]
    want = log_tree_sum(matrices(lifted, g), path="log")
    assert tree_basis_sums(full, lifted)[1][0]  # the full basis certifies it
    assert abs(tree_basis_sums(full, lifted)[0][0] - want[0]) <= TOLERANCE + huge_tol(w)
    basis.dropped_ = (basis.dropped_[0][:0], basis.dropped_[1][:0])  # broken bound
    got, ok = tree_basis_sums(basis, lifted)
    assert ok[0] and abs(got[0] - want[0]) > 1e-9


def test_maximum_spanning_tree_weighs_the_brute_force_maximum():
    """Prim's tree of the tree basis weighs as much as the heaviest of all spanning trees,
    enumerated (every parent vector that reaches node 0), on small graphs with ties and
    missing (-inf) edges; a node the tree cannot reach keeps parent -1."""
    import itertools

    rng = np.random.default_rng(3)
    for _ in range(60):
        g = int(rng.integers(2, 6))
        w = np.round(rng.normal(size=(g, g)) * 3)  # integers: ties
        w = w + w.T
        parent = maximum_spanning_tree(w)
        best = -np.inf
        for choice in itertools.product(range(g), repeat=g - 1):
            p = (-1, *choice)
            if all(reaches_root_of(p, x) for x in range(1, g)):
                best = max(best, sum(w[x, p[x]] for x in range(1, g)))
        assert parent[0] == -1 and all(reaches_root_of(parent, x) for x in range(1, g))
        assert sum(w[x, parent[x]] for x in range(1, g)) == best
    w = np.zeros((3, 3))
    w[0, 2] = w[2, 0] = w[1, 2] = w[2, 1] = -np.inf
    w[0, 1] = w[1, 0] = -np.inf
    assert maximum_spanning_tree(w).tolist() == [-1, -1, -1]


def reaches_root_of(parent, x) -> bool:
    for _ in range(len(parent)):
        if x == 0:
            return True
        x = int(parent[x])
        if x < 0:
            return False
    return False


def test_tree_basis_refuses_a_tree_that_misses_a_node_or_an_edge():
    u, v = np.array([0, 0, 1]), np.array([1, 2, 2])
    with pytest.raises(ValueError, match="reach every node"):
        TreeBasis(np.array([-1, 0, -1]), u, v)
    with pytest.raises(ValueError, match="edge list"):
        TreeBasis(np.array([-1, 0, 1]), u[:2], v[:2])
