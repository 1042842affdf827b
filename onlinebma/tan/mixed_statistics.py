"""Per-class statistics of nominal and numeric features for the mixed forest average.

:class:`MixedStatistics` holds what the exact average over forest- and tree-augmented
structures of mixed features (:mod:`onlinebma.stats.mixed_forests`, the maths) needs, per
class:

- the nominal features' pair counts (:class:`~onlinebma.stats.pairs.PairCounts`), scored by
  :class:`~onlinebma.tan.tree_terms.TreeTerms`, the code of
  :class:`~onlinebma.tan.ModelAveragedTAN`;
- the numeric features' pairwise Normal–Wishart statistics
  (:class:`~onlinebma.stats.normal_wishart.PairStatistics`, batch axis: class);
- each numeric feature's moments per class, nominal feature and value
  (:class:`~onlinebma.stats.normal_wishart.MomentStatistics`, batch axes ``(class, nominal
  feature, value)``, values padded to the largest domain), the family of a numeric child of
  a nominal parent.

From them it computes the directed edge log weights ``l`` in closed form
(:meth:`MixedStatistics.log_weights`) and a record's naive-Bayes part and ``log Q_c(x)``
(:meth:`MixedStatistics.record_terms`).

Features are ordered nominal first (``0 .. A-1``, values coded ``0 .. r-1``, every value
declared up front so the Dirichlet margins do not change), then numeric (``A .. A+D-1``).

Missing values (nominal code -1, numeric NaN) have the meaning of docs/tan.md (*Missing
values*): every pair's statistics count the records where both features are observed, every
single's those where it is observed, and an edge ``u -> v`` weighs ``v``'s family given ``u``
against ``v`` alone *on the records where both are observed* (for a nominal parent, the
per-value Gaussians against their pool,
:func:`~onlinebma.stats.normal_wishart.nominal_parent_log_weights`), so that
``l += log Q_y(x)`` stays exact; a record is predicted by the average over the structures of
its observed features. Forgetting follows
:mod:`~onlinebma.stats.normal_wishart`: each record first multiplies every statistic by
``decay``, then is learned (after records ``1..t`` record ``i`` weighs ``decay^(t - i)``).
"""

from __future__ import annotations

import numpy as np

from ..stats.gaussian import MAX_ABS_VALUE
from ..stats.normal_wishart import (
    MomentStatistics,
    NormalWishartPrior,
    PairStatistics,
    nominal_parent_log_weights,
)
from ..stats.pairs import PairCounts, pair_id
from .tree_terms import TreeTerms

__all__ = ["MixedStatistics"]


class MixedStatistics:
    """Per-class sufficient statistics of nominal and numeric features, the directed edge log
    weights they give in closed form and a record's terms (module docstring).

    Parameters
    ----------
    n_classes : int
        ``K`` (classes coded ``0 .. K-1``).
    n_values : sequence of int
        The number of values of each nominal feature.
    n_numeric : int
        ``D``, the number of numeric features.
    ess : float, default 1.0
        Equivalent sample size of the joint Dirichlet of the class and nominal features.
    numeric_prior : NormalWishartPrior or None, default None
        The Normal–Wishart prior of the ``D`` numeric features (``NormalWishartPrior(D)``
        when None).
    decay : float or sequence of float, default 1.0
        ``lambda`` in ``(0, 1]``: every statistic is multiplied by it before each record is
        learned (the priors are not decayed). A sequence of ``M`` rates keeps ``M``
        *members* that read each record once: every result then has a leading member axis
        (``(M, N, N)``, ``(M, K)``, ``(M, K, N, N)``), member ``i`` equal to a
        ``MixedStatistics`` with ``decay=decay[i]`` alone.

    Examples
    --------
    One nominal feature (two values) and one numeric: the numeric one may have the nominal
    one as parent, not the other way round.

    >>> import numpy as np
    >>> s = MixedStatistics(2, [2], 1)
    >>> s.learn(0, [1], [0.3]); s.learn(1, [0], [-1.2])
    >>> observed, base, log_q = s.record_terms([1], [0.1])
    >>> observed.tolist(), base.shape, log_q.shape, s.log_weights()[1, 0]
    ([0, 1], (2,), (2, 2, 2), np.float64(-inf))

    Two forgetting rates as members of one state:

    >>> m = MixedStatistics(2, [2], 1, decay=[1.0, 0.9])
    >>> m.learn(0, [1], [0.3])
    >>> m.log_weights().shape, m.record_terms([1], [0.1])[2].shape
    ((2, 2, 2), (2, 2, 2, 2))
    """

    def __init__(self, n_classes: int, n_values, n_numeric: int, ess: float = 1.0,
                 numeric_prior: NormalWishartPrior | None = None, decay=1.0):
        r = np.array(n_values, dtype=np.int64).reshape(-1)
        if n_classes < 1 or (r < 1).any() or n_numeric < 0:
            raise ValueError("need at least one class, one value per nominal feature and "
                             "n_numeric >= 0")
        rates = np.array(decay, dtype=float).reshape(-1)
        if np.ndim(decay) > 1 or not len(rates) or not ((rates > 0) & (rates <= 1)).all():
            raise ValueError(f"decay must be a rate in (0, 1] or a sequence of them, not "
                             f"{decay!r}")
        if not ess > 0:
            raise ValueError(f"ess must be positive, not {ess!r}")
        d = n_numeric
        if numeric_prior is None and d:
            numeric_prior = NormalWishartPrior(d)
        if d and numeric_prior.n_features != d:
            raise ValueError(f"numeric_prior is over {numeric_prior.n_features} features, "
                             f"not n_numeric = {d}")
        self.k, self.r, self.d = n_classes, r, d
        self.prior = numeric_prior
        self.decay = rates  # one per member
        self._members = np.ndim(decay) == 1  # else results have no member axis
        a, top, k, m = len(r), int(r.max(initial=1)), n_classes, len(rates)
        # the nominal part: today's pair counts' layout, every class and value declared up
        # front, and each member's table of counts in it
        self.counts = PairCounts()
        for c in range(k):
            self.counts.add_class(c)
        for u, ru in enumerate(r):
            self.counts.add_feature(u)
            for b in range(ru):
                self.counts.add_value(u, b)
        self.counts.class_counts()  # lays the columns out (TreeTerms reads their roles)
        self.tables = np.zeros((m,) + self.counts.counts_.shape)  # (M, K, columns)
        self.terms = TreeTerms(float(ess), True, 1.0)
        self._nominal = np.arange(a)
        u, v = np.triu_indices(a, 1)
        self._nominal_pairs = (u, v, pair_id(u, v))
        if d:
            self.numeric = PairStatistics(d, shape=(m, k), decay=rates[:, None])
            self.cells = (MomentStatistics(d, shape=(m, k, a, top),
                                           decay=rates[:, None, None, None]) if a else None)

    @property
    def n_features(self) -> int:
        """``A + D``."""
        return len(self.r) + self.d

    def _check(self, nominal, numeric):
        """The record as arrays, and the codes of its observed nominal features."""
        x = np.asarray(nominal, dtype=np.int64).reshape(-1)
        z = np.asarray(numeric, dtype=float).reshape(-1)
        if x.shape != self.r.shape or ((x < -1) | (x >= self.r)).any():
            raise ValueError(f"nominal codes {x.tolist()} do not fit the domains "
                             f"{self.r.tolist()} (-1: missing)")
        with np.errstate(invalid="ignore"):
            too_large = np.abs(z) > MAX_ABS_VALUE  # NaN (missing) is not
        if z.shape != (self.d,) or too_large.any():
            raise ValueError(f"need {self.d} numeric values of magnitude at most "
                             f"{MAX_ABS_VALUE:g} or NaN (missing), not {z.tolist()}")
        return x, z, np.flatnonzero(x >= 0)

    def _cell_weights(self, y: int, x: np.ndarray, seen: np.ndarray) -> np.ndarray:
        """One-hot ``(M, K, A, top)``: the record's class and each observed nominal
        feature's value, in every member."""
        w = np.zeros(self.cells.shape)
        w[:, y, seen, x[seen]] = 1.0
        return w

    def _result(self, array):
        """``array`` without its member axis unless members were asked for."""
        return array if self._members else array[0]

    # ------------------------------------------------------------------- learning

    def learn(self, y: int, nominal, numeric) -> None:
        """Forget by ``decay``, then add the record ``(nominal codes, numeric values)`` of
        class code ``y`` (nominal code -1 and NaN: missing)."""
        x, z, seen = self._check(nominal, numeric)
        if not 0 <= y < self.k:
            raise ValueError(f"class code {y!r} is not in 0..{self.k - 1}")
        if (self.decay != 1.0).any():
            self.tables *= self.decay[:, None, None]
        self.tables[:, y, self.counts.record_columns(seen, x[seen])] += 1.0
        if self.d:
            self.numeric.add(z, np.broadcast_to(np.arange(self.k) == y, self.numeric.shape))
            if self.cells is not None:
                self.cells.add(z, self._cell_weights(y, x, seen))

    # ---------------------------------------------------------------- edge weights

    def log_weights(self) -> np.ndarray:
        """``l(u -> v) = sum_c [log ML_c(v | u) - log ML_c(v)]`` of every ordered pair of
        features from the statistics: ``(N, N)`` (members: ``(M, N, N)``), ``-inf`` for a
        numeric parent of a nominal child, 0 on the diagonal."""
        a, d = len(self.r), self.d
        out = np.zeros((len(self.decay), a + d, a + d))
        out[:, a:, :a] = -np.inf
        if a >= 2:  # TreeTerms' h(CUV) - h(CU) - h(CV) + h(C), symmetric, member by member
            u, v, ids = self._nominal_pairs
            for member, table in enumerate(self.tables):
                lw = self.terms.log_weights(self.counts, table, 1.0)
                out[member, u, v] = out[member, v, u] = lw[ids]
        if d:
            out[:, a:, a:] = self.numeric.edge_log_weights(self.prior).sum(axis=1)
            if a:  # (M, K, A, D) summed over classes
                out[:, :a, a:] = nominal_parent_log_weights(self.cells, self.prior).sum(axis=1)
        return self._result(out)

    # ------------------------------------------------------------- record terms

    def record_terms(self, nominal, numeric):
        """``(observed, base, log_q)`` of a record (nominal code -1 and NaN: missing) at
        the statistics' posterior predictives: the indices of its observed features,
        ``base_c = log theta_c + sum_{observed v} log p_c(x_v)`` ``(K,)`` and ``log Q_c(x)(u
        -> v) = log p_c(x_v | x_u) - log p_c(x_v)`` ``(K, N, N)`` (members: ``(M, K)`` and
        ``(M, K, N, N)``), ``p_c(x_v)`` over the
        records where ``u`` and ``v`` are observed (0 on the diagonal, where the edge is
        disallowed and where ``u`` or ``v`` is missing). The record's prediction averages
        over the structures of its observed features: ``l`` and ``log_q`` restricted to
        ``observed``; learning it adds all of ``log_q`` of its class to ``l``."""
        x, z, seen = self._check(nominal, numeric)
        a, d, k = len(self.r), self.d, self.k
        out = np.zeros((len(self.decay), k, a + d, a + d))
        # class and nominal terms: TreeTerms on the record's gathered pair counts
        _, prior = self.terms.plan(self.counts, seen, k)
        columns = self.counts.record_columns(seen, x[seen])
        base, log_q = self.terms.record(len(seen), self.tables[:, :, columns], prior, 1.0)
        u, v = np.triu_indices(len(seen), 1)
        out[:, :, seen[u], seen[v]] = out[:, :, seen[v], seen[u]] = log_q
        observed = seen
        if d:
            t1 = self.numeric.log_predictive_singles(self.prior, z)  # (M, K, D), 0: missing
            base = base + t1.sum(axis=-1)
            out[:, :, a:, a:] = self.numeric.log_q(self.prior, z)
            if len(seen):  # each observed nominal parent's value: (M, K, A_seen, D)
                cond = self.cells.log_predictive(self.prior, z)[:, :, seen, x[seen]]
                pooled = self.cells.pooled(-1).log_predictive(self.prior, z)[:, :, seen]
                out[:, :, seen, a:] = cond - pooled
            observed = np.concatenate([seen, a + np.flatnonzero(~np.isnan(z))])
        return observed, self._result(base), self._result(out)
