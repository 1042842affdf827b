"""The thin base of the plug-in tree-augmented learners (:class:`~onlinebma.tan.TAN`,
:class:`~onlinebma.tan.AODE`).

:class:`BaseTAN` owns the one sufficient statistic, :class:`~onlinebma.stats.pairs.PairCounts`
(class, single and pair counts per class), and everything around it that does not depend on
the model: reading, validating and coding records (:mod:`onlinebma.tan.coding`: features,
values and labels as ints in order of first appearance, numeric features cut into intervals
through :mod:`onlinebma.tan.numbers`), forgetting (``decay``), ``decay="auto"``
(:class:`~onlinebma.forgetting.RateMixture`, one clone per rate; the readers then
show the most probable rate's clone), ``learn_one``/``learn_many``,
``predict_proba_one``/``predict_proba_many``, and ``merge`` (:mod:`onlinebma.tan.merging`).
:class:`~onlinebma.tan.ModelAveragedTAN` keeps its own state instead, a stack of members
(:class:`~onlinebma.tan.members.TreeMemberStack`), and shares the coding and merging.
A learner supplies the joint log likelihoods of the classes for coded records:
:meth:`BaseTAN._joint_log_likelihood` (one record) and
:meth:`BaseTAN._joint_log_likelihood_many` (a coded matrix).

Conventions shared by the learners:

- Missing values (absent key, ``None``, NaN) are skipped; a nominal value never seen in
  training, and a numeric feature whose cut points do not exist yet, are skipped at prediction
  like missing values. No numeric value is dropped in learning: the records that arrive before
  a feature's cut points are kept and replayed into the counts when they are fixed
  (:mod:`onlinebma.tan.numbers`). Learning counts a pair only in records where both are observed.
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

from ..forgetting import Forgetting
from ..labels import ordered_labels, proba_frame
from ..reading import prepare_frame, records_of, uninterrupted
from ..records import FeatureKinds, check_label
from ..stats.numerics import RENORMALISE_ABOVE
from ..stats.pairs import PairCounts
from ..validation import check_decay
from .coding import RecordCoding, ReplayClock, table_samples
from .merging import Merging
from .numbers import LEARN_MANY_CHECK, REPRESENTATIONS, NumericReading, check_numeric

__all__ = ["BaseTAN", "PLUGIN_PARAMETERS_DOC", "READING_PARAMETERS_DOC", "check_reading"]

NOMINAL_DOC = """nominal_attributes : list or None, default None
        Features to treat as nominal even though their values are numbers."""
"""The numpydoc entry of ``nominal_attributes``."""

SAMPLE_SIZE_DOC = """sample_size : int, default 200
        A numeric feature's cut points are fixed from its first ``sample_size`` values in a
        stream; the records before are kept (at most ``sample_size`` per numeric feature) and
        replayed into the counts then (:mod:`onlinebma.tan.numbers`). ``learn_many`` takes the
        cut points of a table's numeric columns from the table itself."""
"""The numpydoc entry of ``sample_size``."""

NUMERIC_ATTRIBUTES_DOC = """numeric_attributes : list or None, default None
        Features that are numeric whatever their first value: a value of one that is not a
        number (a ``"?"`` for a missing value read as text) is refused, not made a category."""
"""The numpydoc entry of ``numeric_attributes``."""

READING_PARAMETERS_DOC = NOMINAL_DOC + """
    numeric : str, default "5 intervals"
        How numeric features are cut (:data:`~onlinebma.tan.numbers.REPRESENTATIONS`):
        ``"B intervals"`` for an equal-frequency grid of B = 3, 5, 8, 16 or 32 intervals (a
        value holding more than 1/B of the sample is an interval of its own), or ``"MDL"``
        for the class-aware cut points of Fayyad and Irani.
    """ + SAMPLE_SIZE_DOC + """
    """ + NUMERIC_ATTRIBUTES_DOC
"""The numpydoc entries of the parameters TAN and AODE read records with."""

PLUGIN_PARAMETERS_DOC = """decay : float or "auto", default 1.0
        λ in (0, 1] (every count is multiplied by λ after each record) or ``"auto"``: one
        clone per rate of :data:`~onlinebma.forgetting.AUTO_GRID`, averaged by
        :class:`~onlinebma.forgetting.RateMixture`; the readers (``counts``, and
        ``TAN.tree()``) then show the clone of the most probable rate
        (:meth:`decay_posterior`).
    """ + READING_PARAMETERS_DOC
"""The numpydoc entries of :class:`BaseTAN`'s parameters (its learners' last ones)."""


def check_reading(decay, numeric, sample_size, choices: tuple = REPRESENTATIONS) -> None:
    """Validate the parameters every tree-augmented learner reads records with: ``decay``
    (a number in (0, 1] or ``"auto"``), ``numeric`` (one of ``choices``) and
    ``sample_size`` (at least 1); a ValueError naming the parameter."""
    check_decay("decay", decay, auto=True)
    check_numeric(numeric, sample_size, choices)


class BaseTAN(Merging, Forgetting, base.MiniBatchClassifier):
    __doc__ = f"""Counts, record reading and prediction plumbing of TAN and AODE.

    Parameters
    ----------
    {PLUGIN_PARAMETERS_DOC}
    """

    # Renormalise the scaled unit once a record weighs this much in it.
    _renormalise_above = RENORMALISE_ABOVE

    def __init__(self, decay: float | str = 1.0, nominal_attributes: list | None = None,
                 numeric: str = "5 intervals", sample_size: int = 200,
                 numeric_attributes: list | None = None):
        check_reading(decay, numeric, sample_size)
        self.decay = decay
        self.nominal_attributes = nominal_attributes
        self.numeric_attributes = numeric_attributes
        self.numeric = numeric
        self.sample_size = sample_size
        self.coding = RecordCoding(FeatureKinds(nominal_attributes, numeric_attributes),
                                   PairCounts(), NumericReading(numeric, sample_size))
        self._auto = decay == "auto"
        self._rates = None
        self._decays = not self._auto and decay != 1  # counts decay (see _tick)
        self._forgets = self._auto or self._decays
        self._t = 0
        self._k = 0
        self._unit = 1.0
        self._scale = 1.0
        self._predicted = None  # the last prediction's record and memo (not pickled)

    def __getstate__(self):
        return {**self.__dict__, "_predicted": None}

    @property
    def _kinds(self):  # what Forgetting validates records against
        return self.coding.kinds

    @property
    def _counts(self) -> PairCounts:
        return self.coding.counts

    @property
    def records_learned(self) -> int:
        """The number of records learned."""
        return self._t

    def _clock(self) -> ReplayClock:
        """Where this learner's clock stands for records replayed into its counts."""
        return ReplayClock(self._t, self._replay_weight)

    def _after_fixing(self, width) -> None:
        """Cut points were fixed (``width`` not ``None``, :class:`RecordCoding`'s methods):
        the last prediction's reading and what the learner derives from the counts are
        stale."""
        if width is not None:
            self._predicted = None
            self._refresh()

    @property
    def _multiclass(self):
        return True

    @property
    def representations(self) -> tuple:
        """The numeric representation records are read with: ``(numeric,)``."""
        return (self.numeric,)

    @property
    def weighs_members(self) -> bool:
        """Whether the learner weighs several members (never: one model)."""
        return False

    def _unit_test_skips(self):  # River's hook: the checks not to run
        return {LEARN_MANY_CHECK}

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
        """The learner's :class:`~onlinebma.stats.pairs.PairCounts` (read only): with
        ``decay="auto"``, those of the most probable rate's clone."""
        shown = self._shown()
        return self._counts if shown is self else shown.counts

    def _shown(self):
        """The learner whose state the readers show: this one, or with ``decay="auto"`` the
        clone of the rate with the highest posterior (:meth:`decay_posterior`; ties to the
        first rate of the grid)."""
        if not self._auto:
            return self
        mixture = self._rate_mixture()
        weights = mixture.log_weights
        return mixture.members[weights.index(max(weights))]

    # ---------------------------------------------------------------- learning

    def learn_one(self, x: dict, y) -> None:
        if self._auto:
            self._learn_through_rates(x, y)
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
            codes, values, grew, nominal = self.coding.code_for_learning(split)
            columns = counts.record_columns(codes, values)
        else:  # validated and coded by the prediction, every value known: nothing new
            codes, values, columns = reading
            grew, split = False, None
        k = counts.n_classes
        c = counts.add_class(y)
        grew = grew or c == k
        if grew:
            memo = None
        self._learning(c, codes, values, columns, grew, memo)
        counts.add(c, columns, self._unit)
        if split is not None:
            width = self.coding.keep_pending(split, c, nominal, self._clock())
            self._after_fixing(width)
            grew = width is not None or grew
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

        Every numeric column without cut points first gets those of its sample in the whole
        table (:meth:`~onlinebma.tan.coding.RecordCoding.fix_numeric` of its
        :class:`~onlinebma.numeric.sample.ColumnSample`, after the values kept for it; its
        classes not yet learned added in the table's order). Then, without forgetting, every
        row is counted at once (one ``bincount`` per block of rows); with it, row by row in
        order, equal to ``learn_one`` on each row. Either way the counts are those of
        ``learn_one`` on each row with those cut points from the start, so learning a table
        in consecutive parts, each given the whole table's cut points first, equals learning
        it at once (:mod:`onlinebma.distributed.chain`). The whole batch is validated before
        anything changes.
        """
        columns, new, labels = prepare_frame(self.feature_kinds, X, y)
        with uninterrupted():  # Ctrl-C waits for the whole batch
            if self._forgets:
                if self._auto:  # each rate's clone fixes them as learn_many on it would
                    samples = table_samples(columns, labels)
                    for host in self._rate_mixture().members:
                        host.fix_numeric(samples)
                else:
                    self._after_fixing(self.coding.fix_from_table(columns, labels,
                                                                  self._clock()))
                for x, label in zip(records_of(columns, len(labels)), labels):
                    self.learn_one(x, label)
                return
            self._predicted = None
            self.coding.count_table(columns, new, labels, self._clock())
            self._t += len(labels)
            self._refresh()

    def _replay_weight(self, age: int) -> float:
        """The weight, in the counts' current unit, of a record ``age`` records before the
        one whose weight is the unit (the record being learned, or the next one)."""
        return self._unit * self.decay ** age if self._decays else self._unit

    @property
    def numeric_readings(self) -> dict:
        """``{feature: Grids}``: the cut points of every numeric feature that has them
        (:class:`~onlinebma.numeric.Grids`, in the order they were fixed; with
        ``decay="auto"``, every rate's clone has the same)."""
        return self._shown().coding.numeric_readings

    def fix_numeric(self, readings: dict) -> None:
        """Fix numeric features' cut points now (:meth:`RecordCoding.fix_numeric
        <onlinebma.tan.coding.RecordCoding.fix_numeric>`; with ``decay="auto"``, in every
        rate's clone)."""
        if self._auto:
            for clone in self._rate_mixture().members:
                clone.fix_numeric(readings)
            return
        self._after_fixing(self.coding.fix_numeric(readings, self._clock()))

    def _merge_from(self, other) -> None:
        """Add ``other``'s records (:class:`~onlinebma.tan.merging.Merging`)."""
        self.coding.merge(other.coding, self._clock())
        self._t += other.records_learned
        self._predicted = None
        self._refresh()

    # -------------------------------------------------------------- predicting

    def joint_log_likelihood(self, x: dict) -> dict:
        """Unnormalised ``log P(y, x)`` of every label seen (``{}`` before learning); with
        ``decay="auto"``, the log of the rate-averaged ``P(y | x)``."""
        if self._auto:
            return self._rate_mixture().joint_log_likelihood(x)
        counts = self._counts
        if not counts.n_classes:
            return {}
        codes, values, columns, split = self.coding.read(x)
        jll, memo = self._joint_log_likelihood(codes, values, columns)
        self._remember(x, codes, values, columns, split, memo)
        return dict(zip(counts.classes_, jll.tolist()))

    def _predicts(self, x: dict) -> bool:
        """Whether the last prediction was of this very record, unchanged, with nothing
        learned since."""
        last = self._predicted
        return last is not None and last[0] is x and last[1] == self._t and last[2] == x

    def _remember(self, x, codes, values, columns, split, memo) -> None:
        """Keep a prediction's reading of ``x`` for learning it next: its ``memo``, and its
        coding if every value was known (no new feature, value or numeric sample: learning
        would code it the same way)."""
        numeric, nominal, _ = split
        complete = len(codes) == len(numeric) + len(nominal)
        self._predicted = (x, self._t, dict(x), memo,
                           (codes, values, columns) if complete else None)

    def predict_proba_one(self, x: dict) -> dict:
        if self._auto:
            return self._rate_mixture().predict_proba_one(x)
        jll = self.joint_log_likelihood(x)
        if not jll:
            return {}
        top = max(jll.values())  # a few classes: plain floats cost less than numpy calls
        p = {c: math.exp(s - top) for c, s in jll.items()}
        total = sum(p.values())
        return {c: q / total for c, q in p.items()}

    def predict_proba_many(self, X):
        """Class probabilities of a DataFrame's rows (one batched computation)."""
        import pandas as pd

        if self._auto:
            return self._rate_mixture().predict_proba_many(X)
        if not self._counts.n_classes:
            return pd.DataFrame(index=X.index)
        jll = self._joint_log_likelihood_many(self.coding.code_frame(X))
        p = np.exp(jll - jll.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        return proba_frame(p, self._counts.classes_, X.index)

    @property
    def classes_(self) -> tuple:
        """Every label learned, sorted when the labels sort, else in order of first arrival:
        the columns of :meth:`predict_proba_many` (:mod:`onlinebma.labels`)."""
        if self._auto:
            return () if self._rates is None else self._rates.classes_
        return ordered_labels(self._counts.classes_)
