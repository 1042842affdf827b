"""Streaming Gaussian moments, the Normal–Gamma marginal likelihood and its Student-t predictive.

Moments are kept as ``(n, mean, m2)`` with Welford's update and Chan et al.'s merge, so a
stream, a batch and merged shards give the same statistics up to rounding. Observations may
carry weights (``n`` is then the sum of weights, ``m2`` the weighted centred sum of squares):
a learner that forgets adds records with growing weights and rescales.

Learners accept numeric values up to :data:`MAX_ABS_VALUE` in absolute value: beyond it, a
centred sum of squares could overflow to ``inf`` and poison every later prediction, so such
values are refused (at prediction time any finite value is fine).

The Normal–Gamma prior ``NG(mu0, kappa0, a0, b0)`` on a Gaussian's mean and precision is
conjugate; after ``n`` observations with mean ``xbar`` and centred sum of squares ``m2``
(Murphy 2007, "Conjugate Bayesian analysis of the Gaussian distribution", §3)::

    kappa_n = kappa0 + n
    mu_n    = (kappa0 mu0 + n xbar) / kappa_n
    a_n     = a0 + n / 2
    b_n     = b0 + m2 / 2 + kappa0 n (xbar - mu0)^2 / (2 kappa_n)

    log p(D) = lgamma(a_n) - lgamma(a0) + a0 log b0 - a_n log b_n
               + (log kappa0 - log kappa_n) / 2 - n log(2 pi) / 2

and the posterior predictive is a Student t with ``2 a_n`` degrees of freedom, location
``mu_n`` and squared scale ``b_n (kappa_n + 1) / (a_n kappa_n)``. Because ``b0 > 0``, the
predictive scale never collapses, however degenerate the data: the prior is the variance guard.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import tuning
from .numerics import LOG_2PI, LOG_PI

__all__ = ["GaussianMoments", "MAX_ABS_VALUE", "NormalGammaPrior", "check_magnitude",
           "student_t_log_density"]

MAX_ABS_VALUE = 1e100
"""The largest absolute numeric value a learner accepts in training. Squares of differences
stay below 4e200, so ``m2`` stays finite for any number of records (and for any weights a
forgetting learner uses before renormalising)."""


def check_magnitude(f, x: float) -> None:
    """Refuse a training value whose magnitude could overflow the moments, naming ``f``."""
    if not -MAX_ABS_VALUE <= x <= MAX_ABS_VALUE:
        raise ValueError(
            f"feature {f!r} has the value {x!r}, beyond the supported magnitude "
            f"{MAX_ABS_VALUE:g} for learning (rescale the feature)"
        )


class GaussianMoments:
    """Count, mean and centred sum of squares of a stream of numbers.

    >>> m = GaussianMoments()
    >>> for x in [1.0, 2.0, 3.0]:
    ...     m.update(x)
    >>> m.n, m.mean, m.m2
    (3, 2.0, 2.0)
    >>> a, b = GaussianMoments(), GaussianMoments()
    >>> a.update(1.0); b.update(2.0); b.update(3.0)
    >>> a.merge(b); (a.n, a.mean, a.m2)
    (3, 2.0, 2.0)
    """

    __slots__ = ("n", "mean", "m2")

    def __init__(self, n: float = 0, mean: float = 0.0, m2: float = 0.0):
        self.n = n
        self.mean = mean
        self.m2 = m2

    def update(self, x: float, w=1) -> None:
        """Add ``x`` with weight ``w`` (West 1979's weighted form of Welford's update). The
        first value is set, not updated: ``0 + (x w) / w`` can round away from ``x`` and leave
        ``m2`` about 1e-17 instead of 0, and a feature seen once must stay a point (naive
        Bayes skips a feature constant so far)."""
        if self.n == 0:
            self.n, self.mean = w, x
            return
        n = self.n + w
        delta = x - self.mean
        if w == 1:
            mean = self.mean + delta / n
            self.m2 += delta * (x - mean)
        else:
            mean = self.mean + delta * w / n
            self.m2 += w * delta * (x - mean)
        self.mean = mean
        self.n = n

    def rescale(self, c: float) -> None:
        """Multiply every weight by ``c``: the mean stays, ``n`` and ``m2`` scale."""
        self.n *= c
        self.m2 *= c

    def merge(self, other: GaussianMoments) -> None:
        """Add another stream's moments (Chan, Golub & LeVeque's pairwise formula)."""
        if other.n == 0:
            return
        if self.n == 0:
            self.n, self.mean, self.m2 = other.n, other.mean, other.m2
            return
        n = self.n + other.n
        delta = other.mean - self.mean
        self.mean += delta * other.n / n
        self.m2 += other.m2 + delta * delta * self.n * other.n / n
        self.n = n

    @property
    def variance(self) -> float:
        """Maximum-likelihood (population) variance; 0 before two observations."""
        return self.m2 / self.n if self.n else 0.0

    def copy(self) -> GaussianMoments:
        return GaussianMoments(self.n, self.mean, self.m2)

    def __eq__(self, other):
        return (
            isinstance(other, GaussianMoments)
            and (self.n, self.mean, self.m2) == (other.n, other.mean, other.m2)
        )

    def __repr__(self):
        return f"GaussianMoments(n={self.n}, mean={self.mean!r}, m2={self.m2!r})"


@dataclass(frozen=True)
class NormalGammaPrior:
    """Normal–Gamma prior on a Gaussian's mean and precision (see the module docstring).

    The defaults (``mu0=0, kappa0=0.01, a0=1, b0=0.01``) are weak for features of roughly
    unit scale: the prior mean is worth 1% of one observation and the prior guess of the
    variance is 0.01. The prior is in the data's units, so put a scaler (for example
    ``river.preprocessing.StandardScaler``) in front of features measured on very different
    scales, or pass your own prior.

    >>> p = NormalGammaPrior()
    >>> import math
    >>> # The marginal likelihood is the product of sequential predictive densities:
    >>> xs = [0.3, -1.2, 2.0]
    >>> seq, m = 0.0, GaussianMoments()
    >>> for x in xs:
    ...     seq += p.log_predictive(x, m.n, m.mean, m.m2)
    ...     m.update(x)
    >>> math.isclose(seq, p.log_marginal(m.n, m.mean, m.m2), rel_tol=1e-12)
    True
    """

    mu0: float = 0.0
    kappa0: float = 0.01
    a0: float = 1.0
    b0: float = 0.01

    def __post_init__(self):
        if not (math.isfinite(self.mu0)):
            raise ValueError(f"mu0 must be finite, got {self.mu0!r}")
        for name in ("kappa0", "a0", "b0"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a positive finite number, got {v!r}")

    def posterior(self, n: float, mean: float, m2: float) -> tuple[float, float, float, float]:
        """``(mu_n, kappa_n, a_n, b_n)`` after ``n`` observations with the given moments."""
        kappa_n = self.kappa0 + n
        mu_n = (self.kappa0 * self.mu0 + n * mean) / kappa_n
        a_n = self.a0 + 0.5 * n
        d = mean - self.mu0
        b_n = self.b0 + 0.5 * m2 + self.kappa0 * n * d * d / (2.0 * kappa_n)
        return mu_n, kappa_n, a_n, b_n

    def log_marginal(self, n: float, mean: float, m2: float) -> float:
        """Log marginal likelihood of ``n`` observations summarised by ``(mean, m2)``."""
        if n == 0:
            return 0.0
        _, kappa_n, a_n, b_n = self.posterior(n, mean, m2)
        return (
            math.lgamma(a_n)
            - math.lgamma(self.a0)
            + self.a0 * math.log(self.b0)
            - a_n * math.log(b_n)
            + 0.5 * (math.log(self.kappa0) - math.log(kappa_n))
            - 0.5 * n * LOG_2PI
        )

    def predictive_params(self, n: float, mean: float, m2: float) -> tuple:
        """``(location, nu scale^2, log normaliser, power)`` of the Student-t predictive after
        ``n`` observations: what :func:`student_t_log_density` needs. Learners cache it per
        (feature, class) and recompute it only when those moments change.

        Degrees of freedom ``nu = 2 a_n``, so ``(nu + 1) / 2 = a_n + 1/2``, and
        ``nu scale^2 = 2 b_n (kappa_n + 1) / kappa_n``; the posterior is inlined because this
        runs for every numeric feature of every learned record (a learner may inline it in
        turn, from :meth:`constants`, with these very operations).
        """
        k0, k0mu0, mu0, b2, a0h, ratios = self.constants()
        kn = k0 + n
        d = mean - mu0
        nus2 = (b2 + m2 + k0 * n * d * d / kn) * (kn + 1.0) / kn
        if type(n) is int and n < tuning.GAMMA_RATIOS:  # records, not weights: a tabulated ratio
            ratio = ratios[n]
        else:
            a_n = self.a0 + 0.5 * n
            ratio = math.lgamma(a_n + 0.5) - math.lgamma(a_n)
        log_norm = ratio - 0.5 * (LOG_PI + math.log(nus2))
        return (k0mu0 + n * mean) / kn, nus2, log_norm, a0h + 0.5 * n

    def constants(self) -> tuple:
        """``(kappa0, kappa0 mu0, mu0, 2 b0, a0 + 1/2, ratios)``: what
        :meth:`predictive_params` computes with, ``ratios[n]`` being
        ``lgamma(a0 + n/2 + 1/2) - lgamma(a0 + n/2)`` for ``n < len(ratios)``."""
        c = _CONSTANTS.get(self)
        if c is None:
            c = _CONSTANTS[self] = (self.kappa0, self.kappa0 * self.mu0, self.mu0,
                                    2.0 * self.b0, self.a0 + 0.5, _gamma_ratios(self.a0))
        return c

    def log_predictive(self, x, n: float, mean: float, m2: float):
        """Log Student-t posterior predictive density of ``x`` (a float or a numpy array)."""
        return student_t_log_density(self.predictive_params(n, mean, m2), x)


_GAMMA_RATIOS: dict = {}  # a0 -> [lgamma(a0 + n/2 + 1/2) - lgamma(a0 + n/2) for n < cap]
_CONSTANTS: dict = {}  # prior -> NormalGammaPrior.constants()


def _gamma_ratios(a0: float) -> list:
    """The Student-t normaliser's Gamma ratio after n = 0 .. 65,535 records, tabulated once
    per a0 (per process; a list, the fastest to index): a prediction after a learned record
    then needs no lgamma."""
    table = _GAMMA_RATIOS.get(a0)
    if table is None:
        lg = math.lgamma
        table = _GAMMA_RATIOS[a0] = [lg(a0 + 0.5 * n + 0.5) - lg(a0 + 0.5 * n)
                                     for n in range(tuning.GAMMA_RATIOS)]
    return table


def student_t_log_density(params: tuple, x):
    """Log density at ``x`` (a float or a numpy array) of the Student t described by
    :meth:`NormalGammaPrior.predictive_params`."""
    loc, nu_scale2, log_norm, power = params
    z = x - loc
    if isinstance(x, float):
        u = z * z / nu_scale2
        # log1p(u) = log(u) to double precision once u > 1e17; past float range it is
        # 2 log|z| - log(nu scale^2), which stays finite.
        tail = math.log1p(u) if u != math.inf else 2.0 * math.log(abs(z)) - math.log(nu_scale2)
    else:
        with np.errstate(over="ignore", divide="ignore"):
            u = z * z / nu_scale2
            tail = np.where(np.isinf(u), 2.0 * np.log(np.abs(z)) - math.log(nu_scale2),
                            np.log1p(u))
    return log_norm - power * tail
