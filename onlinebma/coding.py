"""The coding of records that every batch learner reads: one object, one encoder, one policy.

A :class:`Coding` owns everything that turns records into numbers for the batch learners
(:class:`~onlinebma.batch.BufferRefitClassifier` and its subclasses: ISA, FAN, the finite
mixture, FixedOrderBMA and OrderMCMC, with or without a window):

- **feature kinds** (:class:`~onlinebma.records.FeatureKinds`: nominal or numeric, checked
  record by record with the rules of :mod:`onlinebma.records`);
- **value codes** of the nominal features and **class codes** of the labels, numbered in
  order of first arrival;
- the **record store** (:class:`~onlinebma.store.RecordStore`) with the window;
- the **cut points** of the numeric features (:meth:`fit_cuts`: the MDL rule on the stored
  records) and the one **binning** (:func:`onlinebma.table.interval_index`);
- the **growth policy** (:mod:`onlinebma.growth`): what is fitted on the records is fitted
  again once they have grown by :data:`~onlinebma.growth.GROWTH` (10 %) since the last fit
  (:func:`~onlinebma.growth.growth_due`).

and offers what the learners read:

- the **table snapshot** (:meth:`table`, a :class:`~onlinebma.table.Table`: canonical column
  order, codes compacted to the values present);
- the **rows appended and evicted since a consumer last looked** (:meth:`mark`,
  :meth:`changes`), as node rows: the nominal codes, then the numeric features cut into
  intervals, then the class code (:meth:`node_rows`);
- **one encoder** for new records (:meth:`encode_one`, :meth:`encode_frame`, the coding's
  side of :func:`onlinebma.table.encode_record`, which tables use for theirs);
- the **class-expansion rule** (:meth:`expand_classes`): a prediction over some classes
  spread over every class the learner knows.

**Codes of values that left the window go.** With a window, a nominal column's codes are
renumbered over the values still stored once it holds more than twice the window's worth
(:data:`COMPACT_FACTOR`), in the order of their codes: the codes held stay bounded by the
window whatever the stream, at an amortised constant cost per new value. Class codes stay
(``classes_`` lists every label ever learned). A consumer that counted rows is told by
:meth:`changes` (``None``: the codes moved, read the snapshot again).

>>> coding = Coding(window=2)
>>> for x, y in [({"sky": "sun"}, "play"), ({"sky": "fog"}, "stay"), ({"sky": "rain"}, "stay")]:
...     _ = coding.learn_one(x, y)  # returns the record's usable values
>>> coding.table().values, coding.classes, coding.n_stored, coding.n_learned
((('fog', 'rain'),), ('play', 'stay'), 2, 3)
>>> coding.encode_one({"sky": "rain"}).tolist()
[[2]]
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from .reading import labels_of, read_frame, read_record, uninterrupted
from .records import NOMINAL, NUMERIC, FeatureKinds, check_label, check_labels, numeric_values
from .store import RecordStore
from .table import MISSING, Table, canonical_order, encode_frame, encode_record, interval_index

__all__ = ["COMPACT_FACTOR", "Changes", "Coding"]

#: With a window ``w``, a column's value codes are compacted once it holds more than
#: ``COMPACT_FACTOR * max(w, 8)`` of them.
COMPACT_FACTOR = 2


class Mark(NamedTuple):
    """Where a consumer last looked: the store's positions and the coding's version."""

    total: int
    first: int
    version: int


class Changes(NamedTuple):
    """Node rows appended and evicted since a mark (:meth:`Coding.changes`)."""

    appended: np.ndarray
    evicted: np.ndarray


class Coding:
    """Feature kinds, value and class codes, stored records, cut points (module docstring).

    Parameters
    ----------
    nominal_attributes
        Features to treat as nominal even when their values are numbers.
    window
        Keep only the last ``window`` records (``None``: all).
    numeric_attributes
        Features that are numeric whatever their first value.
    """

    def __init__(self, nominal_attributes=None, window: int | None = None,
                 numeric_attributes=None):
        self.kinds = FeatureKinds(nominal_attributes, numeric_attributes)
        self.window = window
        self.cuts: list = []  # cut points of the numeric features (canonical order), last fit
        self._nominal: dict = {}  # feature -> store column of codes, canonical order
        self._numeric: dict = {}  # feature -> store column of floats, canonical order
        self._values: list = []  # per store column of codes: {value: code}, in code order
        self._classes: dict = {}  # label -> class code
        self._store = RecordStore()
        self._n_learned = 0
        self._version = 0  # moves when stored codes are renumbered or columns added

    # ------------------------------------------------------------------ views

    @property
    def nominal_features(self) -> tuple:
        """The nominal features, in canonical order."""
        return tuple(self._nominal)

    @property
    def numeric_features(self) -> tuple:
        """The numeric features, in canonical order."""
        return tuple(self._numeric)

    @property
    def arrival_order(self) -> tuple:
        """The nominal features and the numeric features, each in their order of first
        arrival (two tuples)."""
        return (tuple(sorted(self._nominal, key=self._nominal.__getitem__)),
                tuple(sorted(self._numeric, key=self._numeric.__getitem__)))

    @property
    def classes(self) -> tuple:
        """Every label learned, by class code."""
        return tuple(self._classes)

    @property
    def n_learned(self) -> int:
        """Records ever learned (those that left the window and those counted elsewhere too)."""
        return self._n_learned

    @property
    def n_stored(self) -> int:
        """Records stored now."""
        return len(self._store)

    def __len__(self) -> int:
        """Records stored now (:attr:`n_stored`)."""
        return len(self._store)

    @property
    def n_value_codes(self) -> int:
        """Value codes held, over all the nominal features."""
        return sum(map(len, self._values))

    def values_of(self, feature) -> tuple:
        """The values of a nominal feature that hold a code, by code."""
        return tuple(self._values[self._nominal[feature]])

    def stored(self):
        """The stored records' arrays ``(codes, numeric, y)`` in the store's coding."""
        return self._store.view()

    # -------------------------------------------------------------- checking

    def check_one(self, x: dict) -> dict:
        """``x`` validated (``TypeError``/``ValueError`` naming the feature), missing values
        dropped, numbers as floats; nothing changes."""
        numeric, nominal, _ = read_record(self.kinds, x)
        return dict(nominal + numeric)

    def check_frame(self, X) -> None:
        """Validate a DataFrame of records to predict; nothing changes."""
        read_frame(self.kinds, X, learning=False)

    # --------------------------------------------------------------- learning

    def learn_one(self, x: dict, y) -> dict:
        """Store one record: validated first, then coded (new features, values, classes).
        Returns its usable values, as :meth:`check_one` does (read once)."""
        check_label(y)
        numeric, nominal, new = read_record(self.kinds, x)
        # Validated: from here on nothing can fail.
        self.kinds.commit(new)
        self._add_features(new)
        codes = np.full((1, self._store.codes.shape[1]), -1, dtype=np.int32)
        values = np.full((1, self._store.numeric.shape[1]), np.nan)
        for f, v in nominal:
            j = self._nominal[f]
            codes[0, j] = self._values[j].setdefault(v, len(self._values[j]))
        for f, v in numeric:
            values[0, self._numeric[f]] = v
        label = self._classes.setdefault(y, len(self._classes))
        self._append(codes, values, np.array([label], dtype=np.int32))
        return dict(nominal + numeric)

    def learn_many(self, X, y) -> None:
        """Store a DataFrame of records (paired with ``y`` by position), all validated first;
        a Ctrl-C while they are stored is delivered once they are stored whole."""
        labels = labels_of(X, y)
        check_labels(labels)
        new_labels = _unique_labels(labels)
        kinds, new_kinds = read_frame(self.kinds, X)  # validates everything first
        with uninterrupted():
            self.kinds.commit(new_kinds)
            self._add_features(new_kinds)
            n = len(X)
            codes = np.full((n, self._store.codes.shape[1]), -1, dtype=np.int32)
            numeric = np.full((n, self._store.numeric.shape[1]), np.nan)
            for f, kind in kinds.items():
                s = X[f]
                if kind == NOMINAL:
                    j = self._nominal[f]
                    mapping = self._values[j]
                    for v in pd.unique(s[s.notna()]):
                        mapping.setdefault(v, len(mapping))
                    codes[:, j] = s.map(mapping).fillna(-1).to_numpy(dtype=np.int64)
                else:
                    numeric[:, self._numeric[f]] = numeric_values(s)
            for label in new_labels:
                self._classes.setdefault(label, len(self._classes))
            self._append(codes, numeric, labels.map(self._classes).to_numpy(dtype=np.int32))

    def _append(self, codes, numeric, y) -> None:
        self._store.append(codes, numeric, y, self.window)
        self._n_learned += y.shape[0]
        if self.window is not None:
            limit = COMPACT_FACTOR * max(self.window, 8)
            for j, mapping in enumerate(self._values):
                if len(mapping) > limit:
                    self._compact(j)

    def _compact(self, j: int) -> None:
        """Column ``j``'s codes renumbered over the values stored now, in code order."""
        live = self._store.view()[0][:, j]
        n_codes = len(self._values[j])
        present = np.bincount(live[live >= 0], minlength=n_codes) > 0
        mapping = np.where(present, np.cumsum(present) - 1, MISSING).astype(np.int32)
        self._store.recode(j, mapping)
        kept = [v for v, c in self._values[j].items() if present[c]]
        self._values[j] = {v: c for c, v in enumerate(kept)}
        self._version += 1

    def _add_features(self, new_kinds: dict) -> None:
        if not new_kinds:
            return
        n_nom = n_num = 0
        for f, k in new_kinds.items():
            if k == NUMERIC:
                self._numeric[f] = self._store.numeric.shape[1] + n_num
                n_num += 1
            else:
                self._nominal[f] = self._store.codes.shape[1] + n_nom
                self._values.append({})
                n_nom += 1
        self._store.add_columns(n_nom, n_num)
        self._nominal = {f: self._nominal[f] for f in canonical_order(self._nominal)}
        self._numeric = {f: self._numeric[f] for f in canonical_order(self._numeric)}
        self._version += 1

    def forget_records(self, n_learned: int) -> None:
        """Keep the coding, drop the stored records: ``n_learned`` records were counted
        elsewhere (on Dask, :mod:`onlinebma.distributed`) in this coding."""
        store = RecordStore()
        store.add_columns(self._store.codes.shape[1], self._store.numeric.shape[1])
        self._store = store
        self._n_learned = n_learned
        self._version += 1

    def register(self, other: Coding) -> None:
        """Features, values and labels ``other`` holds, added in its order of first arrival
        (what learning its stream would add, records dropped by its window included; with a
        window, values whose codes it let go are not among them)."""
        nominal, numeric = other.arrival_order
        new = {f: other.kinds.kind[f] for f in nominal + numeric if f not in self.kinds.kind}
        self.kinds.commit(new)
        self._add_features(new)
        for f in nominal:
            mapping = self._values[self._nominal[f]]
            for v in other.values_of(f):
                mapping.setdefault(v, len(mapping))
        for label in other.classes:
            self._classes.setdefault(label, len(self._classes))

    def count_dropped(self, k: int) -> None:
        """``k`` records were learned and dropped by a window before reaching this store."""
        self._n_learned += k

    def stored_frame(self):
        """The stored records as ``(X, y)`` in arrival order, with their original values:
        a pandas DataFrame (nominal columns of objects, ``None`` missing; numeric columns of
        floats, NaN missing) and a Series of labels."""
        codes, numeric, y = self._store.view()
        columns = {}
        for f, j in self._nominal.items():
            values = np.empty(len(self._values[j]) + 1, dtype=object)
            for c, v in enumerate(self._values[j]):
                values[c] = v  # one by one: a tuple value stays one value
            columns[f] = pd.Series(values[codes[:, j]], dtype=object)  # -1 reads None
        for f, j in self._numeric.items():
            columns[f] = pd.Series(numeric[:, j], dtype=float)
        labels = np.empty(len(self._classes), dtype=object)
        for c, label in enumerate(self._classes):
            labels[c] = label
        X = pd.DataFrame(columns, index=pd.RangeIndex(len(y)))
        return X, pd.Series(labels[y], dtype=object)

    # ------------------------------------------------------ snapshot and rows

    def table(self, discretize: bool = False) -> Table:
        """The stored records as a canonical :class:`~onlinebma.table.Table`; numeric features
        cut by :attr:`cuts` when ``discretize``, else floats."""
        codes, numeric, y = self._store.view()
        return Table.build(
            codes, numeric, y,
            nominal=[(f, j, list(self._values[j])) for f, j in self._nominal.items()],
            numeric_columns=list(self._numeric.items()), classes=tuple(self._classes),
            cuts=dict(zip(self._numeric, self.cuts)) if discretize else None,
        )

    def fit_cuts(self) -> list:
        """MDL cut points of every numeric feature on the stored records (canonical order);
        :attr:`cuts` is left as it is."""
        from .preprocessing import mdl_cut_points

        _, numeric, y = self._store.view()
        ycodes = np.unique(y, return_inverse=True)[1].reshape(-1)  # the table's class codes
        n_classes = max(1, int(ycodes.max(initial=-1)) + 1)
        return [np.asarray(mdl_cut_points(numeric[:, j], ycodes, n_classes), dtype=float)
                for j in self._numeric.values()]

    def mark(self) -> Mark:
        """Where the records stand now, for :meth:`changes`."""
        s = self._store
        return Mark(s.total, s.first, self._version)

    def changes(self, mark: Mark, cuts) -> Changes | None:
        """Node rows (:meth:`node_rows`, numeric features cut by ``cuts``) appended and
        evicted since ``mark``; ``None`` when they cannot be given (codes renumbered, features
        added, records forgotten or no longer held): read the snapshot again."""
        s = self._store
        if mark.version != self._version or mark.first < s.kept_from or mark.total > s.total:
            return None
        appended = self._node_rows(s.rows(max(mark.total, s.first), s.total), cuts)
        evicted = self._node_rows(s.rows(mark.first, min(s.first, mark.total)), cuts)
        return Changes(appended, evicted)

    def node_rows(self, cuts) -> np.ndarray:
        """The stored records as ``(n, p + q + 1)`` int64 node codes: the nominal features'
        codes, the numeric ones' intervals among ``cuts`` (canonical order each), the class
        code; ``-1`` missing."""
        return self._node_rows(self._store.view(), cuts)

    def _node_rows(self, arrays, cuts) -> np.ndarray:
        codes, numeric, y = arrays
        cols = [codes[:, j] for j in self._nominal.values()]
        cols += [interval_index(numeric[:, j], c) for c, j in zip(cuts, self._numeric.values())]
        cols.append(y)
        return np.column_stack(cols).astype(np.int64)

    def _encoding(self, cuts):
        return ([(f, self._values[j]) for f, j in self._nominal.items()],
                [(f, c, None) for f, c in zip(self._numeric, cuts)], ())

    def encode_one(self, x: dict, cuts=()) -> np.ndarray:
        """One record (validated here) as a ``(1, p + q)`` int64 row of node codes (the
        columns of :meth:`node_rows` less the class); values without a code: ``-1``."""
        return encode_record(self.check_one(x), *self._encoding(cuts))[0]

    def encode_frame(self, X, cuts=()) -> np.ndarray:
        """A DataFrame of records (validated here) as node-code rows (:meth:`encode_one`)."""
        self.check_frame(X)
        return encode_frame(X, *self._encoding(cuts))[0]

    # ------------------------------------------------------------- classes

    def class_code(self, label) -> int:
        """The class code of ``label`` (``-1`` if never learned)."""
        return self._classes.get(label, MISSING)

    def expand_classes(self, present, proba: np.ndarray, last: int | None = None) -> np.ndarray:
        """Probabilities over the labels ``present`` → over :attr:`classes`: a known class
        absent from ``present`` gets ``(m_k + 1) / (n + K)`` (``m_k`` its records among the
        ``n`` counted, ``K`` the classes), the present ones share the rest in their
        proportions (:mod:`onlinebma.batch`, "Classes absent from the table"). The records
        counted are the stored ones, or the last ``last`` of them (ISA's window, whose store
        also holds the contexts of its sliding score)."""
        k = len(self._classes)
        if len(present) == k:
            return proba  # every known class is present, in class-code order
        cols = np.array([self._classes[c] for c in present], dtype=np.int64)
        absent = np.ones(k, dtype=bool)
        absent[cols] = False
        _, _, y = self._store.view()
        if last is not None:
            y = y[-last:]
        counts = np.bincount(y, minlength=k)
        share = (counts[absent] + 1.0) / (len(y) + k)
        out = np.empty((proba.shape[0], k))
        out[:, absent] = share
        out[:, cols] = proba * (1.0 - share.sum())
        return out


def _unique_labels(labels):
    """The distinct labels of a Series, in order of appearance; an unhashable one is refused."""
    try:
        return pd.unique(labels)
    except TypeError:
        for row, label in enumerate(labels):
            try:
                hash(label)
            except TypeError:
                raise TypeError(f"the label y={label!r} in row {row} is not hashable "
                                f"({type(label).__name__})") from None
        raise
