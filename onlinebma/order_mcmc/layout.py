"""Keys of the count tables: where each configuration and cell of every family sits.

The counts of :class:`~onlinebma.order_mcmc.incremental.StreamingScores` are stored at the
keys that occur (:class:`~onlinebma.order_mcmc.sparse.SparseCounts`); a key is an index
into a virtual dense table of every family laid end to end, never allocated. A parent's
digit is its code, or ``room`` for a missing value (a slot that exists once the node has
been missing); the last parent varies fastest; family ``f``'s configuration ``j`` is key
``conf_off[f] + j`` and its cell for child value ``k`` is ``cell_off[f] + j * room[i] + k``.
A larger code or a first missing value grows the room and re-keys the counts (no records
needed); the new digits come above a parent's old ones, so the keys keep their order.
"""

from __future__ import annotations

import numpy as np

from .sparse import SparseCounts

__all__ = ["FamilyKeys"]


class FamilyKeys:
    """The key layout of the families ``(nodes[f], parents[f])`` (module docstring).

    Parameters
    ----------
    parents
        ``(F, width)`` parent sets, padded with the dummy node ``n`` (one value, 0).
    nodes
        ``(F,)`` child of each family.
    room
        ``(n,)`` value codes per node to make room for.

    Attributes
    ----------
    room, has_missing
        ``(n + 1,)`` value codes per node and whether it has a missing slot (dummy last).
    conf_off, cell_off
        ``(F + 1,)`` where each family's configurations and cells start.
    stride
        ``(F, width)`` the weight of each parent's digit in a configuration's index.

    >>> keys = FamilyKeys(np.array([[2], [1]]), np.array([0, 0]), [2, 3])
    >>> keys.conf_off.tolist(), keys.cell_off.tolist()   # {} and {node 1} of node 0
    ([0, 1, 4], [0, 2, 8])
    >>> _, _, conf, cell = keys.index(np.array([1, 2]))
    >>> conf.tolist(), cell.tolist()
    ([0, 3], [1, 7])
    """

    def __init__(self, parents, nodes, room):
        self.parents = np.asarray(parents, np.int64)
        self.nodes = np.asarray(nodes, np.int64)
        self.room = np.append(np.maximum(1, np.asarray(room, np.int64)), 1)
        self.has_missing = np.zeros(len(self.room), dtype=bool)
        self._lay_out()

    def _lay_out(self):
        rad = (self.room + self.has_missing)[self.parents]
        if (rad.astype(float).prod(axis=1) * self.room[self.nodes]).sum() >= 2.0**62:
            raise ValueError("the parent configurations of the candidate families do not fit "
                             "64-bit keys; lower max_parents or max_candidates")
        stride = np.ones_like(rad)
        for j in range(rad.shape[1] - 2, -1, -1):
            stride[:, j] = stride[:, j + 1] * rad[:, j + 1]
        self.stride = stride
        self._stride_cols = [np.ascontiguousarray(stride[:, j]) for j in range(rad.shape[1])]
        self._par_cols = [np.ascontiguousarray(self.parents[:, j]) for j in range(rad.shape[1])]
        q = rad.prod(axis=1)
        self.conf_off = np.concatenate([[0], np.cumsum(q)])
        self.cell_off = np.concatenate([[0], np.cumsum(q * self.room[self.nodes])])

    def signature(self) -> tuple:
        """What two layouts share when their keys mean the same."""
        return (int(self.conf_off[-1]), int(self.cell_off[-1]), self.parents.tobytes(),
                self.nodes.tobytes())

    def fits(self, rows) -> bool:
        """Whether every code of ``rows`` (``(m, n)``, ``-1`` = missing) has a key."""
        return not ((rows >= self.room[:-1]).any() or
                    (~self.has_missing[:-1] & (rows < 0)).any())

    def grow(self, row, missing, configs: SparseCounts, cells: SparseCounts) -> None:
        """Make room for the codes of ``row`` and the missing values ``missing`` (default:
        those of ``row``); re-key ``configs`` and ``cells``, counts of this layout."""
        room0, miss0 = self.room.copy(), self.has_missing.copy()
        stride0, conf0, cell0 = self.stride, self.conf_off, self.cell_off
        self.room[:-1] = np.maximum(self.room[:-1], row + 1)
        self.has_missing[:-1] |= (row < 0) if missing is None else missing
        if (self.room == room0).all() and (self.has_missing == miss0).all():
            return
        self._lay_out()

        def new_config(fam, local):  # a configuration's index in the new layout
            par = self.parents[fam]
            digits = (local[:, None] // stride0[fam]) % (room0 + miss0)[par]
            digits = np.where(digits >= room0[par], self.room[par], digits)  # missing slot
            return (digits * self.stride[fam]).sum(axis=1)

        at, _ = configs.items()
        fam = np.searchsorted(conf0, at, side="right") - 1
        configs.rekey(self.conf_off[fam] + new_config(fam, at - conf0[fam]))
        at, _ = cells.items()
        fam = np.searchsorted(cell0, at, side="right") - 1
        r0, r1 = room0[self.nodes[fam]], self.room[self.nodes[fam]]
        local = at - cell0[fam]
        cells.rekey(self.cell_off[fam] + new_config(fam, local // r0) * r1 + local % r0)

    def family(self, keys, offsets) -> np.ndarray:
        """The family of each key, by ``offsets`` (:attr:`conf_off` or :attr:`cell_off`)."""
        return np.searchsorted(offsets, keys, side="right") - 1

    def index(self, row):
        """Families a record counts in (child observed), their nodes, configuration and cell
        keys: ``(families, nodes, conf, cell)`` (``families`` a slice when all)."""
        digits = np.append(np.where(row >= 0, row, self.room[:-1]), 0)
        local = digits[self._par_cols[0]] * self._stride_cols[0]
        for par, stride in zip(self._par_cols[1:], self._stride_cols[1:]):
            local += digits[par] * stride
        node = self.nodes
        conf = self.conf_off[:-1] + local
        cell = self.cell_off[:-1] + local * self.room[node] + row[node]
        if (row < 0).any():
            fams = np.flatnonzero((row >= 0)[node])
            return fams, node[fams], conf[fams], cell[fams]
        return slice(None), node, conf, cell

    def blocks(self, rows, size: int = 1 << 22):
        """Per block ``lo:hi`` of families: ``(lo, hi, family, conf, cell)`` of every
        record-family pair whose child is observed (keys), about ``size`` pairs a block.
        Node-major: gathering a parent's digits reads one contiguous row per family."""
        it = np.int32 if self.cell_off[-1] < 2**31 else np.int64  # halves memory traffic
        digits = np.vstack([np.where(rows >= 0, rows, self.room[:-1]).T,
                            np.zeros((1, len(rows)), np.int64)]).astype(it)  # (n + 1, m)
        children = np.ascontiguousarray(rows.T).astype(it)
        stride = self.stride.astype(it)
        room = self.room.astype(it)
        conf_start, cell_start = self.conf_off[:-1].astype(it), self.cell_off[:-1].astype(it)
        step = max(1, size // len(rows))
        for lo in range(0, len(self.parents), step):
            hi = min(lo + step, len(self.parents))
            node = self.nodes[lo:hi]
            local = digits[self.parents[lo:hi, 0]] * stride[lo:hi, 0, None]  # (f, m)
            for j in range(1, self.parents.shape[1]):
                local += digits[self.parents[lo:hi, j]] * stride[lo:hi, j, None]
            child = children[node]
            conf = conf_start[lo:hi, None] + local
            local *= room[node][:, None]
            local += cell_start[lo:hi, None]
            local += child
            cell = local
            fams = np.broadcast_to(np.arange(lo, hi)[:, None], child.shape)
            ok = child >= 0
            if ok.all():
                yield lo, hi, fams.ravel(), conf.ravel(), cell.ravel()
            else:
                yield lo, hi, fams[ok], conf[ok], cell[ok]

    def lookup_keys(self, fams, rows) -> tuple:
        """``(conf, cell, unseen_parent, unseen_child)``, each ``(m, len(fams))``: the keys
        of each row under each family, and where a parent's (the child's) code is beyond the
        room (never counted; its key is then that of code 0), ``None`` when nowhere."""
        par, node = self.parents[fams], self.nodes[fams]
        digits = np.hstack([rows, np.zeros((len(rows), 1), np.int64)])
        outside = digits >= self.room
        if outside.any():
            digits = np.where(outside, 0, digits)
        local = digits[:, par[:, 0]] * self.stride[fams, 0]
        for j in range(1, par.shape[1]):
            local += digits[:, par[:, j]] * self.stride[fams, j]
        conf = self.conf_off[fams] + local
        cell = self.cell_off[fams] + local * self.room[node] + digits[:, node]
        if not outside.any():
            return conf, cell, None, None
        return conf, cell, outside[:, par].any(axis=2), outside[:, node]
