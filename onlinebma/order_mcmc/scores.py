"""Parent-set score tables: every allowed family of every node scored once per fit.

A *node* is a feature or the class. Training data are integer codes ``0..r_i - 1`` of the
nodes (``-1`` = missing), the columns of the adapter's canonical table. For node ``i`` and a
candidate parent set ``Z`` (``|Z| <= max_parents``, any other nodes) the table holds
``log S(X_i; Z)``, the log of::

    rho(X_i | Z) * prod_j Gamma(r_i a) / Gamma(r_i a + N_ij) * prod_k Gamma(a + N_ijk) / Gamma(a)

with the K2 marginal likelihood (eq. 7 of Hwang & Zhang 2005, every ``alpha_ijk = a``) and the
structure prior of their eq. 13 read as ``rho(X_i | Z) = 1 / (n * C(n, |Z|))``, ``n`` the
number of nodes.

Missing training values
    Node ``i``'s family is scored on the records where ``X_i`` is observed; a missing value of
    a *parent* is counted as one extra parent value ("missing"). Every parent set of node ``i``
    is therefore scored on the same records, so the scores stay comparable (scoring each family
    on its complete records would reward parents that are often missing). With complete data
    this is the ordinary K2 score. The extra "missing" configuration is only used for scoring:
    predictions condition on real values.

Pruning
    Parent set ``Z`` is dropped when some proper subset ``Z' < Z`` has
    ``log S(Z') >= log S(Z) - log(prune_tol / N_i)``, ``N_i`` the number of candidate sets of
    node ``i``. A subset of ``Z`` is allowed by every order that allows ``Z``, so for any order the
    dropped sets together weigh at most ``prune_tol`` times the kept allowed sets: the
    relative error of every per-node sum (eq. 9) is at most ``prune_tol``.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
from scipy.special import gammaln

from .. import tuning
from ..progress import progress

__all__ = ["ScoreTables", "candidate_lists", "config_offsets", "family_index"]



def config_offsets(parents: np.ndarray, radix: np.ndarray) -> np.ndarray:
    """Start of each parent set's configurations when their tables are laid end to end."""
    q = np.prod(radix[parents], axis=1)
    return np.concatenate([[0], np.cumsum(q)]).astype(np.int64)


def family_index(columns: np.ndarray, child: int, parents: np.ndarray, radix: np.ndarray,
                 r_child: int, offsets: np.ndarray):
    """Configuration and cell of each record under each parent set, in flat end-to-end tables.

    ``columns`` are ``(n + 1, m)`` non-negative codes, one row per node (node-major, so that
    gathering a parent's codes reads contiguous memory), the last being the constant dummy
    node (0, radix 1) that pads parent sets to ``max_parents``; ``parents`` is ``(s, k)``;
    ``offsets[z]`` is where set ``z``'s configurations start (:func:`config_offsets`).
    Returns ``(config, cell)``, both ``(s, m)``: ``cell = config * r_child + child value``.
    """
    rad = radix[parents]                                      # (s, k)
    config = np.repeat(offsets[: len(parents), None], columns.shape[1], axis=1)
    stride = np.ones((len(parents), 1), dtype=np.int64)
    for j in range(parents.shape[1] - 1, -1, -1):             # last parent varies fastest
        config += columns[parents[:, j]] * stride
        stride = stride * rad[:, j, None]
    return config, config * r_child + columns[child]


class ScoreTables:
    """Scores of every allowed parent set of every node (see the module docstring).

    Parameters
    ----------
    codes
        ``(M, n)`` codes ``0..r_i - 1``, ``-1`` = missing.
    cards
        ``(n,)`` number of values ``r_i`` of each node.
    max_parents, alpha, prune_tol
        In-degree bound, K2 pseudo-count, pruning tolerance (0 keeps every set).
    candidates
        Candidate parents of each node (:mod:`~onlinebma.order_mcmc.candidates`): the sets
        are those within them; ``None`` (default): every other node.

    Attributes
    ----------
    parents
        ``parents[i]``: ``(s_i, max_parents)`` kept parent sets of node ``i``, padded with the
        dummy node ``n``; row 0 is the empty set.
    log_score
        ``log_score[i]``: ``(s_i,)`` ``log S(X_i; Z)`` of those sets.
    candidate_parents
        ``candidate_parents[i]``: sorted candidate parents of node ``i``.
    n_candidates, n_kept
        Number of candidate and kept sets over all nodes.

    >>> codes = np.array([[0, 0], [1, 1], [1, 1], [0, 0]])
    >>> t = ScoreTables(codes, np.array([2, 2]), max_parents=1)
    >>> t.parents[0].tolist()                      # {} and {node 1}; 2 is the dummy
    [[2], [1]]
    >>> bool(t.log_score[0][1] > t.log_score[0][0])  # the copy explains the data better
    True
    """

    def __init__(self, codes, cards, max_parents: int = 3, alpha: float = 1.0,
                 prune_tol: float = 1e-12, show_progress: bool = False, candidates=None):
        codes = np.asarray(codes, dtype=np.int64)
        self.n = n = codes.shape[1]
        self.cards = np.asarray(cards, dtype=np.int64)
        self.max_parents = k = max(0, min(int(max_parents), n - 1))
        self.alpha = float(alpha)
        self.codes = codes
        has_missing = (codes < 0).any(axis=0)
        # Parents: missing is one extra value; the dummy node n is constant 0 with radix 1.
        self.score_radix = np.append(self.cards + has_missing, 1)
        filled = np.where(codes < 0, self.cards, codes)
        self._parent_codes = np.vstack([filled.T, np.zeros((1, codes.shape[0]), np.int64)])
        self.parents, self.log_score = [], []
        self.n_candidates = self.n_kept = 0
        self.candidate_parents = candidate_lists(n, candidates)
        log_prior = -math.log(n) - np.array([math.log(math.comb(n, int(z))) for z in range(k + 1)])
        for i in progress(range(n), total=n, desc="score tables", enabled=show_progress):
            cand = self.candidate_parents[i]
            combos, sizes, subsets = _candidate_sets(len(cand), k)
            par = np.append(cand, n)[combos]  # the last index of combos: the dummy
            score = self._score_sets(i, par) + log_prior[sizes]  # eq. 13
            keep = _prune(score, sizes, subsets, prune_tol)
            self.parents.append(par[keep])
            self.log_score.append(score[keep])
            self.n_candidates += len(par)
            self.n_kept += int(keep.sum())

    def family_counts(self, i: int, parents: np.ndarray):
        """Flat ``N_ijk`` counts of node ``i`` under each parent set (training records).

        Returns ``(counts, offsets)``: set ``z``'s ``(q_z, r_i)`` table is
        ``counts[offsets[z] * r_i : offsets[z + 1] * r_i]``. Records with ``X_i`` missing are
        skipped; a missing parent is the extra value of its radix.
        """
        columns = self._parent_codes[:, self.codes[:, i] >= 0]
        r = int(self.cards[i])
        offsets = config_offsets(parents, self.score_radix)
        _, cell = family_index(columns, i, parents, self.score_radix, r, offsets)
        return np.bincount(cell.ravel(), minlength=int(offsets[-1]) * r), offsets

    def chunks(self, i: int, parents: np.ndarray, n_rows: int):
        """Slices of ``parents`` small enough to count or look up in one vectorised step."""
        cells = np.prod(self.score_radix[parents], axis=1) * int(self.cards[i])
        limit = tuning.SCORE_CHUNK_CELLS
        if cells.sum() <= limit and len(parents) * n_rows <= limit:
            yield slice(0, len(parents))
            return
        start = 0
        while start < len(parents):
            stop, budget = start + 1, cells[start]
            while (stop < len(parents) and budget + cells[stop] <= tuning.SCORE_CHUNK_CELLS
                   and (stop - start + 1) * n_rows <= tuning.SCORE_CHUNK_CELLS):
                budget += cells[stop]
                stop += 1
            yield slice(start, stop)
            start = stop

    def _score_sets(self, i, par):
        """K2 log marginal likelihood of node ``i`` under each parent set, in chunks.

        The same quantity as :func:`onlinebma.stats.dirichlet.log_dirichlet_marginal_np`
        (eq. 7), computed from integer counts with ``log Gamma`` tabulated once for
        ``0..M`` instead of evaluated per cell.
        """
        r = int(self.cards[i])
        m = int((self.codes[:, i] >= 0).sum())
        counts_0_m = np.arange(m + 1)
        lg_cell = gammaln(self.alpha + counts_0_m) - gammaln(self.alpha)
        lg_config = gammaln(r * self.alpha) - gammaln(r * self.alpha + counts_0_m)
        out = np.empty(len(par))
        for sl in self.chunks(i, par, max(1, m)):
            counts, offsets = self.family_counts(i, par[sl])
            counts = counts.reshape(-1, r)
            per_config = lg_cell[counts].sum(axis=1) + lg_config[counts.sum(axis=1)]
            out[sl] = np.add.reduceat(per_config, offsets[:-1])
        return out


def candidate_lists(n: int, candidates=None) -> list:
    """Sorted candidate parents of each of ``n`` nodes as int arrays; ``None``: all others.

    >>> [c.tolist() for c in candidate_lists(3)]
    [[1, 2], [0, 2], [0, 1]]
    """
    if candidates is None:
        return [np.delete(np.arange(n), i) for i in range(n)]
    if len(candidates) != n:
        raise ValueError(f"candidates must list the candidate parents of each of {n} nodes")
    out = []
    for i, cand in enumerate(candidates):
        cand = np.unique(np.asarray(cand, dtype=np.int64))
        if ((cand < 0) | (cand >= n) | (cand == i)).any():
            raise ValueError(f"candidate parents of node {i} must be other nodes 0..{n - 1}")
        out.append(cand)
    return out


@functools.lru_cache(maxsize=64)
def _candidate_sets(n_others: int, k: int):
    """All subsets of ``range(n_others)`` with at most ``k`` members, by size.

    Returns ``(combos, sizes, subsets)``: ``combos`` is ``(s, max(k, 1))`` padded with
    ``n_others`` (the dummy), ``sizes`` the set sizes and ``subsets`` ``(s, max(k, 1))`` the
    indices of each set's immediate subsets (one member removed; -1 pads).
    """
    sets = [c for size in range(k + 1) for c in itertools.combinations(range(n_others), size)]
    width = max(k, 1)
    combos = np.full((len(sets), width), n_others, dtype=np.int64)
    subsets = np.full((len(sets), width), -1, dtype=np.int64)
    index = {c: z for z, c in enumerate(sets)}
    for z, c in enumerate(sets):
        combos[z, :len(c)] = c
        for drop in range(len(c)):
            subsets[z, drop] = index[c[:drop] + c[drop + 1:]]
    sizes = np.array([len(c) for c in sets], dtype=np.int64)
    for a in (combos, subsets, sizes):
        a.setflags(write=False)
    return combos, sizes, subsets


def _prune(score, sizes, subsets, prune_tol):
    """Keep-mask: drop a set dominated by a proper subset (module docstring bound)."""
    keep = np.ones(len(score), dtype=bool)
    if prune_tol <= 0 or len(score) <= 1:
        return keep
    margin = math.log(prune_tol / len(score))
    best_below = np.full(len(score), -np.inf)  # best score over proper subsets
    for size in range(1, int(sizes.max()) + 1):  # subsets first, so chains are followed
        level = np.flatnonzero(sizes == size)
        sub = subsets[level, :size]
        best_below[level] = np.maximum(score[sub], best_below[sub]).max(axis=1)
    keep = score >= best_below + margin
    keep[0] = True
    return keep
