"""Family scores updated record by record: the score tables of a stream, exact at every step.

For node ``i`` and candidate parent set ``Z`` the K2 log score (eq. 7 and 13 of Hwang & Zhang
2005, the quantity of :class:`~onlinebma.order_mcmc.scores.ScoreTables`) is::

    log S(X_i; Z) = log rho(Z) + sum_j [lgamma(r_i a) - lgamma(r_i a + N_ij)]
                                + sum_jk [lgamma(a + N_ijk) - lgamma(a)]

A new record with ``X_i = k`` and parent configuration ``j`` adds one to ``N_ijk`` and to
``N_ij``, so the score gains ``log(a + N_ijk) - log(r_i a + N_ij)`` (counts before the
record): the log of the record's predictive probability under that family. A removed record
(a sliding window) subtracts the same term with the counts after removal. Both are applied to
every family of every node at once, vectorised with numpy: the cost of a record is
proportional to the number of candidate families, not to the number of records.

Exceptions, all exact:

- a record with ``X_i`` missing leaves node ``i``'s families unchanged (the batch tables score
  node ``i`` on the records where it is observed); a missing *parent* value is one extra
  parent value, as in the batch tables;
- when a node gains or loses an observed value, ``r_i`` changes, and the
  ``lgamma(r_i a ...)`` part of its families is recomputed from the configuration counts;
- a value code beyond the tables' room, or a first missing value, re-keys the counts
  (:mod:`~onlinebma.order_mcmc.layout`; no records needed).

Memory: the counts are sparse (:class:`~onlinebma.order_mcmc.sparse.SparseCounts`) and
shared: one table per variable set (:mod:`~onlinebma.order_mcmc.layout`), holding the
configurations that occur, at most one per distinct record, never the product of the
members' numbers of values. Family ``(i, Z)`` reads its cells from the table of
``Z ∪ {i}`` and its configurations from that of ``Z``: ``N_ij`` is the count of ``Z``'s
configuration ``j`` less the records with ``X_i`` missing there (the cell of ``Z ∪ {i}`` at
``i``'s missing slot; nothing when ``X_i`` has never been missing). At worst linear in
records times variable sets (fewer than the candidate families,
:mod:`~onlinebma.order_mcmc.candidates`). Unobserved configurations contribute nothing to
the score (each of their terms is ``lgamma(x) - lgamma(x) = 0``; the K2 pseudo-counts are
per cell, so ``r_i`` enters as a number, not as a table size). A pickle carries the
occurring counts only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from .. import tuning
from .count_reads import CountReads, Families
from .layout import SetKeys, family_sets
from .scores import _candidate_sets, candidate_lists
from .sparse import SparseCounts

__all__ = ["RecordCounts", "StreamingScores"]



@dataclass
class RecordCounts:
    """Counts of some records in the layout of a :class:`StreamingScores` table: the tables
    of every variable set (sparse, at their keys in the layout ``layout``), values of every
    node, records. Counts of chunks of records add up (``+``): the tables of a frame split
    in partitions are the sums of the partitions' counts."""

    counts: SparseCounts
    value_counts: list
    n_records: int
    layout: tuple

    def __add__(self, other: RecordCounts) -> RecordCounts:
        self._same_layout(other)
        return RecordCounts(self.counts + other.counts,
                            [a + b for a, b in zip(self.value_counts, other.value_counts)],
                            self.n_records + other.n_records, self.layout)

    def __iadd__(self, other: RecordCounts) -> RecordCounts:
        """Add ``other`` in place: one merge into these counts, no copy of them."""
        self._same_layout(other)
        self.counts += other.counts
        self.value_counts = [a + b for a, b in zip(self.value_counts, other.value_counts)]
        self.n_records += other.n_records
        return self

    def _same_layout(self, other: RecordCounts) -> None:
        if self.layout != other.layout:
            raise ValueError("the counts were taken in different layouts of the count tables")


class StreamingScores:
    """K2 scores of every candidate family of every node, kept exact as records come and go.

    Parameters
    ----------
    n
        Number of nodes (features and class).
    max_parents, alpha
        In-degree bound and K2 pseudo-count (see
        :class:`~onlinebma.order_mcmc.scores.ScoreTables`).
    n_values
        Room for value codes per node to start with (grown as larger codes arrive).
    order
        When given, only the parent sets this order allows are kept (one order averaged).
    candidates
        Candidate parents of each node (:mod:`~onlinebma.order_mcmc.candidates`); ``None``:
        every other node.

    Attributes
    ----------
    parents
        ``parents[i]``: ``(s, max(max_parents, 1))`` candidate parent sets of node ``i``,
        padded with the dummy node ``n``, in the order of the batch tables (row 0: empty set).
    candidates
        ``candidates[i]``: the indices of ``parents[i]`` among all the sets within node
        ``i``'s candidate parents (all of them without an order).
    candidate_parents
        ``candidate_parents[i]``: sorted candidate parents of node ``i``.
    set_structure
        ``set_structure[i]``: ``(sizes, immediate subsets)`` of ``parents[i]`` (as
        :func:`~onlinebma.order_mcmc.scores._candidate_sets`), ``None`` with an order.
    layout
        The :class:`~onlinebma.order_mcmc.layout.SetKeys` of the variable sets counted.
    n_records
        Records currently counted.
    selection
        The :class:`~onlinebma.order_mcmc.candidates.ClassPairCounts` the candidates were
        chosen from, when the records were counted elsewhere (on Dask,
        :mod:`onlinebma.order_mcmc.distributed_counts`), else ``None``; records counted later do not
        change it.

    >>> s = StreamingScores(2, max_parents=1)
    >>> for row in ([0, 0], [1, 1], [1, 1], [0, 0]):
    ...     s.add(row)
    >>> s.parents[0].tolist()
    [[2], [1]]
    >>> bool(s.log_score(0)[1] > s.log_score(0)[0])   # the copy explains the data better
    True
    >>> len(s.family_nodes), s.n_tables   # 4 families read {}, {0}, {1}, {0, 1}, not 8
    (4, 4)
    """

    def __init__(self, n: int, max_parents: int = 3, alpha: float = 1.0, n_values=None,
                 order=None, candidates=None):
        self.n = n = int(n)
        self.max_parents = k = max(0, min(int(max_parents), n - 1))
        self.alpha = float(alpha)
        log_prior = -math.log(n) - np.array([math.log(math.comb(n, z)) for z in range(k + 1)])
        pos = None
        self.order = None if order is None else np.asarray(order, dtype=np.int64)
        if order is not None:
            pos = np.empty(n + 1, dtype=np.int64)
            pos[np.asarray(order, dtype=np.int64)] = np.arange(n)
            pos[n] = -1
        self.candidate_parents = candidate_lists(n, candidates)
        self.parents, self.candidates, self.set_structure, prior = [], [], [], []
        for i, cand in enumerate(self.candidate_parents):
            combos, sizes, subsets = _candidate_sets(len(cand), k)
            par = np.append(cand, n)[combos]
            keep = np.arange(len(par)) if pos is None else \
                np.flatnonzero(pos[par].max(axis=1) < pos[i])
            self.parents.append(par[keep])
            self.candidates.append(keep)
            self.set_structure.append((sizes, subsets) if pos is None else None)
            prior.append(log_prior[sizes[keep]])  # eq. 13
        sizes_ = [len(p) for p in self.parents]
        self._par = np.vstack(self.parents)  # (F, width) every family, node-major
        self._node = np.repeat(np.arange(n), sizes_)
        self._start = np.concatenate([[0], np.cumsum(sizes_)])  # node i: _start[i]:_start[i+1]
        self._prior = np.concatenate(prior)
        self._cell_part = np.zeros(len(self._par))  # sum_jk lgamma(a + N_ijk) - lgamma(a)
        self._config_part = np.zeros(len(self._par))  # sum_j lgamma(r a) - lgamma(r a + N_ij)
        self._value_counts = [np.zeros(0, dtype=np.int64) for _ in range(n)]
        self._card = np.ones(n)  # observed values per node (1 while none), as floats
        self.n_records = 0
        self.selection = None
        self.version = 0  # changes with every update (for caches of the scores)
        members, self._cset, self._pset = family_sets(self._par, self._node, n)
        self._cpos = np.argmax(members[self._cset] == self._node[:, None], axis=1)
        self.layout = SetKeys(members, np.ones(n, np.int64) if n_values is None else n_values)
        self._cells = SparseCounts()  # the counts of every variable set at their keys

    @property
    def family_nodes(self) -> np.ndarray:
        """The child node of every family (flat index, node-major)."""
        return self._node

    @property
    def family_parents(self) -> np.ndarray:
        """The parent set of every family (flat index), padded with the dummy node ``n``."""
        return self._par

    @property
    def n_tables(self) -> int:
        """Number of variable sets counted (each family reads two of them)."""
        return len(self.layout.members)

    # --------------------------------------------------------------- updates

    def add(self, row) -> None:
        """Count one record (``n`` integer codes, ``-1`` = missing)."""
        self._update(np.asarray(row, dtype=np.int64), +1)

    def remove(self, row) -> None:
        """Forget one record that was counted before (a window's oldest record)."""
        self._update(np.asarray(row, dtype=np.int64), -1)

    def _update(self, row, sign):
        self.version += 1
        if row.shape != (self.n,):
            raise ValueError(f"a record must have {self.n} codes, got shape {row.shape}")
        if not self.layout.fits(row):
            if sign < 0:
                raise ValueError("cannot remove a record that was never counted")
            self.layout.grow(row, None, self._cells)
        keys = self.layout.index(row)
        before = self._cells.add(keys, sign)  # the counts of every set before the record
        node = self._node
        fams = slice(None) if (row >= 0).all() else np.flatnonzero(row[node] >= 0)
        fams_cset, node = self._cset[fams], node[fams]
        n_cell, n_conf = before[fams_cset], before[self._pset[fams]]
        miss = self.layout.has_missing[node]
        if miss.any():  # N_ij leaves out the records with the child missing
            at = np.arange(len(self._par))[fams][miss]
            missing = self.reads().missing_keys(at, keys[fams_cset[miss]], row[node[miss]])
            n_conf[miss] -= self._cells.lookup(missing)
        changed = []  # nodes whose number of observed values changes with this record
        for i in np.flatnonzero(row >= 0):
            counts = self._value_counts[i]
            if row[i] >= len(counts):
                counts = self._value_counts[i] = np.append(
                    counts, np.zeros(int(self.layout.room[i]) - len(counts), np.int64))
            was = counts[row[i]]
            counts[row[i]] += sign
            if (was == 0) != (counts[row[i]] == 0):
                changed.append(int(i))
        if sign < 0:  # the term of a removed record: its counts after removal
            n_cell, n_conf = n_cell - 1, n_conf - 1
        a = self.alpha
        self._cell_part[fams] += sign * np.log(a + n_cell)
        self._config_part[fams] -= sign * np.log(self._card[node] * a + n_conf)
        self.n_records += sign
        for i in changed:
            self._card[i] = max(1, int((self._value_counts[i] > 0).sum()))
        if changed:
            self._rescore(changed, cells=False)

    def add_many(self, rows) -> None:
        """Count many records; equal to adding them one by one (which it does for a few
        records: a record's update is one vectorised pass over the sets and families).
        More record-set pairs than stored counts (as in a rebuild): the counts are taken
        first (:meth:`count`) and every score is recomputed from them (:meth:`add_counts`).
        """
        rows = np.asarray(rows, dtype=np.int64).reshape(-1, self.n)
        if not len(rows):
            return
        self.reserve(rows.max(axis=0) + 1, (rows < 0).any(axis=0))
        if len(rows) * self.n_tables > self.n_cells:
            self.add_counts(self.count(rows))
            return
        for row in rows:
            self._update(row, +1)

    def reserve(self, n_values, missing) -> None:
        """Make room for value codes below ``n_values`` per node and, where ``missing``, for
        a missing value (the layout of every chunk of one frame must be the same)."""
        self.layout.grow(np.asarray(n_values, dtype=np.int64) - 1,
                         np.asarray(missing, dtype=bool), self._cells)

    def _add_value_counts(self, counts: list) -> None:
        for i in range(self.n):
            vc = self._value_counts[i]
            self._value_counts[i] = counts[i] + np.append(vc, np.zeros(len(counts[i]) - len(vc),
                                                                       int))
            self._card[i] = max(1, int((self._value_counts[i] > 0).sum()))

    def count(self, rows) -> RecordCounts:
        """The counts of ``rows`` in this table's layout, without changing the table; rows
        must fit the layout (:meth:`reserve`). Counts of chunks of records add up."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1, self.n)
        if not self.layout.fits(rows):
            raise ValueError("the records do not fit the layout of the count tables")
        found = [np.unique(keys.astype(np.int64), return_counts=True)  # bounded sorts
                 for keys in self.layout.blocks(rows, tuning.COUNT_BLOCK_KEYS)] if len(rows) else []
        table = SparseCounts(*(np.concatenate([p[j] for p in found]) for j in (0, 1))) \
            if found else SparseCounts()  # blocks in set order: the keys come out sorted
        values = [np.bincount(rows[:, i][rows[:, i] >= 0], minlength=int(self.layout.room[i]))
                  for i in range(self.n)]
        return RecordCounts(table, values, len(rows), self.layout.signature())

    def add_counts(self, counts: RecordCounts) -> None:
        """Add counts taken by :meth:`count` (of this layout) and rescore every family from
        the counts: the table is then that of all the records counted."""
        if counts.layout != self.layout.signature():
            raise ValueError("the counts were taken in another layout of the count tables")
        self.version += 1
        self._add_value_counts(counts.value_counts)
        self.n_records += counts.n_records
        self._cells += counts.counts
        self._rescore(range(self.n), cells=True)

    def _rescore(self, nodes, cells: bool) -> None:
        """Recompute ``sum_j lgamma(r_i a) - lgamma(r_i a + N_ij)`` of the families of
        ``nodes`` and, if ``cells``, ``sum_jk lgamma(a + N_ijk) - lgamma(a)`` of every family,
        from the counts (a configuration absent adds 0): per set, then read by the families,
        less the entries with the child missing. The counts are read in chunks of
        :data:`_CHUNK` (bounded temporaries)."""
        keys, counts = self._cells.items()
        n_sets, n_fams, a = self.n_tables, len(self._par), self.alpha
        chosen = np.zeros(self.n + 1, dtype=bool)
        chosen[list(nodes)] = True
        groups = []  # per number of values r: its families and the sets they read
        for r in np.unique(self._card[chosen[:-1]]):
            fams = np.flatnonzero(chosen[self._node] & (self._card[self._node] == r))
            needed = np.zeros(n_sets, dtype=bool)
            needed[self._pset[fams]] = True
            groups.append((r * a, fams, needed, np.zeros(n_sets)))
        missing = chosen & self.layout.has_missing
        cell_sum, cell_fix, config_fix = np.zeros(n_sets), np.zeros(n_fams), np.zeros(n_fams)
        for lo in range(0, len(keys), tuning.RESCORE_CHUNK):
            k, c = keys[lo:lo + tuning.RESCORE_CHUNK], counts[lo:lo + tuning.RESCORE_CHUNK]
            sets = self.layout.set_of(k)
            if cells:
                cell_sum += np.bincount(sets, gammaln(a + c) - gammaln(a), n_sets)
            for ra, _, needed, total in groups:
                at = np.flatnonzero(needed[sets])
                total += np.bincount(sets[at], gammaln(ra) - gammaln(ra + c[at]), n_sets)
            if missing.any():
                self._missing_terms(k, c, sets, missing, cell_fix, config_fix)
        if cells:
            self._cell_part = cell_sum[self._cset] - cell_fix
        for _, fams, _, total in groups:
            self._config_part[fams] = total[self._pset[fams]]
        self._config_part += config_fix

    def _missing_terms(self, keys, counts, sets, chosen, cell_fix, config_fix) -> None:
        """Add to ``cell_fix`` and ``config_fix`` (per family) the corrections of
        :meth:`_rescore` for families whose child (in ``chosen``) has been missing, from the
        entries ``keys``: their cells at the child's missing slot leave the cell part, and
        each such count ``M`` of configuration ``j`` turns ``N_ij``'s term from the set's
        count ``N`` to ``N - M``."""
        layout, a = self.layout, self.alpha
        fam_of = np.full(layout.members.shape, -1)
        fam_of[self._cset, self._cpos] = np.arange(len(self._par))
        for p in range(layout.members.shape[1]):
            mem = layout.members[sets, p]
            at = np.flatnonzero(chosen[mem] & (fam_of[sets, p] >= 0))
            digit = (keys[at] - layout.off[sets[at]]) // layout.stride[sets[at], p] \
                % layout.radix[mem[at]]
            at = at[digit == layout.room[mem[at]]]  # the child at its missing slot
            digits = layout.digits(keys[at], sets[at])
            fam = fam_of[sets[at], p]
            cell_fix += np.bincount(fam, gammaln(a + counts[at]) - gammaln(a), len(cell_fix))
            parents = np.delete(digits, p, axis=1)
            pset = self._pset[fam]
            config = layout.off[pset] + (parents * layout.stride[pset, :-1]).sum(axis=1)
            total = self._cells.lookup(config).astype(float)
            ra = self._card[self._node[fam]] * a
            config_fix += np.bincount(
                fam, gammaln(ra + total) - gammaln(ra + total - counts[at]), len(config_fix))

    # ----------------------------------------------------------------- reads

    def reads(self) -> CountReads:
        """The reads of the current counts family by family (built per call: the counts
        are replaced as the tables grow)."""
        return CountReads(Families(self._node, self._par, self._start, self._cset, self._pset,
                                   self._cpos),
                          self.layout, self._cells, self._value_counts, self._card, self.alpha)

    def uncounted_to_missing(self, rows) -> np.ndarray:
        """:meth:`.CountReads.uncounted_to_missing` of the current counts."""
        return self.reads().uncounted_to_missing(rows)

    def cards(self) -> np.ndarray:
        """Number of observed values of each node (1 for a node never observed)."""
        return self.reads().cards()

    def predictive(self, i: int, sets, rows) -> np.ndarray:
        """:meth:`.CountReads.predictive` of the current counts."""
        return self.reads().predictive(i, sets, rows)

    def predictive_flat(self, fams, rows) -> np.ndarray:
        """:meth:`.CountReads.predictive_flat` of the current counts."""
        return self.reads().predictive_flat(fams, rows)

    def dense_counts(self, f: int) -> tuple:
        """:meth:`.CountReads.dense_counts` of the current counts."""
        return self.reads().dense_counts(f)

    def pair_tables(self):
        """The counts to choose candidate parents from: :attr:`selection` when set, else
        :meth:`.CountReads.pair_tables` of the records counted."""
        if self.selection is not None:
            return self.selection
        return self.reads().pair_tables()

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

    def log_score(self, i: int) -> np.ndarray:
        """``log S(X_i; Z)`` of every candidate set of node ``i`` (a new array)."""
        sl = slice(self._start[i], self._start[i + 1])
        return self._prior[sl] + self._cell_part[sl] + self._config_part[sl]

    @property
    def family_start(self) -> np.ndarray:
        """Node ``i``'s families are ``family_start[i]:family_start[i + 1]`` (flat index)."""
        return self._start

    def log_weights(self) -> list:
        """Per node: ``log w_i(Z)``, the scores normalised over all of the node's sets
        (eq. 9's weights when every set is allowed, as with the ``order`` given)."""
        flat = self._prior + self._cell_part + self._config_part
        starts = self._start[:-1]
        top = np.maximum.reduceat(flat, starts)
        shifted = flat - np.repeat(top, np.diff(self._start))
        norm = np.log(np.add.reduceat(np.exp(shifted), starts))
        lw = shifted - np.repeat(norm, np.diff(self._start))
        return np.split(lw, self._start[1:-1])

    def __setstate__(self, state):
        state.setdefault("selection", None)  # pickles made before candidate choice on Dask
        self.__dict__.update(state)

    @property
    def n_cells(self) -> int:
        """Entries stored in the count tables (occurring configurations of every set)."""
        return len(self._cells)
