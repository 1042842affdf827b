"""The weights of ``decay="auto"`` written out from their definition (docs/tan.md, *How fast
the weights move*), in plain loops and independently of :mod:`onlinebma.forgetting`: the tests
that run a shared state against separate learners weigh the learners with this.

For each β of ``AUTO_FORGETTINGS`` a weight ``π_{β,m}`` per member and a weight ``ω_β``; at a
learned record whose label the members know, with ``p_m`` member ``m``'s probability of it
(floored at 1e-300), ``ω_β ← (ω_β Σ_m π_{β,m} p_m)^α`` and ``π_{β,m} ← (π_{β,m} p_m)^β``,
each normalised; for a new label only the powers. A prediction weighs member ``m`` by
``Σ_β ω_β π_{β,m}``.
"""

from __future__ import annotations

import math

from onlinebma.forgetting import AUTO_FORGETTINGS, BETA_FORGETTING

FLOOR = 1e-300


def _normalised(values: list) -> list:
    total = sum(values)
    return [v / total for v in values]


class WrittenOutWeights:
    """The weights of ``n`` members, starting from ``start`` (equal weights by default), kept
    as logs (a long stream's weights underflow)."""

    def __init__(self, n: int, start=None):
        start = _normalised(list(start)) if start is not None else [1.0 / n] * n
        self.log_pi = {b: [math.log(w) for w in start] for b in AUTO_FORGETTINGS}
        self.log_omega = {b: -math.log(len(AUTO_FORGETTINGS)) for b in AUTO_FORGETTINGS}

    def update(self, p_true) -> None:
        """One record: ``p_true`` the members' probabilities of its label, or ``None`` for a
        label they have not seen."""
        log_pi, log_omega = dict(self.log_pi), dict(self.log_omega)
        if p_true is not None:
            log_p = [math.log(max(q, FLOOR)) for q in p_true]
            for b in AUTO_FORGETTINGS:
                log_omega[b] += _log_sum([lw + lp for lw, lp in zip(log_pi[b], log_p)])
                log_pi[b] = [lw + lp for lw, lp in zip(log_pi[b], log_p)]
        self.log_pi = {b: _log_normalised([b * lw for lw in log_pi[b]])
                       for b in AUTO_FORGETTINGS}
        log_omega = _log_normalised([BETA_FORGETTING * log_omega[b] for b in AUTO_FORGETTINGS])
        self.log_omega = dict(zip(AUTO_FORGETTINGS, log_omega))

    def weights(self) -> list:
        """Each member's weight in the next prediction, ``Σ_β ω_β π_{β,m}``."""
        n = len(self.log_pi[AUTO_FORGETTINGS[0]])
        return [sum(math.exp(self.log_omega[b] + self.log_pi[b][m]) for b in AUTO_FORGETTINGS)
                for m in range(n)]

    def beta_posterior(self) -> dict:
        return {b: math.exp(lo) for b, lo in self.log_omega.items()}


def _log_sum(log_values: list) -> float:
    top = max(log_values)
    return top + math.log(sum(math.exp(v - top) for v in log_values))


def _log_normalised(log_values: list) -> list:
    norm = _log_sum(log_values)
    return [v - norm for v in log_values]
