"""The Gaussian representations of numeric features in :class:`~onlinebma.tan.ModelAveragedTAN`:
one conjugate full-covariance Gaussian per class and forgetting rate (:data:`GAUSSIAN`), or
independent Gaussians, one per numeric feature, class and rate
(:data:`INDEPENDENT_GAUSSIANS`).

A Gaussian member of the stack (:class:`~onlinebma.tan.members.TreeMemberStack`) models a
record ``x = (x_nom, x_num)`` of class ``c`` as

.. math:: P(c, x) = P_F(c, x_{nom}) \\; t_c(x_{num}),

with ``P_F`` the exact forest (tree) average over the **nominal** features, read from the
stack's counts and edge terms at the member's rate (the pair terms of nominal pairs are the same
whether numeric features are in the model or not, so the interval member of the same rate
shares them exactly), and ``t_c`` the posterior predictive of a Normal–Wishart model per class
over the numeric features: a multivariate Student t
(:class:`~onlinebma.stats.normal_wishart.FullStatistics`, BGe prior of
:class:`~onlinebma.stats.normal_wishart.NormalWishartPrior`, defaults; Geiger & Heckerman 1994,
Kuipers, Moffa & Heckerman 2014). It needs no cut points, so it predicts with the numbers from
the first record, while the interval members wait for theirs.

- **Which numeric features**: those observed in the first record learned that has a numeric
  value (the statistics have a fixed dimension), or those given cut points by ``fix_numeric``
  before (so that learners to be merged model the same ones); a numeric feature first seen
  later is read by the interval members only.
- **Missing values**: a record missing one of those features does not update the Gaussian
  statistics (complete-case learning, exact Bayes for the records learned; the forgetting
  still applies) and is predicted with the marginal Student t of its observed features.
- **Magnitude**: as every learner, the stack refuses to learn a numeric value beyond
  :data:`~onlinebma.stats.gaussian.MAX_ABS_VALUE` (its square must stay finite); any finite
  value is predicted (the Student t's quadratic form is kept in log space).
- **Forgetting**: the statistics of every class are multiplied by the member's rate λ before
  each record is added (every record, whatever its class), as every count is.

**Independent Gaussians** (:data:`INDEPENDENT_GAUSSIANS`) replace ``t_c`` by a product of
univariate Student t's, ``prod_u t_c(x_u)``: the numeric features independent given the class
(the empty Gaussian forest), each from the univariate margin of the same prior
(:class:`~onlinebma.stats.normal_wishart.MomentStatistics`). Two things differ from the
full-covariance member:

- **Each feature is learned where it is observed** (a record missing one value still teaches
  the others), and a missing value has no term.
- **The prior's scale is the data's spread** (empirical Bayes): the standard deviation of the
  feature over every class at the member's rate (its class-pooled, decayed statistics; 1 while
  it has no spread), so the prior predictive is as wide as the data instead of 1 in the data's
  units. The fixed scale 1 is wide for features that live in [0, 1] (Elec2's prices spread by
  about 0.04): fast-forgetting members, which hold a few dozen records, were then mostly prior.
  The scale is a function of the statistics alone, so a stream, a table and merged learners
  agree on it exactly.

With few records per class and features (fast forgetting, many features) independent Gaussians
need far fewer records than a full covariance; the full covariance models linear boundaries
between correlated features (docs/tan.md, *Numbers*: measured beside each other).
"""

from __future__ import annotations

import math
from itertools import islice

import numpy as np
from scipy.special import gammaln

from .. import tuning
from ..stats.normal_wishart import FullStatistics, MomentStatistics, NormalWishartPrior
from ..stats.numerics import LOG_PI

__all__ = ["GAUSSIAN", "GAUSSIANS", "INDEPENDENT_GAUSSIANS", "GaussianStatistics",
           "NumericFeatures"]

#: The name of the full-covariance Gaussian representation
#: (``ModelAveragedTAN(numeric=GAUSSIAN)``).
GAUSSIAN = "Gaussian"
#: The name of the independent Gaussians' representation (one Gaussian per feature and class).
INDEPENDENT_GAUSSIANS = "independent Gaussians"
#: The Gaussian representations, which :class:`GaussianStatistics` holds.
GAUSSIANS = (GAUSSIAN, INDEPENDENT_GAUSSIANS)


class NumericFeatures:
    """The numeric features a Gaussian representation models, chosen once (module
    docstring: *Which numeric features*), and a record's vector of their values.

    Parameters
    ----------
    rates : tuple of float
        The forgetting rate of each row of the statistics (one per rate of the stack's
        members of this representation).

    Attributes
    ----------
    features : list or None
        The numeric features modelled (``None`` until the first record with a numeric value).
    """

    def __init__(self, rates):
        self.rates = tuple(rates)
        self.features = None
        self._index: dict = {}
        self._last_vector = None  # (numeric pairs, their vector): see vector

    def __getstate__(self):  # the last vector is derived, not state
        return {**self.__dict__, "_last_vector": None}

    def choose(self, features) -> None:
        """Model these numeric features (before any is modelled; later calls change
        nothing): learners given the same features before learning can be merged."""
        if self.features is None and features:
            self.features = list(features)
            self._index = {f: i for i, f in enumerate(self.features)}
            self._start()

    def _start(self) -> None:
        """Lay out the statistics once the features are chosen."""
        raise NotImplementedError

    def vector(self, numeric) -> np.ndarray | None:
        """The record's values of the modelled features (NaN where missing, read only), from
        its validated ``(feature, value)`` pairs; ``None`` before any feature is modelled or
        when none of them is observed. The vector of the last list of pairs is kept for that
        same list (the features, once chosen, never change): a record's prediction and its
        learning build it once."""
        if self.features is None:
            return None
        last = self._last_vector
        if last is not None and last[0] is numeric:
            return last[1]
        values = [np.nan] * len(self.features)
        seen = False
        for f, v in numeric:
            i = self._index.get(f)
            if i is not None:
                values[i] = v
                seen = True
        x = None
        if seen:
            x = np.array(values, dtype=float)
            x.flags.writeable = False
        self._last_vector = (numeric, x)
        return x


class GaussianStatistics(NumericFeatures):
    """Normal–Wishart statistics of the numeric features per row and class: each row a
    full-covariance Gaussian (:data:`GAUSSIAN`) or independent Gaussians
    (:data:`INDEPENDENT_GAUSSIANS`) at its forgetting rate.

    Parameters
    ----------
    rates : tuple of float
        The forgetting rate of each row (one per Gaussian member of the stack).
    kinds : tuple of str or None, default None
        The representation of each row, one of :data:`GAUSSIANS`; ``None``: every row
        :data:`GAUSSIAN`.

    Attributes
    ----------
    features : list or None
        The numeric features modelled (``None`` until the first record with a numeric value).

    Examples
    --------
    >>> g = GaussianStatistics((1.0, 1.0), kinds=(GAUSSIAN, INDEPENDENT_GAUSSIANS))
    >>> for x, c in [((0.1, 0.3), 0), ((1.2, 1.0), 1), ((0.0, 0.2), 0), ((1.1, 1.3), 1)]:
    ...     g.learn([("u", x[0]), ("v", x[1])], c, n_classes=2)
    >>> densities = g.log_densities(g.vector([("u", 0.05), ("v", 0.25)]), n_classes=2)
    >>> densities.shape, bool((densities[:, 0] > densities[:, 1]).all())  # (rows, classes)
    ((2, 2), True)
    """

    def __init__(self, rates, kinds=None):
        super().__init__(rates)
        self.kinds = (GAUSSIAN,) * len(self.rates) if kinds is None else tuple(kinds)
        if len(self.kinds) != len(self.rates) or not set(self.kinds) <= set(GAUSSIANS):
            raise ValueError(f"kinds must name one of {GAUSSIANS} per rate, got {kinds!r}")
        self._full_rows = [r for r, k in enumerate(self.kinds) if k == GAUSSIAN]
        self._independent_rows = [r for r, k in enumerate(self.kinds)
                                  if k == INDEPENDENT_GAUSSIANS]
        self._stats = None  # FullStatistics (full rows, classes)
        self._independent = None  # MomentStatistics (independent rows, classes)
        self._prior = None

    def _start(self) -> None:
        d = len(self.features)
        self._prior = NormalWishartPrior(d)
        # one class slot to start with (grown as classes come)
        if self._full_rows:
            self._stats = FullStatistics(d, (len(self._full_rows), 1),
                                         np.array(self.rates)[self._full_rows, None])
        if self._independent_rows:
            self._independent = MomentStatistics(
                d, (len(self._independent_rows), 1),
                np.array(self.rates)[self._independent_rows, None])

    def _parts(self) -> list:
        """The statistics of each kind of row present (full, then independent)."""
        return [stats for rows, stats in ((self._full_rows, self._stats),
                                          (self._independent_rows, self._independent))
                if rows]

    def log_densities(self, x: np.ndarray | None, n_classes: int) -> np.ndarray:
        """``log t_c(x)`` of every row and class, ``(rows, n_classes)``; 0 without values."""
        out = np.zeros((len(self.rates), n_classes))
        if x is None:
            return out
        self._grow(n_classes)
        if self._full_rows:
            out[self._full_rows] = self._stats.log_predictive(self._prior, x)[:, :n_classes]
        if self._independent_rows:
            out[self._independent_rows] = self._independent_log_densities(x, n_classes)
        return out

    def _independent_log_densities(self, x: np.ndarray, n_classes: int) -> np.ndarray:
        """``sum_u log t_c(x_u)`` of the independent rows, each feature's prior scaled by its
        class-pooled spread at the row's rate (module docstring)."""
        stats = self._independent
        if stats.state[0].size <= tuning.NARROW_INDEPENDENT_CELLS:
            return _python_independent_log_densities(self._prior, stats.state, x, n_classes)
        log_t = stats.log_predictive(self._prior, x, scale=stats.spread(1)[:, None, :])
        return log_t[:, :n_classes].sum(axis=-1)

    def learn(self, numeric, c: int, n_classes: int) -> None:
        """Forget by each row's rate, then add the record (validated numeric pairs) to class
        code ``c``; the features are fixed at the first record with a numeric value."""
        if self.features is None:
            self.choose([f for f, _ in numeric])
            if self.features is None:
                return
        self._grow(n_classes)
        x = self.vector(numeric)
        for stats in self._parts():
            weight = np.zeros(stats.shape)  # every class slot forgets
            if x is not None:
                weight[:, c] = 1.0  # the full rows learn complete records only
            stats.add(np.zeros(len(self.features)) if x is None else x, weight)

    def learn_many(self, values: np.ndarray, classes: np.ndarray, n_classes: int) -> None:
        """Add a table's records at once (the features chosen already; no forgetting):
        equal to :meth:`learn` on each row (up to rounding; a row without an observed value
        adds nothing, one missing a value adds nothing to the full rows).

        Parameters
        ----------
        values : np.ndarray
            ``(rows, features)``: the modelled features' values, in :attr:`features` order,
            NaN where missing.
        classes : np.ndarray
            Each row's class code.
        n_classes : int
            The number of classes known (at least every code plus one).
        """
        if any(rate != 1 for rate in self.rates):
            raise ValueError("learn_many adds records to statistics that forget nothing")
        self._grow(n_classes)
        for stats in self._parts():
            weights = np.zeros((len(values),) + stats.shape)
            weights[np.arange(len(values)), :, classes] = 1.0
            stats.add_many(values, weights)

    @property
    def statistics(self):
        """The full-covariance rows' statistics, a
        :class:`~onlinebma.stats.normal_wishart.FullStatistics` of shape ``(full rows,
        classes)`` (``None`` before any feature is modelled or without such rows; read
        only)."""
        return self._stats

    @property
    def independent_statistics(self):
        """The independent rows' statistics, a
        :class:`~onlinebma.stats.normal_wishart.MomentStatistics` of shape ``(independent
        rows, classes)`` (``None`` before any feature is modelled or without such rows; read
        only)."""
        return self._independent

    def _grow(self, n_classes: int) -> None:
        for stats in self._parts():
            if stats is not None and stats.shape[1] < n_classes:
                stats.grow(1, n_classes)

    def merge(self, other: GaussianStatistics, class_codes) -> None:
        """Pool ``other``'s records (the same features, in the same order, and the same
        rows); ``class_codes`` maps each class code of ``other`` to its code here, which must
        be the same code (the statistics are laid out by class code: a ValueError
        otherwise)."""
        if other.features is None:
            return
        if list(class_codes) != list(range(len(class_codes))):
            raise ValueError("cannot merge Gaussian members whose classes were first seen in "
                             "different orders (their statistics are laid out by class)")
        if self.features is None:
            self.choose(other.features)
        elif self.features != other.features:
            raise ValueError(f"cannot merge: the Gaussian members model the numeric features "
                             f"{self.features} and {other.features}")
        theirs = [stats.copy() for stats in other._parts()]
        k = max(stats.shape[1] for stats in theirs + self._parts())
        self._grow(k)
        for mine, stats in zip(self._parts(), theirs):
            stats.grow(1, k)
            mine.merge(stats)


def _python_independent_log_densities(prior, state, x, n_classes: int) -> np.ndarray:
    """The independent rows' ``sum_u log t_c(x_u)``, ``(rows, n_classes)``, in plain Python
    floats for few statistics (:data:`~onlinebma.tuning.NARROW_INDEPENDENT_CELLS`): the
    arithmetic of the numpy path of :meth:`GaussianStatistics._independent_log_densities`
    (:meth:`MomentStatistics.spread` over the classes, then
    :meth:`MomentStatistics.log_predictive` with that scale), one statistic at a time, the
    terms that depend on a weight alone (the log-gammas) computed once per weight, by the
    numpy path's ``gammaln`` (``math.lgamma`` differs from it by an ulp or two, 1e-12 nats
    at weights of thousands).
    ``state`` is the independent statistics' ``(n, mean, root scatter)``, each ``(rows,
    classes, d)``."""
    sqrt, log, log1p = math.sqrt, math.log, math.log1p
    k0 = prior.k0
    observed = [(u, value, t, nu) for u, (value, t, nu) in
                enumerate(zip(x.tolist(), prior.t.tolist(), prior.nu.tolist()))
                if value == value]  # NaN (missing) is not equal to itself
    by_weight: dict = {}  # n -> the Student t's terms in n alone (as _log_student's)
    out = []
    for n_r, mean_r, a_r, n_t, mean_t, a_t in zip(
            *(s.tolist() for s in state), *(np.swapaxes(s, 1, 2).tolist() for s in state)):
        prior_t = []  # T of each observed feature scaled by its spread over every class
        for u, _, t, _ in observed:
            n_u, mean_u = n_t[u], mean_t[u]
            total = sum(n_u)
            pooled = sum([n * m for n, m in zip(n_u, mean_u)]) / total if total > 0 else 0.0
            scatter = sum([a * a + n * (m - pooled) ** 2
                           for n, m, a in zip(n_u, mean_u, a_t[u])])
            scale = sqrt(scatter / total) if total > 0 and scatter > 0 else 1.0
            prior_t.append(t * scale * scale)
        row = []
        for n_c, m_c, a_c in islice(zip(n_r, mean_r, a_r), n_classes):
            log_t = 0.0
            for (u, value, _, nu), t_u in zip(observed, prior_t):
                n, m, a = n_c[u], m_c[u], a_c[u]
                terms = by_weight.get(n)
                if terms is None:
                    kappa = k0 + n
                    ratio = kappa / (kappa + 1.0)
                    half_df = 0.5 * prior.df(n)
                    terms = by_weight[n] = (
                        float(gammaln(half_df + 0.5) - gammaln(half_df)) - 0.5 * LOG_PI
                        + 0.5 * log(ratio), ratio, half_df + 0.5, k0 * n / kappa, kappa)
                constant, ratio, top, shrink, kappa = terms
                b = m - nu
                r = t_u + a * a + shrink * b * b
                delta = value - (k0 * nu + n * m) / kappa
                log_t += constant - 0.5 * log(r) - top * log1p(ratio * (delta * delta / r))
            row.append(log_t)
        out.append(row)
    return np.array(out)
