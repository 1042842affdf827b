"""Averaging over the number of components by prequential evidence (the default ``criterion``).

The paper's criteria (BIC, AIC, Cheeseman–Stutz, ICL) score how well a K-component model
explains the *joint* distribution of class and features. With numeric features that take few
distinct values (River's Phishing stream: two or three values per feature) a Gaussian
component can sit on one value with a variance at the variance guard, so the joint likelihood
grows with every component while the predictions of the class get worse: those criteria then
pick the largest K and the model is confidently wrong on records no component explains.

A stream learner can score what it is asked to do instead. Every fit is followed by records it
has not seen; before the next refit, each candidate K's last fit predicts them, and its
**prequential log loss** (Dawid 1984, "Present position and potential developments: some
personal views: statistical theory: the prequential approach") accumulates::

    L_K = sum over records t of -log p_K(c_t | x_t, fit on the records before t's refit)

The candidates are then averaged with weights ``w_K ∝ prior(K) exp(-L_K)``: the weights of
Bayesian model averaging when each candidate's evidence is its prequential likelihood of the
classes. The prior puts half its mass on ``K = 1`` (naive Bayes for FAN: the hypothesis a
mixture has to beat) and spreads the other half evenly over ``K = 2..max_components``. The
learner adds every record to the evidence as it learns it, so the average is exactly the
Bayesian mixture of the candidates' prequential predictions, and its total log loss over a
stream is at most ``log 2`` nats more than that of the one-component model with the same refits
(``FAN(max_components=1)``), and at most ``log(2 (max_components - 1))`` more than any other
single K (the standard bound for Bayesian mixtures of predictors; with probabilities clipped as
below, up to the clipping).

A candidate K that did not exist at earlier fits (too few records for K components) inherits
the evidence of K - 1, from whose fit it is seeded by splitting a component. A fit without an
earlier fit to learn from (``fit(X, y)``, or the first fit of a stream) first fits the first half
of its records and scores the second half (the same evidence, one block).
"""

from __future__ import annotations

import math

import numpy as np

from ..stats.logmath import logsumexp_np

__all__ = ["Evidence", "LOG_LOSS_CLIP"]

#: Probabilities are clipped at this value when scored (as River's ``LogLoss`` does), so one
#: record no candidate expected cannot decide the average alone.
LOG_LOSS_CLIP = 1e-15


class Evidence:
    """Accumulated prequential log loss of every candidate number of components.

    >>> e = Evidence()
    >>> e.add({1: np.log([[0.9, 0.1], [0.8, 0.2]]), 2: np.log([[0.6, 0.4], [0.3, 0.7]])},
    ...       np.array([0, 1]))
    >>> e.cover([1, 2, 3])
    >>> round(e.losses[3], 6) == round(e.losses[2], 6)
    True
    >>> w = e.weights([1, 2, 3])
    >>> bool(w[2] > w[1]) and abs(sum(w.values()) - 1.0) < 1e-12
    True
    >>> Evidence().weights([1, 2, 3])  # the prior
    {1: 0.5, 2: 0.25, 3: 0.25}
    """

    def __init__(self):
        self.losses: dict = {}
        self.n_scored = 0

    def add(self, log_proba: dict, y: np.ndarray) -> None:
        """Score ``{K: (m, C) log p_K(c | x)}`` on class codes ``y`` (``-1``: a class the fit did
        not know, not scored)."""
        known = np.flatnonzero(y >= 0)
        if known.size == 0:
            return
        floor = math.log(LOG_LOSS_CLIP)
        for k, lp in log_proba.items():
            scored = np.clip(lp[known, y[known]], floor, 0.0)
            self.losses[k] = self.losses.get(k, 0.0) - float(scored.sum())
        self.n_scored += int(known.size)

    def cover(self, ks) -> None:
        """Give every candidate without evidence that of the next smaller one (or 0)."""
        for k in sorted(ks):
            if k not in self.losses:
                smaller = [j for j in self.losses if j < k]
                self.losses[k] = self.losses[max(smaller)] if smaller else 0.0

    def weights(self, ks) -> dict:
        """``{K: w_K}`` with ``w_K ∝ prior(K) exp(-L_K)`` over the candidates ``ks``."""
        ks = sorted(ks)
        larger = sum(1 for k in ks if k > 1)
        prior = [math.log(0.5 if larger else 1.0) if k == 1 else math.log(0.5 / larger)
                 for k in ks]
        log_w = np.array(prior) - np.array([self.losses.get(k, 0.0) for k in ks])
        w = np.exp(log_w - logsumexp_np(log_w))
        return dict(zip(ks, (float(v) for v in w / w.sum())))
