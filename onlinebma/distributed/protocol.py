"""How a learner joins :mod:`onlinebma.distributed`: the training protocol.

A learner that can be trained on Dask says how through one public method,
``distributed_plan()``, which returns a :class:`Plan`: how one partition is learned where it
lies, how the partial results of neighbouring partitions combine (in partition order), and how
the combined result becomes the learner. :func:`onlinebma.distributed.fit` drives a plan and
never looks inside a learner, so a new learner joins Dask by implementing
``distributed_plan`` in its own module, without editing this package.

``distributed_plan()`` is where a learner refuses what it cannot do on Dask exactly: it raises
before any partition is learned.

This module imports neither Dask nor any learner: learners import :class:`MergePlan` from it.

- :class:`MergePlan` is the plan of every learner with an exact ``merge``: each partition is
  learned by a fresh clone (``learn_many``) and the partial learners are merged left to right.
- A plan that needs several passes over the records where they lie (distributed EM, count
  tables after a pass that finds the coding: :mod:`onlinebma.mixture.distributed_em`,
  :mod:`onlinebma.order_mcmc.distributed_counts`) overrides :meth:`Plan.run`, which receives the
  frame's :class:`Partitions`, and reduces them with other plans as often as it needs.
- A learner whose state depends on the order of its records (it forgets) has no exact merge:
  :class:`~onlinebma.distributed.chain.ChainPlan` learns the partitions one after the other
  with one learner (:meth:`Partitions.chain`), exactly but without parallelism.

Examples
--------
A learner whose partial results are counts joins by returning a plan of its own:

>>> class CountPlan(Plan):
...     def learn_partition(self, X, y):
...         return y.value_counts().to_dict()
...     def combine(self, partials):
...         out = {}
...         for counts in partials:
...             for label, n in counts.items():
...                 out[label] = out.get(label, 0) + n
...         return out
...     def finish(self, partial):
...         return partial
>>> import pandas as pd
>>> plan = CountPlan()
>>> parts = [plan.learn_partition(pd.DataFrame({"a": [1, 2]}), pd.Series(["x", "y"])),
...          plan.learn_partition(pd.DataFrame({"a": [3]}), pd.Series(["x"]))]
>>> plan.finish(plan.combine(parts))
{'x': 2, 'y': 1}
"""

from __future__ import annotations

import copy

__all__ = ["MergePlan", "Partitions", "Plan"]


class Partitions:
    """The partitions of a frame where they lie, as a plan's :meth:`Plan.run` sees them.

    :func:`onlinebma.distributed.fit` gives a Dask implementation; a plan calls
    :meth:`reduce` once per pass over the records.
    """

    def reduce(self, plan: Plan):
        """``plan.learn_partition`` on every partition where it lies (empty ones included;
        an error names the partition), the partial results combined with ``plan.combine``
        in a tree, neighbours left to right: the partial result of the whole frame."""
        raise NotImplementedError

    def chain(self, plan, start):
        """``plan.continue_learning(learner, X, y)`` on every partition in order, one after
        the other where each lies (empty ones included; an error names the partition),
        starting from ``start``: the learner after the last partition
        (:class:`~onlinebma.distributed.chain.ChainPlan`)."""
        raise NotImplementedError


class Plan:
    """How one learner trains on the partitions of a frame.

    :func:`onlinebma.distributed.fit` calls :meth:`run`, which by default makes one pass:
    :meth:`learn_partition` once per partition (where it lies, empty partitions included),
    :meth:`combine` on neighbouring partial results in partition order (in a tree), and
    :meth:`finish` once on the client. Partial results travel between workers, so they must
    pickle; so must the plan, which is sent to the workers once.
    """

    def learn_partition(self, X, y):
        """The partial result of one partition: ``X`` a pandas DataFrame of records, ``y``
        their labels (a Series of the same length, possibly empty)."""
        raise NotImplementedError

    def learn_numbered(self, number: int, X, y):
        """The partial result of partition ``number`` (counted from 0 in the frame's order):
        :meth:`learn_partition` by default; a plan whose partial result depends on where the
        partition lies in the frame (its rows' positions) overrides this instead."""
        return self.learn_partition(X, y)

    def combine(self, partials: list):
        """One partial result from several, given in partition order."""
        raise NotImplementedError

    def finish(self, partial):
        """The trained learner from the partial result of the whole frame."""
        raise NotImplementedError

    def run(self, partitions: Partitions):
        """The trained learner: one pass over ``partitions``, then :meth:`finish`. A plan
        that needs several passes over the records overrides this."""
        return self.finish(partitions.reduce(self))


class MergePlan(Plan):
    """The plan of a learner with an exact ``merge``: learn each partition with a copy of the
    template (by default a fresh clone of the learner), merge the partial learners in order,
    and merge the result into a copy of the learner the plan started from (so what it had
    learned already comes first).

    Parameters
    ----------
    model
        The learner to start from (not modified).
    template : optional
        The learner each partition's copy starts from, ``None`` for ``model.clone()``: a
        learner given what the partitions must agree on (cut points fixed from a first pass
        over the frame, :mod:`.first_pass`).
    """

    def __init__(self, model, template=None):
        self.model = model
        self.template = model.clone() if template is None else template

    def __getstate__(self):
        # The workers need the template only: the learner itself stays on the client.
        return {**self.__dict__, "model": None}

    def learn_partition(self, X, y):
        learner = copy.deepcopy(self.template)
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
