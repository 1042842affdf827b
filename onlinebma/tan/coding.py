"""Reading and coding records for the tree-augmented learners and their ``decay="auto"``.

:class:`RecordCoding` validates a record (:mod:`onlinebma.records`), codes its features and
values as ints in order of first appearance in a :class:`~onlinebma.stats.pairs.PairCounts`,
cuts numeric features into intervals (:mod:`onlinebma.tan.numbers`: cut points from each
feature's first values in a stream, from a sample of the whole column in a table, the records
before them kept and replayed, so that no value is dropped), and codes a DataFrame for the
batch paths. It is shared by
:class:`~onlinebma.tan.base.BaseTAN` and by :class:`~onlinebma.tan.members.TreeMemberStack`
(the state of :class:`~onlinebma.tan.ModelAveragedTAN`), each on its own counts, cut points
and feature kinds.
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from .. import tuning
from ..numeric import Grids
from ..numeric.sample import TABLE_SAMPLE_SIZE, ColumnSample
from ..reading import factorize
from ..records import NOMINAL, NUMERIC, numeric_values

__all__ = ["RecordCoding", "table_samples"]

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


class RecordCoding:
    """Validating and coding records (a mixin): works on the host's ``_kinds``
    (:class:`~onlinebma.records.FeatureKinds`), ``_counts``
    (:class:`~onlinebma.stats.pairs.PairCounts`), ``_numbers``
    (:class:`~onlinebma.tan.numbers.NumericReading`), ``_t`` (records learned), its
    ``_replay_weight(age)`` (the weight, in the counts' current unit, of a record ``age``
    records before the one whose weight is the unit) and ``_numbers_fixed(width)`` (called after cut
    points were fixed and kept records replayed, ``width`` the number of pairs before), and
    the derived ``_readings`` / ``_readings_version`` (not state: reset them when
    pickling)."""

    @property
    def numeric_reading(self):
        """The :class:`~onlinebma.tan.numbers.NumericReading` of the numeric features: their
        cut points and the records kept for those without (read only)."""
        return self._numbers

    @property
    def coded_kinds(self):
        """The :class:`~onlinebma.records.FeatureKinds` of the features coded so far (read
        only)."""
        return self._kinds

    @property
    def records_learned(self) -> int:
        """The number of records learned."""
        return self._t

    def merge_coding(self, other) -> None:
        """Add ``other``'s records (a host of the same kind): feature kinds, numeric cut
        points, counts and the record count.

        Numeric features must have equal cut points where both have them (a feature only
        ``other`` has cut points for gets them here), and neither side may hold records kept
        for a feature without cut points (they would need the cut points of the merged
        learner, which neither has seen): both are refused, naming the feature, before
        anything changes. To merge learners of numeric streams, give them the same cut points
        first (:meth:`fix_numeric`, from a first pass over the data).

        Parameters
        ----------
        other : RecordCoding
            Read through its public views (:attr:`coded_kinds`, :attr:`numeric_reading`,
            ``counts``, :attr:`records_learned`); left unchanged.
        """
        kinds = other.coded_kinds
        self._kinds.check_mergeable(kinds)
        mine, theirs = self._numbers, other.numeric_reading
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
        self._kinds.commit(kinds.kind)
        self._fix_and_replay({f: g for f, g in theirs.readings.items()
                              if f not in mine.readings})
        self._counts.merge(other.counts)
        self._t += other.records_learned

    @property
    def numeric_readings(self) -> dict:
        """``{feature: Grids}``: the cut points of every numeric feature that has them, in the
        order they were fixed (:class:`~onlinebma.numeric.Grids`; give them to another
        learner's :meth:`fix_numeric` to cut the same intervals)."""
        return dict(self._numbers.readings)

    def fix_numeric(self, readings: dict) -> None:
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

        Raises
        ------
        ValueError
            If a feature is nominal, already has other cut points, or a Grids lacks the
            representation; nothing is changed then.
        """
        numbers = self._numbers
        todo = {}
        for f, grids in readings.items():
            if isinstance(grids, ColumnSample):
                pass
            elif not isinstance(grids, Grids):
                raise TypeError(f"the cut points of feature {f!r} must be a Grids or a "
                                f"ColumnSample, got {type(grids).__name__}")
            else:
                numbers.member(grids)
            if self._kinds.kind.get(f, NUMERIC) != NUMERIC:
                raise ValueError(f"feature {f!r} is nominal: it has no cut points")
            mine = numbers.readings.get(f)
            if mine is None:
                todo[f] = grids
            elif isinstance(grids, Grids) and mine != grids:
                raise ValueError(f"numeric feature {f!r} has other cut points already")
        self._fix_checked(todo)

    def _fix_checked(self, todo: dict) -> None:
        """:meth:`fix_numeric` of validated ``{feature: Grids or ColumnSample}``, none of
        whose features has cut points: the cut points are computed before anything changes."""
        samples = {f: g for f, g in todo.items() if isinstance(g, ColumnSample)}
        counts = self._counts
        classes = [c for c in dict.fromkeys(c for s in samples.values() for c in s.classes)
                   if counts.class_code(c) < 0]  # to add, as learning the table would
        fixed = {**{f: g for f, g in todo.items() if isinstance(g, Grids)},
                 **self._grids_of_samples(samples, classes)}
        self._kinds.commit({f: NUMERIC for f in todo if f not in self._kinds.kind})
        width = counts.n_pairs
        for label in classes:
            counts.add_class(label)
        if fixed:
            self._fix_and_replay(fixed)
        elif classes:
            self._numbers_fixed(width)

    def _grids_of_samples(self, samples: dict, new_classes: list) -> dict:
        """``{feature: Grids}`` from whole-table samples (:class:`ColumnSample`), the labels
        coded as after adding ``new_classes``: each from the values kept for the feature,
        then its sample."""
        numbers, counts = self._numbers, self._counts
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

    def _fix_and_replay(self, readings: dict) -> None:
        """Give ``readings``' features their intervals as values and add the kept records'
        cells that involve them (:mod:`onlinebma.tan.numbers`): the current record, if one
        is being learned, is already counted, and it is the newest."""
        if not readings:
            return
        numbers, counts = self._numbers, self._counts
        width = counts.n_pairs
        waiting = set(numbers.pending.pending)
        for f, grids in readings.items():
            u = counts.add_feature(f)
            for i in range(numbers.fix(f, grids)):
                counts.add_value(u, i)
        replay = [f for f in readings if f in waiting]
        if replay:
            # record i weighs unit λ^(_t - i) now: _t is the record being learned (counted,
            # before the clock moves on) or, between records, the next one
            records = numbers.pending.replay(replay, learned=self._t + 1)
            for r, cells in zip(records, self._replayed_cells(records)):
                counts.add(r.label, cells, self._replay_weight(r.age))
        self._numbers_fixed(width)

    def _replayed_cells(self, records) -> list:
        """The count columns each replayed record (:class:`~onlinebma.numeric.pending.Replayed`)
        adds: those of its cells that involve a replayed feature (its ``new``), the rest
        counted already. The records observing the same features, the same of them new, are
        coded at once (:meth:`~onlinebma.stats.pairs.PairCounts.record_columns` of a matrix),
        and the new cells picked by their place in its documented order."""
        counts, numbers = self._counts, self._numbers
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

    def _read_record(self, x: dict):
        """Validate ``x`` and code its known features and values, without changing anything:
        ``(codes, values, columns, split)`` with ``codes`` increasing and ``columns`` from
        :meth:`~onlinebma.stats.pairs.PairCounts.record_columns`. The arrays (read only)
        are kept per distinct coding while no class, feature or value is added: after
        discretisation a narrow stream repeats a few hundred codings, and building them
        costs more numpy calls than the rest of a narrow record's reading."""
        split = self._kinds.split(x)
        numeric, nominal, _ = split
        counts = self._counts
        if self._readings_version != counts.version:
            self._readings, self._readings_version = {}, counts.version
        # kept under None: each numeric feature's code and cut points (fixed once, with its
        # code: a new version)
        cut = self._readings.get(None)
        if cut is None:
            numbers = self._numbers
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

    def _code_for_learning(self, split):
        """Code a validated record's values, adding new features and values:
        ``(codes, values, grew, nominal)``, ``nominal`` the ``(feature code, value code)``
        pairs of its nominal features (numeric features without cut points are left out:
        :meth:`_keep_pending` keeps them)."""
        numeric, nominal, new = split
        self._kinds.commit(new)
        counts = self._counts
        grew = False
        pairs = []
        for f, v in nominal:
            u = counts.add_feature(f)
            r = len(counts.values_[u])
            c = counts.add_value(u, v)
            grew = grew or c == r
            pairs.append((u, c))
        coded = pairs[:] if numeric else pairs
        interval = self._numbers.interval
        for f, v in numeric:
            i = interval(f, v)
            if i is not None:
                coded.append((counts.feature_code(f), i))
        if not coded:
            return _NO_CODES, _NO_CODES, grew, pairs
        coded.sort()
        a = np.array(coded, dtype=np.int64)
        return a[:, 0].copy(), a[:, 1].copy(), grew, pairs

    def _keep_pending(self, split, c: int, nominal) -> bool:
        """After the record of class code ``c`` (its ``nominal`` pairs) was counted: keep it
        if a numeric feature of it has no cut points, and fix and replay the features whose
        sample it completed (before the host's clock moves on). Whether any were fixed."""
        numeric = split[0]
        numbers = self._numbers
        if not numeric or not numbers.cuts_numbers \
                or all(f in numbers.readings for f, _ in numeric):
            return False
        complete = numbers.pending.learn(self._t, c, dict(numeric), nominal)
        if not complete:
            return False
        n_classes = self._counts.n_classes
        self._fix_and_replay({f: numbers.grids_from_sample(*numbers.pending.sample(f),
                                                             n_classes)
                              for f in complete})
        return True

    def _fix_pending(self) -> None:
        """Fix every feature still without cut points from the values kept for it, and
        replay them: the end of a table ends its features' samples
        (:mod:`onlinebma.tan.numbers`)."""
        numbers = self._numbers
        n_classes = self._counts.n_classes
        self._fix_and_replay({f: numbers.grids_from_sample(*numbers.pending.sample(f), n_classes)
                              for f in numbers.pending.pending})

    def _fix_from_table(self, columns, labels) -> None:
        """Before a validated batch is counted at once, or learned row by row: give each of
        its numeric columns without cut points the cut points of its whole-table sample
        (:class:`~onlinebma.numeric.sample.ColumnSample` of at most
        :data:`~onlinebma.numeric.sample.TABLE_SAMPLE_SIZE` values, after the values kept for
        it: :meth:`fix_numeric`), and replay what was kept; the counts are then those of the
        rows learned one by one with those cut points from the first record."""
        numbers = self._numbers
        todo = [f for f, (kind, _, _) in columns.items()
                if kind != NOMINAL and f not in numbers.readings]
        if not todo or not numbers.cuts_numbers:
            return
        samples = table_samples(columns, labels)
        self._fix_checked({f: samples[f] for f in todo})

    def _count_table(self, columns, new, labels) -> None:
        """``learn_many``'s vectorised path, for a host that forgets nothing: cut points of
        the table's unfinished numeric features from the table, then every row counted at
        once (one ``bincount`` per block) and the host's ``_refresh()``."""
        self._fix_from_table(columns, labels)
        matrix, classes = self._code_batch(columns, new, labels)
        self._counts.learn_many(matrix, classes)
        self._t += len(labels)
        self._refresh()

    def _code_batch(self, columns, new, labels):
        """Code a validated batch (:func:`~onlinebma.reading.prepare_frame`'s
        ``columns, new, labels``) for counting, adding its new features, values and classes
        (every numeric column has its cut points: :meth:`_fix_from_table`): ``(matrix, class
        codes)``, the matrix ``(rows, features)`` in feature-code order, -1 where missing."""
        self._kinds.commit(new)
        counts = self._counts
        coded = {}
        for f, (kind, values, _) in columns.items():
            if kind == NOMINAL:
                vcodes, uniques = values
                u = counts.add_feature(f)
                vmap = np.array([counts.add_value(u, v.item() if isinstance(v, np.generic)
                                                  else v) for v in uniques] + [-1])
                coded[u] = vmap[vcodes]  # code -1 (missing) picks the last entry
            elif f in self._numbers.readings:
                coded[counts.feature_code(f)] = self._numbers.intervals(f, values)
        names, ycodes = factorize(labels)
        cmap = np.array([counts.add_class(label) for label in names], dtype=np.int64)
        matrix = np.full((len(labels), counts.n_features), -1, dtype=np.int64)
        for u, col in coded.items():
            matrix[:, u] = col
        return matrix, cmap[ycodes]

    def _code_frame(self, X) -> np.ndarray:
        """A validated DataFrame's known values as an int matrix ``(rows, features)`` in
        feature-code order, -1 where missing, unseen or not yet cut."""
        import pandas as pd

        counts = self._counts
        kinds, _ = self._kinds.split_frame(X, learning=False)
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
                matrix[:, u] = self._numbers.intervals(f, numeric_values(X[f]))
        return matrix
