"""Dirichlet–multinomial log marginal likelihoods (Cooper & Herskovits 1992; Heckerman et al. 1995).

For one parent configuration ``j`` of a node with ``r`` states, counts ``N_jk`` and Dirichlet
hyperparameters ``alpha_jk``, the marginal likelihood is (eq. 8 of Dash & Cooper 2002)::

    Gamma(alpha_j) / Gamma(alpha_j + N_j) * prod_k Gamma(alpha_jk + N_jk) / Gamma(alpha_jk)

K2 sets every ``alpha_jk`` to one constant; BDeu sets ``alpha_jk = ess / (q r)`` for ``q``
parent configurations. The same quantity is the product of sequential predictive
probabilities ``(alpha_jk + N_jk) / (alpha_j + N_j)``, which is how the streaming learners
maintain it record by record.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

__all__ = ["log_dirichlet_marginal", "log_dirichlet_marginal_np"]


def log_dirichlet_marginal(counts, alpha: float) -> float:
    """Log marginal likelihood of one multinomial with a symmetric Dirichlet(alpha) prior.

    ``counts`` lists the counts of all ``r`` states (zeros included: they matter for the
    normaliser ``Gamma(r alpha)``).

    >>> round(math.exp(log_dirichlet_marginal([1, 0], 1.0)), 12)  # one draw, uniform prior
    0.5
    >>> round(math.exp(log_dirichlet_marginal([1, 1], 1.0)), 12)  # 1/2 * 1/3
    0.166666666667
    """
    counts = list(counts)
    total = sum(counts)
    a_tot = alpha * len(counts)
    out = math.lgamma(a_tot) - math.lgamma(a_tot + total)
    lga = math.lgamma(alpha)
    for n in counts:
        if n:
            out += math.lgamma(alpha + n) - lga
    return out


def log_dirichlet_marginal_np(counts: np.ndarray, alpha, axis: int = -1) -> np.ndarray:
    """Vectorised :func:`log_dirichlet_marginal` over the states on ``axis``.

    ``alpha`` is a scalar or an array broadcastable to ``counts`` (per-cell pseudo-counts).
    Returns one value per parent configuration (``counts`` with ``axis`` removed).

    >>> c = np.array([[1, 0], [1, 1]])
    >>> np.round(np.exp(log_dirichlet_marginal_np(c, 1.0)), 12)
    array([0.5       , 0.16666667])
    """
    counts = np.asarray(counts, dtype=float)
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), counts.shape)
    a_tot = alpha.sum(axis=axis)
    n_tot = counts.sum(axis=axis)
    cells = (gammaln(alpha + counts) - gammaln(alpha)).sum(axis=axis)
    return gammaln(a_tot) - gammaln(a_tot + n_tot) + cells
