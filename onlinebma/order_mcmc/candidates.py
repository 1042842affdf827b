"""Candidate parents: each node's parent sets restricted to a few nodes chosen from the data.

The score tables hold every parent set of at most ``max_parents`` nodes: ``C(n - 1, 3)``
sets per node, about 32,000 at 60 features, each with a count table. Order-MCMC at scale
restricts each node's parents to a *candidate set* chosen from the data and averages exactly
over the restricted space (Friedman & Koller 2003, Section 4.3; BiDAG, Kuipers, Suter & Moffa
2022, who start from a skeleton found by pairwise tests or scores and may widen it).

Here the skeleton is scored pairwise, *given the class*: the class is always a candidate
parent of every feature (a feature's dependence on the class is what a classifier needs,
and the class is a parent in every set the classifier most relies on), and the other
candidates of feature ``i`` are the ``k - 1`` nodes ``j`` with the largest gain of ``j`` as a
second parent next to the class::

    g(i, j) = log S(X_i; {j, c}) - log S(X_i; {c})

(the K2 family scores of :mod:`~onlinebma.order_mcmc.scores` on the records where ``X_i``
is observed, a missing parent value being one extra value; the conditional-independence
score of tree-augmented naive Bayes, Friedman, Geiger & Goldszmidt 1997, in its Bayesian
form). A feature that merely copies the class, or that the class already explains, gains
little; a feature that explains ``X_i`` beyond the class gains much. The class node's own
candidates are the ``k`` nodes with the largest marginal gain
``log S(X_c; {j}) - log S(X_c; {})``. Ties go to the lower node index. When one order is
averaged (:class:`~onlinebma.order_mcmc.FixedOrderBMA`) the candidates are chosen among the
node's predecessors only, so a node with at most ``k`` predecessors keeps all of them. (The
marginal gain for every node, :func:`pairwise_gains`, is what the choice was before; on
soybean it left 16.8 % error against 12.4 % for the full space, the gain given the class
12.4 %: ``docs/results/order-wide.md``.)

Widening
    ``max_candidates`` (the ``k`` of the learners) is the one knob: every set within ``k``
    candidates of ``k' >= k`` candidates is kept, so widening only adds parent sets (the
    ranking does not depend on ``k``). ``None`` (or ``k >= n - 1``) is the full space, and
    the results are then today's full tables exactly. BiDAG's automatic expansion (adding the
    parents of the sampled DAGs and rerunning) is not done here.

Within the candidate sets the averaging stays exact: every DAG of an order whose parent sets
lie within the candidates is counted with its full posterior weight (the prior of eq. 13 is
unchanged). With ``k >= n - 1`` every node is a candidate and the tables are today's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

__all__ = ["ClassPairCounts", "choose_candidates", "class_gains", "class_pair_counts",
           "pair_tables", "pairwise_gains"]


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
        others = np.delete(np.arange(n), i)
        r = max(1, int((alone > 0).sum()))
        out[i, others] = _family_scores(counts[others], alpha, r) - \
            _family_scores(alone[None, None], alpha, r)[0]
    return out


def _family_scores(counts, alpha, r, family=None, n_families=None) -> np.ndarray:
    """K2 log marginal likelihood (eq. 7, without the prior) of each family: ``counts``
    ``(families, configurations, values)``, or ``(configurations, values)`` with
    ``family[q]`` the family of configuration ``q``; ``r`` observed values. Only the
    non-zero counts enter, summed in the order of the table (padding-invariant)."""
    if family is None:
        n_families = counts.shape[0]
        family = np.repeat(np.arange(n_families), counts.shape[1])
        counts = counts.reshape(-1, counts.shape[2])
    q, _ = np.nonzero(counts)
    nz = counts[counts > 0].astype(np.float64)
    cell = np.bincount(family[q], weights=gammaln(alpha + nz) - gammaln(alpha),
                       minlength=n_families)
    per_config = counts.sum(axis=1)
    qc = np.flatnonzero(per_config)
    nzc = per_config[qc].astype(np.float64)
    ra = r * alpha
    return cell + np.bincount(family[qc], weights=gammaln(ra) - gammaln(ra + nzc),
                              minlength=n_families)


@dataclass
class ClassPairCounts:
    """Counts of every node under every other node and the class: ``tables[i]`` is
    ``(Q, r_c + 1, r_i)`` with ``tables[i][offsets[j] + d, e, v]`` the number of records with
    ``X_i = v`` observed, ``X_j`` at digit ``d`` and the class at digit ``e`` (codes, or
    ``cards[j]`` (``cards[c]``) when missing); ``offsets`` are the running sums of
    ``cards + 1``, so the tables grow with the total number of values, not with the largest.
    Counts of chunks of records with the same ``cards`` add up (``+``), so partitions can be
    counted apart (Dask)."""

    tables: list
    cards: np.ndarray
    class_node: int
    n_records: int

    def __add__(self, other: ClassPairCounts) -> ClassPairCounts:
        return ClassPairCounts([a + b for a, b in zip(self.tables, other.tables)], self.cards,
                               self.class_node, self.n_records + other.n_records)


def class_pair_counts(rows, class_node: int, cards=None) -> ClassPairCounts:
    """:class:`ClassPairCounts` of ``rows`` (``(m, n)`` codes, ``-1`` = missing); ``cards``
    (default: the largest code plus one) fixes the tables' shape, for counts to be added."""
    rows = np.asarray(rows, dtype=np.int64)
    m, n = rows.shape
    if cards is None:
        cards = rows.max(axis=0, initial=-1) + 1
    cards = np.maximum(np.asarray(cards, dtype=np.int64), 1)
    offsets = np.concatenate([[0], np.cumsum(cards + 1)])
    digits = np.where(rows >= 0, rows, cards) + offsets[:-1]  # missing: one extra value
    rc = int(cards[class_node]) + 1
    class_digit = np.where(rows[:, class_node] >= 0, rows[:, class_node], rc - 1)
    out = []
    for i in range(n):
        obs = rows[:, i] >= 0
        r = int(cards[i])
        cell = (digits[obs].T * rc + class_digit[obs][None]) * r + rows[obs, i][None]
        out.append(np.bincount(cell.ravel(), minlength=int(offsets[-1]) * rc * r)
                   .reshape(int(offsets[-1]), rc, r))
    return ClassPairCounts(out, cards, int(class_node), m)


def class_gains(counts: ClassPairCounts, alpha: float = 1.0) -> np.ndarray:
    """``(n, n)`` gains of the module docstring: ``log S(X_i; {j, c}) - log S(X_i; {c})``
    for a feature ``i``, the marginal gain for the class ``c``; ``-inf`` on the diagonal.
    Padding-invariant like :func:`pairwise_gains`.

    >>> rows = np.random.default_rng(0).integers(0, 2, (40, 4))
    >>> rows[:, 1] = rows[:, 0]
    >>> g = class_gains(class_pair_counts(rows, 3))
    >>> bool(g[0, 1] > g[0, 2])       # node 1 copies node 0, node 2 does not
    True
    """
    c = counts.class_node
    n = len(counts.tables)
    family = np.repeat(np.arange(n), counts.cards + 1)  # of each parent digit
    offsets = np.concatenate([[0], np.cumsum(counts.cards + 1)])
    out = np.full((n, n), -np.inf)
    for i, t in enumerate(counts.tables):
        alone = t[offsets[i]:offsets[i + 1]].sum(axis=(0, 1))  # X_i's value counts
        r = max(1, int((alone > 0).sum()))
        others = np.delete(np.arange(n), i)
        if i == c:  # X_c under each single parent
            scores = _family_scores(t.sum(axis=1), alpha, r, family, n)
            base = _family_scores(alone[None, None], alpha, r)[0]
        else:  # under each parent and the class; {c, c} is {c}
            scores = _family_scores(t.reshape(-1, t.shape[2]), alpha, r,
                                    np.repeat(family, t.shape[1]), n)
            base = scores[c]
        out[i, others] = scores[others] - base
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
        Counts of the records when ``rows`` are not at hand (``rows`` then gives the number
        of nodes only, e.g. an empty ``(0, n)`` array): :class:`ClassPairCounts` (gains
        given the class, as from records with a ``class_node``), or a list of
        :func:`pair_tables` (marginal gains, :func:`pairwise_gains`).

    Returns
    -------
    ``[array of candidate nodes of node i, sorted]`` per node.

    >>> rows = np.array([[0, 0, 1, 0], [1, 1, 1, 1], [1, 1, 0, 0], [0, 0, 0, 1]])
    >>> [c.tolist() for c in choose_candidates(rows, 1, class_node=3)]
    [[3], [3], [3], [0]]
    >>> [c.tolist() for c in choose_candidates(rows, 2, class_node=3)]
    [[1, 3], [0, 3], [0, 3], [0, 1]]
    >>> choose_candidates(rows, 3) is None
    True
    """
    rows = np.asarray(rows, dtype=np.int64)
    n = rows.shape[1]
    if k is None or (k >= n - 1 and order is None):
        return None
    pos = np.arange(n) if order is None else np.argsort(np.asarray(order, dtype=np.int64))
    if tables is None:
        tables = pair_tables(rows) if class_node is None else class_pair_counts(rows, class_node)
    gains = class_gains(tables, alpha) if isinstance(tables, ClassPairCounts) else \
        pairwise_gains(tables, alpha)
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
