"""The thin base shared by the tree-augmented learners.

:class:`BaseTAN` owns the one sufficient statistic, :class:`~onlinebma.stats.pairs.PairCounts`
(class, single and pair counts per class), and everything around it that does not depend on
the model: reading and validating records (:mod:`onlinebma.records`), coding features, values
and labels as ints in order of first appearance, numeric features through
:mod:`onlinebma.tan.binning`, forgetting (``decay``), ``decay="auto"``
(:class:`~onlinebma.naive_bayes.decay.RateMixture`), ``learn_one``/``learn_many``,
``predict_proba_one``/``predict_proba_many``, and ``merge`` (:mod:`onlinebma.tan.merging`).
A learner supplies the joint log likelihoods of the classes for coded records:
:meth:`BaseTAN._joint_log_likelihood` (one record) and
:meth:`BaseTAN._joint_log_likelihood_many` (a coded matrix).

Conventions shared by the learners:

- Missing values (absent key, ``None``, NaN) are skipped; a nominal value never seen in
  training, and a numeric feature whose cut points do not exist yet, are skipped at prediction
  like missing values. Learning counts a pair only in records where both are observed.
- Labels, features and values are discovered online; ``predict_proba_one`` returns ``{}``
  before the first record.
- ``decay`` = λ < 1 multiplies every count by λ after each learned record, in O(1): the counts
  are kept in a unit worth ``λ^k`` records (``_unit`` = λ^-k is the weight of a new record and
  the factor of every prior pseudo-count) and renormalised before the unit grows past 2^128.
- A refused record or batch (``TypeError``/``ValueError`` naming the feature or label) leaves
  the learner exactly as it was: everything is validated before anything changes.

Hooks for a learner (all on codes; ``columns`` from
:meth:`~onlinebma.stats.pairs.PairCounts.record_columns`):

- ``_joint_log_likelihood(codes, values, columns) -> (jll, memo)``: ``jll`` the unnormalised
  log P(c, x) of every class (array ``(K,)``); ``memo`` anything the learner wants back when
  the same record is learned next (progressive validation), or ``None``.
- ``_joint_log_likelihood_many(codes) -> (R, K)`` for an int matrix, -1 where missing.
- ``_learning(c, codes, values, columns, grew, memo)``: called just before a record of class
  code ``c`` is counted; ``grew`` says whether it brought a new class, feature or value;
  ``memo`` is what the prediction of this very record returned (``None`` if there was none or
  anything grew).
- ``_refresh()``: recompute what the learner derives from the counts (after a new class or
  value without forgetting, a batch, a merge).
"""

from __future__ import annotations

import math

import numpy as np
from river import base

from ..naive_bayes.decay import Forgetting, check_decay
from ..naive_bayes.frames import factorize, prepare_frame, records_of
from ..records import NOMINAL, FeatureKinds, check_label, numeric_values
from ..stats.pairs import PairCounts
from ..validation import check_int
from .binning import StreamingBins
from .merging import Merging

__all__ = ["BaseTAN"]

_NO_CODES = np.zeros(0, dtype=np.int64)
# Column indices kept by BaseTAN._read_record over all its codings (2 MB of int64): enough
# for every coding a narrow stream repeats (STAGGER's 27, SEA's 125 of 19 columns), few
# entries of wide records, which rarely repeat (a miss costs a tuple and a dict look-up).
_READING_CELLS = 1 << 18


class BaseTAN(Merging, Forgetting, base.MiniBatchClassifier):
    """Shared counts, record reading and prediction plumbing of the tree-augmented learners.

    Parameters
    ----------
    decay
        λ in (0, 1] (every count is multiplied by λ after each record) or ``"auto"``.
    nominal_attributes
        Features to treat as nominal even though their values are numbers.
    n_bins
        Intervals per numeric feature (:mod:`onlinebma.tan.binning`).
    bin_warmup
        Values of a numeric feature collected before its cut points are fixed (the feature
        is missing for the learner in those records; why 200: :mod:`onlinebma.tan.binning`).
    """

    # Renormalise the scaled unit once a record weighs this much in it.
    _renormalise_above = 2.0 ** 128

    def __init__(self, decay: float | str = 1.0, nominal_attributes: list | None = None,
                 n_bins: int = 5, bin_warmup: int = 200):
        check_decay("decay", decay, auto=True)
        check_int("n_bins", n_bins, 2)
        check_int("bin_warmup", bin_warmup, 1)
        self.decay = decay
        self.nominal_attributes = nominal_attributes
        self.n_bins = n_bins
        self.bin_warmup = bin_warmup
        self._kinds = FeatureKinds(nominal_attributes)
        self._counts = PairCounts()
        self._bins: dict = {}  # numeric feature -> StreamingBins
        self._auto = decay == "auto"
        self._rates = None
        self._decays = not self._auto and decay != 1  # counts decay (see _tick)
        self._forgets = self._decays  # learners with more forgetting widen this
        self._t = 0
        self._k = 0
        self._unit = 1.0
        self._scale = 1.0
        self._predicted = None  # the last prediction's record and memo (not pickled)
        self._readings: dict = {}  # derived (see _read_record, not pickled)
        self._readings_version = -1

    def __getstate__(self):
        return {**self.__dict__, "_predicted": None, "_readings": {}, "_readings_version": -1}

    @property
    def _multiclass(self):
        return True

    # ------------------------------------------------------------- for learners

    def _joint_log_likelihood(self, codes, values, columns):
        raise NotImplementedError

    def _joint_log_likelihood_many(self, codes):
        raise NotImplementedError

    def _learning(self, c, codes, values, columns, grew, memo) -> None:
        """Hook: a record of class code ``c`` is about to be counted."""

    def _refresh(self) -> None:
        """Hook: recompute what the learner derives from the counts."""

    @property
    def counts(self) -> PairCounts:
        """The learner's :class:`~onlinebma.stats.pairs.PairCounts` (read only)."""
        return self._counts

    # ------------------------------------------------------------------ coding

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
        pairs = counts.known(nominal)
        for f, v in numeric:
            b = self._bins.get(f)
            if b is not None and b.cuts is not None:
                pairs.append((counts.feature_code(f), b.bin(v)))
        pairs.sort()
        if self._readings_version != counts.version:
            self._readings, self._readings_version = {}, counts.version
        key = tuple(pairs)
        reading = self._readings.get(key)
        if reading is None:
            if pairs:
                a = np.array(pairs, dtype=np.int64)
                codes, values = a[:, 0].copy(), a[:, 1].copy()
            else:
                codes = values = _NO_CODES
            columns = counts.record_columns(codes, values)
            if (len(self._readings) + 1) * len(columns) > _READING_CELLS:
                self._readings = {}
            reading = self._readings[key] = (codes, values, columns)
        return (*reading, split)

    def _register_bins(self, f, bins: StreamingBins) -> None:
        """Give a numeric feature whose cut points were just fixed its intervals as values."""
        u = self._counts.add_feature(f)
        for i in range(bins.n_values):
            self._counts.add_value(u, i)

    def _code_for_learning(self, split):
        """Code a validated record's values, adding new features, values and numeric samples:
        ``(codes, values, grew)``."""
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
        for f, v in numeric:
            b = self._bins.get(f)
            if b is None:
                b = self._bins[f] = StreamingBins(self.n_bins, self.bin_warmup)
            had = b.cuts is not None
            i = b.learn(v)
            if b.cuts is not None and not had:
                self._register_bins(f, b)
                grew = True
            if i is not None:
                pairs.append((counts.feature_code(f), i))
        if not pairs:
            return _NO_CODES, _NO_CODES, grew
        pairs.sort()
        a = np.array(pairs, dtype=np.int64)
        return a[:, 0].copy(), a[:, 1].copy(), grew

    # ---------------------------------------------------------------- learning

    def learn_one(self, x: dict, y) -> None:
        if self._auto:
            self._share(x)
            self._rate_mixture().learn_one(x, y)
            return
        check_label(y)
        if self._predicts(x):  # the prediction of this very record
            memo, reading = self._predicted[3], self._predicted[4]
        else:
            memo = reading = None
        self._predicted = None
        counts = self._counts
        if reading is None:
            split = self._kinds.split(x)  # validated: from here on nothing can fail
            codes, values, grew = self._code_for_learning(split)
            columns = counts.record_columns(codes, values)
        else:  # validated and coded by the prediction, every value known: nothing new
            codes, values, columns = reading
            grew = False
        k = counts.n_classes
        c = counts.add_class(y)
        grew = grew or c == k
        if grew:
            memo = None
        self._learning(c, codes, values, columns, grew, memo)
        counts.add(c, columns, self._unit)
        self._t += 1
        if self._decays:
            self._tick()
        if grew and not self._forgets:
            self._refresh()

    def _tick(self) -> None:
        """Multiply every count by ``decay`` in O(1) through the scaled unit; renormalise
        (O(all counts)) before the unit grows past ``_renormalise_above``."""
        self._k += 1
        self._unit = self.decay ** -self._k
        self._scale = self.decay ** self._k
        if self._unit > self._renormalise_above:
            self._counts.scale(self._scale)
            self._k, self._unit, self._scale = 0, 1.0, 1.0

    def learn_many(self, X, y) -> None:
        """Learn a pandas DataFrame (NaN/None = missing) and its labels.

        Without forgetting, vectorised (one ``bincount`` per block of rows); with it, row by
        row in order, equal to ``learn_one`` on each row. The whole batch is validated before
        anything changes.
        """
        columns, new, labels = prepare_frame(self._kinds, X, y)
        if self._auto or self._forgets:
            for x, label in zip(records_of(columns, len(labels)), labels):
                self.learn_one(x, label)
            return
        self._predicted = None
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
            else:
                b = self._bins.get(f)
                if b is None:
                    b = self._bins[f] = StreamingBins(self.n_bins, self.bin_warmup)
                had = b.cuts is not None
                bins = b.learn_many(values)
                if b.cuts is not None:
                    if not had:
                        self._register_bins(f, b)
                    coded[counts.feature_code(f)] = bins
        names, ycodes = factorize(labels)
        cmap = np.array([counts.add_class(label) for label in names], dtype=np.int64)
        matrix = np.full((len(labels), counts.n_features), -1, dtype=np.int64)
        for u, col in coded.items():
            matrix[:, u] = col
        counts.learn_many(matrix, cmap[ycodes])
        self._t += len(labels)
        self._refresh()

    # -------------------------------------------------------------- predicting

    def joint_log_likelihood(self, x: dict) -> dict:
        """Unnormalised ``log P(y, x)`` of every label seen (``{}`` before learning); with
        ``decay="auto"``, the log of the rate-averaged ``P(y | x)``."""
        if self._auto:
            self._share(x)
            return self._rate_mixture().joint_log_likelihood(x)
        counts = self._counts
        if not counts.n_classes:
            return {}
        last = self._predicted
        if self._predicts(x) and last[5] is not None:  # computed already (decay="auto")
            return dict(zip(counts.classes_, last[5].tolist()))
        codes, values, columns, split = self._read_record(x)
        jll, memo = self._joint_log_likelihood(codes, values, columns)
        self._remember(x, codes, values, columns, split, memo, None)
        return dict(zip(counts.classes_, jll.tolist()))

    def _predicts(self, x: dict) -> bool:
        """Whether the last prediction was of this very record, unchanged, with nothing
        learned since."""
        last = self._predicted
        return last is not None and last[0] is x and last[1] == self._t and last[2] == x

    def _remember(self, x, codes, values, columns, split, memo, jll) -> None:
        """Keep a prediction's reading of ``x`` for learning it next: its ``memo``, and its
        coding if every value was known (no new feature, value or numeric sample: learning
        would code it the same way); ``jll`` if it was computed ahead (``_share``)."""
        numeric, nominal, _ = split
        complete = len(codes) == len(numeric) + len(nominal)
        self._predicted = (x, self._t, dict(x), memo,
                           (codes, values, columns) if complete else None, jll)

    def _share(self, x: dict) -> None:
        """``decay="auto"``: let the learner compute what its members share about ``x`` at
        once (:meth:`_predict_members`) before the mixture asks each member."""
        members = self._rate_mixture().members
        if not all(m._predicts(x) for m in members):
            self._predict_members(members, x)

    def _predict_members(self, members: list, x: dict) -> None:
        """Hook: fill the prediction memo of every member of a ``decay="auto"`` mixture
        (clones of this learner at other rates that learned the same records) for ``x``;
        the default leaves each member to predict alone."""

    def predict_proba_one(self, x: dict) -> dict:
        if self._auto:
            self._share(x)
            return self._rate_mixture().predict_proba_one(x)
        jll = self.joint_log_likelihood(x)
        if not jll:
            return {}
        top = max(jll.values())  # a few classes: plain floats cost less than numpy calls
        p = {c: math.exp(s - top) for c, s in jll.items()}
        total = sum(p.values())
        return {c: q / total for c, q in p.items()}

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
                matrix[:, u] = self._bins[f].bin_many(numeric_values(X[f]))
        return matrix

    def predict_proba_many(self, X):
        """Class probabilities of a DataFrame's rows (one batched computation)."""
        import pandas as pd

        if self._auto:
            return self._rate_mixture().predict_proba_many(X)
        if not self._counts.n_classes:
            return pd.DataFrame(index=X.index)
        jll = self._joint_log_likelihood_many(self._code_frame(X))
        p = np.exp(jll - jll.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        return pd.DataFrame(p, columns=list(self._counts.classes_), index=X.index)
