"""The first pass of every plan fitted from whole-frame statistics: the frame's coding.

A plan that fits a learner from sums or counts over the partitions (distributed EM,
:mod:`onlinebma.mixture.distributed_em`; count tables,
:mod:`onlinebma.order_mcmc.distributed_counts`) first needs the coding ``learn_many`` on the
whole frame would give (values and classes in order of first appearance, which columns have
missing values): :class:`CodingPlan` finds it in one pass, only the rows of first appearance
travelling. It only calls the learner's public ``clone`` and ``learn_many``: it knows no learner
family.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .protocol import Plan

__all__ = ["CodingPlan", "refuse_window"]


class CodingPlan(Plan):
    """The first pass of the plans fitted from whole-frame statistics (EM, count tables): a
    clone of the learner that has learned the frame's coding, and the partitions' sizes.

    Each partition is validated as ``learn_many`` would (the learner's errors, naming the
    feature or row) and gives the rows where a value or label first appears in it, or a
    column is first missing; in partition order these show every value in the order of first
    appearance, and which columns have missing values. :meth:`finish` has a clone learn them,
    so its features, kinds, values and classes are those of ``learn_many`` on the whole frame
    (its store holds the rows of first appearance only).
    """

    def __init__(self, template):
        self.template = template

    def learn_partition(self, X, y):
        if len(X):
            self.template.clone().learn_many(X, y)  # validation only
        first = _first(y)
        for column in X.columns:
            first = first | _first(X[column])
        return [len(X)], X[first], y[first]

    def combine(self, partials: list):
        return ([n for sizes, _, _ in partials for n in sizes],
                pd.concat([X for _, X, _ in partials]), pd.concat([y for _, _, y in partials]))

    def finish(self, partial) -> tuple:
        """``(coder, sizes)``: the clone that has learned the coding, and partition sizes."""
        sizes, X, y = partial
        if not sum(sizes):
            raise ValueError("the frame has no records to learn from")
        coder = self.template.clone()
        coder.learn_many(X, y)
        return coder, sizes


def _first(s) -> np.ndarray:
    """Rows of ``s`` where a value first appears, or the column is first missing."""
    na = s.isna()
    return ((~na & ~s.duplicated()) | (na & ~na.duplicated())).to_numpy()


def refuse_window(model) -> None:
    """A window is a stream setting: the plans of whole-frame statistics learn every record."""
    if model.window is not None:
        raise ValueError("a window is a stream setting; distributed.fit learns every record "
                         f"of the frame (got window={model.window})")
