"""What every forgetting learner shares: the ``decay`` rates, their scaled clock, ``"auto"``.

A learner with ``decay`` = λ < 1 multiplies every sufficient statistic by λ after each
learned record, so a record of age ``a`` weighs λ^a: the half-life is ``ln 2 / -ln λ``
records (:func:`half_life`). Multiplying every statistic at every record would cost
O(all statistics) per record; :class:`ScaledClock` does it in O(1): statistics are kept in a
unit worth λ^k records, ``k`` the records since the last renormalisation, so a new record is
added with weight λ^-k and nothing else changes, until the unit would pass
:data:`~onlinebma.stats.numerics.RENORMALISE_ABOVE` and the owner multiplies its statistics
once by λ^k.

``decay="auto"`` runs one member per rate of :data:`AUTO_GRID` and averages their predictions
with dynamic-model-averaging weights (Raftery, Kárný & Ettler 2010): at each learned record
``(x, y)`` every weight is multiplied by its member's predictive probability of the true label
before learning it, ``π_r ∝ π_r p_r(y | x)`` (floored at 1e-300), then flattened for the next
record, ``π_r ∝ π_r^β``. How fast the weights should move, β, is itself uncertain (a stream
that switches regimes every few hundred records wants a small β, a stable one β near 1), so
it is averaged over too, by the same recursion one level up (:class:`RateWeights`): one set of
weights ``π_{β,r}`` per β of :data:`AUTO_FORGETTINGS`, each β weighed by ``ω_β``, the
predictive probability of its own mixture, ``ω_β ∝ (ω_β Σ_r π_{β,r} p_r(y | x))^α`` with α =
:data:`BETA_FORGETTING`. A prediction weighs member ``r`` by ``Σ_β ω_β π_{β,r}``:
:meth:`Forgetting.decay_posterior` returns these weights, :meth:`Forgetting.beta_posterior`
the ``ω_β``.

A family may compute the members as one state with a member axis
(:class:`~onlinebma.naive_bayes.rates.SharedRates`,
:class:`~onlinebma.tan.members.TreeMemberStack`, equal to the members to rounding);
:class:`RateMixture`, one learner per rate, serves the settings without one.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .stats.numerics import RENORMALISE_ABOVE

__all__ = ["AUTO_FORGETTINGS", "AUTO_GRID", "BETA_FORGETTING", "MIN_PROBABILITY", "MIN_WEIGHT",
           "Forgetting", "RateMixture", "RateWeights", "ScaledClock", "half_life"]


AUTO_GRID = (1.0, 0.9999, 0.999, 0.99, 0.95)
"""The rates of ``decay="auto"``: half-lives ∞, 6931, 693, 69 and 13.5 records."""

AUTO_FORGETTINGS = (0.99, 0.95, 0.9)
"""The β's, forgettings of the members' weights, that ``decay="auto"`` averages over: the
evidence for a member has a half-life of about 69, 13.5 and 6.6 records. 0.99 is Raftery et
al.'s value for model probabilities and was the one β until 2026-11-29; on Elec2 β = 0.9
reached accuracy 0.902 against 0.890, but lost log loss on the five other streams of the
numbers benchmark, which the average over the three keeps (docs/tan.md, *How fast the weights
move*)."""

BETA_FORGETTING = 0.999
"""α, the forgetting of the posterior over :data:`AUTO_FORGETTINGS`: the evidence for a β has
a half-life of about 693 records."""

MIN_WEIGHT = 1e-200
"""Floor of the weight of a numeric feature's stored moments (marginal or per class), in the
scaled unit, at a renormalisation. A class or feature not seen for long decays by λ per
record: with λ = 0.95 its weight drops below the smallest float after some 14,500 records, and
its Gaussian (mean and variance are ratios of the moments) would turn into 0 / 0. Raised to
this floor, the moments keep their mean and variance (``m2`` scaled alike), which decay leaves
unchanged; what depends on the weight itself (a plug-in log likelihood ``n log ...``, the
marginal, the Normal-Gamma posterior) is off by less than 1e-200 records."""

MIN_PROBABILITY = 1e-300
"""Floor of a member's predictive probability of the true label in the weight update."""


def half_life(decay: float) -> float:
    """Records after which a record's weight has halved, ``ln 2 / -ln decay``.

    >>> round(half_life(0.999), 1)
    692.8
    >>> half_life(1.0)
    inf
    """
    return math.inf if decay == 1 else math.log(2.0) / -math.log(decay)


def renormalisation_step(rate: float) -> float:
    """The first ``k`` at which ``rate^-k`` passes :data:`RENORMALISE_ABOVE` (``inf`` for a
    rate of 1, which never forgets).

    >>> renormalisation_step(0.5), renormalisation_step(1.0)
    (129, inf)
    """
    if rate == 1:
        return math.inf
    k = math.floor(math.log(RENORMALISE_ABOVE) / -math.log(rate))  # about the step, then exact
    while k > 1 and rate ** -(k - 1) > RENORMALISE_ABOVE:
        k -= 1
    while rate ** -k <= RENORMALISE_ABOVE:
        k += 1
    return k


class ScaledClock:
    """The scaled unit of forgetting (module docstring) for one rate or several.

    ``rates`` is a number λ (one learner) or a sequence of them (members on an axis of numpy
    arrays ``unit`` and ``scale``, one shared ``k``); a clock of the int ``1`` starts with
    ``unit`` and ``scale`` the int 1 (a learner that does not forget never ticks it). After
    ``k`` records since the last renormalisation a new record weighs ``unit`` = λ^-k in the
    stored statistics, and a stored statistic is worth ``scale`` = λ^k times as much in records
    (``unit * scale = 1``). :meth:`tick` counts a record; when the fastest rate's unit would
    pass :data:`RENORMALISE_ABOVE` it returns the factors λ^k the owner multiplies its
    statistics by, and the unit is 1 again.

    >>> clock = ScaledClock(0.5)
    >>> [clock.tick() for _ in range(3)], clock.unit, clock.scale
    ([None, None, None], 8.0, 0.125)
    >>> factors = [clock.tick() for _ in range(126)]
    >>> factors[-1] == 0.5 ** 129, clock.k, clock.unit
    (True, 0, 1.0)
    """

    def __init__(self, rates):
        self._start(rates, 0)

    def _start(self, rates, k: int) -> None:
        self.rates = rates  # the state: a number, or a tuple of them
        self.k = k
        if isinstance(rates, numbers.Real):
            self._lam, fastest = rates, rates
        else:
            self.rates = tuple(float(r) for r in rates)
            self._lam, fastest = np.array(self.rates), min(self.rates)
        self.k_limit = renormalisation_step(fastest)
        self._set(k)

    def __getstate__(self):  # the rates and k; the rest is derived
        return self.rates, self.k

    def __setstate__(self, state):
        self._start(*state)

    def _set(self, k: int) -> None:
        self.k = k
        self.unit = self._lam ** -k
        self.scale = self._lam ** k

    def tick(self):
        """Count one record: ``None``, or the factors λ^k by which every statistic is to be
        multiplied now (then ``k`` is 0 and the unit 1)."""
        k = self.k + 1
        if k >= self.k_limit:
            factors = self._lam ** k
            self._set(0)
            return factors
        self._set(k)
        return None


class RateWeights:
    """The posterior over the members of a ``decay="auto"`` learner (module docstring): the
    recursion's state per β of :data:`AUTO_FORGETTINGS`, ``beta_log_weights`` ``(B, M)``
    (row ``b`` the log ``π_{β_b, m}``) and ``beta_log_posterior`` (the log ``ω_β``), and
    ``log_weights``, the log of the weights ``Σ_β ω_β π_{β,m}`` the next prediction uses.
    Setting ``log_weights`` starts the recursion from those weights for every β, with the β's
    equally likely. Shared by :class:`RateMixture` and the states that compute the members
    together (:class:`~onlinebma.naive_bayes.rates.SharedRates`,
    :class:`~onlinebma.tan.members.TreeMemberStack`), which set ``rates`` and
    ``log_weights``.

    >>> w = RateWeights()
    >>> w.log_weights = [math.log(0.5), math.log(0.5)]
    >>> w._reweigh([0.9, 0.1])  # each β: π ∝ (0.5 p)^β, so π_0 = 9^β / (9^β + 1)
    >>> [round(math.exp(v), 6) for v in w.log_weights]
    [0.888696, 0.111304]
    >>> round(sum(9 ** b / (9 ** b + 1) for b in AUTO_FORGETTINGS) / 3, 6)
    0.888696
    >>> {beta: round(p, 6) for beta, p in w.beta_posterior().items()}
    {0.99: 0.333333, 0.95: 0.333333, 0.9: 0.333333}
    """

    rates = AUTO_GRID
    _betas = np.array(AUTO_FORGETTINGS)[:, None]

    @property
    def log_weights(self) -> list:
        """The log of each member's weight in the next prediction, ``log Σ_β ω_β π_{β,m}``."""
        return self._log_weights

    @log_weights.setter
    def log_weights(self, values) -> None:
        values = np.asarray(values, dtype=float)
        values = values - np.logaddexp.reduce(values)
        n = len(AUTO_FORGETTINGS)
        self.beta_log_weights = np.tile(values, (n, 1))
        self.beta_log_posterior = np.full(n, -math.log(n))
        self._log_weights = values.tolist()

    def _reweigh(self, p_true) -> None:
        """One step of the recursion (module docstring) in log space: ``p_true`` each member's
        probability of the true label (floored at :data:`MIN_PROBABILITY`, so that each β's
        mixture's is too), ``None`` for a label no member has seen (no evidence: only the
        flattening)."""
        lw, lo = self.beta_log_weights, self.beta_log_posterior
        if p_true is not None:
            log_p = np.log(np.maximum(p_true, MIN_PROBABILITY))
            lw = lw + log_p
            lo = lo + np.logaddexp.reduce(lw, axis=1)  # log ω_β + log Σ_m π_{β,m} p_m
        lw = self._betas * lw
        lw -= np.logaddexp.reduce(lw, axis=1)[:, None]
        lo = BETA_FORGETTING * lo
        lo -= np.logaddexp.reduce(lo)
        self.beta_log_weights, self.beta_log_posterior = lw, lo
        self._log_weights = np.logaddexp.reduce(lo[:, None] + lw, axis=0).tolist()

    def beta_posterior(self) -> dict:
        """``{β: posterior probability}`` over :data:`AUTO_FORGETTINGS`: how fast the
        weights of the members move."""
        return dict(zip(AUTO_FORGETTINGS, np.exp(self.beta_log_posterior).tolist()))

    def posterior(self) -> dict:
        return {rate: math.exp(lw) for rate, lw in zip(self.rates, self.log_weights)}

    def joint_log_likelihood(self, x: dict) -> dict:
        """The log of the rate-averaged ``P(y | x)`` of every label."""
        return {label: math.log(p) if p > 0 else -math.inf
                for label, p in self.predict_proba_one(x).items()}


class RateMixture(RateWeights):
    """The members of a ``decay="auto"`` learner and the posterior over their rates."""

    def __init__(self, owner):
        self.members = [owner.clone({"decay": rate}) for rate in AUTO_GRID]
        self.log_weights = [-math.log(len(AUTO_GRID))] * len(AUTO_GRID)
        # The members' predictions of the last record asked for: progressive validation
        # predicts a record and then learns the same record, whose update needs exactly these
        # predictions. Reused only for the same, unchanged dict; any learning clears them.
        self._last = None

    def __getstate__(self):  # the cache is not state: pickles and clones leave it out
        return {**self.__dict__, "_last": None}

    @property
    def kinds(self):
        """The members' feature kinds (every member reads records alike)."""
        return self.members[0].feature_kinds

    def _member_probas(self, x: dict) -> list:
        last = self._last
        if last is not None and last[0] is x and last[1] == x:
            return last[2]
        probas = [m.predict_proba_one(x) for m in self.members]
        self._last = (x, dict(x), probas)
        return probas

    def learn_one(self, x: dict, y) -> None:
        probas = self._member_probas(x)
        self._last = None
        # Validate through the first member before changing anything (every member reads
        # records alike): a refused record leaves the mixture as it was.
        first = self.members[0]
        first.learn_one(x, y)
        for m in self.members[1:]:
            m.learn_one(x, y)
        # a label seen before: every member has a prediction for it
        self._reweigh([p[y] for p in probas] if y in probas[0] else None)

    def predict_proba_one(self, x: dict) -> dict:
        out: dict = {}
        for proba, lw in zip(self._member_probas(x), self.log_weights):
            w = math.exp(lw)
            for label, p in proba.items():
                out[label] = out.get(label, 0.0) + w * p
        total = sum(out.values())
        return {label: p / total for label, p in out.items()}

    def predict_proba_many(self, X):
        out = None
        for m, lw in zip(self.members, self.log_weights):
            p = m.predict_proba_many(X) * math.exp(lw)
            out = p if out is None else out + p
        return out.div(out.sum(axis=1), axis=0)

    @property
    def classes_(self) -> tuple:
        """The members' labels (each member orders them by :mod:`onlinebma.labels`)."""
        return self.members[0].classes_

    def feature_posteriors(self) -> dict:
        out: dict = {}
        for m, lw in zip(self.members, self.log_weights):
            w = math.exp(lw)
            for f, p in m.feature_posteriors().items():
                out[f] = out.get(f, 0.0) + w * p
        return out


class Forgetting:
    """What a forgetting learner adds for ``decay="auto"``: the mixture over the rates, made
    at first use, and its posterior. The learner sets ``decay``, ``_auto`` (``decay ==
    "auto"``), ``_rates`` (``None`` until the mixture is made) and ``_kinds``."""

    @property
    def feature_kinds(self):
        """The :class:`~onlinebma.records.FeatureKinds` records are validated against: the
        features declared or learned so far, nominal or numeric (with ``decay="auto"``, the
        members', which learn)."""
        if self._auto and self._rates is not None:
            return self._rates.kinds
        return self._kinds

    def _learn_through_rates(self, x: dict, y) -> None:
        """``decay="auto"``: the members learn ``(x, y)``; a record refused before the members
        existed leaves none behind, so the learner stays exactly as it was."""
        existed = self._rates is not None
        try:
            self._rate_mixture().learn_one(x, y)
        except (TypeError, ValueError):
            if not existed:
                self._rates = None
            raise

    def _rate_mixture(self):
        if self._rates is None:
            shared = self._shared_rates()
            self._rates = RateMixture(self) if shared is None else shared
        return self._rates

    def _shared_rates(self):
        """The members computed as one state with a member axis, or ``None`` to run one
        learner per rate (:class:`RateMixture`)."""
        return None

    def decay_posterior(self) -> dict:
        """``{decay rate: posterior probability}``: with ``decay="auto"`` the current weights
        of the grid's members (how fast the stream seems to change), else ``{decay: 1.0}``."""
        if not self._auto:
            return {self.decay: 1.0}
        return self._rate_mixture().posterior()

    def beta_posterior(self) -> dict:
        """``{β: posterior probability}`` over :data:`AUTO_FORGETTINGS` with ``decay="auto"``
        (how fast the weights of the rates move), ``{}`` for a fixed decay, which weighs no
        members."""
        return self._rate_mixture().beta_posterior() if self._auto else {}
