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

from ..validation import check_int, check_real
from .base import PLUGIN_PARAMETERS_DOC, BaseTAN
from .one_dependence import log_joint, log_joint_many

__all__ = ["AODE"]


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
