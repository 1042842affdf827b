"""The marginal likelihoods of :class:`~onlinebma.naive_bayes.ModelAveragedNB`, kept
incrementally (Dash & Cooper 2002, eq. 8).

Per feature, ``[log P(D_f | no arc), log P(D_f | arc)]`` is kept as the sum of the records'
sequential predictive log probabilities, so a record costs O(observed features). When a
domain grows (a new value, a new class) the sums become those of the batch model with the
enlarged domain: with K2 a new value changes only that feature's normalisers; with BDeu a new
value recomputes that feature from histograms of its counts, a new class every nominal
feature. With ``structure_decay`` below 1 the sums owe a flattening since the feature was last
seen, applied when it is next read.
"""

from __future__ import annotations

import math

import numpy as np

from ..stats.dirichlet import log_dirichlet_marginal
from ..stats.tables import NominalTable, NumericTable
from .counts import COUNTS, dirichlet_bag

__all__ = ["MarginalLikelihoods"]


class MarginalLikelihoods:
    """The marginal likelihoods of :class:`~onlinebma.naive_bayes.ModelAveragedNB`'s
    features (eq. 8), kept current record by record; the learner holds one (its
    ``_marginals``) and calls it from its learning hooks.

    It is given at construction references to the learner's tables and class counts (read;
    a new nominal feature's table is added to the tables) and its clock, which it reads
    when called; the number of records the learner learned is an argument of the methods
    that need it.

    Parameters
    ----------
    tables : dict
        The learner's ``{feature: NominalTable or NumericTable}``.
    class_counts : dict
        The learner's ``{label: weight of its records}``.
    clock : ScaledClock
        The learner's clock of forgetting (:class:`~onlinebma.forgetting.ScaledClock`).
    prior : str
        ``"K2"`` or ``"BDeu"``: the Dirichlet prior of nominal features.
    alpha : float
        The K2 pseudo-count per cell.
    ess : float
        The BDeu equivalent sample size.
    structure_decay : float
        α in (0, 1]: the flattening of the posterior over structures after each record.
    forgets : bool
        Whether the learner forgets (``decay`` or ``structure_decay`` below 1).
    normal_gamma : NormalGammaPrior
        The Normal-Gamma prior of numeric features.

    Attributes
    ----------
    log_ml : dict
        ``{feature: [log P(D_f | no arc), log P(D_f | arc)]}``, kept as sums of the records'
        sequential predictive log probabilities; with ``structure_decay`` α < 1 both are as
        of record ``last[f]`` and owe α^(records since) (step 3, applied lazily).
    last : dict
        ``{feature: the record its log_ml is as of}``.
    histograms : dict or None
        BDeu without forgetting: per nominal feature, how many values / (value, class)
        cells have each count, ``[{count: cells}, {count: cells}]``. A new value changes
        every cell's pseudo-count, and the marginal likelihoods are recomputed from these
        histograms in O(distinct counts), not O(values). ``None`` otherwise.

    Examples
    --------
    Two records, ``red`` of class ``yes`` then ``blue`` of class ``no``, under K2 with unit
    pseudo-counts: without the arc the feature's sequence has probability 1/2 · 1/3, with
    it each class's single value 1/2 · 1/2 (Dirichlet-multinomial predictives):

    >>> import math
    >>> from onlinebma.forgetting import ScaledClock
    >>> from onlinebma.stats import NormalGammaPrior
    >>> from onlinebma.naive_bayes.marginals import MarginalLikelihoods
    >>> tables, class_counts = {}, {}
    >>> marginals = MarginalLikelihoods(tables, class_counts, ScaledClock(1), "K2", 1.0,
    ...                                 1.0, 1.0, False, NormalGammaPrior())
    >>> marginals.learn_nominals([("colour", "red")], "yes", 1, records=0)
    >>> class_counts["yes"] = 1  # the learner counts the class
    >>> marginals.learn_nominals([("colour", "blue")], "no", 1, records=1)
    >>> [round(math.exp(v), 12) for v in marginals.log_ml["colour"]]
    [0.166666666667, 0.25]
    """

    def __init__(self, tables: dict, class_counts: dict, clock, prior: str, alpha: float,
                 ess: float, structure_decay: float, forgets: bool, normal_gamma):
        self.tables = tables
        self.class_counts = class_counts
        self.clock = clock
        self.prior = prior
        self.alpha = alpha
        self.ess = ess
        self.structure_decay = structure_decay
        self.forgets = forgets
        self.normal_gamma = normal_gamma
        self.log_ml: dict = {}
        self.last: dict = {}
        self.histograms: dict | None = {} if prior == "BDeu" and not forgets else None

    def pseudo_counts(self, n_values: int) -> tuple[float, float]:
        """Dirichlet pseudo-count per cell without and with the arc, for a feature with
        ``n_values`` values (BDeu: ``ess / r`` and ``ess / (r q)``, ``q`` the classes)."""
        if self.prior == "K2":
            return self.alpha, self.alpha
        n_classes = max(len(self.class_counts), 1)
        return self.ess / n_values, self.ess / (n_values * n_classes)

    def current(self, f, records: int) -> list:
        """``f``'s marginal likelihoods as of ``records`` records learned (with the
        flattening owed applied; a feature not seen yet starts at ``[0, 0]``)."""
        log_ml = self.log_ml.get(f)
        if log_ml is None:
            log_ml = self.log_ml[f] = [0.0, 0.0]
            self.last[f] = records
        elif self.structure_decay != 1:
            c = self.structure_decay ** (records - self.last[f])
            log_ml[0] *= c
            log_ml[1] *= c
            self.last[f] = records
        return log_ml

    def learn_nominals(self, pairs, y, w, records: int) -> None:
        """K2: count a record's nominal ``pairs`` of class ``y`` with weight ``w`` in the
        tables, adding each pair's two sequential predictive terms (eq. 8) to its marginal
        likelihoods (:meth:`learned_nominal`, fused with the count update when the value was
        seen before)."""
        # with forgetting the pseudo-count is in the counts' scaled unit and the flattening
        # owed is applied first, as in learned_nominal
        tables, log_mls, log = self.tables, self.log_ml, math.log
        a = self.alpha * self.clock.unit
        forgets_structure = self.structure_decay != 1
        for f, v in pairs:
            t = tables.get(f)
            n_v = t.n_value.get(v) if t is not None else None
            if n_v is None:  # a new feature or value: the domain grows
                if t is None:
                    t = tables[f] = NominalTable()
                self.learned_nominal(f, t, v, y, records)
                t.update(v, y, w)
            else:  # and NominalTable.update, inlined
                log_ml = log_mls[f] if not forgets_structure else self.current(f, records)
                n_value, n_class, row, n = t.n_value, t.n_class, t.n_joint[v], t.n
                ra = len(n_value) * a
                n_y, n_vy = n_class.get(y, 0), row.get(y, 0)
                log_ml[0] += log((a + n_v) / (ra + n))
                log_ml[1] += log((a + n_vy) / (ra + n_y))
                t.n = n + w
                n_value[v] = n_v + w
                n_class[y] = n_y + w
                row[y] = n_vy + w

    def learned_nominal(self, f, table: NominalTable, v, y, records: int) -> None:
        """Before ``table`` counts ``(v, y)``: the value's two sequential predictive terms
        (eq. 8) added to ``f``'s marginal likelihoods, its domain grown first when ``v`` is
        new."""
        log_ml = self.current(f, records)
        r = len(table.n_value)
        if v not in table.n_value:
            r += 1
            self.grow_domain(f, table, r)
        a0, a1 = self.pseudo_counts(r)
        u = self.clock.unit  # pseudo-counts in the counts' scaled unit
        a0, a1 = a0 * u, a1 * u
        row = table.n_joint.get(v)
        n_vy = row.get(y, 0) if row else 0
        if self.histograms is not None:
            h0, h1 = self.histograms.get(f) or self.histograms.setdefault(f, [{}, {}])
            _count_grows(h0, table.n_value.get(v, 0))
            _count_grows(h1, n_vy)
        # eq. 8 as a product of sequential predictive probabilities
        log_ml[0] += math.log((a0 + table.n_value.get(v, 0)) / (r * a0 + table.n))
        log_ml[1] += math.log((a1 + n_vy) / (r * a1 + table.n_class.get(y, 0)))

    def grow_domain(self, f, table: NominalTable, r: int) -> None:
        """Re-express ``f``'s marginal likelihoods under a domain of ``r`` values: add
        ``log P(D | r) - log P(D | r - 1)`` of the current (decayed) counts; without
        forgetting, the result is the batch marginal likelihood under the new domain."""
        if r == 1:  # a new feature: no data yet
            return
        log_ml = self.log_ml[f]
        if self.prior == "BDeu":
            new = self.nominal_log_ml(f, table, r)
            if self.forgets:
                old = self.nominal_log_ml(f, table, r - 1)
                log_ml[0] += new[0] - old[0]
                log_ml[1] += new[1] - old[1]
            else:
                log_ml[:] = new
            return
        # K2: cells keep their pseudo-count alpha; only each column's normaliser
        # Gamma(r alpha) / Gamma(r alpha + N_j) changes, by
        # lgamma(r a) - lgamma((r-1) a) + lgamma((r-1) a + N_j) - lgamma(r a + N_j).
        a, lg, c = self.alpha, math.lgamma, self.clock.scale
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

    def domain_growth(self, features, sizes, n, n_class):
        """:meth:`grow_domain` of several features at once (the array path of wide records,
        where most values of a record can be new; ``features`` an iterable of their names,
        read only on the fallback): ``sizes`` their new numbers of values,
        ``n`` their counts, ``n_class`` their counts by class (class x feature; a class the
        feature has not seen, count 0, is not in its sum), all arrays. With K2, unit
        pseudo-counts and no forgetting the additions to both marginal likelihoods are
        returned as two arrays (the Gamma step of each size computed once, as there);
        otherwise they are applied feature by feature and ``None`` is returned."""
        if self.prior != "K2" or self.alpha != 1 or self.clock.scale != 1:
            tables = self.tables
            for f, r in zip(features, sizes.tolist()):
                self.grow_domain(f, tables[f], int(r))
            return None
        old = sizes - 1.0
        # lgamma(r) - lgamma(r - 1) as grow_domain computes it, once per distinct size
        distinct, at = np.unique(sizes, return_inverse=True)
        step = np.array([math.lgamma(r) - math.lgamma(r - 1) for r in distinct.tolist()])[at]
        by_class = np.where(n_class > 0, step - np.log(old + n_class), 0.0)  # classes seen
        return step - np.log(old + n), by_class.sum(axis=0)

    def nominal_log_ml(self, f, table: NominalTable, r: int,
                       n_classes: int | None = None) -> list:
        """Both marginal likelihoods of nominal feature ``f`` from its (decayed) counts
        (eq. 8), under a domain of ``r`` values and, for BDeu, ``n_classes`` classes."""
        if self.prior == "K2":
            a0 = a1 = self.alpha
        else:
            q = n_classes or max(len(self.class_counts), 1)
            a0, a1 = self.ess / r, self.ess / (r * q)
        if self.histograms is not None:
            h0, h1 = self.histograms.get(f) or self.histograms.setdefault(f, [{}, {}])
            lg = math.lgamma
            cells0 = sum(m * (lg(a0 + k) - lg(a0)) for k, m in h0.items())
            cells1 = sum(m * (lg(a1 + k) - lg(a1)) for k, m in h1.items())
            ra0, ra1 = r * a0, r * a1
            return [lg(ra0) - lg(ra0 + table.n) + cells0,
                    sum(lg(ra1) - lg(ra1 + n) for n in table.n_class.values()) + cells1]
        c = self.clock.scale
        pad = [0] * (r - len(table.n_value))
        no_arc = log_dirichlet_marginal([n * c for n in table.n_value.values()] + pad, a0)
        arc = sum(
            log_dirichlet_marginal([row.get(y, 0) * c for row in table.n_joint.values()] + pad, a1)
            for y in table.n_class
        )
        return [no_arc, arc]

    def learned_bag(self, table: NominalTable, bag: list, y, records: int) -> None:
        """Before ``table`` (:data:`~.counts.COUNTS`) counts ``bag``: the bag's
        Dirichlet-multinomial predictives added to the marginal likelihoods of the variable
        "word" (eq. 8), the vocabulary grown first by its new words."""
        log_ml = self.current(COUNTS, records)
        r = len(table.n_value)
        for f, _ in bag:
            if f not in table.n_value:  # a new word: the batch model on the larger vocabulary
                r += 1
                self.grow_domain(COUNTS, table, r)
        # eq. 8 for the variable "word": the product of the bags' sequential predictives
        none, (arc,) = dirichlet_bag(self.alpha, r, self.clock.scale, table, bag, [y])
        log_ml[0] += none
        log_ml[1] += arc

    def learned_numeric(self, f, table: NumericTable, x: float, y, records: int) -> None:
        """Before ``table`` counts ``(x, y)``: the two Student-t predictive terms (eq. 8)
        added to ``f``'s marginal likelihoods."""
        log_ml = self.current(f, records)
        c = self.clock.scale  # moments in records, not in the scaled unit
        predictive = self.normal_gamma.log_predictive
        m = table.marginal
        log_ml[0] += predictive(x, m.n * c, m.mean, m.m2 * c)
        m = table.by_class.get(y)
        log_ml[1] += predictive(x, m.n * c, m.mean, m.m2 * c) if m else \
            predictive(x, 0, 0.0, 0.0)

    def new_class(self, records: int) -> None:
        """After a new class was first counted: with BDeu, ``q = |classes|`` changed every
        arc's cell pseudo-counts, so every nominal feature's arc likelihood is re-expressed."""
        if self.prior != "BDeu":
            return
        nominal = [f for f, t in self.tables.items() if isinstance(t, NominalTable)]
        if not self.forgets:
            self.refresh(nominal, records)
            return
        q = len(self.class_counts)
        for f in nominal:
            t, log_ml = self.tables[f], self.current(f, records)
            r = len(t.n_value)
            log_ml[1] += (self.nominal_log_ml(f, t, r, q)[1]
                          - self.nominal_log_ml(f, t, r, q - 1)[1])

    def refresh(self, features, records: int) -> None:
        """Recompute the marginal likelihoods of ``features`` from their counts (after a
        batch update or a merge; no forgetting), as of ``records`` records learned."""
        lm = self.normal_gamma.log_marginal
        for f in features:
            self.last[f] = records
            t = self.tables[f]
            if isinstance(t, NominalTable):
                if self.histograms is not None:
                    self.histograms[f] = [
                        _histogram(t.n_value.values()),
                        _histogram(n for row in t.n_joint.values() for n in row.values())]
                self.log_ml[f] = self.nominal_log_ml(f, t, len(t.n_value))
            else:
                m = t.marginal
                self.log_ml[f] = [lm(m.n, m.mean, m.m2),
                                  sum(lm(c.n, c.mean, c.m2) for c in t.by_class.values())]


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
