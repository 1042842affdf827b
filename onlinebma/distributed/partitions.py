"""The frame's partitions on Dask: one pass of a plan, learned where they lie, combined in a tree.

:class:`DaskPartitions` implements :class:`~onlinebma.distributed.protocol.Partitions`: each
partition is split into records and labels and given to the plan's ``learn_partition`` on
whichever worker holds it, and the partial results are combined with the plan's ``combine`` in
a tree whose fan-in is ``split_every``. The tree keeps the partitions in order (each combine
takes neighbours left to right), so for :class:`~onlinebma.distributed.protocol.MergePlan`
the result has the labels, in the same order, and the predictions of ``learn_many`` on the
whole frame in partition order. Only partial results travel (for the naive Bayes family,
count tables and moments; for a batch learner, its stored records), and the plan, sent once.
:meth:`DaskPartitions.chain` instead learns the partitions one after the other, each task
taking the learner of the one before (:class:`~onlinebma.distributed.chain.ChainPlan`).
"""

from __future__ import annotations

import pandas as pd

from ._dask import require_dask
from .protocol import Partitions

__all__ = ["DaskPartitions", "tree"]


def tree(items: list, combine, split_every: int):
    """Delayed results combined in a tree of fan-in ``split_every``, neighbours left to right:
    ``combine(*neighbours)`` per task."""
    dask, _ = require_dask()
    while len(items) > 1:
        items = [dask.delayed(combine)(*items[i:i + split_every])
                 for i in range(0, len(items), split_every)]
    return items[0]


def split_partition(part, target: str, index: int) -> tuple:
    """``(X, y)`` of partition ``index``: a partition with records but no label column is
    refused, naming it (an empty one reads as no records and no labels)."""
    if target in part.columns:
        return part.drop(columns=[target]), part[target]
    if len(part):
        raise ValueError(f"partition {index} has no target column {target!r} "
                         f"(its columns: {list(part.columns)})")
    return part, pd.Series(index=part.index, dtype=object)


def _naming(index: int, learn, *args):
    """``learn(*args)`` on partition ``index``: a refused partition raises the learner's
    error with the partition's number in front."""
    try:
        return learn(*args)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"partition {index}: {exc}") from exc


def _learn(plan, part, target: str, index: int):
    """``plan.learn_numbered`` of partition ``index``."""
    X, y = split_partition(part, target, index)
    return _naming(index, plan.learn_numbered, index, X, y)


def _continue(plan, learner, part, target: str, index: int):
    """``plan.continue_learning`` of ``learner`` (the previous partitions') on partition
    ``index``."""
    X, y = split_partition(part, target, index)
    return _naming(index, plan.continue_learning, learner, X, y)


def _combine(plan, *partials):
    return plan.combine(list(partials))


class DaskPartitions(Partitions):
    """The partitions of a dask DataFrame with the label in column ``target``.

    ``parts`` are its delayed pandas partitions in order; ``split_every`` (≥ 2) the fan-in of
    every reduction tree.
    """

    def __init__(self, ddf, target: str, split_every: int):
        self.parts = list(ddf.to_delayed())
        self.target = target
        self.split_every = split_every

    def reduce(self, plan):
        dask, _ = require_dask()
        shared = dask.delayed(plan, traverse=False)  # one node of the graph, sent once
        level = [dask.delayed(_learn)(shared, part, self.target, i)
                 for i, part in enumerate(self.parts)]
        while len(level) > 1:
            level = [dask.delayed(_combine)(shared, *level[i:i + self.split_every])
                     for i in range(0, len(level), self.split_every)]
        (out,) = dask.compute(level[0])
        return out

    def chain(self, plan, start):
        dask, _ = require_dask()
        shared = dask.delayed(plan, traverse=False)  # one node of the graph, sent once
        learner = dask.delayed(start, traverse=False)
        for i, part in enumerate(self.parts):  # task i waits for task i - 1's learner
            learner = dask.delayed(_continue)(shared, learner, part, self.target, i)
        (out,) = dask.compute(learner)
        return out
