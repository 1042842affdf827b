"""Log-space arithmetic on plain floats (per-record paths) and numpy arrays (batch paths).

Per-record code must not call numpy or scipy: a scipy ``logsumexp`` on a short list costs
more than the rest of a naive Bayes update. These helpers use :mod:`math` only.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["log_add", "logsumexp", "logsumexp_np", "normalize_log"]


def log_add(a: float, b: float) -> float:
    """``log(exp(a) + exp(b))`` without overflow or underflow.

    >>> round(log_add(math.log(0.25), math.log(0.5)), 12) == round(math.log(0.75), 12)
    True
    >>> log_add(-math.inf, 3.0)
    3.0
    """
    if a < b:
        a, b = b, a
    if b == -math.inf:
        return a
    return a + math.log1p(math.exp(b - a))


def logsumexp(values) -> float:
    """``log(sum(exp(v)))`` over an iterable of floats; ``-inf`` for an empty one.

    >>> logsumexp([1000.0, 1000.0]) == 1000.0 + math.log(2)
    True
    """
    values = list(values)
    if not values:
        return -math.inf
    m = max(values)
    if m == -math.inf or m == math.inf:
        return m
    return m + math.log(sum(math.exp(v - m) for v in values))


def normalize_log(log_scores: dict) -> dict:
    """Turn unnormalised log scores ``{label: log p}`` into probabilities summing to 1.

    >>> normalize_log({"a": 0.0, "b": 0.0})
    {'a': 0.5, 'b': 0.5}
    >>> normalize_log({})
    {}
    """
    if not log_scores:
        return {}
    m = max(log_scores.values())
    exps = {k: math.exp(v - m) for k, v in log_scores.items()}
    total = sum(exps.values())
    return {k: e / total for k, e in exps.items()}


def logsumexp_np(a: np.ndarray, axis=None, keepdims: bool = False) -> np.ndarray:
    """Vectorised log-sum-exp that tolerates all ``-inf`` slices (returns ``-inf`` there).

    >>> float(logsumexp_np(np.array([0.0, 0.0])))  # doctest: +ELLIPSIS
    0.693147...
    """
    a = np.asarray(a, dtype=float)
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
    return out
