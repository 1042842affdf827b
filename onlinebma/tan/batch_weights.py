"""Order-free weights of representations for batch learning (a prototype for
:class:`~onlinebma.tan.ModelAveragedTAN` at ``decay=1``; not used by the learners yet).

``ModelAveragedTAN()`` averages members that read numbers differently (MDL intervals and a
Gaussian per class) with dynamic-model-averaging weights: a recursion over the records in
order, ``π_r ∝ (π_r p_r(y | x))^β`` with β = 0.99, so the weights after a table depend on its
order (mostly on its last hundred records), the members cannot be merged once the weights
have moved, and ``learn_many`` goes row by row. The weights here depend on the table, not on
its order:

- **Folds by row position**: row ``i`` is in fold ``SplitMix64(i) mod K``
  (:func:`~onlinebma.numeric.sample.priorities`), so a Dask frame's partitions, knowing
  their offsets (:mod:`onlinebma.distributed.first_pass`), put every row in the fold
  ``learn_many`` on the whole table puts it in.
- **Cross-validated probabilities** (:func:`cross_validated_probabilities`): each row's
  probability of its label under each member trained on the other folds, ``P[i, r]``.
- **Stacking** (:func:`stacking_weights`, Breiman 1996; Yao, Vehtari, Simpson & Gelman
  2018): the weights on the simplex that maximise ``Σ_i log Σ_r w_r P[i, r]``, the
  cross-validated log score of the mixture itself (a concave problem, solved by the EM fixed
  point ``w_r ← mean_i w_r P[i, r] / Σ_s w_s P[i, s]``).
- **Evidence** (:func:`evidence_weights`, "pseudo-BMA"): ``w_r ∝ exp Σ_i log P[i, r]``, which
  with thousands of rows puts all the weight on one member.

Measured (a script outside the repository; K = 5; the MDL and Gaussian members of
``numeric="auto"``, both in the sequential learner and here with the MDL cut points of the
whole training table; 5 stratified folds of the small tables, adult shuffled with seed 0 and
split 20,000 / 12,561): test log loss of today's sequential weights / stacking / evidence /
the better single member:

========  ==========  ========  ========  =============
table     sequential  stacking  evidence  better member
========  ==========  ========  ========  =============
iris      0.0754      0.0684    0.0651    0.0651
glass     0.9542      0.8795    0.9542    0.9542
vowel     0.8549      0.3454    0.3747    0.3747
pima      0.5031      0.4837    0.5031    0.5031
adult     0.3151      0.3129    0.3151    0.3151
========  ==========  ========  ========  =============

Stacking is below the sequential weights on all five and below the better member on four;
the sequential weights follow the last hundred records (on vowel, whose rows are ordered by
speaker, they chose MDL, 0.93 alone, over the Gaussian, 0.37).

Examples
--------
Two members, one better on each half of the rows: stacking keeps both, at the zero of the
derivative of ``50 log(0.2 + 0.7 w) + 50 log(0.8 - 0.5 w)``, w = 0.46 / 0.7; the evidence
(50 log(0.9 · 0.3) against 50 log(0.2 · 0.8)) takes the first.

>>> import numpy as np
>>> P = np.array([[0.9, 0.2]] * 50 + [[0.3, 0.8]] * 50)
>>> bool(abs(stacking_weights(P)[0] - 0.46 / 0.7) < 1e-9)
True
>>> np.round(evidence_weights(P), 6).tolist()
[1.0, 0.0]
"""

from __future__ import annotations

import numpy as np

from ..forgetting import MIN_PROBABILITY
from ..numeric.sample import priorities
from ..stats.logmath import logsumexp_np
from ..validation import check_int

__all__ = ["cross_validated_probabilities", "evidence_weights", "folds_of",
           "stacking_weights"]


def folds_of(rows, n_folds: int = 5) -> np.ndarray:
    """The fold of each row: ``SplitMix64(row) mod n_folds``, a function of the row's position
    in the table alone.

    Parameters
    ----------
    rows : array-like of int
        Row positions in the table (non-negative).
    n_folds : int, default 5
        The number of folds (at least 2).

    Returns
    -------
    np.ndarray
        int64 fold numbers.

    Examples
    --------
    >>> folds = folds_of(np.arange(10_000))
    >>> np.bincount(folds).tolist()  # about a fifth in each
    [2005, 2032, 2011, 1972, 1980]
    >>> (folds_of(np.arange(6_000, 10_000)) == folds[6_000:]).all()  # a partition at its offset
    np.True_
    """
    check_int("n_folds", n_folds, 2)
    rows = np.asarray(rows, dtype=np.int64)
    if rows.size and rows.min() < 0:
        raise ValueError("rows must be non-negative row positions")
    return (priorities(rows, spread=True) % np.uint64(n_folds)).astype(np.int64)


def cross_validated_probabilities(makers, X, y, n_folds: int = 5) -> np.ndarray:
    """Each row's probability of its label under each member trained on the other folds.

    Parameters
    ----------
    makers : sequence of callable
        One per member: makes a fresh learner with ``learn_many`` and ``predict_proba_many``.
    X : pandas.DataFrame
        The table.
    y : pandas.Series
        Its labels, one per row.
    n_folds : int, default 5
        The number of folds (:func:`folds_of` of the row positions).

    Returns
    -------
    np.ndarray
        ``(len(X), len(makers))``; 0 where a member trained on the other folds never saw the
        row's label.
    """
    if len(X) != len(y):
        raise ValueError(f"X has {len(X)} rows but y has {len(y)}")
    folds = folds_of(np.arange(len(X)), n_folds)
    labels = np.asarray(y, dtype=object)
    out = np.zeros((len(X), len(makers)))
    for k in range(n_folds):
        held = folds == k
        if not held.any() or held.all():
            continue
        for r, make in enumerate(makers):
            model = make()
            model.learn_many(X[~held], y[~held])
            proba = model.predict_proba_many(X[held])
            column = {label: j for j, label in enumerate(proba.columns)}
            p = proba.to_numpy(dtype=float)
            out[held, r] = [p[i, column[label]] if label in column else 0.0
                            for i, label in enumerate(labels[held])]
    return out


def _log_probabilities(probabilities) -> np.ndarray:
    p = np.asarray(probabilities, dtype=float)
    if p.ndim != 2 or p.shape[1] < 1 or not p.shape[0]:
        raise ValueError("probabilities must be a (rows, members) array with rows")
    if (p < 0).any() or (p > 1).any() or np.isnan(p).any():
        raise ValueError("probabilities must lie in [0, 1]")
    return np.log(np.maximum(p, MIN_PROBABILITY))


def stacking_weights(probabilities, tol: float = 1e-12, max_iter: int = 100_000) -> np.ndarray:
    """The member weights that maximise the mixture's log score ``Σ_i log Σ_r w_r P[i, r]``.

    Parameters
    ----------
    probabilities : array-like
        ``(rows, members)``: each row's cross-validated probability of its label under each
        member (:func:`cross_validated_probabilities`), floored at 1e-300.
    tol : float, default 1e-12
        Stop when no weight moves by more than this.
    max_iter : int, default 100000
        At most this many EM steps.

    Returns
    -------
    np.ndarray
        The weights, non-negative, summing to 1; a function of the set of rows, not of their
        order (up to rounding).
    """
    log_p = _log_probabilities(probabilities)
    w = np.full(log_p.shape[1], 1.0 / log_p.shape[1])
    for _ in range(max_iter):
        with np.errstate(divide="ignore"):
            joint = np.log(w) + log_p  # (rows, members), log w_r P[i, r]
        share = np.exp(joint - logsumexp_np(joint, axis=1, keepdims=True))
        new = share.mean(axis=0)
        done = np.abs(new - w).max() <= tol
        w = new
        if done:
            break
    return w / w.sum()


def evidence_weights(probabilities) -> np.ndarray:
    """``w_r ∝ exp Σ_i log P[i, r]``: each member's cross-validated log score as its evidence.

    Parameters
    ----------
    probabilities : array-like
        ``(rows, members)`` as in :func:`stacking_weights`.

    Returns
    -------
    np.ndarray
        The weights, summing to 1.
    """
    total = _log_probabilities(probabilities).sum(axis=0)
    return np.exp(total - logsumexp_np(total))
