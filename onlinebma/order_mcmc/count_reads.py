"""Reading the shared count tables of a stream family by family.

:class:`~onlinebma.order_mcmc.incremental.StreamingScores` keeps one count table per
variable set (:mod:`~onlinebma.order_mcmc.layout`); this module reads a family's counts
out of them: the predictive probabilities ``(a + N_ijk) / (r_i a + N_ij)`` of eq. 11 of
Hwang & Zhang (2005) for rows to predict, a family's counts as dense arrays, the pairwise
counts the candidate parents are chosen from, and the tables restricted to fewer candidate
parents.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CountReads"]


class CountReads:
    """Reads of :class:`~onlinebma.order_mcmc.incremental.StreamingScores`' counts (module
    docstring); a base class of it, reading its own tables."""

    def uncounted_to_missing(self, rows) -> np.ndarray:
        """``rows`` with every code of a value not counted (yet) set to ``-1``."""
        rows = np.array(rows, dtype=np.int64)
        for i in range(self.n):
            counts = self._value_counts[i]
            col = rows[:, i]
            ok = (col >= 0) & (col < len(counts))
            ok[ok] = counts[col[ok]] > 0
            rows[~ok, i] = -1
        return rows

    def cards(self) -> np.ndarray:
        """Number of observed values of each node (1 for a node never observed)."""
        return self._card.astype(np.int64)

    def predictive(self, i: int, sets, rows) -> np.ndarray:
        """``(a + N_ijk) / (r_i a + N_ij)`` of each row under each given set of node ``i``.

        ``sets`` indexes ``parents[i]``; ``rows`` is ``(m, n)`` codes, every code used
        (node ``i`` and the sets' parents) observed; a code never counted has count 0.
        Returns ``(m, len(sets))``.
        """
        return self.predictive_flat(self._start[i] + np.asarray(sets, dtype=np.int64), rows)

    def predictive_flat(self, fams, rows) -> np.ndarray:
        """:meth:`predictive` for families of any nodes, by flat index (node ``i``'s sets
        are ``family_start[i]`` onwards): ``(m, len(fams))``."""
        fams = np.asarray(fams, dtype=np.int64)
        rows = np.asarray(rows, dtype=np.int64)
        cell, unseen_cell = self.layout.lookup_keys(self._cset[fams], rows)
        config, unseen_config = self.layout.lookup_keys(self._pset[fams], rows)
        n_cell, n_conf = self._cells.lookup(cell), self._cells.lookup(config)
        node = self._node[fams]
        miss = self.layout.has_missing[node]
        if miss.any():  # N_ij leaves out the records with the child missing
            child = rows[:, node[miss]]
            child = np.where(child >= self.layout.room[node[miss]], 0, child)  # as keyed
            n_conf[:, miss] -= self._cells.lookup(self._missing_keys(fams[miss], cell[:, miss],
                                                                     child))
        if unseen_config is not None:  # codes never counted: count 0
            n_conf = np.where(unseen_config, 0, n_conf)
            n_cell = np.where(unseen_cell, 0, n_cell)
        return (self.alpha + n_cell) / (self._card[node] * self.alpha + n_conf)

    def dense_counts(self, f: int) -> tuple:
        """Family ``f``'s counts as dense arrays ``(N_ijk, N_ij)``, ``(q, room_i)`` and
        ``(q,)``, configurations in the order of the keys of its parents' set (for checks
        and small tables)."""
        layout, node, pos = self.layout, self._node[f], self._cpos[f]
        cset, pset = self._cset[f], self._pset[f]
        keys, counts = self._cells.between(layout.off[cset], layout.off[cset + 1])
        digits = layout.digits(keys, np.full(len(keys), cset))
        child, seen = digits[:, pos], digits[:, pos] < layout.room[node]
        config = (np.delete(digits, pos, axis=1) * layout.stride[pset, :-1]).sum(axis=1)
        q, r = int(layout.off[pset + 1] - layout.off[pset]), int(layout.room[node])
        cells = np.zeros(q * r, np.int64)
        cells[config[seen] * r + child[seen]] = counts[seen]
        cells = cells.reshape(q, r)
        return cells, cells.sum(axis=1)

    def pair_tables(self):
        """The counts to choose candidate parents from: :attr:`selection` when set, else
        :func:`~onlinebma.order_mcmc.candidates.pair_tables` of the records counted, from
        the one-parent families (zeros where a pair has no family)."""
        if self.selection is not None:
            return self.selection
        room, rad = self.layout.room, self.layout.radix
        width = int(rad[:-1].max(initial=1))
        out = []
        for i in range(self.n):
            r = int(room[i])
            table = np.zeros((self.n, width, r), dtype=np.int64)
            vc = self._value_counts[i][:r]
            table[i, 0, :len(vc)] = vc
            for f in range(self._start[i], self._start[i + 1]):
                par = self._par[f]
                if par[0] < self.n and (par[1:] == self.n).all():
                    table[par[0], :int(rad[par[0]])] = self.dense_counts(f)[0]
            out.append(table)
        return out

    def restricted(self, candidates):
        """These tables restricted to the parent sets within ``candidates`` (a list per
        node): the same counts and scores, copied set by set, without the records."""
        out = type(self)(self.n, self.max_parents, self.alpha, self.layout.room[:-1],
                         self.order, candidates)
        out.reserve(self.layout.room[:-1], self.layout.has_missing[:-1])
        index = {(int(node), tuple(par.tolist())): f
                 for f, (node, par) in enumerate(zip(self._node, self._par))}
        old = np.array([index[(int(node), tuple(par.tolist()))]
                        for node, par in zip(out.family_nodes, out.family_parents)],
                       dtype=np.int64)
        child_sets, parent_sets = out.family_sets
        new_set = np.full(self.n_tables, -1)  # each kept set's index in the new tables
        new_set[self._cset[old]] = child_sets
        new_set[self._pset[old]] = parent_sets
        keys, _ = self._cells.items()
        sets = self.layout.set_of(keys)
        keep = new_set[sets] >= 0
        moved = keys[keep] - self.layout.off[sets[keep]] + out.layout.off[new_set[sets[keep]]]
        out.adopt_counts(self._cells.subset(keep, moved), self._cell_part[old].copy(),
                         self._config_part[old].copy(), [v.copy() for v in self._value_counts],
                         self._card.copy(), self.n_records)
        return out

    @property
    def family_sets(self) -> tuple:
        """Each family's set of nodes (child and parents) and set of parents, as indices
        of the count tables (two arrays, one entry per family)."""
        return self._cset, self._pset

    def adopt_counts(self, cells, cell_part, config_part, value_counts, card,
                     n_records: int) -> None:
        """Take counts and score parts laid out for these tables (:meth:`restricted`):
        the sparse cell counts, each family's cell and configuration parts of its log score,
        each node's value counts and cardinality, and the number of records counted."""
        self._cells = cells
        self._cell_part = cell_part
        self._config_part = config_part
        self._value_counts = value_counts
        self._card = card
        self.n_records = n_records
