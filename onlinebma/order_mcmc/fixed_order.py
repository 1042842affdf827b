"""River/pandas classifiers over the order model: the shared shell and :class:`FixedOrderBMA`.

The nodes are the columns of the adapter's canonical table (features in its order, numeric
ones discretized) and the class, written ``class_name``; the averaging itself is
:class:`~onlinebma.order_mcmc.order_model.OrderModel` (see its module for eq. 9, the
missing-value summation and pruning).
"""

from __future__ import annotations

import numpy as np

from ..batch import BufferRefitClassifier, Table
from ..table import canonical_order
from ..validation import check_bool, check_int, check_real
from .order_model import OrderModel

__all__ = ["FixedOrderBMA", "OrderAveragingClassifier"]

class OrderAveragingClassifier(BufferRefitClassifier):
    """Shared River/pandas shell of :class:`FixedOrderBMA` and ``OrderMCMC``.

    Nodes are the features (the adapter's code columns) and the class, written
    ``class_name``. Subclasses choose the averaged orders in :meth:`_choose_orders`.
    """

    _discrete = True

    def _init_common(self, max_parents, alpha, class_name, max_missing_configs, prune_tol,
                     progress, window, refit_every, nominal_attributes):
        super().__init__(window=window, refit_every=refit_every,
                         nominal_attributes=nominal_attributes)
        check_int("max_parents", max_parents, 0)
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

    def _fit(self, data: Table) -> None:
        names = tuple(data.nominal_features)
        if self.class_name in names:
            raise ValueError(
                f"a feature is named {self.class_name!r}, the name of the class node "
                f"(class_name); rename the feature or pass another class_name")
        codes = np.hstack([data.codes, data.y[:, None]])
        model = OrderModel(codes, self.max_parents, self.alpha, self.prune_tol,
                           show_progress=self.progress,
                           cards=list(data.n_values) + [len(data.classes)])
        names = names + (self.class_name,)
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

    def _predict_proba(self, data: Table, rows: Table) -> np.ndarray:
        node_rows = np.hstack([rows.codes, np.full((rows.n, 1), -1)]).astype(np.int64)
        model = self._model
        return np.exp(model.class_log_proba(node_rows, self._weights, model.n - 1,
                                            self.max_missing_configs))


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
        See :class:`onlinebma.batch.BufferRefitClassifier`.

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
        rest = canonical_order(v for v in names[:-1] if v not in listed)
        if names[-1] not in listed:
            rest.append(names[-1])
        index = {v: k for k, v in enumerate(names)}
        order = np.array([index[v] for v in listed + rest])
        return [order], {"log_evidence_": model.log_evidence(order)}
