"""Learners that merge exactly: learn each partition where it lies, merge in a tree.

Each partition is learned by a fresh copy of the learner (``learn_many``) on whichever worker
holds it, and the partial learners are combined with ``merge`` in a tree whose fan-in is
``split_every``. Only the learners travel: for the naive Bayes family, count tables and
moments, never records; for a batch learner (ISA, the order and mixture learners), its stored
records, which is what that learner is. The tree keeps the partitions in order (each merge
combines neighbours left to right), so the result has the labels, in the same order, and the
predictions of ``learn_many`` on the whole frame in partition order.
"""

from __future__ import annotations

import copy

from ._dask import require_dask


def check_mergeable(model):
    """Refuse a learner without an exact ``merge`` rather than train it approximately."""
    if not callable(getattr(model, "merge", None)) or not callable(
        getattr(model, "learn_many", None)
    ):
        raise TypeError(
            f"{type(model).__name__} cannot be trained on Dask: it has no exact merge "
            "(supported: the naive Bayes family and the batch learners of onlinebma.batch)"
        )


def _learn_partition(template, part, target, index):
    """A fresh copy of ``template`` that has learned partition ``index`` (empty ones included).

    A refused partition raises the learner's error with the partition's number in front.
    """
    learner = template.clone()
    if not len(part):
        return learner
    if target not in part.columns:
        raise ValueError(f"partition {index} has no target column {target!r} "
                         f"(its columns: {list(part.columns)})")
    try:
        learner.learn_many(part.drop(columns=[target]), part[target])
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"partition {index}: {exc}") from exc
    return learner


def _merge_in_order(*learners):
    """Merge neighbouring learners left to right (labels keep the partitions' order)."""
    out = learners[0]
    for other in learners[1:]:
        out = out.merge(other)
    return out


def fit_by_merge(model, ddf, target: str, split_every: int):
    """``model`` followed by every partition of ``ddf``, learned apart and merged in order."""
    dask, _ = require_dask()
    check_mergeable(model)
    template = model.clone()
    level = [dask.delayed(_learn_partition)(template, part, target, i)
             for i, part in enumerate(ddf.to_delayed())]
    while len(level) > 1:
        level = [dask.delayed(_merge_in_order)(*level[i:i + split_every])
                 for i in range(0, len(level), split_every)]
    (learned,) = dask.compute(level[0])
    return copy.deepcopy(model).merge(learned)
