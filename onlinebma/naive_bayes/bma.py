"""BMA-NB: averaging over all feature subsets with plug-in likelihoods (Wu, Sanner & Oliveira 2015)."""

from __future__ import annotations

import math

from ..stats.tables import NominalTable
from .base import log_sigmoid
from .naive import NaiveBayes

__all__ = ["BMANB"]


def _xlog(n: float, a: float) -> float:
    """``n log(n + a)``, 0 when n = 0."""
    return n * math.log(n + a) if n else 0.0


class BMANB(NaiveBayes):
    """Bayesian model averaging naive Bayes (BMA-NB), eq. 11 of Wu et al. 2015.

    Every subset of features is a model; averaging all 2^N of them factorises per feature.
    Feature k is used (f_k = 1) with prior odds 1/β against not used, and β = Γ^(N_k + 1)
    (eq. 9 and 13), ``N_k`` being the records in which feature k was observed. The
    likelihoods are plug-in (eq. 11, 14): the training data's probability under the smoothed
    estimates ``(#D{x_k ∧ y} + alpha) / (#D{y} + alpha M)`` with the class (used) or
    ``(#D{x_k} + alpha) / (N + alpha M)`` without it (not used), and Gaussians for numeric
    features as in :class:`~onlinebma.naive_bayes.NaiveBayes`. With every feature always
    used this is exactly ``NaiveBayes``.

    Because plug-in likelihoods always favour the larger model by about N times the
    empirical mutual information, Γ acts as a threshold: asymptotically a feature is kept
    when its mutual information with the class exceeds log Γ nats per record.

    Parameters
    ----------
    gamma
        Γ > 0. The default 1.0 is the paper's "no prior preference" (β = 1); Γ > 1 prefers
        fewer features, Γ < 1 more. The paper tunes Γ over {0.5, 0.6, ..., 1.5} by
        cross-validation.
    alpha
        Laplace/Dirichlet pseudo-count (eq. 14) and class-prior pseudo-count.
    nominal_attributes
        Features to treat as nominal even though their values are numbers.

    Examples
    --------
    >>> import random
    >>> from onlinebma.naive_bayes import BMANB
    >>> rng = random.Random(1)
    >>> model = BMANB(gamma=1.05)
    >>> for _ in range(300):
    ...     y = rng.random() < 0.5
    ...     model.learn_one({"signal": "hi" if (rng.random() < 0.9) == y else "lo",
    ...                      "noise": rng.choice("abc")}, y)
    >>> {f: round(p, 3) for f, p in model.feature_posteriors().items()}
    {'signal': 1.0, 'noise': 0.0}

    """

    def __init__(self, gamma: float = 1.0, alpha: float = 1.0,
                 nominal_attributes: list | None = None):
        super().__init__(alpha=alpha, nominal_attributes=nominal_attributes)
        if not (isinstance(gamma, (int, float)) and math.isfinite(gamma) and gamma > 0):
            raise ValueError(f"gamma must be a positive finite number, got {gamma!r}")
        self.gamma = gamma
        self._log_gamma = math.log(gamma)
        # Per nominal feature: sum_v N_v log(N_v + alpha) and sum_vy N_vy log(N_vy + alpha),
        # the count-dependent parts of the plug-in log likelihoods, kept incrementally.
        self._xlog_value: dict = {}
        self._xlog_joint: dict = {}

    def _learned_nominal(self, f, table: NominalTable, v, y) -> None:
        a = self.alpha
        n_v = table.n_value.get(v, 0)
        row = table.n_joint.get(v)
        n_vy = row.get(y, 0) if row else 0
        self._xlog_value[f] = self._xlog_value.get(f, 0.0) + _xlog(n_v + 1, a) - _xlog(n_v, a)
        self._xlog_joint[f] = self._xlog_joint.get(f, 0.0) + _xlog(n_vy + 1, a) - _xlog(n_vy, a)

    def _refresh(self, features) -> None:
        a = self.alpha
        for f in features:
            t = self._tables[f]
            if isinstance(t, NominalTable):
                self._xlog_value[f] = sum(_xlog(n, a) for n in t.n_value.values())
                self._xlog_joint[f] = sum(
                    _xlog(n, a) for row in t.n_joint.values() for n in row.values()
                )

    def _plugin_log_likelihoods(self, f, table) -> tuple[float, float]:
        """``(sum_i log P(x_ik), sum_i log P(x_ik | y_i))`` over the training records."""
        if isinstance(table, NominalTable):
            a, m = self.alpha, len(table.n_value)
            without = self._xlog_value[f] - _xlog(table.n, a * m)
            with_class = self._xlog_joint[f] - sum(
                _xlog(n, a * m) for n in table.n_class.values()
            )
            return without, with_class
        loglik = self._log_likelihood
        return (
            loglik(table, table.marginal),
            sum(loglik(table, m) for m in table.by_class.values()),
        )

    def _log_weights(self, f, table) -> tuple[float, float]:
        without, with_class = self._plugin_log_likelihoods(f, table)
        d = with_class - without - (table.n + 1) * self._log_gamma  # eq. 11 with β = Γ^(N+1)
        return log_sigmoid(-d), log_sigmoid(d)

    def feature_posteriors(self) -> dict:
        """``{feature: P(f_k = 1 | data)}``, current after every record."""
        return {f: math.exp(self._log_weights(f, t)[1]) for f, t in self._tables.items()}

    def _unit_test_params(self):
        yield {}
        yield {"gamma": 1.2, "alpha": 0.5}
