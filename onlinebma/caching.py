"""One bounded cache for the library's derived speed caches.

A learner keeps results it can always recompute (the plan of a set of observed features, a
per-node sum of the order chain, a tree basis, …) in a :class:`BoundedCache`: a dictionary
whose entries each have a weight (1 each, or for arrays the numbers they hold), whose
total weight stays within a budget (the oldest entries are dropped first), that can be tied
to its owner's version (every entry is dropped when the version changes) and that is empty
when pickled (a copy or a pickle keeps the learner, never its caches). Its
:attr:`~BoundedCache.size` reports what it holds.

Budgets live in :mod:`onlinebma.tuning`; a cache given the *name* of one reads it at every
insertion, so a test that monkeypatches the budget there bounds the caches already built.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import NamedTuple

from . import tuning

__all__ = ["BoundedCache", "CacheSize", "array_cells"]


class CacheSize(NamedTuple):
    """What a :class:`BoundedCache` holds: its number of entries and their total weight."""

    entries: int
    weight: int


def array_cells(value) -> int:
    """The weight of an entry that is an array, or a tuple of arrays and ``None``: the
    numbers it holds.

    >>> import numpy as np
    >>> array_cells((np.zeros(3), None, np.ones((2, 2))))
    7
    """
    if isinstance(value, tuple):
        return sum(array_cells(v) for v in value if v is not None)
    return int(value.size)


class BoundedCache:
    """A dictionary of derived values bounded by the total weight of its entries.

    Parameters
    ----------
    budget : int or str
        The largest total weight kept, or the name of a budget in :mod:`onlinebma.tuning`
        (read at every insertion, so that it can be changed at run time).
    weigh : {"entries", "cells"}, default="entries"
        How an entry weighs: ``"entries"`` 1 each (the budget counts entries), ``"cells"``
        the numbers of its arrays (:func:`array_cells`; the budget counts numbers). A name,
        not a function, so that the cache's state is plain values.

    Notes
    -----
    Adding an entry that would pass the budget first drops the oldest entries (in the order
    they were added) until it fits; an entry heavier than the whole budget is not kept.
    :meth:`follow` ties the entries to a version of their owner. A pickle or a copy holds
    the budget and the weighing, never the entries.

    Examples
    --------
    >>> cache = BoundedCache(budget=2)
    >>> cache.put("a", 1.0)
    1.0
    >>> cache.put("b", 2.0), cache.put("c", 3.0)  # "a", the oldest, makes room
    (2.0, 3.0)
    >>> cache.get("a") is None, cache.get("c"), cache.size
    (True, 3.0, CacheSize(entries=2, weight=2))
    >>> cache.follow(version=7)  # a new version: every entry is dropped
    True
    >>> cache.size
    CacheSize(entries=0, weight=0)
    """

    def __init__(self, budget: int | str, weigh: str = "entries"):
        if isinstance(budget, str) and not hasattr(tuning, budget):
            raise ValueError(f"budget {budget!r} is not a budget of onlinebma.tuning")
        if weigh not in ("entries", "cells"):
            raise ValueError(f"weigh must be 'entries' or 'cells', got {weigh!r}")
        self.budget = budget
        self.weigh = weigh
        self._clear()

    def _clear(self) -> None:
        self._entries: dict = {}
        self._weights: dict = {}
        self._weight = 0
        self.version = None

    def __getstate__(self):
        return {"budget": self.budget, "weigh": self.weigh}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self):
        """The keys held, oldest first."""
        return iter(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    @property
    def limit(self) -> int:
        """The budget in force (the named budget's current value)."""
        return getattr(tuning, self.budget) if isinstance(self.budget, str) else self.budget

    @property
    def size(self) -> CacheSize:
        """The number of entries held and their total weight."""
        return CacheSize(len(self._entries), self._weight)

    def get(self, key: Hashable, default=None):
        """The value kept under ``key``, else ``default``."""
        return self._entries.get(key, default)

    def put(self, key: Hashable, value):
        """Keep ``value`` under ``key`` (dropping the oldest entries while the budget would be
        passed; not kept if it alone passes the budget) and return it."""
        weight = 1 if self.weigh == "entries" else array_cells(value)
        if key in self._entries:
            self._weight -= self._weights.pop(key)
            del self._entries[key]
        limit = self.limit
        if weight > limit:
            return value
        entries, weights = self._entries, self._weights
        while self._weight + weight > limit:
            oldest = next(iter(entries))
            del entries[oldest]
            self._weight -= weights.pop(oldest)
        entries[key] = value
        weights[key] = weight
        self._weight += weight
        return value

    def clear(self) -> None:
        """Drop every entry (the version is forgotten too)."""
        self._clear()

    def follow(self, version: Hashable) -> bool:
        """Tie the entries to their owner's ``version``: when it differs from the last one
        followed, drop every entry and return True."""
        if version == self.version:
            return False
        self._clear()
        self.version = version
        return True
