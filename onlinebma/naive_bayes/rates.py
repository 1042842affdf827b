"""``decay="auto"`` in one pass: the statistics of every rate as arrays with a member axis.

:class:`~onlinebma.naive_bayes.decay.RateMixture` runs one learner per rate of
:data:`~onlinebma.naive_bayes.decay.AUTO_GRID`. :class:`SharedRates` computes the same
mixture with one state: the record is read and coded once (its features' columns and its
nominal values' rows), and every statistic holds one entry per member, so a record costs a
fixed number of numpy operations over arrays of shape (members, observed features, classes),
whatever the number of members. The learners' terms (Gaussian, plug-in, Student-t and
Dirichlet) are :mod:`~onlinebma.naive_bayes.rate_terms`.

Layout (``R`` members, slot 0 of the last axis the feature's marginal, slot ``1 + i`` class
``i``): ``numeric[R, column, slot, (n, mean, m2)]``, ``counts[R, row, slot]`` for a nominal
``(feature, value)`` row (``N_v``, ``N_vy``) and ``totals[R, feature, slot]`` (``N``,
``N_y``); ``class_counts[R, class]``; with ``seen[column or feature, slot]`` whether the
member tables would hold the slot (a class observed with the feature). As in the members,
statistics are kept in a scaled unit worth ``decay^k`` records per member (a record weighs
``unit = decay^-k``), renormalised once a unit passes 2^128, so forgetting costs nothing per
stored statistic.

Measured on Elec2 (``python -m experiments drift``, docs/naive_bayes.md): numpy per record
pays here because the per-record work is the members' array; a single learner keeps plain
floats.
"""

from __future__ import annotations

import math

import numpy as np

from ..records import FeatureKinds, check_label
from ..stats.gaussian import MAX_ABS_VALUE, check_magnitude
from .decay import AUTO_FORGETTING, AUTO_GRID, MIN_PROBABILITY
from .frames import read_record

__all__ = ["SharedRates"]

_RENORMALISE_ABOVE = 2.0 ** 128  # as BaseNB._renormalise_above
_HUGE = 1e150  # a prediction's |x| beyond which squares may overflow: numpy told to allow it


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


class SharedRates:
    """The members of a ``decay="auto"`` learner as one state (see the module docstring).

    ``terms`` is the learner's :mod:`~onlinebma.naive_bayes.rate_terms` object. The public
    interface is :class:`~onlinebma.naive_bayes.decay.RateMixture`'s.
    """

    def __init__(self, terms, nominal_attributes=None, rates=AUTO_GRID):
        self.terms = terms
        self.rates = tuple(rates)
        self.lam = np.array(self.rates, dtype=float)
        r = len(self.rates)
        self.log_weights = np.full(r, -math.log(r))
        self.kinds = FeatureKinds(nominal_attributes)
        self.classes: list = []  # labels, first seen first
        self.class_index: dict = {}
        self.columns: dict = {}  # numeric feature -> column
        self.features: dict = {}  # nominal feature -> index
        self.rows: dict = {}  # (nominal feature, value) -> row
        self.order: dict = {}  # feature -> None, in the order the members' tables were made
        self.n_values = np.zeros(4, dtype=np.int64)  # values per nominal feature
        self.row_feature = np.zeros(4, dtype=np.int64)
        self.class_counts = np.zeros((r, 2))
        self.total = np.zeros(r)
        self.numeric = np.zeros((r, 4, 3, 3))
        self.numeric_seen = np.zeros((4, 3), dtype=bool)
        self.counts = np.zeros((r, 4, 3))
        self.totals = np.zeros((r, 4, 3))
        self.nominal_seen = np.zeros((4, 3), dtype=bool)
        self.log_ml = {"numeric": np.zeros((r, 4, 2)), "nominal": np.zeros((r, 4, 2))}
        self.k = 0  # records since the last renormalisation
        self.unit = np.ones(r)  # a record's weight in each member's scaled unit
        self.scale = np.ones(r)  # a stored statistic's worth in records
        self.grouped = None  # rows grouped by feature (rate_terms), derived
        # The last prediction: (record, a copy, member probabilities, its reading, what the
        # terms computed), reused when the same unchanged dict is learned next.
        self._last = None

    def __getstate__(self):
        # Derived caches are not state: pickles and clones leave them out. Arrays travel as
        # bytes, so a learner and its unpickled copy pickle alike (an unpickled array's
        # dtype is another object than a computed one's).
        state = {**self.__dict__, "_last": None, "grouped": None}
        state["log_ml"] = {k: _Packed(a) for k, a in self.log_ml.items()}
        return {k: _Packed(a) if isinstance(a, np.ndarray) else a for k, a in state.items()}

    def __setstate__(self, state):
        self.__dict__.update({k: a.array() if isinstance(a, _Packed) else a
                              for k, a in state.items()})
        self.log_ml = {k: a.array() for k, a in self.log_ml.items()}

    # ------------------------------------------------------------------ reading

    def _code(self, split):
        """The known columns and rows of a record read as ``split``: ``(columns, values,
        rows, features)`` as arrays (``None`` for an empty part)."""
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
        return ((np.array(js), np.array(xs), huge) if js else None,
                (np.array(rs), np.array(gs)) if rs else None)

    def _predict(self, x: dict):
        """``(member probabilities [R, K] or None, reading, terms' cache)``, reused for the
        same unchanged ``x`` until something is learned."""
        last = self._last
        if last is not None and last[0] is x and last[1] == x:
            return last[2], last[3], last[4]
        split = read_record(self.kinds, x)
        probas, cache = None, None
        if self.classes:
            numeric, nominal = self._code(split)
            scores, cache = self._scores(numeric, nominal)
            p = np.exp(scores - scores.max(axis=1, keepdims=True))
            probas = p / p.sum(axis=1, keepdims=True)
        self._last = (x, dict(x), probas, split, cache)
        return probas, split, cache

    def _scores(self, numeric, nominal):
        """Per member and class, ``log P(y) + sum_f log(mixed term)`` (base.py's
        ``joint_log_likelihood``), and what the terms keep for learning this record."""
        k = len(self.classes)
        a = self.terms.alpha * self.unit  # pseudo-counts in the scaled unit
        scores = (np.log(self.class_counts[:, :k] + a[:, None])
                  - np.log(self.total + a * k)[:, None])
        cache = None
        if nominal is not None:
            scores += self.terms.nominal(self, nominal[0], nominal[1], k)
        if numeric is not None:
            js, xs, huge = numeric
            if huge:
                with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                    term, cache = self.terms.numeric(self, js, xs, k, huge=True)
            else:
                term, cache = self.terms.numeric(self, js, xs, k)
            scores += term
        return scores, cache

    # ---------------------------------------------------------------- the mixture

    def posterior(self) -> dict:
        return dict(zip(self.rates, np.exp(self.log_weights).tolist()))

    def predict_proba_one(self, x: dict) -> dict:
        probas = self._predict(x)[0]
        if probas is None:
            return {}
        mix = np.exp(self.log_weights) @ probas
        return dict(zip(self.classes, (mix / mix.sum()).tolist()))

    def joint_log_likelihood(self, x: dict) -> dict:
        return {label: math.log(p) if p > 0 else -math.inf
                for label, p in self.predict_proba_one(x).items()}

    def predict_proba_many(self, X):
        import pandas as pd

        if not self.classes:
            return pd.DataFrame(index=X.index)
        rows = [self.predict_proba_one(x) for x in X.to_dict("records")]
        return pd.DataFrame(rows, columns=list(self.classes), index=X.index)

    def feature_posteriors(self) -> dict:
        w = np.exp(self.log_weights)
        p = self.terms.feature_posteriors(self)  # {feature: [R] probabilities}
        return {f: float(w @ p[f]) for f in self.order}

    # ------------------------------------------------------------------ learning

    def learn_one(self, x: dict, y) -> None:
        check_label(y)
        probas, split, cache = self._predict(x)
        numeric, nominal, new = split
        for f, v in numeric:
            if not -MAX_ABS_VALUE <= v <= MAX_ABS_VALUE:
                check_magnitude(f, v)
        # Validated: from here on nothing can fail, so a refused record changes nothing.
        self._last = None
        self.kinds.commit(new)
        iy = self.class_index.get(y)
        lw = self.log_weights
        if iy is not None:  # a label seen before: every member has a prediction for it
            lw = lw + np.log(np.maximum(probas[:, iy], MIN_PROBABILITY))
        lw = AUTO_FORGETTING * lw
        top = lw.max()
        self.log_weights = lw - (top + math.log(np.exp(lw - top).sum()))
        if iy is None:
            iy = self._new_class(y)
        w = self.unit
        if nominal:
            self._learn_nominal(nominal, iy, w)
        if numeric:
            self._learn_numeric(numeric, iy, w, cache)
        self.class_counts[:, iy] += w
        self.total += w
        self._tick()

    def _new_class(self, y) -> int:
        i = len(self.classes)
        self.classes.append(y)
        self.class_index[y] = i
        self.class_counts = _grown(self.class_counts, 1, i + 1)
        self.numeric = _grown(self.numeric, 2, i + 2)
        self.numeric_seen = _grown(self.numeric_seen, 1, i + 2)
        self.counts = _grown(self.counts, 2, i + 2)
        self.totals = _grown(self.totals, 2, i + 2)
        self.nominal_seen = _grown(self.nominal_seen, 1, i + 2)
        return i

    def _learn_nominal(self, pairs, iy: int, w: np.ndarray) -> None:
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
                r = rows[(f, v)] = len(rows)
                self.row_feature = _grown(self.row_feature, 0, r + 1)
                self.row_feature[r] = g
                self.counts = _grown(self.counts, 1, r + 1)
                n_values[g] += 1
                self.grouped = None
            rs.append(r)
            gs.append(g)
        rs, gs = np.array(rs), np.array(gs)
        slots = np.array([0, 1 + iy])
        self.terms.learned_nominal(self, rs, gs, slots)
        wc = w[:, None, None]
        self.counts[:, rs[:, None], slots] += wc
        self.totals[:, gs[:, None], slots] += wc
        self.nominal_seen[gs, 1 + iy] = True

    def _new_feature(self, f) -> int:
        g = self.features[f] = len(self.features)
        self.order[f] = None
        self.n_values = _grown(self.n_values, 0, g + 1)
        self.totals = _grown(self.totals, 1, g + 1)
        self.nominal_seen = _grown(self.nominal_seen, 0, g + 1)
        self.log_ml["nominal"] = _grown(self.log_ml["nominal"], 1, g + 1)
        self.nominal_seen[g, 0] = True
        return g

    def _learn_numeric(self, pairs, iy: int, w: np.ndarray, cache) -> None:
        columns = self.columns
        js = []
        for f, _ in pairs:
            j = columns.get(f)
            if j is None:
                j = columns[f] = len(columns)
                self.order[f] = None
                self.numeric = _grown(self.numeric, 1, j + 1)
                self.numeric_seen = _grown(self.numeric_seen, 0, j + 1)
                self.log_ml["numeric"] = _grown(self.log_ml["numeric"], 1, j + 1)
                self.numeric_seen[j, 0] = True
            js.append(j)
        js = np.array(js)
        xs = np.array([v for _, v in pairs])
        slots = np.array([0, 1 + iy])
        self.terms.learned_numeric(self, js, xs, iy, cache)
        # West's weighted Welford update of the marginal and class-y moments of every member
        s = self.numeric[:, js[:, None], slots]  # [R, m, 2, (n, mean, m2)]
        n, mean = s[..., 0], s[..., 1]
        wc = w[:, None, None]
        x = xs[None, :, None]
        n1 = n + wc
        delta = x - mean
        mean1 = mean + delta * wc / n1
        s[..., 2] += wc * delta * (x - mean1)
        s[..., 0] = n1
        s[..., 1] = mean1
        self.numeric[:, js[:, None], slots] = s
        self.numeric_seen[js, 1 + iy] = True

    def _tick(self) -> None:
        """Every member's statistics times its decay, in O(1) (Forgetting._tick)."""
        self.k += 1
        self.unit = self.lam ** -self.k
        self.scale = self.lam ** self.k
        if self.unit.max() > _RENORMALISE_ABOVE:
            c = self.scale
            self.class_counts *= c[:, None]
            self.total *= c
            self.numeric[..., 0] *= c[:, None, None]
            self.numeric[..., 2] *= c[:, None, None]
            self.counts *= c[:, None, None]
            self.totals *= c[:, None, None]
            self.k = 0
            self.unit = np.ones(len(self.rates))
            self.scale = np.ones(len(self.rates))
