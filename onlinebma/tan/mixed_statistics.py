"""Per-class statistics of nominal and numeric features for the mixed forest average.

:class:`MixedStatistics` holds what the exact average over forest- and tree-augmented
structures of mixed features (:mod:`onlinebma.stats.mixed_forests`, the maths) needs, per
class: the nominal features' pair counts (:class:`~onlinebma.stats.pairs.PairCounts`, with
the edge weights and record terms of :class:`~onlinebma.tan.tree_terms.TreeTerms`, the same
code as :class:`~onlinebma.tan.ModelAveragedTAN`), the numeric features' weighted mean and
scatter, and, per nominal feature and value, each numeric feature's weighted mean and
centred sum of squares (a numeric child of a nominal parent). From them it computes the
directed edge log weights ``l`` in closed form (:meth:`MixedStatistics.log_weights`) and a
record's naive-Bayes part and ``log Q_c(x)`` (:meth:`MixedStatistics.record_terms`).

Features are ordered nominal first (``0 .. A-1``, values coded ``0 .. r-1``, every value
declared up front so the Dirichlet margins do not change), then numeric (``A .. A+D-1``).
Every record observes every feature (no missing values yet).
"""

from __future__ import annotations

import numpy as np

from ..stats.mixed_forests import normal_wishart_log_marginal, normal_wishart_log_predictive
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
    prior_mean : array_like of shape (D,) or None, default None
        ``nu`` of the Normal–Wishart prior (zeros when None).
    prior_scale : array_like of shape (D, D) or None, default None
        ``T`` of the Normal–Wishart prior (the identity when None).
    k0 : float, default 1.0
        Prior weight of ``nu``.
    alpha : float or None, default None
        Degrees of freedom ``alpha_w > D - 1`` of the full Normal–Wishart prior (``D + 2``
        when None); its margin over ``d`` features has ``alpha_w - D + d``.
    decay : float, default 1.0
        ``lambda`` in ``(0, 1]``: every statistic is multiplied by it after each record
        (the priors are not decayed).

    Examples
    --------
    One nominal feature (two values) and one numeric: the numeric one may have the nominal
    one as parent, not the other way round.

    >>> import numpy as np
    >>> s = MixedStatistics(2, [2], 1)
    >>> s.learn(0, [1], [0.3]); s.learn(1, [0], [-1.2])
    >>> base, log_q = s.record_terms([1], [0.1])
    >>> base.shape, log_q.shape, s.log_weights()[1, 0]
    ((2,), (2, 2, 2), np.float64(-inf))
    """

    def __init__(self, n_classes: int, n_values, n_numeric: int, ess: float = 1.0,
                 prior_mean=None, prior_scale=None, k0: float = 1.0, alpha=None,
                 decay: float = 1.0):
        r = np.array(n_values, dtype=np.int64).reshape(-1)
        if n_classes < 1 or (r < 1).any() or n_numeric < 0:
            raise ValueError("need at least one class, one value per nominal feature and "
                             "n_numeric >= 0")
        if not 0.0 < decay <= 1.0:
            raise ValueError(f"decay must be in (0, 1], not {decay!r}")
        if not (ess > 0 and k0 > 0):
            raise ValueError(f"ess and k0 must be positive, not {ess!r} and {k0!r}")
        d = n_numeric
        self.alpha = float(d + 2 if alpha is None else alpha)
        if self.alpha <= d - 1:
            raise ValueError(f"alpha must exceed n_numeric - 1 = {d - 1}, not {self.alpha!r}")
        self.prior_mean = np.zeros(d) if prior_mean is None else np.array(prior_mean, float)
        self.prior_scale = np.eye(d) if prior_scale is None else np.array(prior_scale, float)
        if self.prior_mean.shape != (d,) or self.prior_scale.shape != (d, d):
            raise ValueError(f"prior_mean and prior_scale must have shapes ({d},) and "
                             f"({d}, {d})")
        self.k, self.r, self.d = n_classes, r, d
        self.k0, self.decay = float(k0), float(decay)
        a, top, k = len(r), int(r.max(initial=1)), n_classes
        # the nominal part: today's pair counts, every class and value declared up front
        self.counts = PairCounts()
        for c in range(k):
            self.counts.add_class(c)
        for u, ru in enumerate(r):
            self.counts.add_feature(u)
            for b in range(ru):
                self.counts.add_value(u, b)
        self.counts.class_counts()  # lays the columns out (TreeTerms reads their roles)
        self.terms = TreeTerms(float(ess), True, 1.0)
        self._nominal = np.arange(a)
        u, v = np.triu_indices(a, 1)
        self._nominal_pairs = (u, v, pair_id(u, v))
        # numeric moments per class, and per class, nominal feature and value
        self.n = np.zeros(k)
        self.mean = np.zeros((k, d))
        self.scatter = np.zeros((k, d, d))
        self.cell_n = np.zeros((k, a, top))
        self.cell_mean = np.zeros((k, a, top, d))
        self.cell_m2 = np.zeros((k, a, top, d))
        self._valid = np.arange(top)[None, :] < r[:, None]  # (A, top): declared values

    @property
    def n_features(self) -> int:
        """``A + D``."""
        return len(self.r) + self.d

    def _check(self, nominal, numeric):
        x = np.asarray(nominal, dtype=np.int64).reshape(-1)
        z = np.asarray(numeric, dtype=float).reshape(-1)
        if x.shape != self.r.shape or ((x < 0) | (x >= self.r)).any():
            raise ValueError(f"nominal codes {x.tolist()} do not fit the domains "
                             f"{self.r.tolist()}")
        if z.shape != (self.d,) or not np.isfinite(z).all():
            raise ValueError(f"need {self.d} finite numeric values, not {z.tolist()}")
        return x, z

    # ------------------------------------------------------------------- learning

    def learn(self, y: int, nominal, numeric) -> None:
        """Add the record ``(nominal codes, numeric values)`` of class code ``y``, then decay
        every statistic by ``decay``."""
        x, z = self._check(nominal, numeric)
        if not 0 <= y < self.k:
            raise ValueError(f"class code {y!r} is not in 0..{self.k - 1}")
        self.counts.add(y, self.counts.record_columns(self._nominal, x), 1.0)
        # weighted Welford: S += (n / n') delta delta^T
        n1 = self.n[y] + 1
        delta = z - self.mean[y]
        self.scatter[y] += (self.n[y] / n1) * np.outer(delta, delta)
        self.mean[y] += delta / n1
        self.n[y] = n1
        at = (y, self._nominal, x)
        cn1 = self.cell_n[at] + 1
        cdelta = z[None, :] - self.cell_mean[at]
        self.cell_m2[at] += (self.cell_n[at] / cn1)[:, None] * cdelta ** 2
        self.cell_mean[at] += cdelta / cn1[:, None]
        self.cell_n[at] = cn1
        if self.decay != 1.0:
            self.counts.scale(self.decay)
            for arr in (self.n, self.scatter, self.cell_n, self.cell_m2):
                arr *= self.decay

    # ----------------------------------------------------------- numeric margins

    def _margin_prior(self, dims):
        """``(nu, T, alpha)`` of the margins over the numeric features ``dims`` (an int
        array ``(..., d)``): ``alpha_w - D + d`` degrees of freedom."""
        nu = self.prior_mean[dims]
        t = self.prior_scale[dims[..., :, None], dims[..., None, :]]
        return nu, t, self.alpha - self.d + dims.shape[-1]

    def _single_numeric(self):
        """Every class's ``{v}`` margins: ``(n, mean, scatter, nu, T, alpha)``, shapes
        ``(K, D)``, ``(K, D, 1)``, ``(K, D, 1, 1)``, ``(D, 1)``, ``(D, 1, 1)``."""
        v = np.arange(self.d)
        diag = self.scatter[:, v, v]
        n = np.repeat(self.n[:, None], self.d, axis=1)
        return (n, self.mean[..., None], diag[..., None, None],
                *self._margin_prior(v[:, None]))

    def _pair_numeric(self):
        """The ``{u, v}`` margins of every class and numeric pair ``u < v``, and the pairs."""
        u, v = np.triu_indices(self.d, 1)
        dims = np.stack([u, v], axis=1)  # (P, 2)
        mean = self.mean[:, dims]  # (K, P, 2)
        scatter = self.scatter[:, dims[:, :, None], dims[:, None, :]]  # (K, P, 2, 2)
        n = np.repeat(self.n[:, None], len(u), axis=1)
        return (n, mean, scatter, *self._margin_prior(dims)), u, v

    def _cell_numeric(self):
        """The ``{v}`` margins per class, nominal feature, value and numeric ``v``: shapes
        ``(K, A, top, D)``, ``(..., 1)``, ``(..., 1, 1)``."""
        n = np.repeat(self.cell_n[..., None], self.d, axis=-1)
        return (n, self.cell_mean[..., None], self.cell_m2[..., None, None],
                *self._margin_prior(np.arange(self.d)[:, None]))

    def _numeric(self, score, margins, x=None):
        """``score`` (the log marginal likelihood or, at ``x``, the log predictive) of
        ``margins`` = ``(n, mean, scatter, nu, T, alpha)``."""
        n, mean, scatter, nu, t, alpha = margins
        stats = (n, mean, scatter) if x is None else (x, n, mean, scatter)
        return score(*stats, nu, t, k0=self.k0, alpha=alpha)

    # ---------------------------------------------------------------- edge weights

    def log_weights(self) -> np.ndarray:
        """``l(u -> v) = sum_c [log ML_c(v | u) - log ML_c(v)]`` of every ordered pair of
        features from the statistics: ``(N, N)``, ``-inf`` for a numeric parent of a
        nominal child, 0 on the diagonal."""
        a, d = len(self.r), self.d
        out = np.zeros((a + d, a + d))
        out[a:, :a] = -np.inf
        if a >= 2:  # TreeTerms' h(CUV) - h(CU) - h(CV) + h(C), symmetric
            u, v, ids = self._nominal_pairs
            lw = self.terms.log_weights(self.counts, self.counts.counts_, 1.0)
            out[u, v] = out[v, u] = lw[ids]
        if d:
            single = self._numeric(normal_wishart_log_marginal, self._single_numeric())
            if d >= 2:
                margins, u, v = self._pair_numeric()
                joint = self._numeric(normal_wishart_log_marginal, margins).sum(axis=0)
                s = single.sum(axis=0)
                out[a + u, a + v] = out[a + v, a + u] = joint - s[u] - s[v]
            if a:
                cells = self._numeric(normal_wishart_log_marginal, self._cell_numeric())
                cells = np.where(self._valid[None, :, :, None], cells, 0.0)  # (K, A, top, D)
                out[:a, a:] = cells.sum(axis=(0, 2)) - single.sum(axis=0)[None, :]
        return out

    # ------------------------------------------------------------- record terms

    def record_terms(self, nominal, numeric):
        """``(base, log_q)`` of a record at the statistics' posterior predictives:
        ``base_c = log theta_c + sum_v log p_c(x_v)`` ``(K,)`` and ``log Q_c(x)(u -> v) =
        log p_c(x_v | x_u) - log p_c(x_v)`` ``(K, N, N)`` (0 on the diagonal and where the
        edge is disallowed)."""
        x, z = self._check(nominal, numeric)
        a, d, k = len(self.r), self.d, self.k
        out = np.zeros((k, a + d, a + d))
        # class and nominal terms: TreeTerms on the record's gathered pair counts
        _, prior = self.terms.plan(self.counts, self._nominal, k)
        columns = self.counts.record_columns(self._nominal, x)
        base, log_q = self.terms.record(a, self.counts.counts_[:, columns], prior, 1.0)
        u, v, _ = self._nominal_pairs
        out[:, u, v] = out[:, v, u] = log_q
        if d:
            t1 = self._numeric(normal_wishart_log_predictive, self._single_numeric(),
                               z[:, None])  # (K, D)
            base = base + t1.sum(axis=1)
            if d >= 2:
                margins, u, v = self._pair_numeric()
                t2 = self._numeric(normal_wishart_log_predictive, margins,
                                   np.stack([z[u], z[v]], axis=1))  # (K, P)
                out[:, a + u, a + v] = out[:, a + v, a + u] = t2 - t1[:, u] - t1[:, v]
            if a:
                n, mean, m2, *prior = self._cell_numeric()
                at = (slice(None), self._nominal, x)  # each nominal parent's value
                cond = self._numeric(normal_wishart_log_predictive,
                                     (n[at], mean[at], m2[at], *prior), z[:, None])
                out[:, :a, a:] = cond - t1[:, None, :]
        return base, out

