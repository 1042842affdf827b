"""Sums over spanning trees and forests in log space (the matrix-tree theorem).

The weight of a spanning tree ``T`` of a graph with edge weights ``w`` is
``prod_{uv in T} w_uv``; the matrix-tree theorem gives the sum over all spanning trees as the
determinant of the Laplacian with one node's row and column removed (the *ground*). Edge weights
of the tree-averaged classifiers span thousands of nats, far beyond a float's range, so the
determinant is computed by eliminating nodes one at a time (Kron reduction) in log space: the
pivot of node ``k`` is its weighted degree ``d_k = sum_j w_kj`` and eliminating it joins every
pair of its neighbours, ``w_ij <- w_ij + w_ik w_kj / d_k``. Every step only adds positive terms,
so nothing cancels, and the log determinant is the sum of the log pivots.

Forests: a rooted spanning forest of ``n`` nodes, each root ``v`` weighing ``r_v``, is a
spanning tree of the graph with one more node joined to every ``v`` with weight ``r_v``
(the matrix-forest theorem); :func:`log_forest_sum` grounds that node.
"""

from __future__ import annotations

import numpy as np

__all__ = ["log_forest_sum", "log_tree_sum"]


def log_tree_sum(log_weights, ground: int = 0) -> np.ndarray:
    """``log sum_T prod_{uv in T} w_uv`` over the spanning trees of each graph.

    Parameters
    ----------
    log_weights
        Array ``(..., n, n)`` of symmetric log edge weights; the diagonal is ignored and
        ``-inf`` means no edge. Leading axes are independent graphs.
    ground
        The node whose row and column the reduced Laplacian leaves out (the result does not
        depend on it).

    Returns
    -------
    Array of shape ``(...)``: ``-inf`` where a graph has no spanning tree.

    Examples
    --------
    A triangle with unit weights has three spanning trees:

    >>> import numpy as np
    >>> round(float(np.exp(log_tree_sum(np.zeros((3, 3))))), 9)
    3.0
    """
    a = np.array(log_weights, dtype=float)
    n = a.shape[-1]
    diag = np.arange(n)
    a[..., diag, diag] = -np.inf
    total = np.zeros(a.shape[:-2])
    if n <= 1:
        return total
    with np.errstate(invalid="ignore", divide="ignore"):
        for k in range(n):
            if k == ground % n:
                continue
            row = a[..., k, :].copy()
            top = row.max(axis=-1)
            safe_top = np.where(np.isfinite(top), top, 0.0)
            log_d = safe_top + np.log(np.exp(row - safe_top[..., None]).sum(axis=-1))
            total = total + log_d
            step = row[..., :, None] + row[..., None, :] - np.where(
                np.isfinite(log_d), log_d, 0.0)[..., None, None]
            a = np.logaddexp(a, step)
            a[..., k, :] = -np.inf
            a[..., :, k] = -np.inf
            a[..., diag, diag] = -np.inf
    return np.where(np.isnan(total), -np.inf, total)


def log_forest_sum(log_weights, log_root_weights) -> np.ndarray:
    """``log sum_F prod_{roots v of F} r_v prod_{uv in F} w_uv`` over rooted spanning forests.

    ``log_root_weights`` has shape ``(..., n)``: the log weight of each node as a root. The
    sum is :func:`log_tree_sum` of the graph with one more node joined to every node ``v``
    with weight ``r_v``, grounded at that node.

    >>> import numpy as np
    >>> # rooted forests of two nodes: both roots, or the edge rooted at either end
    >>> round(float(np.exp(log_forest_sum(np.zeros((2, 2)), np.zeros(2)))), 9)
    3.0
    """
    w = np.asarray(log_weights, dtype=float)
    r = np.asarray(log_root_weights, dtype=float)
    n = w.shape[-1]
    shape = np.broadcast_shapes(w.shape[:-2], r.shape[:-1])
    big = np.full((*shape, n + 1, n + 1), -np.inf)
    big[..., :n, :n] = w
    big[..., :n, n] = r
    big[..., n, :n] = r
    return log_tree_sum(big, ground=n)
