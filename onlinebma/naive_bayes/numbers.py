"""How the naive Bayes family reads numbers: a Gaussian per class, or the intervals of one
representation of the numeric layer (:mod:`onlinebma.numeric`).

``numeric="Gaussian"`` keeps each numeric feature's moments (the learners' Gaussian or
Normal–Gamma densities, unchanged). Any other choice of :data:`REPRESENTATIONS` reads each
numeric feature through :class:`NumberReader`: its cut points are fixed from a sample
(:func:`~onlinebma.numeric.read_sample`), and from then on each value is counted as the
nominal value "its interval", so Dash & Cooper's structure averaging and BMANB's plug-in
weights apply to it exactly as to a nominal feature. Within an interval, every member of one
representation spreads the interval's probability the same fixed way
(:meth:`~onlinebma.numeric.Grids.log_within`): a term that is the same for every class and for
both structures, so it changes no prediction and no structure weight, and is left out.

**Which features.** A numeric feature whose sample has few distinct values, each repeated
(:func:`~onlinebma.numeric.reads_as_values`: at most 16, each at least twice), is read **per
value**: each of its sample's ``k`` values is a nominal value of its own, named by the value
(``"2.0"``). **A value that arrives later and is not in the sample** is the gap between sample
values it falls in, the open interval between two point masses, named by its bounds:
``"(-inf, 1.0)"``, ``"(1.0, 2.0)"``, ..., ``"(4.0, inf)"``
(:class:`~onlinebma.numeric.ValueCodes`). So the feature's domain holds at most ``2k + 1``
values whatever arrives (a gap joins it when its first value comes, as a nominal value does),
and the reading, fixed with the sample, never changes: a learner equals the one given it from
its first record, with forgetting and ``decay="auto"`` too. Every other feature is read by its
intervals ``(a, b]`` (:mod:`onlinebma.numeric`), named by their bounds: ``"(2.4, 4.5]"``.

**Every value counts** (:class:`~onlinebma.numeric.PendingRecords`). In a stream, a feature's
cut points are fixed from its first ``sample_size`` (500) observed values. Until then the
feature is left out of predictions (its value is still validated) and the records that carry it
are kept; when its sample is complete the learner counts the kept values as if it had had the
cut points from the first record (:meth:`NumberReader.replay_stream`, tested exactly, with and
without forgetting), and goes on. ``learn_many`` fixes every feature it sees from the table
itself before counting it: without forgetting from the kept values followed by the column's
whole-table sample (:class:`~onlinebma.numeric.sample.ColumnSample`, the tree learners' rule),
row by row (forgetting) from the kept values followed by the column where the table leaves the
sample incomplete, as a stream otherwise.

**Cut points agreed beforehand.** Learners that count parts of one data set (a Dask frame's
partitions) must cut each feature alike to merge: a first pass samples every numeric feature
over the whole data (:class:`~onlinebma.numeric.Sample`, mergeable; Dask's is
:mod:`onlinebma.distributed.first_pass`, drawing the samples ``learn_many`` draws),
:meth:`~onlinebma.naive_bayes.base.BaseNB.numeric_readings_from` reads the samples with the
learner's settings, and :meth:`~onlinebma.naive_bayes.base.BaseNB.fix_numeric` gives each
learner those readings before it counts (kept records replayed, as at a sample's completion).
``merge`` refuses learners whose cut points differ or that still keep records, naming this fix.

**``decay="auto"``** reads numbers on the shared rate state
(:class:`~onlinebma.naive_bayes.rates.SharedRates`) with one reader for every rate: a fixed
feature's intervals are nominal values there too, and at a fix the feature's Gaussian column
gives way to the interval counts of a fresh shared state fed the kept records.

**Missing values** (absent key, ``None``, NaN) are skipped, as everywhere in the family: never
counted, never sampled, no term in a prediction.

>>> reader = NumberReader("5 intervals", sample_size=4)
>>> [reader.keep(t, label, [("x", v)]) for t, (v, label) in
...  enumerate([(0.5, "a"), (3.0, "b"), (1.0, "a"), (2.5, "b")])]
[[], [], [], ['x']]
>>> reader.fix(["x"], labels=["a", "b"])
>>> reader.split([("x", 0.7), ("x", 9.0), ("y", 1.0)])  # y: not fixed
([('x', '(-inf, 0.75]'), ('x', '(2.75, inf)')], [('y', 1.0)])
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from ..numeric import (
    DEFAULT_RESOLUTIONS,
    Grids,
    NumericSettings,
    PendingRecords,
    ValueCodes,
    read_sample,
)
from ..reading import factorize
from ..records import NOMINAL, NUMERIC
from ..validation import check_choice

__all__ = ["DEFAULT_NUMERIC", "GAUSSIAN", "REPRESENTATIONS", "NumberReader", "check_numeric"]

#: The Gaussian per class of the family's learners (the moments of each feature), spelled as
#: the tree learners' (:data:`onlinebma.tan.gaussian.GAUSSIAN`).
GAUSSIAN = "Gaussian"

#: The family's spelling of :data:`GAUSSIAN` before it took the tree learners': refused (no
#: alias), with the new spelling named.
_FORMER_GAUSSIAN = "gaussian"

#: The choices of ``numeric=``: the Gaussian, an equal-frequency grid of point-mass-aware
#: intervals at one resolution, or the class-aware MDL cut points (:mod:`onlinebma.numeric`).
REPRESENTATIONS = (GAUSSIAN, *(f"{b} intervals" for b in DEFAULT_RESOLUTIONS), "MDL")

#: The family's default, chosen by the benchmark of docs/naive_bayes.md ("Numbers": adult
#: shuffled with seed 0, 20,000 rows learned, 12,561 scored; ten small numeric tables, 5
#: stratified folds): 8 intervals scored 0.430-0.434 log loss on adult against the class
#: prior's 0.553 and the Gaussian's 0.686-0.688 (16 intervals 0.422-0.426, MDL 0.440-0.444;
#: cut points then from each column's first 500 values, 0.426-0.430 from the whole-table
#: sample ``learn_many`` now takes),
#: and the best mean over the tables for all three learners (0.685-0.691; 16 intervals
#: 0.741-0.765, MDL 0.709-0.721, the Gaussian 0.965-1.300). Learners that will be merged
#: (a Dask frame's partitions) take cut points agreed in a first pass
#: (:meth:`~onlinebma.naive_bayes.base.BaseNB.fix_numeric`), and ``decay="auto"`` reads
#: intervals on the shared rate state (:class:`~onlinebma.naive_bayes.rates.SharedRates`).
DEFAULT_NUMERIC = "8 intervals"


def check_numeric(numeric) -> None:
    """Refuse a ``numeric=`` that is not one of :data:`REPRESENTATIONS`; the former spelling
    ``"gaussian"`` is refused with the new one named.

    >>> check_numeric("7 intervals")
    Traceback (most recent call last):
    ...
    ValueError: numeric must be one of ('Gaussian', '3 intervals', '5 intervals', \
'8 intervals', '16 intervals', '32 intervals', 'MDL'), got '7 intervals'
    >>> check_numeric("gaussian")
    Traceback (most recent call last):
    ...
    ValueError: numeric must be one of ('Gaussian', '3 intervals', '5 intervals', \
'8 intervals', '16 intervals', '32 intervals', 'MDL'), got 'gaussian': the Gaussian is now \
spelled 'Gaussian', as in ModelAveragedTAN
    """
    try:
        check_choice("numeric", numeric, REPRESENTATIONS)
    except ValueError as refusal:
        if isinstance(numeric, str) and numeric == _FORMER_GAUSSIAN:
            raise ValueError(f"{refusal}: the Gaussian is now spelled {GAUSSIAN!r}, as in "
                             f"ModelAveragedTAN") from None
        raise


def label_array(labels) -> np.ndarray:
    """A 1-d object array of ``labels``, one entry per label even when labels are tuples
    (which ``np.asarray(..., dtype=object)`` would spread into a second axis).

    >>> label_array([("a", 0), ("a", 1)]).shape
    (2,)
    """
    return np.fromiter(labels, dtype=object, count=len(labels))


def _interval_names(cuts: list) -> list:
    """``"(a, b]"`` for each interval of sorted cut points, ``-inf`` and ``inf`` at the ends."""
    bounds = [-np.inf, *cuts, np.inf]
    return [f"({lo!r}, {hi!r}]" if hi != np.inf else f"({lo!r}, inf)"
            for lo, hi in zip(bounds[:-1], bounds[1:])]


class _Intervals:
    """One feature read by the intervals of one member of its :class:`Grids`."""

    __slots__ = ("cuts", "names")

    def __init__(self, cuts):
        self.cuts = [float(c) for c in cuts]
        self.names = _interval_names(self.cuts)

    def name(self, x: float) -> str:
        return self.names[bisect_left(self.cuts, x)]

    def code_many(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`name` of each value as ``(codes, names)``, code -1 where ``x`` is NaN:
        ``np.searchsorted(side="left")`` is ``bisect_left``, value by value."""
        missing = np.isnan(x)
        codes = np.searchsorted(np.array(self.cuts), np.where(missing, 0.0, x), side="left")
        codes[missing] = -1
        return codes, np.array(self.names, dtype=object)

    def __eq__(self, other):
        return isinstance(other, _Intervals) and self.cuts == other.cuts

    __hash__ = None


class _Values:
    """One feature read per value: each value of its sample a nominal value of its own, named
    by the value (``"2.0"``), and any other value the gap between sample values it falls in,
    named by its open bounds (``"(1.0, 2.0)"``, ``"(-inf, 1.0)"``, ``"(4.0, inf)"``), as
    :class:`~onlinebma.numeric.ValueCodes` codes it."""

    __slots__ = ("codes", "names")

    def __init__(self, codes: ValueCodes):
        self.codes = codes
        self.names = [repr(v) for v in codes.values] + [f"({lo!r}, {hi!r})"
                                                         for lo, hi in codes.gaps()]

    def name(self, x: float) -> str:
        return self.names[self.codes.code(x)]

    def code_many(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`name` of each value as ``(codes, names)``, code -1 where ``x`` is NaN."""
        return self.codes.code_many(x), np.array(self.names, dtype=object)

    def __eq__(self, other):
        return isinstance(other, _Values) and self.codes.gaps() == other.codes.gaps()

    __hash__ = None


def _describe(read) -> str:
    """A reading in words, for error messages."""
    if isinstance(read, _Values):
        return f"per value {sorted(read.codes.values)}"
    return f"cut points {read.cuts}"


class NumberReader:
    """The reading of a learner's numeric features by one representation (module docstring).

    Parameters
    ----------
    numeric : str
        One of :data:`REPRESENTATIONS` other than ``"Gaussian"``.
    sample_size : int, default 500
        A feature's cut points are fixed from its first ``sample_size`` observed values.

    Attributes
    ----------
    readings : dict
        ``{feature: Grids or ValueCodes}``: how each feature whose cut points are fixed is
        read (:func:`~onlinebma.numeric.read_sample`'s answer; a :class:`Grids` is read by its
        member ``numeric``, a :class:`ValueCodes` per value), in the order they were fixed.

    Examples
    --------
    A feature with few repeated values is read per value, a value not in its sample by its gap:

    >>> reader = NumberReader("MDL", sample_size=4)
    >>> for t, v in enumerate([1.0, 2.0, 1.0, 2.0]):
    ...     complete = reader.keep(t, "yes" if v > 1 else "no", [("stars", v)])
    >>> reader.fix(complete, labels=["no", "yes"])
    >>> reader.split([("stars", 2.0), ("stars", 5.0), ("stars", 1.5)])[0]
    [('stars', '2.0'), ('stars', '(2.0, inf)'), ('stars', '(1.0, 2.0)')]
    """

    def __init__(self, numeric: str, sample_size: int = 500):
        check_numeric(numeric)
        if numeric == GAUSSIAN:
            raise ValueError(f"numeric={GAUSSIAN!r} reads the moments: it needs no reader")
        self.numeric = numeric
        if numeric == "MDL":
            self.settings = NumericSettings(sample_size=sample_size)
        else:
            self.settings = NumericSettings(resolutions=(int(numeric.split()[0]),),
                                            class_aware=False, sample_size=sample_size)
        self.pending = PendingRecords(sample_size)
        self.readings: dict = {}
        self._read: dict = {}  # feature -> _Intervals or _Values, from its reading
        self._codes: dict = {}  # label -> class code, in order of first appearance
        self._first: dict = {}  # label -> index of its first record (forgetting's replay)

    # ------------------------------------------------------------------ records

    def split(self, pairs) -> tuple[list, list]:
        """``(coded, waiting)``: the nominal ``(feature, interval name)`` of each pair whose
        feature is fixed, and the pairs of the others (read by their Gaussian until fixed).

        Parameters
        ----------
        pairs : list
            Observed ``(feature, float)`` pairs.

        Returns
        -------
        tuple of list
        """
        readings = self._read
        coded, waiting = [], []
        for f, x in pairs:
            r = readings.get(f)
            if r is None:
                waiting.append((f, x))
            else:
                coded.append((f, r.name(x)))
        return coded, waiting

    def code_column(self, feature, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A fixed feature's column read as :meth:`split` reads each value, at once:
        ``(codes, names)``, the interval (or value) name of row ``i`` being
        ``names[codes[i]]``, code -1 where the value is missing (the factorised nominal
        column of :func:`~onlinebma.reading.prepare_columns`).

        Parameters
        ----------
        feature : hashable
            A feature whose cut points are fixed.
        values : np.ndarray
            Its float values, NaN where missing.

        Returns
        -------
        tuple of np.ndarray
        """
        return self._read[feature].code_many(values)

    def keep(self, index: int, label, pairs) -> list:
        """Note a learned record: keep it if one of its numeric features is pending.

        Parameters
        ----------
        index : int
            The record's index in the learner's stream (increasing).
        label : hashable
            Its label (validated).
        pairs : list
            Its observed numeric ``(feature, float)`` pairs (validated).

        Returns
        -------
        list
            The features whose sample this record completed (:meth:`fix` them).
        """
        code = self.note_label(label, index)
        waiting = [(f, x) for f, x in pairs if f not in self.readings]
        if not waiting:
            return []
        return self.pending.learn(index, code, dict(waiting))

    def note_labels(self, labels, indices) -> None:
        """:meth:`note_label` of each label at the index of its first record (a table's
        labels, in order of first appearance).

        Parameters
        ----------
        labels : list
            Validated labels.
        indices : array-like of int
            The index of each label's first record in the learner's stream.
        """
        for label, index in zip(labels, np.asarray(indices).tolist()):
            self.note_label(label, index)

    def note_label(self, label, index: int) -> int:
        """The class code of ``label``, a new one (first seen in record ``index``) if new."""
        code = self._codes.get(label)
        if code is None:
            code = self._codes[label] = len(self._codes)
            self._first[label] = index
        return code

    def fix(self, features, labels, extra: dict | None = None) -> None:
        """Fix the cut points of pending or new ``features`` from their samples.

        Parameters
        ----------
        features : list
            Features to fix.
        labels : list
            Every label the learner knows (those not noted get a code).
        extra : dict or None, default None
            ``{feature: (float values, label codes)}`` appended to a feature's kept sample (a
            table's column in ``learn_many``); a feature with no observed value anywhere is
            not fixed.
        """
        for label in labels:
            if label not in self._codes:
                self._codes[label] = len(self._codes)
        n_classes = len(self._codes)
        for f in features:
            if f in self.pending.pending:
                values, codes = self.pending.sample(f)
            else:
                values, codes = np.zeros(0), np.zeros(0, dtype=np.int64)
            if extra and f in extra:
                more, more_codes = extra[f]
                values = np.concatenate([values, more])
                codes = np.concatenate([codes, more_codes])
            if not np.isnan(values).all():
                self._adopt(f, read_sample(values, codes, n_classes, self.settings))

    def checked(self, readings: dict) -> dict:
        """Readings given from outside, checked against the fixed ones without changing
        anything; the features already fixed alike are left out.

        Parameters
        ----------
        readings : dict
            ``{feature: Grids or ValueCodes}``; a :class:`Grids` must hold the member
            ``numeric``.

        Returns
        -------
        dict
            The readings of the features not fixed yet.

        Raises
        ------
        TypeError
            If a reading is neither a Grids nor a ValueCodes.
        ValueError
            If a Grids lacks the member, or a feature is fixed already and read otherwise.
        """
        if not isinstance(readings, dict):
            raise TypeError(f"readings must be a dict {{feature: Grids or ValueCodes}}, got "
                            f"{type(readings).__name__}")
        todo = {}
        for f, reading in readings.items():
            read = self._reading(f, reading)
            mine = self._read.get(f)
            if mine is None:
                todo[f] = reading
            elif mine != read:
                raise ValueError(f"numeric feature {f!r} has other cut points already: "
                                 f"{_describe(mine)}, not {_describe(read)}")
        return todo

    def fix_readings(self, readings: dict) -> None:
        """Fix features with the readings :meth:`checked` returned (for those still pending,
        :meth:`replay_stream` is due next)."""
        for f, reading in readings.items():
            self._adopt(f, reading)

    def _reading(self, f, reading):
        """The ``_Intervals`` or ``_Values`` of a Grids or ValueCodes (checked)."""
        if isinstance(reading, ValueCodes):
            return _Values(reading)
        if not isinstance(reading, Grids):
            raise TypeError(f"the reading of feature {f!r} must be a Grids or a ValueCodes "
                            f"(onlinebma.numeric.read_sample), got {type(reading).__name__}")
        if self.numeric not in reading.members:
            raise ValueError(f"the cut points of feature {f!r} hold {reading.members}, not "
                             f"the representation {self.numeric!r} this learner reads "
                             f"numbers with")
        return _Intervals(reading.cuts[reading.members.index(self.numeric)])

    def _adopt(self, f, reading) -> None:
        self._read[f] = self._reading(f, reading)
        self.readings[f] = reading

    def reading_from_sample(self, values, labels, feature=None):
        """How a feature would be read from a sample, without fixing it.

        Parameters
        ----------
        values : array-like of float
            The sample's values, NaN where missing.
        labels : array-like
            The class label of each value.
        feature : hashable or None, default None
            The feature: when its values are kept (pending), they come first, followed by the
            sample (``learn_many``'s rule, as the tree learners'); the sample is read whole.

        Returns
        -------
        Grids or ValueCodes or None
            ``None`` when the sample has no observed value.
        """
        values = np.asarray(values, dtype=float)
        labels = labels if isinstance(labels, np.ndarray) else label_array(list(labels))
        if values.ndim != 1 or labels.shape != values.shape:
            raise ValueError(f"a sample needs one label per value: got values of shape "
                             f"{values.shape} and labels of shape {labels.shape}")
        observed = np.flatnonzero(~np.isnan(values))
        if feature is not None and feature in self.pending.pending:
            kept, codes = self.pending.sample(feature)
            values = np.concatenate([kept, values])
            labels = np.concatenate([label_array(list(self._codes))[codes], labels])
            observed = np.flatnonzero(~np.isnan(values))
        if observed.size == 0:
            return None
        classes, codes = factorize(labels[observed])
        return read_sample(values[observed], codes, len(classes), self.settings)

    def replay_stream(self, features, learned: int) -> tuple[int, list]:
        """What the learner must count for newly fixed features, in stream order.

        Parameters
        ----------
        features : list
            Features just fixed (and pending).
        learned : int
            The number of records the learner has learned.

        Returns
        -------
        tuple
            ``(first, rows)``: the index of the first kept record with one of ``features``,
            and per kept record ``(index, label, [(feature, interval name)])``, arrival
            order.
        """
        labels = list(self._codes)
        rows = [(r.index, labels[r.label], self.split(r.new.items())[0])
                for r in self.pending.replay(features, learned)]
        return (rows[0][0] if rows else learned), rows

    def fix_from_table(self, columns: dict, labels: list, learned: int,
                       known_labels: list) -> list:
        """``learn_many`` row by row (a learner that forgets, or ``decay="auto"``), before a
        table's rows are learned: fix the cut points of every numeric column whose sample the
        table leaves incomplete from its kept values followed by the column
        (:func:`~onlinebma.numeric.read_table`'s rule: a small table's numbers count). A
        sample the table completes is fixed by the rows as in a stream (from its first
        ``sample_size`` values), so that then ``learn_many`` equals ``learn_one`` on the
        rows.

        Parameters
        ----------
        columns : dict
            The validated table's columns, ``{feature: (kind, values, present)}``
            (:func:`~onlinebma.reading.prepare_frame`).
        labels : list
            Its labels, row by row.
        learned : int
            The number of records the learner has learned (the table's first row's index).
        known_labels : list
            Every label the learner knows.

        Returns
        -------
        list
            The fixed features with kept records: the learner counts them next
            (:meth:`replay_stream`).
        """
        for i, label in enumerate(labels):
            self.note_label(label, learned + i)
        codes = np.array([self._codes[label] for label in labels], dtype=np.int64)
        kept = self.pending.pending
        size = self.settings.sample_size
        extra = {}
        for f, (kind, values, present) in columns.items():
            if kind == NOMINAL or f in self.readings:
                continue
            n_kept = len(self.pending.sample(f)[0]) if f in kept else 0
            if n_kept + int(present.sum()) < size:
                extra[f] = (values, codes)
        self.fix(list(extra), known_labels, extra)
        return [f for f in extra if f in self.pending.pending and f in self.readings]

    def replay_records(self, first: int, learned: int, rows: list, clock: bool):
        """What a fresh learner (knowing the classes of :meth:`labels_before` ``first``) must
        learn to hold the kept values of newly fixed features as if their cut points had been
        fixed from the first record: ``(record, label)`` pairs, in order (generated: with the
        clock, one per record since ``first``).

        Parameters
        ----------
        first, rows
            :meth:`replay_stream`'s answer.
        learned : int
            The number of records the learner has learned.
        clock : bool
            ``True`` for a learner that forgets: an empty record for each record between the
            kept ones (the clock's ticks), with a new class at the record where it first
            came; ``False``: the kept records alone.

        Yields
        ------
        tuple
        """
        if not clock:
            for _, label, pairs in rows:
                yield dict(pairs), label
            return
        arrivals = {t: label for label, t in self._first.items() if t >= first}
        by_index = {index: (label, pairs) for index, label, pairs in rows}
        last = None
        for t in range(first, learned):
            kept = by_index.get(t)
            if kept is None:  # a record without the features: the clock, a new class
                last = arrivals.get(t, last)
                yield {}, last
            else:
                last = kept[0]
                yield dict(kept[1]), last

    def fix_given(self, readings: dict, kinds, learned: int, replay) -> None:
        """Fix readings :meth:`checked` returned, committing new features as numeric in
        ``kinds``, and hand ``replay`` (the learner's) the kept records of those that were
        pending, as ``replay(first, rows)``."""
        kinds.commit({f: NUMERIC for f in readings if f not in kinds.kind})
        waiting = [f for f in readings if f in self.pending.pending]
        self.fix_readings(readings)
        if waiting:
            replay(*self.replay_stream(waiting, learned))

    def cut_points(self) -> dict:
        """``{feature: sorted cut points, or None when read per value}`` of the fixed features."""
        return {f: np.array(r.cuts) if isinstance(r, _Intervals) else None
                for f, r in self._read.items()}

    @property
    def first_records(self) -> dict:
        """``{label: index of its first record}``, in order of first appearance (the labels
        this reader has noted)."""
        return dict(self._first)

    def labels_before(self, index: int) -> list:
        """The labels whose first record came before ``index``, in order of appearance."""
        return [label for label, t in self._first.items() if t < index]

    def check_mergeable(self, other: NumberReader) -> None:
        """Refuse to merge readers with kept records or different cut points (naming the
        feature); both must read numbers the same way."""
        if self.numeric != other.numeric or self.settings != other.settings:
            raise ValueError(f"cannot merge learners reading numbers differently: "
                             f"numeric={self.numeric!r} and {other.numeric!r}")
        for reader in (self, other):
            if len(reader.pending):
                raise ValueError(
                    f"cannot merge learners still keeping records of numeric features whose "
                    f"cut points are not fixed ({reader.pending.pending!r}: their intervals "
                    f"are not known yet); give both learners the same cut points before "
                    f"learning, learner.fix_numeric(readings) (readings from one sample of "
                    f"all the data, learner.numeric_readings_from(samples), or another "
                    f"learner's numeric_readings)")
        for f, reading in other.readings.items():
            mine, r = self._read.get(f), self._reading(f, reading)
            if mine is not None and mine != r:
                raise ValueError(
                    f"cannot merge: numeric feature {f!r} was cut into different intervals by "
                    f"the two learners ({_describe(mine)} and {_describe(r)}); give both the "
                    f"same cut points before learning: learner.fix_numeric(readings)")

    def merge(self, other: NumberReader) -> None:
        """Take ``other``'s readings of features this reader has not fixed, and its labels."""
        for f, r in other.readings.items():
            if f not in self.readings:
                self._adopt(f, r)
        for label, t in other.first_records.items():
            if label not in self._codes:
                self._codes[label] = len(self._codes)
                self._first[label] = t
