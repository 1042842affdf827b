"""A first pass that agrees, from the whole frame, what a learner reads from its numbers.

A learner that cuts numeric features into intervals fixes its cut points from a sample of each
column; learners that count parts of one frame merge exactly only if they cut with the same
points. :class:`SampledMergePlan` makes them agree before any partition is counted:

1. **Where each partition lies**: one pass gives the partitions' sizes (each partition's
   first row in the frame) and the frame's labels in order of first appearance.
2. **The samples**: one pass gives, per numeric column, its
   :class:`~onlinebma.numeric.sample.ColumnSample`: a :class:`~onlinebma.numeric.Sample` of
   at most ``size`` values whose rows have the smallest priorities, each a function of the row's
   position in the frame alone, so the partitions' samples merge (in a tree, in partition
   order) into exactly the sample of the whole column, as ``learn_many`` on the whole frame
   in memory draws it. Each partition is validated there as ``learn_many`` validates it (the
   learner's errors, naming the partition, the feature or the row), before anything is
   counted. At most ``size`` values per numeric column travel from each partition.
3. **Agreement**: the learner's ``agree(learner, samples)`` fixes what it reads on a copy of
   the learner the plan started from, and returns the template the partitions are counted
   with (a copy of the template per partition).
4. **Counting**: a :class:`~onlinebma.distributed.protocol.MergePlan` from that template: each
   partition counted where it lies, the partial learners merged in order, the result merged
   into the agreed copy.

The frame is read three times (sizes, samples, counts). This module knows no learner family: it
validates and reads a partition through :func:`onlinebma.reading.prepare_frame` with the
learner's :class:`~onlinebma.records.FeatureKinds`, and leaves the rest to ``agree``.

Examples
--------
Two partitions held in memory (:func:`onlinebma.distributed.fit` gives Dask's): the merged
sample of ``x`` is the sample of the whole column.

>>> import pandas as pd
>>> from onlinebma.numeric.sample import ColumnSample
>>> from onlinebma.records import FeatureKinds
>>> from onlinebma.distributed.protocol import Partitions
>>> class InMemory(Partitions):
...     def __init__(self, parts):
...         self.parts = parts
...     def reduce(self, plan):
...         return plan.combine([plan.learn_numbered(i, X, y)
...                              for i, (X, y) in enumerate(self.parts)])
>>> X = pd.DataFrame({"x": [None, 0.5, 2.0, 3.5, 1.0, 0.5], "colour": list("rgbrgb")})
>>> y = pd.Series(list("ppqpqq"))
>>> samples = column_samples(InMemory([(X[:2], y[:2]), (X[2:], y[2:])]), FeatureKinds(),
...                          size=3)
>>> list(samples), samples["x"].classes, samples["x"].first
(['x'], ('p', 'q'), 1)
>>> whole = ColumnSample.of_column(X["x"].to_numpy(float), pd.factorize(y)[0], ("p", "q"),
...                                size=3)
>>> samples["x"].sample.rows.tolist() == whole.sample.rows.tolist()
True
"""

from __future__ import annotations

import copy

import numpy as np

from ..numeric.sample import ColumnSample
from ..reading import coded_labels, factorize, prepare_frame
from ..records import NOMINAL
from .protocol import MergePlan, Plan

__all__ = ["ColumnSampling", "FrameLayout", "OffsetPass", "SampledMergePlan",
           "column_samples", "frame_layout"]


class FrameLayout(Plan):
    """Pass 1: ``(sizes, classes)``, the partitions' numbers of rows and the frame's labels in
    order of first appearance (the labels checked as ``learn_many`` checks them)."""

    def learn_partition(self, X, y):
        names, _ = coded_labels(X, y)
        return [len(X)], names

    def combine(self, partials: list):
        return ([n for sizes, _ in partials for n in sizes],
                list(dict.fromkeys(label for _, names in partials for label in names)))

    def finish(self, partial):
        return partial


class ColumnSampling(Plan):
    """Pass 2: ``{column: ColumnSample}`` of every numeric column with an observed value, in
    the frame's column order.

    Parameters
    ----------
    kinds : FeatureKinds
        The learner's feature kinds: which columns are numbers (not changed).
    size : int
        The values kept per column.
    offsets : list of int
        The first row of each partition in the frame.
    classes : list
        The frame's labels in order of first appearance (the samples' labels index them).
    """

    def __init__(self, kinds, size: int, offsets: list, classes: list):
        self.kinds = kinds
        self.size = size
        self.offsets = offsets
        self.classes = tuple(classes)

    def learn_numbered(self, number: int, X, y):
        columns, _, labels = prepare_frame(self.kinds, X, y)
        index = {label: j for j, label in enumerate(self.classes)}
        names, codes = factorize(labels)
        codes = np.array([index[name] for name in names], dtype=np.int64)[codes]
        samples = {f: ColumnSample.of_column(values, codes, self.classes, self.size,
                                             self.offsets[number])
                   for f, (kind, values, _) in columns.items() if kind != NOMINAL}
        return list(X.columns), samples

    def combine(self, partials: list):
        order, out = partials[0][0], {}
        for _, samples in partials:
            for f, sample in samples.items():
                out[f] = out[f].merge(sample) if f in out else sample
        return order, out

    def finish(self, partial):
        order, samples = partial
        return {f: samples[f] for f in order if f in samples}


def frame_layout(partitions) -> tuple:
    """``(offsets, classes)``: each partition's first row in the frame and the frame's labels
    in order of first appearance (pass 1 over ``partitions``, a
    :class:`~onlinebma.distributed.protocol.Partitions`)."""
    sizes, classes = FrameLayout().run(partitions)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()
    return offsets, classes


def column_samples(partitions, kinds, size: int, layout: tuple | None = None) -> dict:
    """``{column: ColumnSample}`` of the frame's numeric columns (passes 1 and 2 over
    ``partitions``, a :class:`~onlinebma.distributed.protocol.Partitions`; pass 1 skipped
    when its ``layout``, :func:`frame_layout`, is given)."""
    offsets, classes = frame_layout(partitions) if layout is None else layout
    return ColumnSampling(kinds, size, offsets, classes).run(partitions)


class OffsetPass(Plan):
    """One pass whose partial result of a partition depends on where its rows lie in the
    frame: ``learn(X, y, offset)`` per partition (``offset`` its first row's position),
    ``combine(partials)`` in partition order, the combined result returned as it is.

    Parameters
    ----------
    learn : callable
        ``learn(X, y, offset)``: the partial result of one partition (picklable: it is sent
        to the workers once).
    combine : callable
        ``combine(partials)``: one partial result from several, in partition order.
    offsets : list of int
        The first row of each partition in the frame (:func:`frame_layout`).
    """

    def __init__(self, learn, combine, offsets: list):
        self.learn = learn
        self.combine_partials = combine
        self.offsets = offsets

    def learn_numbered(self, number: int, X, y):
        return self.learn(X, y, self.offsets[number])

    def combine(self, partials: list):
        return self.combine_partials(partials)

    def finish(self, partial):
        return partial


class SampledMergePlan(MergePlan):
    """The plan of a learner with an exact ``merge`` once what it reads from numbers is agreed
    from the whole frame (module docstring). Its one-pass methods are
    :class:`~onlinebma.distributed.protocol.MergePlan`'s (no agreement: exact where the
    partitions need none); :meth:`run` makes the passes.

    Parameters
    ----------
    model
        The learner to start from (not modified).
    kinds : FeatureKinds
        Which columns it reads as numbers.
    size : int
        The values of each numeric column its sample keeps (the bound ``learn_many`` uses).
    agree : callable
        ``agree(learner, samples) -> template``: fix what ``learner`` (a copy of ``model``,
        changed in place) reads from ``samples`` (``{column: ColumnSample}``) and return the
        learner whose copies count the partitions; it raises where no agreement gives the
        learner of the whole frame. Called on the client only.
    """

    def __init__(self, model, kinds, size: int, agree):
        super().__init__(model)
        self.kinds = kinds
        self.size = size
        self.agree = agree

    def run(self, partitions):
        layout = frame_layout(partitions)
        samples = column_samples(partitions, self.kinds, self.size, layout)
        if not samples:
            return MergePlan(self.model).run(partitions)
        return self.run_agreed(partitions, samples, layout[0])

    def run_agreed(self, partitions, samples: dict, offsets: list):
        """Steps 3 and 4, once the first pass found numeric values (``samples``; ``offsets``
        each partition's first row in the frame): a plan that learns the partitions
        otherwise overrides this."""
        model = copy.deepcopy(self.model)
        template = self.agree(model, samples)
        return MergePlan(model, template).run(partitions)
