"""The order model: exact averaging over every DAG consistent with one node order (array level).

Dash & Cooper (2004)'s fixed-order averaging, used by :class:`~onlinebma.order_mcmc.FixedOrderBMA`
and, over sampled orders, by :class:`~onlinebma.order_mcmc.OrderMCMC`.

Given an order, the parents of each node are chosen independently among its predecessors, so
the average over all consistent DAGs with in-degree ``<= max_parents`` factorises (eq. 9 of
Hwang & Zhang 2005)::

    P(U | D, order) = prod_i  sum_{Z in Z_i} w_i(Z) * (a + N_ijk) / (r_i a + N_ij)
    w_i(Z) = S(X_i; Z) / sum_{Z' in Z_i} S(X_i; Z')

with ``Z_i`` the allowed parent sets (subsets of the predecessors of ``X_i``). Each factor is
a proper conditional distribution of ``X_i`` given its predecessors, so the averaged model is
itself a Bayesian network over the order. Class probabilities come from the joint by
conditioning (eq. 3), after averaging the joint over the given orders (eq. 11).

Numerics: the per-node sums ``sum_Z w_i(Z) theta_i(Z)`` are taken in linear space as one
matrix product. This is safe: the weights are normalised (at most 1) and every predictive
probability is at least ``a / (N + r_i a)``, so nothing under- or overflows; the results are
logged at once and everything after that is in log space.

Missing features at prediction time
    are summed out exactly by enumerating their joint values, as long as the product of their
    numbers of values is at most ``max_missing_configs`` (smallest-cardinality features are
    enumerated first). Missing features beyond that bound are summed out under the
    approximation that they have *no children*: every parent set containing one is dropped
    and the remaining weights renormalised, which makes those nodes barren, so they sum out
    to one. This is exact whenever, in an order, they come after the class and every observed
    feature (barren nodes), and never imputes values.

Prediction-time pruning
    parent sets whose normalised weight is below ``prune_tol / s_i`` in every averaged order
    (``s_i`` kept sets of node ``i``) are skipped. Each factor then changes by at most
    ``prune_tol`` in absolute value, i.e. by a relative ``prune_tol (N + r_i a) / a``. Rows
    whose weights are renormalised one by one (missing features beyond the bound, patterns
    shared by fewer than ``_GROUP`` rows) are not pruned.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .. import tuning
from ..caching import BoundedCache
from ..stats.logmath import logsumexp_np
from ..stats.unique import unique_rows
from .masks import set_masks
from .scores import ScoreTables, config_offsets, family_index

__all__ = ["OrderModel"]

_DROPPED = -2  # row code of a missing node summed out by the "no children" approximation
_TINY = 1e-250  # kept weight below which a row's renormalisation is redone in log space


class OrderModel:
    """Score tables plus everything prediction needs, for one training set (array level).

    Parameters
    ----------
    codes
        ``(M, n)`` codes of the nodes, ``0..r_i - 1`` (``-1`` = missing), as in the columns of
        a :class:`~onlinebma.table.Table`; :func:`~onlinebma.table.compact_codes` brings other
        codings there.
    max_parents
        Largest number of parents of a node.
    alpha
        K2 Dirichlet pseudo-count of every cell.
    prune_tol
        Parent sets are dropped while together they weigh at most this fraction of the kept
        ones, the relative error of every per-node sum (0 keeps every set;
        :mod:`~onlinebma.order_mcmc.scores`).
    show_progress
        Show the progress of building the score tables.
    cards
        Number of values ``r_i`` of each node (default: the largest code plus one, at least 1).
    candidates
        Candidate parents of each node (:mod:`~onlinebma.order_mcmc.candidates`); ``None``
        (default): every other node.
    """

    def __init__(self, codes: np.ndarray, max_parents: int = 3, alpha: float = 1.0,
                 prune_tol: float = 1e-12, show_progress: bool = False,
                 cards: np.ndarray | None = None, candidates: list | None = None):
        codes = np.asarray(codes, dtype=np.int64)
        if cards is None:
            cards = codes.max(axis=0, initial=-1) + 1
        cards = np.maximum(np.asarray(cards, dtype=np.int64), 1)
        self.tables = ScoreTables(codes, cards, max_parents, alpha, prune_tol, show_progress,
                                  candidates)
        self.n = self.tables.n
        self.cards = cards
        self.alpha = float(alpha)
        self.prune_tol = float(prune_tol)
        self._theta: dict = {}  # node -> predictive probabilities of all its kept families
        self._weight_cache = BoundedCache("ORDER_NODE_WEIGHTS")  # see _node_weights
        self._set_masks = set_masks(self.tables.parents, self.tables.candidate_parents, self.n)
        self._candidate_lists = [c.tolist() for c in self.tables.candidate_parents]

    # ------------------------------------------------------------- structure

    def positions(self, order) -> np.ndarray:
        """Position of each node in ``order``, with the dummy padding node at -1."""
        order = np.asarray(order, dtype=np.int64)
        if sorted(order.tolist()) != list(range(self.n)):
            raise ValueError(f"an order must list the nodes 0..{self.n - 1} once each")
        pos = np.empty(self.n + 1, dtype=np.int64)
        pos[order] = np.arange(self.n)
        pos[self.n] = -1
        return pos

    def node_log_evidence(self, i: int, pos: np.ndarray) -> float:
        """``log sum_{Z allowed} S(X_i; Z)`` of node ``i`` for positions ``pos`` (eq. 9)."""
        allowed = pos[self.tables.parents[i]].max(axis=1) < pos[i]
        return float(logsumexp_np(self.tables.log_score[i][allowed]))

    def candidate_mask(self, i: int, mask: int) -> int:
        """The predecessors ``mask`` (bit ``v`` = node ``v``) seen by node ``i``: bit ``t`` for
        its ``t``-th candidate parent (the mask itself beyond 62 candidates). Node ``i``'s
        per-node sum depends on nothing else (a key for caches)."""
        if self._set_masks[i] is None:
            return mask
        local = 0
        for t, v in enumerate(self._candidate_lists[i]):
            if (mask >> v) & 1:
                local |= 1 << t
        return local

    def node_log_evidence_mask(self, i: int, mask: int) -> float:
        """:meth:`node_log_evidence` with the predecessors as a bitmask (bit ``v`` = node ``v``)."""
        return self.node_log_evidence_local(i, self.candidate_mask(i, mask))

    def node_log_evidence_local(self, i: int, local: int) -> float:
        """:meth:`node_log_evidence` with the predecessors given by :meth:`candidate_mask`."""
        masks = self._set_masks[i]
        if masks is not None:
            allowed = (masks & ~np.int64(local)) == 0
        else:
            pred = np.array([(local >> v) & 1 for v in range(self.n)] + [1], dtype=bool)
            allowed = pred[self.tables.parents[i]].all(axis=1)
        x = self.tables.log_score[i][allowed]  # never empty: the empty set is always allowed
        top = x.max()
        return float(top + np.log(np.exp(x - top).sum()))

    def log_evidence(self, order) -> float:
        """``log P(D | order) = sum_i log sum_{Z allowed} S(X_i; Z)``."""
        pos = self.positions(order)
        return sum(self.node_log_evidence(i, pos) for i in range(self.n))

    def log_weights(self, order) -> list:
        """Per node: ``log w_i(Z)`` over the kept sets (``-inf`` where not allowed)."""
        pos = self.positions(order)
        out = []
        for i in range(self.n):
            allowed = pos[self.tables.parents[i]].max(axis=1) < pos[i]
            lw = np.where(allowed, self.tables.log_score[i], -np.inf)
            out.append(lw - logsumexp_np(lw))
        return out

    def class_edge_proba(self, log_weights: list, c: int) -> np.ndarray:
        """``(3, n)``: posterior probability, given one order, that node ``f`` is a parent of
        ``c``, a child of ``c``, and in the Markov blanket of ``c`` (parent, child or other
        parent of a common child). Parent sets of different nodes are independent given the
        order, so ``P(f not in MB) = (1 - P(f -> c)) (1 - P(c -> f)) prod_j (1 - P(c, f -> j))``.
        """
        out = np.zeros((3, self.n))
        not_mb = np.ones(self.n)
        for j in range(self.n):
            par = self.tables.parents[j]
            w = np.exp(log_weights[j])
            both = np.zeros(self.n + 1)  # P(f and c are both parents of j), by f
            with_c = (par == c).any(axis=1)
            for k in range(par.shape[1]):
                np.add.at(both, par[with_c, k], w[with_c])
            if j == c:
                for k in range(par.shape[1]):
                    np.add.at(out[0], par[:, k][par[:, k] < self.n], w[par[:, k] < self.n])
            else:
                out[1, j] = w[with_c].sum()
                both[c] = 0.0
                not_mb *= 1.0 - np.minimum(both[: self.n], 1.0)
        not_mb *= (1.0 - out[0]) * (1.0 - out[1])
        out[2] = 1.0 - not_mb
        out[:, c] = 0.0
        return out[:, : self.n]

    # ------------------------------------------------------------ prediction

    def _node_theta(self, i):
        """Predictive ``(a + N_ijk) / (r_i a + N_ij)`` of every cell of every kept set of node
        ``i`` (eq. 7), flat, with the sets' configuration offsets; computed once per fit."""
        if i not in self._theta:
            par = self.tables.parents[i]
            r = int(self.cards[i])
            parts = [self.tables.family_counts(i, par[sl])[0]
                     for sl in self.tables.chunks(i, par, self.tables.codes.shape[0])]
            nk = np.concatenate(parts).reshape(-1, r)
            theta = (nk + self.alpha) / (nk.sum(axis=1, keepdims=True) + r * self.alpha)
            self._theta[i] = (theta.ravel(), config_offsets(par, self.tables.score_radix))
        return self._theta[i]

    def _theta_at(self, i, idx, columns):
        """``theta_i(Z)(row)`` of the sets ``idx`` of node ``i`` for the rows of ``columns``
        (node-major codes with the dummy row last): ``(len(idx), m)``."""
        theta, offsets = self._node_theta(i)
        par = self.tables.parents[i][idx]
        r = int(self.cards[i])
        return theta[family_index(columns, i, par, self.tables.score_radix, r, offsets[idx])[1]]

    def _mixture(self, i, columns, sets, w):
        """``sum_Z w[Z, t] theta_i(Z)(row)`` for the given sets: ``(m, T)`` (eq. 9)."""
        par = self.tables.parents[i]
        f = np.zeros((columns.shape[1], w.shape[1]))
        for sl in self.tables.chunks(i, par[sets], columns.shape[1]):
            idx = sets[sl]
            f += self._theta_at(i, idx, columns).T @ w[idx]
        return f

    def _masked_mixture(self, i, columns, dropped, sets, w):
        """Like :meth:`_mixture`, skipping in each row the parent sets that contain a node
        dropped in that row (``dropped``: ``(n + 1, m)`` bools). Returns the numerator and the
        kept weight ``(m, T)`` each; their ratio renormalises the weights row by row."""
        par = self.tables.parents[i]
        num = np.zeros((columns.shape[1], w.shape[1]))
        den = np.zeros_like(num)
        for sl in self.tables.chunks(i, par[sets], columns.shape[1]):
            idx = sets[sl]
            keep = ~dropped[par[idx]].any(axis=1)  # (s, m)
            num += (self._theta_at(i, idx, columns) * keep).T @ w[idx]
            den += keep.T.astype(float) @ w[idx]
        return num, den

    def _log_joint_mixed(self, rows, log_weights, drop, class_node):
        """:meth:`log_joint` for rows that drop different nodes.

        Rows sharing a pattern with at least ``_GROUP`` others go through the shared path;
        the rest have their weights renormalised row by row in linear space, and rows whose
        kept weight underflows are redone one by one in log space.
        """
        m = rows.shape[0]
        out = np.zeros((m, len(log_weights)))
        _, which, counts = unique_rows(drop)
        rest = np.ones(m, dtype=bool)
        for g in np.flatnonzero(counts >= tuning.ORDER_SHARED_ROWS):
            members = which == g
            out[members] = self.log_joint(rows[members], log_weights, class_node)
            rest &= ~members
        rows, drop = rows[rest], drop[rest]
        part = np.zeros((rows.shape[0], len(log_weights)))
        filled = np.where(drop, 0, rows)
        columns = np.vstack([filled.T, np.zeros((1, len(rows)), np.int64)])
        dropped = np.vstack([drop.T, np.zeros((1, len(rows)), dtype=bool)])
        if class_node is not None:  # rows that differ only in the class: evaluate once
            collapsed = np.where(drop, _DROPPED, filled)
            collapsed[:, class_node] = 0
            uniq, inverse, _ = unique_rows(collapsed)
            u_drop = uniq == _DROPPED
            u_columns = np.vstack([np.where(u_drop, 0, uniq).T, np.zeros((1, len(uniq)), np.int64)])
            u_dropped = np.vstack([u_drop.T, np.zeros((1, len(uniq)), dtype=bool)])
        redo = np.zeros(len(rows), dtype=bool)
        for i in range(self.n):
            w = self._node_weights(i, log_weights, (), class_node)[0]
            nonzero = w.max(axis=1) > 0  # no pruning here: kept weights may be small
            if class_node is None or i == class_node:
                num, den = self._masked_mixture(i, columns, dropped, np.flatnonzero(nonzero), w)
            else:
                has_class = (self.tables.parents[i] == class_node).any(axis=1)
                num, den = self._masked_mixture(i, columns, dropped,
                                                np.flatnonzero(nonzero & has_class), w)
                u_num, u_den = self._masked_mixture(i, u_columns, u_dropped,
                                                    np.flatnonzero(nonzero & ~has_class), w)
                num += u_num[inverse]
                den += u_den[inverse]
            live = ~drop[:, i]  # a dropped node is barren: its factor is one
            tiny = live & (den < _TINY).any(axis=1)
            redo |= tiny
            ok = live & ~tiny
            part[ok] += np.log(num[ok] / den[ok])
        for t in np.flatnonzero(redo):
            part[t] = self.log_joint(rows[t:t + 1], log_weights, class_node)[0]
        out[rest] = part
        return out

    def _node_weights(self, i, log_weights, dropped, class_node):
        """Node ``i``'s mixture weights ``(s_i, T)`` over the orders, renormalised without the
        parent sets that contain a dropped node, and the sets worth evaluating (prediction-time
        pruning), split by whether they contain the class. Cached: they depend on the orders,
        not on the rows."""
        key = (i, id(log_weights), tuple(dropped), class_node)
        hit = self._weight_cache.get(key)
        if hit is not None and hit[0] is log_weights:
            return hit[1]
        par = self.tables.parents[i]
        lw = np.stack([w[i] for w in log_weights], axis=1)
        if len(dropped):
            hit_dropped = np.isin(par, dropped).any(axis=1)
            lw = np.where(hit_dropped[:, None], -np.inf, lw)
            lw = lw - logsumexp_np(lw, axis=0, keepdims=True)
        w = np.exp(lw)
        use = w.max(axis=1) >= self.prune_tol / len(par)
        if class_node is None or i == class_node:
            value = (w, np.flatnonzero(use), None)
        else:
            has_class = (par == class_node).any(axis=1)
            value = (w, np.flatnonzero(use & has_class), np.flatnonzero(use & ~has_class))
        self._weight_cache.put(key, (log_weights, value))
        return value

    def log_joint(self, rows: np.ndarray, log_weights: list, class_node=None) -> np.ndarray:
        """``log P(U = row | D, order_t)`` for complete rows, one column per order ``t``.

        ``rows`` is ``(m, n)`` compact codes; a node coded ``-2`` is summed out under the
        "no children" approximation (module docstring). With ``class_node`` given, parent
        sets without the class are evaluated once per distinct row with the class ignored
        (rows often differ only in the class).
        """
        m = rows.shape[0]
        drop = rows == _DROPPED
        if m > 1 and drop.any() and (drop != drop[0]).any():
            return self._log_joint_mixed(rows, log_weights, drop, class_node)
        out = np.zeros((m, len(log_weights)))
        dropped = np.flatnonzero(drop[0]) if m else np.zeros(0, dtype=np.int64)
        filled = np.where(rows == _DROPPED, 0, rows)
        columns = np.vstack([filled.T, np.zeros((1, m), np.int64)])
        if class_node is not None:
            collapsed = filled.copy()
            collapsed[:, class_node] = 0
            uniq, inverse, _ = unique_rows(collapsed)
            uniq_columns = np.vstack([uniq.T, np.zeros((1, len(uniq)), np.int64)])
        for i in range(self.n):
            if i in dropped:
                continue  # a barren node sums out to one
            w, with_class, without_class = self._node_weights(i, log_weights, dropped, class_node)
            f = self._mixture(i, columns, with_class, w)
            if without_class is not None:
                f += self._mixture(i, uniq_columns, without_class, w)[inverse.ravel()]
            out += np.log(f)
        return out

    def log_joint_classes(self, rows, log_weights: list, class_node: int,
                          max_missing_configs: int = 64) -> np.ndarray:
        """``log P(class = c, observed features | D, order_t)``: ``(m, r_class, T)``.

        ``rows`` is ``(m, n)`` compact codes, ``-1`` = missing (the class column is ignored);
        ``log_weights`` holds :meth:`log_weights` of each order. Missing features are summed
        out as the module docstring says.
        """
        rows = np.asarray(rows, dtype=np.int64)
        m, rc, n_orders = rows.shape[0], int(self.cards[class_node]), len(log_weights)
        missing = rows < 0
        missing[:, class_node] = False
        plans = []  # per row: (enumerated nodes, dropped nodes)
        for t in range(m):
            miss = sorted(np.flatnonzero(missing[t]), key=lambda v: (self.cards[v], v))
            size, enum = 1, []
            for v in miss:
                if size * self.cards[v] > max_missing_configs:
                    break
                size *= int(self.cards[v])
                enum.append(v)
            plans.append((enum, miss[len(enum):]))
        out = np.empty((m, rc, n_orders))
        start = 0
        while start < m:
            blocks, seg_sizes, stop, size = [], [], start, 0
            while stop < m and (stop == start or size < tuning.ORDER_BATCH_ROWS):
                enum, dropped = plans[stop]
                combos = list(itertools.product(*[range(self.cards[v]) for v in enum]))
                grid = np.array(combos, dtype=np.int64).reshape(len(combos), len(enum))
                block = np.repeat(rows[stop][None], rc * len(grid), axis=0)
                block[:, class_node] = np.repeat(np.arange(rc), len(grid))
                block[:, enum] = np.tile(grid, (rc, 1))
                block[:, dropped] = _DROPPED
                blocks.append(block)
                seg_sizes += [len(grid)] * rc
                size += len(block)
                stop += 1
            joint = self.log_joint(np.vstack(blocks), log_weights, class_node)
            starts = np.concatenate([[0], np.cumsum(seg_sizes)[:-1]])
            top = np.maximum.reduceat(joint, starts, axis=0)
            rep = np.repeat(top, seg_sizes, axis=0)
            summed = np.log(np.add.reduceat(np.exp(joint - rep), starts, axis=0)) + top
            out[start:stop] = summed.reshape(stop - start, rc, n_orders)
            start = stop
        return out

    def class_log_proba(self, rows, log_weights: list, class_node: int,
                        max_missing_configs: int = 64) -> np.ndarray:
        """``log P(class | observed features, D)``: joints averaged over the orders (eq. 11),
        then conditioned on the observed features (eq. 3). ``(m, r_class)``."""
        joint = self.log_joint_classes(rows, log_weights, class_node, max_missing_configs)
        averaged = logsumexp_np(joint, axis=2) - math.log(len(log_weights))  # eq. 11
        return averaged - logsumexp_np(averaged, axis=1, keepdims=True)

