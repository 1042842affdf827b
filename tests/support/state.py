"""A learner's state as plain values, to compare two learners by what they hold.

Two pickles of equal states can differ in their bytes when one shares an object that the
other holds twice (pickle writes a shared object once and refers back to it: a numpy dtype
reused by two arrays, for instance). :func:`state_of` walks what pickle would write
(``__reduce_ex__``) and keeps only the values, so equal states compare equal however their
objects are shared.
"""

from __future__ import annotations

import copyreg

import numpy as np

_ATOMS = (type(None), bool, int, float, complex, str, bytes)


def state_of(obj, _path=None):
    """``obj`` as nested tuples of plain values (arrays as dtype, shape and bytes)."""
    path = set() if _path is None else _path
    if isinstance(obj, _ATOMS):
        return (type(obj).__name__, repr(obj))
    if isinstance(obj, np.ndarray):
        return ("ndarray", obj.dtype.str, obj.shape,
                obj.tobytes() if obj.dtype != object else state_of(obj.tolist(), path))
    if isinstance(obj, np.generic | np.dtype | type):
        return (type(obj).__name__, repr(obj))
    if id(obj) in path:  # a reference cycle: its place, not its value again
        return ("cycle", type(obj).__name__)
    path.add(id(obj))
    try:
        if isinstance(obj, dict):
            return ("dict", tuple((state_of(k, path), state_of(v, path)) for k, v in obj.items()))
        if isinstance(obj, list | tuple):
            return (type(obj).__name__, tuple(state_of(v, path) for v in obj))
        if isinstance(obj, set | frozenset):
            return (type(obj).__name__, tuple(sorted(repr(state_of(v, path)) for v in obj)))
        reduced = obj.__reduce_ex__(4)
        if isinstance(reduced, str):
            return ("global", reduced)
        func, args, *rest = reduced + (None,) * (5 - len(reduced))
        name = getattr(func, "__qualname__", repr(func))
        if func is copyreg.__newobj__:
            name = args[0].__qualname__
            args = args[1:]
        state, items, dict_items = rest[0], rest[1], rest[2]
        return (name, state_of(args, path), state_of(state, path),
                None if items is None else state_of(list(items), path),
                None if dict_items is None else state_of(dict(dict_items), path))
    finally:
        path.discard(id(obj))
