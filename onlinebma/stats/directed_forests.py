"""Sums over directed spanning forests and trees in log space (Tutte's matrix-tree theorem).

A *directed* graph has a weight ``w(i -> j)`` per ordered pair (parent ``i``, child ``j``),
not necessarily equal to ``w(j -> i)``. A rooted spanning forest of ``n`` nodes in which every
node has at most one parent is a DAG (an *arborescence* per component); with a weight ``r_v``
per root its weight is ``prod_{roots v} r_v prod_{i -> j in F} w(i -> j)``. Joining a virtual
node (the *root*) to every ``v`` by an edge ``root -> v`` of weight ``r_v``, these forests are
the spanning arborescences of the bigger graph out of the root, and Tutte's directed
matrix-tree theorem (Tutte 1948) gives their sum as the determinant of the *reduced in-degree
Laplacian*::

    M_jj = r_j + sum_{i != j} w(i -> j),   M_ij = -w(i -> j)   (i != j)

The sum is computed by eliminating nodes one at a time (the Schur complement of ``M``), as the
symmetric case of :mod:`onlinebma.stats.spanning` does, with positive terms only. Eliminating
node ``k``:

- pivot ``p_k = r_k + sum_{i != k} w(i -> k)`` (its root weight plus its in-weights);
- every pair of the other nodes ``w(i -> j) <- w(i -> j) + w(i -> k) w(k -> j) / p_k`` (the
  path through ``k``);
- every root weight ``r_j <- r_j + r_k w(k -> j) / p_k``;
- ``det M = prod_k p_k``.

Proof that the root weights stay the column sums: every column of ``M`` sums to ``r_j``; the
Schur complement's column ``j`` sums to ``r_j + w(k -> j) + (r_k - p_k) w(k -> j) / p_k =
r_j + r_k w(k -> j) / p_k``, so the reduced matrix is again a reduced in-degree Laplacian and
its diagonal never needs the subtraction ``M_jj - M_jk M_kj / p_k``. In log space
(``logaddexp``) nothing overflows, underflows to a singular matrix or cancels, at any spread;
``-inf`` is a missing (disallowed) edge. Stacks of graphs (leading axes, e.g. member and
class) are eliminated together. Symmetric weights give back
:func:`onlinebma.stats.spanning.log_forest_sum`.

Spanning trees with any root (:func:`log_directed_tree_sum`): ``sum_rho kappa_rho`` with
``kappa_rho`` the arborescences out of node ``rho``. With node ``g`` kept last, the elimination
gives ``kappa_g``, and the back substitution of the GTH algorithm (Grassmann, Taksar & Heyman
1985) gives every ``kappa_rho / kappa_g`` with positive terms (the Markov chain tree theorem:
``kappa`` is the stationary vector of the chain that moves from a child to its parent at rate
``w(parent -> child)``). ``g`` is a node from which every node is reachable, chosen per graph.

Edge probabilities (:func:`directed_edge_probabilities`): under ``P(F) ∝`` its weight,
``P(i -> j in F) = w(i -> j) (M^-1_jj - M^-1_ji)`` and ``P(j is a root) = r_j M^-1_jj``. The
inverse of a Schur complement is the matching block of the inverse, so reducing ``M`` onto
``{i, j}`` (weights ``w'``, root weights ``r'``, determinant ``D = r'_i r'_j + r'_i w'(i -> j)
+ r'_j w'(j -> i)``) gives ``P(i -> j) = w(i -> j) r'_i / D`` and ``P(j root) = r_j (r'_i +
w'(j -> i)) / D``: positive terms only, full relative precision however small. Over trees
(:func:`directed_tree_edge_probabilities`), the trees holding ``i -> j`` are those of the graph
with ``j`` merged into ``i``, and the trees rooted at ``j`` those of the graph without ``j``'s
in-edges: stacks of tree sums.
"""

from __future__ import annotations

import numpy as np

__all__ = ["directed_edge_probabilities", "directed_tree_edge_probabilities",
           "log_directed_forest_sum", "log_directed_tree_sum"]

_LOG_ADD = np.logaddexp
_LOG_ADD_REDUCE = np.logaddexp.reduce


def _eliminate(a: np.ndarray, keep: int, want_rows: bool = False):
    """Eliminate nodes ``m-1, ..., keep`` of the directed graphs ``a`` (``(B, m, m)`` log
    weights, ``a[:, i, j] = log w(i -> j)``, diagonal ``-inf``) onto the first ``keep``.

    Node 0, if kept, plays the virtual root: its row holds the root weights and its column is
    never read for a pivot (the root has no parent). Returns the sum of the log pivots
    ``(B,)`` (``-inf`` where a pivot is 0: no forest), the reduced graphs ``(B, keep, keep)``
    (diagonal ``-inf``) and, with ``want_rows``, the log pivots ``(m - keep, B)`` and each
    eliminated node's out-weights to the nodes before it at its elimination (a list, last
    node first) for the back substitution of :func:`log_directed_tree_sum`."""
    b, m = a.shape[0], a.shape[1]
    log_pivots = np.empty((m - keep, b))
    rows = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for s, k in enumerate(range(m - 1, keep - 1, -1)):
            into = a[:, :k, k]  # w(i -> k), i < k (node 0: k's root weight)
            log_p = _LOG_ADD_REDUCE(into, 1, None, log_pivots[s])
            out = a[:, k, :k]  # w(k -> j)
            if want_rows:
                rows.append(out)
            a = _LOG_ADD(a[:, :k, :k], into[:, :, None] + (out - log_p[:, None])[:, None, :])
            idx = np.arange(k)
            a[:, idx, idx] = -np.inf
    total = log_pivots.sum(axis=0)
    total[np.isnan(total) | (log_pivots == -np.inf).any(axis=0)] = -np.inf
    if want_rows:
        return total, a, log_pivots, rows
    return total, a


def _with_root(log_weights, log_root_weights) -> np.ndarray:
    """``(B, n + 1, n + 1)``: node 0 the virtual root (``w(0 -> v) = r_v``, nothing into it),
    nodes ``1..n`` the graph's; and the leading shape."""
    w = np.asarray(log_weights, dtype=float)
    r = np.asarray(log_root_weights, dtype=float)
    if w.ndim < 2 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"log_weights must have shape (..., n, n), not {w.shape}")
    n = w.shape[-1]
    if r.shape[-1:] != (n,):
        raise ValueError(f"log_root_weights must have shape (..., {n}), not {r.shape}")
    shape = np.broadcast_shapes(w.shape[:-2], r.shape[:-1])
    big = np.empty((*shape, n + 1, n + 1))
    big[..., 1:, 1:] = w
    big[..., 0, 1:] = r
    big[..., :, 0] = -np.inf
    idx = np.arange(n + 1)
    big[..., idx, idx] = -np.inf
    return big.reshape(-1, n + 1, n + 1), shape


def log_directed_forest_sum(log_weights, log_root_weights) -> np.ndarray:
    """``log sum_F prod_{roots v} r_v prod_{i -> j in F} w(i -> j)`` over the rooted spanning
    forests of directed graphs (every node at most one parent).

    Tutte's matrix-tree theorem with a virtual root: the determinant of the reduced in-degree
    Laplacian, eliminated in log space with positive terms only (module docstring).

    Parameters
    ----------
    log_weights : array_like, shape (..., n, n)
        ``log w(i -> j)`` at ``[..., i, j]`` (``i`` the parent); the diagonal is ignored and
        ``-inf`` means the edge is not allowed. Leading axes are independent graphs.
    log_root_weights : array_like, shape (..., n)
        The log weight of each node as a root (``-inf``: never a root); leading axes
        broadcast with those of ``log_weights``.

    Returns
    -------
    numpy.ndarray
        The broadcast leading shape: ``-inf`` where no forest has weight.

    Examples
    --------
    Two nodes, unit weights: both roots, ``0 -> 1`` or ``1 -> 0``.

    >>> import numpy as np
    >>> round(float(np.exp(log_directed_forest_sum(np.zeros((2, 2)), np.zeros(2)))), 9)
    3.0

    Only ``0 -> 1`` allowed, at 5,000 nats:

    >>> l = np.array([[0.0, 5e3], [-np.inf, 0.0]])
    >>> float(log_directed_forest_sum(l, np.zeros(2)))
    5000.0
    """
    big, shape = _with_root(log_weights, log_root_weights)
    if big.shape[-1] == 1:
        return np.zeros(shape)
    return _eliminate(big, 1)[0].reshape(shape)


def _ground_first(a: np.ndarray):
    """Permute each graph of ``a`` (``(B, n, n)``, diagonal ``-inf``) so that its node 0
    reaches every node (if any node does); return the permuted graphs and whether some node
    reaches every node."""
    b, n, _ = a.shape
    reach = np.isfinite(a) | np.eye(n, dtype=bool)
    steps = 1
    while steps < n:
        reach = np.matmul(reach.astype(np.int64), reach.astype(np.int64)) > 0
        steps *= 2
    spans = reach.all(axis=2)
    ground = spans.argmax(axis=1)
    order = np.arange(n)[None, :].repeat(b, axis=0)
    order[:, 0] = ground
    order[np.arange(b), ground] = 0
    rows = np.arange(b)[:, None, None]
    return a[rows, order[:, :, None], order[:, None, :]], spans.any(axis=1)


def log_directed_tree_sum(log_weights) -> np.ndarray:
    """``log sum_T prod_{i -> j in T} w(i -> j)`` over the spanning arborescences of directed
    graphs with any root (every node but the root has exactly one parent).

    With a ground node ``g`` that reaches every node, the elimination of the others gives
    ``kappa_g`` (the arborescences out of ``g``) and the GTH back substitution every
    ``kappa_rho / kappa_g``: ``pi_g = 1``, then, in the reverse order of elimination,
    ``pi_k = sum_{i before k} pi_i w'(k -> i) / p_k`` with ``w'`` and ``p_k`` the weights and
    pivot at ``k``'s elimination (module docstring). Positive terms only, log space.

    Parameters
    ----------
    log_weights : array_like, shape (..., n, n)
        ``log w(i -> j)`` at ``[..., i, j]``; the diagonal is ignored, ``-inf`` no edge.

    Returns
    -------
    numpy.ndarray
        Shape ``(...)``: ``-inf`` where the graph has no spanning arborescence.

    Examples
    --------
    A directed 3-cycle ``0 -> 1 -> 2 -> 0`` has three (one per root):

    >>> import numpy as np
    >>> l = np.full((3, 3), -np.inf)
    >>> l[0, 1] = l[1, 2] = l[2, 0] = 0.0
    >>> round(float(np.exp(log_directed_tree_sum(l))), 9)
    3.0
    """
    w = np.array(log_weights, dtype=float)
    if w.ndim < 2 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"log_weights must have shape (..., n, n), not {w.shape}")
    n = w.shape[-1]
    shape = w.shape[:-2]
    if n <= 1:
        return np.zeros(shape)
    w = w.reshape(-1, n, n)
    idx = np.arange(n)
    w[:, idx, idx] = -np.inf
    w, spans = _ground_first(w)
    log_kappa, _, log_pivots, rows = _eliminate(w, 1, want_rows=True)
    # back substitution, first eliminated last: node k = 1..n-1 pairs with pivot n-1-k
    log_pi = [np.zeros(len(w))]
    with np.errstate(invalid="ignore"):
        for k in range(1, n):
            out = rows[n - 1 - k]  # w'(k -> i), i < k
            terms = np.stack(log_pi, axis=1) + out
            log_pi.append(_LOG_ADD_REDUCE(terms, axis=1) - log_pivots[n - 1 - k])
        total = log_kappa + _LOG_ADD_REDUCE(np.stack(log_pi, axis=1), axis=1)
    total[~spans] = -np.inf
    return total.reshape(shape)


def _pair_reductions(big: np.ndarray) -> np.ndarray:
    """Every pair ``i < j`` of the features of ``big`` (``(B, n + 1, n + 1)``, node 0 the
    root) reduced onto ``{root, i, j}``: ``(B, n (n - 1) / 2, 3, 3)`` in ``triu`` order.

    Divide and conquer (as :func:`onlinebma.stats.spanning.edge_probabilities` does for
    undirected graphs): split a graph's features in four quarters; for each of the six pairs
    of quarters, eliminate the other two (half the features; the root is kept) and recurse
    on the half kept; every pair of features lies in one of the halves. About ``1.2 n^3``
    operations; problems of one size are stacked in one elimination.
    """
    b, m, _ = big.shape
    n = m - 1
    out = np.empty((b, n * (n - 1) // 2, 3, 3))
    pending = {n: [(big[None], np.arange(n)[None])]}  # features -> [(graphs, labels)]
    while pending:
        s = max(pending)
        graphs = np.concatenate([g for g, _ in pending[s]])  # (P, B, s + 1, s + 1)
        labels = np.concatenate([lab for _, lab in pending.pop(s)])  # (P, s)
        if s == 2:
            u, v = labels[:, 0], labels[:, 1]
            out[:, _triu_index(u, v, n)] = graphs.transpose(1, 0, 2, 3)
            continue
        quarters = np.array_split(np.arange(s), 4)
        children: dict[int, list[np.ndarray]] = {}
        for qi in range(4):
            for qj in range(qi + 1, 4):
                keep = np.concatenate([quarters[qi], quarters[qj]])
                if len(keep) >= 2:
                    rest = np.setdiff1d(np.arange(s), keep)
                    children.setdefault(len(keep), []).append(np.concatenate([keep, rest]))
        for size, perms in children.items():
            perms = np.array(perms)  # (Q, s): features kept first
            order = np.concatenate([np.zeros((len(perms), 1), dtype=np.int64), 1 + perms],
                                   axis=1)
            sub = graphs[:, :, order[:, :, None], order[:, None, :]]  # (P, B, Q, s+1, s+1)
            p, q = sub.shape[0], sub.shape[2]
            sub = sub.transpose(0, 2, 1, 3, 4).reshape(-1, s + 1, s + 1)
            _, reduced = _eliminate(sub, size + 1)
            pending.setdefault(size, []).append(
                (reduced.reshape(p * q, b, size + 1, size + 1),
                 labels[:, perms[:, :size]].reshape(p * q, size)))
    return out


def _triu_index(u, v, n: int):
    """The position of the pair ``u < v`` in ``np.triu_indices(n, 1)`` order."""
    return u * (2 * n - u - 1) // 2 + (v - u - 1)


def directed_edge_probabilities(log_weights, log_root_weights):
    """The probability of each directed edge, and of each node being a root, under
    ``P(F) ∝ prod_{roots v} r_v prod_{i -> j in F} w(i -> j)`` over rooted spanning forests.

    Each pair ``{i, j}`` is reduced onto ``{root, i, j}`` (all other nodes eliminated, positive
    terms only) and ``P(i -> j) = w(i -> j) r'_i / D`` (module docstring): every probability
    carries a relative error of rounding, however small. Every pair's reduction comes from a
    divide and conquer over quarters of the nodes (:func:`_pair_reductions`): about
    ``1.2 n^3`` operations, four times one forest sum.

    Parameters
    ----------
    log_weights : array_like, shape (..., n, n)
        ``log w(i -> j)`` at ``[..., i, j]``; diagonal ignored, ``-inf`` no edge.
    log_root_weights : array_like, shape (..., n)
        Log root weights, broadcast with the leading axes of ``log_weights``.

    Returns
    -------
    edges : numpy.ndarray, shape (..., n, n)
        ``P(i -> j)`` at ``[..., i, j]``, zero diagonal (``nan`` where no forest has weight).
    roots : numpy.ndarray, shape (..., n)
        ``P(v is a root)``. Every node is a root or has one parent: ``roots + edges.sum(-2)``
        is 1 per node.

    Examples
    --------
    Two nodes, unit weights: forests {both roots}, {0 -> 1}, {1 -> 0}.

    >>> import numpy as np
    >>> edges, roots = directed_edge_probabilities(np.zeros((2, 2)), np.zeros(2))
    >>> print(np.round(3 * edges, 9), np.round(3 * roots, 9))
    [[0. 1.]
     [1. 0.]] [2. 2.]
    """
    big, shape = _with_root(log_weights, log_root_weights)
    b, m, _ = big.shape
    n = m - 1
    edges = np.zeros((b, n, n))
    if n == 0:
        return edges.reshape(*shape, 0, 0), np.zeros((*shape, 0))
    if n == 1:
        roots = np.where(np.isfinite(big[:, 0, 1]), 1.0, np.nan)
        return edges.reshape(*shape, 1, 1), roots.reshape(*shape, 1)
    i, j = np.triu_indices(n, 1)
    reduced = _pair_reductions(big)  # (B, pairs, 3, 3)
    ri, rj = reduced[..., 0, 1], reduced[..., 0, 2]
    wij, wji = reduced[..., 1, 2], reduced[..., 2, 1]
    with np.errstate(invalid="ignore"):
        log_d = _LOG_ADD_REDUCE(np.stack([ri + rj, ri + wij, rj + wji]), axis=0)
        edges[:, i, j] = np.exp(big[:, 1 + i, 1 + j] + ri - log_d)
        edges[:, j, i] = np.exp(big[:, 1 + j, 1 + i] + rj - log_d)
        roots = np.empty((b, n))
        # node j's root probability from its pair with i, node i's from its pair with j
        roots[:, j] = np.exp(big[:, 0, 1 + j] + _LOG_ADD(ri, wji) - log_d)
        roots[:, i] = np.exp(big[:, 0, 1 + i] + _LOG_ADD(rj, wij) - log_d)
    dead = ~np.isfinite(log_d).all(axis=1)
    edges[dead] = np.nan
    roots[dead] = np.nan
    return edges.reshape(*shape, n, n), roots.reshape(*shape, n)


def directed_tree_edge_probabilities(log_weights):
    """The probability of each directed edge, and of each node being the root, under
    ``P(T) ∝ prod_{i -> j in T} w(i -> j)`` over spanning arborescences with any root.

    ``P(i -> j) = w(i -> j) T_ij / T`` with ``T`` the tree sum of the graph and ``T_ij`` that
    of the graph with ``j`` merged into ``i`` (the merged node has ``i``'s in-edges and the
    out-edges of both, ``w(i -> x) + w(j -> x)``: a tree of it expands into the trees holding
    ``i -> j``, each child of the merged node hanging from ``i`` or from ``j``); ``P(j root)
    = T_j / T`` with ``T_j`` the tree sum of the graph without ``j``'s in-edges. The tree
    sums are two stacks of :func:`log_directed_tree_sum` (positive terms only: full relative
    precision however small; about ``n^5`` operations, meant for edge posteriors, not per
    record).

    Parameters
    ----------
    log_weights : array_like, shape (..., n, n)
        ``log w(i -> j)`` at ``[..., i, j]``; diagonal ignored, ``-inf`` no edge.

    Returns
    -------
    edges : numpy.ndarray, shape (..., n, n)
        ``P(i -> j)`` at ``[..., i, j]`` (``nan`` where the graph has no spanning tree).
    roots : numpy.ndarray, shape (..., n)
        ``P(v is the root)``; ``roots + edges.sum(-2)`` is 1 per node.

    Examples
    --------
    A directed 3-cycle has three trees, one per root; each edge is in two of them.

    >>> import numpy as np
    >>> l = np.full((3, 3), -np.inf)
    >>> l[0, 1] = l[1, 2] = l[2, 0] = 0.0
    >>> edges, roots = directed_tree_edge_probabilities(l)
    >>> print(np.round(3 * edges, 9), np.round(3 * roots, 9))
    [[0. 2. 0.]
     [0. 0. 2.]
     [2. 0. 0.]] [1. 1. 1.]
    """
    w = np.array(log_weights, dtype=float)
    if w.ndim < 2 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"log_weights must have shape (..., n, n), not {w.shape}")
    n = w.shape[-1]
    shape = w.shape[:-2]
    w = w.reshape(-1, n, n)
    idx = np.arange(n)
    w[:, idx, idx] = -np.inf
    if n <= 1:
        return np.zeros((*shape, n, n)), np.ones((*shape, n))
    i, j = (x.ravel() for x in np.nonzero(~np.eye(n, dtype=bool)))  # ordered pairs
    # the trees holding i -> j: those of the graph with j merged into i (out-edges of both,
    # in-edges of i; j's in-edges dropped)
    merged = np.repeat(w[:, None], len(i), axis=1)  # (B, pairs, n, n)
    pair = np.arange(len(i))
    merged[:, pair, i, :] = _LOG_ADD(w[:, i, :], w[:, j, :])
    keep = np.array([[v for v in range(n) if v != b] for b in j], dtype=np.int64)
    merged = merged[:, pair[:, None, None], keep[:, :, None], keep[:, None, :]]
    with_edge = log_directed_tree_sum(merged)  # (B, pairs)
    # the trees rooted at j: those of the graph without j's in-edges
    rootless = np.repeat(w[:, None], n, axis=1)
    rootless[:, idx, :, idx] = -np.inf
    rooted = log_directed_tree_sum(rootless)  # (B, n)
    total = log_directed_tree_sum(w)[:, None]
    edges = np.zeros((len(w), n, n))
    with np.errstate(invalid="ignore"):
        edges[:, i, j] = np.exp(w[:, i, j] + with_edge - total)
        roots = np.exp(rooted - total)
    dead = np.isneginf(total[:, 0])
    edges[dead] = np.nan
    roots[dead] = np.nan
    return edges.reshape(*shape, n, n), roots.reshape(*shape, n)
