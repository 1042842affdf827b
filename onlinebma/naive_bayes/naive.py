"""Plain naive Bayes over all features: the baseline of every comparison."""

from __future__ import annotations

import math

from ..stats.gaussian import GaussianMoments
from ..stats.tables import NumericTable
from .base import BaseNB

__all__ = ["NaiveBayes", "VAR_SMOOTHING"]

VAR_SMOOTHING = 1e-9
"""Share of a feature's marginal variance added to every class variance (as scikit-learn's
GaussianNB does with the largest variance), so a class seen once or with one repeated value
still has a proper Gaussian."""

_LOG_2PI = math.log(2 * math.pi)


class NaiveBayes(BaseNB):
    """Naive Bayes with Dirichlet-smoothed parameters (eq. 6 of Dash & Cooper 2002).

    Nominal features: ``P(v | y) = (N_yv + alpha) / (N_y + alpha r)``, with ``r`` the number of
    values seen for the feature and ``N_y`` the class-``y`` records in which it was observed.
    Numeric features: a Gaussian per class from the records' mean and (maximum-likelihood)
    variance, plus ``1e-9`` times the feature's marginal variance; a class never seen with the
    feature uses the feature's marginal Gaussian, and a feature constant so far is skipped.
    Missing values and values never seen in training are skipped.

    Parameters
    ----------
    alpha
        Dirichlet pseudo-count of every cell (Laplace smoothing when 1), also used for the
        class prior ``(N_y + alpha) / (N + alpha |classes|)``.
    nominal_attributes
        Features to treat as nominal even though their values are numbers. Otherwise numbers
        are numeric and every other value is nominal, as in River's trees.

    Examples
    --------
    >>> from onlinebma.naive_bayes import NaiveBayes
    >>> model = NaiveBayes()
    >>> model.predict_proba_one({"sky": "sunny"})
    {}
    >>> for x, y in [({"sky": "sunny", "temp": 30.0}, "beach"),
    ...              ({"sky": "rainy", "temp": 12.0}, "home"),
    ...              ({"sky": "sunny", "temp": 25.0}, "beach")]:
    ...     model.learn_one(x, y)
    >>> proba = model.predict_proba_one({"sky": "rainy"})
    >>> round(proba["home"], 4)
    0.64
    >>> model.predict_one({"sky": "sunny", "temp": 28.0})
    'beach'

    """

    def _log_density(self, table: NumericTable, moments: GaussianMoments | None, x):
        marginal = table.marginal
        floor = VAR_SMOOTHING * marginal.m2 / marginal.n
        if floor <= 0.0:
            return None  # constant so far: no information
        if moments is None:
            moments = marginal
        var = moments.m2 / moments.n + floor
        return -0.5 * (_LOG_2PI + math.log(var) + (x - moments.mean) ** 2 / var)

    _log_density_np = _log_density  # the same arithmetic works on arrays

    def _log_likelihood(self, table: NumericTable, moments: GaussianMoments) -> float:
        """Plug-in log likelihood of the records summarised by ``moments`` under their own
        guarded Gaussian: ``-n/2 log(2 pi var) - m2 / (2 var)``."""
        marginal = table.marginal
        floor = VAR_SMOOTHING * marginal.m2 / marginal.n
        if floor <= 0.0:
            return 0.0
        var = moments.m2 / moments.n + floor
        return -0.5 * moments.n * (_LOG_2PI + math.log(var)) - moments.m2 / (2.0 * var)

    def _unit_test_params(self):
        yield {}
        yield {"alpha": 0.5}


