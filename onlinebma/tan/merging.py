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
    hosts of the same kind): feature kinds, numeric cut points, counts and the record count.

    Numeric features must have equal cut points where both have them (a feature only one side
    has cut points for gets them in ``out``), and neither side may hold records kept for a
    feature without cut points (they would need the cut points of the merged learner, which
    neither has seen): both are refused, naming the feature, before anything changes. To merge
    learners of numeric streams, give them the same cut points first
    (:meth:`~onlinebma.tan.coding.RecordCoding.fix_numeric`, from a first pass over the data).
    """
    out._kinds.check_mergeable(other._kinds)
    mine, theirs = out._numbers, other._numbers
    for side in (mine, theirs):
        if side.pending.pending:
            f = side.pending.pending[0]
            raise ValueError(
                f"cannot merge: numeric feature {f!r} has no cut points yet ({len(side.pending)} "
                f"records kept for it); give both learners the same cut points first "
                f"(fix_numeric, e.g. from onlinebma.numeric.read_table on a first pass)")
    for f, grids in theirs.readings.items():
        if f in mine.readings and mine.readings[f] != grids:
            raise ValueError(
                f"cannot merge: numeric feature {f!r} was cut into different intervals; give "
                f"both learners the same cut points first (fix_numeric)")
    out._kinds.commit(other._kinds.kind)
    out._fix_and_replay({f: g for f, g in theirs.readings.items() if f not in mine.readings})
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
        unrelated clocks), and so are numeric features cut into different intervals or still
        without cut points (:func:`merge_codings`).
        """
        check_mergeable_with(self, other)
        self._refuse_forgetting("merge")
        other._refuse_forgetting("merge")
        out = copy.deepcopy(self)  # a failure below leaves self and other as they were
        out._merge_from(other)
        return out
