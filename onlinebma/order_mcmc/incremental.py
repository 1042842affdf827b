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
- a value code beyond the tables' room re-lays the count tables out (a copy of the counts,
  no records needed).

Memory is the dense count tables of every candidate family: ``sum_Z prod_{v in Z} (c_v + 1)``
configurations times ``c_i`` values per family, ``c_v`` the number of value codes of node
``v`` — bounded by the candidate parents (:mod:`~onlinebma.order_mcmc.candidates`) and the
numbers of values, not by the records. A pickle carries the non-zero counts only (at most
one configuration and one cell per record and family).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from .scores import _candidate_sets, candidate_lists

__all__ = ["FamilyCounts", "StreamingScores"]


@dataclass
class FamilyCounts:
    """Counts of some records in the layout of a :class:`StreamingScores` table: cells
    ``N_ijk`` and configurations ``N_ij`` of every family, values of every node, records.
    Counts of chunks of records add up (``+``): the tables of a frame split in partitions
    are the sums of the partitions' counts."""

    cells: np.ndarray
    configs: np.ndarray
    value_counts: list
    n_records: int

    def __add__(self, other: FamilyCounts) -> FamilyCounts:
        return FamilyCounts(self.cells + other.cells, self.configs + other.configs,
                            [a + b for a, b in zip(self.value_counts, other.value_counts)],
                            self.n_records + other.n_records)


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
        room = np.ones(n, np.int64) if n_values is None else np.maximum(1, np.asarray(n_values))
        self._room = np.append(room, 1).astype(np.int64)  # the dummy node: one value, 0
        self._has_missing = np.zeros(n + 1, dtype=bool)
        self._layout()
        self._cells = np.zeros(int(self._cell_off[-1]), dtype=np.int32)
        self._configs = np.zeros(int(self._conf_off[-1]), dtype=np.int32)

    # ---------------------------------------------------------------- layout

    def _layout(self):
        """Offsets and strides of the dense tables for the current room per node.

        A parent's digit is its code, or ``room`` for a missing value (a slot that exists
        once the node has been missing); the last parent varies fastest; family ``f``'s
        cell is ``cell_off[f] + config * room[i] + value``.
        """
        rad = (self._room + self._has_missing)[self._par]
        stride = np.ones_like(rad)
        for j in range(rad.shape[1] - 2, -1, -1):
            stride[:, j] = stride[:, j + 1] * rad[:, j + 1]
        self._stride = stride
        self._stride_cols = [np.ascontiguousarray(stride[:, j]) for j in range(rad.shape[1])]
        self._par_cols = [np.ascontiguousarray(self._par[:, j]) for j in range(rad.shape[1])]
        q = rad.prod(axis=1)
        self._conf_off = np.concatenate([[0], np.cumsum(q)])
        self._cell_off = np.concatenate([[0], np.cumsum(q * self._room[self._node])])
        self._conf_start = self._conf_off[:-1]
        self._cell_start = self._cell_off[:-1]

    def _grow(self, row, missing=None):
        """Make room for the codes and missing values of ``row``; move the counts over.

        Only the non-zero counts are moved (most cells of the wide families are empty).
        """
        room0, miss0 = self._room.copy(), self._has_missing.copy()
        stride0, conf0, cell0 = self._stride, self._conf_off, self._cell_off
        self._room[:-1] = np.maximum(self._room[:-1], row + 1)
        self._has_missing[:-1] |= (row < 0) if missing is None else missing
        if (self._room == room0).all() and (self._has_missing == miss0).all():
            return
        self._layout()

        def new_config(fam, local):  # a configuration's index in the new layout
            par = self._par[fam]
            digits = (local[:, None] // stride0[fam]) % (room0 + miss0)[par]
            digits = np.where(digits >= room0[par], self._room[par], digits)  # missing slot
            return (digits * self._stride[fam]).sum(axis=1)

        at = np.flatnonzero(self._configs)
        fam = np.searchsorted(conf0, at, side="right") - 1
        configs = np.zeros(int(self._conf_off[-1]), dtype=self._configs.dtype)
        configs[self._conf_off[fam] + new_config(fam, at - conf0[fam])] = self._configs[at]
        at = np.flatnonzero(self._cells)
        fam = np.searchsorted(cell0, at, side="right") - 1
        r0, r1 = room0[self._node[fam]], self._room[self._node[fam]]
        local = at - cell0[fam]
        new = self._cell_off[fam] + new_config(fam, local // r0) * r1 + local % r0
        cells = np.zeros(int(self._cell_off[-1]), dtype=self._cells.dtype)
        cells[new] = self._cells[at]
        self._cells, self._configs = cells, configs

    # --------------------------------------------------------------- updates

    def _index(self, row):
        """Families to update (child observed) and their configuration and cell indices."""
        digits = np.append(np.where(row >= 0, row, self._room[:-1]), 0)
        local = digits[self._par_cols[0]] * self._stride_cols[0]
        for par, stride in zip(self._par_cols[1:], self._stride_cols[1:]):
            local += digits[par] * stride
        node = self._node
        conf = self._conf_start + local
        cell = self._cell_start + local * self._room[node] + row[node]
        if (row < 0).any():
            fams = np.flatnonzero((row >= 0)[node])
            return fams, node[fams], conf[fams], cell[fams]
        return slice(None), node, conf, cell

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
        if (row >= self._room[:-1]).any() or (~self._has_missing[:-1] & (row < 0)).any():
            if sign < 0:
                raise ValueError("cannot remove a record that was never counted")
            self._grow(row)
        fams, node, conf, cell = self._index(row)
        r = self._r().copy()
        changed = []  # nodes whose number of observed values changes with this record
        for i in np.flatnonzero(row >= 0):
            counts = self._value_counts[i]
            if row[i] >= len(counts):
                counts = self._value_counts[i] = np.append(
                    counts, np.zeros(int(self._room[i]) - len(counts), np.int64))
            before = counts[row[i]]
            counts[row[i]] += sign
            if (before == 0) != (counts[row[i]] == 0):
                changed.append(int(i))
        if sign < 0:
            self._cells[cell] -= 1
            self._configs[conf] -= 1
        a = self.alpha
        self._cell_part[fams] += sign * np.log(a + self._cells[cell])
        self._config_part[fams] -= sign * np.log(r[node] * a + self._configs[conf])
        if sign > 0:
            self._cells[cell] += 1
            self._configs[conf] += 1
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
                                            minlength=int(self._room[i])) for i in range(self.n)])
        self.n_records += len(rows)
        for _, _, fams, conf, cell in self._family_cells(rows):
            ra = self._card[self._node[fams]] * self.alpha
            self._config_part -= _bump(self._configs, conf, fams, ra, len(self._par))
            self._cell_part += _bump(self._cells, cell, fams, self.alpha, len(self._par))
        for i in np.flatnonzero(self._card != card0):
            self._rescore_configs(i)

    def reserve(self, n_values, missing) -> None:
        """Make room for value codes below ``n_values`` per node and, where ``missing``, for
        a missing value (the layout of every chunk of one frame must be the same)."""
        self._grow(np.asarray(n_values, dtype=np.int64) - 1, np.asarray(missing, dtype=bool))

    def _family_cells(self, rows):
        """Per block ``lo:hi`` of families: ``(lo, hi, family, configuration, cell)`` of every
        record-family pair whose child is observed (flat indices into the count tables).
        Node-major: gathering a parent's digits reads one contiguous row per family."""
        it = np.int32 if self._cell_off[-1] < 2**31 else np.int64  # halves memory traffic
        digits = np.vstack([np.where(rows >= 0, rows, self._room[:-1]).T,
                            np.zeros((1, len(rows)), np.int64)]).astype(it)  # (n + 1, m)
        children = np.ascontiguousarray(rows.T).astype(it)
        stride = self._stride.astype(it)
        room = self._room.astype(it)
        conf_start, cell_start = self._conf_start.astype(it), self._cell_start.astype(it)
        step = max(1, (1 << 22) // len(rows))
        for lo in range(0, len(self._par), step):
            hi = min(lo + step, len(self._par))
            node = self._node[lo:hi]
            local = digits[self._par[lo:hi, 0]] * stride[lo:hi, 0, None]  # (f, m)
            for j in range(1, self._par.shape[1]):
                local += digits[self._par[lo:hi, j]] * stride[lo:hi, j, None]
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
        if (rows >= self._room[:-1]).any() or (~self._has_missing[:-1] & (rows < 0)).any():
            raise ValueError("the records do not fit the layout of the count tables")
        cells = np.zeros_like(self._cells)
        configs = np.zeros_like(self._configs)
        if len(rows):
            for lo, hi, _, conf, cell in self._family_cells(rows):
                for counts, index, off in ((configs, conf, self._conf_off),
                                           (cells, cell, self._cell_off)):
                    a, b = off[lo], off[hi]  # the block's families' entries
                    counts[a:b] += np.bincount(index - a, minlength=b - a).astype(counts.dtype)
        values = [np.bincount(rows[:, i][rows[:, i] >= 0], minlength=int(self._room[i]))
                  for i in range(self.n)]
        return FamilyCounts(cells, configs, values, len(rows))

    def add_counts(self, counts: FamilyCounts) -> None:
        """Add counts taken by :meth:`count` (of this layout) and rescore every family from
        the counts: the table is then that of all the records counted."""
        if counts.cells.shape != self._cells.shape or \
                counts.configs.shape != self._configs.shape:
            raise ValueError("the counts were taken in another layout of the count tables")
        self.version += 1
        self._add_value_counts(counts.value_counts)
        self.n_records += counts.n_records
        self._configs += counts.configs
        self._cells += counts.cells
        cell_terms = gammaln(self.alpha + self._cells) - gammaln(self.alpha)
        self._cell_part = np.add.reduceat(cell_terms, self._cell_start)
        for i in range(self.n):
            self._rescore_configs(i)

    def _r(self) -> np.ndarray:
        """Number of observed values of each node (1 for a node never observed)."""
        return self._card

    def _rescore_configs(self, i: int):
        """Recompute ``sum_j lgamma(r_i a) - lgamma(r_i a + N_ij)`` of node ``i``'s families."""
        ra = self._r()[i] * self.alpha
        lo, hi = self._start[i], self._start[i + 1]
        counts = self._configs[self._conf_off[lo]:self._conf_off[hi]]
        per_config = gammaln(ra) - gammaln(ra + counts)
        self._config_part[lo:hi] = np.add.reduceat(per_config, self._conf_off[lo:hi] -
                                                   self._conf_off[lo])

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
        rows = np.asarray(rows, dtype=np.int64)
        par, node = self._par[fams], self._node[fams]
        digits = np.hstack([rows, np.zeros((len(rows), 1), np.int64)])
        outside = digits >= self._room  # codes never counted
        if outside.any():
            out_par = outside[:, par].any(axis=2)
            digits = np.where(outside, 0, digits)
        local = digits[:, par[:, 0]] * self._stride[fams, 0]
        for j in range(1, par.shape[1]):
            local += digits[:, par[:, j]] * self._stride[fams, j]
        n_conf = self._configs[self._conf_off[fams] + local]
        n_cell = self._cells[self._cell_off[fams] + local * self._room[node] + digits[:, node]]
        if outside.any():
            n_conf = np.where(out_par, 0, n_conf)
            n_cell = np.where(out_par | outside[:, node], 0, n_cell)
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

    def __getstate__(self):
        # The count tables are mostly zeros: only the non-zero entries travel (the dense
        # table when at least half of it is non-zero, so a pickle is never the larger).
        state = self.__dict__.copy()
        for name in ("_cells", "_configs"):
            counts = state[name]
            at = np.flatnonzero(counts)
            if 2 * len(at) < len(counts):
                state[name] = (len(counts), counts.dtype.str,
                               at.astype(np.int32 if len(counts) < 2**31 else np.int64),
                               counts[at])
        return state

    def __setstate__(self, state):
        state.setdefault("selection", None)  # pickles made before candidate choice on Dask
        for name in ("_cells", "_configs"):
            if isinstance(state[name], tuple):
                size, dtype, at, values = state[name]
                counts = np.zeros(size, dtype=np.dtype(dtype))
                counts[at] = values
                state[name] = counts
        self.__dict__.update(state)

    def pair_tables(self):
        """The counts to choose candidate parents from: :attr:`selection` when set, else
        :func:`~onlinebma.order_mcmc.candidates.pair_tables` of the records counted, from
        the one-parent families (zeros where a pair has no family)."""
        if self.selection is not None:
            return self.selection
        rad = self._room + self._has_missing
        width = int(rad[:-1].max(initial=1))
        out = []
        for i in range(self.n):
            r = int(self._room[i])
            table = np.zeros((self.n, width, r), dtype=np.int64)
            vc = self._value_counts[i][:r]
            table[i, 0, :len(vc)] = vc
            for f in range(self._start[i], self._start[i + 1]):
                par = self._par[f]
                if par[0] < self.n and (par[1:] == self.n).all():
                    q = int(rad[par[0]])
                    cells = self._cells[self._cell_off[f]:self._cell_off[f + 1]]
                    table[par[0], :q] = cells.reshape(q, r)
            out.append(table)
        return out

    def restricted(self, candidates) -> StreamingScores:
        """These tables restricted to the parent sets within ``candidates`` (a list per
        node): the same counts and scores, copied family by family, without the records."""
        out = StreamingScores(self.n, self.max_parents, self.alpha, self._room[:-1],
                              self.order, candidates)
        out.reserve(self._room[:-1], self._has_missing[:-1])
        index = {(int(node), tuple(par.tolist())): f
                 for f, (node, par) in enumerate(zip(self._node, self._par))}
        old = np.array([index[(int(node), tuple(par.tolist()))]
                        for node, par in zip(out._node, out._par)], dtype=np.int64)
        out._cells = self._cells[_segments(self._cell_off, old)]
        out._configs = self._configs[_segments(self._conf_off, old)]
        out._cell_part = self._cell_part[old].copy()
        out._config_part = self._config_part[old].copy()
        out._value_counts = [v.copy() for v in self._value_counts]
        out._card = self._card.copy()
        out.n_records = self.n_records
        return out

    @property
    def n_cells(self) -> int:
        """Size of the count tables (cells plus configurations)."""
        return len(self._cells) + len(self._configs)


def _segments(offsets, which):
    """Indices of the entries ``offsets[f]:offsets[f + 1]`` of each ``f`` in ``which``."""
    lo, hi = offsets[which], offsets[which + 1]
    starts = np.repeat(lo - np.concatenate([[0], np.cumsum(hi - lo)[:-1]]), hi - lo)
    return starts + np.arange(int((hi - lo).sum()))


def _bump(counts, index, fam, base, n_families):
    """Add one to ``counts[index]`` (repeats allowed); return, per family, the sum of
    ``lgamma(base + N_new) - lgamma(base + N_old)`` over the entries touched."""
    u, first, k = np.unique(index, return_index=True, return_counts=True)
    old = counts[u].astype(np.float64)
    counts[u] += k.astype(counts.dtype)
    b = base[first] if np.ndim(base) else base
    delta = gammaln(b + old + k) - gammaln(b + old)
    return np.bincount(fam[first], weights=delta, minlength=n_families)
