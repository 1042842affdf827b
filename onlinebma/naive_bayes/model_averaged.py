"""Exact Bayesian model averaging over all 2^N naive structures (Dash & Cooper 2002)."""

from __future__ import annotations

import math

from ..validation import check_choice, check_real
from ..stats.dirichlet import log_dirichlet_marginal
from ..stats.gaussian import GaussianMoments, NormalGammaPrior
from ..stats.tables import NominalTable, NumericTable
from .base import BaseNB

__all__ = ["ModelAveragedNB"]


class ModelAveragedNB(BaseNB):
    """The naive network C* whose predictions equal averaging over every feature subset.

    Each feature F either depends on the class (arc C → F) or not. Averaging the predictions
    of all 2^N such structures, weighted by their posterior, factorises per feature (eq. 11 of
    Dash & Cooper 2002): the model is one naive network whose parameters mix, per feature, the
    "no arc" and "arc" predictive distributions with the arc's posterior probability
    (eq. 12-13). That posterior comes from the two marginal likelihoods of the feature's data
    (eq. 8) and the prior probability ``inclusion_prior`` of the arc.

    Nominal features use Dirichlet priors: K2 (``alpha`` per cell) or BDeu (``ess / (q r)``
    per cell, ``q`` = 1 without the arc and the number of classes with it). Numeric features
    use a Normal–Gamma prior (``normal_gamma``) with its Student-t predictive, marginal
    without the arc, per class with it.

    The marginal likelihoods are kept incrementally as products of sequential predictive
    probabilities, so a record costs O(observed features). When a domain grows (a new value
    for a feature, a new class) the model becomes the batch model with the enlarged domain:
    with K2 a new value changes only that feature's normalisers, and a new class changes
    nothing; with BDeu a new value recomputes that feature, a new class every nominal feature.

    Parameters
    ----------
    alpha
        K2 pseudo-count per cell, and the class prior's ``(N_y + alpha) / (N + alpha |C|)``.
    prior
        ``"K2"`` or ``"BDeu"``: the Dirichlet prior of nominal features' parameters.
    ess
        BDeu equivalent sample size.
    inclusion_prior
        Prior probability of each arc C → F, in (0, 1). 0.5 is the uniform prior over the
        2^N structures.
    normal_gamma
        :class:`~onlinebma.stats.NormalGammaPrior` of numeric features (``None``: its
        defaults, suited to features of roughly unit scale).
    nominal_attributes
        Features to treat as nominal even though their values are numbers.

    Examples
    --------
    A feature that tracks the class earns its arc; one that does not loses it:

    >>> import random
    >>> from onlinebma.naive_bayes import ModelAveragedNB
    >>> rng = random.Random(1)
    >>> model = ModelAveragedNB()
    >>> for _ in range(2000):
    ...     y = rng.random() < 0.5
    ...     x = {"signal": "hi" if (rng.random() < 0.9) == y else "lo",
    ...          "noise": rng.choice("abc")}
    ...     model.learn_one(x, y)
    >>> {f: round(p, 3) for f, p in model.feature_posteriors().items()}
    {'signal': 1.0, 'noise': 0.005}
    >>> round(model.predict_proba_one({"signal": "hi", "noise": "a"})[True], 3)
    0.899

    """

    def __init__(self, alpha: float = 1.0, prior: str = "K2", ess: float = 1.0,
                 inclusion_prior: float = 0.5, normal_gamma: NormalGammaPrior | None = None,
                 nominal_attributes: list | None = None):
        super().__init__(alpha=alpha, nominal_attributes=nominal_attributes)
        check_choice("prior", prior, ("K2", "BDeu"))
        check_real("ess", ess, 0.0, strict=True)
        check_real("inclusion_prior", inclusion_prior, 0.0, strict=True, high=1.0, strict_high=True)
        if normal_gamma is not None and not isinstance(normal_gamma, NormalGammaPrior):
            raise TypeError("normal_gamma must be a NormalGammaPrior or None")
        self.prior = prior
        self._cell_prior_varies = prior == "BDeu"
        self.ess = ess
        self.inclusion_prior = inclusion_prior
        self.normal_gamma = normal_gamma
        self._ng = normal_gamma or NormalGammaPrior()
        self._prior_log_odds = math.log(inclusion_prior) - math.log1p(-inclusion_prior)
        self._log_ml: dict = {}  # feature -> [log P(D_f | no arc), log P(D_f | arc)], eq. 8

    # -------------------------------------------------------------- parameters

    def _pseudo_counts(self, n_values: int) -> tuple[float, float]:
        if self.prior == "K2":
            return self.alpha, self.alpha
        n_classes = max(len(self._class_counts), 1)
        return self.ess / n_values, self.ess / (n_values * n_classes)

    def _arc_log_odds(self, f, table) -> float:
        no_arc, arc = self._log_ml[f]
        return self._prior_log_odds + arc - no_arc  # eq. 8 and the structure prior

    def _log_density(self, table: NumericTable, moments: GaussianMoments | None, x):
        if moments is None:
            return self._ng.log_predictive(x, 0, 0.0, 0.0)
        return self._ng.log_predictive(x, moments.n, moments.mean, moments.m2)

    _log_density_np = _log_density  # log_predictive takes arrays too

    # ------------------------------------------------- incremental likelihoods

    def _learned_nominal(self, f, table: NominalTable, v, y) -> None:
        log_ml = self._log_ml.get(f)
        if log_ml is None:
            log_ml = self._log_ml[f] = [0.0, 0.0]
        r = len(table.n_value)
        if v not in table.n_value:
            r += 1
            self._grow_domain(f, table, r)
        a0, a1 = self._pseudo_counts(r)
        row = table.n_joint.get(v)
        n_vy = row.get(y, 0) if row else 0
        # eq. 8 as a product of sequential predictive probabilities
        log_ml[0] += math.log((a0 + table.n_value.get(v, 0)) / (r * a0 + table.n))
        log_ml[1] += math.log((a1 + n_vy) / (r * a1 + table.n_class.get(y, 0)))

    def _grow_domain(self, f, table: NominalTable, r: int) -> None:
        """Make ``f``'s marginal likelihoods those of its data under a domain of ``r`` values."""
        if self.prior == "BDeu" or r == 1:
            self._log_ml[f][:] = self._nominal_log_ml(table, r)
            return
        # K2: cells keep their pseudo-count alpha; only each column's normaliser
        # Gamma(r alpha) / Gamma(r alpha + N_j) changes.
        a, lg = self.alpha, math.lgamma
        old, new = (r - 1) * a, r * a

        def shift(n):
            return lg(new) - lg(new + n) - lg(old) + lg(old + n)

        log_ml = self._log_ml[f]
        log_ml[0] += shift(table.n)
        log_ml[1] += sum(shift(n) for n in table.n_class.values())

    def _nominal_log_ml(self, table: NominalTable, r: int) -> list:
        """Both marginal likelihoods of a nominal feature from its counts (eq. 8)."""
        a0, a1 = self._pseudo_counts(r)
        pad = [0] * (r - len(table.n_value))
        no_arc = log_dirichlet_marginal(list(table.n_value.values()) + pad, a0)
        arc = sum(
            log_dirichlet_marginal([row.get(y, 0) for row in table.n_joint.values()] + pad, a1)
            for y in table.n_class
        )
        return [no_arc, arc]

    def _learned_numeric(self, f, table: NumericTable, x: float, y) -> None:
        log_ml = self._log_ml.get(f)
        if log_ml is None:
            log_ml = self._log_ml[f] = [0.0, 0.0]
        m = table.marginal
        log_ml[0] += self._ng.log_predictive(x, m.n, m.mean, m.m2)
        m = table.by_class.get(y)
        log_ml[1] += self._ng.log_predictive(x, m.n, m.mean, m.m2) if m else \
            self._ng.log_predictive(x, 0, 0.0, 0.0)

    def _numeric_log_ml(self, table: NumericTable) -> list:
        lm = self._ng.log_marginal
        m = table.marginal
        return [lm(m.n, m.mean, m.m2), sum(lm(c.n, c.mean, c.m2) for c in table.by_class.values())]

    def _new_class(self, y) -> None:
        if self.prior == "BDeu":  # q = |classes| changed every arc's cell pseudo-counts
            self._refresh([f for f, t in self._tables.items() if isinstance(t, NominalTable)])

    def _refresh(self, features) -> None:
        for f in features:
            t = self._tables[f]
            self._log_ml[f] = (
                self._nominal_log_ml(t, len(t.n_value)) if isinstance(t, NominalTable)
                else self._numeric_log_ml(t)
            )

    def _unit_test_params(self):
        yield {}
        yield {"prior": "BDeu", "ess": 2.0, "inclusion_prior": 0.3}
