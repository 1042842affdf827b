"""Parent sets as bitmasks over each node's candidate parents.

The chain (:mod:`~onlinebma.order_mcmc.chain`) asks, for a node and the set of its
predecessors in an order, which of its parent sets lie inside that set: with the
predecessors and every parent set as bitmasks over the node's candidates (at most 62 of
them, one bit each), a set lies inside when ``set & ~predecessors == 0``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["set_masks"]


def set_masks(parents: list, candidates: list, n: int) -> list:
    """Parent sets as bitmasks over each node's candidate parents (bit ``t`` = its ``t``-th
    candidate), for the chain's "sets inside this predecessor set" query; ``None`` for a node
    with more than 62 candidates.

    >>> sets = np.array([[3, 3], [1, 3], [2, 3], [1, 2]])   # {}, {1}, {2}, {1, 2} of node 0
    >>> set_masks([sets], [np.array([1, 2])], 3)[0].tolist()
    [0, 1, 2, 3]
    """
    out = []
    for par, cand in zip(parents, candidates):
        if len(cand) > 62:
            out.append(None)
            continue
        bit = np.zeros(n + 1, dtype=np.int64)  # the dummy node n: no bit
        bit[cand] = np.left_shift(1, np.arange(len(cand), dtype=np.int64))
        out.append(np.bitwise_or.reduce(bit[par], axis=1).astype(np.int64))
    return out
