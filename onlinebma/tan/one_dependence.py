"""AODE's estimates of ``log P(c, x)`` from pair counts (Webb, Boughton & Wang 2005, eq. 9,
with Weka 3.6's Laplace or m-estimates; :mod:`onlinebma.tan.aode` states them): what the
:class:`~onlinebma.tan.aode.AODE` learner predicts with, and an AODE member of
:class:`~onlinebma.tan.members.TreeMemberStack` from its own count rows.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import tuning

__all__ = ["log_joint", "log_joint_many"]


@functools.lru_cache(maxsize=16)  # O(m²) each; a stream has few numbers of observed features
def _estimator_layout(m: int) -> np.ndarray:
    """Where the terms of eq. 9's ``m + 1`` estimators live in a record's gathered cells
    (the order of :meth:`~onlinebma.stats.pairs.PairCounts.record_columns`), ``m`` its
    observed features: cell indices ``(2, m + 1, m + 1)``, ``[0]`` the numerators and
    ``[1]`` the denominators of the ratios whose logs the estimators sum (before their
    pseudo-counts, :func:`_pseudo_counts`). Read-only (cached).

    Row 0 is naive Bayes, row ``1 + u`` the estimator of super-parent ``u``; column 0 their
    class term, column ``1 + v`` the factor of feature ``v``:

    - row 0: ``N(c) / N`` (``P̂(c)``), then ``N(c, x_v) / N_v(c)`` (``P̂(x_v | c)``);
    - row ``1 + u``: ``N(c, x_u) / N_u`` (``P̂(c, x_u)``), then ``N(c, x_u, x_v) /
      N_uv(c, x_u)`` (``P̂(x_v | c, x_u)``; the first or the second pair margin), and at
      ``v = u``, a super-parent as its own child, padding: cell 0 over cell 0, a ratio of 1.

    The class terms' denominators ``N`` and ``N_u`` are sums over the classes, written in at
    run time: the denominators' row 0 holds ``N(c)`` and the ``N_v(c)`` (``N(c)`` at place
    0), so that its sum over the classes is that column; the sum of the numerators' row 0
    gives the frequencies of the ``x_u`` (eq. 8).
    """
    p = m * (m - 1) // 2
    joint, first, second = (1 + 2 * m + i * p for i in range(3))
    pair = np.zeros((m, m), dtype=np.intp)  # pair[u, v]: the index of pair {u, v}
    i, j = np.triu_indices(m, 1)
    pair[i, j] = pair[j, i] = np.arange(p)
    parent, child = np.indices((m, m))
    cells = np.zeros((2, m + 1, m + 1), dtype=np.intp)
    cells[0, 0] = np.arange(m + 1)  # N(c), N(c, x_v)
    cells[1, 0, 1:] = 1 + m + np.arange(m)  # N_v(c) (and N(c) in place 0)
    cells[1, 1:, 0] = 1 + m + np.arange(m)  # N_u(c), to be summed over the classes
    cells[0, 1:, 0] = 1 + np.arange(m)  # N(c, x_u)
    cells[0, 1:, 1:] = joint + pair
    cells[1, 1:, 1:] = np.where(parent < child, first, second) + pair
    cells[:, 1:, 1:][:, parent == child] = 0
    cells.flags.writeable = False
    return cells


def _weka_pseudo_counts(r: np.ndarray, k: int, m_estimate) -> tuple:
    """The pseudo-counts of the module docstring's estimates for features of ``r`` values
    (floats) and ``k`` classes: ``(a, d, e, f, e0, f0)``, ``a_v`` added to a child's cell
    and ``d_v`` to its margin, ``e_u`` to a super-parent's cell and ``f_u`` to its margin,
    ``e0`` to a class count and ``f0`` to their total (``m_estimate`` ``None``: Laplace,
    else the m-estimates of weight ``m_estimate``)."""
    w, m = m_estimate, len(r)
    if w is None:
        return np.ones(m), r, np.ones(m), k * r, 1.0, k
    w = float(w)
    return w / r, np.full(m, w), w / (k * r), np.full(m, w), w / k, w


@functools.lru_cache(maxsize=32)  # O(m²) each; a miss costs a few small numpy calls
def _pseudo_counts(r_key: bytes, k: int, m_estimate) -> np.ndarray:
    """The pseudo-counts ``(2, m + 1, m + 1)`` added to the cells of
    :func:`_estimator_layout` (the module docstring's Laplace or m-estimates) for features
    of ``r`` values (``r_key`` their float64 bytes), ``k`` classes and weight
    ``m_estimate`` (``None``: Laplace); the padding gets 1 over 1. Read-only (cached)."""
    r = np.frombuffer(r_key)
    m = len(r)
    a, d, e, f, e0, f0 = _weka_pseudo_counts(r, k, m_estimate)
    pseudo = np.empty((2, m + 1, m + 1))
    pseudo[0, :, 0], pseudo[0, :, 1:] = np.r_[e0, e], a
    pseudo[1, :, 0], pseudo[1, :, 1:] = np.r_[f0, f], d
    diagonal = np.arange(1, m + 1)
    pseudo[:, diagonal, diagonal] = 1.0
    pseudo.flags.writeable = False
    return pseudo


@functools.lru_cache(maxsize=128)  # tiny records only: a few dozen terms each
def _narrow_plan(r_key: bytes, k: int, m_estimate) -> tuple:
    """:func:`_estimator_layout` and :func:`_pseudo_counts` without the padding, for
    :func:`_log_joint_narrow`: a flat list of ``(numerator cell, its pseudo-count,
    denominator cell, its pseudo-count)``, naive Bayes' ``m + 1`` terms then each
    super-parent's ``m``, where a class term's denominator cell is ``L + s`` (``L`` the
    cells of a class; place ``s`` of the sums over the classes appended to them); and the
    cells summed over the classes for these sums."""
    m = len(r_key) // 8
    layout = _estimator_layout(m)
    top, bottom = layout.reshape(2, -1).tolist()
    add_top, add_bottom = _pseudo_counts(r_key, k, m_estimate).reshape(2, -1).tolist()
    width = 1 + 2 * m + 2 * m * (m - 1)
    bottom[::m + 1] = range(width, width + m + 1)
    terms = [t for p, t in enumerate(zip(top, add_top, bottom, add_bottom))
             if p == 0 or p % (m + 2)]  # the diagonal places 1 + u are padding
    return terms, layout[1, 0].tolist()


def log_joint(cells: np.ndarray, r: np.ndarray, m_estimate, frequency_limit: int) -> np.ndarray:
    """``log P̂(c, x)`` of every class (the module docstring's eq. 9 estimates) from the
    gathered cells of one record.

    Each of the ``m + 1`` estimators (naive Bayes and one per super-parent) is a sum of
    ``log`` ratios of a count plus its pseudo-count over a margin plus its pseudo-count:
    one gather, one division and one ``log`` over all of them
    (:func:`_estimator_layout`). The super-parents' estimators are averaged in log space
    (eq. 9), naive Bayes taken where none qualifies (eq. 8). Small inputs (``R K (m + 1)²``
    at most :data:`onlinebma.tuning.NARROW_AODE_TERMS`) take plain Python floats.

    Parameters
    ----------
    cells : numpy.ndarray
        ``(K, L)``, or ``(R, K, L)`` for ``R`` count rows at once (the members of a stack,
        each with its own super-parents): decayed counts in record units, in the order of
        :meth:`~onlinebma.stats.pairs.PairCounts.record_columns` (``L = 1 + 2m + 4P``,
        ``P = m (m - 1) / 2``).
    r : numpy.ndarray
        The numbers of values of the record's ``m`` observed features.
    m_estimate : float or None
        The weight of m-estimates; ``None`` for Laplace estimates.
    frequency_limit : int
        A value of lower frequency (its count over the classes) is no super-parent.

    Returns
    -------
    numpy.ndarray
        ``(K,)``, or ``(R, K)`` for 3-D ``cells``.
    """
    stacked = cells.ndim == 3
    cells = cells if stacked else cells[None]
    k, m = cells.shape[1], len(r)
    r_key = np.asarray(r, dtype=float).tobytes()
    if len(cells) * k * (m + 1) ** 2 <= tuning.NARROW_AODE_TERMS:
        out = np.array(_log_joint_narrow(cells.tolist(), r_key, m_estimate, frequency_limit))
        return out if stacked else out[0]
    terms = cells.take(_estimator_layout(m), axis=2)  # (R, K, 2, m + 1, m + 1)
    summed = terms[:, :, :, 0].sum(axis=1)  # over the classes: (R, 2, m + 1)
    terms[:, :, 1, :, 0] = summed[:, None, 1]  # N and the N_u
    terms += _pseudo_counts(r_key, k, m_estimate)
    ratios = np.divide(terms[:, :, 0], terms[:, :, 1], out=terms[:, :, 0])
    estimators = np.log(ratios, out=ratios).sum(axis=3)  # (R, K, m + 1): log P̂ each
    naive, spode = estimators[:, :, 0], estimators[:, :, 1:]
    parents = summed[:, 0, 1:] >= frequency_limit  # eq. 8
    if m and parents.all():  # the common case: every value seen often enough
        out = np.logaddexp.reduce(spode, axis=2) - math.log(m)  # eq. 9
    elif parents.any():
        n_parents = parents.sum(axis=1)[:, None]
        averaged = (np.logaddexp.reduce(np.where(parents[:, None, :], spode, -np.inf), axis=2)
                    - np.log(np.maximum(n_parents, 1)))
        out = np.where(n_parents > 0, averaged, naive)
    else:
        out = naive
    return out if stacked else out[0]


def _log_joint_narrow(cells: list, r_key: bytes, m_estimate, frequency_limit: int) -> list:
    """:func:`log_joint` of nested lists ``cells`` ``(R, K, L)`` in plain Python floats
    (``r_key`` the float64 bytes of ``r``), as nested lists ``(R, K)``: on narrow records a
    few dozen ``log`` calls cost less than numpy's per-call overhead."""
    plan, summed_cells = _narrow_plan(r_key, len(cells[0]), m_estimate)
    m = len(r_key) // 8
    log, exp = math.log, math.exp
    out = []
    for row in cells:
        summed = [sum(cell[i] for cell in row) for i in summed_cells]  # N and the N_u
        parents = [m + 1 + u * m for u in range(m)  # eq. 8 (x_u's cell is 1 + u)
                   if sum(cell[1 + u] for cell in row) >= frequency_limit]
        values = []
        for cell in row:
            cell = cell + summed
            logs = [log((cell[i] + a) / (cell[j] + d)) for i, a, j, d in plan]
            if parents:
                spode = [sum(logs[s:s + m]) for s in parents]
                high = max(spode)  # eq. 9's mean in log space
                values.append(high + log(sum(exp(s - high) for s in spode))
                              - log(len(spode)))
            else:
                values.append(sum(logs[:m + 1]))
        out.append(values)
    return out


def log_joint_many(counts, codes, scale: float, m_estimate, frequency_limit: int,
                   member: int = 0) -> np.ndarray:
    """``log P̂(c, x)`` of :func:`log_joint` for a coded matrix ``(rows, K)``, vectorised
    over the rows: one pass over the features' single tables and one over the pairs' tables
    of ``counts`` (a :class:`~onlinebma.stats.pairs.PairCounts`; its member ``member``'s
    counts times ``scale`` are the decayed counts in record units)."""
    rows, n = codes.shape
    k = counts.n_classes
    seen = codes >= 0
    at = np.where(seen, codes, 0)
    a, d, e, f, e0, f0 = _weka_pseudo_counts(counts.n_values.astype(float), k, m_estimate)
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
    naive += (np.log(n_class + e0) - np.log(n_class.sum() + f0))[:, None]
    return np.where(n_parents > 0, averaged, naive).T
