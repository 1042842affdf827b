"""Reading the shared count tables of a stream family by family.

:class:`~onlinebma.order_mcmc.incremental.StreamingScores` keeps one count table per
variable set (:mod:`~onlinebma.order_mcmc.layout`); :class:`CountReads`, given those
tables and the :class:`Families` that read them, reads a family's counts out of them: the
predictive probabilities ``(a + N_ijk) / (r_i a + N_ij)`` of eq. 11 of Hwang & Zhang (2005)
for rows to predict, a family's counts as dense arrays, and the pairwise counts the
candidate parents are chosen from.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .layout import SetKeys
from .sparse import SparseCounts

__all__ = ["CountReads", "Families"]


class Families(NamedTuple):
    """Every candidate family of a :class:`~onlinebma.order_mcmc.incremental.StreamingScores`
    table, by flat index (node-major)."""

    nodes: np.ndarray
    """The child node of each family."""
    parents: np.ndarray
    """Each family's parent set, padded with the dummy node ``n``."""
    start: np.ndarray
    """Node ``i``'s families are ``start[i]:start[i + 1]``."""
    child_sets: np.ndarray
    """The count table (variable set) of each family's child and parents."""
    parent_sets: np.ndarray
    """The count table of each family's parents."""
    child_position: np.ndarray
    """The child's position among the members of its ``child_sets`` table."""


class CountReads:
    """Reads of the counts of a stream family by family (module docstring).

    Parameters
    ----------
    families : Families
        The families read.
    layout : SetKeys
        The keys of the variable sets counted.
    cells : SparseCounts
        The counts of every variable set at their keys in ``layout``.
    value_counts : list of numpy.ndarray
        Per node, the count of each value code.
    card : numpy.ndarray
        Per node, the number of observed values (1 while none), as floats.
    alpha : float
        The K2 pseudo-count.

    Examples
    --------
    >>> from onlinebma.order_mcmc.incremental import StreamingScores
    >>> s = StreamingScores(2, max_parents=1)
    >>> for row in ([0, 0], [1, 1], [1, 1]):
    ...     s.add(row)
    >>> reads = s.reads()   # sets of node 0: {} and {1}; (1 + 2) / (2 + 3), (1 + 2) / (2 + 2)
    >>> reads.predictive(0, [0, 1], [[1, 1]]).round(3).tolist()
    [[0.6, 0.75]]
    """

    def __init__(self, families: Families, layout: SetKeys, cells: SparseCounts,
                 value_counts: list, card: np.ndarray, alpha: float):
        self.families = families
        self.layout = layout
        self.cells = cells
        self.value_counts = value_counts
        self.card = card
        self.alpha = alpha
        self.n = len(value_counts)



    def uncounted_to_missing(self, rows) -> np.ndarray:
        """``rows`` with every code of a value not counted (yet) set to ``-1``."""
        rows = np.array(rows, dtype=np.int64)
        for i in range(self.n):
            counts = self.value_counts[i]
            col = rows[:, i]
            ok = (col >= 0) & (col < len(counts))
            ok[ok] = counts[col[ok]] > 0
            rows[~ok, i] = -1
        return rows

    def cards(self) -> np.ndarray:
        """Number of observed values of each node (1 for a node never observed)."""
        return self.card.astype(np.int64)

    def predictive(self, i: int, sets, rows) -> np.ndarray:
        """``(a + N_ijk) / (r_i a + N_ij)`` of each row under each given set of node ``i``.

        ``sets`` indexes ``parents[i]``; ``rows`` is ``(m, n)`` codes, every code used
        (node ``i`` and the sets' parents) observed; a code never counted has count 0.
        Returns ``(m, len(sets))``.
        """
        fams = self.families.start[i] + np.asarray(sets, dtype=np.int64)
        return self.predictive_flat(fams, rows)

    def predictive_flat(self, fams, rows) -> np.ndarray:
        """:meth:`predictive` for families of any nodes, by flat index (node ``i``'s sets
        are ``family_start[i]`` onwards): ``(m, len(fams))``."""
        fams = np.asarray(fams, dtype=np.int64)
        rows = np.asarray(rows, dtype=np.int64)
        cell, unseen_cell = self.layout.lookup_keys(self.families.child_sets[fams], rows)
        config, unseen_config = self.layout.lookup_keys(self.families.parent_sets[fams], rows)
        n_cell, n_conf = self.cells.lookup(cell), self.cells.lookup(config)
        node = self.families.nodes[fams]
        miss = self.layout.has_missing[node]
        if miss.any():  # N_ij leaves out the records with the child missing
            child = rows[:, node[miss]]
            child = np.where(child >= self.layout.room[node[miss]], 0, child)  # as keyed
            n_conf[:, miss] -= self.cells.lookup(self.missing_keys(fams[miss], cell[:, miss],
                                                                   child))
        if unseen_config is not None:  # codes never counted: count 0
            n_conf = np.where(unseen_config, 0, n_conf)
            n_cell = np.where(unseen_cell, 0, n_cell)
        return (self.alpha + n_cell) / (self.card[node] * self.alpha + n_conf)

    def missing_keys(self, fams, cell_keys, child) -> np.ndarray:
        """The keys of ``cell_keys`` (of the families' cell sets, child code ``child``) with
        the child at its missing slot."""
        fam = self.families
        node = fam.nodes[fams]
        stride = self.layout.stride[fam.child_sets[fams], fam.child_position[fams]]
        return cell_keys + (self.layout.room[node] - child) * stride

    def dense_counts(self, f: int) -> tuple:
        """Family ``f``'s counts as dense arrays ``(N_ijk, N_ij)``, ``(q, room_i)`` and
        ``(q,)``, configurations in the order of the keys of its parents' set (for checks
        and small tables)."""
        layout, fam = self.layout, self.families
        node, pos = fam.nodes[f], fam.child_position[f]
        cset, pset = fam.child_sets[f], fam.parent_sets[f]
        keys, counts = self.cells.between(layout.off[cset], layout.off[cset + 1])
        digits = layout.digits(keys, np.full(len(keys), cset))
        child, seen = digits[:, pos], digits[:, pos] < layout.room[node]
        config = (np.delete(digits, pos, axis=1) * layout.stride[pset, :-1]).sum(axis=1)
        q, r = int(layout.off[pset + 1] - layout.off[pset]), int(layout.room[node])
        cells = np.zeros(q * r, np.int64)
        cells[config[seen] * r + child[seen]] = counts[seen]
        cells = cells.reshape(q, r)
        return cells, cells.sum(axis=1)

    def pair_tables(self):
        """The counts to choose candidate parents from: as
        :func:`~onlinebma.order_mcmc.candidates.pair_tables` of the records counted, from
        the one-parent families (zeros where a pair has no family)."""
        room, rad = self.layout.room, self.layout.radix
        width = int(rad[:-1].max(initial=1))
        out = []
        for i in range(self.n):
            r = int(room[i])
            table = np.zeros((self.n, width, r), dtype=np.int64)
            vc = self.value_counts[i][:r]
            table[i, 0, :len(vc)] = vc
            for f in range(self.families.start[i], self.families.start[i + 1]):
                par = self.families.parents[f]
                if par[0] < self.n and (par[1:] == self.n).all():
                    table[par[0], :int(rad[par[0]])] = self.dense_counts(f)[0]
            out.append(table)
        return out

