"""The naive Bayes family on many records at once: a pandas frame, another learner's
statistics (``merge``), the partitions of a Dask frame (``distributed_plan``).

Without forgetting, learning and predicting a frame are vectorised per column
(:mod:`~onlinebma.reading`), and give what the per-record paths of
:class:`~onlinebma.naive_bayes.base.BaseNB` give row by row; with forgetting or
``absent="zero"``, they go row by row. Sufficient statistics add up, so two learners merge
exactly, and so do the learners of a Dask frame's partitions.
"""

from __future__ import annotations

import copy
import math
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..distributed.first_pass import SampledMergePlan
from ..distributed.protocol import MergePlan
from ..labels import in_class_order
from ..numeric.sample import TABLE_SAMPLE_SIZE, ColumnSample
from ..reading import (
    coded_labels,
    pairs_of,
    prepare_columns,
    prepare_frame,
    read_frame,
    records_of,
    uninterrupted,
)
from ..records import NOMINAL, FeatureKinds, numeric_values
from ..stats.tables import NumericTable
from ..validation import check_mergeable_with
from .column_counts import nominal_counts, numeric_moments
from .counts import check_bag, check_name
from .numbers import NumberReader
from .wide import WideNumerics

__all__ = ["BatchPaths", "Statistics", "agree_cut_points"]


class Statistics(NamedTuple):
    """A naive Bayes learner's sufficient statistics (its :attr:`BatchPaths.statistics`):
    what two learners of one class and hyperparameters add when they merge.

    Attributes
    ----------
    kinds : FeatureKinds
        Which features are nominal and which numeric.
    reader : NumberReader or None
        How numbers are read as intervals (``None``: by their moments).
    tables : dict
        ``{feature: NominalTable or NumericTable}``: the counts and moments per class.
    class_counts : dict
        ``{label: weight of its records}``.
    weight : float
        The weight of all records.
    records : int
        The number of records learned.
    """

    kinds: FeatureKinds
    reader: NumberReader | None
    tables: dict
    class_counts: dict
    weight: float
    records: int


class BatchPaths(WideNumerics):
    """Mixin of :class:`~onlinebma.naive_bayes.base.BaseNB`: ``learn_many``, ``merge``,
    ``distributed_plan`` and ``predict_proba_many`` over the base's statistics, and (from
    :class:`~onlinebma.naive_bayes.wide.WideNumerics`) the array path of wide records."""

    def learn_many(self, X, y) -> None:
        """Learn a pandas DataFrame (NaN/None = missing) and its labels.

        Without forgetting, vectorised per column; with it (``decay`` or ``structure_decay``
        below 1, or ``"auto"``) and with ``absent="zero"``, row by row in order, equal to
        ``learn_one`` on each row. The whole batch is validated before anything changes.

        ``X`` and ``y`` are paired by position, not by index, as in River and scikit-learn
        (align first, ``y.loc[X.index]``, to pair by index). A Ctrl-C while the counts are
        updated is delivered once the batch is counted whole (:mod:`.interrupts`), also row
        by row, where it waits for the batch's last row.
        """
        if self._auto or self._zero or self._forgets:
            self._learn_rows(X, y)
            return
        names, ycodes = coded_labels(X, y)
        columns, new = prepare_columns(self._kinds, X)
        counts = np.bincount(ycodes, minlength=len(names))
        new_classes = [lab for lab in names if lab not in self._class_counts]
        with uninterrupted():  # Ctrl-C waits for the whole batch (.interrupts)
            self._kinds.commit(new)
            read = columns
            if self._reads:  # every numeric column's cut points fixed, then read at once
                read = self._read_columns(columns, names, ycodes)
            # new tables in learn_one's order: by first observed row, then a record's nominal
            # values, its numbers read as intervals, its numbers read by their moments
            tables = {f: (nominal_counts(values, present, ycodes, names) if kind == NOMINAL
                          else numeric_moments(values, present, ycodes, names))
                      for f, (kind, values, present) in sorted(read.items(), key=lambda c: (
                          int(np.argmax(c[1][2])), columns[c[0]][0] != NOMINAL,
                          c[1][0] != NOMINAL))}
            for f, batch in tables.items():
                t = self._tables.get(f)
                if t is None:
                    t = self._tables[f] = type(batch)()
                t.merge(batch)
            for label, c in zip(names, counts):
                self._class_counts[label] = self._class_counts.get(label, 0) + int(c)
            self._n += len(ycodes)
            self._t += len(ycodes)
            self._refresh(list(read) if not new_classes else list(self._tables))

    def _read_columns(self, columns: dict, names: list, codes: np.ndarray) -> dict:
        """``learn_many`` without forgetting, numbers read as intervals: fix the cut points
        of every numeric column of the table without them from the column's whole-table
        sample (:class:`~onlinebma.numeric.sample.ColumnSample` of at most
        :data:`~onlinebma.numeric.sample.TABLE_SAMPLE_SIZE` values drawn by row position, the
        whole column when shorter, after the values kept for the feature: the tree
        learners' rule, and what :func:`onlinebma.distributed.fit`'s first pass draws from
        the partitions), count the kept values of the features fixed (:meth:`fix_numeric`),
        and give the columns with each numeric one as the nominal column of its intervals.

        Parameters
        ----------
        columns : dict
            The validated table's columns, ``{feature: (kind, values, present)}``.
        names : list
            The table's labels in order of first appearance.
        codes : np.ndarray
            Each row's label as an index into ``names``.
        """
        first_rows = np.unique(codes, return_index=True)[1]
        self._reader.note_labels(names, self._t + first_rows)
        samples = {f: ColumnSample.of_column(values, codes, tuple(names), TABLE_SAMPLE_SIZE)
                   for f, (kind, values, _) in columns.items()
                   if kind != NOMINAL and f not in self._reader.readings}
        self.fix_numeric({f: s for f, s in samples.items() if s is not None})
        reader = self._reader
        return {f: (NOMINAL, reader.code_column(f, values), present)
                if kind != NOMINAL and f in reader.readings else (kind, values, present)
                for f, (kind, values, present) in columns.items()}

    def _learn_rows(self, X, y) -> None:
        """``learn_many`` row by row, for learners that forget and for ``absent="zero"``
        (numbers read as intervals after their cut points are fixed from the table)."""
        columns, new, labels = prepare_frame(self.feature_kinds, X, y)
        if self._zero:
            check_name(new)
            for f, (kind, values, present) in columns.items():
                if kind != NOMINAL:
                    check_bag([(f, float(np.min(values[present])))])
        if self._auto or self._zero or self._reads:
            # rows validate as their columns did: none fails; one block with the cut points
            # fixed from the table (a Ctrl-C waits for the batch whole, .interrupts)
            with uninterrupted():
                for _, _, fix_from_table in self._number_hosts():
                    fix_from_table(columns, labels.tolist())
                for x, label in zip(records_of(columns, len(labels)), labels):
                    self.learn_one(x, label)
            return
        with uninterrupted():  # learn_one's counting, on rows read and validated per column
            self._predicted = None
            self._kinds.commit(new)
            count = self._count_record
            for (numeric, nominal), label in zip(pairs_of(columns, len(labels)), labels):
                count(numeric, nominal, label)

    @property
    def statistics(self) -> Statistics:
        """This learner's sufficient statistics, what :meth:`merge` adds (the live objects,
        not copies: read them, change them only through :meth:`add_statistics`)."""
        return Statistics(self._kinds, self._reader, self._tables, self._class_counts,
                          self._n, self._t)

    def merge(self, other):
        """A new learner equal to one trained on both learners' streams.

        Both must be the same class with the same hyperparameters; sufficient statistics
        add up (:meth:`add_statistics`). The result's labels are ordered as first seen by
        ``self``, then ``other``. Learners that forget are refused: their statistics weigh
        records by age on two unrelated clocks, and the posterior over structures is a
        recursion over one ordered stream, not a function of summed statistics.
        """
        check_mergeable_with(self, other)
        theirs = other.statistics
        self._check_addable(theirs)
        out = copy.deepcopy(self)
        out.add_statistics(theirs)
        return out

    def add_statistics(self, statistics: Statistics) -> None:
        """Add another learner's sufficient statistics to this learner, in place: it then
        equals a learner trained on both streams (:meth:`merge` does this on a copy).

        Parameters
        ----------
        statistics : Statistics
            ``other.statistics`` of a learner of this class with the same hyperparameters
            (:meth:`merge` checks that); not changed.

        Raises
        ------
        ValueError
            If this learner forgets, a feature is nominal in one and numeric in the other,
            or the numeric features' cut points differ or are not fixed yet; nothing is
            changed then.

        Examples
        --------
        >>> from onlinebma.naive_bayes import NaiveBayes
        >>> left, right = NaiveBayes(), NaiveBayes()
        >>> left.learn_one({"colour": "red"}, "yes")
        >>> right.learn_one({"colour": "blue"}, "no")
        >>> left.add_statistics(right.statistics)
        >>> left.statistics.class_counts
        {'yes': 1, 'no': 1}
        """
        self._check_addable(statistics)
        with uninterrupted():  # Ctrl-C waits for the statistics added whole (.interrupts)
            self._predicted = None
            if self._reader is not None:
                self._reader.merge(statistics.reader)
            self._kinds.commit(statistics.kinds.kind)
            for f, t in statistics.tables.items():
                mine = self._tables.get(f)
                if mine is None:
                    self._tables[f] = copy.deepcopy(t)
                else:
                    mine.merge(t)
            for label, c in statistics.class_counts.items():
                self._class_counts[label] = self._class_counts.get(label, 0) + c
            self._n += statistics.weight
            self._t += statistics.records
            self._refresh(list(self._tables))

    def _check_addable(self, statistics: Statistics) -> None:
        """Refuse statistics that do not add to this learner's (:meth:`add_statistics`)."""
        if not isinstance(statistics, Statistics):
            raise TypeError(f"statistics must be a learner's .statistics, got "
                            f"{type(statistics).__name__}")
        self._refuse_forgetting("merge learners")
        self._kinds.check_mergeable(statistics.kinds)
        if self._reader is not None:
            self._reader.check_mergeable(statistics.reader)

    def _refuse_forgetting(self, action: str) -> None:
        """A ``ValueError`` when this learner forgets: its statistics weigh records by age
        on one clock, so those of two streams (or partitions) do not combine."""
        if self._auto or self._forgets:
            raise ValueError(
                f"cannot {action} that forget (decay or structure_decay other than 1.0): "
                "records of two streams have no common age; train one learner on the "
                "interleaved stream instead"
            )

    def distributed_plan(self) -> MergePlan:
        """How :func:`onlinebma.distributed.fit` trains this learner on Dask: each partition
        counted where it lies and the learners merged in order (:meth:`merge`; only count
        tables and moments travel). With numbers read as intervals, a first pass draws each
        numeric column's sample from the whole frame as ``learn_many`` on it draws it
        (:class:`~onlinebma.distributed.first_pass.SampledMergePlan`) and
        :func:`agree_cut_points` fixes the cut points from it, so that the learners of the
        partitions merge and the result equals ``learn_many`` on the whole frame. A learner
        that forgets is refused here, before any partition is learned."""
        self._refuse_forgetting("train on Dask learners")
        if not self._reads:
            return MergePlan(self)
        return SampledMergePlan(self, self.feature_kinds, TABLE_SAMPLE_SIZE, agree_cut_points)

    def predict_proba_many(self, X):
        """Class probabilities of a DataFrame's rows, vectorised per column (numbers read as
        intervals: each column coded at once, then predicted as a nominal column; a feature
        whose cut points are not fixed yet by its Gaussian, as ``predict_proba_one`` does)."""
        kinds, _ = read_frame(self._kinds, X, learning=False)
        if self._auto:
            return self._rate_mixture().predict_proba_many(X)
        if not self._class_counts:
            return pd.DataFrame(index=X.index)
        if self._zero:  # row by row (documented): a bag's terms do not split per column
            rows = [self.predict_proba_one(x) for x in X.to_dict("records")]
            return in_class_order(pd.DataFrame(rows, columns=list(self._class_counts),
                                               index=X.index))
        prior = self._log_prior()
        classes = list(prior)
        jll = np.tile(np.array(list(prior.values())), (len(X), 1))
        readings = self._reader.readings if self._reader is not None else {}
        for f, kind in kinds.items():
            t = self._tables.get(f)
            if t is None:
                continue
            read = kind != NOMINAL and f in readings  # numbers read as their intervals
            if kind == NOMINAL or read:  # factorised: one term per distinct value (for
                # numbers, interval), -1 where missing
                codes, uniques = (self._reader.code_column(f, numeric_values(X[f])) if read
                                  else pd.factorize(X[f]))
                terms = np.zeros((len(uniques) + 1, len(classes)))  # last row: unseen/missing
                zeros = [0.0] * len(classes)
                for i, v in enumerate(np.asarray(uniques)):
                    v = v.item() if isinstance(v, np.generic) else v
                    if v in t.n_value:
                        terms[i] = self._add_nominals(zeros, [(f, v)], classes)
                jll += terms[codes]  # code -1 picks the last row
            else:
                jll += self._numeric_term_np(f, t, numeric_values(X[f]), classes)
        # Normalise after subtracting each row's maximum: a row of huge scores (a far
        # outlier) then still sums to 1, which log-sum-exp rounding could not promise.
        p = np.exp(jll - jll.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        return in_class_order(pd.DataFrame(p, columns=classes, index=X.index))

    def _numeric_term_np(self, f, t: NumericTable, x: np.ndarray, classes) -> np.ndarray:
        out = np.zeros((len(x), len(classes)))
        present = ~np.isnan(x)
        xs = x[present]
        none = self._log_density_np(t, t.marginal, xs)
        if none is None:
            return out
        arc = np.column_stack([self._log_density_np(t, t.by_class.get(y), xs) for y in classes])
        lw0, lw1 = self._log_weights(f, t)
        if lw0 != -math.inf:
            arc = np.logaddexp(lw0 + none[:, None], lw1 + arc)
        out[present] = arc
        return out


def agree_cut_points(learner, samples: dict):
    """The agreement step of :class:`~onlinebma.distributed.first_pass.SampledMergePlan`
    for the naive Bayes family: fix ``learner``'s cut points from the whole frame's column
    samples as ``learn_many`` on that frame would (its kept values first, its fixed features
    as they are: :meth:`~onlinebma.naive_bayes.base.BaseNB.fix_numeric`), and return a fresh
    learner given the same cut points, whose copies count the partitions.

    Parameters
    ----------
    learner : BaseNB
        A copy of the learner :func:`~onlinebma.distributed.fit` started from, changed in
        place.
    samples : dict
        ``{column: ColumnSample}`` of the frame's numeric columns.

    Returns
    -------
    BaseNB
    """
    learner.fix_numeric(samples)
    template = learner.clone()
    template.fix_numeric(learner.numeric_readings)
    return template
