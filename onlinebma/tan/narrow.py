"""Plain-Python prediction of :class:`~onlinebma.tan.ModelAveragedTAN` for narrow records.

A record of a few features touches few counts (``L = 1 + 2m + 2m(m - 1)`` columns of
``record_columns`` per class for ``m`` observed features), so with a few classes the dozen
numpy calls of the array path (logs of the gathered counts, the class and single terms, the
``log Q`` matrix product, the edge vectors of the tree sums) cost more in per-call overhead
than their arithmetic. Below :data:`NARROW_CELLS` gathered cells (classes x columns x
learners of a ``decay="auto"`` stack) the counts are read once with ``tolist`` and every
term is formed in plain floats with ``math.log``; the tree sums of the stack then take
:meth:`~onlinebma.tan.record_sums.RecordTreeSums.python_sums` straight from the edge lists
when their work is small enough (``B g^3 <= BASIS_WORK``), else the array paths. The
results equal the array path's to rounding (``tests/test_tan_narrow.py``).
"""

from __future__ import annotations

import math

import numpy as np

from .record_sums import BASIS_WORK

__all__ = ["NARROW_CELLS", "NarrowRecords", "narrow_terms"]

# Gathered cells (K x L x learners) up to which the plain-Python terms cost less than the
# array path (``python -m experiments.tan_paths --narrow``: docs/tan.md, *Speed*).
NARROW_CELLS = 64


def narrow_terms(rows, prior, log_norm: float, m: int):
    """``(base, log_q)`` of one learner's gathered counts ``rows`` (K lists of the ``L``
    columns of ``record_columns``), ``prior`` their pseudo-counts in the learner's unit and
    ``log_norm`` = log(ess + N): per class the class and single terms
    ``log θ_c + Σ_v log θ_{x_v|c}`` and the list of ``log Q_c(x)_uv`` in triu order."""
    log = math.log
    p = m * (m - 1) // 2
    s = 1 + 2 * m
    base, log_q = [], []
    for row in rows:
        lg = [log(a + n) for a, n in zip(prior, row)]
        base.append(lg[0] + sum(lg[1:1 + m]) - sum(lg[1 + m:s]) - log_norm)
        log_q.append([j - a - b + c for j, a, b, c in
                      zip(lg[s:s + p], lg[s + p:s + 2 * p], lg[s + 2 * p:s + 3 * p],
                          lg[s + 3 * p:])])
    return base, log_q


class NarrowRecords:
    """Mixin of :class:`~onlinebma.tan.ModelAveragedTAN`: its predictions of narrow records
    in plain floats (module docstring)."""

    def _narrow_predictions(self, learners, codes, ids, prior, columns):
        """``[(jll, memo)]`` of each of ``learners`` (this learner alone, or the members of a
        ``decay="auto"`` stack: clones with equal layouts) for a record observing the
        features ``codes`` (``ids`` their pair ids, ``prior`` the column pseudo-counts per
        unit, ``columns`` from ``record_columns``), as the array path computes them: each
        learner's cached denominator ``LT(l)`` is used if all are current, else all are
        recomputed and cached; ``memo`` is ``(log_q, lt)`` (lists by class)."""
        m = len(codes)
        prior = prior.tolist()
        terms = []
        for learner in learners:
            rows = learner._counts.counts_.take(columns, axis=1).tolist()
            u = learner._unit
            pr = prior if u == 1.0 else [a * u for a in prior]
            log_norm = math.log(self.ess * u + sum(row[0] for row in rows))
            terms.append(narrow_terms(rows, pr, log_norm, m))
        if m < 2:
            return [(np.array(base), (log_q, None)) for base, log_q in terms]
        key = codes.tobytes()
        cached = all(d is not None and d[0] == key
                     for d in (learner._denominator for learner in learners))
        l_pairs = [learner._l.take(ids).tolist() for learner in learners]
        sums = self._sums
        per = len(terms[0][0]) + (not cached)
        if len(learners) * per * (m + sums.forests) ** 3 <= BASIS_WORK:
            lep = sums.log_edge_prior if sums.forests else 0.0
            edges = []
            for l_r, (_, log_q) in zip(l_pairs, terms):
                if lep:
                    l_r = [a + lep for a in l_r]
                edges.extend([a + b for a, b in zip(l_r, q)] for q in log_q)
                if not cached:
                    edges.append(l_r)
            lt = sums.python_sums(m, edges).reshape(len(learners), per)
        else:
            q = np.array([log_q for _, log_q in terms])
            if not cached:
                q = np.concatenate([q, np.zeros((len(learners), 1, q.shape[-1]))], axis=1)
            lt = sums(key, m, np.array(l_pairs)[:, None, :], q, self._t)
        lt = lt.tolist()
        out = []
        for learner, (base, log_q), lt_r in zip(learners, terms, lt):
            if not cached:
                learner._denominator = (key, lt_r.pop())
            d = learner._denominator[1]
            out.append((np.array([b + t - d for b, t in zip(base, lt_r)]), (log_q, lt_r)))
        return out
