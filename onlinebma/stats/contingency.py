"""Vectorised contingency tables from integer-coded data (batch paths).

Batch learners keep records as integer codes (``-1`` = missing). A node's parents are combined
into one mixed-radix configuration index, and a child's counts per configuration come from one
``np.bincount``.

>>> codes = np.array([[0, 1], [1, 0], [1, 1], [-1, 1]])
>>> config_index(codes, [2, 2])                      # a missing parent makes the row -1
array([ 1,  2,  3, -1])
>>> config_index(codes, [2, 2], missing_as_value=True)  # or a configuration of its own
array([1, 3, 4, 7])
>>> count_table(np.array([0, 1, 1, 0]), np.array([1, 0, 1, -1]), 2, 2)
array([[0., 1.],
       [1., 1.]])
"""

from __future__ import annotations

import numpy as np

__all__ = ["config_index", "count_table", "n_configs"]


def n_configs(cards, missing_as_value: bool = False) -> int:
    """Number of joint configurations of parents with the given cardinalities."""
    out = 1
    for c in cards:
        out *= int(c) + (1 if missing_as_value else 0)
    return out


def config_index(codes: np.ndarray, cards, missing_as_value: bool = False) -> np.ndarray:
    """Mixed-radix index of each row's joint parent configuration (first column most significant).

    ``codes`` is ``(n, k)``; with ``k = 0`` every row has configuration 0. A missing code (-1)
    gives -1 for the row, or, with ``missing_as_value``, the extra value ``cards[j]`` of column j.
    """
    codes = np.asarray(codes)
    n, k = codes.shape
    out = np.zeros(n, dtype=np.int64)
    missing = np.zeros(n, dtype=bool)
    for j in range(k):
        col = codes[:, j].astype(np.int64)
        card = int(cards[j])
        if missing_as_value:
            col = np.where(col < 0, card, col)
            card += 1
        else:
            missing |= col < 0
        out = out * card + col
    if not missing_as_value:
        out[missing] = -1
    return out


def count_table(config: np.ndarray, child: np.ndarray, n_config: int, n_child: int, weights=None):
    """``(n_config, n_child)`` counts of child values per configuration; rows with -1 skipped.

    ``weights`` (optional, one per row) gives expected counts, as EM needs.
    """
    keep = (config >= 0) & (child >= 0)
    flat = config[keep] * n_child + child[keep]
    w = None if weights is None else np.asarray(weights, dtype=float)[keep]
    return np.bincount(flat, weights=w, minlength=n_config * n_child).reshape(
        n_config, n_child
    ).astype(float)
