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

import numpy as np
import pandas as pd

from ..distributed.protocol import MergePlan, Plan
from ..labels import in_class_order
from ..reading import (
    coded_labels,
    pairs_of,
    prepare_columns,
    prepare_frame,
    read_frame,
    records_of,
    uninterrupted,
)
from ..records import NOMINAL, numeric_values
from ..stats.tables import NumericTable
from ..validation import check_mergeable_with
from .column_counts import nominal_counts, numeric_moments
from .counts import check_bag, check_name
from .wide import WideNumerics

__all__ = ["AgreedCutsPlan", "BatchPaths", "FirstValues"]


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
                read = self._read_columns(columns, [names[c] for c in ycodes.tolist()])
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

    def _read_columns(self, columns: dict, labels: list) -> dict:
        """``learn_many`` without forgetting, numbers read as intervals: fix the cut points
        of every numeric column of the table as its rows would (those of a sample the table
        completes from its first ``sample_size`` values), count the kept values of the
        features fixed (:meth:`_fix_from_table`), and give the columns with each numeric
        one as the nominal column of its intervals. Counted, they add to the counts what
        ``learn_one`` on each row adds (the kept values are counted as intervals by the
        replay, the table's by the batch)."""
        self._fix_from_table(columns, labels, whole=True)
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

    def merge(self, other):
        """A new learner equal to one trained on both learners' streams.

        Both must be the same class with the same hyperparameters; sufficient statistics
        add up. The result's labels are ordered as first seen by ``self``, then ``other``.
        Learners that forget are refused: their statistics weigh records by age on two
        unrelated clocks, and the posterior over structures is a recursion over one ordered
        stream, not a function of summed statistics.
        """
        check_mergeable_with(self, other)
        self._refuse_forgetting("merge learners")
        self._kinds.check_mergeable(other._kinds)
        if self._reader is not None:
            self._reader.check_mergeable(other._reader)
        out = copy.deepcopy(self)
        out._predicted = None
        if out._reader is not None:
            out._reader.merge(other._reader)
        out._kinds.commit(other._kinds.kind)
        for f, t in other._tables.items():
            mine = out._tables.get(f)
            if mine is None:
                out._tables[f] = copy.deepcopy(t)
            else:
                mine.merge(t)
        for label, c in other._class_counts.items():
            out._class_counts[label] = out._class_counts.get(label, 0) + c
        out._n += other._n
        out._t += other._t
        out._refresh(list(out._tables))
        return out

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
        tables and moments travel). With numbers read as intervals, a first pass agrees the
        cut points first (:class:`AgreedCutsPlan`), so that the learners of the partitions
        merge and the result equals ``learn_many`` on the whole frame. A learner that forgets
        is refused here, before any partition is learned."""
        self._refuse_forgetting("train on Dask learners")
        return AgreedCutsPlan(self) if self._reads else MergePlan(self)

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


class FirstValues(Plan):
    """The first pass of :class:`AgreedCutsPlan`: ``{column: (values, labels)}``, each
    numeric column's first ``size`` observed values in frame order and their labels (what
    ``learn_many`` on the whole frame fixes its cut points from). A partition is validated as
    ``learn_many`` validates it, and gives at most ``size`` values per numeric column.

    Parameters
    ----------
    kinds : FeatureKinds
        The learner's feature kinds (not changed): which columns are numbers.
    size : int
        The learner's ``sample_size``.
    """

    def __init__(self, kinds, size: int):
        self.kinds = kinds
        self.size = size

    def learn_partition(self, X, y):
        columns, _, labels = prepare_frame(self.kinds, X, y)
        labels = np.asarray(labels, dtype=object)
        out = {}
        for f, (kind, values, present) in columns.items():
            if kind != NOMINAL:
                rows = np.flatnonzero(present)[:self.size]
                out[f] = (values[rows], labels[rows])
        return out

    def combine(self, partials: list):
        out: dict = {}
        for partial in partials:  # in frame order: the earlier values first
            for f, (values, labels) in partial.items():
                if f in out:
                    kept, kept_labels = out[f]
                    values = np.concatenate([kept, values])[:self.size]
                    labels = np.concatenate([kept_labels, labels])[:self.size]
                out[f] = (values, labels)
        return out

    def finish(self, partial):
        return partial


class AgreedCutsPlan(MergePlan):
    """:class:`~onlinebma.distributed.protocol.MergePlan` after a first pass that agrees the
    cut points of the numeric columns (:class:`FirstValues`): the learner the plan started
    from is copied and given them (:meth:`~onlinebma.naive_bayes.base.BaseNB.fix_numeric` of
    :meth:`~onlinebma.naive_bayes.base.BaseNB.numeric_readings_from`: its kept values first,
    its fixed features as they are), and each partition is counted by a copy of a fresh
    learner given the same cut points; the partial learners then merge exactly into the copy.
    The frame is read twice."""

    def run(self, partitions):
        values = partitions.reduce(FirstValues(self.model.feature_kinds, self.model.sample_size))
        model = copy.deepcopy(self.model)
        model.fix_numeric(model.numeric_readings_from(values))
        template = model.clone()
        template.fix_numeric(model.numeric_readings)
        self.model, self.template = model, template  # copied per partition (MergePlan)
        return super().run(partitions)
