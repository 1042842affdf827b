"""Sparse counts: integer counts at the integer keys that occur, and nothing for the others.

The count tables of the stream learners (:mod:`~onlinebma.order_mcmc.incremental`) give every
cell of every candidate family a key in one virtual dense layout (family offset plus the
mixed-radix code of the parents' values and the child's value), but store only the keys
that occur: per family at most one configuration and one cell per distinct record, whatever
the product of the parents' numbers of values.

The keys are a sorted array searched with :func:`numpy.searchsorted`; keys that are new
since the last merge wait in a second, small sorted array, merged into the first when it
grows past ``sqrt(size * batch)`` entries (``batch`` the keys added at once), so that adding
the keys of one record costs ``O(batch log size)`` plus, amortised, ``O(sqrt(size / batch))``
per key, and a merge is one pass over the arrays (``O(size)``), never a sort.
Counts that fall to zero (a record removed) are dropped at the merge. Keys are stored as
int32 while they fit (a layout of fewer than ``2**31`` virtual cells), else int64.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SparseCounts"]


_MAX32 = 2**31 - 1


def _narrow(keys: np.ndarray) -> np.ndarray:
    """Sorted non-negative keys as int32 when they fit (half the memory and search
    traffic), else int64."""
    keys = np.asarray(keys, np.int64)
    return keys.astype(np.int32) if not len(keys) or keys[-1] <= _MAX32 else keys


def _search(keys: np.ndarray, values) -> np.ndarray:
    """:func:`numpy.searchsorted` of int64 ``values`` in ``keys`` without converting
    int32 ``keys`` (a value beyond int32 lies past every key)."""
    values = np.asarray(values, np.int64)
    if keys.dtype == np.int64:
        return np.searchsorted(keys, values)
    if values.size and values.max() <= _MAX32:  # as a rule: one pass to check, one to narrow
        return np.searchsorted(keys, values.astype(np.int32))
    pos = np.searchsorted(keys, np.minimum(values, _MAX32).astype(np.int32))
    return np.where(values > _MAX32, len(keys), pos)


def _find(keys: np.ndarray, query: np.ndarray):
    """Positions of ``query`` in sorted ``keys`` and whether each is there."""
    pos = _search(keys, query)
    if not len(keys):
        return pos, np.zeros(pos.shape, dtype=bool)
    hit = keys[np.minimum(pos, len(keys) - 1)] == query
    return pos, hit


class SparseCounts:
    """Counts at sorted non-negative integer keys (module docstring).

    Parameters
    ----------
    keys, counts
        Distinct sorted keys and their counts (default: none).
    dtype
        Integer type of the counts.

    >>> c = SparseCounts()
    >>> c.add(np.array([7, 3]), 1).tolist()          # the counts before
    [0, 0]
    >>> c.add(np.array([3, 9]), np.array([2, 1])).tolist()
    [1, 0]
    >>> c.lookup(np.array([3, 5, 7, 9])).tolist()
    [3, 0, 1, 1]
    >>> keys, counts = c.items()
    >>> keys.tolist(), counts.tolist()
    ([3, 7, 9], [3, 1, 1])
    """

    def __init__(self, keys=None, counts=None, dtype=np.int32):
        self.keys = _narrow(np.zeros(0, np.int64) if keys is None else keys)
        self.counts = np.zeros(0, dtype) if counts is None else np.asarray(counts, dtype)
        self._new_keys = np.zeros(0, np.int64)
        self._new_counts = np.zeros(0, self.counts.dtype)

    @classmethod
    def from_dense(cls, dense: np.ndarray) -> SparseCounts:
        """The non-zero entries of a dense count array, keyed by their index."""
        at = np.flatnonzero(dense)
        return cls(at, dense[at], dense.dtype)

    def __len__(self) -> int:
        """Number of keys stored (zeros not merged away yet included)."""
        return len(self.keys) + len(self._new_keys)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.keys, self.counts, self._new_keys, self._new_counts))

    def lookup(self, query) -> np.ndarray:
        """Counts at ``query`` (any shape), 0 where a key is absent, as int64."""
        query = np.asarray(query, np.int64)
        out = np.zeros(query.shape, np.int64)
        for keys, counts in ((self.keys, self.counts), (self._new_keys, self._new_counts)):
            if len(keys):  # the buffer is empty after a merge: no pass over the query
                pos, hit = _find(keys, query)
                out[hit] = counts[pos[hit]]
        return out

    def add(self, keys, k) -> np.ndarray:
        """Add ``k`` (a number or one per key) at the distinct ``keys``; return the counts
        before the addition (int64, 0 where a key was absent)."""
        keys = np.asarray(keys, np.int64)
        k = np.broadcast_to(np.asarray(k, self.counts.dtype), keys.shape)
        before = np.zeros(keys.shape, np.int64)
        pos, hit = _find(self.keys, keys)
        before[hit] = self.counts[pos[hit]]
        self.counts[pos[hit]] += k[hit]
        rest = np.flatnonzero(~hit)
        if not len(rest):
            return before
        pos, hit = _find(self._new_keys, keys[rest])
        before[rest[hit]] = self._new_counts[pos[hit]]
        self._new_counts[pos[hit]] += k[rest[hit]]
        rest = rest[~hit]
        if len(rest):
            order = np.argsort(keys[rest])
            new, k = keys[rest][order], k[rest][order]
            at = np.searchsorted(self._new_keys, new)
            self._new_keys = np.insert(self._new_keys, at, new)
            self._new_counts = np.insert(self._new_counts, at, k)
            if len(self._new_keys) ** 2 > max(1024, len(self.keys)) * len(keys) * 16:
                self.merge()
        return before

    def merge(self) -> None:
        """Move the new keys into the main array; drop the zero counts."""
        if len(self._new_keys):
            if self._new_keys[-1] > _MAX32:
                self.keys = self.keys.astype(np.int64)
            at = _search(self.keys, self._new_keys)
            self.keys = np.insert(self.keys, at, self._new_keys)
            self.counts = np.insert(self.counts, at, self._new_counts)
            self._new_keys = np.zeros(0, np.int64)
            self._new_counts = self._new_counts[:0]
        if (self.counts == 0).any():
            keep = self.counts != 0
            self.keys, self.counts = self.keys[keep], self.counts[keep]

    def items(self) -> tuple:
        """``(keys, counts)``, sorted, zeros dropped (after a merge)."""
        self.merge()
        return self.keys, self.counts

    def between(self, lo: int, hi: int) -> tuple:
        """``(keys, counts)`` with ``lo <= key < hi``, unsorted (without merging)."""
        parts = []
        for keys, counts in ((self.keys, self.counts), (self._new_keys, self._new_counts)):
            a, b = _search(keys, [lo, hi])
            parts.append((keys[a:b], counts[a:b]))
        return (np.concatenate([parts[0][0], parts[1][0]]),
                np.concatenate([parts[0][1], parts[1][1]]))

    def __eq__(self, other) -> bool:
        """Equal when both hold the same non-zero counts at the same keys."""
        if not isinstance(other, SparseCounts):
            return NotImplemented
        (ka, ca), (kb, cb) = self.items(), other.items()
        return bool(np.array_equal(ka, kb) and np.array_equal(ca, cb))

    __hash__ = None  # mutable

    def __add__(self, other: SparseCounts) -> SparseCounts:
        """The counts of both, summed key by key (one merge of the sorted keys)."""
        out = SparseCounts(*self.items(), self.counts.dtype)
        out += other
        return out

    def __iadd__(self, other: SparseCounts) -> SparseCounts:
        keys, counts = other.items()
        if not len(self.keys):
            self.keys, self.counts = keys.copy(), counts.astype(self.counts.dtype)
            return self
        self.merge()
        pos, hit = _find(self.keys, keys)
        self.counts[pos[hit]] += counts[hit].astype(self.counts.dtype)
        self._new_keys = keys[~hit].astype(np.int64)
        self._new_counts = counts[~hit].astype(self.counts.dtype)
        self.merge()
        return self

    def __getstate__(self):
        self.merge()  # a pickle carries the non-zero counts at their keys only
        return self.__dict__

    def rekey(self, new_keys: np.ndarray) -> None:
        """Replace the keys of :meth:`items` by ``new_keys``, which must keep their order."""
        self.merge()
        self.keys = _narrow(new_keys)

    def subset(self, keep: np.ndarray, new_keys: np.ndarray) -> SparseCounts:
        """A new table of the entries ``keep`` of :meth:`items` at ``new_keys`` (any order)."""
        keys, counts = self.items()
        order = np.argsort(new_keys, kind="stable")
        return SparseCounts(np.asarray(new_keys)[order], counts[keep][order], counts.dtype)

