"""AODE's estimates of ``log P(c, x)`` from pair counts (Webb, Boughton & Wang 2005, eq. 9,
with Weka 3.6's Laplace or m-estimates; :mod:`onlinebma.tan.aode` states them): what the
:class:`~onlinebma.tan.aode.AODE` learner predicts with, and an AODE member of
:class:`~onlinebma.tan.members.TreeMemberStack` from its own count rows.
"""

from __future__ import annotations

import numpy as np

__all__ = ["log_joint", "log_joint_many"]


def log_joint(cells: np.ndarray, r: np.ndarray, m_estimate, frequency_limit: int) -> np.ndarray:
    """``log P̂(c, x)`` of every class (the module docstring's eq. 9 estimates) from the
    gathered cells of one record, decayed counts in record units (in the order of
    :meth:`~onlinebma.stats.pairs.PairCounts.record_columns`), its features' numbers of
    values ``r``, the weight ``m_estimate`` of m-estimates (``None``: Laplace) and the
    ``frequency_limit`` of a super-parent.

    ``cells`` is ``(K, L)``, or ``(R, K, L)`` for ``R`` count rows at once (the members of a
    stack, each with its own super-parents); the result ``(K,)`` or ``(R, K)``."""
    stacked = cells.ndim == 3
    cells = cells if stacked else cells[None]
    k, m = cells.shape[1], len(r)
    n_class, single = cells[:, :, 0], cells[:, :, 1:1 + m]
    margin = cells[:, :, 1 + m:1 + 2 * m]
    w = m_estimate
    # pseudo-counts: child cell a_v, child denominator d_v, class e, class denominator f
    a, d = (np.ones(m), r.astype(float)) if w is None else (w / r, np.full(m, float(w)))
    e, f = (1.0, k) if w is None else (w / k, w)
    out = (np.log(n_class + e) - np.log(n_class.sum(axis=1, keepdims=True) + f)
           + (np.log(single + a) - np.log(margin + d)).sum(axis=2))  # naive Bayes
    parents = single.sum(axis=1) >= frequency_limit  # (R, m)
    n_parents = parents.sum(axis=1)
    if n_parents.any():
        p = (m * (m - 1)) // 2
        joint, first, second = (cells[:, :, 1 + 2 * m + i * p:1 + 2 * m + (i + 1) * p]
                                for i in range(3))
        i, j = np.triu_indices(m, 1)
        # [row, c, parent, child]: log P̂(x_child | c, x_parent)
        child = np.zeros((len(cells), k, m, m))
        child[:, :, i, j] = np.log(joint + a[j]) - np.log(first + d[j])
        child[:, :, j, i] = np.log(joint + a[i]) - np.log(second + d[i])
        e, f = (1.0, k * r) if w is None else (w / (k * r), np.full(m, float(w)))
        spode = (np.log(single + e) - np.log(margin.sum(axis=1, keepdims=True) + f)
                 + child.sum(axis=3))
        spode = np.where(parents[:, None, :], spode, -np.inf)
        top = np.where(n_parents > 0, spode.max(axis=2).T, 0.0).T[:, :, None]
        with np.errstate(divide="ignore"):
            averaged = (top[:, :, 0] + np.log(np.exp(spode - top).sum(axis=2))
                        - np.log(np.maximum(n_parents, 1))[:, None])
        out = np.where(n_parents[:, None] > 0, averaged, out)
    return out if stacked else out[0]


def log_joint_many(counts, codes, scale: float, m_estimate, frequency_limit: int,
                   member: int = 0) -> np.ndarray:
    """``log P̂(c, x)`` of :func:`log_joint` for a coded matrix ``(rows, K)``, vectorised
    over the rows: one pass over the features' single tables and one over the pairs' tables
    of ``counts`` (a :class:`~onlinebma.stats.pairs.PairCounts`; its member ``member``'s
    counts times ``scale`` are the decayed counts in record units)."""
    w = m_estimate
    rows, n = codes.shape
    k = counts.n_classes
    r = counts.n_values.astype(float)
    seen = codes >= 0
    at = np.where(seen, codes, 0)
    a, d = (np.ones(n), r) if w is None else (w / r, np.full(n, float(w)))
    e, f = (np.ones(n), k * r) if w is None else (w / (k * r), np.full(n, float(w)))
    naive = np.zeros((k, rows))
    spode = np.zeros((k, rows, n))  # [c, row, parent]
    frequency = np.zeros((rows, n))
    for u in range(n):
        single, margin = counts.single(u, member)
        cell = single[:, at[:, u]] * scale
        naive += np.where(seen[:, u], np.log(cell + a[u])
                          - np.log(margin * scale + d[u])[:, None], 0.0)
        spode[:, :, u] = np.log(cell + e[u]) - np.log(margin.sum() * scale + f[u])
        frequency[:, u] = cell.sum(axis=0)
    for v in range(1, n):
        for u in range(v):
            both = seen[:, u] & seen[:, v]
            if not both.any():
                continue
            joint, first, second, _ = counts.pair(u, v, member)
            cell = joint[:, at[:, u], at[:, v]] * scale
            spode[:, :, u] += np.where(both, np.log(cell + a[v])
                                       - np.log(first[:, at[:, u]] * scale + d[v]), 0.0)
            spode[:, :, v] += np.where(both, np.log(cell + a[u])
                                       - np.log(second[:, at[:, v]] * scale + d[u]), 0.0)
    parents = seen & (frequency >= frequency_limit)
    n_parents = parents.sum(axis=1)
    spode = np.where(parents, spode, -np.inf)
    top = np.where(n_parents > 0, spode.max(axis=2, initial=-np.inf), 0.0)  # n may be 0
    with np.errstate(divide="ignore"):
        averaged = top + np.log(np.exp(spode - top[:, :, None]).sum(axis=2)) - np.log(
            np.maximum(n_parents, 1))
    n_class = counts.class_counts(member) * scale
    e0, f0 = (1.0, k) if w is None else (w / k, w)
    naive += (np.log(n_class + e0) - np.log(n_class.sum() + f0))[:, None]
    return np.where(n_parents > 0, averaged, naive).T
