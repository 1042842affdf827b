"""Where EM starts: random records as seeds, a split of a smaller fit, or a previous fit.

- :func:`seeded_params` (a fit without any earlier one): component ``k`` centred on a random
  training record (k-modes-style seeding).
- :func:`split_start` (a new number of components): the fit with ``K - 1`` components, its
  heaviest component split in two — the records it explains worse than its median record go to
  the new component. Deterministic, so a stream's fits do not depend on the seed through it.
- A refit starts each K from the responsibilities of today's records under the previous fit
  with the same ``K`` (``MixtureClassifier._fit_candidates``), so EM continues where it stopped.

Every start is turned into responsibilities ``(n, K)``; EM begins with an M step from them.
"""

from __future__ import annotations

import math

import numpy as np

from .arrays import Params
from .engine import Engine

__all__ = ["seeded_params", "split_parts", "split_start", "split_tau"]


def seeded_params(s: Engine, k: int, seeds: np.ndarray, ref: Params, floor) -> Params:
    """Starting parameters: component ``k`` centred on training record ``seeds[k]``.

    Nominal tables put half their mass on the seed's value and half on the one-component
    estimate; Gaussian means sit on the seed's values, variances at the one-component ones
    (k-modes-style seeding; the first M step follows at once).
    """
    d = s.d
    c = d.n_classes
    onehot_seed, x_seed, obs_seed = s.records(seeds)  # (K, R), (K, q), (K, q)
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
        seed_x = s.centred(x_seed, obs_seed)
        mean = np.where(np.tile(obs_seed, reps), np.tile(seed_x, reps), mean)
    log_class = ref.log_class if s.class_parent else np.repeat(ref.log_class, k, axis=0)
    return Params(np.full(k, -math.log(k)), log_class, log_theta, mean, var, active)


def split_start(joint: np.ndarray, hard: bool) -> np.ndarray:
    """Responsibilities ``(n, K)`` that split the heaviest component of a ``K - 1`` fit, from
    the records' log joints ``(n, K - 1)`` under it."""
    joint, best, tau = split_parts(joint, hard)
    j = int(tau.sum(axis=0).argmax())
    mine = best == j
    threshold = np.median(joint[mine, j]) if mine.any() else None
    return split_tau(joint, best, tau, j, threshold)


def split_parts(joint: np.ndarray, hard: bool) -> tuple:
    """``(joint, best, tau)`` of records under the ``K - 1`` fit, from their log joints
    ``joint``: the log joints, most probable components and responsibilities (the heaviest
    component is the one with the largest ``tau`` total over all records)."""
    best = joint.argmax(axis=1)
    if hard:
        tau = np.zeros_like(joint)
        tau[np.arange(joint.shape[0]), best] = 1.0
    else:
        tau = np.exp(joint - joint.max(axis=1, keepdims=True))
        tau /= tau.sum(axis=1, keepdims=True)
    return joint, best, tau


def split_tau(joint, best, tau, j: int, threshold) -> np.ndarray:
    """The split of component ``j``: its records whose log joint is below ``threshold`` (the
    median over all records whose most probable component is ``j``; ``None`` when there are
    none) move their responsibility of ``j`` to the new component."""
    mine = best == j
    worse = mine & (joint[:, j] < threshold) if threshold is not None else mine & False
    new = np.where(worse, tau[:, j], 0.0)
    tau[:, j] -= new
    return np.column_stack([tau, new])
