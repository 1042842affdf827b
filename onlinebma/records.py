"""How a record's values are read: missing, nominal or numeric, and what is refused.

Every learner in the package reads records the same way:

- A feature absent from ``x``, ``None`` or a float NaN is **missing**; it is skipped (documented
  behaviour, never an error).
- A feature named in ``nominal_attributes`` is nominal whatever its values. Otherwise a
  feature whose first observed value is a number (``int``/``float``/numpy scalar, not
  ``bool``) is **numeric**; any other value makes it **nominal**. A feature keeps its kind:
  a string arriving for a numeric feature, or a number for a nominal one not named in
  ``nominal_attributes``, is a ``TypeError``.
- Nominal values must be hashable (``TypeError``); numeric values must be finite
  (``ValueError``). The label must not be ``None``/NaN (``ValueError``) and must be hashable.

:class:`FeatureKinds` validates a whole record *before* anything is changed, so that a refused
record leaves the learner exactly as it was.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["FeatureKinds", "check_label", "check_labels", "is_missing"]

NOMINAL = 0
NUMERIC = 1
_PLAIN_NUMBERS = (int, float)


def is_missing(value) -> bool:
    """``None`` or NaN.

    >>> is_missing(None), is_missing(float("nan")), is_missing(0.0), is_missing("")
    (True, True, False, False)
    """
    return value is None or (isinstance(value, float) and value != value)


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
    """Refuse a missing or unhashable label with a clear error."""
    if y is None or (isinstance(y, float) and y != y):
        raise ValueError("the label y is missing (None or NaN); every learned record needs one")
    try:
        hash(y)
    except TypeError:
        raise TypeError(f"the label y={y!r} is not hashable") from None


class FeatureKinds:
    """The kind (nominal or numeric) of every feature seen so far.

    >>> kinds = FeatureKinds(nominal_attributes=["zip"])
    >>> numeric, nominal, new = kinds.split({"age": 31, "zip": 15213, "colour": "red", "note": None})
    >>> numeric, nominal
    ([('age', 31.0)], [('zip', 15213), ('colour', 'red')])
    >>> kinds.commit(new)
    >>> kinds.split({"age": "old"})
    Traceback (most recent call last):
    ...
    TypeError: feature 'age' is numeric but got 'old' (str)
    """

    __slots__ = ("nominal_attributes", "kind")

    def __init__(self, nominal_attributes=None):
        self.nominal_attributes = frozenset(nominal_attributes or ())
        self.kind: dict = {}

    def split(self, x: dict):
        """Validate ``x``; return ``(numeric, nominal, new_kinds)`` without changing anything.

        ``numeric`` and ``nominal`` list the observed ``(feature, value)`` pairs (numeric
        values as floats); ``new_kinds`` maps features seen for the first time to their kind.
        Call :meth:`commit` with ``new_kinds`` once the record has been accepted.
        """
        kind = self.kind
        named = self.nominal_attributes
        numeric, nominal, new = [], [], {}
        for f, v in x.items():
            t = type(v)
            if v is None or (t is float and v != v):
                continue
            k = kind.get(f)
            if k is None:
                k = new.get(f)
            if k is None:
                k = NOMINAL if (f in named or not _is_number(v)) else NUMERIC
                new[f] = k
            if k == NUMERIC:
                if t is not float:  # fast path for the common case
                    if not _is_number(v):
                        raise TypeError(
                            f"feature {f!r} is numeric but got {v!r} ({t.__name__})"
                        )
                    v = float(v)
                    if v != v:
                        continue  # a numpy NaN: missing
                if v == math.inf or v == -math.inf:
                    raise ValueError(f"feature {f!r} has an infinite value {v!r}")
                numeric.append((f, v))
            elif t is str:  # fast path: hashable and not a number
                nominal.append((f, v))
            else:
                if f not in named and _is_number(v):
                    raise TypeError(
                        f"feature {f!r} is nominal but got the number {v!r}; "
                        f"name it in nominal_attributes to treat numbers as categories"
                    )
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
        same errors as :meth:`split`, naming the feature.
        """
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
                first = present.iloc[0]
                kind = NOMINAL if (f in named or not _is_number(first)) else NUMERIC
                new[f] = kind
            if kind == NUMERIC:
                if s.dtype.kind not in "iuf":
                    for v in present:
                        if not _is_number(v):
                            raise TypeError(
                                f"feature {f!r} is numeric but got {v!r} ({type(v).__name__})"
                            )
                if s.dtype.kind == "b":
                    raise TypeError(f"feature {f!r} is numeric but got booleans")
                if np.isinf(present.to_numpy(dtype=float)).any():
                    raise ValueError(f"feature {f!r} has an infinite value")
            elif s.dtype.kind in "iuf" and f not in named:
                raise TypeError(
                    f"feature {f!r} is nominal but got numbers; "
                    f"name it in nominal_attributes to treat numbers as categories"
                )
            elif s.dtype.kind not in "iufb":
                for v in dict.fromkeys(_hashable_or_raise(f, present)):
                    if f not in named and _is_number(v):
                        raise TypeError(
                            f"feature {f!r} is nominal but got the number {v!r}; "
                            f"name it in nominal_attributes to treat numbers as categories"
                        )
            kinds[f] = kind
        return kinds, new

    def commit(self, new_kinds: dict) -> None:
        self.kind.update(new_kinds)


def _hashable_or_raise(f, values):
    for v in values:
        try:
            hash(v)
        except TypeError:
            raise TypeError(f"feature {f!r} has an unhashable value {v!r} ({type(v).__name__})") from None
        yield v


def check_labels(y) -> None:
    """Refuse a label Series with missing values."""
    if y.isna().any():
        raise ValueError("the label y is missing (None or NaN) in some rows")
