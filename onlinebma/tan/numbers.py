"""How the tree-augmented learners read a numeric feature: one interval representation, cut
points from the feature's own first values, and no value dropped.

A learner that counts values cuts each numeric feature into intervals
(:mod:`onlinebma.numeric`: point masses respected, the ``(a, b]`` convention). Its
``numeric`` parameter names the representation (:data:`REPRESENTATIONS`): an equal-frequency
grid of ``B`` intervals (``"8 intervals"``) or the class-aware MDL cut points (``"MDL"``,
:func:`onlinebma.numeric.cuts.class_cuts`, beside a 16-interval grid's point masses).
:class:`NumericReading` keeps, per feature, the :class:`~onlinebma.numeric.Grids` it was cut
with and the records that arrived before (:class:`~onlinebma.numeric.PendingRecords`):

- **In a stream** (``learn_one``), a feature's first ``sample_size`` observed values are its
  sample. Until the sample is complete, the record is learned without that feature and kept;
  at the ``sample_size``-th value the cut points are fixed from the sample (with its labels,
  for MDL) and every kept record is **replayed**: its cells that involve the feature (the
  feature's value cell and its pairs with the record's other features) are added with weight
  ``λ^age``, so the counts equal those of the same learner given those cut points from the first
  record (``tests/test_tan_numbers.py``). At most ``sample_size`` records are kept per pending
  feature (``sample_size ×`` the number of numeric features in all, fewer when the features
  are observed together), each with its numeric values and its nominal codes.
- **A table** (``learn_many`` of a learner that forgets nothing) gives every feature without
  cut points its cut points from a sample of the table's whole column: the values kept from a
  stream before it, then at most :data:`~onlinebma.numeric.sample.TABLE_SAMPLE_SIZE` of the
  column's observed values, a uniform draw fixed by the rows' positions
  (:class:`~onlinebma.numeric.sample.ColumnSample`; the whole column when it is shorter);
  then the kept records are replayed and the table is learned. The draw does not depend on
  how the table is cut, so :func:`onlinebma.distributed.fit` draws the same one from a Dask
  frame's partitions in a first pass (:mod:`onlinebma.distributed.first_pass`) and gives the
  learner of ``learn_many`` on the whole frame. A learner that forgets learns a table row by
  row, as a stream.
- :meth:`~onlinebma.tan.coding.RecordCoding.fix_numeric` fixes cut points given from outside
  (a first pass over a Dask frame: :func:`onlinebma.numeric.read_table`, or another learner's
  :attr:`~onlinebma.tan.coding.RecordCoding.numeric_readings`), replaying what was kept.

What is exact and what is not: the counts after a replay equal those of the learner given the
cut points from the first record, with and without forgetting. Predictions made before the
replay could not use the feature (it is skipped like a missing value), and the quantities
learned from those predictions are not replayed: the structure recursion ``l`` of a member
that forgets (its pairs with the new feature are set to ``log W`` of the decayed counts, the
value a member that does not forget keeps by definition) and the weights of ``decay="auto"``.

A sample in which 0 holds half the values: 0 is an interval of its own (a point mass, below
and above it the rest of the 3 intervals), values below the sample fall in the first interval.

>>> reading = NumericReading("3 intervals", sample_size=4)
>>> grids = reading.grids_from_sample([0.0, 0.0, 1.0, 2.0], [0, 1, 0, 1], n_classes=2)
>>> grids.masses.tolist(), reading.fix("x", grids)
([0.0], 4)
>>> [reading.interval("x", v) for v in (-1.0, 0.0, 0.5, 2.0)]
[0, 1, 2, 3]
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from ..numeric import Grids, PendingRecords
from ..numeric.cuts import distinct_counts, observed_sample
from ..validation import check_choice, check_int

__all__ = ["LEARN_MANY_CHECK", "MDL_GRID", "REPRESENTATIONS",
           "NumericReading", "check_numeric"]

#: The interval representations a learner can name in ``numeric``.
REPRESENTATIONS = ("3 intervals", "5 intervals", "8 intervals", "16 intervals", "32 intervals",
                   "MDL")

#: The equal-frequency grid whose point masses (values holding more than 1/16 of the sample)
#: the MDL cut points keep as intervals of their own.
MDL_GRID = 16



#: River's check that ``learn_many`` on batches equals ``learn_one`` on their rows, skipped by
#: the learners' ``_unit_test_skips``: ``learn_many`` takes a table's cut points from a sample
#: of the whole table (:data:`~onlinebma.numeric.sample.TABLE_SAMPLE_SIZE`), ``learn_one``
#: from a stream's first ``sample_size`` values, so they differ by design until the cut
#: points are agreed (``tests/test_tan_river.py`` runs the check's comparison on learners
#: given the same cut points first).
LEARN_MANY_CHECK = "check_learn_many_matches_learn_one"


def check_numeric(numeric, sample_size, choices: tuple = REPRESENTATIONS) -> None:
    """Validate a learner's ``numeric`` (one of ``choices``) and ``sample_size`` (at least
    1); a ValueError naming the parameter."""
    check_choice("numeric", numeric, choices)
    check_int("sample_size", sample_size, 1)


class NumericReading:
    """The numeric features of one learner: their cut points and the records kept until then.

    Parameters
    ----------
    representation : str or None
        One of :data:`REPRESENTATIONS`, or ``None``: numeric features are not cut (every
        value is left to a representation that needs no cut points) and nothing is kept.
    sample_size : int
        A feature's cut points are fixed at its ``sample_size``-th observed value.

    Attributes
    ----------
    readings : dict
        ``{feature: Grids}`` of the features with cut points, in the order they were fixed.
    pending : PendingRecords
        The records kept for the features without cut points.
    """

    def __init__(self, representation: str | None, sample_size: int):
        if representation is not None:
            check_numeric(representation, sample_size)
        self.representation = representation
        self.sample_size = sample_size
        self.readings: dict = {}
        self.pending = PendingRecords(sample_size)
        self._cuts: dict = {}  # feature -> its member's cut points, a list (bisect)

    @property
    def cuts_numbers(self) -> bool:
        """Whether numeric features are cut into intervals (else they are not coded)."""
        return self.representation is not None

    def grids_from_sample(self, values, labels, n_classes: int) -> Grids:
        """The cut points of a feature from its sample (NaN where missing) and the class
        codes of its records: a :class:`~onlinebma.numeric.Grids` holding this reading's
        representation."""
        x, codes = observed_sample(np.asarray(values, dtype=float), labels, n_classes)
        distinct, counts = distinct_counts(x)
        if distinct.size == 0:
            raise ValueError("a numeric feature's sample has no observed value")
        class_counts = np.zeros((distinct.size, max(n_classes, 1)), dtype=np.int64)
        np.add.at(class_counts, (np.searchsorted(distinct, x), codes), 1)
        if self.representation == "MDL":
            return Grids.from_sample(distinct, class_counts, (MDL_GRID,), class_aware=True)
        b = int(self.representation.split()[0])
        return Grids.from_sample(distinct, class_counts, (b,), class_aware=False)

    def member(self, grids: Grids) -> int:
        """The column of this reading's representation in ``grids``; a ValueError if it has
        none."""
        if self.representation is None:
            raise ValueError("this learner does not cut numeric features into intervals")
        if self.representation not in grids.members:
            raise ValueError(f"the cut points hold {grids.members}, not the representation "
                             f"{self.representation!r} this learner reads numbers with")
        return grids.members.index(self.representation)

    def fix(self, feature, grids: Grids) -> int:
        """Keep ``grids`` as the feature's cut points; the number of intervals it has."""
        m = self.member(grids)
        self.readings[feature] = grids
        self._cuts[feature] = grids.cuts[m].tolist()
        return grids.n_intervals[m]

    def cuts(self, feature):
        """The feature's cut points (a list, increasing) or ``None`` while it has none."""
        return self._cuts.get(feature)

    def interval(self, feature, value: float):
        """The interval of a value, ``None`` while the feature has no cut points."""
        cuts = self._cuts.get(feature)
        return None if cuts is None else bisect_left(cuts, value)

    def intervals(self, feature, column: np.ndarray) -> np.ndarray:
        """The interval of each value of a column (NaN missing): -1 where missing or while
        the feature has no cut points."""
        out = np.full(len(column), -1, dtype=np.int64)
        cuts = self._cuts.get(feature)
        if cuts is not None:
            present = ~np.isnan(column)
            out[present] = np.searchsorted(cuts, column[present], side="left")
        return out
