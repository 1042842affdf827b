"""The one adapter that makes batch-fitted methods River learners.

ISA (lazy), FAN and order MCMC (eager) fit on a table of records, not one record at a time.
:class:`BatchClassifier` gives them River's streaming interface and pandas' batch interface
with one mechanism:

- **Reading.** Records are read with :mod:`onlinebma.records` rules (missing values skipped,
  nominal vs numeric, clear errors that leave the learner unchanged) and stored as integer
  codes (nominal, ``-1`` = missing) and floats (numeric, NaN = missing) in arrival order.
- **Window.** ``window=w`` keeps only the last ``w`` records; ``window=None`` keeps all.
- **Refits.** What a model fits — an eager model's parameters, a discrete model's cut points —
  is refitted when a prediction is asked for and enough records have arrived since the last
  fit: every ``refit_every`` records, or, by default (``refit_every=None``), once the store
  has grown by 10% since the last fit. The default costs O(log n) refits over a stream of n
  records, so progressive validation stays affordable; ``refit_every=1`` refits before any
  prediction that follows new data. A lazy model always predicts from all stored records,
  coded with the cut points of the last fit.
- **Discretization.** Methods over discrete variables (``_discrete = True``) get numeric
  features cut into intervals by Fayyad & Irani's MDL rule fitted on the stored records
  (:func:`onlinebma.preprocessing.mdl_cut_points`) at every refit, the protocol of the ISA
  paper (discretize on the training data). A numeric feature first seen after the last fit
  makes a lazy discrete model refit at its next prediction.
- **Values unseen in training** are skipped at prediction time, like missing values — the same
  rule as the naive Bayes learners.

A subclass implements ``_fit(data)`` (eager) and ``_predict_proba(data, rows)``; see
``BATCH_API`` in the docs for the contract.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from river import base

from .params import check_int
from .records import NOMINAL, NUMERIC, FeatureKinds, check_label, check_labels

__all__ = ["BatchClassifier", "Encoded"]

_GROWTH = 0.1  # default refit policy: refit once the store has grown by 10%


@dataclass(frozen=True)
class Encoded:
    """Records as arrays: what a batch method fits on and predicts from.

    Attributes
    ----------
    codes
        ``(n, p)`` int32 nominal codes, ``-1`` = missing (or, in rows to predict, unseen).
    numeric
        ``(n, q)`` float64 numeric values, NaN = missing.
    y
        ``(n,)`` int32 class codes, or ``None`` for rows to predict.
    nominal_features, numeric_features
        Column names of ``codes`` and ``numeric``.
    n_values
        Number of codes of each ``codes`` column.
    classes
        Labels by class code.
    """

    codes: np.ndarray
    numeric: np.ndarray
    y: np.ndarray | None
    nominal_features: tuple
    numeric_features: tuple
    n_values: tuple
    classes: tuple

    @property
    def n(self) -> int:
        return self.codes.shape[0]


class _Store:
    """Growable arrays of coded records in arrival order, with an optional window."""

    def __init__(self):
        self.codes = np.empty((16, 0), dtype=np.int32)
        self.numeric = np.empty((16, 0), dtype=np.float64)
        self.y = np.empty(16, dtype=np.int32)
        self.start = 0
        self.end = 0

    def __len__(self):
        return self.end - self.start

    def add_columns(self, n_nominal: int, n_numeric: int):
        if n_nominal:
            pad = np.full((self.codes.shape[0], n_nominal), -1, dtype=np.int32)
            self.codes = np.hstack([self.codes, pad])
        if n_numeric:
            pad = np.full((self.numeric.shape[0], n_numeric), np.nan)
            self.numeric = np.hstack([self.numeric, pad])

    def _reserve(self, k: int):
        cap = self.y.shape[0]
        if self.end + k <= cap:
            return
        live = slice(self.start, self.end)
        n = len(self)
        new_cap = max(16, 2 * (n + k)) if n + k > cap // 2 else cap
        codes = np.full((new_cap, self.codes.shape[1]), -1, dtype=np.int32)
        numeric = np.full((new_cap, self.numeric.shape[1]), np.nan)
        y = np.empty(new_cap, dtype=np.int32)
        codes[:n], numeric[:n], y[:n] = self.codes[live], self.numeric[live], self.y[live]
        self.codes, self.numeric, self.y = codes, numeric, y
        self.start, self.end = 0, n

    def append(self, codes: np.ndarray, numeric: np.ndarray, y: np.ndarray, window):
        k = y.shape[0]
        self._reserve(k)
        rows = slice(self.end, self.end + k)
        self.codes[rows], self.numeric[rows], self.y[rows] = codes, numeric, y
        self.end += k
        if window is not None and len(self) > window:
            self.start = self.end - window

    def view(self):
        live = slice(self.start, self.end)
        return self.codes[live], self.numeric[live], self.y[live]


class BatchClassifier(base.MiniBatchClassifier):
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
        self._nominal_cols: dict = {}  # feature -> column of codes
        self._numeric_cols: dict = {}  # feature -> column of numeric
        self._value_codes: list = []  # per nominal column: {value: code}
        self._class_codes: dict = {}
        self._store = _Store()
        self._n_learned = 0  # records ever learned (drives refits and caches)
        self._n_learned_at_fit = 0
        self._n_learned_at_data = 0  # lazy models: records learned when _fitted_data was coded
        self._size_at_fit = 0
        self._fitted_data: Encoded | None = None
        self._cuts: list = []  # discretization cut points per numeric column
        self.n_fits_ = 0

    @property
    def _multiclass(self):
        return True

    @property
    def classes_(self) -> tuple:
        """Every label seen so far, by class code."""
        return tuple(self._class_codes)

    @property
    def data_(self) -> Encoded:
        """The stored records, encoded (numeric features as floats)."""
        codes, numeric, y = self._store.view()
        return Encoded(
            codes=codes, numeric=numeric, y=y,
            nominal_features=tuple(self._nominal_cols),
            numeric_features=tuple(self._numeric_cols),
            n_values=tuple(len(m) for m in self._value_codes),
            classes=tuple(self._class_codes),
        )

    # --------------------------------------------------------------- learning

    def learn_one(self, x: dict, y) -> None:
        check_label(y)
        numeric, nominal, new = self._kinds.split(x)
        # Validated: from here on nothing can fail.
        self._kinds.commit(new)
        self._add_features(new)
        codes = np.full((1, len(self._nominal_cols)), -1, dtype=np.int32)
        values = np.full((1, len(self._numeric_cols)), np.nan)
        for f, v in nominal:
            j = self._nominal_cols[f]
            codes[0, j] = self._value_codes[j].setdefault(v, len(self._value_codes[j]))
        for f, v in numeric:
            values[0, self._numeric_cols[f]] = v
        label = self._class_codes.setdefault(y, len(self._class_codes))
        self._store.append(codes, values, np.array([label], dtype=np.int32), self.window)
        self._n_learned += 1

    def learn_many(self, X, y) -> None:
        """Learn a pandas DataFrame of records (missing = NaN/None) with their labels."""
        import pandas as pd

        if len(X) != len(y):
            raise ValueError(f"X has {len(X)} rows but y has {len(y)}")
        labels = pd.Series(y).reset_index(drop=True)
        check_labels(labels)
        kinds, new_kinds = self._kinds.split_frame(X)  # validates everything first
        self._kinds.commit(new_kinds)
        self._add_features(new_kinds)
        for f, kind in kinds.items():
            if kind == NOMINAL:
                codes = self._value_codes[self._nominal_cols[f]]
                for v in pd.unique(X[f][X[f].notna()]):
                    codes.setdefault(v, len(codes))
        codes, numeric = self._frame_arrays(X)
        for label in pd.unique(labels):
            self._class_codes.setdefault(label, len(self._class_codes))
        ycodes = labels.map(self._class_codes).to_numpy(dtype=np.int32)
        self._store.append(codes, numeric, ycodes, self.window)
        self._n_learned += len(labels)

    def fit(self, X, y):
        """Fit on exactly the records of ``X`` and ``y`` (pandas), forgetting any earlier ones."""
        self._reset()
        self.learn_many(X, y)
        if not self._lazy:
            self._refit()
        return self

    def _add_features(self, new_kinds: dict):
        n_nom = n_num = 0
        for f, k in new_kinds.items():
            if k == NUMERIC:
                self._numeric_cols[f] = len(self._numeric_cols)
                n_num += 1
            else:
                self._nominal_cols[f] = len(self._nominal_cols)
                self._value_codes.append({})
                n_nom += 1
        self._store.add_columns(n_nom, n_num)

    def _frame_arrays(self, X):
        """Code a DataFrame with the current encoders (unseen values → -1)."""
        n = len(X)
        codes = np.full((n, len(self._nominal_cols)), -1, dtype=np.int32)
        numeric = np.full((n, len(self._numeric_cols)), np.nan)
        for f in X.columns:
            s = X[f]
            if f in self._numeric_cols:
                col = s.to_numpy(dtype=float, na_value=np.nan) if s.dtype.kind in "iuf" else \
                    np.array([np.nan if v is None or v != v else float(v) for v in s], dtype=float)
                numeric[:, self._numeric_cols[f]] = col
            elif f in self._nominal_cols:
                j = self._nominal_cols[f]
                mapped = s.map(self._value_codes[j])
                codes[:, j] = mapped.fillna(-1).to_numpy(dtype=np.int64).astype(np.int32)
        return codes, numeric

    # ------------------------------------------------------------- predicting

    def _training_data(self) -> Encoded:
        """The data the model predicts from: refits what is due, and a lazy model's data is
        every stored record, coded with the cut points of the last fit."""
        if self._refit_due():
            self._refit()
        elif self._lazy and self._n_learned_at_data != self._n_learned:
            data = self.data_
            self._fitted_data = self._discretize(data, data.y)
            self._n_learned_at_data = self._n_learned
        return self._fitted_data

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
        data = self._prepare(self.data_)
        if not self._lazy:
            self._fit(data)
        self._fitted_data = data
        self._n_learned_at_fit = self._n_learned_at_data = self._n_learned
        self._size_at_fit = data.n
        self.n_fits_ += 1

    def _prepare(self, data: Encoded) -> Encoded:
        """Discretize numeric features for discrete methods (cut points fitted on ``data``)."""
        if not self._discrete:
            return data
        from .preprocessing import mdl_cut_points

        n_classes = len(data.classes)
        self._cuts = [
            np.asarray(mdl_cut_points(data.numeric[:, j], data.y, n_classes), dtype=float)
            for j in range(data.numeric.shape[1])
        ]
        return self._discretize(data, data.y)

    def _discretize(self, rows: Encoded, y) -> Encoded:
        if not self._discrete:
            return rows
        bins = [
            np.where(np.isnan(rows.numeric[:, j]), -1,
                     np.searchsorted(cuts, rows.numeric[:, j], side="left")).astype(np.int32)
            for j, cuts in enumerate(self._cuts)
        ]
        codes = np.hstack([rows.codes] + [b[:, None] for b in bins]) if bins else rows.codes
        return Encoded(
            codes=codes, numeric=np.empty((rows.n, 0)), y=y,
            nominal_features=rows.nominal_features + rows.numeric_features,
            numeric_features=(),
            n_values=rows.n_values + tuple(len(c) + 1 for c in self._cuts),
            classes=rows.classes,
        )

    def _rows(self, codes, numeric) -> Encoded:
        """Rows to predict, in the fitted data's coding.

        Features and values that arrived after the fit are not in the model: their columns
        are dropped and their codes set to -1 (skipped, like missing values).
        """
        data = self._fitted_data
        n_nominal = len(data.nominal_features) - len(self._cuts)
        n_numeric = len(self._cuts) if self._discrete else len(data.numeric_features)
        codes = codes[:, :n_nominal]
        codes = np.where(codes < np.asarray(data.n_values[:n_nominal], dtype=np.int32), codes, -1)
        rows = Encoded(
            codes=codes.astype(np.int32), numeric=numeric[:, :n_numeric], y=None,
            nominal_features=data.nominal_features[:n_nominal],
            numeric_features=tuple(self._numeric_cols)[:n_numeric],
            n_values=data.n_values[:n_nominal],
            classes=data.classes,
        )
        return self._discretize(rows, None) if self._discrete else rows

    def _encode_one(self, x: dict) -> Encoded:
        """``x`` as one row to predict, in the coding of the data of the last ``_training_data``."""
        numeric, nominal, _ = self._kinds.split(x)
        codes = np.full((1, len(self._nominal_cols)), -1, dtype=np.int32)
        values = np.full((1, len(self._numeric_cols)), np.nan)
        for f, v in nominal:
            j = self._nominal_cols.get(f)
            if j is not None:
                codes[0, j] = self._value_codes[j].get(v, -1)
        for f, v in numeric:
            j = self._numeric_cols.get(f)
            if j is not None:
                values[0, j] = v
        return self._rows(codes, values)

    def predict_proba_one(self, x: dict) -> dict:
        if self._store.end == self._store.start:
            return {}
        data = self._training_data()
        proba = self._predict_proba(data, self._encode_one(x))[0]
        return {label: float(p) for label, p in zip(data.classes, proba)}

    def predict_proba_many(self, X):
        import pandas as pd

        if self._store.end == self._store.start:
            return pd.DataFrame(index=X.index)
        data = self._training_data()
        self._kinds.split_frame(X, learning=False)  # validation only
        codes, numeric = self._frame_arrays(X)
        proba = self._predict_proba(data, self._rows(codes, numeric))
        return pd.DataFrame(proba, columns=list(data.classes), index=X.index)

    def predict_proba(self, X):
        """Class probabilities for a pandas DataFrame, one column per label."""
        return self.predict_proba_many(X)

    def predict_many(self, X):
        import pandas as pd

        proba = self.predict_proba_many(X)
        if proba.shape[1] == 0:
            return pd.Series([None] * len(X), index=X.index, dtype=object)
        return proba.idxmax(axis=1)

    # ---------------------------------------------------------- for subclasses

    def _fit(self, data: Encoded) -> None:  # pragma: no cover - eager subclasses override
        raise NotImplementedError

    def _predict_proba(self, data: Encoded, rows: Encoded) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError
