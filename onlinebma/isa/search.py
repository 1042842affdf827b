"""ISA's two-phase search for one test instance (Visweswaran & Cooper 2004, §3.4).

Models are antecedent sets ``A`` (tuples of feature columns, sorted). ``scores`` gives the log of
a model's eq. 9 score: ``scores.bounds([A])[0]`` is the score or, when records arrived since it was
computed, an upper bound on it (eq. 9 is a sum of log-probabilities, each at most 0, so a score
only falls as records are added), and ``scores.bounds(models)`` the same for several models
(scored together; ``scores.bounds(models, also)`` may score models of ``also`` in the same
pass, to be found cached later); ``scores.exact(A)`` says which; ``scores.refresh(models)``
brings scores up to date and returns them; ``scores.predict(models)`` gives the models' class
distributions (eq. 10) for the test instance; ``scores.keep(models)`` says which models the
next search will likely ask for (a hint to the cache, which changes no score).

The margin. A model whose score is more than ``margin`` nats below the best in ``R`` has less
than ``exp(-margin)`` of the best model's weight. Such a model is *negligible*: phase 1 still
counts it in ``R`` (as the paper's search does) but neither brings its score up to date nor
expands it, and it is left out of the average of eq. 8. The models that are not negligible are
found, scored and averaged exactly; the prediction differs from their average over all of
``R`` by at most ``(number of negligible models) * exp(-margin)`` per class probability. (The
descendants of negligible models are not searched: a child's score is not bounded by its
parent's, so what they could have contributed is not bounded.)
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from .. import tuning

__all__ = ["phase_one", "phase_two"]



def _weight_of_new(log_total: float, log_score: float) -> float:
    """``s / (W + s)`` from logs: the weight a model would get on joining ``R``."""
    d = log_total - log_score
    return 0.0 if d > 700.0 else 1.0 / (1.0 + math.exp(d))


def _children(A: tuple, observed: tuple, seen: set):
    """The children of ``A`` (one observed feature more) not in ``seen``, one by one."""
    for j in observed:
        if j not in A:
            child = tuple(sorted(A + (j,)))
            if child not in seen:
                yield child


def expand(A: tuple, observed: tuple, seen: set, scores, push, ahead: tuple | None = None):
    """Score and ``push((-score, child))`` each unseen child of ``A`` (one feature more).
    The unseen children of ``ahead`` (the model the search will most likely expand next)
    are scored in the same pass when one is needed, but neither pushed nor seen: the search
    finds their scores cached when it expands ``ahead`` (one scoring pass instead of two);
    they are listed only when a pass is needed."""
    children = list(_children(A, observed, seen))
    seen.update(children)
    also = () if ahead is None else _children(ahead, observed, seen)  # a lazy generator
    for child, score in zip(children, scores.bounds(children, also)):
        push((-score, child))


def phase_one(scores, observed: tuple, phase1_models: int, max_models: int, margin: float):
    """Best-first search by score from naive Bayes (§3.4, first phase).

    Returns ``R`` as ``[(log score, A)]`` in the order the models joined (for negligible
    models the score may be an upper bound), the queue of the models not in ``R`` as
    ``[(-log score or bound, A)]``, best first, and the set of models seen.
    """
    queue = [(-scores.bounds([()])[0], ())]
    seen = {()}
    R = []
    best = -math.inf
    while queue and len(R) < phase1_models:
        neg, A = heapq.heappop(queue)
        if -neg >= best - margin and not scores.exact(A):
            # An upper bound at the top: the exact score decides its place (lazy evaluation).
            # The bounds queued right behind it are brought up to date in the same call (a
            # record's terms cost about the same for one model as for a few dozen).
            top = [(neg, A)]
            while queue and len(top) < tuning.REFRESH_BATCH and -queue[0][0] >= best - margin:
                top.append(heapq.heappop(queue))
            stale = [B for _, B in top if not scores.exact(B)]
            exact = dict(zip(stale, scores.refresh(stale)))
            for neg_b, B in top:
                heapq.heappush(queue, (-exact[B], B) if B in exact else (neg_b, B))
            continue
        R.append((-neg, A))
        best = max(best, -neg)
        if len(R) == max_models:
            break  # nothing more can join R: the children would never be used
        if -neg >= best - margin:
            # The best queued model is expanded next unless a child of A beats it.
            ahead = queue[0][1] if (queue and len(R) + 1 < phase1_models
                                    and -queue[0][0] >= best - margin
                                    and scores.exact(queue[0][1])) else None
            expand(A, observed, seen, scores, lambda item: heapq.heappush(queue, item), ahead)
    queue.sort()  # best score first
    near = best - margin - tuning.KEEP_SLACK
    scores.keep([A for s, A in R if s >= near] + [A for neg, A in queue if -neg >= near])
    return R, queue, seen


def phase_two(R, queue, seen, scores, observed, threshold: float, room: int,
              expand_children: bool, n_classes: int):
    """Second phase (eqs. 11-12): ``R`` grown by at most ``room`` queued models, each time the
    one that changes ``g(R)`` the most, while that change exceeds ``threshold``.

    ``R`` are the models to average (exact scores). Returns them with the models added and
    their predictions, ``(len(R), K)``.
    """
    preds = scores.predict([A for _, A in R])
    logs = np.array([s for s, _ in R])
    log_total = float(np.logaddexp.reduce(logs))
    g = np.exp(logs - log_total) @ preds  # eq. 12
    # f(R, M) = s_M / (W + s_M) * max_k |P_M(k) - g(R)(k)| (eq. 11) is at most s_M / (W + s_M);
    # W only grows, so a queued model whose bound is already below the threshold can never be
    # chosen, and only the others need an exact score and a prediction.
    added = []
    cand, cand_logs, cand_preds = [], np.empty(0), np.empty((0, n_classes))
    scanned = 0
    while len(added) < room:
        # Bring in the queued models that could still pass (the queue is sorted by score).
        take = scanned
        while take < len(queue) and _weight_of_new(log_total, -queue[take][0]) > threshold:
            take += 1
        if take > scanned:
            new = [A for _, A in queue[scanned:take]]
            cand += new
            cand_logs = np.append(cand_logs, scores.refresh(new))
            cand_preds = np.vstack([cand_preds, scores.predict(new)])
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
            expand(A, observed, seen, scores, children.append)
            children.sort()
            queue = queue[:scanned] + list(heapq.merge(queue[scanned:], children))
    if added:
        R = R + [(s, A) for s, A, _ in added]
        preds = np.vstack([preds, [p for _, _, p in added]])
    return R, preds
