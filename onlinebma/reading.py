"""What every learner shares for reading its input: records, frames, labels, Ctrl-C safety.

:func:`read_record` and :func:`read_frame` are :meth:`FeatureKinds.split
<onlinebma.records.FeatureKinds.split>` and ``split_frame`` for every learner, with the errors
a hostile input gets named: a record that is not a dict, ``X`` that is not a DataFrame or
repeats a column name, a value no float can hold (``10**400``) or that cannot be compared
(``Decimal("sNaN")``).

:func:`prepare_frame` checks a whole batch and converts its columns before the learner
changes anything, so a refused batch leaves the learner exactly as it was.

``X`` and ``y`` are paired by position, not by index (as River's and scikit-learn's
``learn_many``/``fit`` do): row ``i`` of ``X`` is learned with the ``i``-th label of ``y``,
whatever the two indexes say; a caller that means index alignment aligns first
(``y.loc[X.index]``).

Ctrl-C: a ``KeyboardInterrupt`` is raised between any two bytecodes of the main thread, so one
arriving while ``learn_many`` updates many counts would leave a batch half-learned. The
statements that change a learner's state run inside :func:`uninterrupted`, which holds SIGINT
back until they are done and then delivers it: the learner has learned the whole batch and the
interrupt still stops the program. Only SIGINT is held back (another exception raised
asynchronously, such as a ``KeyboardInterrupt`` sent by ``PyThreadState_SetAsyncExc``, is
not), and only in the main thread, the one Python delivers signals to.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Mapping

import numpy as np
import pandas as pd

from .records import NOMINAL, check_columns, check_label, check_labels, not_a_frame
from .stats.gaussian import MAX_ABS_VALUE, check_magnitude

__all__ = ["check_frame", "coded_labels", "factorize", "label_column", "labels_of", "pairs_of",
           "prepare_columns", "prepare_frame", "read_frame", "read_record", "records_of",
           "uninterrupted"]



def read_record(kinds, x):
    """``kinds.split(x)``, refusing a record that is not a dict (``TypeError``) and naming the
    feature of a value that cannot be read as a number (``ValueError``).

    >>> from onlinebma.records import FeatureKinds
    >>> try:
    ...     read_record(FeatureKinds(), {"b": "x", "a": 10**400})
    ... except ValueError as error:
    ...     print(str(error).split(":")[0])
    feature 'a' has a value too large for a float
    """
    if type(x) is not dict and not isinstance(x, Mapping):
        hint = "; a pandas row is row.to_dict()" if isinstance(x, pd.Series) else ""
        raise TypeError(f"a record is a dict {{feature: value}}, got {type(x).__name__}{hint}")
    try:
        return kinds.split(x)
    except ArithmeticError as error:  # float(10**400), Decimal("sNaN") != itself
        for f, v in x.items():
            try:
                kinds.split({f: v})
            except ArithmeticError:
                raise ValueError(f"feature {f!r} has a value that cannot be read as a number "
                                 f"({error})") from None
        raise  # pragma: no cover - some single feature raises what the record raised


def read_frame(kinds, X, learning: bool = True):
    """``kinds.split_frame(X, learning)`` for a DataFrame ``X`` with distinct column names
    (else a ``TypeError``/``ValueError``), naming the column of a value that cannot be read
    as a number."""
    check_frame(X)
    try:
        return kinds.split_frame(X, learning=learning)
    except ArithmeticError as error:
        for f in X.columns:
            try:
                kinds.split_frame(X[[f]], learning=learning)
            except ArithmeticError:
                raise ValueError(f"column {f!r} has a value that cannot be read as a number "
                                 f"({error})") from None
        raise  # pragma: no cover - some single column raises what the frame raised


def check_frame(X) -> None:
    """A ``TypeError`` unless ``X`` is a DataFrame, a ``ValueError`` naming a repeated column."""
    if not isinstance(X, pd.DataFrame):
        raise not_a_frame(X)
    check_columns(X)


def label_column(y):
    """``y`` itself, or the one column of a one-column DataFrame (or of an ``(n, 1)`` array):
    a label frame is learned exactly as its column, as scikit-learn reads a column vector.
    Anything that is not one label per row (several columns, a scalar, a generator) is a
    ``TypeError`` naming what to pass, raised before anything is learned.

    >>> label_column(pd.DataFrame({"y": ["a", "b"]})).tolist()
    ['a', 'b']
    >>> label_column(pd.DataFrame({"y": [1, 2], "z": [3, 4]}))
    Traceback (most recent call last):
    ...
    TypeError: y is one label per row (a Series, list or 1-D array), got a DataFrame of ...
    """
    if isinstance(y, pd.DataFrame):
        if y.shape[1] != 1:
            names = list(y.columns)
            hint = f"; pass one column: y[{names[0]!r}]" if names else ""
            raise TypeError(f"y is one label per row (a Series, list or 1-D array), got a "
                            f"DataFrame of {y.shape[1]} columns {names}{hint}")
        return y.iloc[:, 0]
    if isinstance(y, np.ndarray) and y.ndim != 1:
        if y.ndim == 2 and y.shape[1] == 1:
            return y[:, 0]
        raise TypeError(f"y is one label per row (a Series, list or 1-D array), got an array "
                        f"of shape {y.shape}")
    if not hasattr(y, "__len__") or isinstance(y, (str, bytes, Mapping)):
        hint = "; a generator becomes one with list(y)" if hasattr(y, "__next__") else ""
        raise TypeError(f"y is one label per row (a Series, list or 1-D array), got "
                        f"{type(y).__name__}{hint}")
    return y


def labels_of(X, y) -> pd.Series:
    """``y`` (:func:`label_column`) as an object Series paired with ``X``'s rows by position
    (a ``ValueError`` when the lengths differ); each label kept whole, tuples included. A
    Series keeps its index and name, which only errors read (the labels are paired with
    ``X``'s rows by position)."""
    check_frame(X)
    y = label_column(y)
    if len(X) != len(y):
        raise ValueError(f"X has {len(X)} rows but y has {len(y)}")
    if isinstance(y, pd.Series):  # its index and name kept, for errors to name a row
        return pd.Series(y.to_numpy(dtype=object), index=y.index, name=y.name)
    # a list, not np.asarray: that would make a column of tuples a second axis
    return pd.Series(y.astype(object) if isinstance(y, np.ndarray) else list(y), dtype=object)


def prepare_frame(kinds, X, y):
    """Validate ``X`` (a DataFrame) and its labels without changing ``kinds``.

    Returns ``(columns, new_kinds, labels)``: ``columns`` and ``new_kinds`` as
    :func:`prepare_columns` gives them, ``labels`` an object Series.
    """
    labels = _checked_labels(X, y)
    return (*prepare_columns(kinds, X), labels)


def _checked_labels(X, y) -> pd.Series:
    """:func:`labels_of`, every label checked (none missing, each hashable)."""
    labels = labels_of(X, y)
    check_labels(labels)
    try:  # each distinct label once; an unhashable one is found and named
        distinct = pd.unique(labels)
    except TypeError:
        distinct = labels
    for label in distinct:
        check_label(label)
    return labels


def coded_labels(X, y):
    """``(labels, codes)``: the checked labels of ``X``'s rows in order of first appearance
    and each row's code, as :func:`factorize` gives them. Integer labels spanning a small
    range (:data:`SMALL_RANGE`; no integer is missing) are coded by subtraction, and a
    categorical's codes are used as they are, instead of boxing the labels as objects and
    hashing them (``experiments.bench_nb``, batch part)."""
    check_frame(X)
    y = label_column(y)
    categories = None
    if isinstance(y, pd.Series) and isinstance(y.dtype, pd.CategoricalDtype):
        # a categorical's codes are small integers already (-1, missing, fails the range)
        categories = y.cat.categories.to_numpy(dtype=object)
        a = y.cat.codes.to_numpy()
    else:
        a = y.to_numpy() if isinstance(y, pd.Series) else y
    span = _small_range(a) if isinstance(a, np.ndarray) and a.ndim == 1 else None
    if span is None or len(a) != len(X) or (categories is not None and span[0] < 0):
        return factorize(_checked_labels(X, y))
    lo, hi = span
    codes = _subtracted(a, lo)
    seen = _first_seen(codes, hi - lo + 1)
    rank = np.zeros(hi - lo + 1, dtype=np.intp)
    rank[seen] = np.arange(len(seen))
    if categories is not None:
        names = list(categories[seen + lo])
        for label in names:
            check_label(label)
    else:
        names = [lo + int(v) for v in seen]
    return names, rank[codes]


def _first_seen(codes: np.ndarray, n_values: int) -> np.ndarray:
    """The distinct ``codes`` (each in ``[0, n_values)``) in order of first appearance, from
    the shortest prefix (growing eightfold from 1,024 rows) that holds them all."""
    distinct = np.count_nonzero(np.bincount(codes, minlength=n_values))
    m = 1024
    while True:
        seen = pd.unique(codes[:m])
        if len(seen) == distinct:
            return seen
        m *= 8


def prepare_columns(kinds, X):
    """Validate ``X`` (a DataFrame) without changing ``kinds``: ``(columns, new_kinds)``,
    where ``columns`` maps each column with an observed value to ``(kind, values, present)``
    (numeric values as a float array, NaN where missing; nominal values factorised,
    ``(codes, distinct values)``)."""
    col_kinds, new = read_frame(kinds, X)
    columns = {}
    for f, kind in col_kinds.items():
        s = X[f]
        integers = isinstance(s.dtype, np.dtype) and s.dtype.kind in "iu"
        present = np.ones(len(s), dtype=bool) if integers else s.notna().to_numpy()
        if kind == NOMINAL:  # factorised once: (codes, distinct values), -1 where missing
            coded = _integer_codes(s) if integers else None
            if coded is None:
                codes, uniques = pd.factorize(s)
                coded = codes, np.asarray(uniques)  # ints stay ints
            columns[f] = (kind, coded, present)
            continue
        values = np.full(len(s), np.nan)
        values[present] = s[present].to_numpy(dtype=float)
        big = np.abs(values) > MAX_ABS_VALUE
        if big.any():
            check_magnitude(f, float(values[big][0]))
        columns[f] = (kind, values, present)
    return columns, new


def records_of(columns, n_rows: int) -> list:
    """The rows of prepared ``columns`` as sparse dicts of their observed values."""
    return [dict(nominal + numeric) for numeric, nominal in pairs_of(columns, n_rows)]


def pairs_of(columns, n_rows: int):
    """The rows of prepared ``columns`` as :meth:`FeatureKinds.split
    <onlinebma.records.FeatureKinds.split>` reads them, one at a time: ``(numeric, nominal)``,
    the observed numeric ``(feature, float)`` and nominal ``(feature, value)`` pairs in column
    order. Made row by row, not all at once: a batch's pairs alive together would cost
    collections of the garbage collector."""
    numeric, nominal = [], []
    for f, (kind, values, present) in columns.items():
        if kind == NOMINAL:
            codes, uniques = values
            uniques = [v.item() if isinstance(v, np.generic) else v for v in uniques]
            nominal.append((f, [uniques[c] for c in codes.tolist()], present.tolist()))
        else:
            numeric.append((f, values.tolist(), present.tolist()))
    for i in range(n_rows):
        yield ([(f, v[i]) for f, v, p in numeric if p[i]],
               [(f, v[i]) for f, v, p in nominal if p[i]])


SMALL_RANGE = 1 << 16
"""An integer column whose values span fewer than this many integers (and fewer than its
rows) is coded by subtraction, ``value - min``, not by pandas' hash table: integer codes, the
usual input of a categorical batch, then cost two passes for the range and one for the codes
(``experiments.bench_nb``, batch part: what ``learn_many`` costs against CategoricalNB)."""


def _integer_codes(s):
    """``(codes, values)`` of an integer Series (numpy dtype) by subtraction
    (:data:`SMALL_RANGE`), values in increasing order (some perhaps absent from the column,
    which their zero counts skip); ``None`` when its range is too wide."""
    a = s.to_numpy()
    span = _small_range(a)
    if span is None:
        return None
    lo, hi = span
    return _subtracted(a, lo), np.arange(lo, hi + 1, dtype=a.dtype)


def _small_range(a: np.ndarray):
    """``(min, max)`` of an integer array spanning fewer than :data:`SMALL_RANGE` integers
    and fewer than its length; ``None`` for any other array."""
    if a.dtype.kind not in "iu" or not len(a):
        return None
    lo, hi = int(a.min()), int(a.max())
    return (lo, hi) if hi - lo < min(SMALL_RANGE, len(a)) else None


def _subtracted(a: np.ndarray, lo: int) -> np.ndarray:
    """``a - lo`` as indices (``a`` itself when it already is: no copy)."""
    return (a - lo if lo else a).astype(np.intp, copy=False)


def factorize(y):
    """Labels in order of first appearance and the code of each row."""
    codes, uniques = pd.factorize(y)
    return list(uniques), codes


@contextlib.contextmanager
def uninterrupted():
    """Hold SIGINT back while the block runs, then deliver it as the previous handler would.

    >>> with uninterrupted():
    ...     total = sum(range(10))
    >>> total
    45
    """
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or previous is None:
        yield  # no Python handler to restore (installed outside Python): nothing held back
        return
    held = []
    signal.signal(signal.SIGINT, lambda signum, frame: held.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            if callable(previous):
                previous(signal.SIGINT, held[0])
            elif previous == signal.SIG_DFL:
                signal.raise_signal(signal.SIGINT)
