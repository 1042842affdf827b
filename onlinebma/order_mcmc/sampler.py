"""OrderMCMC: Bayesian model averaging over node orders sampled by the swap chain
(:mod:`~onlinebma.order_mcmc.chain`), batch and in a stream.
"""

from __future__ import annotations

import numpy as np

from ..growth import growth_threshold
from ..validation import check_int
from .chain import OrderChain, run_chain, run_chains_in_turn, split_rhat
from .fixed_order import DEFAULT_CANDIDATES, OrderAveragingClassifier
from .streaming import LiveState

__all__ = ["OrderChain", "OrderMCMC", "run_chain", "split_rhat"]

#: In a stream, refits (chain continuations) are at most this many records apart.
MAX_GAP = 10
#: Fitted attributes a stream computes when they are first read after a refit.
_EDGE_ATTRIBUTES = ("class_parent_proba_", "class_child_proba_", "markov_blanket_proba_")
#: Attributes that exist once the learner has been fitted (a clear error before).
_FITTED = _EDGE_ATTRIBUTES + ("orders_", "log_evidence_trace_", "log_evidence_traces_",
                              "rhat_", "acceptance_rate_")


class OrderMCMC(OrderAveragingClassifier):
    """Bayesian model averaging of Bayesian-network classifiers over sampled node orders.

    Hwang & Zhang (2005): orders are sampled from ``P(order | D)`` by Metropolis–Hastings with
    the swap move; ``n_orders`` of them, evenly spaced after burn-in, are each averaged exactly
    over all their consistent DAGs (:class:`~onlinebma.order_mcmc.FixedOrderBMA`), and the joint
    distributions are averaged over the orders before conditioning on the features (eq. 11).
    ``n_orders=1`` is the paper's single-order baseline.

    Parameters
    ----------
    max_parents : int, default 3
        Largest number of parents of a node.
    n_orders : int, default 10
        Number of orders kept after burn-in and averaged.
    burn_in : int, default 10000
        Iterations discarded before orders are kept.
    n_iter : int, default 60000
        Total iterations, burn-in included.
    seed : int or np.random.Generator or None, default None
        Seed of the chains (int, numpy Generator or None). With an int, chain ``c > 1`` of
        a fit gets the seed ``[seed, fit number, c - 1]``; with a Generator or None, chains
        ``c > 1`` get generators spawned from it.
    alpha : float, default 1.0
        K2 Dirichlet pseudo-count of every cell.
    class_name : str, default 'class'
        Name of the class node in ``orders_``; no feature may have this name.
    max_missing_configs : int, default 64
        Missing features at prediction time are summed out exactly while the number of their
        joint configurations is at most this (see :class:`~onlinebma.order_mcmc.FixedOrderBMA`).
    prune_tol : float, default 1e-12
        Prediction-time pruning of parent sets of negligible weight (0: none; see
        :class:`~onlinebma.order_mcmc.FixedOrderBMA`).
    iterations_per_record : int, default 10
        In a stream, each refit continues the chain by this many iterations per record learned
        since the last refit.
    progress : bool, default False
        Show the progress of the score tables and of the chain.
    window : int or None, default None
        Keep only the last ``window`` records, refitting from them (``None``: a stream, see
        Streams below); see :class:`onlinebma.batch.BufferRefitClassifier`.
    refit_every : int or None, default None
        Refit after this many new records. ``None``: the adapter's policy (once the store has
        grown by 10% since the last fit), in a stream at most :data:`MAX_GAP` records apart.
    nominal_attributes : list or None, default None
        Features to treat as nominal even when their values are numbers (numeric features are
        cut into intervals by the MDL rule).
    n_chains : int, default 1
        Independent chains run by a full chain run (``fit``, :meth:`run_full_chain`, a
        window's refits), each from its own random order, their kept orders pooled
        (``n_chains * n_orders`` orders averaged) and their agreement reported as
        ``rhat_``. Chain 1 is the chain of ``n_chains=1``; here they run one after another,
        on Dask (:func:`onlinebma.distributed.fit`) side by side. A stream's continuations
        continue chain 1.
    max_candidates : int or None, default 10
        Candidate parents per node: the class and the nodes with the largest K2 score gain
        as a parent next to the class (:mod:`~onlinebma.order_mcmc.candidates`; the class
        node: the largest gain as its only parent), ``max_candidates`` in all.
        Every order is averaged exactly over its DAGs whose parent sets lie within the
        candidates, and the chain's target is the posterior over orders in that space.
        Widen it for a larger space; ``None``: every node (tables of ``C(n - 1,
        max_parents)`` sets per node). See :class:`~onlinebma.order_mcmc.FixedOrderBMA`.
    numeric_attributes : list or None, default None
        Features that are numeric whatever their first value: a value of one that is not a
        number (a ``"?"`` for a missing value read as text) is refused, not made a category.

    Streams
    -------
    With ``window=None`` the family scores of every candidate set are kept up to date
    (:mod:`~onlinebma.order_mcmc.incremental`, exact; the records since the last refit
    are counted at the refit in one vectorised step, and the batch tables' score pruning
    is reapplied on the current scores), and a refit does not restart the chain: it
    continues from the current order for ``iterations_per_record`` iterations per new
    record. Every iteration is a Metropolis–Hastings step whose target is the posterior
    over orders of the records learned so far, so on a stationary stream (where that
    posterior settles) the chain's states follow it. The kept orders are the last
    ``n_orders`` states sampled every ``10 * iterations_per_record`` iterations (until
    there are any, the current state). Between refits, predictions use the state of the
    last refit, and a class seen since then gets the adapter's share for classes absent
    from the fitted data, ``(m_k + 1) / (n + K)``.
    ``fit`` (pandas) and :meth:`run_full_chain` run the full chain (``burn_in``,
    ``n_iter``) from the current order instead.

    Attributes
    ----------
    orders_
        The kept orders, each a tuple of node names (class written as ``class_name``).
    log_evidence_trace_
        ``log P(D | order)`` after every iteration of the last chain run of chain 1 (the full
        chain: length ``n_iter``; in a stream, the last continuation).
    log_evidence_traces_
        ``(n_chains, n_iter)``: the traces of every chain of the last full chain run.
    rhat_
        Split R-hat (:func:`split_rhat`) of the log-evidence traces of the last full chain
        run after burn-in: near 1 when the chains agree.
    acceptance_rate_
        Fraction of accepted swaps (mean over the chains of a full run).
    class_parent_proba_, class_child_proba_, markov_blanket_proba_
        ``{feature: probability}`` of the edges feature → class and class → feature, and of
        the feature being in the class's Markov blanket (parent, child or co-parent of a
        child), exact within each kept order and averaged over them.

    Examples
    --------
    >>> from onlinebma.order_mcmc import OrderMCMC
    >>> model = OrderMCMC(n_orders=2, burn_in=50, n_iter=150, seed=0)
    >>> data = [({"sky": "sun", "wind": "low"}, "play")] * 3 + \\
    ...        [({"sky": "rain", "wind": "high"}, "stay")] * 3
    >>> for x, y in data:
    ...     model.learn_one(x, y)
    >>> p = model.predict_proba_one({"sky": "sun", "wind": "low"})  # chain: 10 per record
    >>> round(p["play"], 3), len(model.log_evidence_trace_)
    (0.801, 60)
    >>> len(model.run_full_chain().orders_), len(model.log_evidence_trace_)
    (2, 150)
    """

    def __init__(self, max_parents: int = 3, n_orders: int = 10, burn_in: int = 10000,
                 n_iter: int = 60000, seed: int | np.random.Generator | None = None,
                 alpha: float = 1.0, class_name: str = "class",
                 max_missing_configs: int = 64, prune_tol: float = 1e-12,
                 iterations_per_record: int = 10, progress: bool = False,
                 window: int | None = None, refit_every: int | None = None,
                 nominal_attributes: list | None = None, n_chains: int = 1,
                 max_candidates: int | None = DEFAULT_CANDIDATES,
                 numeric_attributes: list | None = None):
        self._init_common(max_parents, alpha, class_name, max_missing_configs, prune_tol,
                          progress, window, refit_every, nominal_attributes, max_candidates,
                          numeric_attributes)
        check_int("n_orders", n_orders, 1)
        check_int("iterations_per_record", iterations_per_record, 1)
        check_int("n_iter", n_iter, 1)
        check_int("burn_in", burn_in, 0)
        check_int("n_chains", n_chains, 1)
        if n_iter - burn_in < n_orders:
            raise ValueError(
                f"n_iter ({n_iter}) counts the burn-in ({burn_in}); it must leave at least "
                f"n_orders ({n_orders}) iterations after burn-in")
        self.n_orders = n_orders
        self.burn_in = burn_in
        self.n_iter = n_iter
        self.n_chains = n_chains
        self.seed = seed
        self.iterations_per_record = iterations_per_record

    @classmethod
    def _unit_test_params(cls):
        # A short chain and max_parents=1 keep River's checks (hundreds of refits) fast.
        yield {"n_orders": 2, "burn_in": 20, "n_iter": 60, "seed": 42, "max_parents": 1}

    def _choose_orders(self, model, names):
        seed = self.seed
        if isinstance(seed, int) and not isinstance(seed, bool):
            seed = [seed, self.n_fits_]  # refits in a stream get their own, reproducible stream
        rng = np.random.default_rng(seed)
        results = self._run_chains(model, rng, rng.permutation(model.n))
        return [o for r in results for o in r[1]], self._chain_attributes(results)

    def _run_chains(self, model, rng, init_order) -> list:
        """The full chain run: chain 1 from ``rng`` and ``init_order``, the others from their
        own generators (``seed`` doc) and random orders; :func:`run_chain`'s results."""
        seed = self.seed
        if isinstance(seed, int) and not isinstance(seed, bool):
            rngs = [np.random.default_rng([seed, self.n_fits_, c])
                    for c in range(1, self.n_chains)]
        else:
            rngs = rng.spawn(self.n_chains - 1) if self.n_chains > 1 else []
        jobs = [(rng, init_order)] + [(g, g.permutation(model.n)) for g in rngs]
        runner = self.__dict__.get("_chain_runner") or run_chains_in_turn
        return runner(model, jobs, self.n_iter, self.burn_in, self.n_orders, self.progress)

    def _chain_attributes(self, results) -> dict:
        traces = np.vstack([r[0] for r in results])
        return {"log_evidence_trace_": results[0][0], "log_evidence_traces_": traces,
                "rhat_": split_rhat(traces[:, self.burn_in:]),
                "acceptance_rate_": float(np.mean([r[2] for r in results]))}

    # ------------------------------------------------------------- streaming

    def _reset_model(self):
        self._live = None
        self._chain = None  # (order as names, kept orders as names, iterations since a keep)
        self.__dict__.setdefault("_full_pending", False)  # fit(), run_full_chain(): full chain
        self._rng = None  # the chain's generator, made from ``seed`` at the first refit
        self._pending = 0  # records learned since the last refit, not counted yet

    def _after_learning(self, k: int):
        # Records are counted at the next refit, in one vectorised step (at most MAX_GAP).
        if self._streaming and self._live is not None:
            if self._live.current(self):
                self._pending += k
            else:
                self._live, self._pending = None, 0  # rebuilt at the next refit

    def fit(self, X, y):
        pending = self.__dict__.get("_full_pending", False)
        self._full_pending = True
        try:
            return super().fit(X, y)
        except BaseException:
            self._full_pending = pending  # a refused fit leaves the learner as it was
            raise

    def _live_listing(self) -> tuple:
        return (), False

    def _fit_counted(self, chain_runner) -> None:
        self._full_pending = True
        self._chain_runner = chain_runner
        try:
            self._refit()
        finally:
            del self._chain_runner
        self._size_at_fit = self._live.scores.n_records

    def run_full_chain(self):
        """Run the full chain (``burn_in``, ``n_iter``) on the records learned so far."""
        self._full_pending = True
        self._refit()
        return self

    def _refit_due(self) -> bool:
        if not self._streaming:
            return self._batch_refit_due()
        if self._live is None or self._chain is None:
            return True
        new = self._n_learned - self._n_learned_at_fit
        if self.refit_every is not None:
            return new >= self.refit_every
        return new >= min(MAX_GAP, growth_threshold(self._size_at_fit))

    def _refit(self):
        if not self._streaming:
            return self._batch_refit()
        if self._live is None:
            self._live = LiveState(self, (), restrict=False)
        elif self._pending:
            self._live.learn_last(self, self._pending)
        self._pending = 0
        live = self._live
        names = live.names
        index = {v: k for k, v in enumerate(names)}
        if self._rng is None:
            seed = self.seed
            if isinstance(seed, int) and not isinstance(seed, bool):
                seed = [seed, 0]  # as the first fit of the batch path
            self._rng = np.random.default_rng(seed)
        if self._chain is None:
            order = self._rng.permutation(len(names))  # as the batch chain starts
            kept, since = [], 0
        else:
            previous, kept, since = self._chain
            order = [index[v] for v in previous if v in index]
            order += [k for k in range(len(names)) if k not in order]  # new features last
            kept = [o for o in kept if set(o) == set(names)]
        live.model.prune()  # the batch tables' pruning, on the current scores
        if self._full_pending:
            results = self._run_chains(live.model, self._rng, np.array(order))
            _, _, _, final, self._rng = results[0]
            kept, since = [tuple(names[v] for v in o) for r in results for o in r[1]], 0
            for key, value in self._chain_attributes(results).items():
                setattr(self, key, value)
            trace, rate = self.log_evidence_trace_, self.acceptance_rate_
        else:
            chain = OrderChain(live.model, self._rng, init_order=np.array(order))
            new = max(1, self._n_learned - self._n_learned_at_fit)
            trace, kept, since = self._continue(chain, new * self.iterations_per_record,
                                                kept, since, names)
            final, rate = chain.order, chain.acceptance_rate
        orders = [np.array([index[v] for v in o]) for o in kept] or [np.array(final)]
        weights = [live.model.log_weights(o) for o in orders]
        self._chain = (tuple(names[v] for v in final), kept, since)
        self._model, self._weights, self._full_pending = live.model, weights, False
        self.orders_ = [tuple(names[v] for v in o) for o in orders]
        self.log_evidence_trace_ = trace
        self.acceptance_rate_ = rate
        self._edge_names = names
        for name in _EDGE_ATTRIBUTES:  # computed when read (__getattr__)
            self.__dict__.pop(name, None)
        self._n_learned_at_fit = self._n_learned
        self._size_at_fit = self.coding.n_stored
        self.n_fits_ += 1

    def _continue(self, chain, iterations, kept, since, names):
        """Continue ``chain``; keep a state every ``10 * iterations_per_record`` iterations."""
        thin = 10 * self.iterations_per_record
        traces = []
        while iterations:
            step = min(iterations, thin - since)
            trace, last = chain.run(step, step - 1, 1)
            traces.append(trace)
            iterations -= step
            since += step
            if since == thin:
                kept = (kept + [tuple(names[v] for v in last[0])])[-self.n_orders:]
                since = 0
        return np.concatenate(traces), kept, since

    def predict_proba_one(self, x: dict) -> dict:
        if not self._streaming:
            return super().predict_proba_one(x)
        if self._learned_nothing():
            return {}
        if self._refit_due():
            self._refit()
        rows = self._live.encode_one(self, x)
        return dict(zip(self.coding.classes, self._class_proba(rows)[0].tolist()))

    def predict_proba_many(self, X):
        if not self._streaming:
            return super().predict_proba_many(X)
        import pandas as pd

        if self._learned_nothing():
            return pd.DataFrame(index=X.index)
        if self._refit_due():
            self._refit()
        proba = self._class_proba(self._live.encode_frame(self, X))
        return self._proba_frame(proba, X.index)

    def __getattr__(self, name):
        # A stream's edge probabilities, from the last refit's orders, when first read.
        if name in _EDGE_ATTRIBUTES and self.__dict__.get("_weights") is not None \
                and self.__dict__.get("window", 0) is None:
            model, names = self._model, self._edge_names
            c = model.n - 1
            edges = np.mean([model.class_edge_proba(lw, c) for lw in self._weights], axis=0)
            for k, attr in enumerate(_EDGE_ATTRIBUTES):
                self.__dict__[attr] = dict(zip(names[:c], edges[k].tolist()))
            return self.__dict__[name]
        if name in _FITTED:
            raise self._not_fitted(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _class_proba(self, rows):
        """Over the class codes: a class not counted yet (learned since the last refit) gets the
        adapter's share for classes absent from the fitted data."""
        model = self._live.model
        proba = np.exp(model.class_log_proba(rows, self._weights, model.n - 1,
                                             self.max_missing_configs))
        return self.coding.expand_classes(self.coding.classes[:proba.shape[1]], proba)
