"""Model-selection scores for the number of mixture components (Monti & Cooper 1999, §2.1).

All four are approximations of ``log p(D | M)`` (higher is better), computed at the fitted
parameters ``theta`` of a model with ``d`` free parameters on ``N`` records:

- ``bic``: ``log p(D | theta) - d/2 log N`` (Schwarz).
- ``aic``: ``log p(D | theta) - d``.
- ``icl``: BIC plus ``sum_l log p(z_l | c_l, x_l, theta)`` for the most probable component
  ``z_l`` of every record: the BIC approximation of the integrated *classification* likelihood
  (Biernacki, Celeux & Govaert's ICL-BIC), which penalises components that overlap.
- ``cs``: Cheeseman–Stutz, ``log p(D' | M) + log p(D | theta) - log p(D' | theta)`` where
  ``D'`` is the data completed with expected counts of the hidden variable (eq. 8). The
  multinomial parts of ``log p(D' | M)`` are exact Dirichlet(alpha) marginal likelihoods; the
  Gaussian parts use their BIC approximation (the paper's prior on them, ``1/sigma^2``, is
  improper), so for numeric features CS reduces to the BIC penalty.

Free parameters (``C`` classes, ``K`` components, nominal features with ``r_i`` values seen,
``G`` numeric features that carry information):

- FAN: ``(C - 1) + (K - 1) + C K sum_i (r_i - 1) + 2 C K G``
- FM:  ``(K - 1) + K (C - 1) + K sum_i (r_i - 1) + 2 K G``
"""

from __future__ import annotations

import math

import numpy as np

from ..stats.dirichlet import log_dirichlet_marginal_np
from .arrays import Expected, Params
from .engine import Engine

__all__ = ["CRITERIA", "n_free_parameters", "scores_from_sums", "scores_many"]

CRITERIA = ("bic", "aic", "cs", "icl")


def n_free_parameters(s: Engine, p: Params) -> int:
    """Free parameters of the model (formulas in the module docstring)."""
    c, k = s.d.n_classes, p.k
    nominal = int((s.d.r - 1).sum())
    gauss = int(p.active.any(axis=0).sum()) if p.active.size else 0
    if s.class_parent:
        return (c - 1) + (k - 1) + c * k * nominal + 2 * c * k * gauss
    return (k - 1) + k * (c - 1) + k * nominal + 2 * k * gauss


def scores_many(s: Engine, params: list) -> list:
    """:func:`scores` of several parameter sets (one pass over the records for all of them
    when ``s`` runs over partitions)."""
    return [scores_from_sums(s, p, *sums) for p, sums in zip(params, s.sums_for_scores(params))]


def scores_from_sums(s: Engine, p: Params, loglik, best_post, e: Expected) -> dict:
    """The criteria from the sums of :meth:`EMEngine.score_sums
    <onlinebma.mixture.em.EMEngine.score_sums>` (summed over all training records)."""
    loglik = float(loglik) - s.log_jacobian  # numeric densities in original units
    d = n_free_parameters(s, p)
    log_n = math.log(s.n_total)
    bic = loglik - 0.5 * d * log_n
    icl = bic + float(best_post)
    return {
        "loglik": loglik,
        "n_params": d,
        "bic": bic,
        "aic": loglik - d,
        "icl": icl,
        "cs": loglik + _cheeseman_stutz_gap(s, p, e, log_n),
    }


def _cheeseman_stutz_gap(s: Engine, p: Params, e: Expected, log_n: float) -> float:
    """``log p(D' | M) - log p(D' | theta)`` for the data completed with the posteriors whose
    expected statistics are ``e``."""
    d, a = s.d, s.alpha
    counts = e.counts  # expected counts per cell and value, (cells, R)
    nk = e.nk
    if s.class_parent:
        class_counts = s.class_counts[None, :]
        log_class = p.log_class[None, :]
    else:
        class_counts = e.nkc
        log_class = p.log_class
    marginal = float(log_dirichlet_marginal_np(nk, a)) + float(
        log_dirichlet_marginal_np(class_counts, a).sum()
    )
    starts = np.concatenate([[0], np.cumsum(d.r)])
    for i in range(d.r.shape[0]):
        block = counts[:, starts[i]:starts[i + 1]]
        marginal += float(log_dirichlet_marginal_np(block, a).sum())
    complete = float(nk @ p.log_weights + (class_counts * log_class).sum()
                     + (counts * p.log_theta).sum())
    gauss = int(p.active.sum()) if p.active.size else 0  # Gaussian factors (2 parameters each)
    return marginal - complete - gauss * log_n
