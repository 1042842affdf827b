"""Reading and coding records for the tree-augmented learners and their ``decay="auto"``.

:class:`RecordCoding` (an object its learner holds as ``coding``) validates a record
(:mod:`onlinebma.records`), codes its features and values as ints in order of first
appearance in a :class:`~onlinebma.stats.pairs.PairCounts`, cuts numeric features into
intervals (:mod:`onlinebma.tan.numbers`: cut points from each feature's first values in a
stream, from a sample of the whole column in a table, the records before them kept and
replayed, so that no value is dropped), and codes a DataFrame for the batch paths. It is
held by :class:`~onlinebma.tan.base.BaseTAN` and by
:class:`~onlinebma.tan.members.TreeMemberStack` (the state of
:class:`~onlinebma.tan.ModelAveragedTAN`), each on its own counts, cut points and feature
kinds. What it needs of its learner's clock when kept records are replayed (the record being
learned, the weight of an older one in the counts' unit) is given to the methods that may
replay, as a :class:`ReplayClock`; they return what the learner must then recompute (the
number of pairs before the new features, or ``None`` when nothing changed).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .. import tuning
from ..numeric import Grids
from ..numeric.sample import TABLE_SAMPLE_SIZE, ColumnSample
from ..reading import factorize
from ..records import NOMINAL, NUMERIC, numeric_values

__all__ = ["RecordCoding", "ReplayClock", "table_samples"]

_NO_CODES = np.zeros(0, dtype=np.int64)


def _new_cells(new: np.ndarray) -> np.ndarray:
    """Which of a record's columns (in the order of
    :meth:`~onlinebma.stats.pairs.PairCounts.record_columns`: the class count, ``m`` value
    cells, ``m`` feature margins, then four cells per pair ``i < j`` in ``np.triu_indices``
    order, one block of each) involve a feature flagged in ``new`` (``m`` booleans)."""
    first, second = np.triu_indices(new.size, 1)
    pair = new[first] | new[second]
    return np.concatenate([[False], new, new, pair, pair, pair, pair])


def table_samples(columns, labels) -> dict:
    """``{feature: ColumnSample}`` of a validated table's numeric columns
    (:func:`~onlinebma.reading.prepare_frame`'s ``columns``, each with an observed value):
    each column's sample of at most :data:`~onlinebma.numeric.sample.TABLE_SAMPLE_SIZE` values,
    as ``learn_many`` on the table fixes its cut points from (:meth:`RecordCoding.fix_numeric`
    takes them).

    Parameters
    ----------
    columns : dict
        The table's prepared columns.
    labels : pandas.Series
        Its labels.

    Returns
    -------
    dict
    """
    names, codes = factorize(labels)
    return {f: ColumnSample.of_column(values, codes, tuple(names), TABLE_SAMPLE_SIZE)
            for f, (kind, values, _) in columns.items() if kind != NOMINAL}


class ReplayClock(NamedTuple):
    """Where a learner's clock stands when records kept for numeric features are replayed
    into its counts (:mod:`onlinebma.tan.numbers`).

    Attributes
    ----------
    learned : int
        The number of records learned before the one being learned (or, between records,
        before the next one): the index of the record whose weight is the counts' unit.
    weight : callable
        ``weight(age)``: the weight, in the counts' current unit, of a record ``age``
        records before that one (a float, or one per count row).
    """

    learned: int
    weight: Callable


class RecordCoding:
    """Validating and coding records, on one learner's feature kinds, counts and numeric
    reading (module docstring).

    Parameters
    ----------
    kinds : FeatureKinds
        The :class:`~onlinebma.records.FeatureKinds` records are validated against.
    counts : PairCounts
        The :class:`~onlinebma.stats.pairs.PairCounts` that codes features, values and
        classes (and that the learner counts into).
    numbers : NumericReading
        The :class:`~onlinebma.tan.numbers.NumericReading` of the numeric features: their
        cut points and the records kept for those without.

    Attributes
    ----------
    kinds : FeatureKinds
        As given (the learner commits new features' kinds through the coding).
    counts : PairCounts
        As given.
    numeric_reading : NumericReading
        As given.

    Examples
    --------
    >>> from onlinebma.records import FeatureKinds
    >>> from onlinebma.stats.pairs import PairCounts
    >>> from onlinebma.tan.numbers import NumericReading
    >>> coding = RecordCoding(FeatureKinds(None), PairCounts(), NumericReading("3 intervals", 2))
    >>> split = coding.kinds.split({"sky": "sunny", "t": 20.5})
    >>> codes, values, grew, nominal = coding.code_for_learning(split)
    >>> codes.tolist(), values.tolist(), nominal  # t has no cut points yet: left out
    ([0], [0], [(0, 0)])
    """

    def __init__(self, kinds, counts, numbers):
        self.kinds = kinds
        self.counts = counts
        self.numeric_reading = numbers
        self._readings: dict = {}  # derived (see read), not pickled
        self._readings_version = -1

    def __getstate__(self):  # the codings kept by read are derived, not state
        return {**self.__dict__, "_readings": {}, "_readings_version": -1}

    @property
    def numeric_readings(self) -> dict:
        """``{feature: Grids}``: the cut points of every numeric feature that has them, in the
        order they were fixed (:class:`~onlinebma.numeric.Grids`; give them to another
        learner's ``fix_numeric`` to cut the same intervals)."""
        return dict(self.numeric_reading.readings)

    def forget_readings(self) -> None:
        """Drop the codings kept per distinct record (:meth:`read`): they are rebuilt on use."""
        self._readings, self._readings_version = {}, -1

    def merge(self, other: RecordCoding, clock: ReplayClock):
        """Add ``other``'s coded state: feature kinds, numeric cut points and counts (the
        learner adds its record count).

        Numeric features must have equal cut points where both have them (a feature only
        ``other`` has cut points for gets them here), and neither side may hold records kept
        for a feature without cut points (they would need the cut points of the merged
        learner, which neither has seen): both are refused, naming the feature, before
        anything changes. To merge learners of numeric streams, give them the same cut points
        first (``fix_numeric``, from a first pass over the data).

        Parameters
        ----------
        other : RecordCoding
            Read through its public views; left unchanged.
        clock : ReplayClock
            This learner's clock (no record is replayed: neither side keeps any).

        Returns
        -------
        int or None
            The number of pairs before the features given cut points here, or ``None``.
        """
        kinds = other.kinds
        self.kinds.check_mergeable(kinds)
        mine, theirs = self.numeric_reading, other.numeric_reading
        for side in (mine, theirs):
            if side.pending.pending:
                f = side.pending.pending[0]
                raise ValueError(
                    f"cannot merge: numeric feature {f!r} has no cut points yet "
                    f"({len(side.pending)} records kept for it); give both learners the same "
                    f"cut points first (fix_numeric, e.g. from onlinebma.numeric.read_table on "
                    f"a first pass)")
        for f, grids in theirs.readings.items():
            if f in mine.readings and mine.readings[f] != grids:
                raise ValueError(
                    f"cannot merge: numeric feature {f!r} was cut into different intervals; "
                    f"give both learners the same cut points first (fix_numeric)")
        self.kinds.commit(kinds.kind)
        width = self._fix_and_replay({f: g for f, g in theirs.readings.items()
                                      if f not in mine.readings}, clock)
        self.counts.merge(other.counts)
        return width

    def fix_numeric(self, readings: dict, clock: ReplayClock):
        """Fix numeric features' cut points now, from outside.

        The records kept for those features are replayed (:mod:`onlinebma.tan.numbers`);
        later records are cut with these points. Use it to give learners that will be merged
        the same cut points: another learner's :attr:`numeric_readings`, or a first pass over
        the data (:func:`onlinebma.numeric.read_table` on a sample of it, or the samples of a
        whole frame's columns that :func:`onlinebma.distributed.fit` gathers).

        Parameters
        ----------
        readings : dict
            ``{feature: Grids or ColumnSample}``: a :class:`~onlinebma.numeric.Grids` holding
            this learner's representation (``numeric``), or the
            :class:`~onlinebma.numeric.sample.ColumnSample` of the feature's column in a
            whole table, read as ``learn_many`` on that table would read it (its classes not
            yet learned are added, in the table's order, with no record; the values kept for
            the feature come first; a learner that does not cut numbers only takes the
            features as numeric). A feature that has cut points already keeps them when given
            a sample.
        clock : ReplayClock
            The learner's clock, for the records replayed.

        Returns
        -------
        int or None
            The number of pairs before the features or classes added, or ``None`` if nothing
            changed.

        Raises
        ------
        ValueError
            If a feature is nominal, already has other cut points, or a Grids lacks the
            representation; nothing is changed then.
        """
        numbers = self.numeric_reading
        todo = {}
        for f, grids in readings.items():
            if isinstance(grids, ColumnSample):
                pass
            elif not isinstance(grids, Grids):
                raise TypeError(f"the cut points of feature {f!r} must be a Grids or a "
                                f"ColumnSample, got {type(grids).__name__}")
            else:
                numbers.member(grids)
            if self.kinds.kind.get(f, NUMERIC) != NUMERIC:
                raise ValueError(f"feature {f!r} is nominal: it has no cut points")
            mine = numbers.readings.get(f)
            if mine is None:
                todo[f] = grids
            elif isinstance(grids, Grids) and mine != grids:
                raise ValueError(f"numeric feature {f!r} has other cut points already")
        return self._fix_checked(todo, clock)

    def _fix_checked(self, todo: dict, clock: ReplayClock):
        """:meth:`fix_numeric` of validated ``{feature: Grids or ColumnSample}``, none of
        whose features has cut points: the cut points are computed before anything changes."""
        samples = {f: g for f, g in todo.items() if isinstance(g, ColumnSample)}
        counts = self.counts
        classes = [c for c in dict.fromkeys(c for s in samples.values() for c in s.classes)
                   if counts.class_code(c) < 0]  # to add, as learning the table would
        fixed = {**{f: g for f, g in todo.items() if isinstance(g, Grids)},
                 **self._grids_of_samples(samples, classes)}
        self.kinds.commit({f: NUMERIC for f in todo if f not in self.kinds.kind})
        width = counts.n_pairs
        for label in classes:
            counts.add_class(label)
        if fixed:
            return self._fix_and_replay(fixed, clock)
        return width if classes else None

    def _grids_of_samples(self, samples: dict, new_classes: list) -> dict:
        """``{feature: Grids}`` from whole-table samples (:class:`ColumnSample`), the labels
        coded as after adding ``new_classes``: each from the values kept for the feature,
        then its sample."""
        numbers, counts = self.numeric_reading, self.counts
        if not numbers.cuts_numbers:
            return {}
        code = {label: counts.n_classes + i for i, label in enumerate(new_classes)}
        n_classes = counts.n_classes + len(new_classes)
        waiting = set(numbers.pending.pending)
        out = {}
        for f, sample in samples.items():
            values = sample.sample.values
            classes = np.array([code[c] if c in code else counts.class_code(c)
                                for c in sample.classes], dtype=np.int64)[sample.sample.labels]
            if f in waiting:
                kept, kept_classes = numbers.pending.sample(f)
                values = np.concatenate([kept, values])
                classes = np.concatenate([kept_classes, classes])
            out[f] = numbers.grids_from_sample(values, classes, n_classes)
        return out

    def _fix_and_replay(self, readings: dict, clock: ReplayClock):
        """Give ``readings``' features their intervals as values and add the kept records'
        cells that involve them (:mod:`onlinebma.tan.numbers`): the current record, if one
        is being learned, is already counted, and it is the newest. The number of pairs
        before, or ``None`` without readings."""
        if not readings:
            return None
        numbers, counts = self.numeric_reading, self.counts
        width = counts.n_pairs
        waiting = set(numbers.pending.pending)
        for f, grids in readings.items():
            u = counts.add_feature(f)
            for i in range(numbers.fix(f, grids)):
                counts.add_value(u, i)
        replay = [f for f in readings if f in waiting]
        if replay:
            # record i weighs unit λ^(learned - i) now: learned is the record being learned
            # (counted, before the clock moves on) or, between records, the next one
            records = numbers.pending.replay(replay, learned=clock.learned + 1)
            for r, cells in zip(records, self._replayed_cells(records)):
                counts.add(r.label, cells, clock.weight(r.age))
        return width

    def _replayed_cells(self, records) -> list:
        """The count columns each replayed record (:class:`~onlinebma.numeric.pending.Replayed`)
        adds: those of its cells that involve a replayed feature (its ``new``), the rest
        counted already. The records observing the same features, the same of them new, are
        coded at once (:meth:`~onlinebma.stats.pairs.PairCounts.record_columns` of a matrix),
        and the new cells picked by their place in its documented order."""
        counts, numbers = self.counts, self.numeric_reading
        code, interval = counts.feature_code, numbers.interval
        groups = {}  # (codes, which are new) -> [(position in records, value codes)]
        for i, r in enumerate(records):
            pairs = sorted([(u, c, False) for u, c in r.payload]
                           + [(code(f), interval(f, v), False) for f, v in r.known.items()]
                           + [(code(f), interval(f, v), True) for f, v in r.new.items()])
            codes, values, new = zip(*pairs)
            groups.setdefault((codes, new), []).append((i, values))
        out = [None] * len(records)
        for (codes, new), rows in groups.items():
            columns = counts.record_columns(np.array(codes, dtype=np.int64),
                                            np.array([v for _, v in rows], dtype=np.int64))
            cells = columns[:, _new_cells(np.array(new))]
            for (i, _), row in zip(rows, cells):
                out[i] = row
        return out

    def read(self, x: dict):
        """Validate ``x`` and code its known features and values, without changing anything.

        The arrays (read only) are kept per distinct coding while no class, feature or value
        is added: after discretisation a narrow stream repeats a few hundred codings, and
        building them costs more numpy calls than the rest of a narrow record's reading.

        Parameters
        ----------
        x : dict
            The record to read (left unchanged).

        Returns
        -------
        tuple
            ``(codes, values, columns, split)``: ``codes`` increasing, ``columns`` from
            :meth:`~onlinebma.stats.pairs.PairCounts.record_columns`, ``split`` the
            validated record (:meth:`~onlinebma.records.FeatureKinds.split`).
        """
        split = self.kinds.split(x)
        numeric, nominal, _ = split
        counts = self.counts
        if self._readings_version != counts.version:
            self._readings, self._readings_version = {}, counts.version
        # kept under None: each numeric feature's code and cut points (fixed once, with its
        # code: a new version)
        cut = self._readings.get(None)
        if cut is None:
            numbers = self.numeric_reading
            cut = self._readings[None] = {f: (counts.feature_code(f), numbers.cuts(f))
                                          for f in numbers.readings}
        pairs = counts.known(nominal)
        for f, v in numeric:
            uc = cut.get(f)
            if uc is not None:
                pairs.append((uc[0], bisect_left(uc[1], v)))
        pairs.sort()
        key = tuple(pairs)
        reading = self._readings.get(key)
        if reading is None:
            if pairs:
                codes, values = (np.array(a, dtype=np.int64) for a in zip(*pairs))
            else:
                codes = values = _NO_CODES
            columns = counts.record_columns(codes, values)
            if len(self._readings) * len(columns) > tuning.READING_CELLS:
                self._readings = {None: cut}
            reading = self._readings[key] = (codes, values, columns)
        return (*reading, split)

    def code_for_learning(self, split):
        """Code a validated record's values, adding new features and values.

        Parameters
        ----------
        split : tuple
            The record validated by :meth:`~onlinebma.records.FeatureKinds.split`.

        Returns
        -------
        tuple
            ``(codes, values, grew, nominal)``: ``grew`` whether a feature or value was
            added, ``nominal`` the ``(feature code, value code)`` pairs of its nominal
            features (numeric features without cut points are left out:
            :meth:`keep_pending` keeps them).
        """
        numeric, nominal, new = split
        self.kinds.commit(new)
        counts = self.counts
        grew = False
        pairs = []
        for f, v in nominal:
            u = counts.add_feature(f)
            r = len(counts.values_[u])
            c = counts.add_value(u, v)
            grew = grew or c == r
            pairs.append((u, c))
        coded = pairs[:] if numeric else pairs
        interval = self.numeric_reading.interval
        for f, v in numeric:
            i = interval(f, v)
            if i is not None:
                coded.append((counts.feature_code(f), i))
        if not coded:
            return _NO_CODES, _NO_CODES, grew, pairs
        coded.sort()
        a = np.array(coded, dtype=np.int64)
        return a[:, 0].copy(), a[:, 1].copy(), grew, pairs

    def keep_pending(self, split, c: int, nominal, clock: ReplayClock):
        """After the record of class code ``c`` (its ``nominal`` pairs) was counted: keep it
        if a numeric feature of it has no cut points, and fix and replay the features whose
        sample it completed (before the learner's clock moves on).

        Parameters
        ----------
        split : tuple
            The validated record.
        c : int
            Its class code.
        nominal : list
            :meth:`code_for_learning`'s ``nominal``.
        clock : ReplayClock
            The learner's clock, ``learned`` the index of this record.

        Returns
        -------
        int or None
            The number of pairs before the features fixed, or ``None`` if none was.
        """
        numeric = split[0]
        numbers = self.numeric_reading
        if not numeric or not numbers.cuts_numbers \
                or all(f in numbers.readings for f, _ in numeric):
            return None
        complete = numbers.pending.learn(clock.learned, c, dict(numeric), nominal)
        if not complete:
            return None
        n_classes = self.counts.n_classes
        return self._fix_and_replay({f: numbers.grids_from_sample(*numbers.pending.sample(f),
                                                                  n_classes)
                                     for f in complete}, clock)

    def fix_pending(self, clock: ReplayClock):
        """Fix every feature still without cut points from the values kept for it, and
        replay them: the end of a table ends its features' samples
        (:mod:`onlinebma.tan.numbers`). The number of pairs before, or ``None``."""
        numbers = self.numeric_reading
        n_classes = self.counts.n_classes
        return self._fix_and_replay({f: numbers.grids_from_sample(*numbers.pending.sample(f),
                                                                  n_classes)
                                     for f in numbers.pending.pending}, clock)

    def fix_from_table(self, columns, labels, clock: ReplayClock):
        """Before a validated batch is counted at once, or learned row by row: give each of
        its numeric columns without cut points the cut points of its whole-table sample
        (:class:`~onlinebma.numeric.sample.ColumnSample` of at most
        :data:`~onlinebma.numeric.sample.TABLE_SAMPLE_SIZE` values, after the values kept for
        it: :meth:`fix_numeric`), and replay what was kept; the counts are then those of the
        rows learned one by one with those cut points from the first record.

        Parameters
        ----------
        columns : dict
            :func:`~onlinebma.reading.prepare_frame`'s ``columns``.
        labels : pandas.Series
            The batch's labels.
        clock : ReplayClock
            The learner's clock.

        Returns
        -------
        int or None
            The number of pairs before, or ``None`` if nothing changed.
        """
        numbers = self.numeric_reading
        todo = [f for f, (kind, _, _) in columns.items()
                if kind != NOMINAL and f not in numbers.readings]
        if not todo or not numbers.cuts_numbers:
            return None
        samples = table_samples(columns, labels)
        return self._fix_checked({f: samples[f] for f in todo}, clock)

    def count_table(self, columns, new, labels, clock: ReplayClock) -> None:
        """``learn_many``'s vectorised path, for a learner that forgets nothing: cut points
        of the table's unfinished numeric features from the table (:meth:`fix_from_table`),
        then every row counted at once (one ``bincount`` per block). The learner then adds
        the rows to its record count and recomputes what it derives from the counts.

        Parameters
        ----------
        columns, new, labels
            :func:`~onlinebma.reading.prepare_frame`'s validated batch.
        clock : ReplayClock
            The learner's clock.
        """
        self.fix_from_table(columns, labels, clock)
        matrix, classes = self.code_batch(columns, new, labels)
        self.counts.learn_many(matrix, classes)

    def code_batch(self, columns, new, labels):
        """Code a validated batch for counting, adding its new features, values and classes
        (every numeric column has its cut points: :meth:`fix_from_table`).

        Parameters
        ----------
        columns, new, labels
            :func:`~onlinebma.reading.prepare_frame`'s validated batch.

        Returns
        -------
        tuple
            ``(matrix, class codes)``, the matrix ``(rows, features)`` in feature-code
            order, -1 where missing.
        """
        self.kinds.commit(new)
        counts, numbers = self.counts, self.numeric_reading
        coded = {}
        for f, (kind, values, _) in columns.items():
            if kind == NOMINAL:
                vcodes, uniques = values
                u = counts.add_feature(f)
                vmap = np.array([counts.add_value(u, v.item() if isinstance(v, np.generic)
                                                  else v) for v in uniques] + [-1])
                coded[u] = vmap[vcodes]  # code -1 (missing) picks the last entry
            elif f in numbers.readings:
                coded[counts.feature_code(f)] = numbers.intervals(f, values)
        names, ycodes = factorize(labels)
        cmap = np.array([counts.add_class(label) for label in names], dtype=np.int64)
        matrix = np.full((len(labels), counts.n_features), -1, dtype=np.int64)
        for u, col in coded.items():
            matrix[:, u] = col
        return matrix, cmap[ycodes]

    def code_frame(self, X) -> np.ndarray:
        """A DataFrame's known values as an int matrix ``(rows, features)`` in feature-code
        order, -1 where missing, unseen or not yet cut (validated, nothing learned).

        Parameters
        ----------
        X : pandas.DataFrame
            The rows.

        Returns
        -------
        np.ndarray
        """
        import pandas as pd

        counts = self.counts
        kinds, _ = self.kinds.split_frame(X, learning=False)
        matrix = np.full((len(X), counts.n_features), -1, dtype=np.int64)
        for f, kind in kinds.items():
            u = counts.feature_code(f)
            if u < 0:
                continue
            if kind == NOMINAL:
                vcodes, uniques = pd.factorize(X[f])
                vmap = np.array([counts.value_code(u, v.item() if isinstance(v, np.generic)
                                                   else v) for v in uniques] + [-1])
                matrix[:, u] = vmap[vcodes]
            else:
                matrix[:, u] = self.numeric_reading.intervals(f, numeric_values(X[f]))
        return matrix
