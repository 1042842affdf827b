"""The arithmetic of :class:`~onlinebma.tan.ModelAveragedTAN` on a table of pair counts.

:class:`TreeTerms` computes, from a :class:`~onlinebma.stats.pairs.PairCounts` layout and
one learner's table of counts (``K`` rows, in the layout's columns) in that learner's scaled
unit: the prior pseudo-counts (one joint Dirichlet of size ``ess``), the edge log weights
``l = log W`` (eq. of ``h`` in docs/tan.md), a record's class and single terms and its
``log Q_c(x)``, the predictions of a coded matrix and the edge posteriors, for one member's
table or for the stack of members with a member axis
(:class:`~onlinebma.tan.members.TreeMemberStack`, the state of
:class:`~onlinebma.tan.ModelAveragedTAN`).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import gammaln

from .. import tuning
from ..caching import BoundedCache
from ..stats.pairs import JOINT, PAIR_CLASS, PAIR_U, PAIR_V, VALUE, pair_id, pairs_of
from ..stats.spanning import edge_probabilities
from .record_sums import RecordTreeSums

__all__ = ["TreeTerms"]



class TreeTerms:
    """Prior, edge weights, record terms and tree sums of ``ModelAveragedTAN``'s model.

    Parameters
    ----------
    ess
        Equivalent sample size of the joint Dirichlet prior.
    forests
        Average over forests (else spanning trees).
    edge_prior
        Prior weight of each feature–feature edge (forests).

    The plans (per set of observed features) and the tree sums' bases are derived caches:
    a pickle keeps the parameters only.
    """

    def __init__(self, ess: float, forests: bool, edge_prior: float):
        self.ess = ess
        self.forests = forests
        self.edge_prior = edge_prior
        self._fresh()

    def _fresh(self) -> None:
        self.sums = RecordTreeSums(self.forests, math.log(self.edge_prior))
        self.plans = BoundedCache("TREE_PLAN_CELLS", weigh="cells")

    def __getstate__(self):
        return {"ess": self.ess, "forests": self.forests, "edge_prior": self.edge_prior}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._fresh()

    def plan(self, counts, codes, k: int):
        """``(pair ids, prior)`` of a set of observed features ``codes`` with ``k`` classes:
        the pair ids in triu order and the prior pseudo-count (per unit of counts) of every
        column of ``record_columns``; cached until a class, feature or value is added (then
        the tree sums' bases are dropped too)."""
        if self.plans.follow(counts.version):
            self.sums.clear()
        key = codes.tobytes()
        plan = self.plans.get(key)
        if plan is None:
            m = len(codes)
            i, j = np.triu_indices(m, 1)
            ac = self.ess / k
            r = counts.n_values[codes].astype(float)
            prior = np.concatenate([[ac], ac / r, np.full(m, ac), ac / (r[i] * r[j]),
                                    ac / r[i], ac / r[j], np.full(len(i), ac)])
            plan = self.plans.put(key, (pair_id(codes[i], codes[j]), prior))
        return plan

    def record(self, m: int, gathered, prior, unit, normalised: bool = True):
        """``(log θ_c + Σ_v log θ_{x_v|c}, log Q_c(x))`` of a record of ``m`` observed
        features from its gathered counts (``(..., K, L)``, the columns of
        ``record_columns``): the class and single terms, and ``log Q_c(x)_uv`` of its
        observed pairs (triu order) at posterior means from each pair table and its margins.
        ``prior``: the columns' pseudo-counts per unit (:meth:`plan`); ``unit``: the scaled
        unit of the counts, a float or an array ``(..., 1)`` (stacked members). Without
        ``normalised`` the class terms leave out their common ``log(ess + N)`` (for
        probabilities normalised over the classes anyway)."""
        if isinstance(unit, np.ndarray):
            prior = prior * unit[..., None]
        elif unit != 1.0:
            prior = prior * unit
        lg = np.log(prior + gathered)
        if not normalised:
            return self.log_terms(m, lg, None)
        total = gathered[..., 0].sum(axis=-1, keepdims=True)
        return self.log_terms(m, lg, np.log(self.ess * unit + total))

    @staticmethod
    def log_terms(m: int, lg, log_norm):
        """:meth:`record` from the logs ``lg`` of the gathered counts plus their prior and
        ``log_norm`` = log(ess + N) (per unit; ``None``: left out)."""
        p = m * (m - 1) // 2
        s = 1 + 2 * m
        # class count + value cells - feature margins, as one product
        base = lg[..., :s] @ _single_signs(m)
        if log_norm is not None:
            base = base - log_norm
        # joint + pair class count - the two pair margins, as one product
        log_q = np.matmul(_PAIR_SIGNS, lg[..., s:].reshape(*lg.shape[:-1], 4, p))
        return base, log_q

    def column_prior(self, counts, k: int) -> np.ndarray:
        """The prior pseudo-count (per unit of counts) of every column of ``counts``' layout
        with ``k`` classes: ess/K spread over the cells of the column's table (``a_c``,
        ``a_cu``, ``a_cuv``)."""
        r = counts.n_values.astype(float)
        roles, pairs = counts.column_roles_, counts.column_pairs_
        cells = np.ones(len(roles))
        cap = counts.capacity_
        owner = np.repeat(np.arange(len(cap)), cap + 1)  # the single columns' features
        single = slice(1, 1 + len(owner))
        cells[single] = np.where(roles[single] == VALUE, r[owner], 1.0)
        cols = np.flatnonzero(pairs >= 0)
        p, role = pairs[cols], roles[cols]
        u, v = pairs_of(counts.n_features)
        ru, rv = r[u[p]], r[v[p]]
        cells[cols] = np.select([role == JOINT, role == PAIR_U, role == PAIR_V],
                                [ru * rv, ru, rv], 1.0)
        return self.ess / (k * cells)

    def log_weights(self, counts, table, unit: float) -> np.ndarray:
        """``l = log W`` of every pair from a learner's ``table`` (``(K, columns)`` in
        ``counts``' layout, scaled ``unit``): ``h`` over each pair table and its margins of
        the counts in records (``table / unit``: a marginal likelihood, unlike a ratio of
        counts, changes with their scale), vectorised over all columns (spare cells count
        0)."""
        n_pairs = counts.n_pairs
        k = len(table)
        if not n_pairs or not k:
            return np.zeros(n_pairs)
        pairs, roles = counts.column_pairs_, counts.column_roles_
        cols = np.flatnonzero(pairs >= 0)
        p, role = pairs[cols], roles[cols]
        a = self.column_prior(counts, k)[cols]
        n = np.ascontiguousarray(table[:, cols])  # by row: the sum over classes below
        if unit != 1:  # adds row by row, whatever the layout of the counts
            n = n / unit
        h = (gammaln(a + n) - gammaln(a)).sum(axis=0)
        sign = np.where((role == JOINT) | (role == PAIR_CLASS), 1.0, -1.0)
        return np.bincount(p, weights=sign * h, minlength=n_pairs)

    def batch(self, counts, table, unit: float, l_all, codes, t: int) -> np.ndarray:
        """Joint log likelihoods ``(rows, K)`` of distinct coded rows (an int matrix, -1
        where missing) for a learner's ``table``, ``unit`` and edge weights ``l_all``, rows
        grouped by their observed features; ``t`` the learner's record count."""
        k = len(table)
        out = np.zeros((len(codes), k))
        # the logs of every count plus its prior, once for all rows
        log_counts = np.log(self.column_prior(counts, k) * unit + table)
        log_norm = np.log(self.ess * unit + table[:, 0].sum())
        present = codes >= 0
        patterns, which = np.unique(present, axis=0, return_inverse=True)
        which = which.ravel()
        for g, pattern in enumerate(patterns):
            members = np.flatnonzero(which == g)
            obs = np.flatnonzero(pattern)
            m = len(obs)
            ids = self.plan(counts, obs, k)[0]
            l_pairs = l_all[ids]
            key = obs.tobytes()
            if m >= 2:
                denominator = self.sums(key, m, l_pairs, np.zeros((1, len(ids))), t)
            step = max(1, tuning.TREE_BATCH_ENTRIES // (k * (m * m + 2 * len(ids) + 2 * m + 1)))
            for start in range(0, len(members), step):
                rows_g = members[start:start + step]
                columns = counts.record_columns(obs, codes[np.ix_(rows_g, obs)])
                lg = log_counts.take(columns, axis=1).transpose(1, 0, 2)  # (rows, K, L)
                base, log_q = self.log_terms(m, lg, log_norm)
                out[rows_g] = base
                if m >= 2:
                    out[rows_g] += self.sums(key, m, l_pairs, log_q, t) - denominator
        return out

    def edge_posteriors(self, counts, l_all, k: int) -> dict:
        """``{(u, v): P(edge u–v | data)}`` of every pair of features of ``counts`` from the
        edge weights ``l_all`` (shorter than the pairs: the missing ones are 0)."""
        n = counts.n_features
        n_pairs = counts.n_pairs
        if n_pairs == 0:
            return {}
        l_pairs = np.zeros(n_pairs)
        l_pairs[:len(l_all)] = l_all
        ids = self.plan(counts, np.arange(n), k)[0]
        w = self.sums.graphs(n, l_pairs[ids], np.zeros(n_pairs))
        p = edge_probabilities(w)[self.forests:, self.forests:]
        i, j = np.triu_indices(n, 1)
        p = p[i, j]
        names = counts.features_
        return {(names[a], names[b]): float(q) for a, b, q in zip(i, j, np.clip(p, 0.0, 1.0))}


_PAIR_SIGNS = np.array([1.0, -1.0, -1.0, 1.0])


@functools.lru_cache(maxsize=256)
def _single_signs(m: int) -> np.ndarray:
    """+1 for the class count and the ``m`` value cells, -1 for the ``m`` feature margins:
    the columns of ``record_columns`` before its pairs."""
    return np.concatenate([np.ones(1 + m), -np.ones(m)])
