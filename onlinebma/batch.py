"""The adapter that makes batch-fitted methods River learners: a buffer-and-refit classifier.

ISA (lazy), FAN, the finite mixture and order MCMC (eager) fit on a table of records, not
one record at a time. :class:`BufferRefitClassifier` gives them River's streaming interface
and pandas' batch interface with one mechanism:

- **Reading.** Records are read with :mod:`onlinebma.records` rules (missing values skipped,
  nominal vs numeric, clear errors that leave the learner unchanged) and stored in arrival
  order by the learner's :class:`~onlinebma.coding.Coding` (:attr:`coding`), which owns the
  feature kinds, value and class codes, the store, the cut points and the growth policy;
  subclasses read records only through it.
- **Window.** ``window=w`` keeps only the last ``w`` records; ``window=None`` keeps all.
  Codes of values no stored record holds any more go (amortised): memory is bounded by the
  window whatever values the stream brings.
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
    is :meth:`Coding.expand_classes <onlinebma.coding.Coding.expand_classes>`). A known class
    with no record in the table — it left the window, or arrived after an eager model's last
    fit — gets the share ``p_k = (m_k + 1) / (n + K)``, with ``m_k`` its count among the
    records stored now, ``n`` the number of stored records (for ISA, the last ``window`` of
    its ``2 window`` stored: those it predicts from) and ``K = len(classes_)``; the
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

import numpy as np
import pandas as pd
from river import base

from .coding import Coding
from .distributed.protocol import MergePlan
from .growth import growth_due
from .labels import ordered_labels, proba_frame
from .table import Table
from .validation import check_int, check_mergeable_with

__all__ = ["BufferRefitClassifier", "Table"]


class BufferRefitClassifier(base.MiniBatchClassifier):
    """Base class of the batch-fitted classifiers: buffer, window, refits, River and pandas APIs.

    Parameters
    ----------
    window : int or None, default None
        Keep only the last ``window`` records (``None``: keep all).
    refit_every : int or None, default None
        Refit (an eager model's parameters, a discrete model's cut points) after this many new
        records, checked when a prediction is asked for. ``None`` refits once the store has
        grown by 10% since the last fit.
    nominal_attributes : list or None, default None
        Features to treat as nominal even when their values are numbers, as in River's trees.
    numeric_attributes : list or None, default None
        Features that are numeric whatever their first value: a value of one that is not a
        number (a ``"?"`` for a missing value read as text) is refused, not made a category.

    """

    _discrete = False
    _lazy = False

    def __init__(self, window: int | None = None, refit_every: int | None = None,
                 nominal_attributes: list | None = None,
                 numeric_attributes: list | None = None):
        if window is not None:
            check_int("window", window, 1)
        if refit_every is not None:
            check_int("refit_every", refit_every, 1)
        self.window = window
        self.refit_every = refit_every
        self.nominal_attributes = nominal_attributes
        self.numeric_attributes = numeric_attributes
        self._reset()

    # ------------------------------------------------------------------ state

    def _reset(self):
        self._coding = Coding(self.nominal_attributes, self._stored_window(),
                              self.numeric_attributes)
        self._n_learned_at_fit = 0
        self._n_learned_at_data = 0  # lazy models: records learned when _fitted_data was built
        self._size_at_fit = 0
        self._fitted_data: Table | None = None
        self.n_fits_ = 0
        self._reset_model()

    def _stored_window(self) -> int | None:
        """Records the coding stores (``None``: all): the window, unless a subclass keeps
        more (the contexts of the window's records)."""
        return self.window

    def _reset_model(self) -> None:
        """Empty the subclass's fitted state (called by :meth:`_reset`, after the coding)."""

    @property
    def coding(self) -> Coding:
        """How this learner codes its records (:class:`~onlinebma.coding.Coding`): feature
        kinds, value and class codes, the stored records, cut points."""
        return self._coding

    @property
    def _n_learned(self) -> int:
        return self._coding.n_learned

    @property
    def _multiclass(self):
        return True

    @property
    def classes_(self) -> tuple:
        """Every label learned, sorted when the labels sort, else in order of first arrival:
        the columns of :meth:`predict_proba_many` (:mod:`onlinebma.labels`)."""
        return ordered_labels(self._coding.classes)

    @property
    def data_(self) -> Table:
        """The stored records as a canonical table (numeric features as floats)."""
        return self._coding.table()

    # --------------------------------------------------------------- learning

    def learn_one(self, x: dict, y) -> None:
        self._coding.learn_one(x, y)

    def learn_many(self, X, y) -> None:
        """Learn a pandas DataFrame of records (missing = NaN/None) with their labels.

        ``X`` and ``y`` are paired by position, not by index, as in River and scikit-learn
        (align first, ``y.loc[X.index]``, to pair by index). The whole batch is validated
        before anything changes, and a Ctrl-C while it is stored is delivered once it is stored
        whole (:func:`onlinebma.reading.uninterrupted`).
        """
        self._coding.learn_many(X, y)

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
        how many were learned, their labels, features and values in order of first arrival
        (the values whose codes ``other`` still holds: a window lets the others go) —
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
        self._coding.kinds.check_mergeable(other.coding.kinds)
        dropped = other.coding.n_learned - other.coding.n_stored
        if dropped and self._learning_changes_state():
            raise ValueError(
                f"cannot merge exactly: the other learner's window dropped {dropped} record(s) "
                f"that {type(self).__name__} would have learned after fitting (its state "
                f"depends on every record learned since, not only on the stored ones); merge "
                f"before the window fills, or train one learner on the concatenated stream"
            )
        X, y = other.coding.stored_frame()
        out = copy.deepcopy(self)
        out.coding.register(other.coding)
        if len(y):
            out.learn_many(X, y)
        out.coding.count_dropped(dropped)
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

    # ------------------------------------------------------------- predicting

    def _training_data(self) -> Table:
        """The table the model predicts from: refits what is due, and a lazy model's table
        holds every stored record, coded with the cut points of the last fit."""
        if self._refit_due():
            self._refit()
        elif self._lazy and self._n_learned_at_data != self._n_learned:
            self._fitted_data = self._coding.table(self._discrete)
            self._n_learned_at_data = self._n_learned
        return self._fitted_data

    def _batch_refit_due(self) -> bool:
        """Whether the table is refit before the next prediction (the batch rule; a
        subclass that learns as a stream overrides :meth:`_refit_due` when streaming)."""
        if self._fitted_data is None:
            return True
        coding = self._coding
        if self._lazy and self._discrete and len(coding.cuts) != len(coding.numeric_features):
            return True  # a numeric feature arrived: a lazy model would code its values next
        new = self._n_learned - self._n_learned_at_fit
        if new == 0:
            return False
        if self.refit_every is not None:
            return new >= self.refit_every
        return growth_due(new, self._size_at_fit)

    _refit_due = _batch_refit_due

    def _batch_refit(self):
        """Fit the model to the stored records (the batch refit; see :meth:`_refit_due`)."""
        coding = self._coding
        saved = coding.cuts
        if self._discrete:
            coding.cuts = coding.fit_cuts()
        table = coding.table(self._discrete)
        if not self._lazy:
            try:
                self._fit(table)
            except Exception:
                coding.cuts = saved
                raise
        self._fitted_data = table
        self._n_learned_at_fit = self._n_learned_at_data = self._n_learned
        self._size_at_fit = table.n
        self.n_fits_ += 1

    _refit = _batch_refit

    def _expand_classes(self, table: Table, proba: np.ndarray) -> np.ndarray:
        """Probabilities over ``table.classes`` → over ``classes_`` (the coding's rule)."""
        return self._coding.expand_classes(table.classes, proba)

    def predict_proba_one(self, x: dict) -> dict:
        x = self._coding.check_one(x)  # refused before any refit
        if not self._coding.n_stored:
            return {}
        table = self._training_data()
        proba = self._predict_proba(table, table.encode_one(x))
        return dict(zip(self._coding.classes, self._expand_classes(table, proba)[0].tolist()))

    def predict_proba_many(self, X):
        self._coding.check_frame(X)  # validation only, before any refit
        if not self._coding.n_stored:
            return pd.DataFrame(index=X.index)
        table = self._training_data()
        proba = self._expand_classes(table, self._predict_proba(table, table.encode_frame(X)))
        return self._proba_frame(proba, X.index)

    def _proba_frame(self, proba: np.ndarray, index) -> pd.DataFrame:
        """Probabilities over the class codes as a frame with columns in ``classes_`` order."""
        return proba_frame(proba, self._coding.classes, index)

    def predict_proba(self, X):
        """Class probabilities for a pandas DataFrame, one column per label in ``classes_``
        order (:mod:`onlinebma.labels`)."""
        return self.predict_proba_many(X)

    def predict_many(self, X):
        proba = self.predict_proba_many(X)
        if proba.shape[1] == 0:
            return pd.Series([None] * len(X), index=X.index, dtype=object)
        return proba.idxmax(axis=1)

    def _encode_one(self, x: dict, table: Table | None = None) -> Table:
        """``x`` (validated, missing values dropped) as one row in the coding of ``table``, by
        default the table of the last prediction."""
        x = self._coding.check_one(x)
        return (self._fitted_data if table is None else table).encode_one(x)

    # ---------------------------------------------------------- for subclasses

    def _fit(self, data: Table) -> None:  # pragma: no cover - eager subclasses override
        raise NotImplementedError

    def _predict_proba(self, data: Table, rows: Table) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

