"""Coding of feature pairs and of their cells in :class:`~onlinebma.stats.pairs.PairCounts`.

Pair ``(u, v)``, ``u < v``, has the id ``v (v - 1) / 2 + u`` (:func:`pair_id`, inverse
:func:`pairs_of`), so the pairs of a new feature come last; :func:`pair_cells` maps the cells
of pair tables from one capacity layout to another.

>>> pair_id(0, 1), pair_id(1, 2), [c.tolist() for c in pairs_of(3)]
(0, 2, [[0, 0, 1], [1, 2, 2]])
"""

from __future__ import annotations

import numpy as np

__all__ = ["pair_cells", "pair_id", "pairs_of"]


def pair_id(u, v):
    """The id of the pair of feature codes ``u < v`` (ints or int arrays)."""
    return v * (v - 1) // 2 + u


def pairs_of(n: int):
    """``(u, v)``: the feature codes of every pair id of ``n`` features, in id order."""
    if n < 2:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    v = np.repeat(np.arange(1, n), np.arange(1, n))
    u = np.arange(len(v)) - pair_id(0, v)
    return u, v


def pair_cells(ou, ov, cu, cv):
    """The cells of pairs whose tables hold ``ou x ov`` values, moved to capacities ``cu x
    cv`` (arrays over the pairs): ``(cells, (pair, local))`` with ``pair`` the index of
    each cell's pair, ``local`` its column from the pair's old offset (joint ``x_u`` major,
    then the two margins, then the class count) and ``cells`` the same cell's column from
    the pair's new offset."""
    size = ou * ov + ou + ov + 1
    pid = np.repeat(np.arange(len(size)), size)
    local = np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size)
    ou, ov, cu, cv = ou[pid], ov[pid], cu[pid], cv[pid]
    joint = ou * ov
    xu, xv = np.divmod(local, np.maximum(ov, 1))
    cells = np.select([local < joint, local < joint + ou, local < joint + ou + ov],
                      [xu * cv + xv, cu * cv + local - joint, cu * cv + cu + local - joint - ou],
                      cu * cv + cu + cv)
    return cells, (pid, local)
