"""AODE: averaged one-dependence estimators (Webb, Boughton & Wang 2005), learned per record.

Webb, G. I., Boughton, J. R. & Wang, Z. (2005). Not so naive Bayes: aggregating
one-dependence estimators. *Machine Learning* 58, 5–24. Every observed feature ``p`` whose
value ``x_p`` occurs at least ``frequency_limit`` times in the training records (their
eq. 8; Weka's ``-F``, default 1) is a super-parent of a one-dependence estimator, and the
estimate of ``P(c, x)`` is their mean (eq. 9):

``P̂(c, x) = (1 / |Q|) Σ_{p ∈ Q} P̂(c, x_p) Π_{v ≠ p} P̂(x_v | c, x_p)``

over the observed features ``v``. With no super-parent (``Q`` empty) it is naive Bayes,
``P̂(c) Π_v P̂(x_v | c)``. The estimates are Weka 3.6's (``weka.classifiers.bayes.AODE``),
read from the counts of :class:`~onlinebma.stats.pairs.PairCounts`:

- Laplace (default): ``P̂(c, x_p) = (N(c, x_p) + 1) / (N_p + K r_p)``,
  ``P̂(x_v | c, x_p) = (N(c, x_p, x_v) + 1) / (N_pv(c, x_p) + r_v)``, and for naive Bayes
  ``P̂(c) = (N(c) + 1) / (N + K)``, ``P̂(x_v | c) = (N(c, x_v) + 1) / (N_v(c) + r_v)``;
- m-estimate (``m_estimate=m``, Weka's ``-M -W m``): the pseudo-counts ``1`` become
  ``m / (K r_p)``, ``m / r_v`` and ``m / K`` and the added denominators ``m``;

where ``N_p`` counts the records with ``p`` observed, ``N_pv(c, x_p)`` those of class ``c``
with ``x_p`` and ``v`` observed, ``r_v`` the values of ``v`` and ``K`` the labels seen so far.
The frequency of ``x_p`` is its count over all classes (with ``decay``, the decayed count).

A record adds ``1 + 2m + 4 m (m-1)/2`` counts (``m`` observed features); a prediction reads
the same cells in one gather and costs ``O(K m²)``; ``predict_proba_many`` reads each pair's
table once for all rows.
"""

from __future__ import annotations

import numpy as np

from ..validation import check_int, check_real
from .base import PLUGIN_PARAMETERS_DOC, BaseTAN

__all__ = ["AODE", "log_joint", "log_joint_many"]


def log_joint(cells: np.ndarray, r: np.ndarray, m_estimate, frequency_limit: int) -> np.ndarray:
    """``log P̂(c, x)`` of every class (the module docstring's eq. 9 estimates) from the
    gathered cells of one record, decayed counts in record units (in the order of
    :meth:`~onlinebma.stats.pairs.PairCounts.record_columns`), its features' numbers of
    values ``r``, the weight ``m_estimate`` of m-estimates (``None``: Laplace) and the
    ``frequency_limit`` of a super-parent."""
    k, m = cells.shape[0], len(r)
    n_class, single, margin = cells[:, 0], cells[:, 1:1 + m], cells[:, 1 + m:1 + 2 * m]
    w = m_estimate
    # pseudo-counts: child cell a_v, child denominator d_v, class e, class denominator f
    a, d = (np.ones(m), r.astype(float)) if w is None else (w / r, np.full(m, float(w)))
    frequency = single.sum(axis=0)
    parents = frequency >= frequency_limit
    if not parents.any():  # naive Bayes
        e, f = (1.0, k) if w is None else (w / k, w)
        return (np.log(n_class + e) - np.log(n_class.sum() + f)
                + (np.log(single + a) - np.log(margin + d)).sum(axis=1))
    p = (m * (m - 1)) // 2
    joint, first, second = (cells[:, 1 + 2 * m + i * p:1 + 2 * m + (i + 1) * p]
                            for i in range(3))
    i, j = np.triu_indices(m, 1)
    child = np.zeros((k, m, m))  # [c, parent, child]: log P̂(x_child | c, x_parent)
    child[:, i, j] = np.log(joint + a[j]) - np.log(first + d[j])
    child[:, j, i] = np.log(joint + a[i]) - np.log(second + d[i])
    e, f = (1.0, k * r) if w is None else (w / (k * r), np.full(m, float(w)))
    spode = np.log(single + e) - np.log(margin.sum(axis=0) + f) + child.sum(axis=2)
    spode = spode[:, parents]
    top = spode.max(axis=1, keepdims=True)
    return (top[:, 0] + np.log(np.exp(spode - top).sum(axis=1))
            - np.log(parents.sum()))


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


class AODE(BaseTAN):
    __doc__ = f"""Averaged one-dependence estimators (Webb, Boughton & Wang 2005), per record.

    See the module docstring for the estimates (Weka 3.6's) and the cost.

    Parameters
    ----------
    frequency_limit : int, default 1
        A value seen fewer times than this does not make its feature a super-parent (Weka's
        default 1: every value seen).
    m_estimate : float or None, default None
        ``None`` for Laplace estimates (Weka's default), else the weight ``m`` of
        m-estimates.
    {PLUGIN_PARAMETERS_DOC}

    Examples
    --------
    >>> from onlinebma.tan.aode import AODE
    >>> model = AODE()
    >>> model.predict_proba_one({{"a": "x"}})
    {{}}
    >>> for a, b, y in [("p", "p", 1), ("q", "q", 1), ("p", "q", 0), ("q", "p", 0)] * 10:
    ...     model.learn_one({{"a": a, "b": b}}, y)
    >>> p = model.predict_proba_one({{"a": "p", "b": "p"}})
    >>> round(p[1], 4), round(p[0], 4)
    (0.9167, 0.0833)
    """

    def __init__(self, frequency_limit: int = 1, m_estimate: float | None = None,
                 decay: float | str = 1.0, nominal_attributes: list | None = None,
                 numeric: str = "5 intervals", sample_size: int = 200,
                 numeric_attributes: list | None = None):
        check_int("frequency_limit", frequency_limit, 0)
        if m_estimate is not None:
            check_real("m_estimate", m_estimate, 0.0, strict=True)
        super().__init__(decay=decay, nominal_attributes=nominal_attributes, numeric=numeric,
                         sample_size=sample_size, numeric_attributes=numeric_attributes)
        self.frequency_limit = frequency_limit
        self.m_estimate = m_estimate

    def _joint_log_likelihood(self, codes, values, columns):
        counts = self.counts
        cells = counts.counts_[:, columns] * self._scale  # decayed counts, record units
        return log_joint(cells, counts.n_values[codes], self.m_estimate,
                         self.frequency_limit), None

    def _joint_log_likelihood_many(self, codes):
        return log_joint_many(self.counts, codes, self._scale, self.m_estimate,
                              self.frequency_limit)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"m_estimate": 1.0}
        yield {"frequency_limit": 3}
        yield {"decay": 0.9, "sample_size": 10}  # numeric intervals within the checks
        yield {"decay": "auto"}
