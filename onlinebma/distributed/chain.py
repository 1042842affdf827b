"""A chain of partitions: one learner learns them one after the other, exactly, on Dask.

A learner whose state depends on the order of its records (one that forgets) has no exact
merge: two learners of two
halves of a frame cannot be combined into the learner of the whole. :class:`ChainPlan` trains
such a learner exactly by giving up parallelism: the partitions are learned in partition order
by one learner, a chain of Dask tasks in which task ``i`` takes the learner of partitions
``0..i-1`` and learns partition ``i`` where it lies (``learn_many``). Only the learner travels
from task to task; the records stay where they lie, so the chain is for frames larger than
memory and for learners that forget, not for speed (one partition is learned at a time).

A learner that cuts numeric features into intervals fixes its cut points from a sample of each
column of the table ``learn_many`` is given; learned in partitions, it would cut from the first
partition alone. The chain can therefore start with the first pass of
:mod:`.first_pass` (its steps 1-3: partition sizes and labels, each numeric column's sample
drawn at the partitions' offsets, exactly the sample ``learn_many`` on the whole frame draws),
and the learner's ``agree(learner, samples)`` fixes on the chain's first learner what
``learn_many`` on the whole frame would fix before its first record.

This module knows no learner family: a learner chooses the plan in its ``distributed_plan()``
(the tree-augmented learners, :class:`onlinebma.tan.merging.Merging`, when they forget).

Examples
--------
Two partitions held in memory (:func:`onlinebma.distributed.fit` gives Dask's): a learner that
forgets, learned in a chain, equals the learner of the whole frame.

>>> import copy
>>> import pandas as pd
>>> from onlinebma.distributed.protocol import Partitions
>>> from onlinebma.naive_bayes import NaiveBayes
>>> class InMemory(Partitions):
...     def __init__(self, parts):
...         self.parts = parts
...     def chain(self, plan, start):
...         for X, y in self.parts:
...             start = plan.continue_learning(start, X, y)
...         return start
>>> X = pd.DataFrame({"colour": list("rgbrgbrg")})
>>> y = pd.Series(list("ppqpqqpq"))
>>> start = NaiveBayes(decay=0.9)
>>> got = ChainPlan(start).run(InMemory([(X[:3], y[:3]), (X[3:], y[3:])]))
>>> one = NaiveBayes(decay=0.9)
>>> one.learn_many(X, y)
>>> bool((got.predict_proba_many(X) - one.predict_proba_many(X)).abs().max().max() < 1e-12)
True
>>> start.predict_proba_one({"colour": "r"})  # the learner given is not modified
{}
"""

from __future__ import annotations

import copy

from .first_pass import column_samples
from .protocol import Plan

__all__ = ["ChainPlan"]


class ChainPlan(Plan):
    """The plan of a learner whose state depends on the order of its records: the partitions
    learned in order by one learner (module docstring), after an optional first pass that
    agrees what the learner reads from numbers.

    Parameters
    ----------
    model
        The learner to start from (not modified): the result equals ``model`` followed by
        ``learn_many`` on the whole frame.
    kinds : FeatureKinds or None, default None
        Which columns the learner reads as numbers, for the first pass; ``None`` for no
        first pass (``agree`` must be ``None`` too).
    size : int, default 0
        The values of each numeric column the first pass's samples keep (the bound
        ``learn_many`` uses); read only with ``kinds``.
    agree : callable or None, default None
        ``agree(learner, samples) -> learner``: fix on ``learner`` (a copy of ``model``,
        which it may change in place) what ``learn_many`` on the whole frame would fix from
        ``samples`` (``{column: ColumnSample}`` of the frame's numeric columns with an
        observed value) before its first record, and return the learner the chain starts
        from. Called on the client only, and not at all when the frame has no numeric
        value.
    """

    def __init__(self, model, kinds=None, size: int = 0, agree=None):
        if (kinds is None) != (agree is None):
            raise ValueError("a chain's first pass needs both the feature kinds and agree")
        self.model = model
        self.kinds = kinds
        self.size = size
        self.agree = agree

    def __getstate__(self):
        # The workers need continue_learning only: the learner travels along the chain.
        return {**self.__dict__, "model": None}

    def continue_learning(self, learner, X, y):
        """A copy of ``learner`` after ``learn_many`` on one partition (``X`` a pandas
        DataFrame, ``y`` its labels, possibly empty). ``learner`` itself, the previous
        task's result, is left unchanged."""
        learner = copy.deepcopy(learner)
        if len(X):
            learner.learn_many(X, y)
        return learner

    def run(self, partitions):
        """The first pass if any (two reductions over ``partitions``), ``agree`` on a copy of
        the model, then the chain: the learner after every partition, in order."""
        learner = copy.deepcopy(self.model)
        if self.agree is not None:
            samples = column_samples(partitions, self.kinds, self.size)
            if samples:
                learner = self.agree(learner, samples)
        return partitions.chain(self, learner)
