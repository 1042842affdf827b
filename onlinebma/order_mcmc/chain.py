"""Metropolis–Hastings over node orders with the swap move (Hwang & Zhang 2005, Fig. 2, eq. 12).

The chain's target is ``P(order | D) ∝ prod_i sum_{Z allowed} S(X_i; Z)`` (uniform prior over
orders; eq. 9's denominator). A move swaps the nodes at two distinct positions drawn uniformly;
the proposal is symmetric, so a move is accepted with probability
``min(1, P(new | D) / P(current | D))`` (eq. 12).

Speed: only the nodes at and between the two swapped positions change their predecessor sets,
and of those between, only the nodes with one of the two swapped nodes among their candidate
parents change their per-node sums; only these are looked up. The predecessor sets are kept
as bitmasks of every prefix of the order (updated by the swap), and every per-node sum is
cached by (node, predecessors within its candidate parents) — a chain that has settled
revisits the same states over and over.
"""

from __future__ import annotations

import math

import numpy as np

from ..caching import BoundedCache
from ..progress import progress
from .order_model import OrderModel

__all__ = ["OrderChain", "run_chain", "run_chains_in_turn", "split_rhat"]



class OrderChain:
    """The Markov chain over orders of one :class:`OrderModel` (array level).

    Parameters
    ----------
    model
        Score tables of the training data.
    seed
        Seed or numpy Generator (``None``: fresh entropy).
    init_order
        The chain's first order, a permutation of the node indices (``None``: a random one).

    Examples
    --------
    >>> import numpy as np
    >>> from onlinebma.order_mcmc import OrderModel
    >>> codes = np.random.default_rng(0).integers(0, 2, (30, 4))
    >>> chain = OrderChain(OrderModel(codes), seed=1)
    >>> trace, kept = chain.run(n_iter=200, burn_in=100, n_keep=2)
    >>> len(trace), len(kept), 0.0 <= chain.acceptance_rate <= 1.0
    (200, 2, True)
    """

    def __init__(self, model: OrderModel, seed: int | np.random.Generator | None = None,
                 init_order: np.ndarray | None = None):
        self.model = model
        self.rng = np.random.default_rng(seed)
        n = model.n
        order = self.rng.permutation(n) if init_order is None else np.asarray(init_order)
        self.pos = model.positions(order)
        self.order = order.astype(np.int64).tolist()
        self._sums = BoundedCache("CHAIN_SUMS")  # (node, predecessors) -> per-node sum
        # Node v's candidate parents as a bitmask over all nodes: its per-node sum depends on
        # the predecessors within it only (the key of the cache).
        self._candidates = [sum(1 << int(u) for u in c) for c in model.tables.candidate_parents]
        self._prefix = [0] * (n + 1)  # _prefix[p]: bitmask of the nodes before position p
        for p, v in enumerate(self.order):
            self._prefix[p + 1] = self._prefix[p] | (1 << v)
        self.node_score = [self._node(v, self._prefix[p]) for p, v in enumerate(self.order)]
        self.log_evidence = math.fsum(self.node_score)
        self.n_accepted = 0
        self.n_proposed = 0

    @property
    def acceptance_rate(self) -> float:
        return self.n_accepted / self.n_proposed if self.n_proposed else math.nan

    def _node(self, v: int, mask: int) -> float:
        """Cached per-node sum ``log sum_{Z ⊆ predecessors} S(X_v; Z)`` (eq. 9)."""
        key = (v, mask & self._candidates[v])  # only the candidates matter
        hit = self._sums.get(key)
        if hit is None:
            hit = self._sums.put(key, self.model.node_log_evidence_mask(v, key[1]))
        return hit

    def step(self, a: int, b: int, log_u: float) -> bool:
        """Propose swapping positions ``a < b``; accept if ``log_u`` < the log ratio (eq. 12).

        Between the two positions a node's predecessors lose ``order[a]`` and gain
        ``order[b]``; a node with neither among its candidates keeps its per-node sum (its
        term of the ratio is zero and is skipped).
        """
        order, prefix, scores = self.order, self._prefix, self.node_score
        u, w = order[a], order[b]
        flip = (1 << u) | (1 << w)
        changed = [(a, self._node(w, prefix[a]))]
        for p in range(a + 1, b):
            v = order[p]
            if self._candidates[v] & flip:
                changed.append((p, self._node(v, prefix[p] ^ flip)))
        changed.append((b, self._node(u, prefix[b] ^ flip)))
        delta = 0.0
        for p, s in changed:
            delta += s - scores[p]
        self.n_proposed += 1
        if log_u < delta:
            order[a], order[b] = w, u
            for p in range(a + 1, b + 1):
                prefix[p] ^= flip
            for p, s in changed:
                scores[p] = s
            self.log_evidence = math.fsum(scores)
            self.n_accepted += 1
            return True
        return False

    def run(self, n_iter: int, burn_in: int, n_keep: int, show_progress: bool = False):
        """Run ``n_iter`` iterations (burn-in included); keep ``n_keep`` evenly spaced orders.

        Kept orders are the states after iterations ``burn_in + k * step`` (``k = 1..n_keep``,
        ``step = (n_iter - burn_in) // n_keep``), 1-based. Returns the trace of
        ``log P(D | order)`` after every iteration and the kept orders (node-index arrays).
        """
        n = self.model.n
        keep_at = {burn_in + k * ((n_iter - burn_in) // n_keep) for k in range(1, n_keep + 1)}
        trace = np.empty(n_iter)
        kept = []
        block = 1000
        for start in progress(range(0, n_iter, block), total=-(-n_iter // block),
                              desc="order MCMC (x1000 it)", enabled=show_progress):
            size = min(block, n_iter - start)
            if n >= 2:
                first = self.rng.integers(0, n, size)
                second = self.rng.integers(0, n - 1, size)
                second = np.where(second >= first, second + 1, second)  # distinct positions
                log_u = np.log(self.rng.random(size))
            for k in range(size):
                if n >= 2:
                    a, b = int(first[k]), int(second[k])
                    self.step(min(a, b), max(a, b), float(log_u[k]))
                trace[start + k] = self.log_evidence
                if start + k + 1 in keep_at:
                    kept.append(np.array(self.order))
        return trace, kept


def run_chain(model: OrderModel, rng, init_order, n_iter: int, burn_in: int, n_orders: int,
              show_progress: bool = False) -> tuple:
    """One chain of :meth:`OrderChain.run` from ``init_order`` with generator ``rng``:
    ``(trace, kept orders, acceptance rate, final order, rng)`` (the generator after the run,
    for a chain that continues; a copy of it when the chain ran in another process)."""
    chain = OrderChain(model, rng, init_order=init_order)
    trace, kept = chain.run(n_iter, burn_in, n_orders, show_progress)
    return trace, kept, chain.acceptance_rate, chain.order, chain.rng


def run_chains_in_turn(model, jobs, n_iter, burn_in, n_orders, show_progress=False) -> list:
    """:func:`run_chain` of every ``(rng, init_order)`` of ``jobs``, one after another."""
    return [run_chain(model, rng, order, n_iter, burn_in, n_orders, show_progress)
            for rng, order in jobs]


def split_rhat(traces) -> float:
    """Split R-hat (Gelman et al., *Bayesian Data Analysis*, 3rd ed., §11.4) of traces
    ``(chains, iterations)`` (after burn-in): every chain is cut in two halves (its first
    value dropped when the length is odd), and with ``m`` halves of ``n`` values,
    ``W`` the mean of their variances and ``B / n`` the variance of their means,
    ``R = sqrt(((n - 1) / n W + B / n) / W)``. Near 1 when the chains agree with each other
    and with themselves; ``nan`` with fewer than 2 values per half; 1 when every value is the
    same, ``inf`` when the halves are constant but differ.

    >>> split_rhat(np.array([[1.0, 2.0, 1.0, 2.0], [2.0, 1.0, 2.0, 1.0]]))  # agree
    0.7071067811865476
    >>> round(split_rhat(np.array([[1.0, 2.0, 1.0, 2.0], [5.0, 6.0, 5.0, 6.0]])), 4)  # do not
    3.3417
    """
    traces = np.atleast_2d(np.asarray(traces, dtype=float))
    n = traces.shape[1] // 2
    if n < 2:
        return math.nan
    halves = np.vstack([traces[:, traces.shape[1] - 2 * n:][:, :n], traces[:, -n:]])
    means = halves.mean(axis=1)
    within = halves.var(axis=1, ddof=1).mean()
    between = n * means.var(ddof=1)
    if within == 0:
        return 1.0 if between == 0 else math.inf
    return float(math.sqrt(((n - 1) / n * within + between / n) / within))
