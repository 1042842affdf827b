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

__all__ = ["IncrementalMarginals"]


class IncrementalMarginals:
    """Mixin of :class:`~onlinebma.naive_bayes.ModelAveragedNB`: the learning hooks of
    :class:`~onlinebma.naive_bayes.base.BaseNB` that keep its marginal likelihoods
    (``_log_ml``, with ``_last`` and the BDeu ``_histograms``) current."""

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
        # fused with the count update; with forgetting the pseudo-count is in the
        # counts' scaled unit and the flattening owed is applied first, as there.
        tables, log_mls, log = self._tables, self._log_ml, math.log
        a = self.alpha * self._clock.unit
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
        u = self._clock.unit  # pseudo-counts in the counts' scaled unit
        a0, a1 = a0 * u, a1 * u
        row = table.n_joint.get(v)
        n_vy = row.get(y, 0) if row else 0
        if self._histograms is not None:
            h0, h1 = self._histograms.get(f) or self._histograms.setdefault(f, [{}, {}])
            _count_grows(h0, table.n_value.get(v, 0))
            _count_grows(h1, n_vy)
        # eq. 8 as a product of sequential predictive probabilities
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
        a, lg, c = self.alpha, math.lgamma, self._clock.scale
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

    def _domain_growth(self, features, sizes, n, n_class):
        """:meth:`_grow_domain` of several features at once (the array path of wide records,
        where most values of a record can be new; ``features`` an iterable of their names,
        read only on the fallback): ``sizes`` their new numbers of values,
        ``n`` their counts, ``n_class`` their counts by class (class x feature; a class the
        feature has not seen, count 0, is not in its sum), all arrays. With K2, unit
        pseudo-counts and no forgetting the additions to both marginal likelihoods are
        returned as two arrays (the Gamma step of each size computed once, as there);
        otherwise they are applied feature by feature and ``None`` is returned."""
        if self.prior != "K2" or self.alpha != 1 or self._clock.scale != 1:
            tables = self._tables
            for f, r in zip(features, sizes.tolist()):
                self._grow_domain(f, tables[f], int(r))
            return None
        old = sizes - 1.0
        # lgamma(r) - lgamma(r - 1) as _grow_domain computes it, once per distinct size
        distinct, at = np.unique(sizes, return_inverse=True)
        step = np.array([math.lgamma(r) - math.lgamma(r - 1) for r in distinct.tolist()])[at]
        by_class = np.where(n_class > 0, step - np.log(old + n_class), 0.0)  # classes seen
        return step - np.log(old + n), by_class.sum(axis=0)

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
        c = self._clock.scale
        pad = [0] * (r - len(table.n_value))
        no_arc = log_dirichlet_marginal([n * c for n in table.n_value.values()] + pad, a0)
        arc = sum(
            log_dirichlet_marginal([row.get(y, 0) * c for row in table.n_joint.values()] + pad, a1)
            for y in table.n_class
        )
        return [no_arc, arc]

    def _bag_densities(self, table: NominalTable, bag: list, classes, marginal: bool = True):
        return dirichlet_bag(self.alpha, len(table.n_value), self._clock.scale, table, bag, classes,
                             marginal)

    def _learned_bag(self, table: NominalTable, bag: list, y) -> None:
        log_ml = self._current_log_ml(COUNTS)
        r = len(table.n_value)
        for f, _ in bag:
            if f not in table.n_value:  # a new word: the batch model on the larger vocabulary
                r += 1
                self._grow_domain(COUNTS, table, r)
        # eq. 8 for the variable "word": the product of the bags' sequential predictives
        none, (arc,) = dirichlet_bag(self.alpha, r, self._clock.scale, table, bag, [y])
        log_ml[0] += none
        log_ml[1] += arc

    def _learned_numeric(self, f, table: NumericTable, x: float, y) -> None:
        log_ml = self._current_log_ml(f)  # forgetting (_learn_numerics does the rest)
        c = self._clock.scale  # moments in records, not in the scaled unit
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
