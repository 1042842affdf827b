"""Merging tree-augmented learners: the counts add, exactly.

:class:`Merging` gives the tree-augmented learners their ``merge`` (two learners into one
equal to a learner trained on both streams) and their ``distributed_plan`` (how
:func:`onlinebma.distributed.fit` trains them on Dask: partitions learned by clones and merged
in order). Learners that forget are refused: their counts weigh records by age on two
unrelated clocks. :func:`merge_codings` adds one coded state to another (feature kinds,
numeric intervals, counts): :class:`~onlinebma.tan.base.BaseTAN` and
:class:`~onlinebma.tan.members.TreeMemberStack` merge through it.
"""

from __future__ import annotations

import copy

from ..distributed.protocol import MergePlan
from ..validation import check_mergeable_with

__all__ = ["Merging", "merge_codings"]


def merge_codings(out, other) -> None:
    """Add ``other``'s records to ``out`` (two :class:`~onlinebma.tan.coding.RecordCoding`
    hosts of the same kind): feature kinds, numeric intervals, counts and the record count.
    Numeric features cut into different intervals are refused before anything changes."""
    out._kinds.check_mergeable(other._kinds)
    out._kinds.commit(other._kinds.kind)
    for f, b in other._bins.items():
        mine = out._bins.get(f)
        if mine is None:
            out._bins[f] = copy.deepcopy(b)
        else:
            had = mine.cuts is not None
            mine.merge(b, f)
            if mine.cuts is not None and not had and b.cuts is None:
                out._register_bins(f, mine)
    out._counts.merge(other._counts)
    out._t += other._t


class Merging:
    """``merge`` and ``distributed_plan`` of the tree-augmented learners (a mixin: the host
    says whether it ``_forgets`` and adds another learner's records to itself in
    ``_merge_from``)."""

    def _refuse_forgetting(self, what: str) -> None:
        if self._forgets:
            raise ValueError(
                f"cannot {what} {type(self).__name__} learners that forget (decay or "
                f"structure_decay other than 1.0): records of two streams have no common age; "
                f"train one learner on the interleaved stream instead"
            )

    def distributed_plan(self) -> MergePlan:
        """How :func:`onlinebma.distributed.fit` trains this learner on Dask: partitions
        learned by clones where they lie and merged in order (exact: the counts add). A
        learner that forgets is refused here, before any partition is learned."""
        self._refuse_forgetting("train on Dask")
        return MergePlan(self)

    def merge(self, other):
        """A new learner equal to one trained on both learners' streams.

        Both must be the same class with the same hyperparameters; the counts add up. The
        result's labels, features and values are coded as first seen by ``self``, then
        ``other``. Learners that forget are refused (their counts weigh records by age on two
        unrelated clocks), and so are numeric features cut into different intervals.
        """
        check_mergeable_with(self, other)
        self._refuse_forgetting("merge")
        other._refuse_forgetting("merge")
        out = copy.deepcopy(self)  # a failure below leaves self and other as they were
        out._merge_from(other)
        return out
