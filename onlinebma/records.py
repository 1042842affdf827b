"""How a record's values are read: missing, nominal or numeric, and what is refused.

Every learner in the package reads records the same way:

- A feature absent from ``x``, or whose value is ``None``, a NaN of any float type (Python,
  ``np.float64``, ``np.float32``, ...), ``pd.NA`` or ``pd.NaT`` is **missing**; it is skipped
  (documented behaviour, never an error), whatever the feature's kind, also under
  ``nominal_attributes`` (a NaN is never a category), and a missing value gives a new feature no
  kind.
- A feature named in ``nominal_attributes`` is nominal whatever its values; one named in
  ``numeric_attributes`` is numeric, and a value of it that is not a number is a
  ``TypeError`` even if it comes first (so a ``"?"`` cannot make it nominal). Otherwise a
  feature whose first observed value is a number (``int``/``float``/numpy scalar, not
  ``bool``) is **numeric**; any other value makes it **nominal**. A feature keeps its kind:
  a string arriving for a numeric feature, or a number for a nominal one not named in
  ``nominal_attributes``, is a ``TypeError``, whose message names the usual cause (a
  placeholder for a missing value, such as ``"?"``, read as text: read the data with
  ``pd.read_csv(..., na_values="?")``) and the fix.
- Nominal values must be hashable (``TypeError``); numeric values must be finite and within
  a float's range (``10**400``: ``ValueError``). The label must not be missing (any of the
  above: ``ValueError``) and must be hashable (``TypeError``).
- A record is a ``dict`` (or another mapping) of ``{feature: value}``: a pandas row, ``None``
  or a string is a ``TypeError`` (``row.to_dict()`` turns a row into a record). A feature name
  that is NaN is a ``ValueError``: every NaN differs from every other, so each would become a
  new feature.
- A NaN of any kind is missing, a signalling ``Decimal('sNaN')`` too (it refuses comparison).
- ``learn_many`` of every learner pairs the rows of ``X`` and ``y`` by position (the i-th row
  with the i-th label), whatever their indexes, as River's ``learn_many`` does.

`FeatureKinds` validates a whole record (or a whole DataFrame) *before* anything is
changed, so that a refused record leaves the learner exactly as it was; `numeric_values`
reads a validated numeric column of a DataFrame as floats, every missing value as NaN.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Mapping

import numpy as np

__all__ = ["FeatureKinds", "check_columns", "check_label", "check_labels", "declared",
           "nominal_got_number", "not_a_frame", "numeric_got_text", "numeric_values"]

NOMINAL = 0
NUMERIC = 1


def _is_missing(value) -> bool:
    """``None``, NaN of any float type, ``pd.NA``, ``pd.NaT`` or a numpy ``NaT``.

    >>> import numpy as np, pandas as pd
    >>> [_is_missing(v) for v in (None, float("nan"), np.float32("nan"), pd.NA, pd.NaT)]
    [True, True, True, True, True]
    >>> [_is_missing(v) for v in (0.0, "", "nan", np.float32(1), False, ("a",))]
    [False, False, False, False, False, False]
    """
    t = type(value)
    if t is str or t is int:
        return False
    if t is float:
        return value != value
    return value is None or _is_missing_other(value)


def _is_missing_other(value) -> bool:
    """`_is_missing` for values other than None and plain str/int/float: plain Python
    comparisons only (``NaN != NaN``), no numpy call, for the per-record path."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None:  # a numpy scalar: NaN of any precision, complex NaN, NaT
        return dtype.kind in "fcmM" and getattr(value, "ndim", 1) == 0 and bool(value != value)
    if isinstance(value, numbers.Number):  # float subclasses, complex, Decimal
        try:
            return value != value
        except ArithmeticError:  # a signalling NaN (Decimal('sNaN')) refuses comparison
            return True
    pd = sys.modules.get("pandas")  # pd.NA and pd.NaT exist only if pandas was imported
    return pd is not None and (value is pd.NA or value is pd.NaT)


def _is_number(value) -> bool:
    """A real number (Python or numpy scalar), not a bool."""
    t = type(value)
    if t is int or t is float:
        return True
    if t is bool:
        return False
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return dtype.kind in "iuf" and getattr(value, "ndim", 0) == 0
    return isinstance(value, numbers.Real)


def check_label(y) -> None:
    """Refuse a missing or unhashable label with a clear error.

    >>> import numpy as np
    >>> check_label(np.float32("nan"))
    Traceback (most recent call last):
    ...
    ValueError: the label y=np.float32(nan) is missing (None, NaN, pd.NA or NaT); ...
    """
    if _is_missing(y):
        raise ValueError(
            f"the label y={y!r} is missing (None, NaN, pd.NA or NaT); "
            f"every learned record needs one"
        )
    try:
        hash(y)
    except TypeError:
        raise TypeError(f"the label y={y!r} is not hashable") from None


class FeatureKinds:
    """The kind (nominal or numeric) of every feature seen so far.

    >>> kinds = FeatureKinds(nominal_attributes=["zip"])
    >>> record = {"age": 31, "zip": 15213, "colour": "red", "note": None}
    >>> numeric, nominal, new = kinds.split(record)
    >>> numeric, nominal
    ([('age', 31.0)], [('zip', 15213), ('colour', 'red')])
    >>> kinds.commit(new)
    >>> kinds.split({"age": "old"})
    Traceback (most recent call last):
    ...
    TypeError: feature 'age' is numeric but got 'old' (str); ...
    >>> FeatureKinds(numeric_attributes=["age"]).split({"age": "?"})
    Traceback (most recent call last):
    ...
    TypeError: feature 'age' is numeric but got '?' (str); if it marks a missing value, read ...

    Parameters
    ----------
    nominal_attributes : iterable or None, default None
        Features that are nominal whatever their values.
    numeric_attributes : iterable or None, default None
        Features that are numeric whatever their first value (a feature may not be in both).
    """

    __slots__ = ("nominal_attributes", "numeric_attributes", "kind", "nominal", "numeric")

    def __init__(self, nominal_attributes=None, numeric_attributes=None):
        self.nominal_attributes = declared("nominal_attributes", nominal_attributes)
        self.numeric_attributes = declared("numeric_attributes", numeric_attributes)
        both = self.nominal_attributes & self.numeric_attributes
        if both:
            raise ValueError(f"feature(s) {sorted(map(repr, both))} are named in both "
                             f"nominal_attributes and numeric_attributes")
        self.kind: dict = {}
        self.nominal: set = set()  # the features of each kind, for split's fast path
        self.numeric: set = set()

    def split(self, x: dict):
        """Validate ``x``; return ``(numeric, nominal, new_kinds)`` without changing anything.

        ``numeric`` and ``nominal`` list the observed ``(feature, value)`` pairs (numeric
        values as floats); ``new_kinds`` maps features seen for the first time to their kind.
        Call `commit` with ``new_kinds`` once the record has been accepted.
        """
        if type(x) is not dict and not isinstance(x, Mapping):
            raise TypeError(f"a record is a dict {{feature: value}}, got {_short(x)} "
                            f"({type(x).__name__}); a pandas row becomes one with row.to_dict()")
        values = x.values()
        types = set(map(type, values))
        if len(types) == 1:  # fast path: every value a str of a known nominal feature, or
            t = types.pop()  # every value a finite float of a known numeric feature
            if t is str and x.keys() <= self.nominal:
                return [], list(x.items()), {}
            if t is float and x.keys() <= self.numeric and all(map(math.isfinite, values)):
                return list(x.items()), [], {}
        kind = self.kind
        named = self.nominal_attributes
        numeric, nominal, new = [], [], {}
        for f, v in x.items():
            t = type(v)
            if t is float:
                if v != v:
                    continue  # NaN: missing
            elif t is not str and (v is None or (t is not int and _is_missing_other(v))):
                continue  # None, a numpy NaN or NaT, pd.NA, pd.NaT: missing
            k = kind.get(f)
            if k is None:
                k = new.get(f)
            if k is None:
                if f != f:
                    raise ValueError(f"a feature name is NaN ({f!r}): every NaN is a new name")
                k = self._first_kind(f, v)
                new[f] = k
            if k == NUMERIC:
                if t is not float:  # fast path for the common case
                    if not _is_number(v):
                        raise numeric_got_text(f, v)
                    v = _float(f, v)
                if v == math.inf or v == -math.inf:
                    raise ValueError(f"feature {f!r} has an infinite value {v!r}")
                numeric.append((f, v))
            elif t is str:  # fast path: hashable and not a number
                nominal.append((f, v))
            else:
                if f not in named and _is_number(v):
                    raise nominal_got_number(f, v)
                try:
                    hash(v)
                except TypeError:
                    raise TypeError(
                        f"feature {f!r} has an unhashable value {v!r} ({t.__name__})"
                    ) from None
                nominal.append((f, v))
        return numeric, nominal, new

    def split_frame(self, X, learning: bool = True):
        """Validate a pandas DataFrame column by column, without changing anything.

        Returns ``(kinds, new_kinds)``: the kind of every column that has an observed value
        and is known (or, when ``learning``, new), and the kinds of the new ones. Raises the
        same errors as `split`, naming the feature.
        """
        if not hasattr(X, "columns") or not hasattr(X, "iloc"):
            raise not_a_frame(X)
        check_columns(X)
        kinds, new = {}, {}
        named = self.nominal_attributes
        for f in X.columns:
            s = X[f]
            present = s[s.notna()]
            if present.empty:
                continue
            kind = self.kind.get(f)
            if kind is None:
                if not learning:
                    continue
                if f != f:
                    raise ValueError(f"a feature name is NaN ({f!r}): every NaN is a new name")
                kind = self._first_kind(f, present.iloc[0])
                new[f] = kind
            if kind == NUMERIC:
                if s.dtype.kind not in "iuf":
                    for v in present:
                        if not _is_number(v):
                            raise numeric_got_text(f, v)
                if s.dtype.kind == "b":
                    raise TypeError(f"feature {f!r} is numeric but got booleans")
                try:
                    as_float = present.to_numpy(dtype=float)
                except OverflowError:
                    for v in present:
                        _float(f, v)  # names the value
                    raise
                if np.isinf(as_float).any():
                    raise ValueError(f"feature {f!r} has an infinite value")
            elif s.dtype.kind in "iuf" and f not in named:
                raise nominal_got_number(f, present.iloc[0])
            elif s.dtype.kind not in "iufb":
                for v in _distinct(f, present):
                    if f not in named and _is_number(v):
                        raise nominal_got_number(f, v)
            kinds[f] = kind
        return kinds, new

    def _first_kind(self, f, v) -> int:
        """The kind of a new feature ``f`` whose first observed value is ``v`` (a value the
        kind refuses is then refused by the caller, naming the declaration)."""
        if f in self.nominal_attributes:
            return NOMINAL
        if f in self.numeric_attributes or _is_number(v):
            return NUMERIC
        return NOMINAL

    def check_mergeable(self, other: FeatureKinds) -> None:
        """A ``TypeError`` naming a feature nominal here and numeric in ``other`` (or the
        reverse): learners that disagree on a feature's kind cannot be merged.

        >>> a, b = FeatureKinds(), FeatureKinds()
        >>> a.commit({"age": NUMERIC}); b.commit({"age": NOMINAL})
        >>> a.check_mergeable(b)
        Traceback (most recent call last):
        ...
        TypeError: feature 'age' is nominal in one learner and numeric in the other
        """
        for f, k in other.kind.items():
            if self.kind.get(f, k) != k:
                raise TypeError(f"feature {f!r} is nominal in one learner and numeric in the other")

    def commit(self, new_kinds: dict) -> None:
        self.kind.update(new_kinds)
        for f, k in new_kinds.items():
            (self.nominal if k == NOMINAL else self.numeric).add(f)

    # The sets of each kind are derived from ``kind`` and rebuilt on unpickling, not pickled:
    # a set's order depends on its history, so a learner and its unpickled copy fed the same
    # records would otherwise pickle to different bytes.
    def __getstate__(self):
        return self.nominal_attributes, self.kind, self.numeric_attributes

    def __setstate__(self, state):
        self.nominal_attributes, self.kind, *rest = state  # pickles before numeric_attributes
        self.numeric_attributes = rest[0] if rest else frozenset()
        self.nominal = {f for f, k in self.kind.items() if k == NOMINAL}
        self.numeric = {f for f, k in self.kind.items() if k == NUMERIC}


def declared(name: str, features) -> frozenset:
    """``nominal_attributes`` or ``numeric_attributes`` as a set of feature names: ``None`` or
    an iterable of names; a single string is refused (it would read as its letters)."""
    if features is None:
        return frozenset()
    if isinstance(features, (str, bytes)):
        raise TypeError(f"{name} is a list of feature names, got the string {features!r}; "
                        f"write [{features!r}]")
    try:
        return frozenset(features)
    except TypeError:
        raise TypeError(f"{name} is a list of feature names, got "
                        f"{type(features).__name__}") from None


def numeric_got_text(f, v) -> TypeError:
    """A numeric feature ``f`` got ``v``, not a number: the error names the usual cause, a
    placeholder for a missing value read as text, and both fixes.

    >>> print(numeric_got_text("age", "?"))  # doctest: +NORMALIZE_WHITESPACE
    feature 'age' is numeric but got '?' (str); if it marks a missing value, read the data
    with pd.read_csv(..., na_values='?') (or pd.to_numeric(column, errors='coerce')); if the
    feature is nominal, name it in nominal_attributes
    """
    return TypeError(f"feature {f!r} is numeric but got {_short(v)} ({type(v).__name__}); "
                     f"if it marks a missing value, read the data with "
                     f"pd.read_csv(..., na_values={_short(v)}) (or pd.to_numeric(column, "
                     f"errors='coerce')); if the feature is nominal, name it in "
                     f"nominal_attributes")


def nominal_got_number(f, v) -> TypeError:
    """A nominal feature ``f`` (not declared so) got the number ``v``: most often a numeric
    column that a placeholder such as ``"?"`` made text, so the error names that fix first.

    >>> print(nominal_got_number("age", 41))  # doctest: +NORMALIZE_WHITESPACE
    feature 'age' is nominal (its first value was not a number) but got the number 41; if it
    is numeric, a placeholder for a missing value such as '?' read as text made it nominal:
    read the data with pd.read_csv(..., na_values='?') (or pd.to_numeric(column,
    errors='coerce')) and name it in numeric_attributes, then learn anew; if its numbers are
    categories, name it in nominal_attributes
    """
    return TypeError(f"feature {f!r} is nominal (its first value was not a number) but got "
                     f"the number {_short(v)}; if it is numeric, a placeholder for a missing "
                     f"value such as '?' read as text made it nominal: read the data with "
                     f"pd.read_csv(..., na_values='?') (or pd.to_numeric(column, "
                     f"errors='coerce')) and name it in numeric_attributes, then learn anew; "
                     f"if its numbers are categories, name it in nominal_attributes")


def _float(f, v) -> float:
    """``float(v)`` for a number of feature ``f``, a ``ValueError`` naming it if no float can
    hold it (an integer such as ``10**400``)."""
    try:
        return float(v)
    except OverflowError:
        raise ValueError(f"feature {f!r} has a value too large for a float: "
                         f"{_short(v)}") from None


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-10:]} ({len(text)} characters)"


def _distinct(f, values):
    """The distinct values of a column's observed cells, each hashable (else a TypeError naming
    the feature and the value). Factorised first, so the Python-level checks run once per
    distinct value, not per cell (it was 90% of ``learn_many``'s time on string columns)."""
    import pandas as pd

    try:
        uniques = pd.unique(values)
    except TypeError:  # an unhashable cell: find and name it
        return dict.fromkeys(_hashable_or_raise(f, values))
    return _hashable_or_raise(f, uniques)


def _hashable_or_raise(f, values):
    for v in values:
        try:
            hash(v)
        except TypeError:
            raise TypeError(
                f"feature {f!r} has an unhashable value {v!r} ({type(v).__name__})"
            ) from None
        yield v


def not_a_frame(X) -> TypeError:
    """The error for an ``X`` that is not a DataFrame, naming how to make one of it.

    >>> import numpy as np
    >>> print(str(not_a_frame(np.zeros((2, 2)))).split("; ")[1])
    name its columns: pd.DataFrame(X, columns=names)
    """
    import pandas as pd

    if isinstance(X, Mapping):
        hint = "a dict of columns becomes one with pd.DataFrame(X); learn_one takes one record"
    elif isinstance(X, np.ndarray):
        hint = "name its columns: pd.DataFrame(X, columns=names)"
    elif isinstance(X, pd.Series):
        hint = "one record is X.to_dict(), for learn_one; a column is X.to_frame()"
    elif hasattr(X, "__next__"):
        hint = "records from a generator become one with pd.DataFrame(list(X))"
    else:
        hint = "pd.DataFrame(X, columns=names) makes one"
    return TypeError(f"X is a pandas DataFrame with one column per feature, got "
                     f"{type(X).__name__}; {hint}")


def check_columns(X) -> None:
    """A ``ValueError`` naming the column names that DataFrame ``X`` repeats."""
    if not X.columns.is_unique:
        repeated = X.columns[X.columns.duplicated()].unique().tolist()
        raise ValueError(f"X repeats the column name(s) {repeated}; a feature is one column")


def check_labels(y) -> None:
    """Refuse a label Series with missing values (None, NaN, ``pd.NA``, ``NaT``), naming the
    first such row by position and index, and the Series by its name."""
    missing = y.isna().to_numpy()
    if missing.any():
        position = int(np.argmax(missing))
        name = "y" if y.name is None else f"y ({y.name!r})"
        raise ValueError(
            f"the label {name} is missing (None, NaN, pd.NA or NaT) in {int(missing.sum())} "
            f"row(s), the first in row {position} (index {y.index[position]!r}); every "
            f"learned record needs one"
        )


def numeric_values(column) -> np.ndarray:
    """A numeric column of a DataFrame (validated by `FeatureKinds.split_frame`) as a
    float64 array, every missing value (None, NaN, ``pd.NA``, ``NaT``) as NaN: also for object
    columns and pandas' nullable dtypes, where ``to_numpy().astype(float)`` fails on ``pd.NA``.

    >>> import pandas as pd
    >>> numeric_values(pd.Series([1, pd.NA, None, 2.5], dtype=object))
    array([1. , nan, nan, 2.5])
    """
    return column.to_numpy(dtype=float, na_value=np.nan)
