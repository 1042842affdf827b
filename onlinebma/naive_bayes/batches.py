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
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..distributed.first_pass import SampledMergePlan
from ..distributed.protocol import MergePlan
from ..labels import in_class_order
from ..numeric.sample import TABLE_SAMPLE_SIZE, ColumnSample
from ..reading import coded_labels, prepare_columns
from ..records import NOMINAL, FeatureKinds, numeric_values
from .column_counts import nominal_counts, numeric_moments
from .numbers import NumberReader

__all__ = ["Batch", "BatchPaths", "Statistics", "agree_cut_points"]


class Statistics(NamedTuple):
    """A naive Bayes learner's sufficient statistics (its
    :attr:`~onlinebma.naive_bayes.base.BaseNB.statistics`):
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


class Batch(NamedTuple):
    """A validated frame and its labels, ready to count (:meth:`BatchPaths.prepared`).

    Attributes
    ----------
    names : list
        The frame's labels in order of first appearance.
    codes : np.ndarray
        Each row's label as an index into ``names``.
    columns : dict
        The validated columns, ``{feature: (kind, values, present)}``.
    new : dict
        The kinds of the features the frame brings, ``{feature: kind}``, to commit.
    """

    names: list
    codes: np.ndarray
    columns: dict
    new: dict


class BatchPaths:
    """The vectorised paths of the naive Bayes family over many records at once, held by
    each learner (its ``_batches``): a frame counted per column (``learn_many`` without
    forgetting), another learner's statistics added (``merge``) and a frame predicted per
    column (``predict_proba_many``). It is given at construction the learner's statistics
    it counts into: the objects, shared with the learner, not copies; the learner keeps its
    totals and what it derives from the counts, and calls these methods with what else they
    need.

    Parameters
    ----------
    kinds : FeatureKinds
        Which features are nominal and which numeric.
    tables : dict
        ``{feature: NominalTable or NumericTable}``, the counts and moments per class.
    class_counts : dict
        ``{label: weight of its records}``.
    reader : NumberReader or None
        How numbers are read as intervals (``None``: by their moments, or by each rate's
        learner with ``decay="auto"``).

    Examples
    --------
    >>> import pandas as pd
    >>> from onlinebma.records import FeatureKinds
    >>> from onlinebma.naive_bayes.batches import BatchPaths
    >>> tables, class_counts = {}, {}
    >>> paths = BatchPaths(FeatureKinds(), tables, class_counts, None)
    >>> batch = paths.prepared(pd.DataFrame({"colour": ["red", "blue", "red"]}),
    ...                        pd.Series(["yes", "no", "yes"]))
    >>> paths.count(batch, records=0, fix_numeric=None)
    ['colour']
    >>> class_counts, tables["colour"].n_value
    ({'yes': 2, 'no': 1}, {'red': 2, 'blue': 1})
    """

    def __init__(self, kinds: FeatureKinds, tables: dict, class_counts: dict,
                 reader: NumberReader | None):
        self.kinds = kinds
        self.tables = tables
        self.class_counts = class_counts
        self.reader = reader

    def prepared(self, X, y) -> Batch:
        """Validate a pandas DataFrame (NaN/None = missing) and its labels, paired by
        position, without changing anything.

        Parameters
        ----------
        X : pd.DataFrame
            The records.
        y : pd.Series
            Their labels.

        Returns
        -------
        Batch
        """
        names, codes = coded_labels(X, y)
        columns, new = prepare_columns(self.kinds, X)
        return Batch(names, codes, columns, new)

    def count(self, batch: Batch, records: int, fix_numeric) -> list:
        """Count a prepared frame per column into the statistics (the learner adds
        ``len(batch.codes)`` to its totals): numbers read as intervals have their cut points
        fixed first (:meth:`_read_columns`). Call it uninterrupted (:mod:`.interrupts`).

        Parameters
        ----------
        batch : Batch
            From :meth:`prepared`.
        records : int
            The number of records the learner learned before the frame.
        fix_numeric : callable
            The learner's :meth:`~onlinebma.naive_bayes.base.BaseNB.fix_numeric`.

        Returns
        -------
        list
            The features whose counts changed, or every feature when the frame brings a new
            class: what the learner derives from the counts is to be recomputed for them.
        """
        names, codes, columns, new = batch
        counts = np.bincount(codes, minlength=len(names))
        new_classes = [lab for lab in names if lab not in self.class_counts]
        self.kinds.commit(new)
        read = columns
        if self.reader is not None:  # every numeric column's cut points fixed, then read
            read = self._read_columns(columns, names, codes, records, fix_numeric)
        # new tables in learn_one's order: by first observed row, then a record's nominal
        # values, its numbers read as intervals, its numbers read by their moments
        tables = {f: (nominal_counts(values, present, codes, names) if kind == NOMINAL
                      else numeric_moments(values, present, codes, names))
                  for f, (kind, values, present) in sorted(read.items(), key=lambda c: (
                      int(np.argmax(c[1][2])), columns[c[0]][0] != NOMINAL,
                      c[1][0] != NOMINAL))}
        for f, batch_table in tables.items():
            t = self.tables.get(f)
            if t is None:
                t = self.tables[f] = type(batch_table)()
            t.merge(batch_table)
        for label, c in zip(names, counts):
            self.class_counts[label] = self.class_counts.get(label, 0) + int(c)
        return list(read) if not new_classes else list(self.tables)

    def _read_columns(self, columns: dict, names: list, codes: np.ndarray, records: int,
                      fix_numeric) -> dict:
        """Numbers read as intervals: fix the cut points of every numeric column of the
        table without them from the column's whole-table sample
        (:class:`~onlinebma.numeric.sample.ColumnSample` of at most
        :data:`~onlinebma.numeric.sample.TABLE_SAMPLE_SIZE` values drawn by row position, the
        whole column when shorter, after the values kept for the feature: the tree
        learners' rule, and what :func:`onlinebma.distributed.fit`'s first pass draws from
        the partitions), count the kept values of the features fixed (``fix_numeric``), and
        give the columns with each numeric one as the nominal column of its intervals
        (``columns``, ``names``, ``codes`` as in :class:`Batch`; ``records`` learned
        before)."""
        reader = self.reader
        first_rows = np.unique(codes, return_index=True)[1]
        reader.note_labels(names, records + first_rows)
        samples = {f: ColumnSample.of_column(values, codes, tuple(names), TABLE_SAMPLE_SIZE)
                   for f, (kind, values, _) in columns.items()
                   if kind != NOMINAL and f not in reader.readings}
        fix_numeric({f: s for f, s in samples.items() if s is not None})
        return {f: (NOMINAL, reader.code_column(f, values), present)
                if kind != NOMINAL and f in reader.readings else (kind, values, present)
                for f, (kind, values, present) in columns.items()}

    def check_addable(self, statistics: Statistics) -> None:
        """Refuse statistics whose features' kinds or numbers' cut points differ from these
        (``ValueError``; the learner checks the rest)."""
        self.kinds.check_mergeable(statistics.kinds)
        if self.reader is not None:
            self.reader.check_mergeable(statistics.reader)

    def add(self, statistics: Statistics) -> None:
        """Add another learner's statistics (checked by :meth:`check_addable`) to these; the
        learner adds ``statistics.weight`` and ``statistics.records`` to its totals. Call it
        uninterrupted (:mod:`.interrupts`)."""
        if self.reader is not None:
            self.reader.merge(statistics.reader)
        self.kinds.commit(statistics.kinds.kind)
        for f, t in statistics.tables.items():
            mine = self.tables.get(f)
            if mine is None:
                self.tables[f] = copy.deepcopy(t)
            else:
                mine.merge(t)
        for label, c in statistics.class_counts.items():
            self.class_counts[label] = self.class_counts.get(label, 0) + c

    def distributed_plan(self, learner, kinds: FeatureKinds) -> MergePlan:
        """The Dask plan of ``learner`` (the learner holding this object, which refused
        forgetting): each partition counted where it lies and the learners merged in order;
        with numbers read as intervals, after a first pass that draws each numeric column's
        sample from the whole frame as :meth:`count` draws it
        (:class:`~onlinebma.distributed.first_pass.SampledMergePlan`), from which
        :func:`agree_cut_points` fixes the cut points.

        Parameters
        ----------
        learner : BaseNB
            The learner to train.
        kinds : FeatureKinds
            Its feature kinds (the columns the first pass samples are its numeric ones).

        Returns
        -------
        MergePlan
        """
        if self.reader is None:
            return MergePlan(learner)
        return SampledMergePlan(learner, kinds, TABLE_SAMPLE_SIZE, agree_cut_points)

    def probabilities(self, X, kinds: dict, log_prior: dict, nominal_terms,
                      numeric_terms) -> pd.DataFrame:
        """Class probabilities of a DataFrame's rows, vectorised per column: a nominal
        column (and, numbers read as intervals, a numeric column with fixed cut points,
        coded at once) as one term per distinct value, a numeric one through
        ``numeric_terms``.

        Parameters
        ----------
        X : pd.DataFrame
            The records.
        kinds : dict
            ``{feature: kind}`` of ``X``'s columns (read without learning).
        log_prior : dict
            ``{label: log P(label)}``, the learner's classes in its order.
        nominal_terms : callable
            ``nominal_terms(scores, pairs, classes)``: the learner's ``scores`` plus each
            class's term of the nominal ``(feature, value)`` pairs.
        numeric_terms : callable
            ``numeric_terms(f, table, x, classes)``: an array (rows x classes) of the terms
            of numeric feature ``f`` (``x`` its values, NaN where missing).

        Returns
        -------
        pd.DataFrame
        """
        classes = list(log_prior)
        jll = np.tile(np.array(list(log_prior.values())), (len(X), 1))
        reader = self.reader
        readings = reader.readings if reader is not None else {}
        for f, kind in kinds.items():
            t = self.tables.get(f)
            if t is None:
                continue
            read = kind != NOMINAL and f in readings  # numbers read as their intervals
            if kind == NOMINAL or read:  # factorised: one term per distinct value (for
                # numbers, interval), -1 where missing
                codes, uniques = (reader.code_column(f, numeric_values(X[f])) if read
                                  else pd.factorize(X[f]))
                terms = np.zeros((len(uniques) + 1, len(classes)))  # last row: unseen/missing
                zeros = [0.0] * len(classes)
                for i, v in enumerate(np.asarray(uniques)):
                    v = v.item() if isinstance(v, np.generic) else v
                    if v in t.n_value:
                        terms[i] = nominal_terms(zeros, [(f, v)], classes)
                jll += terms[codes]  # code -1 picks the last row
            else:
                jll += numeric_terms(f, t, numeric_values(X[f]), classes)
        # Normalise after subtracting each row's maximum: a row of huge scores (a far
        # outlier) then still sums to 1, which log-sum-exp rounding could not promise.
        p = np.exp(jll - jll.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        return in_class_order(pd.DataFrame(p, columns=classes, index=X.index))


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
