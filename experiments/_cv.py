"""The one cross-validation helper of the reproductions: stratified k-fold splits.

Each class is dealt evenly over the ``k`` folds in random order (classes taken in the order of
their names, so the folds do not depend on the order of the labels), and each fold's training
rows come in random order, as Weka's ``Instances.trainCV`` shuffles them (the ISA paper ran
Weka's cross-validation; ISA's eq. 9 score depends on the order of the records, and several
UCI files are sorted by class). Classes rarer than ``k`` simply leave some folds without them.

>>> import numpy as np
>>> folds = stratified_folds(["a", "b", "a", "b", "a", "a"], 2, np.random.default_rng(0))
>>> sorted(np.bincount(folds).tolist())
[3, 3]
>>> [len(test) for _, test in cv_splits(["a", "b"] * 5, 5, np.random.default_rng(0))]
[2, 2, 2, 2, 2]
"""

from __future__ import annotations

import numpy as np

__all__ = ["cv_splits", "stratified_folds"]


def stratified_folds(y, k: int, rng) -> np.ndarray:
    """Fold number of every record: each class dealt evenly over ``k`` folds in random order."""
    y = np.asarray(y)
    folds = np.empty(len(y), dtype=int)
    offset = 0
    for label in sorted(set(y.tolist()), key=str):
        idx = rng.permutation(np.flatnonzero(y == label))
        folds[idx] = (offset + np.arange(idx.size)) % k
        offset += idx.size
    return folds


def cv_splits(y, k: int, rng):
    """``(training rows, test rows)`` of each fold of a stratified ``k``-fold cross-validation
    (training rows shuffled; module docstring)."""
    folds = stratified_folds(y, k, rng)
    for f in range(k):
        yield rng.permutation(np.flatnonzero(folds != f)), np.flatnonzero(folds == f)
