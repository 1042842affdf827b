"""``decay="auto"`` in one pass: the statistics of every rate as arrays with a member axis.

:class:`~onlinebma.forgetting.RateMixture` runs one learner per rate of
:data:`~onlinebma.forgetting.AUTO_GRID`. :class:`SharedRates` computes the same
mixture with one state: the record is read and coded once (its features' columns and its
nominal values' rows), and every statistic holds one entry per member, so a record costs a
fixed number of numpy operations over arrays of shape (members, observed features, classes),
whatever the number of members. The learners' terms (Gaussian, plug-in, Student-t and
Dirichlet) are :mod:`~onlinebma.naive_bayes.rate_terms`.

Layout (``R`` members on the last axis; slot 0 of the slot axis is the feature's marginal,
slot ``1 + i`` class ``i``): ``numeric[column, slot, (n, mean, m2), R]``,
``counts[row, slot, R]`` for a nominal ``(feature, value)`` row (``N_v``, ``N_vy``),
``totals[feature, slot, R]`` (``N``, ``N_y``), ``class_counts[class, R]``, and
``numeric_seen`` / ``nominal_seen`` ``[column or feature, slot]``: whether the members'
tables would hold the slot (a class observed with the feature). As in the members,
statistics are kept in a scaled unit worth ``decay^k`` records per member (a record weighs
``unit = decay^-k``, tabulated), renormalised once the fastest rate's unit would pass 2^128,
so forgetting costs nothing per stored statistic. A record whose known numeric columns or
nominal features are a run (the usual case: every feature present) reads and updates their
statistics through views, and learning reuses the rows its prediction coded.

Measured on Elec2 (``python -m experiments drift``, docs/naive_bayes.md): numpy per record
pays here because the per-record work is the members' array; a single learner keeps plain
floats.
"""

from __future__ import annotations

import math

import numpy as np

from ..forgetting import AUTO_GRID, MIN_WEIGHT, RateWeights, ScaledClock
from ..labels import in_class_order, ordered_labels
from ..reading import read_record
from ..records import FeatureKinds, check_label
from ..stats.gaussian import MAX_ABS_VALUE, check_magnitude

__all__ = ["SharedRates", "pick"]

_HUGE = 1e150  # a prediction's |x| beyond which squares may overflow: numpy told to allow it


def pick(a: np.ndarray, sel) -> np.ndarray:
    """The entries ``sel`` (a slice, then a view, or an index array) of ``a``'s first axis."""
    return a[sel] if type(sel) is slice else a.take(sel, axis=0)


def _grown(a: np.ndarray, axis: int, size: int) -> np.ndarray:
    """``a`` with at least ``size`` entries along ``axis`` (doubling, zero-filled)."""
    if a.shape[axis] >= size:
        return a
    shape = list(a.shape)
    shape[axis] = max(size, 2 * shape[axis])
    out = np.zeros(shape, dtype=a.dtype)
    out[tuple(slice(0, k) for k in a.shape)] = a
    return out


class _Packed:
    """An array as ``(dtype, shape, bytes)`` for pickling."""

    __slots__ = ("dtype", "shape", "data")

    def __init__(self, a: np.ndarray):
        self.dtype, self.shape, self.data = a.dtype.str, a.shape, a.tobytes()

    def __getstate__(self):
        return self.dtype, self.shape, self.data

    def __setstate__(self, state):
        self.dtype, self.shape, self.data = state

    def array(self) -> np.ndarray:
        return np.frombuffer(self.data, dtype=self.dtype).reshape(self.shape).copy()


_STATE = ("terms", "rates", "lam", "_log_weights", "beta_log_weights", "beta_log_posterior",
          "weights", "kinds", "classes", "class_index",
          "columns", "features", "names", "rows", "order", "n_values", "row_feature",
          "class_counts", "total", "numeric", "numeric_seen", "unseen", "counts", "totals",
          "nominal_seen", "clock")


class SharedRates(RateWeights):
    """The members of a ``decay="auto"`` learner as one state (see the module docstring).

    ``terms`` is the learner's :mod:`~onlinebma.naive_bayes.rate_terms` object. The public
    interface is :class:`~onlinebma.forgetting.RateMixture`'s.

    ``reader`` (a :class:`~onlinebma.naive_bayes.numbers.NumberReader`, or ``None`` for the
    Gaussian) reads numeric features as intervals, as each member would: a fixed feature's
    value is the nominal value "its interval", a pending one is read by its Gaussian and its
    records kept, and when its cut points are fixed its Gaussian column gives way to the
    interval counts of a fresh state fed the kept records (:meth:`replay`), as the members'
    :meth:`~onlinebma.naive_bayes.base.BaseNB._replay` does.
    """

    def __init__(self, terms, nominal_attributes=None, rates=AUTO_GRID, numeric_attributes=None,
                 reader=None):
        self.terms = terms
        self.reader = reader
        self.learned = 0  # records learned (the reader's record indices)
        self.rates = tuple(rates)
        self.lam = np.array(self.rates, dtype=float)
        r = len(self.rates)
        self.log_weights = [-math.log(r)] * r
        self.weights = np.exp(self.log_weights)
        self.kinds = FeatureKinds(nominal_attributes, numeric_attributes)
        self.classes: list = []  # labels, first seen first
        self.class_index: dict = {}
        self.columns: dict = {}  # numeric feature -> column
        self.features: dict = {}  # nominal feature -> index
        self.names: list = []  # index -> the nominal feature's name, as first stored
        self.rows: dict = {}  # (nominal feature, value) -> row
        self.order: dict = {}  # feature -> None, in the order the members' tables were made
        self.n_values = np.zeros(4, dtype=np.int64)  # values per nominal feature
        self.row_feature = np.zeros(4, dtype=np.int64)
        self.class_counts = np.zeros((2, r))
        self.total = np.zeros(r)
        self.numeric = np.zeros((4, 3, 3, r))
        self.numeric_seen = np.zeros((4, 3), dtype=bool)
        self.unseen = 0  # (column, class) slots of numeric_seen still False
        self.counts = np.zeros((4, 3, r))
        self.totals = np.zeros((4, 3, r))
        self.nominal_seen = np.zeros((4, 3), dtype=bool)
        self.log_ml = {"numeric": np.zeros((4, 2, r)), "nominal": np.zeros((4, 2, r))}
        self.clock = ScaledClock(self.lam)  # every member's scaled unit (one shared k)
        self.pseudo = self.terms.alpha * self.clock.unit  # the pseudo-count alpha, scaled
        self.grouped = None  # which rows are which feature's (rate_terms), derived
        # the last record's numeric columns and nominal features, as a list and a selection
        self._coded = [([], None), ([], None)]
        # The last prediction: (record, a copy, member probabilities, its reading, what the
        # terms computed), reused when the same unchanged dict is learned next.
        self._last = None

    def __getstate__(self):
        # The state as a list in _STATE's order, without the derived caches. Equal states
        # pickle alike, also after a round trip: arrays travel as bytes (an unpickled array's
        # dtype is another object than a computed one's), and no attribute name is written
        # (pickle would share it with an equal string among the features' values).
        # The reader and the count of records learned come last (pickles before them
        # read numbers by their Gaussian).
        ml = self.log_ml
        return [_Packed(a) if isinstance(a, np.ndarray) else a for a in
                [getattr(self, name) for name in _STATE] + [ml["numeric"], ml["nominal"],
                                                             self.reader, self.learned]]

    def __setstate__(self, state):
        state = [a.array() if isinstance(a, _Packed) else a for a in state]
        self.__dict__.update(zip(_STATE, state))
        n = len(_STATE)
        self.log_ml = {"numeric": state[n], "nominal": state[n + 1]}
        self.reader, self.learned = state[n + 2:] or (None, 0)
        self.grouped, self._coded, self._last = None, [([], None), ([], None)], None
        self.pseudo = self.terms.alpha * self.clock.unit

    # ------------------------------------------------------------------ reading

    def _selection(self, js: list, kind: int = 0):
        """``js`` (numeric columns, ``kind`` 0, or nominal features, 1) as a selection for
        :func:`pick`: a slice when they are a run (a view, no copy), the last one reused."""
        last, sel = self._coded[kind]
        if js != last:
            j = js[0]
            sel = slice(j, j + len(js)) if js == list(range(j, j + len(js))) else np.array(js)
            self._coded[kind] = (js, sel)
        return sel

    def _code(self, split):
        """The known numeric columns ``(columns, values, huge)`` and nominal ``(rows,
        features)`` of a record read as ``split``, as arrays (``None`` for an empty part)."""
        numeric, nominal, _ = split
        js, xs = [], []
        columns = self.columns
        for f, v in numeric:
            j = columns.get(f)
            if j is not None:
                js.append(j)
                xs.append(v)
        rs, gs = [], []
        rows, features = self.rows, self.features
        for f, v in nominal:
            r = rows.get((f, v))
            if r is not None:  # a value never learned is skipped, like a missing one
                rs.append(r)
                gs.append(features[f])
        huge = bool(js) and max(map(abs, xs)) > _HUGE
        return ((self._selection(js), np.array(xs), huge) if js else None,
                (np.array(rs), self._selection(gs, 1)) if rs else None)

    def _predict(self, x: dict):
        """``(member probabilities [classes, R] or None, (reading, reading with the fixed
        numeric features as intervals), terms' cache, coded numeric part, coded nominal
        part)``, reused for the same unchanged ``x`` until something is learned."""
        last = self._last
        if last is not None and last[0] is x and last[1] == x:
            return last[2:]
        split = read_record(self.kinds, x)
        read = split
        if self.reader is not None and split[0]:  # fixed features' values: their intervals
            coded, waiting = self.reader.split(split[0])
            read = (waiting, split[1] + coded, split[2])
        probas, cache, numeric, nominal = None, (None, None), None, None
        if self.classes:
            numeric, nominal = self._code(read)
            scores, cache = self._scores(numeric, nominal)
            p = np.exp(scores - np.maximum.reduce(scores, axis=0))
            probas = p / np.add.reduce(p, axis=0)
        self._last = (x, dict(x), probas, (split, read), cache, numeric, nominal)
        return probas, (split, read), cache, numeric, nominal

    def _scores(self, numeric, nominal):
        """Per class and member, ``log P(y) + sum_f log(mixed term)`` (base.py's
        ``joint_log_likelihood``), and what the terms keep for learning this record."""
        k = len(self.classes)
        a = self.pseudo  # pseudo-counts in the scaled unit
        scores = np.log(self.class_counts[:k] + a) - np.log(self.total + a * k)
        cache = [None, None]  # the nominal and numeric terms' own
        if nominal is not None:
            term, cache[0] = self.terms.nominal(self, nominal[0], nominal[1], k)
            scores += term
        if numeric is not None:
            js, xs, huge = numeric
            if huge:
                with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                    term, cache[1] = self.terms.numeric(self, js, xs, k, huge=True)
            else:
                term, cache[1] = self.terms.numeric(self, js, xs, k)
            scores += term
        return scores, cache

    # ---------------------------------------------------------------- the mixture

    def predict_proba_one(self, x: dict) -> dict:
        probas = self._predict(x)[0]
        if probas is None:
            return {}
        mix = (probas @ self.weights).tolist()
        total = sum(mix)
        return {label: p / total for label, p in zip(self.classes, mix)}

    def predict_proba_many(self, X):
        import pandas as pd

        if not self.classes:
            return pd.DataFrame(index=X.index)
        rows = [self.predict_proba_one(x) for x in X.to_dict("records")]
        return in_class_order(pd.DataFrame(rows, columns=list(self.classes), index=X.index))

    @property
    def classes_(self) -> tuple:
        """The labels in ``classes_`` order (:mod:`onlinebma.labels`)."""
        return ordered_labels(self.classes)

    def feature_posteriors(self) -> dict:
        p = self.terms.feature_posteriors(self)  # {feature: [R] probabilities}
        return {f: float(p[f] @ self.weights) for f in self.order}

    # ------------------------------------------------------------------ learning

    def learn_one(self, x: dict, y) -> None:
        check_label(y)
        probas, (split, read), cache, coded, coded_nominal = self._predict(x)
        for f, v in split[0]:
            if not -MAX_ABS_VALUE <= v <= MAX_ABS_VALUE:
                check_magnitude(f, v)
        # Validated: from here on nothing can fail, so a refused record changes nothing.
        numeric, nominal, new = read
        self._last = None
        self.kinds.commit(new)
        reader = self.reader
        complete = None if reader is None else reader.keep(self.learned, y, split[0])
        iy = self.class_index.get(y)
        # a label seen before: every member has a prediction for it
        self._reweigh(None if iy is None else probas[iy].tolist())
        self.weights = np.exp(self.log_weights)
        if iy is None:
            iy = self.new_class(y)
        w = self.clock.unit
        if nominal:
            self._learn_nominal(nominal, iy, w, cache[0], coded_nominal)
        if numeric:
            self._learn_numeric(numeric, iy, w, cache[1], coded)
        self.class_counts[iy] += w
        self.total += w
        self._tick()
        self.learned += 1
        if complete:
            reader.fix(complete, self.classes)
            self.replay(*reader.replay_stream(complete, self.learned))

    # ------------------------------------------------------- numbers as intervals

    def fix_from_table(self, columns: dict, labels: list) -> None:
        """``learn_many``, before a table's rows are learned: the members' rule for cut points
        from a table (:meth:`~onlinebma.naive_bayes.numbers.NumberReader.fix_from_table`)."""
        kept = self.reader.fix_from_table(columns, labels, self.learned, self.classes)
        if kept:
            self.replay(*self.reader.replay_stream(kept, self.learned))

    def fix_readings(self, readings: dict) -> None:
        """Fix readings the reader checked (given from outside) and count the kept values
        of the features they fix."""
        self._last = None
        self.reader.fix_given(readings, self.kinds, self.learned, self.replay)

    def replay(self, first: int, rows: list) -> None:
        """Count the kept values of newly fixed features as if their cut points had been
        fixed from the first record (``first, rows`` from
        :meth:`~onlinebma.naive_bayes.numbers.NumberReader.replay_stream`): a fresh state
        (without reader) knowing the classes of that time is fed, from record ``first`` on,
        the kept records' intervals and an empty record for each record between them, and
        each feature's nominal statistics are taken from it, rescaled to this clock, in place
        of its Gaussian column. Each feature's statistics depend on its own values, the labels
        and the clock alone, so this is exact for every member (the members' replay)."""
        reader = self.reader
        scratch = SharedRates(self.terms, rates=self.rates)
        for label in reader.labels_before(first):
            scratch.new_class(label)
        for record, label in reader.replay_records(first, self.learned, rows, clock=True):
            scratch.learn_one(record, label)
        c = scratch.clock.scale / self.clock.scale
        for f in dict.fromkeys(f for _, _, pairs in rows for f, _ in pairs):
            self._adopt_feature(f, scratch, c)
        self.grouped, self._coded, self._last = None, [([], None), ([], None)], None

    def _adopt_feature(self, f, scratch: SharedRates, c: np.ndarray) -> None:
        """Feature ``f``'s nominal statistics from ``scratch`` (its classes this state's
        first ones), times ``c`` per member into this clock's unit, in place of its Gaussian
        column (dropped; ``f`` keeps its place in :attr:`order`)."""
        j = self.columns.pop(f, None)
        if j is not None:
            self._drop_column(j)
        k = len(scratch.classes)
        src = scratch.features[f]
        g = self._new_feature(f)
        for (_, v), r_src in scratch.rows.items():
            if scratch.row_feature[r_src] != src:
                continue
            r = len(self.rows)
            self.rows[(self.names[g], v)] = r
            self.row_feature = _grown(self.row_feature, 0, r + 1)
            self.row_feature[r] = g
            self.counts = _grown(self.counts, 0, r + 1)
            self.counts[r, :k + 1] = scratch.counts[r_src, :k + 1] * c
        self.n_values[g] = scratch.n_values[src]
        self.totals[g, :k + 1] = scratch.totals[src, :k + 1] * c
        self.nominal_seen[g, :k + 1] = scratch.nominal_seen[src, :k + 1]
        self.log_ml["nominal"][g] = scratch.log_ml["nominal"][src]

    def _drop_column(self, j: int) -> None:
        """Remove numeric column ``j`` (a feature now read as intervals): the later columns
        move down one."""
        k = len(self.classes)
        self.unseen -= int(np.count_nonzero(~self.numeric_seen[j, 1:k + 1]))
        self.numeric = np.delete(self.numeric, j, axis=0)
        self.numeric_seen = np.delete(self.numeric_seen, j, axis=0)
        self.log_ml["numeric"] = np.delete(self.log_ml["numeric"], j, axis=0)
        self.columns = {f: i - (i > j) for f, i in self.columns.items()}

    def new_class(self, y) -> int:
        """Make room for class ``y``, not known yet, with no record; its index."""
        i = len(self.classes)
        self.classes.append(y)
        self.class_index[y] = i
        self.class_counts = _grown(self.class_counts, 0, i + 1)
        self.numeric = _grown(self.numeric, 1, i + 2)
        self.numeric_seen = _grown(self.numeric_seen, 1, i + 2)
        self.unseen += len(self.columns)
        self.counts = _grown(self.counts, 1, i + 2)
        self.totals = _grown(self.totals, 1, i + 2)
        self.nominal_seen = _grown(self.nominal_seen, 1, i + 2)
        return i

    def _learn_nominal(self, pairs, iy: int, w: np.ndarray, cache, coded) -> None:
        if coded is not None and len(coded[0]) == len(pairs):  # every value known
            rs, gs = coded
        else:
            rs, gs = self._nominal_rows(pairs)
        # the marginal and class-y slots, 0 and 1 + iy, as a slice: views, not copies
        slots = slice(0, 2 + iy, 1 + iy)
        self.terms.learned_nominal(self, rs, gs, slots, cache)
        np.add.at(self.counts, (rs, slots), w)  # (one row per feature: none twice)
        self.totals[gs, slots] += w
        self.nominal_seen[gs, 1 + iy] = True

    def _nominal_rows(self, pairs):
        """The rows and features (a selection) of a record's nominal ``pairs``, making those
        never learned."""
        rows, features, n_values = self.rows, self.features, self.n_values
        rs, gs = [], []
        for f, v in pairs:
            g = features.get(f)
            if g is None:
                g = self._new_feature(f)
                n_values = self.n_values
            r = rows.get((f, v))
            if r is None:  # a new value: the domain grows first (as the members' tables do)
                if n_values[g]:
                    self.terms.grow_domain(self, g)
                # keyed by the name object stored first, so that pickles of equal states
                # are equal (pickle shares one object, not equal strings)
                r = rows[(self.names[g], v)] = len(rows)
                self.row_feature = _grown(self.row_feature, 0, r + 1)
                self.row_feature[r] = g
                self.counts = _grown(self.counts, 0, r + 1)
                n_values[g] += 1
                self.grouped = None
            rs.append(r)
            gs.append(g)
        return np.array(rs), self._selection(gs, 1)

    def _new_feature(self, f) -> int:
        g = self.features[f] = len(self.features)
        self.names.append(f)
        self.order[f] = None
        self.n_values = _grown(self.n_values, 0, g + 1)
        self.totals = _grown(self.totals, 0, g + 1)
        self.nominal_seen = _grown(self.nominal_seen, 0, g + 1)
        self.log_ml["nominal"] = _grown(self.log_ml["nominal"], 0, g + 1)
        self.nominal_seen[g, 0] = True
        return g

    def _learn_numeric(self, pairs, iy: int, w: np.ndarray, cache, coded) -> None:
        if coded is not None and len(coded[1]) == len(pairs):  # every column known
            js, xs = coded[0], coded[1]
        else:
            columns = self.columns
            js = []
            for f, _ in pairs:
                j = columns.get(f)
                if j is None:
                    j = columns[f] = len(columns)
                    self.order[f] = None
                    self.numeric = _grown(self.numeric, 0, j + 1)
                    self.numeric_seen = _grown(self.numeric_seen, 0, j + 1)
                    self.log_ml["numeric"] = _grown(self.log_ml["numeric"], 0, j + 1)
                    self.numeric_seen[j, 0] = True
                    self.unseen += len(self.classes)
                js.append(j)
            js = self._selection(js)
            xs = np.array([v for _, v in pairs])
        self.terms.learned_numeric(self, js, xs, iy, cache)
        # West's weighted Welford update of the marginal and class-y moments of every member,
        # in place: slots 0 and 1 + iy are the slice 0 : 2 + iy : 1 + iy
        slots = slice(0, 2 + iy, 1 + iy)
        s = self.numeric[js, slots]  # [m, 2, (n, mean, m2), R]: a view when js is a slice
        n, mean = s[:, :, 0], s[:, :, 1]
        x = xs[:, None, None]
        empty = n == 0  # a first value is set, as GaussianMoments.update does: m2 stays 0
        delta = x - mean
        n += w
        t = delta * w
        mean += t / n
        np.copyto(mean, np.broadcast_to(x, mean.shape), where=empty)
        s[:, :, 2] += t * (x - mean)
        if type(js) is not slice:
            self.numeric[js, slots] = s
        if self.unseen:
            seen = self.numeric_seen[js, 1 + iy]
            self.unseen -= seen.size - int(np.count_nonzero(seen))
            self.numeric_seen[js, 1 + iy] = True

    def _tick(self) -> None:
        """Every member's statistics times its decay, in O(1) (:class:`ScaledClock`)."""
        c = self.clock.tick()
        if c is not None:  # the fastest member's unit would pass 2^128: renormalise
            self.class_counts *= c
            self.total *= c
            n, m2 = self.numeric[:, :, 0], self.numeric[:, :, 2]  # views
            n *= c
            m2 *= c
            low = (n > 0) & (n < MIN_WEIGHT)  # keep their Gaussians (decay.MIN_WEIGHT)
            if low.any():
                m2[low] *= MIN_WEIGHT / n[low]
                n[low] = MIN_WEIGHT
            self.counts *= c
            self.totals *= c
        self.pseudo = self.terms.alpha * self.clock.unit
