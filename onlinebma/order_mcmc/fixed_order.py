"""Exact model averaging over every DAG consistent with one node order (Dash & Cooper 2004).

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
    ``prune_tol`` in absolute value, i.e. by a relative ``prune_tol (N + r_i a) / a``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..batch import BatchClassifier, Encoded
from ..stats.logmath import logsumexp_np
from .scores import ScoreTables, compact_codes, family_index

__all__ = ["FixedOrderBMA", "OrderModel"]

_DROPPED = -2  # row code of a missing node summed out by the "no children" approximation


class OrderModel:
    """Score tables plus everything prediction needs, for one training set (array level).

    Parameters
    ----------
    codes
        ``(M, n)`` integer codes of the nodes (``-1`` = missing), any coding: values are
        recoded to the ones present (:func:`~onlinebma.order_mcmc.scores.compact_codes`).
    max_parents, alpha, prune_tol, show_progress
        See :class:`~onlinebma.order_mcmc.scores.ScoreTables`.
    """

    def __init__(self, codes, max_parents=3, alpha=1.0, prune_tol=1e-12, show_progress=False):
        compact, cards, self.value_maps = compact_codes(np.asarray(codes))
        self.tables = ScoreTables(compact, cards, max_parents, alpha, prune_tol, show_progress)
        self.n = self.tables.n
        self.cards = cards
        self.alpha = float(alpha)
        self.prune_tol = float(prune_tol)
        self._counts: dict = {}  # node -> (N_ijk flat, N_ij flat) over the kept sets
        # Parent sets as bitmasks for the chain's "sets inside this predecessor set" query.
        self._set_masks = None
        if self.n <= 62:
            self._set_masks = []
            for par in self.tables.parents:
                bits = np.where(par < self.n, np.left_shift(1, np.minimum(par, 62)), 0)
                self._set_masks.append(np.bitwise_or.reduce(bits, axis=1).astype(np.int64))

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

    def node_log_evidence_mask(self, i: int, mask: int) -> float:
        """:meth:`node_log_evidence` with the predecessors as a bitmask (bit ``v`` = node ``v``)."""
        if self._set_masks is not None:
            allowed = (self._set_masks[i] & ~np.int64(mask)) == 0
        else:
            pred = np.array([(mask >> v) & 1 for v in range(self.n)] + [1], dtype=bool)
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

    def edge_proba(self, order, child: int, parent: int) -> float:
        """Posterior probability of the edge ``parent -> child`` given the order."""
        lw = self.log_weights(order)[child]
        has = (self.tables.parents[child] == parent).any(axis=1)
        return float(np.exp(lw[has]).sum()) if has.any() else 0.0

    # ------------------------------------------------------------ prediction

    def encode_rows(self, codes) -> np.ndarray:
        """Rows in the training coding → compact codes (unseen or missing → -1)."""
        codes = np.asarray(codes)
        out = np.full(codes.shape, -1, dtype=np.int64)
        for j, mapping in enumerate(self.value_maps):
            col = codes[:, j]
            ok = (col >= 0) & (col < len(mapping))
            out[ok, j] = mapping[col[ok]]
        return out

    def _node_counts(self, i):
        """Training counts of node ``i`` under all its kept sets (computed once, int32)."""
        if i not in self._counts:
            par = self.tables.parents[i]
            r = int(self.cards[i])
            nk, offsets = self.tables.family_counts(i, par)
            self._counts[i] = (nk.astype(np.int32), nk.reshape(-1, r).sum(axis=1).astype(np.int32),
                               offsets)
        return self._counts[i]

    def log_joint(self, rows: np.ndarray, log_weights: list) -> np.ndarray:
        """``log P(U = row | D, order_t)`` for complete rows, one column per order ``t``.

        ``rows`` is ``(m, n)`` compact codes; a node coded ``-2`` is summed out under the
        "no children" approximation (module docstring); all rows must drop the same nodes.
        """
        m = rows.shape[0]
        out = np.zeros((m, len(log_weights)))
        dropped = np.flatnonzero(rows[0] == _DROPPED) if m else np.zeros(0, dtype=np.int64)
        columns = np.vstack([np.where(rows == _DROPPED, 0, rows).T, np.zeros((1, m), np.int64)])
        radix = self.tables.score_radix
        for i in range(self.n):
            if i in dropped:
                continue  # a barren node sums out to one
            par = self.tables.parents[i]
            lw = np.stack([w[i] for w in log_weights], axis=1)  # (s_i, T)
            if len(dropped):
                hit = np.isin(par, dropped).any(axis=1)
                lw = np.where(hit[:, None], -np.inf, lw)
                lw = lw - logsumexp_np(lw, axis=0, keepdims=True)
            w = np.exp(lw)
            use = np.flatnonzero(w.max(axis=1) >= self.prune_tol / len(par))
            nk, nj, offsets = self._node_counts(i)
            r = int(self.cards[i])
            f = np.zeros((m, w.shape[1]))
            for sl in self.tables.chunks(i, par[use], m):
                idx = use[sl]
                config, cell = family_index(columns, i, par[idx], radix, r, offsets[idx])
                theta = (nk[cell] + self.alpha) / (nj[config] + r * self.alpha)  # eq. 7, (s, m)
                f += theta.T @ w[idx]  # eq. 9: sum over parent sets, one column per order
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
        plans: dict = {}  # dropped nodes -> [(row, enumerated nodes)]
        for t in range(m):
            miss = sorted(np.flatnonzero(missing[t]), key=lambda v: (self.cards[v], v))
            size, enum = 1, []
            for v in miss:
                if size * self.cards[v] > max_missing_configs:
                    break
                size *= int(self.cards[v])
                enum.append(v)
            plans.setdefault(tuple(miss[len(enum):]), []).append((t, enum))
        out = np.empty((m, rc, n_orders))
        for dropped, members in plans.items():
            blocks, seg_sizes = [], []
            for t, enum in members:
                combos = list(itertools.product(*[range(self.cards[v]) for v in enum]))
                grid = np.array(combos, dtype=np.int64).reshape(len(combos), len(enum))
                block = np.repeat(rows[t][None], rc * len(grid), axis=0)
                block[:, class_node] = np.repeat(np.arange(rc), len(grid))
                block[:, enum] = np.tile(grid, (rc, 1))
                block[:, list(dropped)] = _DROPPED
                blocks.append(block)
                seg_sizes += [len(grid)] * rc
            joint = self.log_joint(np.vstack(blocks), log_weights)  # (rows x class x configs, T)
            starts = np.concatenate([[0], np.cumsum(seg_sizes)[:-1]])
            top = np.maximum.reduceat(joint, starts, axis=0)
            rep = np.repeat(top, seg_sizes, axis=0)
            summed = np.log(np.add.reduceat(np.exp(joint - rep), starts, axis=0)) + top
            out[[t for t, _ in members]] = summed.reshape(len(members), rc, n_orders)
        return out

    def class_log_proba(self, rows, log_weights: list, class_node: int,
                        max_missing_configs: int = 64) -> np.ndarray:
        """``log P(class | observed features, D)``: joints averaged over the orders (eq. 11),
        then conditioned on the observed features (eq. 3). ``(m, r_class)``."""
        joint = self.log_joint_classes(rows, log_weights, class_node, max_missing_configs)
        averaged = logsumexp_np(joint, axis=2) - math.log(len(log_weights))  # eq. 11
        return averaged - logsumexp_np(averaged, axis=1, keepdims=True)


class OrderAveragingClassifier(BatchClassifier):
    """Shared River/pandas shell of :class:`FixedOrderBMA` and ``OrderMCMC``.

    Nodes are the features (the adapter's code columns) and the class, written
    ``class_name``. Subclasses choose the averaged orders in :meth:`_choose_orders`.
    """

    _discrete = True

    def _init_common(self, max_parents, alpha, class_name, max_missing_configs, prune_tol,
                     progress, window, refit_every, nominal_attributes):
        super().__init__(window=window, refit_every=refit_every,
                         nominal_attributes=nominal_attributes)
        if not isinstance(max_parents, int) or isinstance(max_parents, bool) or max_parents < 0:
            raise ValueError(f"max_parents must be a non-negative integer, got {max_parents!r}")
        if not (isinstance(alpha, (int, float)) and math.isfinite(alpha) and alpha > 0):
            raise ValueError(f"alpha must be a positive number, got {alpha!r}")
        if not isinstance(max_missing_configs, int) or max_missing_configs < 1:
            raise ValueError(
                f"max_missing_configs must be a positive integer, got {max_missing_configs!r}")
        if not (isinstance(prune_tol, (int, float)) and 0 <= prune_tol < 1):
            raise ValueError(f"prune_tol must be in [0, 1), got {prune_tol!r}")
        self.max_parents = max_parents
        self.alpha = alpha
        self.class_name = class_name
        self.max_missing_configs = max_missing_configs
        self.prune_tol = prune_tol
        self.progress = progress

    def _fit(self, data: Encoded) -> None:
        names = tuple(data.nominal_features)
        if self.class_name in names:
            raise ValueError(
                f"a feature is named {self.class_name!r}, the name of the class node "
                f"(class_name); rename the feature or pass another class_name")
        # Nodes are indexed by sorted feature name, so that nothing depends on the order in
        # which features first appeared in the stream.
        perm = sorted(range(len(names)), key=lambda j: (str(names[j]), type(names[j]).__name__))
        codes = np.hstack([data.codes[:, perm], data.y[:, None]])
        model = OrderModel(codes, self.max_parents, self.alpha, self.prune_tol,
                           show_progress=self.progress)
        names = tuple(names[j] for j in perm) + (self.class_name,)
        orders, extra = self._choose_orders(model, names)
        weights = [model.log_weights(o) for o in orders]
        c = len(names) - 1
        parent_p = np.zeros(c)
        child_p = np.zeros(c)
        for o, lw in zip(orders, weights):
            for f in range(c):
                parent_p[f] += np.exp(lw[c][(model.tables.parents[c] == f).any(axis=1)]).sum()
                child_p[f] += np.exp(lw[f][(model.tables.parents[f] == c).any(axis=1)]).sum()
        # Everything computed: now change the estimator's state.
        self._model, self._weights, self._perm = model, weights, perm
        self.orders_ = [tuple(names[v] for v in o) for o in orders]
        self.class_parent_proba_ = dict(zip(names[:c], (parent_p / len(orders)).tolist()))
        self.class_child_proba_ = dict(zip(names[:c], (child_p / len(orders)).tolist()))
        for key, value in extra.items():
            setattr(self, key, value)

    def _choose_orders(self, model: OrderModel, names: tuple):  # pragma: no cover - abstract
        raise NotImplementedError

    def _predict_proba(self, data: Encoded, rows: Encoded) -> np.ndarray:
        model = self._model
        node_rows = np.hstack([rows.codes[:, self._perm], np.full((rows.n, 1), -1, np.int64)])
        log_p = model.class_log_proba(model.encode_rows(node_rows), self._weights,
                                      model.n - 1, self.max_missing_configs)
        out = np.zeros((rows.n, len(data.classes)))
        class_map = model.value_maps[-1]
        present = np.flatnonzero(class_map >= 0)
        out[:, present] = np.exp(log_p[:, class_map[present]])
        return out


class FixedOrderBMA(OrderAveragingClassifier):
    """Exact Bayesian model averaging over every DAG consistent with one node order.

    Dash & Cooper (2004)'s fixed-order averaging (eq. 6-9 of Hwang & Zhang 2005): every
    network whose nodes follow ``order`` and have at most ``max_parents`` parents, weighted
    by its posterior (K2 marginal likelihood, structure prior of eq. 13); the class is a node
    like the features and may have parents and children.

    Parameters
    ----------
    order
        Node names, the class written as ``class_name``. Features not listed are appended
        after the listed nodes, sorted by name (the class last if not listed); a listed name
        that is neither a feature nor ``class_name`` is an error at fit.
    max_parents
        Largest number of parents of a node.
    alpha
        K2 Dirichlet pseudo-count of every cell.
    class_name
        Name of the class node in ``order``; no feature may have this name.
    max_missing_configs
        Missing features at prediction time are summed out exactly while the number of their
        joint configurations is at most this; beyond it, see the module docstring.
    prune_tol
        Relative error allowed to the pruning of parent sets (0: no pruning).
    progress
        Show progress while building the score tables.
    window, refit_every, nominal_attributes
        See :class:`onlinebma.batch.BatchClassifier`.

    Attributes
    ----------
    orders_
        ``[order]``: the averaged order as a tuple of names.
    log_evidence_
        ``log P(D | order)``.
    class_parent_proba_, class_child_proba_
        ``{feature: posterior probability}`` of the edges feature → class and class → feature.

    Examples
    --------
    >>> from onlinebma.order_mcmc import FixedOrderBMA
    >>> model = FixedOrderBMA(order=("class", "wind", "sky"))
    >>> data = [({"sky": "sun", "wind": "low"}, "play")] * 3 + \\
    ...        [({"sky": "rain", "wind": "high"}, "stay")] * 3
    >>> for x, y in data:
    ...     model.learn_one(x, y)
    >>> p = model.predict_proba_one({"sky": "sun"})
    >>> round(p["play"], 3), round(p["stay"], 3)
    (0.695, 0.305)
    >>> model.orders_
    [('class', 'wind', 'sky')]
    """

    def __init__(self, order, max_parents: int = 3, alpha: float = 1.0, class_name="class",
                 max_missing_configs: int = 64, prune_tol: float = 1e-12, progress: bool = False,
                 window: int | None = None, refit_every: int | None = None,
                 nominal_attributes: list | None = None):
        self._init_common(max_parents, alpha, class_name, max_missing_configs, prune_tol,
                          progress, window, refit_every, nominal_attributes)
        order = tuple(order)
        if len(set(order)) != len(order):
            raise ValueError(f"order lists a node twice: {order!r}")
        self.order = order

    @classmethod
    def _unit_test_params(cls):
        # max_parents=1 keeps River's checks (hundreds of refits) fast; nothing is skipped.
        yield {"order": ("class",), "max_parents": 1}

    def _choose_orders(self, model, names):
        unknown = [v for v in self.order if v not in names]
        if unknown:
            raise ValueError(f"order names {unknown!r}, which are neither features seen in the "
                             f"training data nor the class {self.class_name!r}")
        listed = list(self.order)
        rest = [v for v in names if v not in listed]
        if self.class_name in rest:  # an unlisted class goes last
            rest.remove(self.class_name)
            rest.append(self.class_name)
        index = {v: k for k, v in enumerate(names)}
        order = np.array([index[v] for v in listed + rest])
        return [order], {"log_evidence_": model.log_evidence(order)}
