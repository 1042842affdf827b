"""Shared sufficient statistics and scores: the core every learner builds on.

- :mod:`~onlinebma.stats.logmath` — log-sum-exp and friends on plain floats and on numpy arrays.
- :mod:`~onlinebma.stats.dirichlet` — Dirichlet–multinomial log marginal likelihoods (K2, BDeu),
  scalar and vectorised.
- :mod:`~onlinebma.stats.gaussian` — streaming Gaussian moments, the Normal–Gamma marginal
  likelihood and the Student-t predictive.
- :mod:`~onlinebma.stats.numerics` — Gaussian constants, the sigmoid of log odds and the
  single-thread BLAS context shared by several learners.
- :mod:`~onlinebma.stats.pairs` — per-class pair counts (``PairCounts``), the sufficient
  statistic of the tree-augmented learners; :mod:`~onlinebma.stats.pair_ids` the coding of
  pairs (``pair_id``) and of their cells.
- :mod:`~onlinebma.stats.spanning` — sums over spanning trees and rooted forests and the
  probability of each edge, exact in log space (Kron reduction, positive terms only).
- :mod:`~onlinebma.stats.elimination` — the Kron-reduction kernels behind it (log, row-scaled
  float, plain Python) and the bounds under which the float ones are exact.
- :mod:`~onlinebma.stats.normal_wishart` — Normal–Wishart (BGe) statistics of numeric features:
  subset marginal likelihoods, Student-t predictives, pair edge terms and log Q.
- :mod:`~onlinebma.stats.directed_forests` — sums over directed rooted forests and trees
  (Tutte's matrix-tree theorem) and their edge probabilities, in log space, positive terms only.
- :mod:`~onlinebma.stats.mixed_forests` — the exact average over forest-augmented structures of
  nominal and numeric features from directed edge log weights.
"""

from .dirichlet import log_dirichlet_marginal, log_dirichlet_marginal_np
from .gaussian import GaussianMoments, NormalGammaPrior
from .logmath import log_add, logsumexp, logsumexp_np, normalize_log
from .normal_wishart import FullStatistics, MomentStatistics, NormalWishartPrior, PairStatistics
from .spanning import edge_probabilities, log_forest_sum, log_tree_sum

__all__ = [
    "FullStatistics",
    "MomentStatistics",
    "NormalWishartPrior",
    "PairStatistics",
    "GaussianMoments",
    "NormalGammaPrior",
    "edge_probabilities",
    "log_add",
    "log_dirichlet_marginal",
    "log_dirichlet_marginal_np",
    "log_forest_sum",
    "log_tree_sum",
    "logsumexp",
    "logsumexp_np",
    "normalize_log",
]
