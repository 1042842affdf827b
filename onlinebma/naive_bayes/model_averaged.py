"""Exact Bayesian model averaging over all 2^N naive structures (Dash & Cooper 2002)."""

from __future__ import annotations

import math

import numpy as np

from .. import tuning
from ..stats.gaussian import GaussianMoments, NormalGammaPrior, student_t_log_density
from ..stats.numerics import LOG_PI
from ..stats.tables import NominalTable, NumericTable
from ..validation import check_choice, check_decay, check_real
from .base import BaseNB, _add_mixture
from .counts import dirichlet_bag
from .marginals import MarginalLikelihoods
from .numbers import DEFAULT_NUMERIC

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
    alpha : float, default 1.0
        K2 pseudo-count per cell, and the class prior's ``(N_y + alpha) / (N + alpha |C|)``.
    prior : str, default 'K2'
        ``"K2"`` or ``"BDeu"``: the Dirichlet prior of nominal features' parameters.
    ess : float, default 1.0
        BDeu equivalent sample size.
    inclusion_prior : float, default 0.5
        Prior probability of each arc C → F, in (0, 1). 0.5 is the uniform prior over the
        2^N structures.
    normal_gamma : NormalGammaPrior or None, default None
        :class:`~onlinebma.stats.NormalGammaPrior` of numeric features (``None``: its
        defaults, suited to features of roughly unit scale).
    decay : float or "auto", default 1.0
        λ in (0, 1]: every count and moment is multiplied by λ after each learned record, so
        a record of age ``a`` weighs λ^a (half-life ``ln 2 / -ln λ`` records). ``"auto"``
        averages learners over a grid of rates (see :mod:`onlinebma.forgetting` and
        :meth:`decay_posterior`). 1.0: no forgetting.
    structure_decay : float, default 1.0
        α in (0, 1]: after each record the posterior over structures is flattened towards
        the prior, ``π ∝ π^α π0^(1-α)``, i.e. every arc's log odds ``L ← α L + (1-α) L0``.
        1.0: no forgetting.
    nominal_attributes : list or None, default None
        Features to treat as nominal even though their values are numbers.
    absent : str, default 'missing'
        ``"missing"`` (default): an absent key is a missing value. ``"zero"``: numeric
        features are counts (a bag of words) and an absent key is a zero count; the counts
        are one multinomial over the vocabulary, with its own arc, and a bag is scored by its
        Dirichlet-multinomial predictive (see :mod:`onlinebma.naive_bayes.counts`). K2 only.
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
                 decay: float | str = 1.0, structure_decay: float = 1.0,
                 nominal_attributes: list | None = None, absent: str = "missing",
                 numeric: str = DEFAULT_NUMERIC, sample_size: int = 500,
                 numeric_attributes: list | None = None):
        super().__init__(alpha=alpha, decay=decay, nominal_attributes=nominal_attributes,
                         absent=absent, numeric=numeric, sample_size=sample_size,
                         numeric_attributes=numeric_attributes)
        if absent == "zero" and prior == "BDeu":
            raise ValueError("absent='zero' takes prior='K2' (BDeu's cell pseudo-counts "
                             "ess / V would change every word's with each new word)")
        check_decay("structure_decay", structure_decay, auto=False)
        self.structure_decay = structure_decay
        self._forgets = self._forgets or (not self._auto and structure_decay != 1)
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
        # per feature [log P(D_f | no arc), log P(D_f | arc)] (eq. 8), kept record by record
        # (.marginals); the learning hooks below call it
        self._marginals = MarginalLikelihoods(self._tables, self._class_counts, self._clock,
                                              prior, alpha, ess, structure_decay,
                                              self._forgets, self._ng)
        # Without forgetting: per numeric feature, the Student-t predictive's constants
        # {_Marginal or class: ...} (NormalGammaPrior.predictive_params), recomputed only for
        # the moments a learned record changed, so a prediction needs no lgamma.
        # Derived state: not pickled.
        self._t_cache: dict = {}
        self._prior_t = self._ng.predictive_params(0, 0.0, 0.0)

    # -------------------------------------------------------------- parameters

    def _pseudo_counts(self, n_values: int) -> tuple[float, float]:
        return self._marginals.pseudo_counts(n_values)

    def _arc_log_odds(self, f, table) -> float:
        marginals = self._marginals
        no_arc, arc = marginals.log_ml[f]
        if self.structure_decay != 1:  # the flattening owed since the feature was last seen
            return self._prior_log_odds + self.structure_decay ** (
                self._t - marginals.last[f]) * (arc - no_arc)
        return self._prior_log_odds + arc - no_arc  # eq. 8 and the structure prior

    def _kept_log_odds(self):
        if self.structure_decay != 1:  # the flattening owed differs per feature
            return None
        return self._marginals.log_ml, self._prior_log_odds

    # ------------------------------------------------ the marginal likelihoods' hooks

    def _learned_nominal(self, f, table: NominalTable, v, y) -> None:
        self._marginals.learned_nominal(f, table, v, y, self._t)

    def _learned_bag(self, table: NominalTable, bag: list, y) -> None:
        self._marginals.learned_bag(table, bag, y, self._t)

    def _learned_numeric(self, f, table: NumericTable, x: float, y) -> None:
        self._marginals.learned_numeric(f, table, x, y, self._t)  # (with forgetting)

    def _new_class(self, y) -> None:
        self._marginals.new_class(self._t)

    def _refresh(self, features) -> None:
        self._marginals.refresh(features, self._t)
        for f in features:
            self._t_cache.pop(f, None)  # the Student-t constants of numeric features

    def _bag_densities(self, table: NominalTable, bag: list, classes, marginal: bool = True):
        return dirichlet_bag(self.alpha, len(table.n_value), self._clock.scale, table, bag,
                             classes, marginal)

    def __getstate__(self):
        return {**super().__getstate__(), "_t_cache": {}}

    def feature_statistics(self, f) -> dict:
        """:meth:`~onlinebma.naive_bayes.base.BaseNB.feature_statistics`, with the feature's
        ``"log_ml"`` (the two structures' log marginal likelihoods), ``"last"`` (the record
        they are as of) and, for a nominal feature with ``prior="BDeu"`` and no forgetting,
        ``"histogram"``."""
        marginals = self._marginals
        out = {**super().feature_statistics(f), "log_ml": marginals.log_ml[f],
               "last": marginals.last[f]}
        if marginals.histograms is not None and f in marginals.histograms:
            out["histogram"] = marginals.histograms[f]
        return out

    def _adopt_feature(self, f, statistics: dict, c: float, offset: int) -> None:
        super()._adopt_feature(f, statistics, c, offset)
        marginals = self._marginals
        marginals.log_ml[f] = statistics["log_ml"]  # sums of log probabilities: no unit
        marginals.last[f] = statistics["last"] + offset
        if "histogram" in statistics:
            marginals.histograms[f] = statistics["histogram"]
        self._t_cache.pop(f, None)  # the Gaussian's constants, until then

    def _t_constants(self, f, t: NumericTable, key) -> tuple:
        """The cached Student-t constants of ``f``'s marginal (``key`` is :class:`_Marginal`)
        or of class ``key`` (no forgetting)."""
        e = self._t_cache.get(f)
        if e is None:
            e = self._t_cache[f] = {}
        p = e.get(key)
        if p is None:
            m = t.marginal if key is _Marginal else t.by_class.get(key)
            p = e[key] = self._prior_t if m is None else self._ng.predictive_params(
                m.n, m.mean, m.m2)
        return p

    def _add_numerics(self, scores: list, pairs, classes, seen: list) -> list:
        """The numeric terms without forgetting in one loop: the Student-t
        constants cached per (feature, class) or recomputed inline (as
        :meth:`NormalGammaPrior.predictive_params` does) when a record changed them, the arc
        weights from the kept marginal likelihoods, the mixture added in place. Each feature's
        ``[log p(x), log p(x | y) for y in classes]`` is kept in ``seen`` for
        :meth:`_learn_numerics` (``None`` for a feature never learned). A wide record goes
        the array path of :mod:`~onlinebma.naive_bayes.wide`, which computes the same terms
        (and keeps its densities itself, ``seen`` left empty)."""
        if self._forgets:
            return super()._add_numerics(scores, pairs, classes, seen)
        if len(pairs) >= tuning.WIDE_FEATURES and self._arrays_apply():
            out = self._wide_numerics.student_terms(scores, pairs, classes, self._tables,
                                                    self._t, self._marginals.log_ml, self._ng,
                                                    self._prior_log_odds)
            if out is not None:
                return out
        tables, cache, log_mls = self._tables, self._t_cache, self._marginals.log_ml
        params, prior_t, prior_odds = self._ng.predictive_params, self._prior_t, \
            self._prior_log_odds
        k0, k0mu0, mu0, b2, a0h, ratios = self._ng.constants()
        cap = len(ratios)
        log, log1p, inf = math.log, math.log1p, math.inf
        add_mixture = _add_mixture
        scores = list(scores)
        keys = (_Marginal, *classes)
        for f, x in pairs:
            t = tables.get(f)
            if t is None:
                seen.append(None)
                continue
            e = cache.get(f)
            if e is None:
                e = cache[f] = {}
            by_class = t.by_class
            lps = []
            for key in keys:
                q = e.get(key)
                if q is None:
                    m = t.marginal if key is _Marginal else by_class.get(key)
                    if m is None:
                        q = prior_t
                    elif type(m.n) is int and m.n < cap:  # predictive_params, inlined
                        n, mean = m.n, m.mean
                        kn = k0 + n
                        d = mean - mu0
                        nus2 = (b2 + m.m2 + k0 * n * d * d / kn) * (kn + 1.0) / kn
                        q = ((k0mu0 + n * mean) / kn, nus2,
                             ratios[n] - 0.5 * (LOG_PI + log(nus2)), a0h + 0.5 * n)
                    else:
                        q = params(m.n, m.mean, m.m2)
                    e[key] = q
                z = x - q[0]
                u = z * z / q[1]
                lps.append(q[2] - q[3] * log1p(u) if u != inf else student_t_log_density(q, x))
            no_arc, arc_ml = log_mls[f]
            add_mixture(scores, lps, prior_odds + arc_ml - no_arc)  # eq. 8, structure prior
            seen.append(lps)
        return scores

    def _learn_numerics(self, pairs, y, w, seen) -> None:
        """Without forgetting: each feature's two sequential predictive terms (eq. 8) are
        the densities the prediction of this record computed, when there was one. A wide
        record goes the array path of :mod:`~onlinebma.naive_bayes.wide` when it can."""
        if self._forgets:
            super()._learn_numerics(pairs, y, w, seen)
            return
        if (len(pairs) >= tuning.WIDE_FEATURES and self._arrays_apply()
                and self._wide_numerics.learn(pairs, y, w, self._tables,
                                              list(self._class_counts), self._t,
                                              self._marginals.log_ml, self._ng)):
            self._t_cache.clear()  # derived from the moments this record changed
            return
        densities = None
        if seen is not None and y in self._class_counts:
            classes, densities = seen
            iy = classes.index(y) + 1
        tables, cache, log_mls = self._tables, self._t_cache, self._marginals.log_ml
        for k, (f, x) in enumerate(pairs):
            t = tables.get(f)
            if t is None:
                t = tables[f] = NumericTable()
            log_ml = log_mls.get(f)
            if log_ml is None:
                log_ml = self._marginals.current(f, self._t)
            known = densities[k] if densities is not None else None
            if known is not None:
                log_ml[0] += known[0]
                log_ml[1] += known[iy]
            else:
                log_ml[0] += student_t_log_density(self._t_constants(f, t, _Marginal), x)
                log_ml[1] += student_t_log_density(self._t_constants(f, t, y), x)
            t.update(x, y, w)
            e = cache.get(f)
            if e is not None:  # this record changes the marginal and class y only
                e.pop(_Marginal, None)
                e.pop(y, None)

    def _learn_nominals(self, pairs, y, w) -> None:
        """A wide record's nominal pairs go :meth:`_wide_marginals` when they can; with K2
        the counts and eq. 8's terms in one loop (:meth:`MarginalLikelihoods.learn_nominals
        <onlinebma.naive_bayes.marginals.MarginalLikelihoods.learn_nominals>`)."""
        if len(pairs) >= tuning.NOMINAL_FEATURES and self._wide_marginals(pairs, y, w):
            return
        if self.prior == "K2":
            self._marginals.learn_nominals(pairs, y, w, self._t)
        else:
            super()._learn_nominals(pairs, y, w)

    def _wide_marginals(self, pairs, y, w) -> bool:
        """K2 without forgetting, the array block current: eq. 8's two sequential predictive
        terms of every pair at once, from the block's counts (numpy's arithmetic, then
        ``math.log`` on each: the plain loop's floats, bit for bit), the domain growth of
        the features with a new value at once (:meth:`MarginalLikelihoods.domain_growth
        <onlinebma.naive_bayes.marginals.MarginalLikelihoods.domain_growth>`), then one loop adding
        them and counting the pairs; ``False`` (nothing changed) to go the plain way."""
        block = self._wide_nominals.current_block(self._t)
        if (self.prior != "K2" or w != 1 or block is None
                or y not in block.classes):
            return False
        tables, a = self._tables, self.alpha
        slots = block.locate(pairs)
        known = slots >= 0
        n_v, rows = block.n_value[slots], block.slot_row[slots]
        j = block.classes.index(y)
        n_vy = block.joint[j, slots]
        if not known.all():  # new values (of new features: a row of zeros)
            n_v[~known] = n_vy[~known] = 0.0
            rows[~known] = [block.rows.get(pairs[k][0], -1) for k in
                            np.flatnonzero(~known).tolist()]
        n, r, n_y = block.n[rows], block.r[rows] + ~known, block.n_class[j, rows]
        fresh = rows < 0
        n[fresh] = n_y[fresh] = 0.0
        r[fresh] = 1.0
        log = math.log
        terms0 = map(log, ((a + n_v) / (r * a + n)).tolist())
        terms1 = map(log, ((a + n_vy) / (r * a + n_y)).tolist())
        for k in np.flatnonzero(fresh).tolist():  # new features (_learned_nominal)
            self._marginals.current(pairs[k][0], self._t)
            tables[pairs[k][0]] = NominalTable()
        grown = np.flatnonzero(~known & ~fresh)  # new values: the domain grows first
        growth = None if not len(grown) else self._marginals.domain_growth(
            (pairs[k][0] for k in grown.tolist()), r[grown], n[grown],
            block.n_class[:, rows[grown]])
        if growth is not None:  # added to the terms of those features (0 elsewhere)
            g0, g1 = np.zeros(len(pairs)), np.zeros(len(pairs))
            g0[grown], g1[grown] = growth
            terms0 = map(float.__add__, g0.tolist(), terms0)
            terms1 = map(float.__add__, g1.tolist(), terms1)
        log_mls = self._marginals.log_ml
        counts = zip(*(c.astype(np.int64).tolist() for c in (n_v + 1, n_vy + 1, n_y + 1)))
        for (f, v), t0, t1, (v1, vy1, y1) in zip(pairs, terms0, terms1, counts):
            log_ml = log_mls[f]
            log_ml[0] += t0
            log_ml[1] += t1
            # NominalTable.update, written from the block's counts: calling it per pair was
            # 1.52x against 1.67x River at N = 500, K = 2, M = 100 (2.17x / 2.38x at M = 10)
            t = tables[f]
            t.n += 1
            t.n_value[v] = v1
            t.n_class[y] = y1
            if v1 == 1:  # a new value
                t.n_joint[v] = {y: 1}
            else:
                t.n_joint[v][y] = vy1
        return True

    def _log_density(self, table: NumericTable, moments: GaussianMoments | None, x):
        if moments is None:
            return self._ng.log_predictive(x, 0, 0.0, 0.0)
        c = self._clock.scale  # moments in records, not in the scaled unit
        return self._ng.log_predictive(x, moments.n * c, moments.mean, moments.m2 * c)

    _log_density_np = _log_density  # log_predictive takes arrays too

    def _rate_terms(self):
        # bags of words, BDeu (a new class changes every cell's pseudo-count) and a
        # flattening of the structure posterior: one learner per rate
        if self._zero or self.prior != "K2" or self.structure_decay != 1:
            return None
        from .rate_terms import StudentTerms

        return StudentTerms(self.alpha, self.inclusion_prior, self._ng)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"prior": "BDeu", "ess": 2.0, "inclusion_prior": 0.3}
        yield {"decay": 0.9, "structure_decay": 0.8}
        yield {"decay": "auto"}


class _Marginal:
    """The key of a feature's marginal in its cache of Student-t constants (a class: no label
    is it, and copies keep it)."""
