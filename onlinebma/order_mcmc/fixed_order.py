"""River/pandas classifiers over the order model: the shared shell and :class:`FixedOrderBMA`.

The nodes are the columns of the adapter's canonical table (features in its order, numeric
ones discretized) and the class, written ``class_name``; the averaging itself is
:class:`~onlinebma.order_mcmc.order_model.OrderModel` (see its module for eq. 9, the
missing-value summation and pruning).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .. import tuning
from ..batch import BufferRefitClassifier, Table
from ..reading import check_frame, uninterrupted
from ..validation import NotFittedError, check_bool, check_int, check_real
from .candidates import choose_candidates
from .distributed_counts import CountsPlan
from .order_model import OrderModel
from .streaming import LiveState, resolve_order

__all__ = ["FixedOrderBMA", "NotFittedError", "OrderAveragingClassifier"]

#: Default number of candidate parents per node (``max_candidates``).
DEFAULT_CANDIDATES = 10

#: Fitted attributes that the streaming FixedOrderBMA computes when they are read.
_LIVE_ATTRIBUTES = ("orders_", "log_evidence_", "class_parent_proba_", "class_child_proba_",
                    "markov_blanket_proba_")


class OrderAveragingClassifier(BufferRefitClassifier):
    """Shared River/pandas shell of :class:`FixedOrderBMA` and ``OrderMCMC``.

    Nodes are the features (the adapter's code columns) and the class, written
    ``class_name``. Subclasses choose the averaged orders in :meth:`_choose_orders`.
    """

    _discrete = True

    def _init_common(self, max_parents, alpha, class_name, max_missing_configs, prune_tol,
                     progress, window, refit_every, nominal_attributes, max_candidates,
                     numeric_attributes):
        super().__init__(window=window, refit_every=refit_every,
                         nominal_attributes=nominal_attributes,
                         numeric_attributes=numeric_attributes)
        check_int("max_parents", max_parents, 0)
        if max_candidates is not None:
            check_int("max_candidates", max_candidates, 1)
        check_real("alpha", alpha, 0.0, strict=True)
        check_int("max_missing_configs", max_missing_configs, 1)
        check_real("prune_tol", prune_tol, 0.0, strict=False, high=1.0, strict_high=True)
        check_bool("progress", progress)
        self.max_parents = max_parents
        self.alpha = alpha
        self.class_name = class_name
        self.max_missing_configs = max_missing_configs
        self.prune_tol = prune_tol
        self.progress = progress
        self.max_candidates = max_candidates

    def _refuse_class_key(self, keys):
        """A feature named like the class node is refused before anything changes."""
        if any(k == self.class_name for k in keys):
            raise ValueError(
                f"a feature is named {self.class_name!r}, the name of the class node "
                f"(class_name); rename the feature or pass another class_name")

    @property
    def _streaming(self) -> bool:
        """Without a window the learners keep a per-record state (:mod:`.streaming`)."""
        return self.window is None

    def _refuse_too_wide(self, keys):
        """A record that would make the score tables too large is refused up front."""
        coding = self.coding
        nodes = len(set(coding.nominal_features) | set(coding.numeric_features) | set(keys)) + 1
        if nodes - 1 > tuning.MAX_FEATURES:
            raise ValueError(
                f"{nodes - 1:,} features in all (those learned and the new ones) are more "
                f"than {type(self).__name__} takes (at most "
                f"{tuning.MAX_FEATURES:,}: every feature is a node of every averaged network); "
                f"select features first, or use a naive Bayes learner (onlinebma.naive_bayes), "
                f"which scales to wide records")
        k = nodes - 1 if self.max_candidates is None else min(self.max_candidates, nodes - 1)
        families = nodes * sum(math.comb(k, z) for z in range(min(self.max_parents, k) + 1))
        if families > tuning.MAX_FAMILIES:
            raise ValueError(
                f"{nodes - 1} features would need {families:,} parent sets in the score "
                f"tables (at most {tuning.MAX_FAMILIES:,}); lower max_candidates "
                f"({self.max_candidates!r}) or max_parents ({self.max_parents})")

    def learn_one(self, x: dict, y) -> None:
        if isinstance(x, dict):  # anything else is refused by the record reader below
            self._refuse_class_key(x)
            self._refuse_too_wide(x)
        super().learn_one(x, y)
        self._after_learning(1)

    def learn_many(self, X, y) -> None:
        check_frame(X)  # a DataFrame with distinct column names, before its columns are read
        self._refuse_class_key(X.columns)
        self._refuse_too_wide(X.columns)
        with uninterrupted():  # Ctrl-C waits for the records and the stream state's counts
            super().learn_many(X, y)
            if len(X):
                self._after_learning(len(X))

    def _after_learning(self, k: int) -> None:
        """Called after ``k`` records were stored (streaming subclasses count them)."""

    def _live_listing(self) -> tuple:
        """``(listed nodes, restrict)`` of the stream state (:class:`.streaming.LiveState`)."""
        raise NotImplementedError

    def _adopt_counts(self, scores, chain_runner=None) -> None:
        """Take the count tables ``scores`` of records counted elsewhere (on Dask,
        :mod:`onlinebma.order_mcmc.distributed_counts`), in the coding this learner has learned, as
        its stream state, and fit as ``fit`` does; the store keeps no record.
        ``chain_runner`` runs OrderMCMC's chains (default: one after another)."""
        self.coding.forget_records(scores.n_records)  # the coding learned, not the records
        self._live = LiveState.from_scores(self, self._live_listing()[0], scores)
        self._fit_counted(chain_runner)

    def _fit_counted(self, chain_runner) -> None:
        """The fit of :meth:`_adopt_counts` once the stream state is in place."""
        raise NotImplementedError

    def _learned_nothing(self) -> bool:
        """No record stored, and none counted elsewhere (a fit on Dask,
        :mod:`onlinebma.order_mcmc.distributed_counts`, keeps the counts, not the records)."""
        if self.coding.n_stored:
            return False
        live = self.__dict__.get("_live")
        return live is None or live.scores.n_records == 0

    def _fit(self, data: Table) -> None:
        names = tuple(data.nominal_features)
        if self.class_name in names:
            raise ValueError(
                f"a feature is named {self.class_name!r}, the name of the class node "
                f"(class_name); rename the feature or pass another class_name")
        codes = np.hstack([data.codes, data.y[:, None]])
        names = names + (self.class_name,)
        candidates = choose_candidates(codes, self.max_candidates, self.alpha, len(names) - 1,
                                       self._candidate_order(names))
        model = OrderModel(codes, self.max_parents, self.alpha, self.prune_tol,
                           show_progress=self.progress,
                           cards=list(data.n_values) + [len(data.classes)],
                           candidates=candidates)
        orders, extra = self._choose_orders(model, names)
        weights = [model.log_weights(o) for o in orders]
        c = len(names) - 1
        edges = np.mean([model.class_edge_proba(lw, c) for lw in weights], axis=0)
        # Everything computed: now change the estimator's state.
        self._model, self._weights = model, weights
        self.orders_ = [tuple(names[v] for v in o) for o in orders]
        self.class_parent_proba_ = dict(zip(names[:c], edges[0].tolist()))
        self.class_child_proba_ = dict(zip(names[:c], edges[1].tolist()))
        self.markov_blanket_proba_ = dict(zip(names[:c], edges[2].tolist()))
        for key, value in extra.items():
            setattr(self, key, value)

    def _choose_orders(self, model: OrderModel, names: tuple):  # pragma: no cover - abstract
        raise NotImplementedError

    def _candidate_order(self, names: tuple):
        """The order among whose predecessors candidates are chosen (``None``: any node)."""
        return None

    def _not_fitted(self, name: str) -> NotFittedError:
        return NotFittedError(f"{type(self).__name__} is not fitted yet: {name} exists once it "
                              f"has learned a record")

    def _predict_proba(self, data: Table, rows: Table) -> np.ndarray:
        node_rows = np.hstack([rows.codes, np.full((rows.n, 1), -1)]).astype(np.int64)
        model = self._model
        return np.exp(model.class_log_proba(node_rows, self._weights, model.n - 1,
                                            self.max_missing_configs))


    def adopt_counts(self, scores, chain_runner=None) -> None:
        """Fit from count tables of records counted elsewhere (on Dask,
        :mod:`onlinebma.order_mcmc.distributed_counts`) in the coding this learner has learned; the
        store keeps no record. ``chain_runner`` runs OrderMCMC's chains (default: one after
        another)."""
        self._adopt_counts(scores, chain_runner)

    def distributed_plan(self):
        """How :func:`onlinebma.distributed.fit` trains this learner on Dask: from count
        tables summed over the partitions
        (:class:`~onlinebma.order_mcmc.distributed_counts.CountsPlan`) when it has learned
        nothing and keeps every record; otherwise the adapter's exact merge."""
        if self._n_learned or self.window is not None:
            return super().distributed_plan()
        return CountsPlan(self, self._live_listing())

class FixedOrderBMA(OrderAveragingClassifier):
    """Exact Bayesian model averaging over every DAG consistent with one node order.

    Dash & Cooper (2004)'s fixed-order averaging (eq. 6-9 of Hwang & Zhang 2005): every
    network whose nodes follow ``order`` and have at most ``max_parents`` parents, weighted
    by its posterior (K2 marginal likelihood, structure prior of eq. 13); the class is a node
    like the features and may have parents and children.

    It learns exactly, record by record (``window=None``, the default): the family scores of
    the order and their counts are updated in place by each record
    (:mod:`~onlinebma.order_mcmc.incremental`), so after ``n`` records the model is the batch
    fit on those ``n`` records — no refits, no stalls. Numeric features are discretized on
    the stored records and re-cut by the adapter's growth policy (the counts are rebuilt
    when the cut points move), and a feature first seen mid-stream rebuilds the counts from
    the stored records. With a ``window`` the model is refitted on the window by the adapter's
    refit policy instead.

    Parameters
    ----------
    order : Sequence or None, default None
        Node names, the class written as ``class_name`` (a sequence, not a string). Features
        not listed are appended after the listed nodes in canonical order (sorted by name),
        the class last if not listed. ``None`` (default): the class first, then every feature.
        A listed name that is neither a feature nor ``class_name`` is an error at prediction.
    max_parents : int, default 3
        Largest number of parents of a node.
    alpha : float, default 1.0
        K2 Dirichlet pseudo-count of every cell.
    class_name : str, default 'class'
        Name of the class node in ``order``; a record with a feature of this name is refused.
    max_missing_configs : int, default 64
        Missing features at prediction time are summed out exactly while the number of their
        joint configurations is at most this; beyond it, see
        :mod:`~onlinebma.order_mcmc.order_model`.
    prune_tol : float, default 1e-12
        Prediction-time pruning of parent sets of negligible weight (0: none); the scores
        themselves are never pruned in a stream, since a set may gain weight later.
    progress : bool, default False
        Show progress while building the score tables (window mode).
    window : int or None, default None
        Keep only the last ``window`` records, refitting from them (``None``: keep all and
        keep the scores up to date record by record); see
        :class:`onlinebma.batch.BufferRefitClassifier`.
    refit_every : int or None, default None
        With a window, refit after this many new records (``None``: once the store has grown
        by 10% since the last fit); without one it is not used.
    nominal_attributes : list or None, default None
        Features to treat as nominal even when their values are numbers (numeric features are
        cut into intervals by the MDL rule).
    max_candidates : int or None, default 10
        Candidate parents per node (:mod:`~onlinebma.order_mcmc.candidates`): each node's
        parents are chosen among at most this many of its predecessors: the class and the
        nodes with the largest K2 gain as a parent next to the class, and the averaging is
        exact over the DAGs of the order whose parent sets lie within the candidates. Widen
        it for a larger space; ``None``: every predecessor (the full space, whose tables grow
        as ``C(n, max_parents)``). A node with at most this many predecessors keeps all of
        them. In a stream the candidates are chosen again each time the records double
        (:class:`~onlinebma.order_mcmc.streaming.LiveState`); a record that would make the
        tables hold more than :data:`~onlinebma.tuning.MAX_FAMILIES` parent sets, or more than
        :data:`~onlinebma.tuning.MAX_FEATURES` features in all, is refused.
    numeric_attributes : list or None, default None
        Features that are numeric whatever their first value: a value of one that is not a
        number (a ``"?"`` for a missing value read as text) is refused, not made a category.

    Attributes
    ----------
    orders_
        ``[order]``: the averaged order as a tuple of names.
    log_evidence_
        ``log P(D | order)``.
    class_parent_proba_, class_child_proba_, markov_blanket_proba_
        ``{feature: posterior probability}`` of the edges feature → class and class → feature,
        and of the feature being in the class's Markov blanket.

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

    def __init__(self, order: Sequence | None = None, max_parents: int = 3, alpha: float = 1.0,
                 class_name: str = "class", max_missing_configs: int = 64, prune_tol: float = 1e-12,
                 progress: bool = False, window: int | None = None,
                 refit_every: int | None = None, nominal_attributes: list | None = None,
                 max_candidates: int | None = DEFAULT_CANDIDATES,
                 numeric_attributes: list | None = None):
        self._init_common(max_parents, alpha, class_name, max_missing_configs, prune_tol,
                          progress, window, refit_every, nominal_attributes, max_candidates,
                          numeric_attributes)
        if isinstance(order, (str, bytes)):
            raise TypeError(f"order must be a sequence of node names, such as "
                            f"({class_name!r}, 'feature'), not the string {order!r}")
        if order is not None:
            order = tuple(order)
            if len(set(order)) != len(order):
                raise ValueError(f"order lists a node twice: {order!r}")
        self.order = order
        self._live = None

    @property
    def _listed(self) -> tuple:
        """The listed nodes: ``order``, or the class alone (first) by default."""
        return (self.class_name,) if self.order is None else self.order

    @classmethod
    def _unit_test_params(cls):
        # max_parents=1 keeps River's checks fast; the defaults are checked in a slow test.
        yield {"max_parents": 1}

    def _choose_orders(self, model, names):
        order = resolve_order(self._listed, names)
        return [order], {"log_evidence_": model.log_evidence(order)}

    def _candidate_order(self, names):
        return resolve_order(self._listed, names)

    # ------------------------------------------------------------- streaming

    def _after_learning(self, k: int):
        live = self._live
        if not self._streaming or live is None:
            return
        if live.current(self):
            live.learn_last(self, k)
        else:
            self._live = None  # rebuilt from the stored records at the next prediction

    def _reset_model(self):
        self._live = None

    def _refit(self):
        if not self._streaming:
            return self._batch_refit()
        self._live = None
        self._live_state()
        self.n_fits_ += 1

    def _live_state(self) -> LiveState:
        if self._live is None:
            self._live = LiveState(self, self._listed)
        return self._live

    def _live_listing(self) -> tuple:
        return self._listed, True

    def _fit_counted(self, chain_runner) -> None:
        self.n_fits_ += 1

    def predict_proba_one(self, x: dict) -> dict:
        if not self._streaming:
            return super().predict_proba_one(x)
        if self._learned_nothing():
            return {}
        live = self._live_state()
        proba = live.class_proba(live.encode_one(self, x), self.max_missing_configs)[0]
        return dict(zip(self.coding.classes, proba.tolist()))

    def predict_proba_many(self, X):
        if not self._streaming:
            return super().predict_proba_many(X)
        import pandas as pd

        if self._learned_nothing():
            return pd.DataFrame(index=X.index)
        live = self._live_state()
        proba = live.class_proba(live.encode_frame(self, X), self.max_missing_configs)
        return self._proba_frame(proba, X.index)

    def __getattr__(self, name):
        # The fitted attributes of a stream, from the current state (window mode sets them).
        if name in _LIVE_ATTRIBUTES and self.__dict__.get("window", 0) is None \
                and self.__dict__.get("_coding") is not None and not self._learned_nothing():
            live = self._live_state()
            model, order = live.model, live.order
            if name == "orders_":
                return [tuple(live.names[v] for v in order)]
            if name == "log_evidence_":
                return model.log_evidence(order)
            c = len(live.names) - 1
            edges = model.class_edge_proba(model.log_weights(order), c)
            row = {"class_parent_proba_": 0, "class_child_proba_": 1}.get(name, 2)
            return dict(zip(live.names[:c], edges[row].tolist()))
        if name in _LIVE_ATTRIBUTES:
            raise self._not_fitted(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
