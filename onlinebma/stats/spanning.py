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
and benchmarks. Costs and crossovers: docs/results/spanning-cost.md.
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["edge_probabilities", "float_path_is_safe", "log_forest_sum", "log_tree_sum",
           "scaled_path_is_safe"]

# Spread bound of the float path (nats): S + n log 2 + log n <= SAFE_NATS, where 708 nats is
# the smallest normal float; 108 nats of margin.
SAFE_NATS = 600.0

# The per-step reductions and log additions of the elimination loops, bound once: a record's
# graphs are tiny (K x 21 x 21), so the np.sum wrapper and attribute look-ups cost as much as
# the arithmetic.
_ADD_REDUCE = np.add.reduce
_LOG_ADD = np.logaddexp
_LOG_ADD_REDUCE = np.logaddexp.reduce

# Stacks of B graphs of m nodes with B m^3 <= SMALL_WORK + SMALL_WORK_PER_NODE m are summed
# in plain Python floats by "auto" (_log_tree_sums_small): the Python elimination costs about
# 0.1 us B m^3, numpy's about 130 + 20 m us of per-call overhead (2 loaded cores; measured:
# docs/results/spanning-cost.md).
SMALL_WORK = 1300
SMALL_WORK_PER_NODE = 200

# The row-scaled paths: float64, and numpy's extended precision where the platform has one
# (x87 80-bit on x86-64 Linux: 11,355 nats of exponent range instead of 708).
_EXTENDED = np.longdouble
# Margin (nats) of the row-scaled bound: an underflow's absolute error is below e^-20 of a
# rounding error of the entry it is added to.
_ROW_MARGIN = 20.0
# -log(smallest normal) of each float type of the row-scaled paths
_TINY_NATS = {np.dtype(t): -float(np.log(np.finfo(t).tiny)) for t in (float, _EXTENDED)}


def float_path_is_safe(log_weights) -> np.ndarray:
    """Whether linear-space elimination of each graph is exact to rounding.

    With every edge present (all off-diagonal log weights finite) and weights shifted so the
    largest is 1, eliminating node ``k`` sets ``w_ij <- w_ij + w_ik (w_kj / d_k)``: entries
    never decrease (the minimum stays ``>= exp(-S)``, ``S`` the spread max - min of the log
    weights) and at most double (``w_ik <= d_k``), so after ``n`` steps every entry is
    ``<= 2^n`` and every degree ``<= n 2^n``. The ratio ``w_kj / d_k`` is then
    ``>= exp(-(S + n log 2 + log n))``; while that stays a normal float (``S + n log 2 +
    log n <= 708`` nats, we require ``<= 600``) every quantity carries full relative precision
    and a product that underflows is below ``exp(-708)``, negligible (relative
    ``exp(S - 708) < 2^-53``) against the entry ``>= exp(-S)`` it is added to. A missing
    edge could be filled in by a product too small to represent, so graphs with a ``-inf``
    edge always take the log path.

    Parameters
    ----------
    log_weights
        Array ``(..., n, n)`` of symmetric log edge weights; the diagonal is ignored.

    Returns
    -------
    Boolean array of shape ``(...)``.

    Examples
    --------
    >>> import numpy as np
    >>> float_path_is_safe(np.array([[[0, 500, 2], [500, 0, 3], [2, 3, 0]],
    ...                              [[0, -1e4, 2], [-1e4, 0, 3], [2, 3, 0]],
    ...                              [[0, -np.inf, 2], [-np.inf, 0, 3], [2, 3, 0]]]))
    array([ True, False, False])
    """
    a = np.array(log_weights, dtype=float)
    n = a.shape[-1]
    if n < 2:
        return np.ones(a.shape[:-2], dtype=bool)
    diag = np.arange(n)
    a[..., diag, diag] = a[..., :1, 1]
    return _safe(a)[0]


def _safe(a: np.ndarray):
    """:func:`float_path_is_safe` of graphs whose diagonal holds one of their off-diagonal
    weights, and their largest log weight."""
    n = a.shape[-1]
    top = a.max(axis=(-2, -1))
    with np.errstate(invalid="ignore"):
        spread = top - a.min(axis=(-2, -1))
        return spread <= SAFE_NATS - n * math.log(2.0) - math.log(n), top


def _log_eliminate(a: np.ndarray, keep: int):
    """Kron-reduce ``a`` (``(B, m, m)`` log weights, diagonal ``-inf``) onto its first
    ``keep`` nodes, last node first; return the sum of the log pivots ``(B,)`` and the reduced
    graphs ``(B, keep, keep)``. Each step writes a new contiguous array (faster than updating
    a strided view in place)."""
    b, m = a.shape[0], a.shape[1]
    log_pivots = np.empty((m - keep, b))
    with np.errstate(invalid="ignore", divide="ignore"):
        for j, k in enumerate(range(m - 1, keep - 1, -1)):
            row = a[:, k, :k]
            log_d = _LOG_ADD_REDUCE(row, 1, None, log_pivots[j])
            a = _LOG_ADD(a[:, :k, :k], row[:, :, None] + (row - log_d[:, None])[:, None, :])
    return log_pivots.sum(axis=0), a


def _float_eliminate(x: np.ndarray, keep: int):
    """:func:`_log_eliminate` in linear space: ``x`` ``(B, m, m)`` positive weights (a float
    dtype; each row may carry its own scale, the diagonal is never read). Eliminating node
    ``k`` divides its row by its pivot ``d_k = sum_{j<k} x_kj`` and adds ``x_ik x_kj / d_k``
    to every ``x_ij``, ``x_ik`` read from row ``i`` (its own scale), so row scales are kept:
    this is GTH elimination of the directed graph. Returns the sum of the log pivots (in the
    dtype of ``x``) and the reduced graphs in linear space."""
    b, m = x.shape[0], x.shape[1]
    pivots = np.empty((m - keep, b), dtype=x.dtype)
    for j, k in enumerate(range(m - 1, keep - 1, -1)):
        row = x[:, k, :k]
        d = _ADD_REDUCE(row, 1, None, pivots[j])
        x = x[:, :k, :k] + x[:, :k, k, None] * (row / d[:, None])[:, None, :]
    return np.log(pivots).sum(axis=0), x


def scaled_path_is_safe(log_weights, dtype=float) -> np.ndarray:
    """Whether the row-scaled elimination in ``dtype`` is exact to rounding for each graph.

    The row-scaled path divides each row ``i`` of the graph by its largest off-diagonal
    weight (the scale ``M_i`` kept in log) and eliminates by GTH in linear space
    (:func:`_float_eliminate`): node ``k``'s pivot ``d_k`` is the sum of its row, and
    ``x_ij += x_ik (x_kj / d_k)`` with ``x_ik`` in row ``i``'s scale, so every row keeps its
    own scale and ``log det = sum_k (log d_k + M_k)``. Let ``S_i`` be row ``i``'s spread
    (``max_j l_ij - min_j l_ij`` over ``j != i``) and ``m`` the nodes. Scaled entries start
    in ``[exp(-S_i), 1]``; elimination only adds positive terms, so they never decrease, and
    a row's sum over the remaining nodes never increases (the part of ``x_ik`` sent back to
    ``i`` itself leaves it), so every entry stays in ``[exp(-S_i), m)`` and every pivot in
    ``[exp(-S_k), m)``: nothing overflows, every entry and pivot is a normal float, and the
    only quantities that can leave the normal range are the quotients ``x_kj / d_k`` and the
    products ``x_ik x_kj / d_k``. Their absolute error is then at most ``m`` times the
    subnormal spacing ``tiny * eps``, and they are added to an entry ``x_ij >= exp(-S_i)``:
    a relative error of at most ``m exp(S_i) tiny`` times ``eps``, below one rounding
    (``eps``) when ``S_i + log m <= -log(tiny)``. We require a margin of 20 nats:
    ``S_i <= -log(tiny) - log m - 20`` for every row (688 - log m nats in float64, 11,335 -
    log m in x87 extended precision). So every operation has a relative error of at most
    one rounding and, all terms being positive, nothing cancels: the result is exact to
    rounding like the log path, whatever the spread across rows. A missing edge (``-inf``)
    could be filled in by a product too small to represent: such graphs are not safe.

    Parameters
    ----------
    log_weights
        Array ``(..., n, n)`` of log edge weights; the diagonal is ignored.
    dtype
        The float type of the elimination: ``float`` or ``numpy.longdouble``.

    Returns
    -------
    Boolean array of shape ``(...)``.

    Examples
    --------
    Spreads of 900 nats across rows but at most 895 within one: too wide for float64, fine
    in extended precision (where the platform has it).

    >>> import numpy as np
    >>> l = np.array([[0.0, 900.0, 5.0], [900.0, 0.0, 5.0], [5.0, 5.0, 0.0]])
    >>> extended = bool(np.finfo(np.longdouble).tiny < np.finfo(float).tiny)
    >>> bool(scaled_path_is_safe(l)), bool(scaled_path_is_safe(l, np.longdouble)) == extended
    (False, True)
    """
    a = np.array(log_weights, dtype=float)
    n = a.shape[-1]
    if n < 2:
        return np.ones(a.shape[:-2], dtype=bool)
    spread = _row_tops(a.reshape(-1, n, n))[1]
    return (spread <= _row_safe_nats(dtype, n)).reshape(a.shape[:-2])


def _log_tree_sums_small(a: np.ndarray) -> np.ndarray:
    """The log path of :func:`_log_eliminate` onto node 0, in plain Python floats, for graphs
    ``a`` (``(B, m, m)`` symmetric log weights, only the lower triangle read) of a few nodes,
    where numpy's per-call overhead costs more than the arithmetic (the crossover,
    :data:`SMALL_WORK`, is measured in docs/results/spanning-cost.md). Returns ``(B,)``."""
    exp, log, log1p, neg = math.exp, math.log, math.log1p, -math.inf
    out = []
    for g in a.tolist():
        total = 0.0
        for k in range(len(g) - 1, 0, -1):
            row = g[k]
            top = max(row[:k])
            if top == neg:
                total = neg
                break
            s = 0.0
            for j in range(k):
                s += exp(row[j] - top)
            d = top + log(s)
            total += d
            for i in range(1, k):
                t0 = row[i]
                if t0 == neg:
                    continue
                t0 -= d
                gi = g[i]
                for j in range(i):
                    t = t0 + row[j]
                    c = gi[j]
                    if t > c:
                        gi[j] = t + log1p(exp(c - t))
                    elif t != neg:
                        gi[j] = c + log1p(exp(t - c))
        out.append(total)
    return np.array(out)


def _row_tops(a: np.ndarray):
    """Row maxima ``(B, m)`` and largest row spread ``(B,)`` of graphs ``a`` (``(B, m, m)``
    log weights, diagonal overwritten: it is left at the row maxima); the spread is ``inf``
    or ``nan`` where an edge is missing."""
    diag = _diagonal(a.shape[1])
    a[:, diag, diag] = -np.inf
    top = a.max(axis=2)
    a[:, diag, diag] = top
    with np.errstate(invalid="ignore"):
        return top, (top - a.min(axis=2)).max(axis=1)


@functools.lru_cache(maxsize=64)
def _diagonal(m: int) -> np.ndarray:
    return np.arange(m)


def _row_safe_nats(dtype, m: int) -> float:
    """Within-row spread up to which the row-scaled elimination in ``dtype`` is exact to
    rounding, for graphs of ``m`` nodes (:func:`scaled_path_is_safe`)."""
    return _TINY_NATS[np.dtype(dtype)] - math.log(m) - _ROW_MARGIN


def _scaled_reduce(a: np.ndarray, top: np.ndarray, keep: int, dtype, want_graph: bool):
    """The row-scaled float path: each row of the log weights ``a`` (changed) shifted by its
    maximum ``top`` (kept in log), exponentiated in ``dtype`` and eliminated by GTH
    (:func:`_float_eliminate`). Returns the log pivot sums and, if asked, the reduced log
    graphs (symmetrised: both halves are equal up to rounding)."""
    if dtype is float:
        x = np.subtract(a, top[:, :, None], out=a)
    else:
        x = a.astype(dtype) - top[:, :, None].astype(dtype)
    logs, reduced = _float_eliminate(np.exp(x, out=x), keep)
    total = (logs + top[:, keep:].sum(axis=1)).astype(float)
    if not want_graph:
        return total, None
    g = np.log(reduced).astype(float) + top[:, :keep, None]
    return total, (g + g.transpose(0, 2, 1)) / 2


def _reduce(a: np.ndarray, keep: int, want_graph: bool = False, path: str = "auto"):
    """Kron-reduce the graphs ``a`` (``(B, m, m)`` log weights, diagonal anything, changed)
    onto their first ``keep`` nodes by the fastest safe path of each graph (or the ``path``
    asked). Returns the sum of log pivots ``(B,)`` and, if ``want_graph``, the reduced log
    weights ``(B, keep, keep)``."""
    if path not in ("auto", "float", "log", "scaled"):
        raise ValueError(f"path must be 'auto', 'log', 'float' or 'scaled', not {path!r}")
    b, m = a.shape[0], a.shape[1]
    if (path == "auto" and keep == 1 and not want_graph
            and b * m ** 3 <= SMALL_WORK + SMALL_WORK_PER_NODE * m):
        return _log_tree_sums_small(a)
    if path == "float":  # one shift per graph (float_path_is_safe), for tests and benchmarks
        diag = _diagonal(m)
        a[:, diag, diag] = a[:, :1, 1]
        safe, tops = _safe(a)
        if not safe.all():
            raise ValueError("path='float' asked for graphs outside float_path_is_safe")
        a[:, diag, diag] = tops[:, None]
        top = np.repeat(tops[:, None], m, axis=1)
        total, g = _scaled_reduce(a, top, keep, float, want_graph)
        return (total, g) if want_graph else total
    top, spread = _row_tops(a)
    if path == "log":
        route = np.full(b, 2)
    elif spread.max() <= _row_safe_nats(float, m):  # the usual case: one route for all
        route = np.zeros(b, dtype=np.int64)
    else:
        route = np.where(spread <= _row_safe_nats(float, m), 0,
                         np.where(spread <= _row_safe_nats(_EXTENDED, m), 1, 2))
    if path == "scaled" and (route == 2).any():
        raise ValueError("path='scaled' asked for graphs outside scaled_path_is_safe")
    total = np.empty(b)
    graph = np.empty((b, keep, keep)) if want_graph else None
    routes = [0] if not route.any() else np.unique(route).tolist()
    for r in routes:
        idx = slice(None) if len(routes) == 1 else np.flatnonzero(route == r)
        if r == 2:
            sub = a[idx]
            sub[:, _diagonal(m), _diagonal(m)] = -np.inf
            logs, reduced = _log_eliminate(sub, keep)
            logs[np.isnan(logs)] = -np.inf
        else:
            logs, reduced = _scaled_reduce(a[idx] if len(routes) > 1 else a, top[idx], keep,
                                           float if r == 0 else _EXTENDED, want_graph)
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
