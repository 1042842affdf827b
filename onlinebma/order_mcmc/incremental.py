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

Memory: the counts are sparse (:class:`~onlinebma.order_mcmc.sparse.SparseCounts`): each
family keeps the parent configurations and cells that occur, at most one of each per
distinct record, never the product of the parents' numbers of values; at worst linear in
records times candidate families (:mod:`~onlinebma.order_mcmc.candidates`), and no more than
the dense tables. Unobserved configurations contribute nothing to the score (each of their
terms is ``lgamma(x) - lgamma(x) = 0``; the K2 pseudo-counts are per cell, so ``r_i``
enters as a number, not as a table size). A pickle carries the occurring counts only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from .layout import FamilyKeys
from .scores import _candidate_sets, candidate_lists
from .sparse import SparseCounts

__all__ = ["FamilyCounts", "StreamingScores"]


@dataclass
class FamilyCounts:
    """Counts of some records in the layout of a :class:`StreamingScores` table: cells
    ``N_ijk`` and configurations ``N_ij`` of every family (sparse, at their keys in the
    layout ``layout``), values of every node, records. Counts of chunks of records add up
    (``+``): the tables of a frame split in partitions are the sums of the partitions'
    counts."""

    cells: SparseCounts
    configs: SparseCounts
    value_counts: list
    n_records: int
    layout: tuple

    def __add__(self, other: FamilyCounts) -> FamilyCounts:
        if self.layout != other.layout:
            raise ValueError("the counts were taken in different layouts of the count tables")
        return FamilyCounts(self.cells + other.cells, self.configs + other.configs,
                            [a + b for a, b in zip(self.value_counts, other.value_counts)],
                            self.n_records + other.n_records, self.layout)


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
    n_records
        Records currently counted.
    selection
        The :class:`~onlinebma.order_mcmc.candidates.ClassPairCounts` the candidates were
        chosen from, when the records were counted elsewhere (on Dask,
        :mod:`onlinebma.distributed.orders`), else ``None``; records counted later do not
        change it.

    >>> s = StreamingScores(2, max_parents=1)
    >>> for row in ([0, 0], [1, 1], [1, 1], [0, 0]):
    ...     s.add(row)
    >>> s.parents[0].tolist()
    [[2], [1]]
    >>> bool(s.log_score(0)[1] > s.log_score(0)[0])   # the copy explains the data better
    True
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
        self.layout = FamilyKeys(self._par, self._node,
                                 np.ones(n, np.int64) if n_values is None else n_values)
        self._cells = SparseCounts()  # N_ijk at their keys
        self._configs = SparseCounts()  # N_ij at their keys

    @property
    def family_nodes(self) -> np.ndarray:
        """The child node of every family (flat index, node-major)."""
        return self._node

    @property
    def family_parents(self) -> np.ndarray:
        """The parent set of every family (flat index), padded with the dummy node ``n``."""
        return self._par

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
            self.layout.grow(row, None, self._configs, self._cells)
        fams, node, conf, cell = self.layout.index(row)
        r = self._r().copy()
        n_cell, n_conf = self._cells.add(cell, sign), self._configs.add(conf, sign)
        changed = []  # nodes whose number of observed values changes with this record
        for i in np.flatnonzero(row >= 0):
            counts = self._value_counts[i]
            if row[i] >= len(counts):
                counts = self._value_counts[i] = np.append(
                    counts, np.zeros(int(self.layout.room[i]) - len(counts), np.int64))
            before = counts[row[i]]
            counts[row[i]] += sign
            if (before == 0) != (counts[row[i]] == 0):
                changed.append(int(i))
        if sign < 0:  # the term of a removed record: its counts after removal
            n_cell, n_conf = n_cell - 1, n_conf - 1
        a = self.alpha
        self._cell_part[fams] += sign * np.log(a + n_cell)
        self._config_part[fams] -= sign * np.log(r[node] * a + n_conf)
        self.n_records += sign
        for i in changed:
            self._card[i] = max(1, int((self._value_counts[i] > 0).sum()))
            self._rescore_configs(i)

    def add_many(self, rows) -> None:
        """Count many records at once, vectorised; equal to adding them one by one.

        A few records: each family's score gains ``lgamma(a + N_new) - lgamma(a + N_old)``
        over the cells the records touch (and the like over configurations). Many records
        (more record-family pairs than cells, as in a rebuild): the counts are taken first
        (:meth:`count`) and every score is recomputed from them (:meth:`add_counts`).
        """
        rows = np.asarray(rows, dtype=np.int64).reshape(-1, self.n)
        if not len(rows):
            return
        self.reserve(rows.max(axis=0) + 1, (rows < 0).any(axis=0))
        if len(rows) * len(self._par) > self.n_cells:
            self.add_counts(self.count(rows))
            return
        self.version += 1
        card0 = self._card.copy()
        self._add_value_counts([np.bincount(rows[:, i][rows[:, i] >= 0],
                                            minlength=int(self.layout.room[i]))
                                for i in range(self.n)])
        self.n_records += len(rows)
        for _, _, fams, conf, cell in self.layout.blocks(rows):
            ra = self._card[self._node[fams]] * self.alpha
            self._config_part -= _bump(self._configs, conf, fams, ra, len(self._par))
            self._cell_part += _bump(self._cells, cell, fams, self.alpha, len(self._par))
        for i in np.flatnonzero(self._card != card0):
            self._rescore_configs(i)

    def reserve(self, n_values, missing) -> None:
        """Make room for value codes below ``n_values`` per node and, where ``missing``, for
        a missing value (the layout of every chunk of one frame must be the same)."""
        self.layout.grow(np.asarray(n_values, dtype=np.int64) - 1,
                         np.asarray(missing, dtype=bool), self._configs, self._cells)

    def _add_value_counts(self, counts: list) -> None:
        for i in range(self.n):
            vc = self._value_counts[i]
            self._value_counts[i] = counts[i] + np.append(vc, np.zeros(len(counts[i]) - len(vc),
                                                                       int))
            self._card[i] = max(1, int((self._value_counts[i] > 0).sum()))

    def count(self, rows) -> FamilyCounts:
        """The counts of ``rows`` in this table's layout, without changing the table; rows
        must fit the layout (:meth:`reserve`). Counts of chunks of records add up."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1, self.n)
        if not self.layout.fits(rows):
            raise ValueError("the records do not fit the layout of the count tables")
        parts = {"cells": [], "configs": []}
        if len(rows):  # blocks in family order: the keys come out sorted
            for _, _, _, conf, cell in self.layout.blocks(rows, 1 << 20):  # bounded sorts
                for name, index in (("configs", conf), ("cells", cell)):
                    parts[name].append(np.unique(index.astype(np.int64), return_counts=True))
        tables = {name: SparseCounts(*(np.concatenate([p[j] for p in found])
                                       for j in (0, 1))) if found else SparseCounts()
                  for name, found in parts.items()}
        values = [np.bincount(rows[:, i][rows[:, i] >= 0], minlength=int(self.layout.room[i]))
                  for i in range(self.n)]
        return FamilyCounts(tables["cells"], tables["configs"], values, len(rows),
                            self.layout.signature())

    def add_counts(self, counts: FamilyCounts) -> None:
        """Add counts taken by :meth:`count` (of this layout) and rescore every family from
        the counts: the table is then that of all the records counted."""
        if counts.layout != self.layout.signature():
            raise ValueError("the counts were taken in another layout of the count tables")
        self.version += 1
        self._add_value_counts(counts.value_counts)
        self.n_records += counts.n_records
        self._configs += counts.configs
        self._cells += counts.cells
        keys, cells = self._cells.items()
        fam = self.layout.family(keys, self.layout.cell_off)
        self._cell_part = np.bincount(fam, gammaln(self.alpha + cells) - gammaln(self.alpha),
                                      len(self._par))
        for i in range(self.n):
            self._rescore_configs(i)

    def _r(self) -> np.ndarray:
        """Number of observed values of each node (1 for a node never observed)."""
        return self._card

    def _rescore_configs(self, i: int):
        """Recompute ``sum_j lgamma(r_i a) - lgamma(r_i a + N_ij)`` of node ``i``'s families."""
        ra = self._r()[i] * self.alpha
        lo, hi = self._start[i], self._start[i + 1]
        off = self.layout.conf_off
        keys, counts = self._configs.between(off[lo], off[hi])
        fam = self.layout.family(keys, off) - lo
        self._config_part[lo:hi] = np.bincount(fam, gammaln(ra) - gammaln(ra + counts),
                                               hi - lo)  # a configuration absent adds 0

    # ----------------------------------------------------------------- reads

    def log_score(self, i: int) -> np.ndarray:
        """``log S(X_i; Z)`` of every candidate set of node ``i`` (a new array)."""
        sl = slice(self._start[i], self._start[i + 1])
        return self._prior[sl] + self._cell_part[sl] + self._config_part[sl]

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
        return self._r().astype(np.int64)

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
        conf, cell, unseen_parent, unseen_child = self.layout.lookup_keys(
            fams, np.asarray(rows, dtype=np.int64))
        n_conf, n_cell = self._configs.lookup(conf), self._cells.lookup(cell)
        if unseen_parent is not None:  # codes never counted: count 0
            n_conf = np.where(unseen_parent, 0, n_conf)
            n_cell = np.where(unseen_parent | unseen_child, 0, n_cell)
        node = self._node[fams]
        return (self.alpha + n_cell) / (self._card[node] * self.alpha + n_conf)

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
        for name in ("_cells", "_configs"):  # pickles made before the sparse tables
            if isinstance(state[name], tuple):
                size, dtype, at, values = state[name]
                state[name] = SparseCounts(at, values, np.dtype(dtype))
            elif isinstance(state[name], np.ndarray):
                state[name] = SparseCounts.from_dense(state[name])
        if "layout" not in state:  # ... and before the key layout had a class of its own
            room, missing = state["_room"][:-1], state["_has_missing"][:-1]
            state["layout"] = FamilyKeys(state["_par"], state["_node"], room)
            state["layout"].grow(room - 1, missing, SparseCounts(), SparseCounts())  # same keys
            for name in ("_room", "_has_missing", "_stride", "_stride_cols", "_par_cols",
                         "_conf_off", "_cell_off", "_conf_start", "_cell_start"):
                state.pop(name, None)
        self.__dict__.update(state)

    def pair_tables(self):
        """The counts to choose candidate parents from: :attr:`selection` when set, else
        :func:`~onlinebma.order_mcmc.candidates.pair_tables` of the records counted, from
        the one-parent families (zeros where a pair has no family)."""
        if self.selection is not None:
            return self.selection
        room = self.layout.room
        rad = room + self.layout.has_missing
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

    def restricted(self, candidates) -> StreamingScores:
        """These tables restricted to the parent sets within ``candidates`` (a list per
        node): the same counts and scores, copied family by family, without the records."""
        out = StreamingScores(self.n, self.max_parents, self.alpha, self.layout.room[:-1],
                              self.order, candidates)
        out.reserve(self.layout.room[:-1], self.layout.has_missing[:-1])
        index = {(int(node), tuple(par.tolist())): f
                 for f, (node, par) in enumerate(zip(self._node, self._par))}
        old = np.array([index[(int(node), tuple(par.tolist()))]
                        for node, par in zip(out._node, out._par)], dtype=np.int64)
        new = np.full(len(self._par), -1)
        new[old] = np.arange(len(old))
        for name, off, out_off in (("_cells", self.layout.cell_off, out.layout.cell_off),
                                   ("_configs", self.layout.conf_off, out.layout.conf_off)):
            keys, _ = getattr(self, name).items()
            fam = self.layout.family(keys, off)
            keep = new[fam] >= 0
            moved = keys[keep] - off[fam[keep]] + out_off[new[fam[keep]]]
            setattr(out, name, getattr(self, name).subset(keep, moved))
        out._cell_part = self._cell_part[old].copy()
        out._config_part = self._config_part[old].copy()
        out._value_counts = [v.copy() for v in self._value_counts]
        out._card = self._card.copy()
        out.n_records = self.n_records
        return out

    @property
    def n_cells(self) -> int:
        """Entries stored in the count tables (occurring cells plus configurations)."""
        return len(self._cells) + len(self._configs)

    def dense_counts(self, f: int) -> tuple:
        """Family ``f``'s counts as dense arrays ``(N_ijk, N_ij)``, ``(q, room_i)`` and
        ``(q,)``, configurations in the order of the keys (for checks and small tables)."""
        layout = self.layout
        q = int(layout.conf_off[f + 1] - layout.conf_off[f])
        r = int(layout.room[self._node[f]])
        out = []
        for table, off, size in ((self._cells, layout.cell_off, q * r),
                                 (self._configs, layout.conf_off, q)):
            keys, counts = table.between(off[f], off[f + 1])
            dense = np.zeros(size, np.int64)
            dense[keys - off[f]] = counts
            out.append(dense)
        return out[0].reshape(q, -1), out[1]


def _bump(counts: SparseCounts, index, fam, base, n_families):
    """Add one to ``counts`` at ``index`` (repeats allowed); return, per family, the sum of
    ``lgamma(base + N_new) - lgamma(base + N_old)`` over the entries touched."""
    u, first, k = np.unique(index, return_index=True, return_counts=True)
    old = counts.add(u, k).astype(np.float64)
    b = base[first] if np.ndim(base) else base
    delta = gammaln(b + old + k) - gammaln(b + old)
    return np.bincount(fam[first], weights=delta, minlength=n_families)
