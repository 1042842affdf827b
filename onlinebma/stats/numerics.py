"""Numerical constants and guards shared by the learners.

- :data:`LOG_2PI` and :data:`VAR_SMOOTHING`, the Gaussian constant and variance smoothing of
  the naive Bayes family and of FAN/the finite mixture (FAN with one component is naive Bayes,
  so they must agree); :data:`LOG_PI`, of the Student-t predictive.
- :func:`log_sigmoid` and :func:`sigmoid`, the weight of one of two alternatives from their log
  odds: the arc weights of model-averaged naive Bayes and the weight of a model joining ISA's
  averaged set.
- :func:`single_blas_thread`, the context under which tall-and-thin matrix products run.
- :data:`RENORMALISE_ABOVE`, the scaled unit of a forgetting learner's counts (a record's
  weight, ``decay^-k``) past which the stored counts are multiplied back to records.

>>> round(sigmoid(0.0), 12), sigmoid(-800.0), sigmoid(800.0)
(0.5, 0.0, 1.0)
>>> log_sigmoid(-math.inf), log_sigmoid(math.inf)
(-inf, 0.0)
"""

from __future__ import annotations

import contextlib
import functools
import math

__all__ = ["LOG_2PI", "LOG_PI", "RENORMALISE_ABOVE", "VAR_SMOOTHING", "log_sigmoid", "sigmoid",
           "single_blas_thread"]

#: ``log(2 pi)``, the constant of every Gaussian log density.
LOG_2PI = math.log(2.0 * math.pi)
LOG_PI = math.log(math.pi)

#: A forgetting learner keeps its counts in a scaled unit worth ``decay^k`` records, so a
#: record costs no pass over them; once a record's weight ``decay^-k`` would pass this, every
#: count is renormalised (naive Bayes and tree-augmented learners, single and ``"auto"``).
RENORMALISE_ABOVE = 2.0 ** 128

#: Every Gaussian variance gets ``VAR_SMOOTHING`` times the feature's marginal variance added
#: (scikit-learn's ``GaussianNB`` default).
VAR_SMOOTHING = 1e-9


def log_sigmoid(d: float) -> float:
    """``log(1 / (1 + exp(-d)))`` without overflow, on plain floats."""
    if d == math.inf:
        return 0.0
    if d == -math.inf:
        return -math.inf
    if d >= 0:
        return -math.log1p(math.exp(-d))
    return d - math.log1p(math.exp(d))


def sigmoid(d: float) -> float:
    """``1 / (1 + exp(-d))`` without overflow, on plain floats."""
    if d >= 0:
        return 1.0 / (1.0 + math.exp(-d))
    e = math.exp(d)
    return e / (1.0 + e)


def single_blas_thread():
    """A context limiting numpy's BLAS to one thread, when threadpoolctl is installed.

    Tall and thin matrix products (records x values, records x components, models x records)
    gain nothing from BLAS threads and lose much on a busy machine (``python -m experiments
    bench-fan`` runs EM's expected-count products this way).
    Without threadpoolctl (a scikit-learn dependency) it does nothing.
    """
    controller = _blas_controller()
    if controller is None:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return contextlib.nullcontext()
    return controller.limit(limits=1, user_api="blas")


@functools.lru_cache(maxsize=1)
def _blas_controller():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover
        return None
    return ThreadpoolController()
