"""The arrays of EM (:mod:`~onlinebma.mixture.em`): records in the engine's layout, the
parameters of a model with ``K`` components, and the sufficient statistics that add up over
chunks of records (:class:`Totals`, :class:`Expected`); and the Gaussian log density (eq. 7)
they are read with. No engine here: :mod:`~onlinebma.mixture.criteria`,
:mod:`~onlinebma.mixture.starts` and the engines all import from this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from ..stats.numerics import LOG_2PI

__all__ = ["Design", "EMResult", "Expected", "Params", "Totals", "Z_MAX",
           "gaussian_log_density"]

#: Standardised distances ``|x - mu| / sigma`` are clipped here: beyond it every density is 0
#: for any purpose, and the clipped log densities stay finite for any finite input.
Z_MAX = 1e100


@dataclass
class Design:
    """Training (or prediction) records in the engine's layout.

    ``onehot`` is a dense or sparse ``(n, R)`` matrix; ``block`` gives the feature of each one-hot
    column and ``r`` the number of columns (values seen in training) of each nominal feature.
    ``x`` holds the numeric values with missing ones set to 0 and ``obs`` says which are
    observed. ``y`` are class codes (``None`` for rows to predict).
    """

    onehot: np.ndarray | sparse.csr_matrix
    x: np.ndarray
    obs: np.ndarray
    y: np.ndarray | None
    block: np.ndarray
    r: np.ndarray
    n_classes: int

    @property
    def n(self) -> int:
        return self.onehot.shape[0]


@dataclass
class Params:
    """Parameters of one fitted model with ``K`` components (all in log space where logs).

    ``log_theta`` is ``(cells, R)``, ``mean``/``var`` are ``(cells, q)`` and ``active`` (same
    shape, bool) marks the Gaussian factors that have data behind them (FAN: the class observed
    the feature at least once); inactive factors are skipped like missing values.
    ``log_class`` is ``(C,)`` for FAN (``p(C)``) and ``(K, C)`` for FM (``p(C | H)``).
    """

    log_weights: np.ndarray
    log_class: np.ndarray
    log_theta: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    active: np.ndarray

    @property
    def k(self) -> int:
        return self.log_weights.shape[0]


@dataclass
class EMResult:
    """One EM run: final parameters and the objective after every M step."""

    params: Params
    objective: list = field(default_factory=list)
    n_iter: int = 0


def _pool(w1, mean1, m2_1, w2, mean2, m2_2):
    """Counts, means and sums of squared deviations of two groups pooled (Chan, Golub &
    LeVeque's pairwise formula: stable, and exact in the means when one group is empty)."""
    w = w1 + w2
    share = np.divide(w2, w, out=np.zeros(np.shape(w)), where=w > 0)
    delta = mean2 - mean1
    mean = mean1 + delta * share
    m2 = m2_1 + m2_2 + delta * delta * (w1 * share)
    return w, mean, m2


@dataclass
class Totals:
    """What EM needs to know about all the training records beyond one chunk of them, as
    sums that add up over chunks: the number of records, of each class, and the count, mean
    and sum of squared deviations of every numeric feature in scaled coordinates (the
    features' marginal Gaussians, whose variance sets the naive Bayes smoothing ``eps``)."""

    n: int
    class_counts: np.ndarray
    w: np.ndarray
    mean: np.ndarray
    m2: np.ndarray

    def __add__(self, other: Totals) -> Totals:
        w, mean, m2 = _pool(self.w, self.mean, self.m2, other.w, other.mean, other.m2)
        return Totals(self.n + other.n, self.class_counts + other.class_counts, w, mean, m2)


@dataclass
class Expected:
    """Expected sufficient statistics of responsibilities ``tau`` (the M step's input, eq. 8):
    component totals ``nk`` ``(K,)``, component-by-class totals ``nkc`` ``(K, C)``, expected
    value counts ``(cells, R)`` and, per cell and numeric feature, the expected number of
    observed values ``w``, their weighted mean and sum of squared deviations ``m2`` ``(cells,
    q)``. They add up over chunks of records (``+``), so the M step can run once on the sums
    of statistics computed where the records lie."""

    nk: np.ndarray
    nkc: np.ndarray
    counts: np.ndarray
    w: np.ndarray
    mean: np.ndarray
    m2: np.ndarray

    def __add__(self, other: Expected) -> Expected:
        w, mean, m2 = _pool(self.w, self.mean, self.m2, other.w, other.mean, other.m2)
        return Expected(self.nk + other.nk, self.nkc + other.nkc, self.counts + other.counts,
                        w, mean, m2)


def gaussian_log_density(x, obs, mean, var, active) -> np.ndarray:
    """``sum_j log N(x_j; mean_j, var_j)`` over the last axis, as
    ``-(x - mu)^2 / (2 var) - log(2 pi var) / 2`` (eq. 7), for observed values of active factors.

    Arrays broadcast together; ``|x - mu| / sigma`` is clipped at :data:`Z_MAX`.
    """
    with np.errstate(over="ignore"):
        z = np.clip((x - mean) / np.sqrt(var), -Z_MAX, Z_MAX)
    terms = -0.5 * (z * z + np.log(var) + LOG_2PI)
    return np.where(obs & active, terms, 0.0).sum(axis=-1)
