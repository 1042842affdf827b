"""Merging tree-augmented learners: the counts add, exactly.

:class:`Merging` gives the tree-augmented learners their ``merge`` (two learners into one
equal to a learner trained on both streams) and their ``distributed_plan`` (how
:func:`onlinebma.distributed.fit` trains them on Dask, exactly: a first pass agrees the numeric
features' cut points from the whole frame; then a learner whose counts add has its partitions
counted by copies of the agreed learner and merged in order, :func:`agree_numbers`, and a
learner whose state depends on the order of the records, one that forgets, learns the
partitions one after the other, :func:`agree_before_chain`; ``ModelAveragedTAN``'s
``numeric="auto"`` or a tuple of several representations, whose ``learn_many`` weighs them
by stacking, has its folds counted in parallel, :class:`StackingPlan`). ``merge`` refuses
learners that forget: their counts weigh records by age on two unrelated clocks.
:meth:`~onlinebma.tan.coding.RecordCoding.merge` adds one coded state to another
(feature kinds, numeric intervals, counts): :class:`~onlinebma.tan.base.BaseTAN` and
:class:`~onlinebma.tan.members.TreeMemberStack` merge through it.
"""

from __future__ import annotations

import copy

import numpy as np

from ..distributed.chain import ChainPlan
from ..distributed.first_pass import OffsetPass, SampledMergePlan, column_samples, frame_layout
from ..numeric.sample import TABLE_SAMPLE_SIZE
from ..records import FeatureKinds
from ..validation import check_mergeable_with
from .gaussian import GAUSSIANS
from .gaussian_forests import GAUSSIAN_FORESTS

__all__ = ["Merging", "StackingPlan", "agree_before_chain", "agree_numbers"]


def refuse_forgetting(learner, what: str) -> None:
    """A ``ValueError`` if ``learner`` forgets (its ``decay``, or ``structure_decay`` where it
    has one, other than 1): records of two streams have no common age."""
    if learner.decay != 1 or getattr(learner, "structure_decay", 1.0) != 1:
        raise ValueError(
            f"cannot {what} {type(learner).__name__} learners that forget (decay or "
            f"structure_decay other than 1.0): records of two streams have no common age; "
            f"train one learner on the interleaved stream instead"
        )


class Merging:
    """``merge`` and ``distributed_plan`` of the tree-augmented learners (a mixin: the host
    says whether it ``_forgets`` and adds another learner's records to itself in
    ``_merge_from``)."""

    def distributed_plan(self) -> SampledMergePlan | ChainPlan:
        """How :func:`onlinebma.distributed.fit` trains this learner on Dask, exactly: a first
        pass samples every numeric column of the whole frame as ``learn_many`` on it would
        (:mod:`onlinebma.distributed.first_pass`), then

        - a learner that forgets nothing and has one representation of the numbers:
          :func:`agree_numbers` fixes the cut points from those samples, and the partitions
          are counted where they lie, in parallel, by copies of the agreed learner and merged
          in order (the counts and the Gaussian statistics add);
        - ``ModelAveragedTAN(numeric="auto")``, ``numeric=`` a tuple of several names
          (:class:`~onlinebma.tan.grid_stack.GridStack`) or AODE members (``aode=True``)
          that forgets nothing (several members, weighed by stacking in ``learn_many``):
          :class:`StackingPlan`, the same first pass, then the partitions' fold states
          counted in parallel and merged per fold, each partition's cross-validated
          probabilities under the merged complements, and the stacking weights of all
          rows, on the client (a frame without
          numeric values, whose members predict alike, is merged as above);
        - a learner that forgets (``decay`` or ``structure_decay`` other than 1), whose state
          depends on the order of the records: :func:`agree_before_chain` fixes the cut
          points on the learner, which then learns the partitions one after the other
          (:class:`~onlinebma.distributed.chain.ChainPlan`: exact, but one partition at a
          time). A learner that cuts no numbers (``numeric="Gaussian"``) has nothing to
          agree and skips the first pass.

        ``numeric="Gaussian forests"`` that forgets nothing is refused (a ValueError, before
        any partition is read): its statistics are laid out by the order in which a learner
        meets the classes and nominal values, which differs between partitions."""
        kinds = FeatureKinds(self.nominal_attributes, self.numeric_attributes)
        representations = self.representations
        if self._forgets:
            return ChainPlan(self) if set(representations) <= set(GAUSSIANS) else \
                ChainPlan(self, kinds, TABLE_SAMPLE_SIZE, agree_before_chain)
        if GAUSSIAN_FORESTS in representations:
            raise ValueError(
                "distributed.fit cannot train numeric='Gaussian forests' without forgetting: "
                "its statistics are laid out by the order in which each partition meets the "
                "classes and nominal values, so the partitions' learners do not merge; use "
                "learn_many on the whole frame, or numeric='auto' or 'Gaussian' on Dask")
        if self.weighs_members:
            return StackingPlan(self, kinds, TABLE_SAMPLE_SIZE, agree_before_chain)
        return SampledMergePlan(self, kinds, TABLE_SAMPLE_SIZE, agree_numbers)

    def merge(self, other):
        """A new learner equal to one trained on both learners' streams.

        Both must be the same class with the same hyperparameters; the counts add up. The
        result's labels, features and values are coded as first seen by ``self``, then
        ``other``. Learners that forget are refused (their counts weigh records by age on two
        unrelated clocks), and so are numeric features cut into different intervals or still
        without cut points (:meth:`~onlinebma.tan.coding.RecordCoding.merge`).
        """
        check_mergeable_with(self, other)
        refuse_forgetting(self, "merge")
        refuse_forgetting(other, "merge")
        out = copy.deepcopy(self)  # a failure below leaves self and other as they were
        out._merge_from(other)
        return out


def agree_numbers(learner, samples: dict):
    """Fix ``learner``'s numeric features from the samples of a whole frame's columns (the
    first pass of :func:`onlinebma.distributed.fit`) as ``learn_many`` on that frame would,
    and return the template whose copies count the partitions.

    Interval representations (``"8 intervals"``, ``"MDL"``, ...) get every column's cut
    points (:meth:`~onlinebma.tan.coding.RecordCoding.fix_numeric` of its
    :class:`~onlinebma.numeric.sample.ColumnSample`: the values ``learner`` kept come first),
    and the template gets the same cut points. ``numeric="Gaussian"`` models the numeric
    features observed in the frame's first record with a numeric value (those
    ``learn_many`` row by row would choose), and the template knows the frame's classes in
    order (the statistics are laid out by class). Learners whose state depends on the order
    of the records agree through :func:`agree_before_chain` instead.

    Parameters
    ----------
    learner : BaseTAN or ModelAveragedTAN
        A copy of the learner :func:`~onlinebma.distributed.fit` started from, changed in place.
    samples : dict
        ``{column: ColumnSample}`` of the frame's numeric columns, in column order.

    Returns
    -------
    A learner of ``learner``'s class that has learned nothing.

    Raises
    ------
    ValueError
        Where no agreement gives the learner of the whole frame: a Gaussian learner that has
        learned already (the features and classes it chose are its own).
    """
    if set(learner.representations) <= set(GAUSSIANS):
        if learner.counts.n_classes:
            raise ValueError(
                f"distributed.fit of ModelAveragedTAN(numeric={learner.numeric!r}) on a frame with "
                "numeric columns starts from a learner that has learned nothing: fit a fresh "
                "one on the whole frame (the Gaussian statistics are laid out by the features "
                "and classes of its first records)")
        samples = first_record_samples(samples)
    learner.fix_numeric(samples)
    template = learner.clone()
    template.fix_numeric({**samples, **learner.numeric_readings})
    return template


def first_record_samples(samples: dict) -> dict:
    """The samples of the numeric features observed in the frame's first record with a
    numeric value: those a Gaussian model of the numbers chooses, learning row by row."""
    first = min(sample.first for sample in samples.values())
    return {f: sample for f, sample in samples.items() if sample.first == first}


def agree_before_chain(learner, samples: dict):
    """Fix on ``learner`` what ``learn_many`` on the whole frame fixes before its first
    record, and return it: the learner a chain of partitions starts from
    (:class:`~onlinebma.distributed.chain.ChainPlan`, the plan of the learners whose state
    depends on the order of the records).

    ``learn_many`` on a table first gives every numeric column without cut points those of
    its :class:`~onlinebma.numeric.sample.ColumnSample` (the values ``learner`` kept come
    first, its classes not yet learned are added in the frame's order): so does
    :meth:`~onlinebma.tan.coding.RecordCoding.fix_numeric` of the whole frame's samples. With
    several representations (``numeric="auto"``, or a tuple naming ``"Gaussian"``) the
    Gaussian member models the features it will meet first, learning row by row (those of
    the frame's first record with a numeric value): they are fixed first, which makes the
    Gaussian member choose them, then the others.

    Parameters
    ----------
    learner : BaseTAN or ModelAveragedTAN
        A copy of the learner :func:`~onlinebma.distributed.fit` started from, changed in
        place: one that cuts numbers into intervals.
    samples : dict
        ``{column: ColumnSample}`` of the frame's numeric columns, in column order.

    Returns
    -------
    ``learner``.
    """
    representations = learner.representations
    if samples and set(representations) & set(GAUSSIANS) \
            and not set(representations) <= set(GAUSSIANS):
        learner.fix_numeric(first_record_samples(samples))
    learner.fix_numeric(samples)  # features with cut points keep them
    return learner


def _merge_folds(partials: list) -> list:
    """The fold states of neighbouring partitions merged fold by fold (copies: the partial
    results are left as they were)."""
    out = copy.deepcopy(partials[0])
    for other in partials[1:]:
        for mine, theirs in zip(out, other):
            mine.merge(theirs)
    return out


class StackingPlan(SampledMergePlan):
    """The plan of ``ModelAveragedTAN(numeric="auto")`` (or several representations named in
    a tuple) at ``decay=1`` on a frame with
    numeric values: ``learn_many`` on the whole frame, in parallel
    (:meth:`~onlinebma.tan.members.TreeMemberStack.learn_many`, which weighs the members by
    stacking, :mod:`onlinebma.tan.stacking`).

    After the first pass (:mod:`onlinebma.distributed.first_pass`: the partitions' offsets,
    the frame's classes, each numeric column's sample), ``agree`` fixes on a copy of the
    learner what ``learn_many`` on the whole frame fixes before counting (cut points, the
    frame's classes, the Gaussian's features: :func:`agree_before_chain`, then the kept
    records of features the frame lacks), and two more passes follow:

    1. **Fold states**: each partition's rows counted by fold (row ``offset + i`` in fold
       :func:`~onlinebma.tan.stacking.folds_of`), one empty copy of the agreed stack per
       fold, merged per fold across the partitions (counts and Gaussian statistics add).
    2. **Cross-validated probabilities**: on the client, each fold's complement (the agreed
       stack merged with the other folds), sent to the workers; each partition's rows'
       probabilities of their labels under their fold's complement, concatenated in
       partition order.

    Then the client adds every fold to the agreed stack and sets the stacking weights of
    all rows: the learner of ``learn_many`` on the whole frame (to rounding). The frame is
    read four times; the fold states and the complements travel (2 x 5 copies of the
    counts). The parameters are :class:`~onlinebma.distributed.first_pass.SampledMergePlan`'s,
    ``agree`` returning the agreed learner.
    """

    def run(self, partitions):
        """The first pass, then the stacking passes even on a frame without numeric values
        (its AODE members do not predict as its structure averages, so the weights move)."""
        layout = frame_layout(partitions)
        samples = column_samples(partitions, self.kinds, self.size, layout)
        return self.run_agreed(partitions, samples, layout[0])

    def run_agreed(self, partitions, samples: dict, offsets: list):
        learner = self.agree(copy.deepcopy(self.model), samples)
        stack = learner.state
        # an empty table: the kept records of features the frame lacks get their cut points
        stack.agree_on_table({}, {}, np.zeros(0, dtype=object))
        folds = partitions.reduce(OffsetPass(stack.fold_states, _merge_folds, offsets))
        complements = stack.complements(folds)
        probabilities = partitions.reduce(OffsetPass(
            complements.cross_validated_probabilities, np.concatenate, offsets))
        stack.finish_stacked(folds, probabilities)
        return learner
