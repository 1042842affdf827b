"""``decay="auto"`` for :class:`~onlinebma.tan.ModelAveragedTAN` as one state with a member axis.

:class:`~onlinebma.naive_bayes.decay.RateMixture` would run one learner per rate of
:data:`~onlinebma.naive_bayes.decay.AUTO_GRID`, each reading, validating and coding the
record, gathering its counts and building its dicts. The members learn the same records, so
they share everything but the weights of those records: their codes, numeric intervals and
layout are equal. :class:`SharedTreeRates` keeps them as one state:

- one :class:`~onlinebma.stats.pairs.PairCounts` whose rows are (class, member) pairs,
  ``R`` consecutive rows per class (row ``c R + r`` is member ``r``'s counts of class
  ``c``; the rows are labelled by their index), so that a record is read and coded once, its
  columns gathered for every member in one ``take`` and learned by every member in one add,
  and a new feature or value lays out every member's counts at once;
- each member's scaled unit (λ_r^-k_r, renormalised on its own clock as a learner's) and its
  edge weights ``l`` as the rows of one array ``(R, pairs)``;
- the record's terms and tree sums of all ``R x K`` graphs (and the ``R`` denominators
  ``LT(l)``) in one stack (:class:`~onlinebma.tan.tree_terms.TreeTerms`, the arithmetic the
  single learner uses).

Each member's predictions, edge weights and counts follow exactly the recursion of a
``ModelAveragedTAN`` at its rate (``structure_decay`` and the refresh of ``l = log W`` from
the counts after a new class or value for the member that does not forget), and the weights
are updated as :class:`~onlinebma.naive_bayes.decay.RateMixture`'s, by the same
:class:`~onlinebma.naive_bayes.decay.RateWeights`: ``log π_r += log max(p_r(y | x),
1e-300)`` for a label seen before, then ``π_r ∝ π_r^β``, β =
:data:`~onlinebma.naive_bayes.decay.AUTO_FORGETTING`, in log space
(``tests/test_tan_auto_shared.py`` runs both side by side).
"""

from __future__ import annotations

import math

import numpy as np

from ..forgetting import AUTO_GRID, RateWeights
from ..records import FeatureKinds, check_label
from ..stats.numerics import RENORMALISE_ABOVE
from ..stats.pairs import PairCounts
from .coding import RecordCoding
from .narrow import NARROW_CELLS, narrow_predictions
from .tree_terms import TreeTerms

__all__ = ["SharedTreeRates"]

# The flat positions kept per set of observed pairs are dropped once they would hold about
# this many (a stream whose records each miss another set of features would grow them
# without bound).
_FLAT_CELLS = 1 << 16


class SharedTreeRates(RecordCoding, RateWeights):
    """The members of ``ModelAveragedTAN(decay="auto")`` as one state (module docstring).

    Parameters are the learner's (``structures``, ``ess``, ``edge_prior``,
    ``structure_decay``, ``nominal_attributes``, ``n_bins``, ``bin_warmup``) and the
    ``rates`` of the members. The interface is
    :class:`~onlinebma.naive_bayes.decay.RateMixture`'s, with :meth:`edge_posteriors`.
    """

    def __init__(self, structures: str, ess: float, edge_prior: float,
                 structure_decay: float, nominal_attributes=None, n_bins: int = 5,
                 bin_warmup: int = 200, rates=AUTO_GRID):
        self.rates = tuple(rates)
        self.structure_decay = structure_decay
        self.n_bins = n_bins
        self.bin_warmup = bin_warmup
        r = len(self.rates)
        self.log_weights = [-math.log(r)] * r
        self.labels: list = []  # first seen first
        self._label_codes: dict = {}
        self._kinds = FeatureKinds(nominal_attributes)
        self._counts = PairCounts()  # rows (class, member): c R + r
        self._bins: dict = {}  # numeric feature -> StreamingBins
        self._tree = TreeTerms(ess, structures == "forests", edge_prior)
        self._k = [0] * r  # records since each member's last renormalisation
        self._units = np.ones(r)  # each member's scaled unit λ^-k
        self._l = np.zeros((r, 0))  # each member's l per pair id
        # whether a member's l is a prequential recursion (else log W, refreshed from the
        # counts after a new class or value)
        self._forgets = [rate != 1 or structure_decay != 1 for rate in self.rates]
        self._t = 0
        self._denominator = None  # (observed features, each member's LT(l) over them)
        self._last = None  # the last prediction (see _predict)
        self._readings: dict = {}
        self._readings_version = -1
        self._flat: dict = {}  # pair ids -> flat positions in _l, _flat_pairs wide
        self._flat_pairs = -1
        self._rows: dict = {}  # (class code, width of counts_) -> flat starts of its rows

    def __getstate__(self):  # the caches are derived, not state
        return {**self.__dict__, "_denominator": None, "_last": None, "_readings": {},
                "_readings_version": -1, "_flat": {}, "_flat_pairs": -1, "_rows": {}}

    # --------------------------------------------------------------- predicting

    def _predict(self, x: dict):
        """``(probabilities, memo, reading, split)`` of ``x`` (all ``None`` before the
        first label): every member's class probabilities (R lists of K), what learning
        ``x`` next reuses (``memo`` = ``(log_q (R, K, P), LT (R, K) or None)``; the coding
        if every value was known) and the validated record. Kept for the same unchanged
        dict until something is learned."""
        last = self._last
        if last is not None and last[0] is x and last[1] == x:
            return last[2]
        if not self.labels:
            return None, None, None, None
        codes, values, columns, split = self._read_record(x)
        jll, memo = self._stack(codes, columns)
        p = []  # a few members and classes: plain floats cost less than numpy calls
        exp = math.exp
        for row in jll.tolist():
            top = max(row)
            e = [exp(s - top) for s in row]
            total = sum(e)
            p.append([q / total for q in e])
        numeric, nominal, _ = split
        complete = len(codes) == len(numeric) + len(nominal)
        out = (p, memo, (codes, values, columns) if complete else None, split)
        self._last = (x, dict(x), out)
        return out

    def _stack(self, codes, columns):
        """Every member's joint log likelihoods ``(R, K)`` of a coded record (up to a constant
        per member, on the array path) and the memo:
        one gather of the members' counts, one stack of terms and tree sums."""
        counts = self._counts
        r, k = len(self.rates), len(self.labels)
        ids, prior = self._tree.plan(counts, codes, k)
        m = len(codes)
        key = codes.tobytes()
        d = self._denominator
        current = d is not None and d[0] == key
        gathered = counts.counts_.take(columns, axis=1).reshape(k, r, -1).transpose(1, 0, 2)
        if r * k * len(columns) <= NARROW_CELLS:
            jll, memo, den = narrow_predictions(
                self._tree, self._t, codes, ids, prior, gathered.tolist(),
                self._units.tolist(), self._l.take(ids, axis=1).tolist(),
                d[1].tolist() if current else None)
            if m >= 2 and not current:
                self._denominator = (key, np.array(den))
            return np.array(jll), (np.array([q for q, _ in memo]),
                                   None if m < 2 else np.array([t for _, t in memo]))
        # each member's probabilities are normalised over the classes: log(ess + N) left out
        base, log_q = self._tree.record(m, gathered, prior, self._units[:, None], False)
        if m < 2:
            return base, (log_q, None)
        l_pairs = self._l.take(ids, axis=1)[:, None, :]
        sums = self._tree.sums
        if current:
            lt = sums(key, m, l_pairs, log_q, self._t)
            den = d[1]
        else:
            zeros = np.zeros((r, 1, len(ids)))
            lt = sums(key, m, l_pairs, np.concatenate([log_q, zeros], 1), self._t)
            lt, den = lt[:, :-1], lt[:, -1]
            self._denominator = (key, den)
        return base + lt - den[:, None], (log_q, lt)

    def predict_proba_one(self, x: dict) -> dict:
        probas = self._predict(x)[0]
        if probas is None:
            return {}
        mixed = [0.0] * len(self.labels)
        for lw, p in zip(self.log_weights, probas):
            w = math.exp(lw)
            mixed = [a + w * q for a, q in zip(mixed, p)]
        total = sum(mixed)
        return {label: q / total for label, q in zip(self.labels, mixed)}

    def predict_proba_many(self, X):
        """Every member's batch predictions (:meth:`TreeTerms.batch`), averaged."""
        import pandas as pd

        from ..stats.unique import unique_rows

        if not self.labels:
            return pd.DataFrame(index=X.index)
        counts, r = self._counts, len(self.rates)
        distinct, back, _ = unique_rows(self._code_frame(X))
        out = 0.0
        for i, lw in enumerate(self.log_weights):
            jll = self._tree.batch(counts, counts.counts_[i::r], self._units[i], self._l[i],
                                   distinct, self._t)[back]
            p = np.exp(jll - jll.max(axis=1, keepdims=True))
            out = out + math.exp(lw) * (p / p.sum(axis=1, keepdims=True))
        return pd.DataFrame(out / out.sum(axis=1, keepdims=True), columns=list(self.labels),
                            index=X.index)

    # ----------------------------------------------------------------- learning

    def learn_one(self, x: dict, y) -> None:
        probas, memo, reading, split = self._predict(x)  # validates x (once labels exist)
        check_label(y)
        self._last = None
        counts = self._counts
        if reading is None:
            split = self._kinds.split(x) if split is None else split  # nothing fails after
            codes, values, grew = self._code_for_learning(split)
            columns = counts.record_columns(codes, values)
        else:  # coded by the prediction, every value known: nothing new
            codes, values, columns = reading
            grew = False
        r = len(self.rates)
        c = self._label_codes.get(y)
        known = c is not None
        if not known:
            c = self._label_codes[y] = len(self.labels)
            self.labels.append(y)
            for _ in range(r):
                counts.add_class(counts.n_classes)
            grew = True
        self._learn(c, codes, columns, None if grew else memo)
        # counts_[c R:(c + 1) R, columns] += units, as a take and a put (cheaper)
        table = counts.counts_
        width = table.shape[1]
        rows = self._rows.get((c, width))
        if rows is None:  # the flat starts of class c's rows, for the current width only
            if any(w != width for _, w in self._rows):
                self._rows = {}
            rows = self._rows[c, width] = np.arange(c * r, (c + 1) * r)[:, None] * width
        flat = (rows + columns).ravel()
        table.put(flat, table.take(flat).reshape(r, -1) + self._units[:, None])
        self._t += 1
        self._tick()
        if grew:
            for i, forgets in enumerate(self._forgets):
                if not forgets:  # l = log W, from the counts
                    self._l[i] = self._tree.log_weights(counts, counts.counts_[i::r],
                                                        self._units[i])
        self._reweigh([p[c] for p in probas] if known else None)

    def _learn(self, c: int, codes, columns, memo) -> None:
        """Every member's ``l <- α (l + log Q_c(x))`` before the record of class code ``c``
        is counted (``log Q`` from the prediction's ``memo``, else from the counts)."""
        counts = self._counts
        r = len(self.rates)
        n_pairs = counts.n_pairs
        if self._l.shape[1] < n_pairs:  # pairs of new features start from l = 0
            self._l = np.concatenate([self._l, np.zeros((r, n_pairs - self._l.shape[1]))], 1)
        ids, prior = self._tree.plan(counts, codes, len(self.labels))
        self._denominator = None
        if memo is None:
            rows = counts.counts_[c * r:(c + 1) * r, columns][:, None, :]
            log_q = self._tree.record(len(codes), rows, prior, self._units[:, None])[1][:, 0]
        else:
            log_q = memo[0][:, c]
        # self._l[:, ids] += log_q, as a take and a put of the flat positions (cheaper)
        width = self._l.shape[1]
        flat = self._flat.get(ids.tobytes()) if self._flat_pairs == width else None
        if flat is None:
            if self._flat_pairs != width or len(self._flat) * r * len(ids) > _FLAT_CELLS:
                self._flat, self._flat_pairs = {}, width
            flat = self._flat[ids.tobytes()] = (np.arange(r)[:, None] * width + ids).ravel()
        self._l.put(flat, self._l.take(flat) + log_q.ravel())
        if self.structure_decay != 1:
            self._l *= self.structure_decay
        elif memo is not None and memo[1] is not None:  # LT(l + log Q_c): computed already
            self._denominator = (codes.tobytes(), memo[1][:, c])

    def _tick(self) -> None:
        """Each member's counts times its rate, through its scaled unit; a member's counts
        are renormalised before its unit passes 2^128."""
        r = len(self.rates)
        for i, rate in enumerate(self.rates):
            if rate == 1:
                continue
            k = self._k[i] + 1
            unit = rate ** -k
            if unit > RENORMALISE_ABOVE:
                self._counts.counts_[i::r] *= rate ** k
                k, unit = 0, 1.0
            self._k[i] = k
            self._units[i] = unit

    # ------------------------------------------------------------------ reading

    def edge_posteriors(self) -> dict:
        """Every member's edge posteriors, averaged with the weights of the rates."""
        counts = self._counts
        out: dict = {}
        for lw, l_r in zip(self.log_weights, self._l):
            for e, p in self._tree.edge_posteriors(counts, l_r, len(self.labels)).items():
                out[e] = out.get(e, 0.0) + math.exp(lw) * p
        return out
