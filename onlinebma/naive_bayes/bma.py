"""BMA-NB: averaging over feature subsets with plug-in likelihoods (Wu, Sanner & Oliveira 2015)."""

from __future__ import annotations

import math
from array import array

import numpy as np

from .. import tuning
from ..stats.tables import NominalTable, NumericTable
from ..validation import check_real
from . import wide_nominal
from .counts import COUNTS
from .naive import NaiveBayes
from .numbers import DEFAULT_NUMERIC

__all__ = ["BMANB"]


def _xlog(n: float, a: float) -> float:
    """``n log(n + a)``, 0 when n = 0."""
    return n * math.log(n + a) if n else 0.0


_STEPS: dict = {}  # alpha -> array of _xlog(n + 1, alpha) - _xlog(n, alpha) for small n


def _steps(a: float) -> array:
    """How ``n log(n + a)`` grows when a count n < ``tuning.BMANB_STEP_TABLE`` grows by one,
    tabulated once per alpha (per process): the per-record update then costs a lookup instead
    of two logs."""
    table = _STEPS.get(a)
    if table is None:
        table = _STEPS[a] = array("d", (_xlog(n + 1, a) - _xlog(n, a)
                                        for n in range(tuning.BMANB_STEP_TABLE)))
    return table


def _plugin_log_odds(table: NominalTable, a: float, c: float) -> float:
    """Eq. 14 from the counts times ``c``, O(values x classes): sum_vy N_vy log((N_vy + a)
    / (N_y + a M)) - sum_v N_v log((N_v + a) / (N + a M))."""
    am = a * len(table.n_value)
    n = table.n * c
    out = n * math.log(n + am) - sum(_xlog(k * c, am) for k in table.n_class.values())
    out -= sum(_xlog(k * c, a) for k in table.n_value.values())
    return out + sum(_xlog(k * c, a) for row in table.n_joint.values() for k in row.values())


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
    gamma : float, default 1.0
        Γ > 0. The default 1.0 is the paper's "no prior preference" (β = 1); Γ > 1 prefers
        fewer features, Γ < 1 more. The paper tunes Γ over {0.5, 0.6, ..., 1.5} by
        cross-validation.
    alpha : float, default 1.0
        Laplace/Dirichlet pseudo-count (eq. 14) and class-prior pseudo-count.
    decay : float or "auto", default 1.0
        λ in (0, 1] or ``"auto"``, as for :class:`~onlinebma.naive_bayes.NaiveBayes`: the
        plug-in likelihoods and β = Γ^(N_k + 1) are computed from the decayed counts.
    nominal_attributes : list or None, default None
        Features to treat as nominal even though their values are numbers.
    absent : str, default 'missing'
        ``"missing"`` (default) or ``"zero"``: numeric features are counts of one multinomial
        over the vocabulary, an absent key a zero count (see
        :mod:`onlinebma.naive_bayes.counts`); its plug-in likelihood is eq. 14 over the tokens,
        and β = Γ^(tokens + 1).
    numeric : str, default '8 intervals'
        How numeric features are read: one of the interval representations of
        :data:`~onlinebma.naive_bayes.numbers.REPRESENTATIONS` (the default, chosen by the
        benchmark of docs/naive_bayes.md, "Numbers") or ``"Gaussian"``, as in
        :class:`~onlinebma.naive_bayes.NaiveBayes`; interval counts are averaged over the
        structures as nominal features are.
    sample_size : int, default 500
        A stream fixes a numeric feature's cut points from its first ``sample_size`` values
        (kept and counted then), as in :class:`~onlinebma.naive_bayes.NaiveBayes`.
    numeric_attributes : list or None, default None
        Features that are numeric whatever their first value: a value of one that is not a
        number (a ``"?"`` for a missing value read as text) is refused, not made a category.

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

    def __init__(self, gamma: float = 1.0, alpha: float = 1.0, decay: float | str = 1.0,
                 nominal_attributes: list | None = None, absent: str = "missing",
                 numeric: str = DEFAULT_NUMERIC, sample_size: int = 500,
                 numeric_attributes: list | None = None):
        super().__init__(alpha=alpha, decay=decay, nominal_attributes=nominal_attributes,
                         absent=absent, numeric=numeric, sample_size=sample_size,
                         numeric_attributes=numeric_attributes)
        check_real("gamma", gamma, 0.0, strict=True)
        self.gamma = gamma
        self._log_gamma = math.log(gamma)
        # Per nominal feature, the count-dependent parts of the plug-in log likelihoods, kept
        # incrementally: [sum_v N_v log(N_v + alpha), sum_vy N_vy log(N_vy + alpha), M,
        # sum_y N_y log(N_y + alpha M)], the last valid while the feature has M values.
        self._sums: dict = {}

    def feature_statistics(self, f) -> dict:
        """:meth:`~onlinebma.naive_bayes.base.BaseNB.feature_statistics`, with the feature's
        ``"sums"`` (its plug-in log likelihoods' count-dependent parts) when it has them."""
        out = super().feature_statistics(f)
        if f in self._sums:
            out["sums"] = self._sums[f]
        return out

    def _adopt_feature(self, f, statistics: dict, c: float, offset: int) -> None:
        super()._adopt_feature(f, statistics, c, offset)
        if "sums" in statistics:  # without forgetting (counts: c is 1)
            self._sums[f] = statistics["sums"]

    def _plugin_log_gamma(self) -> float:
        return self._log_gamma

    def _learn_nominals(self, pairs, y, w) -> None:
        """Count ``(feature, value)`` pairs of class ``y`` and keep the sums of eq. 14: one
        loop, no call per feature."""
        if self._forgets:  # every count changes with each record: no sums to keep
            super()._learn_nominals(pairs, y, w)
            return
        a, tables, all_sums = self.alpha, self._tables, self._sums
        steps = _STEPS.get(a) or _steps(a)
        log = math.log
        for f, v in pairs:
            table = tables.get(f)
            if table is None:
                table = tables[f] = NominalTable()
            sums = all_sums.get(f)
            if sums is None:
                sums = all_sums[f] = [0.0, 0.0, 0, 0.0]
            n_value = table.n_value
            n_v = n_value.get(v, 0)
            # n log(n + a) grows by (n + 1) log(n + 1 + a) - n log(n + a) when n counts one more
            if n_v:
                row, n_class = table.n_joint[v], table.n_class
                n_vy, n_y = row.get(y, 0), n_class.get(y, 0)
                sums[0] += (steps[n_v] if n_v < len(steps)
                            else _xlog(n_v + 1, a) - _xlog(n_v, a))
                sums[1] += (steps[n_vy] if n_vy < len(steps)
                            else _xlog(n_vy + 1, a) - _xlog(n_vy, a))
                m = sums[2]
                if m == len(n_value):
                    am = a * m
                    sums[3] += (n_y + 1) * log(n_y + 1 + am) - (n_y * log(n_y + am) if n_y
                                                                else 0.0)
                table.n += w  # NominalTable.update, inlined
                n_value[v] = n_v + w
                n_class[y] = n_y + w
                row[y] = n_vy + w
            else:  # a new value: M changes, so the class sum is recomputed when next needed
                sums[0] += steps[0]
                sums[1] += steps[0]
                sums[2] = 0
                table.update(v, y, w)

    def _learned_bag(self, table: NominalTable, bag: list, y) -> None:
        if self._forgets:
            return
        a = self.alpha
        sums = self._sums.get(COUNTS)
        if sums is None:
            sums = self._sums[COUNTS] = [0.0, 0.0, 0, 0.0]
        n_value, joint = table.n_value, table.n_joint
        new, total = False, 0
        for f, x in bag:  # the sums of eq. 14 grow by x tokens of word f, class y
            n_v = n_value.get(f, 0)
            row = joint.get(f)
            n_vy = row.get(y, 0) if row else 0
            new = new or not n_v
            sums[0] += _xlog(n_v + x, a) - _xlog(n_v, a)
            sums[1] += _xlog(n_vy + x, a) - _xlog(n_vy, a)
            total += x
        if new:  # the vocabulary grew: the class sum is recomputed when next needed
            sums[2] = 0
        elif sums[2] == len(n_value):
            n_y, am = table.n_class.get(y, 0), a * sums[2]
            sums[3] += _xlog(n_y + total, am) - _xlog(n_y, am)

    def _refresh(self, features) -> None:
        a = self.alpha
        for f in features:
            t = self._tables[f]
            if isinstance(t, NominalTable):
                self._sums[f] = [
                    sum(_xlog(n, a) for n in t.n_value.values()),
                    sum(_xlog(n, a) for row in t.n_joint.values() for n in row.values()),
                    0,
                    0.0,
                ]

    def _arc_log_odds(self, f, table) -> float:
        """log P(f_k = 1 | D) - log P(f_k = 0 | D), from eq. 11 with β = Γ^(N+1):
        sum_i log P(x_ik | y_i) - sum_i log P(x_ik) - (N + 1) log Γ, plug-in estimates."""
        sums = None if self._forgets else self._sums.get(f)
        if sums is not None:
            # nominal, eq. 14: sum_vy N_vy log((N_vy + a) / (N_y + a M))
            #                  - sum_v N_v log((N_v + a) / (N + a M)), from the kept sums
            n = table.n
            m = len(table.n_value)
            am = self.alpha * m
            if sums[2] != m:
                sums[2], sums[3] = m, sum(_xlog(k, am) for k in table.n_class.values())
            return sums[1] - sums[3] - sums[0] + n * math.log(n + am) - (n + 1) * self._log_gamma
        c = self._clock.scale  # counts in records, not in the scaled unit
        n = table.n * c
        if isinstance(table, NumericTable):  # Gaussians from the moments
            loglik = self._log_likelihood
            with_class = sum(loglik(table, m) for m in table.by_class.values())
            return c * (with_class - loglik(table, table.marginal)) - (n + 1) * self._log_gamma
        return _plugin_log_odds(table, self.alpha, c) - (n + 1) * self._log_gamma

    def _nominal_cells(self) -> int:
        """The array path of wide nominal records from fewer cells than the others take."""
        return tuning.BMANB_NOMINAL_CELLS

    def _wide_arc_odds(self, features, n, r, n_class):
        """:meth:`_arc_log_odds` of nominal features, as arrays (the array path of wide
        nominal records; ``n``, ``r`` and ``n_class`` the features' counts, values and counts
        by class): the value sums kept, the class sums sum_y N_y log(N_y + a M) from
        ``n_class`` (one product for all features: the kept ones go stale with each new
        value, common in wide records)."""
        sums = wide_nominal.gathered(self._sums, features, 4)
        am = self.alpha * r
        class_sums = (n_class * np.log(n_class + am)).sum(axis=0)  # a class not met adds 0
        return sums[:, 1] - class_sums - sums[:, 0] + n * np.log(n + am) - (n + 1) * self._log_gamma

    def _rate_terms(self):
        if self._zero:  # bags of words: one learner per rate
            return None
        from .rate_terms import PluginTerms

        return PluginTerms(self.alpha, self.gamma)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"gamma": 1.2, "alpha": 0.5}
        yield {"decay": 0.9}
        yield {"decay": "auto"}
