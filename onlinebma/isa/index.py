"""ISA's index of the stored records: packed bitsets of record sets, in arrival order.

One bitset per (feature, value), per feature's missing values, per class and one of all records:
bit ``t`` of a set is record ``t``. A model's parent configuration is the AND of its antecedents'
sets, and every count of eq. 10 — for a test instance, or for a stored record against the
records before it (eq. 9) — is a popcount of ANDed sets. So a count costs ``n / 64`` word
operations, shared by all models and test instances, and appending a record sets ``p + 2``
bits (amortised O(p), whatever the number of stored records).
"""

from __future__ import annotations

import numpy as np

from .. import tuning

__all__ = ["BitsetIndex"]



def _popcount(words: np.ndarray) -> np.ndarray:
    """Set bits along the last axis."""
    return np.bitwise_count(words).sum(axis=-1, dtype=np.int64)


class BitsetIndex:
    """Record sets of ``n`` records with ``p`` features of ``r[j]`` values and ``K`` classes.

    Rows of ``bits``: feature ``j`` value ``v`` at ``offset[j] + v``, feature ``j`` missing at
    ``offset[j] + r[j]``, class ``k`` at ``class_row + k``, every record at ``all_row``.
    """

    def __init__(self, r: np.ndarray, K: int):
        self.r = np.asarray(r, dtype=np.int64)
        self.K = K
        self.offset = np.concatenate(([0], np.cumsum(self.r + 1)))[:-1]
        self.missing_row = self.offset + self.r
        self.class_row = int(self.offset[-1] + self.r[-1] + 1) if self.r.size else 0
        self.all_row = self.class_row + K
        self.bits = np.zeros((self.all_row + 1, 1), dtype=np.uint64)
        self.n = 0

    @property
    def nbytes(self) -> int:
        return int(self.bits.nbytes)

    def append(self, X: np.ndarray, y: np.ndarray):
        """Add records (compact codes ``X``, ``-1`` = missing; classes ``y``) after the others."""
        k = y.shape[0]
        self.reserve(self.n + k)
        t = np.arange(self.n, self.n + k, dtype=np.uint64)
        rows = np.concatenate(
            [np.where(X < 0, self.missing_row, self.offset + X),
             (self.class_row + y)[:, None], np.full((k, 1), self.all_row)], axis=1)
        masks = np.left_shift(np.uint64(1), t & np.uint64(63))
        np.bitwise_or.at(self.bits, (rows, (t >> np.uint64(6)).astype(np.int64)[:, None]),
                         masks[:, None])
        self.n += k

    def reserve(self, records: int):
        """Make room for ``records`` records (the capacity at least doubles when it grows:
        amortised O(1) per record)."""
        words = (records + 63) // 64
        if words > self.bits.shape[1]:
            grown = np.zeros((self.bits.shape[0], max(words, 2 * self.bits.shape[1])),
                             dtype=np.uint64)
            grown[:, : self.bits.shape[1]] = self.bits
            self.bits = grown

    def _prefix(self, lo: int, m: int) -> tuple[int, np.ndarray]:
        """Words covering records ``0..m-1`` and the mask of those from ``lo`` on."""
        words = (m + 63) // 64
        mask = np.full(words, np.uint64(0xFFFFFFFFFFFFFFFF))
        if m % 64:
            mask[-1] = np.uint64((1 << (m % 64)) - 1)
        if lo:
            mask[: lo // 64] = 0
        if lo % 64 and lo // 64 < words:
            mask[lo // 64] &= np.uint64(~((1 << (lo % 64)) - 1) & (2**64 - 1))
        return words, mask

    def config_sets(self, models: list, values, query: np.ndarray, lo: int,
                    m: int) -> np.ndarray:
        """``(len(models), words)`` sets of the records ``lo .. m - 1`` in ``query``'s parent
        configuration under each model.

        ``models[i]`` is an antecedent set and ``values[i]`` the values its configurations are
        coded against (``values=None``: ``query``'s own, as with the full coding): for a
        feature of ``A``, a record is in ``query``'s configuration when both miss the value, or
        both equal the coded value, or (indicator coding) both have a value and neither equals
        it.
        """
        words, mask = self._prefix(lo, m)
        p = self.r.size
        width = max(max(map(len, models), default=0), 1)
        # Antecedents padded with column p, which reads the set of all records.
        cols = np.array([A + (p,) * (width - len(A)) for A in models], dtype=np.int64)
        cols = cols.reshape(len(models), width)
        q = np.append(query, 0)[cols]
        offset = np.append(self.offset, self.all_row)[cols]
        missing = np.append(self.missing_row, self.all_row)[cols]
        if values is None:
            rows = np.where(q < 0, missing, offset + np.maximum(q, 0))
            return np.bitwise_and.reduce(self.bits[rows, :words], axis=1) & mask
        v = np.array([tuple(vals) + (0,) * (width - len(vals)) for vals in values],
                     dtype=np.int64).reshape(cols.shape)
        rows = np.where(q < 0, missing, offset + v)
        sets = self.bits[rows, :words]
        other = (q >= 0) & (q != v)  # has a value, and not the coded one
        if other.any():  # every record, less those with the coded value and those missing it
            sets = np.where(other[:, :, None],
                            self.bits[self.all_row, :words] & ~(sets | self.bits[missing, :words]),
                            sets)
        return np.bitwise_and.reduce(sets, axis=1) & mask

    def counts(self, sets: np.ndarray, query: np.ndarray, children: np.ndarray,
               incomplete: np.ndarray):
        """Counts of eq. 10 among the records of ``sets`` (from `config_sets`).

        Returns ``n_k`` ``(M, K)`` (records of class ``k``), ``n_x`` ``(M, K, C)`` (of class
        ``k`` with child ``children[c]`` equal to ``query``'s value) and ``n_o`` ``(M, K, C)``
        (of class ``k`` with that child observed; counted only where ``incomplete[c]``, the
        child having missing values, and equal to ``n_k`` elsewhere).
        """
        words = sets.shape[1]
        K, C, M = self.K, children.size, sets.shape[0]
        classes = self.bits[self.class_row: self.class_row + K, :words]
        n_k = _popcount(sets[:, None, :] & classes[None])
        # A class absent from a configuration has every count 0: only the (model, class)
        # pairs present are counted (few classes per configuration on data of many classes).
        m, k = np.nonzero(n_k)
        value = self.bits[self.offset[children] + query[children], :words]
        gaps = children[incomplete]
        seen = ~self.bits[self.missing_row[gaps], :words]
        n_x = np.zeros((M, K, C), dtype=np.int64)
        full = np.repeat(n_k[:, :, None], C, axis=2)
        step = max(1, tuning.PASS_WORDS // max((C + gaps.size) * words, 1))  # bounded memory
        for lo in range(0, m.size, step):
            at = (m[lo: lo + step], k[lo: lo + step])
            part = (sets[at[0]] & classes[at[1]])[:, None, :]
            n_x[at] = _popcount(part & value[None])
            if gaps.size:
                observed = full[at]
                observed[:, incomplete] = _popcount(part & seen[None])
                full[at] = observed
        return n_k, n_x, full
