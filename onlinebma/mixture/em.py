"""The EM engine shared by FAN and the finite-mixture classifier (Monti & Cooper 1999, §2.3).

Both models have a hidden variable ``H`` with ``K`` values ("components") that is a parent of
every feature. In FAN the class ``C`` is a second parent of every feature; in the finite mixture
(FM) the class is itself a child of ``H``. The engine sees one abstraction: every record ``l``
and component ``k`` select one **cell** of the feature distributions,

    FAN: cell(l, k) = y_l * K + k     (features depend on class and component, eq. 12)
    FM:  cell(l, k) = k               (features depend on the component only, eq. 11)

so the E and M steps are the same code for both, vectorised over all records and components:

- Nominal features are one-hot columns of a dense ``(n, R)`` matrix (``R`` = values seen in
  training, summed over features; a missing value is a row of zeros in its feature's block, so it
  is summed out for free). The E step is one matrix product ``onehot @ log_theta.T``; the M step's
  expected counts (eq. 8) are one product ``tau_cells.T @ onehot``.
- Numeric features are Gaussians per cell (eq. 7 with maximum-likelihood variances, see below).
  ``log N(x; mu, var) = a + b x + c x^2`` per cell, so their E step is three matrix products
  (observed mask, values, squared values) and their M step's weighted sums three more; values are
  taken relative to the record's class mean (FAN) or the marginal mean (FM) so that nothing large
  cancels. Missing values have mask 0 and drop out.

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

import math
from dataclasses import dataclass, field

import numpy as np

from ..stats.logmath import logsumexp_np

__all__ = ["Design", "Params", "EMResult", "run_em", "one_component", "seeded_params"]

_LOG_2PI = math.log(2.0 * math.pi)


@dataclass
class Design:
    """Training (or prediction) records in the engine's layout.

    ``onehot`` is ``(n, R)``; ``block`` gives the feature of each one-hot column and ``r`` the
    number of columns (values seen in training) of each nominal feature. ``x`` holds the numeric
    values with missing ones set to 0 and ``obs`` says which are observed. ``y`` are class codes
    (``None`` for rows to predict).
    """

    onehot: np.ndarray
    x: np.ndarray
    obs: np.ndarray
    y: np.ndarray | None
    block: np.ndarray
    r: np.ndarray
    n_classes: int

    @property
    def n(self) -> int:
        return self.onehot.shape[0]


@dataclass
class Params:
    """Parameters of one fitted model with ``K`` components (all in log space where logs).

    ``log_theta`` is ``(cells, R)``, ``mean``/``var`` are ``(cells, q)`` and ``active`` (same
    shape, bool) marks the Gaussian factors that have data behind them (FAN: the class observed
    the feature at least once); inactive factors are skipped like missing values.
    ``log_class`` is ``(C,)`` for FAN (``p(C)``) and ``(K, C)`` for FM (``p(C | H)``).
    """

    log_weights: np.ndarray
    log_class: np.ndarray
    log_theta: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    active: np.ndarray

    @property
    def k(self) -> int:
        return self.log_weights.shape[0]


@dataclass
class EMResult:
    """One EM run: final parameters and the objective after every M step."""

    params: Params
    objective: list = field(default_factory=list)
    n_iter: int = 0


class Structure:
    """Which model the engine runs: FAN (``class_parent=True``) or FM (``False``), on which data.

    Holds what does not change during EM: the design, ``alpha``, the one-hot blocks, the
    features' marginal Gaussians (with ``eps``, the naive Bayes variance smoothing) and the
    numeric values in well-conditioned coordinates (see :meth:`gaussian_log`).

    Numeric parameters are kept relative to ``center`` (the training marginal means, or the
    ``center`` given, so that a previous fit's parameters can be evaluated on new data).
    """

    def __init__(self, design: Design, class_parent: bool, alpha: float, var_smoothing: float,
                 center: np.ndarray | None = None):
        self.d = design
        self.class_parent = class_parent
        self.alpha = float(alpha)
        # First column of each nominal feature's one-hot block.
        self._starts = np.concatenate([[0], np.cumsum(design.r)[:-1]]).astype(np.int64)
        self.y_onehot = np.zeros((design.n, design.n_classes))
        if design.y is not None:
            self.y_onehot[np.arange(design.n), design.y] = 1.0
        # Marginal Gaussian of every numeric feature, as NaiveBayes keeps it: eps is
        # var_smoothing times the marginal (population) variance; a feature with eps == 0
        # (never observed, or constant) carries no information and is skipped.
        obs = design.obs.astype(float)
        w = obs.sum(axis=0)
        wsafe = np.maximum(w, 1.0)
        mean = np.where(w > 0, design.x.sum(axis=0) / wsafe, 0.0)
        dev = np.where(design.obs, design.x - mean, 0.0)
        var = (dev * dev).sum(axis=0) / wsafe
        self.center = mean if center is None else center
        self.eps = var_smoothing * var
        active = self.eps > 0
        self.marginal = (
            (mean - self.center)[None, :], np.where(active, var + self.eps, 1.0)[None, :],
            active[None, :],
        )
        # Reference mean of every record: its class mean (FAN) or the marginal mean (FM).
        # Sums of squares and Gaussian log densities are computed relative to it, so that no
        # large numbers cancel (with one component the centred sums are exact two-pass sums).
        xc = self.centred(design.x, design.obs)
        if class_parent and design.y is not None:
            wc = self.y_onehot.T @ obs
            self.ref_mean = np.where(wc > 0, (self.y_onehot.T @ xc) / np.maximum(wc, 1.0), 0.0)
            self.xr = np.where(design.obs, xc - self.ref_mean[design.y], 0.0)
        else:
            self.ref_mean = np.zeros((1, xc.shape[1]))
            self.xr = xc
        self.xr2 = self.xr * self.xr

    def without_records(self) -> Structure:
        """A copy that keeps what prediction needs and drops the training arrays (memory)."""
        import copy

        out = copy.copy(self)
        d = self.d
        out.d = Design(onehot=d.onehot[:0], x=d.x[:0], obs=d.obs[:0], y=d.y[:0], block=d.block,
                       r=d.r, n_classes=d.n_classes)
        out.y_onehot, out.xr, out.xr2 = self.y_onehot[:0], self.xr[:0], self.xr2[:0]
        return out

    def centred(self, x: np.ndarray, obs: np.ndarray) -> np.ndarray:
        """Numeric values minus ``center``, 0 where missing."""
        return np.where(obs, x - self.center, 0.0)

    # ------------------------------------------------------------ layout

    def cells(self, k: int) -> np.ndarray:
        """``(n, K)`` cell of each training record and component."""
        comp = np.arange(k)
        if self.class_parent:
            return self.d.y[:, None] * k + comp[None, :]
        return np.broadcast_to(comp, (self.d.n, k))

    def ref_cells(self, k: int) -> np.ndarray:
        """Reference mean of every cell: its class's (FAN) or 0 (FM), ``(cells or 1, q)``."""
        return np.repeat(self.ref_mean, k, axis=0) if self.class_parent else self.ref_mean

    def spread(self, tau: np.ndarray) -> np.ndarray:
        """Responsibilities ``(n, K)`` placed in their cells: ``(n, cells)``."""
        if not self.class_parent:
            return tau
        n, k = tau.shape
        out = np.zeros((n, self.d.n_classes, k))
        out[np.arange(n), self.d.y] = tau
        return out.reshape(n, -1)

    def block_totals(self, counts: np.ndarray) -> np.ndarray:
        """Per-feature totals of ``(cells, R)`` counts, repeated over each feature's columns."""
        if counts.shape[1] == 0:
            return counts
        sums = np.add.reduceat(counts, self._starts, axis=1)
        return sums[:, self.d.block]

    # --------------------------------------------------------------- E step

    def gaussian_coefficients(self, p: Params, ref, jitter: bool):
        """Per-cell ``(a, b, c)`` with ``log N(x; mu, var) = a + b xr + c xr^2`` (eq. 7).

        ``xr`` is a value minus the reference mean ``ref`` of the cell; the terms are zero for
        inactive factors. With ``jitter`` the EM objective's ``-eps / (2 var)`` is included.
        """
        mu = p.mean - ref
        inv = np.where(p.active, 1.0 / p.var, 0.0)
        a = -0.5 * (_LOG_2PI + np.log(p.var) + mu * mu * inv)
        if jitter:
            a = a - 0.5 * self.eps * inv
        return np.where(p.active, a, 0.0), mu * inv, -0.5 * inv

    def joint(self, p: Params, jitter: bool) -> np.ndarray:
        """``(n, K)`` ``log p(c_l, x_l, h_k)`` of the training records."""
        d, k = self.d, p.k
        per_cell = d.onehot @ p.log_theta.T  # (n, cells); zeros without nominal columns
        if d.x.shape[1]:
            # Every record is shifted by its own class's reference mean (FAN) or none (FM);
            # the sums over features and records are three matrix products.
            a, b, c = self.gaussian_coefficients(p, self.ref_cells(k), jitter)
            per_cell = per_cell + d.obs.astype(float) @ a.T + self.xr @ b.T + self.xr2 @ c.T
        out = np.take_along_axis(per_cell, self.cells(k), axis=1) + p.log_weights[None, :]
        if self.class_parent:
            return out + p.log_class[d.y][:, None]  # eq. 12: p(C) outside the sum
        return out + p.log_class[:, d.y].T  # eq. 11: p(C | h_k) inside

    def log_joint_classes(self, p: Params, rows: Design) -> np.ndarray:
        """``(m, C)`` ``log p(c, x)`` of rows to predict: eq. 12 (FAN) or eq. 11 (FM)."""
        k, c = p.k, self.d.n_classes
        m = rows.n
        nominal = rows.onehot @ p.log_theta.T  # (m, cells)
        obs = rows.obs.astype(float)
        xc = self.centred(rows.x, rows.obs)
        if not self.class_parent:
            per = nominal + p.log_weights[None, :]
            if xc.shape[1]:
                a, b, cc = self.gaussian_coefficients(p, 0.0, False)
                per = per + obs @ a.T + xc @ b.T + (xc * xc) @ cc.T
            return logsumexp_np(per[:, :, None] + p.log_class[None, :, :], axis=1)
        per = nominal.reshape(m, c, k) + p.log_weights[None, None, :]
        if xc.shape[1]:
            q = xc.shape[1]
            a, b, cc = (t.reshape(c, k, q) for t in self.gaussian_coefficients(
                p, self.ref_cells(k), False))
            # The rows shifted by every class's reference mean: (m, C, q).
            xr = np.where(rows.obs[:, None, :], xc[:, None, :] - self.ref_mean[None, :, :], 0.0)
            per = per + (np.einsum("mq,ckq->mck", obs, a) + np.einsum("mcq,ckq->mck", xr, b)
                         + np.einsum("mcq,ckq->mck", xr * xr, cc))
        return p.log_class[None, :] + logsumexp_np(per, axis=2)

    # --------------------------------------------------------------- M step

    def m_step(self, tau: np.ndarray, floor, fallback: tuple | None) -> Params:
        """Parameters maximising the expected complete log posterior given ``tau`` (eq. 5, 7, 8).

        ``floor`` bounds the variances from below; ``fallback = (mean, var, active)`` per cell
        gives the Gaussians of cells without data (``None``: the features' marginal Gaussians,
        as naive Bayes does for a class that never observed a feature).
        """
        d, a = self.d, self.alpha
        n, k = tau.shape
        c = d.n_classes
        tc = self.spread(tau)  # (n, cells)
        nk = tau.sum(axis=0)
        log_weights = np.log((nk + a) / (n + a * k))
        if self.class_parent:
            nc = self.y_onehot.sum(axis=0)
            log_class = np.log((nc + a) / (n + a * c))
        else:
            nkc = tau.T @ self.y_onehot  # (K, C) expected counts of p(C | H)
            log_class = np.log((nkc + a) / (nk[:, None] + a * c))
        counts = tc.T @ d.onehot  # eq. 8 expected counts, (cells, R)
        log_theta = np.log(counts + a) - np.log(self.block_totals(counts) + a * d.r[d.block])
        mean, var, active = self._gaussians(tc, k, floor, fallback)
        return Params(log_weights, log_class, log_theta, mean, var, active)

    def _gaussians(self, tc, k, floor, fallback):
        """Weighted means and variances per cell (eq. 7 with expected counts, §2.3)."""
        d = self.d
        cells_n = tc.shape[1]
        if d.x.shape[1] == 0:
            empty = np.zeros((cells_n, 0))
            return empty, empty, empty.astype(bool)
        tct = np.ascontiguousarray(tc.T)
        w = tct @ d.obs.astype(float)  # (cells, q) expected number of observed values
        s1 = tct @ self.xr  # sums relative to the cells' reference means
        s2 = tct @ self.xr2
        has = w > 0
        wsafe = np.where(has, w, 1.0)
        mu = s1 / wsafe
        ss = np.maximum(s2 - s1 * mu, 0.0)  # centred sum of squares of the cell
        if fallback is None:
            fallback = self.marginal
        mean = np.where(has, mu + self.ref_cells(k), fallback[0])
        var = np.where(has, ss / wsafe + self.eps, fallback[1])
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

    def e_step(self, p: Params, hard: bool) -> tuple[float, np.ndarray]:
        """The objective at ``p`` and the responsibilities for the next M step (eq. 8 or 9).

        Soft: ``sum_l log sum_k exp(joint) + prior``; hard: ``sum_l max_k joint + prior``.
        """
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
        return float(data + self.log_prior(p)), tau


def one_component(s: Structure) -> Params:
    """The one-component fit: naive Bayes for FAN, the "no structure" model for FM.

    It is the closed-form M step with every responsibility 1, and the reference of the variance
    guard and of the Gaussians of empty cells.
    """
    return s.m_step(np.ones((s.d.n, 1)), 0.0, None)


def seeded_params(s: Structure, k: int, seeds: np.ndarray, ref: Params, floor) -> Params:
    """Starting parameters: component ``k`` centred on training record ``seeds[k]``.

    Nominal tables put half their mass on the seed's value and half on the one-component
    estimate; Gaussian means sit on the seed's values, variances at the one-component ones
    (k-modes-style seeding; the first M step follows at once).
    """
    d = s.d
    c = d.n_classes
    onehot_seed = d.onehot[seeds]  # (K, R)
    theta_ref = np.exp(ref.log_theta)  # (cells_ref, R): per class (FAN) or one row (FM)
    rep = np.repeat(theta_ref, k, axis=0)  # cell c*K + k gets its class's (FAN) row
    # seed k -> cells c*K + k
    seed_rows = np.tile(onehot_seed, (c, 1)) if s.class_parent else onehot_seed
    # A seed with a missing value keeps the reference distribution for that feature.
    has_seed = s.block_totals(seed_rows) > 0
    theta = np.where(has_seed, 0.5 * rep + 0.5 * seed_rows, rep)
    with np.errstate(divide="ignore"):
        log_theta = np.log(theta)
    mean = np.repeat(ref.mean, k, axis=0)
    var = np.maximum(np.repeat(ref.var, k, axis=0), floor)
    active = np.repeat(ref.active, k, axis=0)
    if d.x.shape[1]:
        reps = (c, 1) if s.class_parent else (1, 1)
        seed_x = s.centred(d.x[seeds], d.obs[seeds])
        mean = np.where(np.tile(d.obs[seeds], reps), np.tile(seed_x, reps), mean)
    log_class = ref.log_class if s.class_parent else np.repeat(ref.log_class, k, axis=0)
    return Params(np.full(k, -math.log(k)), log_class, log_theta, mean, var, active)


def run_em(s: Structure, tau0: np.ndarray, hard: bool, tol: float, max_iter: int,
           floor, fallback: tuple) -> EMResult:
    """EM (or classification EM) from responsibilities ``tau0`` until it stalls.

    Every iteration is an M step then an E step; the objective is recorded after every M step
    and EM stops when it gains less than ``tol`` times its magnitude, or after ``max_iter``
    M steps.
    """
    params = s.m_step(tau0, floor, fallback)
    history = []
    while True:
        obj, tau = s.e_step(params, hard)
        history.append(obj)
        if len(history) > 1 and history[-1] - history[-2] <= tol * abs(history[-1]):
            break
        if len(history) >= max_iter:
            break
        params = s.m_step(tau, floor, fallback)
    return EMResult(params=params, objective=history, n_iter=len(history))
