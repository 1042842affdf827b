"""Sums over spanning trees and forests in log space (the matrix-tree theorem).

The weight of a spanning tree ``T`` of a graph with edge weights ``w`` is
``prod_{uv in T} w_uv``; the matrix-tree theorem (Kirchhoff 1847) gives the sum over all
spanning trees as the determinant of the Laplacian with one node's row and column removed (the
*ground*). Edge weights of the tree-averaged classifiers (Meilă & Jaakkola 2006; Cerquides &
López de Mántaras 2005) span thousands of nats, far beyond a float's range, so the determinant
is computed by eliminating nodes one at a time (Kron reduction, the Schur complement of the
Laplacian): the pivot of node ``k`` is its weighted degree ``d_k = sum_j w_kj`` and eliminating
it joins every pair of its neighbours, ``w_ij <- w_ij + w_ik w_kj / d_k``. Every step only adds
positive terms, so nothing cancels (as in the GTH algorithm for Markov chains), and the log
determinant is the sum of the log pivots.

Forests: a rooted spanning forest of ``n`` nodes, each root ``v`` weighing ``r_v``, is a
spanning tree of the graph with one more node joined to every ``v`` with weight ``r_v``
(the matrix-forest theorem, Chebotarev & Shamis 1997); :func:`log_forest_sum` grounds that node.

Edge probabilities: under ``P(T) ∝ prod w``, edge ``uv`` is in the tree with probability
``w_uv`` times the effective resistance between ``u`` and ``v`` (Kirchhoff), that is
``w_uv / C_uv`` with ``C_uv`` the weight of the edge ``uv`` left after Kron-reducing every
other node; :func:`edge_probabilities` computes all of them by a divide and conquer over
pairs of node quarters, positive terms only.

Exact paths eliminate the nodes, chosen per graph by ``path="auto"``:

- small stacks (``B m^3 <= 1300 + 200 m``: a record's few graphs of up to about 12 nodes)
  in plain Python floats, in log space (numpy's per-call overhead costs more than the
  arithmetic there);
- the row-scaled float path: each row divided by its largest weight (the scale kept in log)
  and eliminated in linear space (GTH on the directed graph), in float64 when no row spreads
  over more than ``688 - log m`` nats, else in x87 extended precision (``numpy.longdouble``,
  up to ``11,335 - log m`` nats) where the platform has it (:func:`scaled_path_is_safe`
  proves both bounds); the spread *across* rows is free, and the classifiers' graphs (a
  strong pair at +700 nats, weak ones at -200, roots at 0 after 1,000 records) stay on
  these paths;
- the log path (``logaddexp`` per entry) for the rest: any spread, missing edges.

``path="float"`` (one shift per graph, within :func:`float_path_is_safe`) is kept for tests
and benchmarks. Costs and crossovers: docs/results/spanning-cost.md. The kernels and the
proofs of their bounds: :mod:`onlinebma.stats.elimination` (``float_path_is_safe`` and
``scaled_path_is_safe`` are imported from there and public here too).
"""

from __future__ import annotations

import numpy as np

from .. import tuning
from .elimination import (
    EXTENDED,
    diagonal,
    float_path_is_safe,
    log_eliminate,
    log_tree_sums_python,
    row_safe_nats,
    row_tops,
    scaled_path_is_safe,
    scaled_reduce,
    shift_is_safe,
)

__all__ = ["edge_probabilities", "float_path_is_safe", "log_forest_sum", "log_tree_sum",
           "scaled_path_is_safe"]



def _reduce(a: np.ndarray, keep: int, want_graph: bool = False, path: str = "auto"):
    """Kron-reduce the graphs ``a`` (``(B, m, m)`` log weights, diagonal anything, changed)
    onto their first ``keep`` nodes by the fastest safe path of each graph (or the ``path``
    asked). Returns the sum of log pivots ``(B,)`` and, if ``want_graph``, the reduced log
    weights ``(B, keep, keep)``."""
    if path not in ("auto", "float", "log", "scaled"):
        raise ValueError(f"path must be 'auto', 'log', 'float' or 'scaled', not {path!r}")
    b, m = a.shape[0], a.shape[1]
    if (path == "auto" and keep == 1 and not want_graph
            and b * m ** 3 <= tuning.SMALL_WORK + tuning.SMALL_WORK_PER_NODE * m):
        return log_tree_sums_python(a)
    if path == "float":  # one shift per graph (float_path_is_safe), for tests and benchmarks
        diag = diagonal(m)
        a[:, diag, diag] = a[:, :1, 1]
        safe, tops = shift_is_safe(a)
        if not safe.all():
            raise ValueError("path='float' asked for graphs outside float_path_is_safe")
        a[:, diag, diag] = tops[:, None]
        top = np.repeat(tops[:, None], m, axis=1)
        total, g = scaled_reduce(a, top, keep, float, want_graph)
        return (total, g) if want_graph else total
    top, spread = row_tops(a)
    if path == "log":
        route = np.full(b, 2)
    elif spread.max() <= row_safe_nats(float, m):  # the usual case: one route for all
        route = np.zeros(b, dtype=np.int64)
    else:
        route = np.where(spread <= row_safe_nats(float, m), 0,
                         np.where(spread <= row_safe_nats(EXTENDED, m), 1, 2))
    if path == "scaled" and (route == 2).any():
        raise ValueError("path='scaled' asked for graphs outside scaled_path_is_safe")
    total = np.empty(b)
    graph = np.empty((b, keep, keep)) if want_graph else None
    routes = [0] if not route.any() else np.unique(route).tolist()
    for r in routes:
        idx = slice(None) if len(routes) == 1 else np.flatnonzero(route == r)
        if r == 2:
            sub = a[idx]
            sub[:, diagonal(m), diagonal(m)] = -np.inf
            logs, reduced = log_eliminate(sub, keep)
            logs[np.isnan(logs)] = -np.inf
        else:
            logs, reduced = scaled_reduce(a[idx] if len(routes) > 1 else a, top[idx], keep,
                                           float if r == 0 else EXTENDED, want_graph)
        total[idx] = logs
        if want_graph:
            graph[idx] = reduced
    return (total, graph) if want_graph else total


def log_tree_sum(log_weights, ground: int = 0, path: str = "auto") -> np.ndarray:
    """``log sum_T prod_{uv in T} w_uv`` over the spanning trees of each graph.

    The matrix-tree theorem: the sum is the determinant of the Laplacian without the row and
    column of ``ground``, computed as the product of the pivots of Kron reduction.

    Parameters
    ----------
    log_weights
        Array ``(..., n, n)`` of symmetric log edge weights; the diagonal is ignored and
        ``-inf`` means no edge. Leading axes are independent graphs.
    ground
        The node whose row and column the reduced Laplacian leaves out (the result does not
        depend on it).
    path
        ``"auto"`` (default) takes the float path for the graphs :func:`float_path_is_safe`
        allows and the log path for the others; ``"log"`` forces the log path, ``"float"``
        the float path (``ValueError`` if a graph is not safe). For benchmarks and tests:
        both give the same sums to rounding.

    Returns
    -------
    Array of shape ``(...)``: ``-inf`` where a graph has no spanning tree.

    Examples
    --------
    A triangle with unit weights has three spanning trees:

    >>> import numpy as np
    >>> round(float(np.exp(log_tree_sum(np.zeros((3, 3))))), 9)
    3.0

    Weights far beyond a float's range: two strongly linked pairs joined by one weak edge.

    >>> l = np.array([[0, 5e3, -5e3, -np.inf], [5e3, 0, -np.inf, -np.inf],
    ...               [-5e3, -np.inf, 0, 4e3], [-np.inf, -np.inf, 4e3, 0]])
    >>> float(log_tree_sum(l))
    4000.0
    """
    a = np.array(log_weights, dtype=float)
    n = a.shape[-1]
    batch = a.shape[:-2]
    if n <= 1:
        return np.zeros(batch)
    a = a.reshape(-1, n, n)
    g = ground % n
    if g:
        order = np.r_[g, 0:g, g + 1:n]
        a = a[:, order[:, None], order]
    return _reduce(a, 1, path=path).reshape(batch)


def _with_root_node(log_weights, log_root_weights) -> np.ndarray:
    """The graph plus node 0 joined to every node ``v`` (now ``v + 1``) with weight ``r_v``."""
    w = np.asarray(log_weights, dtype=float)
    r = np.asarray(log_root_weights, dtype=float)
    n = w.shape[-1]
    shape = np.broadcast_shapes(w.shape[:-2], r.shape[:-1])
    big = np.empty((*shape, n + 1, n + 1))
    big[..., 1:, 1:] = w
    big[..., 0, 1:] = r
    big[..., 1:, 0] = r
    big[..., 0, 0] = -np.inf
    return big


def log_forest_sum(log_weights, log_root_weights) -> np.ndarray:
    """``log sum_F prod_{roots v of F} r_v prod_{uv in F} w_uv`` over rooted spanning forests.

    The matrix-forest theorem: the sum is :func:`log_tree_sum` of the graph with one more
    node joined to every node ``v`` with weight ``r_v``, grounded at that node.

    Parameters
    ----------
    log_weights
        Array ``(..., n, n)`` of symmetric log edge weights (diagonal ignored, ``-inf`` no
        edge).
    log_root_weights
        Array ``(..., n)``: the log weight of each node as a root; leading axes broadcast
        with those of ``log_weights``.

    Returns
    -------
    Array of the broadcast leading shape: ``-inf`` where no rooted forest has weight.

    Examples
    --------
    Rooted forests of two nodes: both roots, or the edge rooted at either end.

    >>> import numpy as np
    >>> round(float(np.exp(log_forest_sum(np.zeros((2, 2)), np.zeros(2)))), 9)
    3.0
    """
    return log_tree_sum(_with_root_node(log_weights, log_root_weights), ground=0)


def _log_conductances(a: np.ndarray) -> np.ndarray:
    """``log C_uv`` for every pair of the graphs ``a`` (``(B, n, n)``, ``n >= 2``): the edge
    weight between ``u`` and ``v`` once every other node is Kron-reduced.

    Divide and conquer: split a graph's nodes in four quarters; for each of the six pairs of
    quarters, reduce the other two (half the nodes) and recurse on the half kept; every pair of
    nodes lies in one of the halves. The work is about ``1.2 n^3`` (6 problems of half the size
    per level), four times one tree sum. Problems of one size are stacked in one batch.
    """
    b, n, _ = a.shape
    out = np.full((b, n, n), -np.inf)
    pending = {n: [(a[None], np.arange(n)[None])]}  # size -> [(graphs (P, B, m, m), labels)]
    while pending:
        m = max(pending)
        graphs = np.concatenate([g for g, _ in pending[m]])
        labels = np.concatenate([lab for _, lab in pending.pop(m)])
        if m == 2:
            u, v = labels[:, 0], labels[:, 1]
            out[:, u, v] = out[:, v, u] = graphs[:, :, 0, 1].T
            continue
        quarters = np.array_split(np.arange(m), 4)
        children: dict[int, list[np.ndarray]] = {}
        for i in range(4):
            for j in range(i + 1, 4):
                keep = np.concatenate([quarters[i], quarters[j]])
                if len(keep) >= 2:
                    rest = np.setdiff1d(np.arange(m), keep)
                    children.setdefault(len(keep), []).append(np.concatenate([keep, rest]))
        for s, perms in children.items():
            perms = np.array(perms)  # (Q, m)
            sub = graphs[:, :, perms[:, :, None], perms[:, None, :]]  # (P, B, Q, m, m)
            p, q = sub.shape[0], sub.shape[2]
            sub = sub.transpose(0, 2, 1, 3, 4).reshape(-1, m, m)
            _, reduced = _reduce(sub, s, want_graph=True)
            pending.setdefault(s, []).append(
                (reduced.reshape(p * q, b, s, s), labels[:, perms[:, :s]].reshape(p * q, s)))
    return out


def edge_probabilities(log_weights, log_root_weights=None):
    """The probability of each edge under ``P(T) ∝ prod_{uv in T} w_uv`` over spanning trees.

    Edge ``uv`` is in the random tree with probability ``w_uv R_uv``, ``R_uv`` the effective
    resistance between ``u`` and ``v`` (Kirchhoff), computed as ``w_uv / C_uv`` with ``C_uv``
    the weight of the edge ``uv`` left when every other node is Kron-reduced: only positive
    terms, in log space, at any spread. Every tree has ``n - 1`` edges, so each matrix sums to
    ``2 (n - 1)`` (each edge counted twice).

    Parameters
    ----------
    log_weights
        Array ``(..., n, n)`` of symmetric log edge weights (diagonal ignored, ``-inf`` no
        edge).
    log_root_weights
        Optional array ``(..., n)``: with it the distribution is over rooted spanning forests,
        ``P(F) ∝ prod_{roots v} r_v prod_{uv in F} w_uv`` (the matrix-forest theorem: trees
        of the graph plus one node joined to every node with weight ``r_v``).

    Returns
    -------
    Array ``(..., n, n)``, symmetric with a zero diagonal, of edge probabilities (``nan``
    where a graph has no spanning tree); with ``log_root_weights``, the pair
    ``(edges, roots)`` where ``roots`` ``(..., n)`` holds ``P(v is a root)``; then edges and
    roots sum to ``n`` per forest.

    Examples
    --------
    In a unit triangle every edge is in two of the three trees:

    >>> import numpy as np
    >>> p = edge_probabilities(np.zeros((3, 3)))
    >>> bool(np.allclose(p, (np.ones((3, 3)) - np.eye(3)) * 2 / 3))
    True

    Two nodes, unit weights: forests {both roots}, {edge, root 0}, {edge, root 1}.

    >>> edges, roots = edge_probabilities(np.zeros((2, 2)), np.zeros(2))
    >>> print(np.round(3 * edges, 9), np.round(3 * roots, 9))
    [[0. 2.]
     [2. 0.]] [2. 2.]
    """
    if log_root_weights is not None:
        big = _with_root_node(log_weights, log_root_weights)
        p = edge_probabilities(big)
        return p[..., 1:, 1:], p[..., 0, 1:]
    w = np.array(log_weights, dtype=float)
    n = w.shape[-1]
    batch = w.shape[:-2]
    if n <= 1:
        return np.zeros(w.shape)
    w = w.reshape(-1, n, n)
    c = _log_conductances(w.copy())
    diag = np.arange(n)
    c[:, diag, diag] = 0.0
    w[:, diag, diag] = -np.inf
    connected = np.isfinite(c).all(axis=(1, 2))
    p = np.exp(w - np.where(np.isfinite(c), c, 0.0))
    p[~connected] = np.nan
    return p.reshape(*batch, n, n)
