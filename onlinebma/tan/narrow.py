"""Plain-Python prediction of :class:`~onlinebma.tan.ModelAveragedTAN` for narrow records.

A record of a few features touches few counts (``L = 1 + 2m + 2m(m - 1)`` columns of
``record_columns`` per class for ``m`` observed features), so with a few classes the dozen
numpy calls of the array path (logs of the gathered counts, the class and single terms, the
``log Q`` matrix product, the edge vectors of the tree sums) cost more in per-call overhead
than their arithmetic. Up to :data:`onlinebma.tuning.NARROW_CELLS` gathered cells (classes x
columns x learners of a ``decay="auto"`` stack; the test is
:func:`~onlinebma.tan.record_sums.takes_narrow_terms`) the counts are read once with
``tolist`` and every term is formed in plain floats with ``math.log``; the tree sums of the
stack then take :meth:`~onlinebma.tan.record_sums.RecordTreeSums.python_sums` straight
from the edge lists when :func:`~onlinebma.tan.record_sums.choose_route` says
``"python"``, else the array paths. The results equal the array path's to rounding
(``tests/test_tan_narrow.py``).
"""

from __future__ import annotations

import math

import numpy as np

from .record_sums import choose_route

__all__ = ["narrow_predictions", "narrow_terms"]



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


def narrow_predictions(terms, t: int, codes, ids, prior, tables, units, l_pairs,
                       denominators):
    """``(jll, memos, denominators)`` of each of a stack of learners (one learner, or the
    members of ``decay="auto"``: equal layouts) for a record observing the features
    ``codes`` (``ids`` their pair ids, ``prior`` the column pseudo-counts per unit), as the
    array path computes them. ``terms``: the :class:`~onlinebma.tan.tree_terms.TreeTerms`;
    ``t`` the record count; per learner: ``tables`` its gathered counts (K lists of the
    ``L`` columns of ``record_columns``), ``units`` its scaled unit, ``l_pairs`` the list of
    its ``l`` over the record's pairs, and ``denominators`` its ``LT(l)`` over them if every
    learner has it current, else ``None`` (then they are computed and returned); any other
    constant per learner shifts its ``jll`` alike in every class (zeros: a caller that only
    normalises over the classes skips the denominators). ``jll`` is
    an array ``(K,)`` per learner, ``memo`` ``(log_q, lt)`` (lists by class)."""
    m = len(codes)
    prior = prior.tolist()
    out = []
    for rows, u in zip(tables, units):
        pr = prior if u == 1.0 else [a * u for a in prior]
        log_norm = math.log(terms.ess * u + sum(row[0] for row in rows))
        out.append(narrow_terms(rows, pr, log_norm, m))
    if m < 2:
        return [np.array(base) for base, _ in out], [(q, None) for _, q in out], denominators
    cached = denominators is not None
    sums = terms.sums
    per = len(out[0][0]) + (not cached)
    if choose_route(m, len(tables) * per, sums.forests) == "python":
        lep = sums.log_edge_prior if sums.forests else 0.0
        edges = []
        for l_r, (_, log_q) in zip(l_pairs, out):
            if lep:
                l_r = [a + lep for a in l_r]
            edges.extend([a + b for a, b in zip(l_r, q)] for q in log_q)
            if not cached:
                edges.append(l_r)
        lt = sums.python_sums(m, edges).reshape(len(tables), per)
    else:
        q = np.array([log_q for _, log_q in out])
        if not cached:
            q = np.concatenate([q, np.zeros((len(tables), 1, q.shape[-1]))], axis=1)
        lt = sums(codes.tobytes(), m, np.array(l_pairs)[:, None, :], q, t)
    lt = lt.tolist()
    if not cached:
        denominators = [lt_r.pop() for lt_r in lt]
    jll = [np.array([b + x - d for b, x in zip(base, lt_r)])
           for (base, _), lt_r, d in zip(out, lt, denominators)]
    return jll, [(log_q, lt_r) for (_, log_q), lt_r in zip(out, lt)], denominators
