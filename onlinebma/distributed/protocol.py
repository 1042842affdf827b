"""How a learner joins :mod:`onlinebma.distributed`: the training protocol.

A learner that can be trained on Dask says how through one public method,
``distributed_plan()``, which returns a :class:`Plan`: how one partition is learned where it
lies, how the partial results of neighbouring partitions combine (in partition order), and how
the combined result becomes the learner. :func:`onlinebma.distributed.fit` drives a plan and
never looks inside a learner, so a new learner joins Dask by implementing
``distributed_plan`` in its own module, without editing this package.

This module imports neither Dask nor any learner: learners import :class:`MergePlan` from it.

:class:`MergePlan` is the plan of every learner with an exact ``merge``: each partition is
learned by a fresh clone (``learn_many``) and the partial learners are merged left to right.
"""

from __future__ import annotations

import copy

__all__ = ["MergePlan", "Plan"]


class Plan:
    """How one learner trains on the partitions of a frame.

    :func:`onlinebma.distributed.fit` calls :meth:`learn_partition` once per partition (where
    it lies, empty partitions included), :meth:`combine` on neighbouring partial results in
    partition order (in a tree), and :meth:`finish` once on the client. Partial results travel
    between workers, so they must pickle.
    """

    def learn_partition(self, X, y):
        """The partial result of one partition: ``X`` a pandas DataFrame of records, ``y``
        their labels (a Series of the same length, possibly empty)."""
        raise NotImplementedError

    def combine(self, partials: list):
        """One partial result from several, given in partition order."""
        raise NotImplementedError

    def finish(self, partial):
        """The trained learner from the partial result of the whole frame."""
        raise NotImplementedError


class MergePlan(Plan):
    """The plan of a learner with an exact ``merge``: learn each partition with a fresh clone,
    merge the partial learners in order, and merge the result into a copy of the learner the
    plan started from (so what it had learned already comes first)."""

    def __init__(self, model):
        self.model = model
        self.template = model.clone()

    def learn_partition(self, X, y):
        learner = self.template.clone()
        if len(X):
            learner.learn_many(X, y)
        return learner

    def combine(self, partials: list):
        out = partials[0]
        for other in partials[1:]:
            out = out.merge(other)
        return out

    def finish(self, partial):
        return copy.deepcopy(self.model).merge(partial)
