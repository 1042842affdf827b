"""The adapter that makes batch-fitted methods River learners: a buffer-and-refit classifier.

ISA (lazy), FAN, the finite mixture and order MCMC (eager) fit on a table of records, not
one record at a time. :class:`BufferRefitClassifier` gives them River's streaming interface
and pandas' batch interface with one mechanism:

- **Reading.** Records are read with :mod:`onlinebma.records` rules (missing values skipped,
  nominal vs numeric, clear errors that leave the learner unchanged) and buffered in arrival
  order.
- **Window.** ``window=w`` keeps only the last ``w`` records; ``window=None`` keeps all.
- **Refits.** What a model fits — an eager model's parameters, a discrete model's cut points —
  is refitted when a prediction is asked for and enough records have arrived since the last
  fit: every ``refit_every`` records, or, by default (``refit_every=None``), once the store
  has grown by 10% since the last fit. The default costs O(log n) refits over a stream of n
  records, so progressive validation stays affordable; ``refit_every=1`` refits before any
  prediction that follows new data. A lazy model always predicts from all stored records,
  coded with the cut points of the last fit.
- **The canonical table.** At every refit, and for a lazy model after every change of the
  store, the stored records become one :class:`~onlinebma.table.Table`: columns in a
  canonical order (nominal features, then numeric ones, each sorted by name), values and
  classes compacted to those present in the stored records, value and interval names
  attached. Rows to predict are encoded by the same table (:meth:`Table.encode_one`,
  :meth:`Table.encode_frame`): values it has not seen, features it does not have and missing
  values all get the code ``-1`` (:data:`onlinebma.table.MISSING`) and are skipped — the same
  rule as the naive Bayes learners.
- **Merging.** ``a.merge(b)`` is a copy of ``a`` that learned ``b``'s stored records (decoded
  to their values) with one ``learn_many``: the learner of the concatenated stream, history
  included, for every subclass at once (:meth:`BufferRefitClassifier.merge`). This is what
  :func:`onlinebma.distributed.fit` combines partitions with.
- **Discretization.** Methods over discrete variables (``_discrete = True``) get numeric
  features cut into intervals by Fayyad & Irani's MDL rule fitted on the stored records
  (:func:`onlinebma.preprocessing.mdl_cut_points`) at every refit, the protocol of the ISA
  paper (discretize on the training data). A numeric feature first seen after the last fit
  makes a lazy discrete model refit at its next prediction.

Classes absent from the table
    A method predicts over the table's classes; the adapter then expands the prediction to
    every label the learner knows (:attr:`~BufferRefitClassifier.classes_`; the one expansion
    is ``_expand_classes``). A known class
    with no record in the table — it left the window, or arrived after an eager model's last
    fit — gets the share ``p_k = (m_k + 1) / (n + K)``, with ``m_k`` its count among the
    records stored now, ``n`` the number of stored records and ``K = len(classes_)``; the
    table's classes share the remaining mass in the model's proportions. Every prediction
    therefore covers ``classes_``, sums to one and gives no known class probability 0. When
    the table holds every known class (no window, no class since the last fit), predictions
    are the model's own.

The subclass contract
    A batch method subclasses :class:`BufferRefitClassifier` and sets two class attributes:

    - ``_lazy``: ``False`` (eager) — ``_fit(table)`` is called at each refit and the method
      predicts from what it fitted; ``True`` (lazy) — no ``_fit``, it predicts from the table
      of all stored records, rebuilt whenever the store changed.
    - ``_discrete``: ``True`` when the method needs every feature discrete; numeric features
      then arrive as code columns (after the nominal ones) and ``table.numeric`` is empty.

    It implements ``_fit(table)`` (eager only) and ``_predict_proba(table, rows)`` returning an
    ``(rows.n, len(table.classes))`` array of class probabilities (rows summing to one), and
    may assume:

    - ``table`` has at least one record and one class; ``table.y`` indexes ``table.classes``;
      every code in ``0..n_values[j] - 1`` occurs in column ``j`` of ``table.codes`` (a column
      may have ``n_values[j] = 0`` when all its values are missing); the column order is the
      canonical one, so nothing depends on the order in which features arrived.
    - ``rows`` is encoded by ``table`` (the table the method fitted on, for an eager method):
      same columns, codes in range or ``-1``, NaN for missing floats, ``rows.y is None``.
    - ``_fit`` may raise ``ValueError`` for a problem with the data: ``fit`` then restores the
      learner as it was, and a refit at prediction time keeps the previous fit (so ``_fit``
      changes its own attributes only once everything is computed).

    It must not recode the table (no value, class or column maps of its own) and need not
    care about classes absent from it.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pandas as pd
from river import base

from .distributed.protocol import MergePlan
from .naive_bayes.frames import labels_of, read_frame, read_record
from .naive_bayes.interrupts import uninterrupted
from .records import (
    NOMINAL,
    NUMERIC,
    FeatureKinds,
    check_label,
    check_labels,
    numeric_values,
)
from .store import RecordStore
from .table import Table, canonical_order
from .validation import check_int, check_mergeable_with

__all__ = ["BufferRefitClassifier", "Table"]

_GROWTH = 0.1  # default refit policy: refit once the store has grown by 10%


class BufferRefitClassifier(base.MiniBatchClassifier):
    """Base class of the batch-fitted classifiers: buffer, window, refits, River and pandas APIs.

    Parameters
    ----------
    window
        Keep only the last ``window`` records (``None``: keep all).
    refit_every
        Refit (an eager model's parameters, a discrete model's cut points) after this many new
        records, checked when a prediction is asked for. ``None`` refits once the store has
        grown by 10% since the last fit.
    nominal_attributes
        Features to treat as nominal even when their values are numbers, as in River's trees.

    """

    _discrete = False
    _lazy = False

    def __init__(self, window: int | None = None, refit_every: int | None = None,
                 nominal_attributes: list | None = None):
        if window is not None:
            check_int("window", window, 1)
        if refit_every is not None:
            check_int("refit_every", refit_every, 1)
        self.window = window
        self.refit_every = refit_every
        self.nominal_attributes = nominal_attributes
        self._reset()

    # ------------------------------------------------------------------ state

    def _reset(self):
        self._kinds = FeatureKinds(self.nominal_attributes)
        self._nominal_cols: dict = {}  # feature -> store column of codes, canonical order
        self._numeric_cols: dict = {}  # feature -> store column of numeric, canonical order
        self._value_codes: list = []  # per store column of codes: {value: code}
        self._class_codes: dict = {}
        self._store = RecordStore()
        self._n_learned = 0  # records ever learned (drives refits and caches)
        self._n_learned_at_fit = 0
        self._n_learned_at_data = 0  # lazy models: records learned when _fitted_data was built
        self._size_at_fit = 0
        self._fitted_data: Table | None = None
        self._cuts: list = []  # discrete models: cut points of the numeric features (last fit)
        self.n_fits_ = 0

    @property
    def _multiclass(self):
        return True

    @property
    def classes_(self) -> tuple:
        """Every label seen so far, by class code."""
        return tuple(self._class_codes)

    @property
    def data_(self) -> Table:
        """The stored records as a canonical table (numeric features as floats)."""
        return self._table(cuts=None)

    def _table(self, cuts) -> Table:
        codes, numeric, y = self._store.view()
        return Table.build(
            codes, numeric, y,
            nominal=[(f, j, list(self._value_codes[j])) for f, j in self._nominal_cols.items()],
            numeric_columns=list(self._numeric_cols.items()),
            classes=tuple(self._class_codes), cuts=cuts,
        )

    # --------------------------------------------------------------- learning

    def learn_one(self, x: dict, y) -> None:
        check_label(y)
        numeric, nominal, new = read_record(self._kinds, x)
        # Validated: from here on nothing can fail.
        self._kinds.commit(new)
        self._add_features(new)
        codes = np.full((1, self._store.codes.shape[1]), -1, dtype=np.int32)
        values = np.full((1, self._store.numeric.shape[1]), np.nan)
        for f, v in nominal:
            j = self._nominal_cols[f]
            codes[0, j] = self._value_codes[j].setdefault(v, len(self._value_codes[j]))
        for f, v in numeric:
            values[0, self._numeric_cols[f]] = v
        label = self._class_codes.setdefault(y, len(self._class_codes))
        self._store.append(codes, values, np.array([label], dtype=np.int32), self.window)
        self._n_learned += 1

    def learn_many(self, X, y) -> None:
        """Learn a pandas DataFrame of records (missing = NaN/None) with their labels.

        ``X`` and ``y`` are paired by position, not by index, as in River and scikit-learn
        (align first, ``y.loc[X.index]``, to pair by index). The whole batch is validated
        before anything changes, and a Ctrl-C while it is stored is delivered once it is stored
        whole (:mod:`onlinebma.naive_bayes.interrupts`).
        """
        labels = labels_of(X, y)
        check_labels(labels)
        new_labels = _unique_labels(labels)
        kinds, new_kinds = read_frame(self._kinds, X)  # validates everything first
        # Validated: from here on nothing can fail, and Ctrl-C waits for the end.
        with uninterrupted():
            self._kinds.commit(new_kinds)
            self._add_features(new_kinds)
            n = len(X)
            codes = np.full((n, self._store.codes.shape[1]), -1, dtype=np.int32)
            numeric = np.full((n, self._store.numeric.shape[1]), np.nan)
            for f, kind in kinds.items():
                s = X[f]
                if kind == NOMINAL:
                    j = self._nominal_cols[f]
                    mapping = self._value_codes[j]
                    for v in pd.unique(s[s.notna()]):
                        mapping.setdefault(v, len(mapping))
                    codes[:, j] = s.map(mapping).fillna(-1).to_numpy(dtype=np.int64)
                else:
                    numeric[:, self._numeric_cols[f]] = numeric_values(s)
            for label in new_labels:
                self._class_codes.setdefault(label, len(self._class_codes))
            ycodes = labels.map(self._class_codes).to_numpy(dtype=np.int32)
            self._store.append(codes, numeric, ycodes, self.window)
            self._n_learned += n

    def fit(self, X, y):
        """Fit on exactly the records of ``X`` and ``y`` (pandas), forgetting any earlier ones.

        If the records are refused (or the fit fails), the learner is left as it was.
        """
        saved = self.__dict__.copy()  # _reset rebinds, never mutates, what it replaces
        try:
            self._reset()
            self.learn_many(X, y)
            if not self._lazy:
                self._refit()
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise
        return self

    def _add_features(self, new_kinds: dict):
        if not new_kinds:
            return
        n_nom = n_num = 0
        for f, k in new_kinds.items():
            if k == NUMERIC:
                self._numeric_cols[f] = self._store.numeric.shape[1] + n_num
                n_num += 1
            else:
                self._nominal_cols[f] = self._store.codes.shape[1] + n_nom
                self._value_codes.append({})
                n_nom += 1
        self._store.add_columns(n_nom, n_num)
        # Canonical order: the discretized columns follow ``_numeric_cols`` (and ``_cuts``).
        self._nominal_cols = {f: self._nominal_cols[f] for f in canonical_order(self._nominal_cols)}
        self._numeric_cols = {f: self._numeric_cols[f] for f in canonical_order(self._numeric_cols)}

    # ---------------------------------------------------------------- merging

    def merge(self, other: BufferRefitClassifier) -> BufferRefitClassifier:
        """A new learner: ``self`` after learning every record ``other`` has learned, in order.

        Exact by construction: the result *is* a copy of ``self`` that learned ``other``'s
        stored records with one ``learn_many`` (decoded to their original values), so it equals
        the learner that learned the concatenated stream — the stored records concatenated in
        order and cut by the window, labels, features and values numbered in order of first
        arrival (``self``'s, then ``other``'s new ones) and, for state that depends on history,
        ``self``'s history continued by ``other``'s records: the refit schedule and its counters,
        warm starts, a mixture's prequential scores (``other``'s records are scored by
        ``self``'s last fit, as learning them would), an order learner's streaming counts.
        ``other`` contributes its records, not its fits (a learner that learned the
        concatenation never saw ``other``'s refits). Neither learner is modified.

        Records that ``other``'s window dropped are not replayed: the window of the
        concatenation drops them too (both learners have the same window), and their trace —
        how many were learned, their labels, features and values in order of first arrival —
        is carried over. That is exact unless learning a record changes ``self``'s state beyond
        its store (an eager learner that has fitted, such as a mixture scoring records for its
        average over K): then the dropped records cannot be replayed and merge refuses with a
        ``ValueError``.

        Merges of learners that have not predicted yet (the shards of
        :func:`onlinebma.distributed.fit`) are associative, exactly: any tree of merges over
        shards in order equals ``learn_many`` on the shards concatenated. They are commutative
        (up to the order of the labels) only where the fitted model does not depend on the
        order of the stored records: order averaging and order MCMC without a window; not ISA
        (its eq. 9 scores are prequential), not the mixtures (held-out half, seeded starts), not
        with a window.

        Raises ``TypeError`` for another class or a feature nominal in one learner and numeric
        in the other, ``ValueError`` for other hyperparameters.
        """
        check_mergeable_with(self, other)
        for f, k in other._kinds.kind.items():
            mine = self._kinds.kind.get(f)
            if mine is not None and mine != k:
                raise TypeError(f"feature {f!r} is nominal in one learner and numeric in the other")
        dropped = other._n_learned - len(other._store)
        if dropped and self._learning_changes_state():
            raise ValueError(
                f"cannot merge exactly: the other learner's window dropped {dropped} record(s) "
                f"that {type(self).__name__} would have learned after fitting (its state "
                f"depends on every record learned since, not only on the stored ones); merge "
                f"before the window fills, or train one learner on the concatenated stream"
            )
        X, y = other._stored_frame()
        out = copy.deepcopy(self)
        out._register(other)
        if len(y):
            out.learn_many(X, y)
        out._n_learned += dropped
        return out

    def distributed_plan(self) -> MergePlan:
        """How :func:`onlinebma.distributed.fit` trains this learner on Dask: each partition
        learned by a fresh clone, the clones merged in order (:meth:`merge`), so the result
        is this learner after ``learn_many`` on the whole frame. The mixtures and the order
        learners choose plans from sums or counts when they can."""
        return MergePlan(self)

    def _learning_changes_state(self) -> bool:
        """Whether learning a record now changes more than the store (conservatively: an eager
        learner that has fitted). Subclasses that know better may say so."""
        return not self._lazy and self._fitted_data is not None

    def _register(self, other: BufferRefitClassifier) -> None:
        """Labels, features and nominal values ``other`` has seen, added in its order of first
        arrival (what learning its whole stream would add, dropped records included)."""
        nominal = sorted(other._nominal_cols.items(), key=lambda t: t[1])  # arrival order
        numeric = sorted(other._numeric_cols.items(), key=lambda t: t[1])
        new = {f: other._kinds.kind[f] for f, _ in nominal + numeric if f not in self._kinds.kind}
        self._kinds.commit(new)
        self._add_features(new)
        for f, j in other._nominal_cols.items():
            mapping = self._value_codes[self._nominal_cols[f]]
            for v in other._value_codes[j]:
                mapping.setdefault(v, len(mapping))
        for label in other._class_codes:
            self._class_codes.setdefault(label, len(self._class_codes))

    def _stored_frame(self):
        """The stored records as ``(X, y)`` in arrival order, with their original values:
        a pandas DataFrame (nominal columns of objects, ``None`` missing; numeric columns of
        floats, NaN missing) and a Series of labels."""
        codes, numeric, y = self._store.view()
        columns = {}
        for f, j in self._nominal_cols.items():
            values = np.empty(len(self._value_codes[j]) + 1, dtype=object)
            for c, v in enumerate(self._value_codes[j]):
                values[c] = v  # one by one: a tuple value stays one value
            columns[f] = pd.Series(values[codes[:, j]], dtype=object)  # -1 reads None
        for f, j in self._numeric_cols.items():
            columns[f] = pd.Series(numeric[:, j], dtype=float)
        labels = np.empty(len(self._class_codes), dtype=object)
        for c, label in enumerate(self._class_codes):
            labels[c] = label
        X = pd.DataFrame(columns, index=pd.RangeIndex(len(y)))
        return X, pd.Series(labels[y], dtype=object)

    # ------------------------------------------------------------- predicting

    def _training_data(self) -> Table:
        """The table the model predicts from: refits what is due, and a lazy model's table
        holds every stored record, coded with the cut points of the last fit."""
        if self._refit_due():
            self._refit()
        elif self._lazy and self._n_learned_at_data != self._n_learned:
            self._fitted_data = self._table(self._cut_map())
            self._n_learned_at_data = self._n_learned
        return self._fitted_data

    def _cut_map(self):
        return dict(zip(self._numeric_cols, self._cuts)) if self._discrete else None

    def _refit_due(self) -> bool:
        if self._fitted_data is None:
            return True
        if self._lazy and self._discrete and len(self._cuts) != len(self._numeric_cols):
            return True  # a numeric feature arrived: a lazy model would code its values next
        new = self._n_learned - self._n_learned_at_fit
        if new == 0:
            return False
        if self.refit_every is not None:
            return new >= self.refit_every
        return new >= max(1, math.ceil(_GROWTH * self._size_at_fit))

    def _refit(self):
        cuts = self._fit_cuts() if self._discrete else self._cuts
        saved, self._cuts = self._cuts, cuts
        table = self._table(self._cut_map())
        if not self._lazy:
            try:
                self._fit(table)
            except Exception:
                self._cuts = saved
                raise
        self._fitted_data = table
        self._n_learned_at_fit = self._n_learned_at_data = self._n_learned
        self._size_at_fit = table.n
        self.n_fits_ += 1

    def _fit_cuts(self) -> list:
        """MDL cut points of every numeric feature on the stored records (canonical order)."""
        from .preprocessing import mdl_cut_points

        _, numeric, y = self._store.view()
        ycodes = np.unique(y, return_inverse=True)[1].reshape(-1)  # the table's class codes
        n_classes = max(1, int(ycodes.max(initial=-1)) + 1)
        return [np.asarray(mdl_cut_points(numeric[:, j], ycodes, n_classes), dtype=float)
                for j in self._numeric_cols.values()]

    def _expand_classes(self, table: Table, proba: np.ndarray) -> np.ndarray:
        """Probabilities over ``table.classes`` → over ``classes_`` (the module's class policy)."""
        k = len(self._class_codes)
        if len(table.classes) == k:
            return proba  # every known class is in the table, in class-code order
        cols = np.array([self._class_codes[c] for c in table.classes], dtype=np.int64)
        absent = np.ones(k, dtype=bool)
        absent[cols] = False
        _, _, y = self._store.view()
        counts = np.bincount(y, minlength=k)
        share = (counts[absent] + 1.0) / (len(y) + k)
        out = np.empty((proba.shape[0], k))
        out[:, absent] = share
        out[:, cols] = proba * (1.0 - share.sum())
        return out

    def predict_proba_one(self, x: dict) -> dict:
        numeric, nominal, _ = read_record(self._kinds, x)  # refused before any refit
        if self._store.end == self._store.start:
            return {}
        table = self._training_data()
        proba = self._predict_proba(table, table.encode_one(dict(nominal + numeric)))
        return dict(zip(self.classes_, self._expand_classes(table, proba)[0].tolist()))

    def predict_proba_many(self, X):
        read_frame(self._kinds, X, learning=False)  # validation only, before any refit
        if self._store.end == self._store.start:
            return pd.DataFrame(index=X.index)
        table = self._training_data()
        proba = self._expand_classes(table, self._predict_proba(table, table.encode_frame(X)))
        return pd.DataFrame(proba, columns=list(self.classes_), index=X.index)

    def predict_proba(self, X):
        """Class probabilities for a pandas DataFrame, one column per label."""
        return self.predict_proba_many(X)

    def predict_many(self, X):
        proba = self.predict_proba_many(X)
        if proba.shape[1] == 0:
            return pd.Series([None] * len(X), index=X.index, dtype=object)
        return proba.idxmax(axis=1)

    def _encode_one(self, x: dict, table: Table | None = None) -> Table:
        """``x`` (validated, missing values dropped) as one row in the coding of ``table``, by
        default the table of the last prediction."""
        numeric, nominal, _ = read_record(self._kinds, x)
        return (self._fitted_data if table is None else table).encode_one(dict(nominal + numeric))

    # ---------------------------------------------------------- for subclasses

    def _fit(self, data: Table) -> None:  # pragma: no cover - eager subclasses override
        raise NotImplementedError

    def _predict_proba(self, data: Table, rows: Table) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError


def _unique_labels(labels):
    """The distinct labels of a Series, in order of appearance; an unhashable one is refused."""
    try:
        return pd.unique(labels)
    except TypeError:
        for row, label in enumerate(labels):
            try:
                hash(label)
            except TypeError:
                raise TypeError(f"the label y={label!r} in row {row} is not hashable "
                                f"({type(label).__name__})") from None
        raise
