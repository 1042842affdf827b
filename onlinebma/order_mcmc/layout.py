"""Keys of the count tables: one table per variable set, shared by the families that read it.

Family ``(i, Z)`` is scored from the joint counts over ``Z ∪ {i}`` (its cells ``N_ijk``) and
over ``Z`` (its configurations ``N_ij``), and the same variable set serves many families:
the cells of ``X|{Y,Z}``, ``Y|{X,Z}`` and ``Z|{X,Y}`` are all the counts over ``{X,Y,Z}``,
and the configurations of one family are the cells of another. The counts of
:class:`~onlinebma.order_mcmc.incremental.StreamingScores` are therefore kept once per
*variable set* (sorted, padded with the dummy node ``n``), and each family reads its two
sets. Every member's digit is its code, or ``room`` for a missing value (a slot that exists
once the node has been missing); the last member varies fastest; set ``s``'s configuration
``j`` is key ``off[s] + j``, an index into a virtual dense table of every set laid end to
end, never allocated (:class:`~onlinebma.order_mcmc.sparse.SparseCounts` stores the keys
that occur). A larger code or a first missing value grows the room and re-keys the counts
(no records needed); the new digits come above a member's old ones, so the keys keep their
order.
"""

from __future__ import annotations

import numpy as np

from ..stats.unique import unique_rows
from .sparse import SparseCounts

__all__ = ["SetKeys", "family_sets"]


def family_sets(parents, nodes, n: int) -> tuple:
    """The variable sets the families ``(nodes[f], parents[f])`` read, each once.

    ``parents`` is ``(F, width)`` sorted parent sets padded with the dummy node ``n``.
    Returns ``(members, cells, configs)``: ``members`` ``(S, width + 1)``
    distinct sorted sets padded with ``n``, and the set of each family's cells
    (``Z ∪ {i}``) and configurations (``Z``).

    >>> parents, nodes = np.array([[1, 2], [0, 2], [0, 1]]), np.array([0, 1, 2])
    >>> members, cells, configs = family_sets(parents, nodes, 3)  # one joint: set 0
    >>> members.tolist(), cells.tolist(), configs.tolist()
    ([[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]], [0, 0, 0], [3, 2, 1])
    """
    parents = np.asarray(parents, np.int64)
    nodes = np.asarray(nodes, np.int64)
    both = np.vstack([np.sort(np.column_stack([parents, nodes]), axis=1),
                      np.column_stack([parents, np.full(len(parents), n)])])
    members, inverse, _ = unique_rows(both)
    return members, inverse[:len(parents)], inverse[len(parents):]


class SetKeys:
    """The key layout of the variable sets ``members`` (module docstring).

    Parameters
    ----------
    members
        ``(S, width)`` sorted variable sets, padded with the dummy node ``n`` (one value, 0).
    room
        ``(n,)`` value codes per node to make room for.

    Attributes
    ----------
    room, has_missing
        ``(n + 1,)`` value codes per node and whether it has a missing slot (dummy last).
    off
        ``(S + 1,)`` where each set's configurations start.
    stride
        ``(S, width)`` the weight of each member's digit in a configuration's index.

    >>> keys = SetKeys(np.array([[2, 2], [0, 1]]), [2, 3])   # {} and {0, 1}
    >>> keys.off.tolist()
    [0, 1, 7]
    >>> keys.index(np.array([1, 2])).tolist()
    [0, 6]
    """

    def __init__(self, members, room):
        self.members = np.asarray(members, np.int64)
        self.room = np.append(np.maximum(1, np.asarray(room, np.int64)), 1)
        self.has_missing = np.zeros(len(self.room), dtype=bool)
        self._lay_out()

    def _lay_out(self):
        rad = (self.room + self.has_missing)[self.members]
        if rad.astype(float).prod(axis=1).sum() >= 2.0**62:
            raise ValueError("the parent configurations of the candidate families do not fit "
                             "64-bit keys; lower max_parents or max_candidates")
        stride = np.ones_like(rad)
        for j in range(rad.shape[1] - 2, -1, -1):
            stride[:, j] = stride[:, j + 1] * rad[:, j + 1]
        self.stride = stride
        self._cols = [(np.ascontiguousarray(self.members[:, j]),
                       np.ascontiguousarray(stride[:, j])) for j in range(rad.shape[1])]
        self.off = np.concatenate([[0], np.cumsum(rad.prod(axis=1))])

    @property
    def radix(self) -> np.ndarray:
        """``(n + 1,)`` digits per node: its values and, once missing, the missing slot."""
        return self.room + self.has_missing

    def signature(self) -> tuple:
        """What two layouts share when their keys mean the same."""
        return int(self.off[-1]), self.members.tobytes()

    def fits(self, rows) -> bool:
        """Whether every code of ``rows`` (``(m, n)``, ``-1`` = missing) has a key."""
        return not ((rows >= self.room[:-1]).any() or
                    (~self.has_missing[:-1] & (rows < 0)).any())

    def grow(self, row, missing, table: SparseCounts) -> None:
        """Make room for the codes of ``row`` and the missing values ``missing`` (default:
        those of ``row``); re-key ``table``, counts of this layout."""
        room0, rad0 = self.room.copy(), self.radix
        stride0, off0 = self.stride, self.off
        self.room[:-1] = np.maximum(self.room[:-1], row + 1)
        self.has_missing[:-1] |= (row < 0) if missing is None else missing
        if (self.room == room0).all() and (self.radix == rad0).all():
            return
        self._lay_out()
        keys, _ = table.items()
        sets = self.set_of(keys, off0)
        local = keys - off0[sets]
        new = np.zeros_like(local)
        for j in range(self.members.shape[1]):
            mem = self.members[sets, j]
            digit = local // stride0[sets, j] % rad0[mem]
            new += np.where(digit >= room0[mem], self.room[mem], digit) * self.stride[sets, j]
        table.rekey(self.off[sets] + new)

    def set_of(self, keys, off=None) -> np.ndarray:
        """The set of each key (by ``off``, default this layout's)."""
        return np.searchsorted(self.off if off is None else off, keys, side="right") - 1

    def digits(self, keys, sets) -> np.ndarray:
        """``(len(keys), width)`` the members' digits of each key of ``sets``."""
        local = np.asarray(keys) - self.off[sets]
        rad = self.radix[self.members[sets]]
        return local[:, None] // self.stride[sets] % rad

    def _digits(self, row):
        return np.append(np.where(row >= 0, row, self.room[:-1]), 0)

    def index(self, row) -> np.ndarray:
        """``(S,)`` the key of one record (``n`` codes that fit) in every set."""
        digits = self._digits(row)
        (mem, stride), *rest = self._cols
        local = digits[mem] * stride
        for mem, stride in rest:
            local += digits[mem] * stride
        return self.off[:-1] + local

    def blocks(self, rows, size: int = 1 << 22):
        """The keys of ``rows`` in every set, about ``size`` record-set pairs a block, blocks
        in set order (set-major: a block's keys sort apart from the other blocks')."""
        it = np.int32 if self.off[-1] < 2**31 else np.int64  # halves memory traffic
        digits = np.vstack([np.where(rows >= 0, rows, self.room[:-1]).T,
                            np.zeros((1, len(rows)), np.int64)]).astype(it)  # (n + 1, m)
        stride, start = self.stride.astype(it), self.off[:-1].astype(it)
        step = max(1, size // max(1, len(rows)))
        for lo in range(0, len(self.members), step):
            hi = min(lo + step, len(self.members))
            keys = np.repeat(start[lo:hi, None], len(rows), axis=1)
            for j in range(self.members.shape[1]):
                keys += digits[self.members[lo:hi, j]] * stride[lo:hi, j, None]
            yield keys.ravel()

    def lookup_keys(self, sets, rows) -> tuple:
        """``(keys, unseen)``, each ``(m, len(sets))``: the key of each row in each set, and
        where a member's code is beyond the room (never counted; its key is then that of
        code 0), ``None`` when nowhere. Members' codes must be observed."""
        digits = np.hstack([rows, np.zeros((len(rows), 1), np.int64)])
        outside = digits >= self.room
        if outside.any():
            digits = np.where(outside, 0, digits)
        mem = self.members[sets]
        keys = self.off[sets] + digits[:, mem[:, 0]] * self.stride[sets, 0]
        for j in range(1, mem.shape[1]):
            keys += digits[:, mem[:, j]] * self.stride[sets, j]
        if not outside.any():
            return keys, None
        return keys, outside[:, mem].any(axis=2)
