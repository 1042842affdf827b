"""Exact Bayesian model averaging over all 2^N naive structures (Dash & Cooper 2002)."""

from __future__ import annotations

import math

from ..stats.dirichlet import log_dirichlet_marginal
from ..stats.gaussian import GaussianMoments, NormalGammaPrior, student_t_log_density
from ..stats.numerics import LOG_PI
from ..stats.tables import NominalTable, NumericTable
from ..validation import check_choice, check_real
from .base import BaseNB, _add_mixture
from .counts import COUNTS, dirichlet_bag
from .decay import check_decay

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
    decay
        λ in (0, 1]: every count and moment is multiplied by λ after each learned record, so
        a record of age ``a`` weighs λ^a (half-life ``ln 2 / -ln λ`` records). ``"auto"``
        averages learners over a grid of rates (see :mod:`onlinebma.naive_bayes.decay` and
        :meth:`decay_posterior`). 1.0: no forgetting.
    structure_decay
        α in (0, 1]: after each record the posterior over structures is flattened towards
        the prior, ``π ∝ π^α π0^(1-α)``, i.e. every arc's log odds ``L ← α L + (1-α) L0``.
        1.0: no forgetting.
    nominal_attributes
        Features to treat as nominal even though their values are numbers.
    absent
        ``"missing"`` (default): an absent key is a missing value. ``"zero"``: numeric
        features are counts (a bag of words) and an absent key is a zero count; the counts
        are one multinomial over the vocabulary, with its own arc, and a bag is scored by its
        Dirichlet-multinomial predictive (see :mod:`onlinebma.naive_bayes.counts`). K2 only.

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
                 nominal_attributes: list | None = None, absent: str = "missing"):
        super().__init__(alpha=alpha, decay=decay, nominal_attributes=nominal_attributes,
                         absent=absent)
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
        self._odds_from_log_ml = structure_decay == 1
        # feature -> [log P(D_f | no arc), log P(D_f | arc)] (eq. 8), kept as sums of the
        # records' predictive log probabilities (issue 10, step 1). With structure_decay α < 1
        # both are as of record _last[f] and owe α^(records since) (step 3, applied lazily).
        self._log_ml: dict = {}
        self._last: dict = {}
        # BDeu without forgetting: per nominal feature, how many values / (value, class) cells
        # have each count, [{count: cells}, {count: cells}]. A new value changes every cell's
        # pseudo-count, and the marginal likelihoods are recomputed from these histograms in
        # O(distinct counts), not O(values) (issue 13, item 9).
        self._histograms: dict | None = {} if prior == "BDeu" and not self._forgets else None
        # Without forgetting: per numeric feature, the Student-t predictive's constants
        # {_Marginal or class: ...} (NormalGammaPrior.predictive_params), recomputed only for
        # the moments a learned record changed, so a prediction needs no lgamma (issue 17).
        # Derived state: not pickled.
        self._t_cache: dict = {}
        self._prior_t = self._ng.predictive_params(0, 0.0, 0.0)

    # -------------------------------------------------------------- parameters

    def _pseudo_counts(self, n_values: int) -> tuple[float, float]:
        if self.prior == "K2":
            return self.alpha, self.alpha
        n_classes = max(len(self._class_counts), 1)
        return self.ess / n_values, self.ess / (n_values * n_classes)

    def _arc_log_odds(self, f, table) -> float:
        no_arc, arc = self._log_ml[f]
        if self.structure_decay != 1:  # the flattening owed since the feature was last seen
            return self._prior_log_odds + self.structure_decay ** (self._t - self._last[f]) * (
                arc - no_arc)
        return self._prior_log_odds + arc - no_arc  # eq. 8 and the structure prior

    def __getstate__(self):
        return {**super().__getstate__(), "_t_cache": {}}

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
        """The numeric terms without forgetting in one loop (issue 17): the Student-t
        constants cached per (feature, class) or recomputed inline (as
        :meth:`NormalGammaPrior.predictive_params` does) when a record changed them, the arc
        weights from the kept marginal likelihoods, the mixture added in place. Each feature's
        ``[log p(x), log p(x | y) for y in classes]`` is kept in ``seen`` for
        :meth:`_learn_numerics` (``None`` for a feature never learned)."""
        if self._forgets:
            return super()._add_numerics(scores, pairs, classes, seen)
        tables, cache, log_mls = self._tables, self._t_cache, self._log_ml
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
        the densities the prediction of this record computed, when there was one."""
        if self._forgets:
            super()._learn_numerics(pairs, y, w, seen)
            return
        densities = None
        if seen is not None and y in self._class_counts:
            classes, densities = seen
            iy = classes.index(y) + 1
        tables, cache, log_mls = self._tables, self._t_cache, self._log_ml
        for k, (f, x) in enumerate(pairs):
            t = tables.get(f)
            if t is None:
                t = tables[f] = NumericTable()
            log_ml = log_mls.get(f)
            if log_ml is None:
                log_ml = self._current_log_ml(f)
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

    def _log_density(self, table: NumericTable, moments: GaussianMoments | None, x):
        if moments is None:
            return self._ng.log_predictive(x, 0, 0.0, 0.0)
        c = self._scale  # moments in records, not in the scaled unit
        return self._ng.log_predictive(x, moments.n * c, moments.mean, moments.m2 * c)

    _log_density_np = _log_density  # log_predictive takes arrays too

    # ------------------------------------------------- incremental likelihoods

    def _current_log_ml(self, f) -> list:
        """``f``'s marginal likelihoods as of now (with the flattening owed applied)."""
        log_ml = self._log_ml.get(f)
        if log_ml is None:
            log_ml = self._log_ml[f] = [0.0, 0.0]
            self._last[f] = self._t
        elif self.structure_decay != 1:
            c = self.structure_decay ** (self._t - self._last[f])
            log_ml[0] *= c
            log_ml[1] *= c
            self._last[f] = self._t
        return log_ml

    def _learn_nominals(self, pairs, y, w) -> None:
        if self.prior != "K2":
            super()._learn_nominals(pairs, y, w)
            return
        # K2, a value seen before: _learned_nominal's two sequential predictive terms (eq. 8),
        # fused with the count update (issue 17); with forgetting the pseudo-count is in the
        # counts' scaled unit and the flattening owed is applied first, as there.
        tables, log_mls, log = self._tables, self._log_ml, math.log
        a = self.alpha * self._unit
        flatten = self._current_log_ml if self.structure_decay != 1 else None
        for f, v in pairs:
            t = tables.get(f)
            n_v = t.n_value.get(v) if t is not None else None
            if n_v is None:  # a new feature or value: the domain grows
                if t is None:
                    t = tables[f] = NominalTable()
                self._learned_nominal(f, t, v, y)
                t.update(v, y, w)
            else:  # and NominalTable.update, inlined
                log_ml = log_mls[f] if flatten is None else flatten(f)
                n_value, n_class, row, n = t.n_value, t.n_class, t.n_joint[v], t.n
                ra = len(n_value) * a
                n_y, n_vy = n_class.get(y, 0), row.get(y, 0)
                log_ml[0] += log((a + n_v) / (ra + n))
                log_ml[1] += log((a + n_vy) / (ra + n_y))
                t.n = n + w
                n_value[v] = n_v + w
                n_class[y] = n_y + w
                row[y] = n_vy + w

    def _learned_nominal(self, f, table: NominalTable, v, y) -> None:
        log_ml = self._current_log_ml(f)
        r = len(table.n_value)
        if v not in table.n_value:
            r += 1
            self._grow_domain(f, table, r)
        a0, a1 = self._pseudo_counts(r)
        u = self._unit  # pseudo-counts in the counts' scaled unit
        a0, a1 = a0 * u, a1 * u
        row = table.n_joint.get(v)
        n_vy = row.get(y, 0) if row else 0
        if self._histograms is not None:
            h0, h1 = self._histograms.get(f) or self._histograms.setdefault(f, [{}, {}])
            _count_grows(h0, table.n_value.get(v, 0))
            _count_grows(h1, n_vy)
        # eq. 8 as a product of sequential predictive probabilities (issue 10, step 1)
        log_ml[0] += math.log((a0 + table.n_value.get(v, 0)) / (r * a0 + table.n))
        log_ml[1] += math.log((a1 + n_vy) / (r * a1 + table.n_class.get(y, 0)))

    def _grow_domain(self, f, table: NominalTable, r: int) -> None:
        """Re-express ``f``'s marginal likelihoods under a domain of ``r`` values: add
        ``log P(D | r) - log P(D | r - 1)`` of the current (decayed) counts; without
        forgetting, the result is the batch marginal likelihood under the new domain."""
        if r == 1:  # a new feature: no data yet
            return
        log_ml = self._log_ml[f]
        if self.prior == "BDeu":
            new = self._nominal_log_ml(f, table, r)
            if self._forgets:
                old = self._nominal_log_ml(f, table, r - 1)
                log_ml[0] += new[0] - old[0]
                log_ml[1] += new[1] - old[1]
            else:
                log_ml[:] = new
            return
        # K2: cells keep their pseudo-count alpha; only each column's normaliser
        # Gamma(r alpha) / Gamma(r alpha + N_j) changes, by
        # lgamma(r a) - lgamma((r-1) a) + lgamma((r-1) a + N_j) - lgamma(r a + N_j).
        a, lg, c = self.alpha, math.lgamma, self._scale
        old, new = (r - 1) * a, r * a
        step = lg(new) - lg(old)
        if a == 1 and c == 1:  # Gamma(z) / Gamma(z + 1) = 1 / z
            log, n = math.log, table.n
            log_ml[0] += step - log(old + n)
            log_ml[1] += len(table.n_class) * step - sum(log(old + n)
                                                         for n in table.n_class.values())
            return
        log_ml[0] += step + lg(old + table.n * c) - lg(new + table.n * c)
        log_ml[1] += len(table.n_class) * step + sum(lg(old + n * c) - lg(new + n * c)
                                                     for n in table.n_class.values())

    def _nominal_log_ml(self, f, table: NominalTable, r: int,
                        n_classes: int | None = None) -> list:
        """Both marginal likelihoods of nominal feature ``f`` from its (decayed) counts
        (eq. 8), under a domain of ``r`` values and, for BDeu, ``n_classes`` classes."""
        if self.prior == "K2":
            a0 = a1 = self.alpha
        else:
            q = n_classes or max(len(self._class_counts), 1)
            a0, a1 = self.ess / r, self.ess / (r * q)
        if self._histograms is not None:
            h0, h1 = self._histograms.get(f) or self._histograms.setdefault(f, [{}, {}])
            lg = math.lgamma
            cells0 = sum(m * (lg(a0 + k) - lg(a0)) for k, m in h0.items())
            cells1 = sum(m * (lg(a1 + k) - lg(a1)) for k, m in h1.items())
            ra0, ra1 = r * a0, r * a1
            return [lg(ra0) - lg(ra0 + table.n) + cells0,
                    sum(lg(ra1) - lg(ra1 + n) for n in table.n_class.values()) + cells1]
        c = self._scale
        pad = [0] * (r - len(table.n_value))
        no_arc = log_dirichlet_marginal([n * c for n in table.n_value.values()] + pad, a0)
        arc = sum(
            log_dirichlet_marginal([row.get(y, 0) * c for row in table.n_joint.values()] + pad, a1)
            for y in table.n_class
        )
        return [no_arc, arc]

    def _bag_densities(self, table: NominalTable, bag: list, classes, marginal: bool = True):
        return dirichlet_bag(self.alpha, len(table.n_value), self._scale, table, bag, classes,
                             marginal)

    def _learned_bag(self, table: NominalTable, bag: list, y) -> None:
        log_ml = self._current_log_ml(COUNTS)
        r = len(table.n_value)
        for f, _ in bag:
            if f not in table.n_value:  # a new word: the batch model on the larger vocabulary
                r += 1
                self._grow_domain(COUNTS, table, r)
        # eq. 8 for the variable "word": the product of the bags' sequential predictives
        none, (arc,) = dirichlet_bag(self.alpha, r, self._scale, table, bag, [y])
        log_ml[0] += none
        log_ml[1] += arc

    def _learned_numeric(self, f, table: NumericTable, x: float, y) -> None:
        log_ml = self._current_log_ml(f)  # forgetting (_learn_numerics does the rest)
        c = self._scale  # moments in records, not in the scaled unit
        m = table.marginal
        log_ml[0] += self._ng.log_predictive(x, m.n * c, m.mean, m.m2 * c)
        m = table.by_class.get(y)
        log_ml[1] += self._ng.log_predictive(x, m.n * c, m.mean, m.m2 * c) if m else \
            self._ng.log_predictive(x, 0, 0.0, 0.0)

    def _numeric_log_ml(self, table: NumericTable) -> list:
        lm = self._ng.log_marginal
        m = table.marginal
        return [lm(m.n, m.mean, m.m2), sum(lm(c.n, c.mean, c.m2) for c in table.by_class.values())]

    def _new_class(self, y) -> None:
        if self.prior != "BDeu":
            return
        # q = |classes| changed every arc's cell pseudo-counts
        nominal = [f for f, t in self._tables.items() if isinstance(t, NominalTable)]
        if not self._forgets:
            self._refresh(nominal)
            return
        q = len(self._class_counts)
        for f in nominal:
            t, log_ml = self._tables[f], self._current_log_ml(f)
            r = len(t.n_value)
            log_ml[1] += (self._nominal_log_ml(f, t, r, q)[1]
                          - self._nominal_log_ml(f, t, r, q - 1)[1])

    def _refresh(self, features) -> None:
        for f in features:
            t = self._tables[f]
            if isinstance(t, NominalTable):
                if self._histograms is not None:
                    self._histograms[f] = [
                        _histogram(t.n_value.values()),
                        _histogram(n for row in t.n_joint.values() for n in row.values())]
                self._log_ml[f] = self._nominal_log_ml(f, t, len(t.n_value))
            else:
                self._log_ml[f] = self._numeric_log_ml(t)
                self._t_cache.pop(f, None)

    def _unit_test_params(self):
        yield {}
        yield {"prior": "BDeu", "ess": 2.0, "inclusion_prior": 0.3}
        yield {"decay": 0.9, "structure_decay": 0.8}
        yield {"decay": "auto"}


class _Marginal:
    """The key of a feature's marginal in its cache of Student-t constants (a class: no label
    is it, and copies keep it)."""


def _count_grows(histogram: dict, k: int) -> None:
    """One cell's count goes from ``k`` to ``k + 1`` (``k = 0``: a new cell)."""
    if k:
        m = histogram[k] - 1
        if m:
            histogram[k] = m
        else:
            del histogram[k]
    histogram[k + 1] = histogram.get(k + 1, 0) + 1


def _histogram(counts) -> dict:
    """``{count: cells}`` of the nonzero counts."""
    out: dict = {}
    for k in counts:
        if k:
            out[k] = out.get(k, 0) + 1
    return out
