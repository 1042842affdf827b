"""Reading numeric features: the layer under members that average over representations of numbers.

A learner that averages over representations of a numeric feature (interval grids at several
resolutions, class-aware MDL cut points, the values themselves) reads each record once and codes
each numeric value for all of them at once. This package is that reading, one idea per module:

- :mod:`~onlinebma.numeric.cuts`: cut points from a sample: point masses, equal-frequency grids
  that respect them, MDL cut points (:func:`onlinebma.preprocessing.mdl_cut_points`), and the
  measures that make the members' densities comparable.
- :mod:`~onlinebma.numeric.grids`: :class:`Grids`, every interval member of a feature from one
  shared sample, coded with one binary search per value.
- :mod:`~onlinebma.numeric.values`: when a feature is read per value (:class:`ValueCodes`), and
  a value not in its sample read as the gap between sample values it falls in.
- :mod:`~onlinebma.numeric.reading`: :class:`NumericSettings`, the decision from a sample
  (:func:`read_sample`), and a whole table read from its own values (:func:`read_table`).
- :mod:`~onlinebma.numeric.pending`: :class:`PendingRecords`, the records kept until a feature's
  cut points are fixed and replayed with their ages, so that no numeric value is dropped.
- :mod:`~onlinebma.numeric.sample`: :class:`Sample`, a sample that partitions of a frame agree
  on (Dask: cut points agreed before the partitions are counted).

**The interval convention** (one for every discretiser of the package): intervals are ``(a, b]``. A
value equal to a cut point falls in the **lower** interval; sorted cut points ``c_1 < ... < c_k``
give the intervals ``(-inf, c_1], (c_1, c_2], ..., (c_k, inf)``, numbered from 0, and the
interval of ``x`` is ``bisect_left(c, x)`` = ``np.searchsorted(c, x, side="left")``
(:func:`onlinebma.table.interval_index`). This is Weka's convention, and that of
:func:`~onlinebma.preprocessing.mdl_cut_points` and :class:`~onlinebma.table.Table`.

**Missing and infinite values.** ``None`` and NaN are missing: skipped everywhere (never counted,
never in a sample, coded ``-1``). Infinite values are refused by :mod:`onlinebma.records` before
they reach a learner, and refused here too (``ValueError``).

A stream learner's use, per numeric feature: values go to :class:`PendingRecords` until the
feature's sample is complete (``NumericSettings.sample_size`` values); then
:func:`read_sample` gives its reading (:class:`ValueCodes` or :class:`Grids`), the members learn
:meth:`PendingRecords.replay`, and later values are coded at once. ``learn_many`` on a table
reads every feature from the table itself (:func:`read_table`, :func:`code_column`).

>>> import numpy as np
>>> settings = NumericSettings(resolutions=(3, 5), sample_size=6)
>>> pending = PendingRecords(settings.sample_size)
>>> stream = [({"x": 0.0}, 0), ({"x": 4.2}, 1), ({"x": 0.0}, 0), ({"x": 1.5}, 0),
...           ({"x": 0.0}, 1), ({"x": 3.3, "colour": None}, 1)]
>>> for t, (record, label) in enumerate(stream):
...     complete = pending.learn(t, label, record)
>>> complete
['x']
>>> values, labels = pending.sample("x")
>>> reading = read_sample(values, labels, n_classes=2, settings=settings)
>>> reading.members, reading.masses.tolist()  # 0 holds 1/2 > 1/5 of the sample
(('3 intervals', '5 intervals', 'MDL'), [0.0])
>>> [(r.age, reading.code(r.new["x"]).tolist()) for r in pending.replay(complete, learned=6)]
[(5, [1, 1, 0]), (4, [3, 4, 0]), (3, [1, 1, 0]), (2, [2, 2, 0]), (1, [1, 1, 0]), (0, [3, 3, 0])]

(The grid of 3 has ``{0}`` and two groups of the three positive values, cut at 2.4; the grid
of 5 has three groups; MDL finds no class split in six records: one interval, within which 0
keeps the share 3/7 of its probability, :meth:`Grids.log_within`.)

>>> np.exp(reading.log_within(0.0)).round(4).tolist()
[1.0, 1.0, 0.4286]
"""

from .grids import DEFAULT_RESOLUTIONS, Grids
from .pending import PendingRecords, Replayed
from .reading import NumericSettings, code_column, read_sample, read_table
from .sample import Sample
from .values import ValueCodes, reads_as_values

__all__ = ["DEFAULT_RESOLUTIONS", "Grids", "NumericSettings", "PendingRecords", "Replayed",
           "Sample", "ValueCodes", "code_column", "read_sample", "read_table", "reads_as_values"]
