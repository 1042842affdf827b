"""Distinct rows of an integer array, fast: numpy's row unique from 1-D uniques of keys."""

from __future__ import annotations

import numpy as np

__all__ = ["unique_rows"]


def unique_rows(rows: np.ndarray) -> tuple:
    """``np.unique(rows, axis=0, return_inverse=True, return_counts=True)`` of integer (or
    bool) rows, the same arrays in the same (lexicographic) order, from 1-D uniques of
    mixed-radix keys: the columns are folded into one int64 key, left to right, and the key
    is replaced by its rank among the distinct prefixes whenever the next column would
    overflow it (numpy's row unique sorts rows as records, many times slower).

    >>> rows = np.array([[1, 0], [0, 2], [1, 0]])
    >>> uniq, inverse, counts = unique_rows(rows)
    >>> uniq.tolist(), inverse.tolist(), counts.tolist()
    ([[0, 2], [1, 0]], [1, 0, 1], [1, 2])
    """
    rows = np.asarray(rows)
    m, n = rows.shape
    if not m or not n:
        uniq, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
        return uniq, inverse.ravel(), counts
    digits = rows.astype(np.int64)
    digits -= digits.min(axis=0)
    spans = (digits.max(axis=0) + 1).tolist()
    key, size = np.zeros(m, dtype=np.int64), 1
    for j, span in enumerate(spans):
        if size * span >= 1 << 62:
            _, key = np.unique(key, return_inverse=True)
            size = int(key.max()) + 1
        key = key * span + digits[:, j]
        size *= span
    _, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True,
                                          return_counts=True)
    return rows[first], inverse.ravel(), counts
