"""ISA's two-phase search for one test instance (Visweswaran & Cooper 2004, §3.4).

Models are antecedent sets ``A`` (tuples of feature columns, sorted); ``score(A)`` is the log of
the model's eq. 9 score and ``predict(models)`` the models' class distributions (eq. 10) for the
test instance.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

__all__ = ["phase_one", "phase_two"]


def _weight_of_new(log_total: float, log_score: float) -> float:
    """``s / (W + s)`` from logs: the weight a model would get on joining ``R``."""
    d = log_total - log_score
    return 0.0 if d > 700.0 else 1.0 / (1.0 + math.exp(d))


def expand(A: tuple, observed: tuple, seen: set, score, push):
    """Score and ``push((-score, child))`` each unseen child of ``A`` (one feature more)."""
    for j in observed:
        if j in A:
            continue
        child = tuple(sorted(A + (j,)))
        if child not in seen:
            seen.add(child)
            push((-score(child), child))


def phase_one(score, observed: tuple, phase1_models: int, max_models: int):
    """Best-first search by score from naive Bayes (§3.4, first phase).

    Returns ``R`` as ``[(log score, A)]`` in the order the models joined, the queue of scored
    models not in ``R`` as ``[(-log score, A)]``, best first, and the set of models seen.
    """
    queue = [(-score(()), ())]
    seen = {()}
    R = []
    while queue and len(R) < phase1_models:
        neg, A = heapq.heappop(queue)
        R.append((-neg, A))
        if len(R) == max_models:
            break  # nothing more can join R: the children would never be used
        expand(A, observed, seen, score, lambda item: heapq.heappush(queue, item))
    queue.sort()  # best score first
    return R, queue, seen


def phase_two(R, queue, seen, score, predict, observed, threshold: float, max_models: int,
              expand_children: bool, n_classes: int):
    """Second phase (eqs. 11-12): R grown by the queued models that change ``g(R)`` the most.

    Returns ``R`` (with the models added) and the models' predictions, ``(len(R), K)``.
    """
    preds = predict([A for _, A in R])
    logs = np.array([s for s, _ in R])
    log_total = float(np.logaddexp.reduce(logs))
    g = np.exp(logs - log_total) @ preds  # eq. 12
    # f(R, M) = s_M / (W + s_M) * max_k |P_M(k) - g(R)(k)| (eq. 11) is at most s_M / (W + s_M);
    # W only grows, so a queued model whose bound is already below the threshold can never be
    # chosen, and only the others need a prediction.
    added = []
    cand, cand_logs, cand_preds = [], np.empty(0), np.empty((0, n_classes))
    scanned = 0
    while len(R) + len(added) < max_models:
        # Bring in the queued models that could still pass (the queue is sorted by score).
        take = scanned
        while take < len(queue) and _weight_of_new(log_total, -queue[take][0]) > threshold:
            take += 1
        if take > scanned:
            new = queue[scanned:take]
            cand += [A for _, A in new]
            cand_logs = np.append(cand_logs, [-neg for neg, _ in new])
            cand_preds = np.vstack([cand_preds, predict([A for _, A in new])])
            scanned = take
        if not cand:
            break
        weight = 1.0 / (1.0 + np.exp(np.minimum(log_total - cand_logs, 700.0)))
        f = weight * np.abs(cand_preds - g).max(axis=1)
        best = int(np.argmax(f))
        if not f[best] > threshold:
            break
        w, A, p = weight[best], cand.pop(best), cand_preds[best]
        g = (1.0 - w) * g + w * p
        log_total = float(np.logaddexp(log_total, cand_logs[best]))
        added.append((float(cand_logs[best]), A, p))
        cand_logs = np.delete(cand_logs, best)
        cand_preds = np.delete(cand_preds, best, axis=0)
        if expand_children:
            children = []
            expand(A, observed, seen, score, children.append)
            children.sort()
            queue = queue[:scanned] + list(heapq.merge(queue[scanned:], children))
    if added:
        R = R + [(s, A) for s, A, _ in added]
        preds = np.vstack([preds, [p for _, _, p in added]])
    return R, preds
