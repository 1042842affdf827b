"""The EM engine shared by FAN and the finite-mixture classifier (Monti & Cooper 1999, §2.3).

Both models have a hidden variable ``H`` with ``K`` values ("components") that is a parent of
every feature. In FAN the class ``C`` is a second parent of every feature; in the finite mixture
(FM) the class is itself a child of ``H``. The engine sees one abstraction: every record ``l``
and component ``k`` select one **cell** of the feature distributions,

    FAN: cell(l, k) = y_l * K + k     (features depend on class and component, eq. 12)
    FM:  cell(l, k) = k               (features depend on the component only, eq. 11)

so the E and M steps are the same code for both, vectorised over all records and components:

- Nominal features are one-hot columns of a ``(n, R)`` matrix, sparse when large (``R`` =
  values seen in training, summed over features; a missing value is a row of zeros in its
  feature's block, so it is summed out for free). The E step is one product
  ``onehot @ log_theta.T``; the M step's expected counts (eq. 8) are one product
  ``onehot.T @ tau_cells``. Memory is ``n`` times the number of features plus the tables, never
  ``n * R`` (beyond a small dense case).
- Numeric features are Gaussians per cell (eq. 7 with maximum-likelihood variances, see below),
  computed in **scaled coordinates**: every feature minus its training median, divided by its
  median absolute deviation, and clipped at :data:`X_MAX`, so that no sum of squares overflows
  whatever finite values arrive (one value of 1e200 among values near 1 included) and one
  outlier does not flatten the resolution of the other values. Log densities are evaluated
  directly as ``-(x - mu)^2 / (2 var) - log(2 pi var) / 2`` (standardised distances clipped
  at :data:`~onlinebma.mixture.arrays.Z_MAX`, so they stay finite for any finite input) and
  variances by a second pass over the centred values. The log likelihoods the criteria report
  are converted back to the original units (the log Jacobian of the scaling).
  Missing values drop out.

Estimates are the Dirichlet ones of eq. 5, ``(N_ijk + alpha) / (N_ij + alpha r_i)``, for the
feature tables, the mixing proportions and (FM) ``p(C | H)``. They maximise the log likelihood plus
``alpha * sum(log theta)`` (a Dirichlet(alpha + 1) log density), which is therefore the objective
that EM never decreases.

Variances: ``sigma^2 = S / W + eps_j`` with ``eps_j = var_smoothing * (variance of feature j)``,
the same estimate as :class:`onlinebma.naive_bayes.NaiveBayes` (so FAN with one component is
naive Bayes), then clipped from below at ``floor`` (the variance guard, see
:class:`~onlinebma.mixture.FAN`). The ``+ eps`` is an exact M step for the objective in which
every Gaussian factor is multiplied by ``exp(-eps_j / (2 sigma^2))`` (the expected log density of
an observation jittered by N(0, eps_j) noise); the floor is an exact M step over the constrained
set ``sigma^2 >= floor`` because the expected complete log likelihood is unimodal in
``sigma^2``. The E step uses the same jittered factors, so the objective is monotone; the
reported log likelihoods, criteria and predictions use the plain Gaussian densities.

Classification EM (``hard=True``, eq. 9) replaces the responsibilities by the indicator of the
most probable component; its objective is the classification log likelihood
``sum_l max_k log p(c_l, x_l, h_k)`` plus the same prior term, which it never decreases either.
"""

from __future__ import annotations

import copy

import numpy as np
from scipy import sparse

from ..stats.logmath import logsumexp_np
from .arrays import Design, EMResult, Expected, Params, Totals, gaussian_log_density
from .engine import Engine
from .starts import split_start

__all__ = ["EMEngine", "X_MAX", "coordinates", "one_component", "run_em", "run_em_many"]

#: Scaled values are clipped here, so that sums of squares over any number of records below
#: 1e100 stay finite (a value 1e100 robust scales from the median is an outlier for any model).
X_MAX = 1e100



def coordinates(x: np.ndarray, obs: np.ndarray) -> tuple:
    """``(center, scale)`` of every numeric column: the median of its observed values and their
    median absolute deviation from it (else their mean absolute deviation, else 1). Robust, so
    that one huge value neither overflows the moments nor flattens the resolution of the others.
    """
    seen = obs.any(axis=0)
    values = np.where(obs, x, np.nan)
    values[:, ~seen] = 0.0
    center = np.nanmedian(values, axis=0) if x.shape[0] else np.zeros(x.shape[1])
    with np.errstate(over="ignore"):
        dev = np.abs(values - center)
    mad = np.nanmedian(dev, axis=0) if x.shape[0] else np.zeros(x.shape[1])
    mean_dev = np.nanmean(np.minimum(dev, np.finfo(float).max / max(x.shape[0], 1)), axis=0) \
        if x.shape[0] else mad
    scale = np.where(mad > 0, mad, np.where(mean_dev > 0, mean_dev, 1.0))
    return center, scale


class EMEngine(Engine):
    """Which model the engine runs: FAN (``class_parent=True``) or FM (``False``), on which data.

    Holds what does not change during EM: the design, ``alpha``, the one-hot blocks, the
    features' marginal Gaussians (with ``eps``, the naive Bayes variance smoothing) and the
    numeric values in scaled coordinates (module docstring): ``coords = (center, scale)``, by
    default the training data's own, or a previous fit's so that its parameters can be
    evaluated on new records.
    """

    def __init__(self, design: Design, class_parent: bool, alpha: float, var_smoothing: float,
                 coords: tuple | None = None, totals: Totals | None = None):
        self.d = design
        self.class_parent = class_parent
        self.alpha = float(alpha)
        self.var_smoothing = var_smoothing
        # First column of each nominal feature's one-hot block.
        self._starts = np.concatenate([[0], np.cumsum(design.r)[:-1]]).astype(np.int64)
        onehot = design.onehot
        self._onehot_t = onehot.T.tocsr() if sparse.issparse(onehot) else onehot.T
        self.y_onehot = np.zeros((design.n, design.n_classes))
        if design.y is not None:
            self.y_onehot[np.arange(design.n), design.y] = 1.0
        obs = design.obs
        self.center, self.scale = coordinates(design.x, obs) if coords is None else coords
        self.xc = self.centred(design.x, obs)
        self.use_totals(self.chunk_totals() if totals is None else totals)

    def chunk_totals(self) -> Totals:
        """The :class:`Totals` of this engine's own records."""
        obs = self.d.obs
        w = obs.sum(axis=0)
        mean = self.xc.sum(axis=0) / np.maximum(w, 1)
        dev = np.where(obs, self.xc - mean, 0.0)
        return Totals(self.d.n, self.y_onehot.sum(axis=0), w, mean, (dev * dev).sum(axis=0))

    def use_totals(self, totals: Totals) -> None:
        """Take the constants of EM from ``totals`` (of all the training records, of which this
        engine may hold one chunk): the number of records and of each class, and the marginal
        Gaussian of every numeric feature, as NaiveBayes keeps it: ``eps`` is
        ``var_smoothing`` times the marginal (population) variance; a feature with
        ``eps == 0`` (never observed, or constant) carries no information and is skipped."""
        self.n_total = int(totals.n)
        self.class_counts = totals.class_counts
        var = totals.m2 / np.maximum(totals.w, 1)
        self.eps = self.var_smoothing * var
        active = self.eps > 0
        self.marginal = (totals.mean[None, :], np.where(active, var + self.eps, 1.0)[None, :],
                         active[None, :])
        # log p in original units = log p in scaled units - log(scale), per observed value.
        self.log_jacobian = float(totals.w @ np.log(self.scale))

    def without_records(self) -> EMEngine:
        """A copy that keeps what prediction needs and drops the training arrays (memory)."""
        out = copy.copy(self)
        d = self.d
        out.__dict__.update(  # this copy with its training arrays emptied
            d=Design(onehot=d.onehot[:0], x=d.x[:0], obs=d.obs[:0], y=d.y[:0], block=d.block,
                     r=d.r, n_classes=d.n_classes),
            y_onehot=self.y_onehot[:0], xc=self.xc[:0], _onehot_t=None)
        return out

    def centred(self, x: np.ndarray, obs: np.ndarray) -> np.ndarray:
        """Numeric values in scaled coordinates (clipped at :data:`X_MAX`), 0 where missing."""
        with np.errstate(over="ignore"):
            xc = np.clip((x - self.center) / self.scale, -X_MAX, X_MAX)
        return np.where(obs, xc, 0.0)

    # ------------------------------------------------------------ layout

    def cells(self, k: int) -> np.ndarray:
        """``(n, K)`` cell of each training record and component."""
        comp = np.arange(k)
        if self.class_parent:
            return self.d.y[:, None] * k + comp[None, :]
        return np.broadcast_to(comp, (self.d.n, k))

    def spread(self, tau: np.ndarray) -> np.ndarray:
        """Responsibilities ``(n, K)`` placed in their cells: ``(n, cells)``."""
        if not self.class_parent:
            return tau
        n, k = tau.shape
        out = np.zeros((n, self.d.n_classes, k))
        out[np.arange(n), self.d.y] = tau
        return out.reshape(n, -1)

    def counts(self, tc: np.ndarray) -> np.ndarray:
        """Expected counts ``(cells, R)`` of every value given responsibilities in cells (eq. 8)."""
        return np.asarray(self._onehot_t @ tc).T

    def block_totals(self, counts: np.ndarray) -> np.ndarray:
        """Per-feature totals of ``(cells, R)`` counts, repeated over each feature's columns."""
        if counts.shape[1] == 0:
            return counts
        sums = np.add.reduceat(counts, self._starts, axis=1)
        return sums[:, self.d.block]

    # --------------------------------------------------------------- E step

    def _gaussian_terms(self, p: Params, cells: np.ndarray, jitter: bool) -> np.ndarray:
        """``(n, K)`` Gaussian log densities of the training records in their cells; with
        ``jitter`` the EM objective's ``-eps / (2 var)`` per factor is included."""
        obs = self.d.obs[:, None, :]
        mean, var, active = p.mean[cells], p.var[cells], p.active[cells]
        out = gaussian_log_density(self.xc[:, None, :], obs, mean, var, active)
        if jitter:
            out = out - 0.5 * np.where(obs & active, self.eps / var, 0.0).sum(axis=2)
        return out

    def joint(self, p: Params, jitter: bool) -> np.ndarray:
        """``(n, K)`` ``log p(c_l, x_l, h_k)`` of the training records."""
        d, k = self.d, p.k
        cells = self.cells(k)
        per_cell = np.asarray(d.onehot @ p.log_theta.T)  # (n, cells); zeros without nominal
        out = np.take_along_axis(per_cell, cells, axis=1) + p.log_weights[None, :]
        if d.x.shape[1]:
            out = out + self._gaussian_terms(p, cells, jitter)
        if self.class_parent:
            return out + p.log_class[d.y][:, None]  # eq. 12: p(C) outside the sum
        return out + p.log_class[:, d.y].T  # eq. 11: p(C | h_k) inside

    def log_joint_classes(self, p: Params, rows: Design) -> np.ndarray:
        """``(m, C)`` ``log p(c, x)`` of rows to predict: eq. 12 (FAN) or eq. 11 (FM)."""
        k, c = p.k, self.d.n_classes
        m = rows.n
        per = np.asarray(rows.onehot @ p.log_theta.T)  # (m, cells)
        if rows.x.shape[1]:
            xc = self.centred(rows.x, rows.obs)
            per = per + gaussian_log_density(xc[:, None, :], rows.obs[:, None, :],
                                             p.mean[None], p.var[None], p.active[None])
        if not self.class_parent:
            per = per + p.log_weights[None, :]
            return logsumexp_np(per[:, :, None] + p.log_class[None, :, :], axis=1)
        per = per.reshape(m, c, k) + p.log_weights[None, None, :]
        return p.log_class[None, :] + logsumexp_np(per, axis=2)

    # --------------------------------------------------------------- M step

    def expected(self, tau: np.ndarray, gaussians: bool = True) -> Expected:
        """The expected sufficient statistics of responsibilities ``tau`` ``(n, K)`` of this
        engine's records (eq. 8; the Gaussian moments of §2.3 unless ``gaussians=False``)."""
        d = self.d
        n, k = tau.shape
        tc = self.spread(tau)  # (n, cells)
        counts = self.counts(tc)  # eq. 8 expected counts, (cells, R)
        q = d.x.shape[1] if gaussians else 0
        if q == 0:
            w = mean = m2 = np.zeros((tc.shape[1], 0))
        else:
            # Weighted means per cell, then the squared deviations from them (second pass).
            tct = np.ascontiguousarray(tc.T)
            w = tct @ d.obs.astype(float)  # (cells, q) expected number of observed values
            mean = (tct @ self.xc) / np.where(w > 0, w, 1.0)
            dev = np.where(d.obs[:, None, :], self.xc[:, None, :] - mean[self.cells(k)], 0.0)
            wdev2 = (tau[:, :, None] * dev * dev).reshape(n, k * q)
            if self.class_parent:
                m2 = (self.y_onehot.T @ wdev2).reshape(-1, q)  # (C K, q): cell c*K + k
            else:
                m2 = wdev2.sum(axis=0).reshape(k, q)
        return Expected(tau.sum(axis=0), tau.T @ self.y_onehot, counts, w, mean, m2)

    def m_step(self, tau, floor, fallback: tuple | None) -> Params:
        """Parameters maximising the expected complete log posterior given ``tau`` (eq. 5, 7,
        8): responsibilities ``(n, K)`` of this engine's records, or their :class:`Expected`
        statistics (summed over chunks of records, for the M step on sums).

        ``floor`` bounds the variances from below; ``fallback = (mean, var, active)`` per cell
        gives the Gaussians of cells without data (``None``: the features' marginal Gaussians,
        as naive Bayes does for a class that never observed a feature).
        """
        e = tau if isinstance(tau, Expected) else self.expected(tau)
        a, n, c = self.alpha, self.n_total, self.d.n_classes
        k = e.nk.shape[0]
        log_weights = np.log((e.nk + a) / (n + a * k))
        if self.class_parent:
            log_class = np.log((self.class_counts + a) / (n + a * c))
        else:  # (K, C) expected counts of p(C | H)
            log_class = np.log((e.nkc + a) / (e.nk[:, None] + a * c))
        log_theta = np.log(e.counts + a) - np.log(self.block_totals(e.counts)
                                                  + a * self.d.r[self.d.block])
        mean, var, active = self._gaussians(e, floor, fallback)
        return Params(log_weights, log_class, log_theta, mean, var, active)

    def m_steps(self, taus: list, floor, fallback) -> list:
        """:meth:`m_step` of several runs (one pass over the records per run here; an engine
        over partitions does them in one pass)."""
        return [self.m_step(tau, floor, fallback) for tau in taus]

    def _gaussians(self, e: Expected, floor, fallback):
        """Means and variances per cell from the expected moments (eq. 7 with expected
        counts, §2.3); cells without data take ``fallback``."""
        if e.w.shape[1] == 0:
            empty = np.zeros((e.counts.shape[0], 0))
            return empty, empty, empty.astype(bool)
        has = e.w > 0
        if fallback is None:
            fallback = self.marginal
        mean = np.where(has, e.mean, fallback[0])
        var = np.where(has, e.m2 / np.where(has, e.w, 1.0) + self.eps, fallback[1])
        active = np.broadcast_to(fallback[2], has.shape).copy()
        var = np.where(active, np.maximum(var, floor), 1.0)  # inactive factors are never used
        return mean, var, active

    # ------------------------------------------------------------ objective

    def log_prior(self, p: Params) -> float:
        """``alpha * sum(log theta)`` over every multinomial (the objective's Dirichlet term)."""
        a = self.alpha
        if a == 0:
            return 0.0
        return a * (p.log_weights.sum() + p.log_class.sum() + p.log_theta.sum())

    def responsibilities(self, p: Params, hard: bool) -> tuple:
        """``(data, tau)``: the data term of the objective at ``p`` on this engine's records
        and their responsibilities (eq. 8 or 9); see :meth:`e_step`."""
        joint = self.joint(p, jitter=True)
        if hard:
            best = joint.argmax(axis=1)
            data = joint[np.arange(joint.shape[0]), best].sum()
            tau = np.zeros_like(joint)
            tau[np.arange(joint.shape[0]), best] = 1.0
        else:
            rows = logsumexp_np(joint, axis=1)
            data = rows.sum()
            tau = np.exp(joint - rows[:, None])
        return data, tau

    def e_step(self, p: Params, hard: bool) -> tuple[float, np.ndarray]:
        """The objective at ``p`` and the responsibilities for the next M step (eq. 8 or 9).

        Soft: ``sum_l log sum_k exp(joint) + prior``; hard: ``sum_l max_k joint + prior``.
        """
        data, tau = self.responsibilities(p, hard)
        return float(data + self.log_prior(p)), tau

    def e_steps(self, params: list, hard: bool) -> list:
        """:meth:`e_step` of several runs."""
        return [self.e_step(p, hard) for p in params]

    def records(self, index) -> tuple:
        """``(onehot, x, obs)`` of the training records ``index``, dense."""
        onehot = self.d.onehot[index]
        if sparse.issparse(onehot):
            onehot = onehot.toarray()
        return onehot, self.d.x[index], self.d.obs[index]

    def sums_for_scores(self, params: list) -> list:
        """:meth:`score_sums` of each parameter set."""
        return [self.score_sums(p) for p in params]

    def score_sums(self, p: Params) -> tuple:
        """What the criteria (:mod:`~onlinebma.mixture.criteria`) need from the records, as
        sums over them (they add up over chunks of records): ``(log likelihood in scaled
        units, sum_l max_k log p(h_k | c_l, x_l), the expected statistics of the posteriors
        p(h | c, x))``."""
        joint = self.joint(p, jitter=False)
        rows = logsumexp_np(joint, axis=1)
        post = joint - rows[:, None]  # log p(h_k | c_l, x_l)
        return rows.sum(), post.max(axis=1).sum(), self.expected(np.exp(post), gaussians=False)

    def all_in_one(self) -> np.ndarray:
        """Responsibilities of the one-component model: every record in component 1."""
        return np.ones((self.d.n, 1))

    def split_start(self, smaller: Params, hard: bool) -> np.ndarray:
        """Responsibilities that split the heaviest component of a ``K - 1`` fit
        (:func:`onlinebma.mixture.starts.split_start`)."""
        return split_start(self.joint(smaller, jitter=False), hard)


def one_component(s: EMEngine) -> Params:
    """The one-component fit: naive Bayes for FAN, the "no structure" model for FM.

    It is the closed-form M step with every responsibility 1, and the reference of the variance
    guard and of the Gaussians of empty cells.
    """
    return s.m_step(s.all_in_one(), 0.0, None)


def run_em(s: EMEngine, tau0, hard: bool, tol: float, max_iter: int,
           floor, fallback: tuple) -> EMResult:
    """EM (or classification EM) from responsibilities ``tau0`` until it stalls.

    Every iteration is an M step then an E step; the objective is recorded after every M step
    and EM stops when it gains less than ``tol`` times its magnitude, or after ``max_iter``
    M steps.
    """
    return run_em_many(s, [tau0], hard, tol, max_iter, floor, fallback)[0]


def run_em_many(s: EMEngine, starts: list, hard: bool, tol: float, max_iter: int,
                floor, fallback: tuple) -> list:
    """:func:`run_em` from each of ``starts``, the runs side by side: every round does the
    E steps (then the M steps) of all runs still going, so an engine over partitions makes one
    pass over the records per round for all of them (the restarts fan out). Each run's
    iterates are those of :func:`run_em` alone."""
    params = s.m_steps(starts, floor, fallback)
    history = [[] for _ in starts]
    going = list(range(len(starts)))
    while going:
        taus, still = [], []
        for i, (obj, tau) in zip(going, s.e_steps([params[i] for i in going], hard)):
            h = history[i]
            h.append(obj)
            if len(h) > 1 and h[-1] - h[-2] <= tol * abs(h[-1]):
                continue
            if len(h) >= max_iter:
                continue
            taus.append(tau)
            still.append(i)
        for i, p in zip(still, s.m_steps(taus, floor, fallback)):
            params[i] = p
        going = still
    return [EMResult(params=p, objective=h, n_iter=len(h)) for p, h in zip(params, history)]
