"""Each learner of a stack (``decay="auto"``'s members) keeps its own tree basis and
back-off in :class:`~onlinebma.tan.record_sums.RecordTreeSums`: a learner whose graphs its
tree cannot certify backs off alone, the others' graphs stay on the basis, and every sum
equals the log-path elimination."""

from __future__ import annotations

import numpy as np

import onlinebma.tan.record_sums as rs
from onlinebma.stats.spanning import log_tree_sum
from onlinebma.stats.tree_basis import TOLERANCE
from onlinebma.tan.record_sums import RecordTreeSums
from tests.test_spanning import huge_tol
from tests.test_tan_tree_bases import chain_graph


def _stack(g, k, seed=4):
    """``l`` of two learners over the feature pairs of ``g - 1`` features, ``(2, 1, P)``:
    learner 0 nearly tied (every tree about as heavy: ``tr M`` far beyond the rounding
    bound, never certified), learner 1 a strong chain (certified); and ``k`` records' log Q
    per learner ``(2, k, P)``."""
    rng = np.random.default_rng(seed)
    i, j = np.triu_indices(g - 1, 1)
    tied = rng.normal(0.0, 0.01, len(i))
    chain = chain_graph(rng, g, np.arange(1, g), 800.0)[i + 1, j + 1]
    return np.stack([tied, chain])[:, None, :], rng.normal(0.0, 2.0, (2, k, len(i)))


def test_a_refused_learner_backs_off_alone(monkeypatch):
    g, k = 21, 3
    l_pairs, log_q = _stack(g, k)
    calls = []
    plain = rs.tree_basis_sums

    def spy(basis, e, tree=None):
        out = plain(basis, e, tree)
        calls.append((len(e), int(out[1].sum())))
        return out

    monkeypatch.setattr(rs, "tree_basis_sums", spy)
    sums = RecordTreeSums(forests=True, log_edge_prior=0.0)
    want = log_tree_sum(sums.graphs(g - 1, l_pairs, log_q), path="log")
    tol = TOLERANCE + huge_tol(sums.graphs(g - 1, l_pairs, log_q))
    got = sums(b"all", g - 1, l_pairs, log_q, t=100)
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)
    # the stack, then learner 0's graphs again in a rebuilt tree: refused, it backs off
    assert calls == [(2 * k, k), (k, 0)]
    calls.clear()
    for t in (101, 102):  # within the back-off: learner 1's graphs alone, all certified
        got = sums(b"all", g - 1, l_pairs, log_q, t=t)
        np.testing.assert_allclose(got, want, rtol=0, atol=tol)
    assert calls == [(k, k), (k, k)]
    calls.clear()
    sums(b"all", g - 1, l_pairs, log_q, t=100 + rs._BACKOFF)  # the back-off is over
    assert calls == [(2 * k, k), (k, 0)]


def test_a_stack_whose_learners_all_back_off_is_eliminated(monkeypatch):
    g, k = 21, 2
    l_pairs, log_q = _stack(g, k)
    l_pairs = l_pairs[[0, 0]]  # both learners nearly tied
    calls = []
    plain = rs.tree_basis_sums
    monkeypatch.setattr(rs, "tree_basis_sums",
                        lambda *a: calls.append(len(a[1])) or plain(*a))
    sums = RecordTreeSums(forests=True, log_edge_prior=0.0)
    want = log_tree_sum(sums.graphs(g - 1, l_pairs, log_q), path="log")
    for t in (100, 101):
        got = sums(b"all", g - 1, l_pairs, log_q, t=t)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)
    assert calls == [2 * k, 2 * k]  # the first record only: then both back off
