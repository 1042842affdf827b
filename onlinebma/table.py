"""The canonical table: the one coding of the stored records that every batch method reads.

:class:`~onlinebma.batch.BufferRefitClassifier` builds a :class:`Table` from its stored
(windowed) records at every refit (and, for lazy methods, after every change of the store):

- **Columns** in one canonical order that depends on neither the order in which features
  arrived nor dict key order: the nominal features, then the numeric ones, each sorted by
  ``(str(name), type name)``. For methods over discrete variables the numeric features are
  cut into intervals (cut points given by the adapter) and become code columns after the
  nominal ones; otherwise they stay floats in :attr:`Table.numeric`.
- **Values and classes** are compacted to those present in the stored records, keeping the
  order in which they were first learned: a column's codes are ``0 .. n_values - 1`` and
  ``values[j][code]`` is the value (for a discretized column, its interval's name, such as
  ``"(5.55, 6.15]"``); ``y`` codes index :attr:`Table.classes`.
- **One code for "nothing to use"**: :data:`MISSING` (``-1``) marks a missing value, and, in
  rows encoded for prediction (:meth:`Table.encode_one`, :meth:`Table.encode_frame`), a value
  or interval absent from the table's records. Numeric floats use NaN for missing. Features
  the table does not have are dropped.

>>> import numpy as np
>>> t = Table.build(np.array([[2, -1], [0, 1]]), np.empty((2, 0)), np.array([1, 1]),
...                 nominal=[("wind", 1, ["low", "high"]), ("sky", 0, ["sun", "fog", "rain"])],
...                 numeric_columns=[], classes=["stay", "play"])
>>> t.nominal_features, t.codes.tolist(), t.values, t.classes
(('sky', 'wind'), [[1, -1], [0, 0]], (('sun', 'rain'), ('high',)), ('play',))
>>> t.encode_one({"sky": "fog", "wind": "high", "temp": 3.0}).codes.tolist()
[[-1, 0]]
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .records import numeric_values

__all__ = ["MISSING", "Table", "canonical_order", "compact_codes", "encode_frame", "encode_record",
           "interval_index"]

#: The code of a missing value, and of a value absent from the table's records.
MISSING = -1


def _key(name):
    """Sort key of a feature name in the canonical order."""
    return str(name), type(name).__name__


def canonical_order(names) -> list:
    """``names`` sorted by ``(str(name), type name)``: the table's column order."""
    return sorted(names, key=_key)


def interval_index(values: np.ndarray, cuts) -> np.ndarray:
    """The interval of each value among sorted ``cuts`` (``(-inf, c1]`` is 0), ``MISSING`` for
    NaN: the one binning of numeric values, for tables and for
    :class:`~onlinebma.coding.Coding`'s node rows alike.

    >>> interval_index(np.array([1.0, 5.55, 6.0, np.nan, 9.0]), [5.55, 6.15]).tolist()
    [0, 0, 1, -1, 2]
    """
    values = np.asarray(values, dtype=float)
    nan = np.isnan(values)
    b = np.searchsorted(np.asarray(cuts, dtype=float), np.where(nan, 0.0, values), side="left")
    return np.where(nan, MISSING, b).astype(np.int64)


def _binned(values, cuts, bins) -> np.ndarray:
    """Codes of numeric ``values`` cut by ``cuts``, intervals renumbered by ``bins`` (``None``:
    the interval index itself)."""
    b = interval_index(values, cuts)
    if bins is None:
        return b
    return np.where(b < 0, MISSING, np.asarray(bins)[np.maximum(b, 0)])


def encode_record(x: dict, nominal, discretized, floats):
    """One checked record (missing values dropped or None) as a code row and a float row:
    the one encoder of new records.

    ``nominal`` lists ``(feature, {value: code})``, ``discretized`` ``(feature, cuts, bins)``
    (``bins``: interval -> code, ``None`` for the interval index) and ``floats`` the numeric
    features kept as floats. A value without a code, and a missing one, get ``MISSING``.
    """
    codes = np.full((1, len(nominal) + len(discretized)), MISSING, dtype=np.int64)
    numeric = np.full((1, len(floats)), np.nan)
    for j, (f, index) in enumerate(nominal):
        v = x.get(f)
        if v is not None:
            codes[0, j] = index.get(v, MISSING)
    p = len(nominal)
    for k, (f, cuts, bins) in enumerate(discretized):
        v = x.get(f)
        if v is not None:
            codes[0, p + k] = _binned(np.array([float(v)]), cuts, bins)[0]
    for j, f in enumerate(floats):
        v = x.get(f)
        if v is not None:
            numeric[0, j] = float(v)
    return codes, numeric


def encode_frame(X, nominal, discretized, floats):
    """:func:`encode_record` for a pandas DataFrame of checked records (None/NaN missing)."""
    n = len(X)
    codes = np.full((n, len(nominal) + len(discretized)), MISSING, dtype=np.int64)
    numeric = np.full((n, len(floats)), np.nan)
    for j, (f, index) in enumerate(nominal):
        if f in X.columns:
            codes[:, j] = X[f].map(index).fillna(MISSING).to_numpy(dtype=np.int64)
    p = len(nominal)
    for k, (f, cuts, bins) in enumerate(discretized):
        if f in X.columns:
            codes[:, p + k] = _binned(numeric_values(X[f]), cuts, bins)
    for j, f in enumerate(floats):
        if f in X.columns:
            numeric[:, j] = numeric_values(X[f])
    return codes, numeric


def _compact(col: np.ndarray, n_codes: int):
    """Codes of one column renumbered ``0..r-1`` over the codes present (order kept).

    Returns the new column and the map old code -> new code (``MISSING`` where absent).
    """
    present = np.bincount(col[col >= 0], minlength=n_codes)[:n_codes] > 0
    mapping = np.where(present, np.cumsum(present) - 1, MISSING).astype(np.int32)
    return np.append(mapping, MISSING)[col], mapping  # code -1 reads the appended entry


def compact_codes(codes: np.ndarray):
    """Each column of an integer code matrix renumbered ``0..r-1`` over the codes present
    (the table's compaction, for array-level users): returns codes, cards and maps.

    ``maps[j]`` sends an original code to its new one (``-1``: absent). A column without any
    observed value gets ``r = 1``.

    >>> c, r, maps = compact_codes(np.array([[3, -1], [0, -1], [3, -1]]))
    >>> c.tolist(), r.tolist(), maps[0].tolist()
    ([[1, -1], [0, -1], [1, -1]], [2, 1], [0, -1, -1, 1])
    """
    codes = np.asarray(codes)
    out = np.empty(codes.shape, dtype=np.int64)
    cards, maps = [], []
    for j in range(codes.shape[1]):
        col = codes[:, j]
        out[:, j], mapping = _compact(col, int(col.max(initial=-1)) + 1)
        cards.append(max(1, int((mapping >= 0).sum())))
        maps.append(mapping.astype(np.int64))
    return out, np.array(cards, dtype=np.int64), maps


@dataclass(frozen=True, eq=False)
class Table:
    """Records as arrays in the canonical coding (module docstring).

    Attributes
    ----------
    codes
        ``(n, p)`` int32 codes of the nominal (and discretized numeric) columns, ``-1`` missing.
    numeric
        ``(n, q)`` float64 values of the numeric columns that are not discretized, NaN missing.
    y
        ``(n,)`` int32 class codes (indices into ``classes``); ``None`` in rows to predict.
    nominal_features, numeric_features
        Names of the ``codes`` and ``numeric`` columns.
    n_values
        Number of codes of each ``codes`` column (values present in the records).
    classes
        Labels present in the records, by class code.
    values
        Per ``codes`` column, the value of every code (interval names for discretized ones).
    cuts
        Cut points of the discretized columns, which are the last ``len(cuts)`` code columns.
    """

    codes: np.ndarray
    numeric: np.ndarray
    y: np.ndarray | None
    nominal_features: tuple
    numeric_features: tuple
    n_values: tuple
    classes: tuple
    values: tuple = ()
    cuts: tuple = ()
    _index: tuple = field(default=(), repr=False)  # per nominal column: {value: code}
    _bins: tuple = field(default=(), repr=False)  # per discretized column: bin -> code

    @property
    def n(self) -> int:
        return self.codes.shape[0]

    @property
    def discretized_features(self) -> tuple:
        """Names of the discretized numeric columns (the last ``len(cuts)`` code columns)."""
        return self.nominal_features[len(self.nominal_features) - len(self.cuts):]

    # ------------------------------------------------------------------ build

    @classmethod
    def build(cls, codes, numeric, y, *, nominal, numeric_columns, classes, cuts=None):
        """The table of stored records.

        ``codes``/``numeric``/``y`` are the store's arrays (codes in order of first arrival,
        ``-1`` missing; class codes index ``classes``). ``nominal`` lists ``(feature, store
        column, values by store code)``, ``numeric_columns`` ``(feature, store column)``, in any
        order. ``cuts`` (``{feature: cut points}``) discretizes the numeric features.
        """
        nominal = sorted(nominal, key=lambda t: _key(t[0]))
        numeric_columns = sorted(numeric_columns, key=lambda t: _key(t[0]))
        n = codes.shape[0]
        cols, names, n_values, values, index = [], [], [], [], []
        for f, j, labels in nominal:
            col, mapping = _compact(codes[:, j], len(labels))
            kept = [labels[c] for c in np.flatnonzero(mapping >= 0)]
            cols.append(col)
            names.append(f)
            n_values.append(len(kept))
            values.append(tuple(kept))
            index.append({v: c for c, v in enumerate(kept)})
        bins = []
        cut_list = []
        if cuts is not None:
            from .preprocessing import interval_labels

            for f, j in numeric_columns:
                c = np.asarray(cuts[f], dtype=float)
                x = numeric[:, j]
                col, mapping = _compact(interval_index(x, c), len(c) + 1)
                labels = interval_labels(c)
                cols.append(col)
                names.append(f)
                n_values.append(int((mapping >= 0).sum()))
                values.append(tuple(labels[b] for b in np.flatnonzero(mapping >= 0)))
                bins.append(mapping)
                cut_list.append(c)
            floats, float_names = np.empty((n, 0)), ()
        else:
            floats = numeric[:, [j for _, j in numeric_columns]].astype(float)
            float_names = tuple(f for f, _ in numeric_columns)
        ycodes, cmap = _compact(np.asarray(y, dtype=np.int32), len(classes))
        kept_classes = tuple(classes[c] for c in np.flatnonzero(cmap >= 0))
        return cls(
            codes=np.column_stack(cols).astype(np.int32) if cols else np.empty((n, 0), np.int32),
            numeric=floats, y=ycodes, nominal_features=tuple(names),
            numeric_features=float_names, n_values=tuple(n_values), classes=kept_classes,
            values=tuple(values), cuts=tuple(cut_list), _index=tuple(index), _bins=tuple(bins),
        )

    # ----------------------------------------------------------------- encode

    def _rows(self, codes, numeric) -> Table:
        return Table(codes=codes, numeric=numeric, y=None,
                     nominal_features=self.nominal_features,
                     numeric_features=self.numeric_features, n_values=self.n_values,
                     classes=self.classes, values=self.values, cuts=self.cuts,
                     _index=self._index, _bins=self._bins)

    def _encoding(self):
        """The arguments of :func:`encode_record` for this table's coding."""
        p_nom = len(self._index)
        return (list(zip(self.nominal_features[:p_nom], self._index)),
                list(zip(self.discretized_features, self.cuts, self._bins)),
                self.numeric_features)

    def encode_one(self, x: dict) -> Table:
        """One record (a dict of checked values; None/NaN = missing) as a row to predict."""
        codes, numeric = encode_record(x, *self._encoding())
        return self._rows(codes.astype(np.int32), numeric)

    def encode_frame(self, X) -> Table:
        """A pandas DataFrame of checked records (None/NaN = missing) as rows to predict."""
        codes, numeric = encode_frame(X, *self._encoding())
        return self._rows(codes.astype(np.int32), numeric)

    def class_codes(self, labels) -> np.ndarray:
        """The code of each label in :attr:`classes` (``MISSING`` for a label it lacks)."""
        index = {c: k for k, c in enumerate(self.classes)}
        return np.array([index.get(c, MISSING) for c in labels], dtype=np.int64)

    def translate(self, other: Table) -> Table:
        """``other``'s records (and classes) coded by this table, matched by feature name and
        value: what an earlier fit makes of today's records. Unknown classes get ``-1``."""
        codes = np.full((other.n, len(self.nominal_features)), MISSING, dtype=np.int32)
        where = {f: j for j, f in enumerate(other.nominal_features)}
        for j, f in enumerate(self.nominal_features):
            src = where.get(f)
            if src is not None:
                index = self._index[j] if j < len(self._index) else dict(
                    zip(self.values[j], range(len(self.values[j]))))
                mapping = np.array([index.get(v, MISSING) for v in other.values[src]] + [MISSING],
                                   dtype=np.int32)
                codes[:, j] = mapping[other.codes[:, src]]  # code -1 reads the last entry
        numeric = np.full((other.n, len(self.numeric_features)), np.nan)
        where = {f: j for j, f in enumerate(other.numeric_features)}
        for j, f in enumerate(self.numeric_features):
            if f in where:
                numeric[:, j] = other.numeric[:, where[f]]
        classes = {c: k for k, c in enumerate(self.classes)}
        y = np.array([classes.get(c, MISSING) for c in other.classes] + [MISSING], dtype=np.int32)
        return replace(self._rows(codes, numeric), y=y[other.y])
