"""The order model of a stream: exact per-record state of :class:`FixedOrderBMA`.

:class:`StreamingOrderModel` is :class:`~onlinebma.order_mcmc.order_model.OrderModel`
(eq. 9 weights, class conditioning, missing-value summation, prediction-time pruning) read
from :class:`~onlinebma.order_mcmc.incremental.StreamingScores` instead of batch score
tables: weights come from the current family scores and the predictive probabilities
``(a + N_ijk) / (r_i a + N_ij)`` from the current counts, so a model that has learned ``n``
records predicts exactly as the batch model fitted on those ``n`` records.

:class:`LiveState` ties it to a classifier's :class:`~onlinebma.coding.Coding`, read only
through its public API: nodes are the coding's node columns (nominal features, then numeric
ones, each sorted by name) and the class, coded as the coding codes them
(:meth:`~onlinebma.coding.Coding.node_rows`, :meth:`~onlinebma.coding.Coding.encode_one`);
new records are the rows appended since the state last looked
(:meth:`~onlinebma.coding.Coding.changes`). Numeric features are cut with the MDL rule on
the stored records (the batch protocol); the cut points are refitted by the coding's growth
policy (:func:`~onlinebma.growth.growth_due`), and the counts are rebuilt from the stored
records only when they change.
A new feature also rebuilds them (the set of nodes changes), and so do new candidate parents
(:mod:`~onlinebma.order_mcmc.candidates`), chosen again from the stored records each time
the records learned have doubled; when that rebuild would count more than
:data:`~onlinebma.tuning.REBUILD_AT` record-set pairs it is spread over the next records instead
(:mod:`~onlinebma.order_mcmc.successor`), the old tables answering until the new ones are
complete. A state whose counts were taken elsewhere (on Dask) keeps the candidates it was
given: it has no records to rebuild from.
"""

from __future__ import annotations

import math

import numpy as np

from .. import tuning
from ..caching import BoundedCache
from ..growth import growth_due
from ..table import canonical_order
from .candidates import choose_candidates
from .incremental import StreamingScores
from .masks import set_masks
from .order_model import _DROPPED, OrderModel
from .scores import _prune
from .successor import Successor

__all__ = ["LiveState", "StreamingOrderModel", "resolve_order"]

#: Candidate parents are chosen again once the records learned have doubled (each change
#: rebuilds the tables from the stored records: amortised, a constant cost per record).
_CANDIDATE_GROWTH = 1.0


class _LiveTables:
    """What :class:`OrderModel` reads of its score tables, over streaming scores."""

    def __init__(self, scores: StreamingScores):
        self.scores = scores
        self.parents = scores.parents
        self.candidate_parents = scores.candidate_parents
        self.keep = None  # per node: sets kept by the score pruning (None: all)
        self._log_scores = BoundedCache(budget=1)  # of the scores' current version

    def keep_only(self, keep) -> None:
        """Score only the sets ``keep`` marks, per node (``None``: all), from the next read."""
        self.keep = keep
        self._log_scores.clear()

    @property
    def log_score(self) -> list:
        self._log_scores.follow(self.scores.version)
        scores = self._log_scores.get("scores")
        if scores is None:
            scores = [self.scores.log_score(i) for i in range(self.scores.n)]
            if self.keep is not None:
                scores = [np.where(k, x, -np.inf) for k, x in zip(self.keep, scores)]
            self._log_scores.put("scores", scores)
        return scores

    def chunks(self, i, parents, n_rows):
        step = max(1, tuning.LIVE_LOOKUP_CELLS // max(1, n_rows))
        for lo in range(0, len(parents), step):
            yield slice(lo, min(lo + step, len(parents)))


class StreamingOrderModel(OrderModel):
    """:class:`OrderModel` over :class:`StreamingScores` (module docstring)."""

    def __init__(self, scores: StreamingScores, prune_tol: float = 1e-12):
        self.scores = scores
        self.tables = _LiveTables(scores)
        self.n = scores.n
        self.alpha = scores.alpha
        self.prune_tol = float(prune_tol)
        self._theta: dict = {}
        self._weight_cache = BoundedCache("ORDER_NODE_WEIGHTS")
        self._set_masks = set_masks(scores.parents, scores.candidate_parents, self.n)
        self._candidate_lists = [c.tolist() for c in scores.candidate_parents]

    @property
    def cards(self) -> np.ndarray:
        return self.scores.cards()

    def prune(self) -> None:
        """Drop, until the next call, the parent sets that the batch score tables prune on
        the current scores (a set dominated by a subset; the bound of
        :mod:`~onlinebma.order_mcmc.scores`: every per-node sum within a relative
        ``prune_tol``). Only the candidate sets of all orders are pruned this way, and the
        counts of every set are kept, so a set can come back at the next call."""
        if self.scores.order is not None or self.prune_tol <= 0:
            return
        self.tables.keep_only(None)
        scores = self.tables.log_score
        self.tables.keep_only([_prune(x, sizes, subsets, self.prune_tol)
                               for x, (sizes, subsets) in zip(scores, self.scores.set_structure)])

    def _theta_at(self, i, idx, columns):
        return self.scores.predictive(i, idx, columns[:-1].T).T

    def log_joint(self, rows, log_weights: list, class_node=None) -> np.ndarray:
        """:meth:`OrderModel.log_joint` in one vectorised pass over the families of every
        node (rows without dropped nodes; the others take the general path). Families
        without the class are evaluated once per distinct row with the class ignored."""
        rows = np.asarray(rows, dtype=np.int64)
        if (rows == _DROPPED).any():
            return super().log_joint(rows, log_weights, class_node)
        fams, w, seg, has_class = self._flat_weights(log_weights, class_node)
        step = max(1, tuning.ORDER_PREDICTIVE_CELLS // max(1, len(fams)))
        if len(rows) > step:  # bounded memory: (rows x families) in slices
            return np.vstack([self.log_joint(rows[lo:lo + step], log_weights, class_node)
                              for lo in range(0, len(rows), step)])
        theta = np.empty((len(rows), len(fams)))
        if class_node is None or has_class.all():
            theta[:] = self.scores.predictive_flat(fams, rows)
        else:
            theta[:, has_class] = self.scores.predictive_flat(fams[has_class], rows)
            collapsed = rows.copy()
            collapsed[:, class_node] = 0
            uniq, inverse = np.unique(collapsed, axis=0, return_inverse=True)
            free = self.scores.predictive_flat(fams[~has_class], uniq)
            theta[:, ~has_class] = free[inverse.ravel()]
        out = np.zeros((len(rows), w.shape[1]))
        for lo, hi in zip(seg, np.append(seg[1:], len(fams))):  # eq. 9, node by node
            out += np.log(theta[:, lo:hi] @ w[lo:hi])
        return out

    def _flat_weights(self, log_weights, class_node):
        """Families worth evaluating (prediction-time pruning, as :meth:`_node_weights`),
        their weights ``(F, T)``, where each node's families start and which contain the
        class node; cached per weights."""
        hit = self._weight_cache.get("flat")
        if hit is not None and hit[0] is log_weights and hit[1] == class_node:
            return hit[2]
        w = np.exp(np.stack([np.concatenate(lw) for lw in log_weights], axis=1))
        start = self.scores.family_start
        sizes = np.repeat(np.diff(start), np.diff(start))
        fams = np.flatnonzero(w.max(axis=1) >= self.prune_tol / sizes)
        node = self.scores.family_nodes[fams]
        seg = np.flatnonzero(np.diff(np.concatenate([[-1], node])))
        par = self.scores.family_parents[fams]
        has_class = (par == class_node).any(axis=1) | (node == class_node)
        value = (fams, w[fams], seg, has_class)
        self._weight_cache.put("flat", (log_weights, class_node, value))
        return value

    def log_weights(self, order) -> list:
        if self.scores.order is not None and np.array_equal(order, self.scores.order):
            return self.scores.log_weights()  # every kept set is allowed: one vectorised pass
        return super().log_weights(order)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_theta"] = {}
        return state


class LiveState:
    """Streaming scores and model of one classifier's buffer (module docstring).

    ``order`` lists node names (the class as ``class_name``); unlisted features follow in
    canonical order, and the class, if unlisted, comes last. ``restrict``: score only the
    parent sets that order allows (one order averaged), or every candidate set (orders sampled).
    """

    def __init__(self, clf, order, restrict: bool = True):
        coding = clf.coding
        self.columns = (coding.nominal_features, coding.numeric_features)
        self.names = self.columns[0] + self.columns[1] + (clf.class_name,)
        self.order = resolve_order(order, self.names)
        self.restrict = restrict
        self.cuts = coding.fit_cuts() if self.columns[1] else []
        self.n_at_cuts = self.n_at_candidates = coding.n_learned
        rows = coding.node_rows(self.cuts)
        self.mark = coding.mark()
        self.candidates = self.candidates_on(clf, rows)
        self.scores = self._tables(clf, rows, self.candidates)
        self.scores.add_many(rows)
        self.model = StreamingOrderModel(self.scores, clf.prune_tol)
        self.successor = None

    def _tables(self, clf, rows, candidates) -> StreamingScores:
        """Empty tables of ``candidates`` with room for the codes of ``rows``."""
        return StreamingScores(len(self.names), clf.max_parents, clf.alpha,
                               n_values=rows.max(axis=0, initial=0) + 1,
                               order=self.order if self.restrict else None,
                               candidates=candidates)

    @classmethod
    def from_scores(cls, clf, order, scores: StreamingScores) -> LiveState:
        """The state of ``clf`` (nominal features only) whose records were counted elsewhere,
        in ``scores`` (:mod:`onlinebma.order_mcmc.distributed_counts`): the coding is ``clf``'s, the
        nodes its canonical columns and the class."""
        coding = clf.coding
        if coding.numeric_features:
            raise ValueError("count tables taken elsewhere need nominal features only")
        out = cls.__new__(cls)
        out.columns = (coding.nominal_features, ())
        out.names = out.columns[0] + (clf.class_name,)
        out.order = resolve_order(order, out.names)
        out.cuts, out.n_at_cuts = [], coding.n_learned
        out.mark = coding.mark()
        out.restrict = scores.order is not None
        # The records are not at hand: the candidates come from the one-parent families'
        # counts (the same numbers as from the records) and stay until the next rebuild.
        out.candidates = out.candidates_on(clf, np.zeros((0, scores.n), np.int64),
                                     scores.pair_tables())
        out.n_at_candidates = None
        if out.candidates is not None:
            scores = scores.restricted(out.candidates)
        out.scores = scores
        out.model = StreamingOrderModel(scores, clf.prune_tol)
        out.successor = None
        return out

    def candidates_on(self, clf, rows, tables=None):
        """Candidate parents of the nodes on ``rows`` (:func:`choose_candidates`)."""
        return choose_candidates(rows, clf.max_candidates, clf.alpha, len(self.names) - 1,
                                 self.order if self.restrict else None, tables)

    def current(self, clf) -> bool:
        """Whether the state still fits the coding's columns, cut points and candidate
        parents (refits cuts and candidates when due, and keeps the state if they did not
        move)."""
        coding = clf.coding
        if (coding.nominal_features, coding.numeric_features) != self.columns:
            return False
        if self.columns[1] and growth_due(coding.n_learned - self.n_at_cuts, self.n_at_cuts):
            cuts = coding.fit_cuts()
            if any(len(a) != len(b) or (a != b).any() for a, b in zip(cuts, self.cuts)):
                return False
            self.n_at_cuts = coding.n_learned
        if self.n_at_candidates is not None and clf.max_candidates is not None and \
                coding.n_learned - self.n_at_candidates >= \
                max(1, math.ceil(_CANDIDATE_GROWTH * self.n_at_candidates)):
            rows = coding.node_rows(self.cuts)
            chosen = self.candidates_on(clf, rows)
            if not _same_candidates(chosen, self.candidates):
                tables = self._tables(clf, rows, chosen)
                if len(rows) * tables.n_tables <= tuning.REBUILD_AT:
                    return False
                self.successor = Successor(tables, rows, chosen)
                self.successor_mark = coding.mark()  # the records after it are queued later
            self.n_at_candidates = coding.n_learned
        return True

    def learn_last(self, clf, k: int) -> None:
        """Count the ``k`` records stored since the state last counted (the coding's rows
        appended since its mark; ``k`` is checked against them)."""
        coding = clf.coding
        changes = coding.changes(self.mark, self.cuts)
        if changes is None or len(changes.evicted) or len(changes.appended) != k:
            raise RuntimeError(f"the stream state expected {k} new record(s) and no other "
                               f"change since it last counted")  # pragma: no cover - a bug
        self.mark = coding.mark()
        if k == 1:
            self.scores.add(changes.appended[0])
        elif k:
            self.scores.add_many(changes.appended)
        successor = getattr(self, "successor", None)  # None in pickles made before it
        if successor is not None:
            new = coding.changes(self.successor_mark, self.cuts).appended
            self.successor_mark = coding.mark()
            if successor.advance(new, k):  # the new tables are complete: they answer now
                self.scores, self.candidates = successor.scores, successor.candidates
                self.model = StreamingOrderModel(self.scores, self.model.prune_tol)
                self.successor = None

    def _with_class(self, codes: np.ndarray) -> np.ndarray:
        rows = np.hstack([codes, np.full((len(codes), 1), -1, dtype=np.int64)])
        return self.scores.uncounted_to_missing(rows)

    def encode_one(self, clf, x: dict) -> np.ndarray:
        """One record to predict as node codes (unseen values and the class: ``-1``)."""
        return self._with_class(clf.coding.encode_one(x, self.cuts))

    def encode_frame(self, clf, X) -> np.ndarray:
        """A pandas DataFrame to predict as node codes."""
        return self._with_class(clf.coding.encode_frame(X, self.cuts))

    def class_proba(self, rows, max_missing_configs) -> np.ndarray:
        """``P(class | row, D, order)`` over the class codes: ``(m, K)``."""
        weights = self.model.log_weights(self.order)
        return np.exp(self.model.class_log_proba(rows, [weights], self.scores.n - 1,
                                                 max_missing_configs))


def resolve_order(listed, names) -> np.ndarray:
    """Node indices of the order that lists ``listed`` first, then the other features in
    canonical order, then the class (``names[-1]``) if it is not listed."""
    unknown = [v for v in listed if v not in names]
    if unknown:
        raise ValueError(f"order names {unknown!r}, which are neither features seen in the "
                         f"training data nor the class {names[-1]!r}")
    listed = list(listed)
    rest = canonical_order(v for v in names[:-1] if v not in listed)
    if names[-1] not in listed:
        rest.append(names[-1])
    index = {v: k for k, v in enumerate(names)}
    return np.array([index[v] for v in listed + rest], dtype=np.int64)


def _same_candidates(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return all(np.array_equal(x, y) for x, y in zip(a, b))

