"""Candidate parents: each node's parent sets restricted to a few nodes chosen from the data.

The score tables hold every parent set of at most ``max_parents`` nodes: ``C(n - 1, 3)``
sets per node, about 32,000 at 60 features, each with a count table. Order-MCMC at scale
restricts each node's parents to a *candidate set* chosen from the data and averages exactly
over the restricted space (Friedman & Koller 2003, Section 4.3; BiDAG, Kuipers, Suter & Moffa
2022, who start from a skeleton and may widen it). Here the candidates of node ``i`` are the
``k`` nodes ``j`` with the largest pairwise K2 score gain::

    g(i, j) = log S(X_i; {j}) - log S(X_i; {})

(the family scores of :mod:`~onlinebma.order_mcmc.scores` for one parent, on the records
where ``X_i`` is observed, a missing parent value being one extra value), ties broken by the
lower node index. The class node is always a candidate parent of every feature (a feature's
dependence on the class is what a classifier needs), and when one order is averaged
(:class:`~onlinebma.order_mcmc.FixedOrderBMA`) the candidates are chosen among the node's
predecessors only, so a node with at most ``k`` predecessors keeps all of them.

Within the candidate sets the averaging stays exact: every DAG of an order whose parent sets
lie within the candidates is counted with its full posterior weight (the prior of eq. 13 is
unchanged). With ``k >= n - 1`` every node is a candidate and the tables are today's.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

__all__ = ["choose_candidates", "pair_tables", "pairwise_gains"]


def pair_tables(rows) -> list:
    """Counts of every node under every single parent: ``tables[i][j, d, v]`` is the number
    of records with ``X_i = v`` observed and parent ``X_j`` at digit ``d`` (its code, or one
    more than its largest code when missing); ``tables[i][i]`` sums to ``X_i``'s value
    counts over its first axis. ``rows`` are ``(m, n)`` codes, ``-1`` = missing.
    """
    rows = np.asarray(rows, dtype=np.int64)
    m, n = rows.shape
    cards = np.maximum(rows.max(axis=0, initial=-1) + 1, 1)
    digits = np.where(rows >= 0, rows, cards)  # missing: one extra parent value
    radix = int(cards.max()) + 1
    out = []
    for i in range(n):
        obs = rows[:, i] >= 0
        r = int(cards[i])
        cell = (np.arange(n)[:, None] * (radix * r) + digits[obs].T * r + rows[obs, i][None])
        out.append(np.bincount(cell.ravel(), minlength=n * radix * r).reshape(n, radix, r))
    return out


def pairwise_gains(tables, alpha: float = 1.0) -> np.ndarray:
    """``(n, n)``: ``g[i, j] = log S(X_i; {j}) - log S(X_i; {})`` (module docstring) from
    :func:`pair_tables` (or tables of the same meaning padded with zeros), ``-inf`` on the
    diagonal. Only non-zero counts enter, summed one after another in the order of the
    table, so tables padded differently give the same floats.

    >>> rows = np.array([[0, 0, 1], [1, 1, 1], [1, 1, 0], [0, 0, 0]])
    >>> g = pairwise_gains(pair_tables(rows))
    >>> bool(g[0, 1] > g[0, 2])       # node 1 copies node 0, node 2 does not
    True
    """
    n = len(tables)
    out = np.full((n, n), -np.inf)
    for i, counts in enumerate(tables):
        counts = np.asarray(counts)
        alone = counts[i].sum(axis=0)  # X_i's value counts (row i: X_i under itself)
        counts = np.delete(counts, i, axis=0)
        others = np.delete(np.arange(n), i)
        r = max(1, int((alone > 0).sum()))
        ra = r * alpha
        j, _, _ = np.nonzero(counts)
        nz = counts[counts > 0].astype(np.float64)
        cell = np.bincount(j, weights=gammaln(alpha + nz) - gammaln(alpha), minlength=n - 1)
        per_config = counts.sum(axis=2)
        jc, _ = np.nonzero(per_config)
        nzc = per_config[per_config > 0].astype(np.float64)
        config = np.bincount(jc, weights=gammaln(ra) - gammaln(ra + nzc), minlength=n - 1)
        nza = alone[alone > 0].astype(np.float64)
        base = np.add.reduce(gammaln(alpha + nza) - gammaln(alpha)) + \
            (gammaln(ra) - gammaln(ra + nza.sum()) if len(nza) else 0.0)
        out[i, others] = cell + config - base
    return out


def choose_candidates(rows, k: int | None, alpha: float = 1.0, class_node: int | None = None,
                      order=None, tables=None) -> list | None:
    """Candidate parents of every node (module docstring), or ``None`` when every node is a
    candidate of every other (``k`` is ``None`` or at least ``n - 1``).

    Parameters
    ----------
    rows
        ``(m, n)`` node codes, ``-1`` = missing.
    k
        Number of candidates per node (``None``: all nodes).
    class_node
        Always a candidate parent of every other node (if ``order`` allows it).
    order
        When given, the candidates of a node are chosen among its predecessors.
    tables
        :func:`pair_tables` of the records, when ``rows`` are not at hand (``rows`` then
        gives the number of nodes only, e.g. an empty ``(0, n)`` array).

    Returns
    -------
    ``[array of candidate nodes of node i, sorted]`` per node.

    >>> rows = np.array([[0, 0, 1, 0], [1, 1, 1, 1], [1, 1, 0, 0], [0, 0, 0, 1]])
    >>> [c.tolist() for c in choose_candidates(rows, 1, class_node=3)]
    [[3], [3], [3], [0]]
    >>> choose_candidates(rows, 3) is None
    True
    """
    rows = np.asarray(rows, dtype=np.int64)
    n = rows.shape[1]
    if k is None or (k >= n - 1 and order is None):
        return None
    pos = np.arange(n) if order is None else np.argsort(np.asarray(order, dtype=np.int64))
    gains = pairwise_gains(pair_tables(rows) if tables is None else tables, alpha)
    out = []
    for i in range(n):
        pool = np.flatnonzero(pos < pos[i]) if order is not None else \
            np.delete(np.arange(n), i)
        if len(pool) <= k:
            out.append(pool)
            continue
        forced = [class_node] if class_node is not None and class_node != i and \
            class_node in pool else []
        rest = pool[pool != class_node] if forced else pool
        ranked = rest[np.lexsort((rest, -gains[i, rest]))]  # gain desc, then index
        out.append(np.sort(np.concatenate([forced, ranked[:k - len(forced)]]).astype(np.int64)))
    if order is not None and all(len(c) == pos[i] for i, c in enumerate(out)):
        return None  # every predecessor is a candidate: the unrestricted tables
    return out
