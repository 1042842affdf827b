"""The thin base shared by the naive Bayes family.

All three learners predict with one naive network whose per-feature parameter mixes two
predictive distributions, "feature ignores the class" (no arc C → F) and "feature depends on
the class" (arc C → F), with the posterior weight of each::

    log P(y | x) = log P(y) + sum_f log( w_f(no arc) p(x_f) + w_f(arc) p(x_f | y) ) + const

- :class:`~onlinebma.naive_bayes.NaiveBayes`: ``w(arc) = 1``.
- :class:`~onlinebma.naive_bayes.ModelAveragedNB`: ``w`` from Dirichlet / Normal–Gamma
  marginal likelihoods (Dash & Cooper 2002, eq. 11–13).
- :class:`~onlinebma.naive_bayes.BMANB`: ``w`` from plug-in likelihoods and the Γ^(N+1) prior
  (Wu, Sanner & Oliveira 2015, eq. 11).

The base owns the statistics (:mod:`onlinebma.stats.tables`), reading and validating records
(:mod:`onlinebma.records`) and the per-record paths (``learn_one``, ``predict_proba_one``),
and holds the objects that do the rest on what it gives them: the paths over many records
(``learn_many``, ``predict_proba_many``, ``merge``, the Dask plan: the learner's methods,
whose per-column work is :class:`~onlinebma.naive_bayes.batches.BatchPaths`) and the array
paths of wide records (:class:`~onlinebma.naive_bayes.wide.WideNumerics`,
:class:`~onlinebma.naive_bayes.wide_nominal.WideNominals`). A learner supplies, through
hooks, the structure weights (:meth:`BaseNB._arc_log_odds`, :meth:`BaseNB._kept_log_odds`),
the Dirichlet pseudo-counts and the numeric density.

Conventions shared by the three learners:

- Missing values (absent key, ``None``, NaN) are skipped in learning and prediction; with
  ``absent="zero"`` numeric features are counts and an absent one is a zero count
  (:mod:`onlinebma.naive_bayes.counts`).
- The class prior is ``(N_y + alpha) / (N + alpha |classes|)``.
- Domains are the values seen so far. A nominal value never seen in training (for that
  feature) is skipped at prediction time, like a missing value: the model has no parameter
  for it.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pandas as pd
from river import base

from .. import tuning
from ..distributed.protocol import MergePlan
from ..forgetting import MIN_WEIGHT, Forgetting, RateMixture, ScaledClock
from ..labels import in_class_order, ordered_labels
from ..numeric import Sample
from ..numeric.sample import ColumnSample
from ..reading import pairs_of, prepare_frame, read_frame, read_record, records_of, uninterrupted
from ..records import NOMINAL, NUMERIC, FeatureKinds, check_label
from ..stats.gaussian import MAX_ABS_VALUE, GaussianMoments, check_magnitude
from ..stats.logmath import normalize_log
from ..stats.numerics import log_sigmoid
from ..stats.tables import NominalTable, NumericTable
from ..validation import check_choice, check_decay, check_int, check_mergeable_with, check_real
from .batches import BatchPaths, Statistics
from .counts import COUNTS, check_bag, check_name, plugin_bag
from .numbers import DEFAULT_NUMERIC, GAUSSIAN, NumberReader, check_numeric, label_array
from .wide import WideNumerics
from .wide_nominal import WideNominals, gathered

__all__ = ["BaseNB"]

class BaseNB(Forgetting, base.MiniBatchClassifier):
    """Shared statistics, validation and prediction of the naive Bayes family.

    Parameters
    ----------
    alpha
        Dirichlet pseudo-count of every cell, also used for the class prior.
    decay
        λ in (0, 1] (every statistic is multiplied by λ after each learned record), or
        ``"auto"`` (a grid of rates averaged, :mod:`onlinebma.forgetting`). 1.0: no
        forgetting.
    nominal_attributes
        Features to treat as nominal even though their values are numbers.
    absent
        ``"missing"``: an absent key is a missing value; ``"zero"``: numeric features are
        counts of a bag of words and an absent key is a zero count
        (:mod:`onlinebma.naive_bayes.counts`).
    numeric
        How numeric features are read: ``"Gaussian"`` (their moments) or one representation
        of :data:`~onlinebma.naive_bayes.numbers.REPRESENTATIONS` (their intervals,
        :mod:`onlinebma.naive_bayes.numbers`).
    sample_size
        A stream fixes a numeric feature's cut points from its first ``sample_size`` values.
    numeric_attributes
        Features that are numeric whatever their first value (a ``"?"`` read as text is then
        refused, not made a category).
    """

    # False when every cell's Dirichlet pseudo-count is alpha (K2, Laplace), which spares the
    # per-record path a call to _pseudo_counts.
    _cell_prior_varies = False

    def __init__(self, alpha: float = 1.0, decay: float | str = 1.0,
                 nominal_attributes: list | None = None, absent: str = "missing",
                 numeric: str = DEFAULT_NUMERIC, sample_size: int = 500,
                 numeric_attributes: list | None = None):
        check_real("alpha", alpha, 0.0, strict=True)
        check_decay("decay", decay, auto=True)
        check_choice("absent", absent, ("missing", "zero"))
        check_numeric(numeric)
        check_int("sample_size", sample_size, 1)
        self.alpha = alpha
        self.decay = decay
        self.nominal_attributes = nominal_attributes
        self.numeric_attributes = numeric_attributes
        self.absent = absent
        self.numeric = numeric
        self.sample_size = sample_size
        # absent="zero": numeric features are counts of one multinomial over words (.counts)
        self._zero = absent == "zero"
        self._kinds = FeatureKinds(nominal_attributes, numeric_attributes)
        self._tables: dict = {}  # feature -> NominalTable | NumericTable
        self._class_counts: dict = {}  # label -> weight of its records, scaled unit
        self._n = 0  # weight of all records, scaled unit
        self._t = 0  # records learned
        # decay="auto": a mixture of members with fixed rates, made at the first record.
        self._auto = decay == "auto"
        self._rates = None
        # numeric other than "Gaussian": numbers counted as their intervals (.numbers); with
        # decay="auto" each rate's learner reads them itself; absent="zero": numbers are
        # counts of words, read as such whatever numeric says
        self._reads = numeric != GAUSSIAN and not self._zero
        self._reader = (NumberReader(numeric, sample_size) if self._reads and not self._auto
                        else None)
        # Forgetting: a record weighs _clock.unit in the stored statistics, and a stored
        # statistic is worth _clock.scale times as much in records (ScaledClock; renormalised
        # before the counts pass ~1e41 / (1 - decay), far from overflow: MAX_ABS_VALUE). Ints
        # without forgetting, so decay=1.0 computes exactly what it did before forgetting.
        self._forgets = not self._auto and decay != 1
        self._clock = ScaledClock(decay if self._forgets else 1)
        # The last prediction's reading of its record (see _read_for_learning): derived state,
        # not pickled. A tuple (record, a copy of it, records learned then, its
        # FeatureKinds.split, (classes, numeric densities) or None), not a dataclass: it is
        # built at every prediction, and a dataclass's __init__ measured 6.7 times a tuple's
        # (2.2 us against 0.33 us, load average 6, timeit), a cost on the per-record path.
        self._predicted = None
        # The array paths of wide records (.wide, .wide_nominal), each with the block it
        # keeps beside the tables; used when _arrays_apply().
        self._wide_numerics = WideNumerics()
        self._wide_nominals = WideNominals()
        # The vectorised paths over many records (.batches), counting into these statistics.
        self._batches = BatchPaths(self._kinds, self._tables, self._class_counts, self._reader)

    def __getstate__(self):
        return {**self.__dict__, "_predicted": None}

    @property
    def _multiclass(self):
        return True

    def _unit_test_skips(self):  # River's hook: the checks not to run
        # learn_many fixes the cut points of a table's numeric columns from the table (without
        # forgetting: from each column's whole-table sample; row by row: where the table
        # leaves a sample incomplete), learn_one from a stream's first sample_size values:
        # they differ by design (tests/test_nb_numbers.py runs the check on learners that
        # forget where every sample completes within a batch;
        # tests/test_naive_bayes_batch_intervals.py checks learn_many against the rows given
        # the whole-table sample's cut points)
        return {"check_learn_many_matches_learn_one"} if self._reads else set()

    def _more_tags(self):
        # River's checks then feed no negative numbers to a learner that reads counts
        return {base.tags.POSITIVE_INPUT} if self.absent == "zero" else set()

    # ------------------------------------------------------------ for learners

    def _pseudo_counts(self, n_values: int) -> tuple[float, float]:
        """Dirichlet pseudo-count per cell without and with the arc, for a feature with
        ``n_values`` values."""
        return self.alpha, self.alpha

    def _arc_log_odds(self, f, table) -> float:
        """Posterior log odds that feature ``f`` depends on the class (``inf``: always)."""
        return math.inf

    def _kept_log_odds(self):
        """``(log_ml, prior_log_odds)`` when every arc's log odds are
        ``prior_log_odds + log_ml[f][1] - log_ml[f][0]`` (kept marginal likelihoods, without
        and with the arc), so the prediction loop reads them without a call per feature;
        ``None`` (the default) to call :meth:`_arc_log_odds`. Called once per prediction."""
        return None

    def _arrays_apply(self) -> bool:
        """Whether the array paths of wide records (:mod:`~onlinebma.naive_bayes.wide`,
        :mod:`~onlinebma.naive_bayes.wide_nominal`) may run: not when the learner forgets,
        reads counts or mixes rates."""
        return not (self._forgets or self._zero or self._auto)

    def _nominal_cells(self) -> int:
        """The learner's threshold in cells of the array path of wide nominal records (a
        module constant, read at each record)."""
        return tuning.NOMINAL_CELLS

    def _wide_arc_odds(self, features: list, n: np.ndarray, r: np.ndarray,
                       n_class: np.ndarray) -> np.ndarray:
        """Per nominal feature, the arc's posterior log odds (``inf``: always), for the
        array path of wide nominal records (:meth:`WideNominals.terms
        <onlinebma.naive_bayes.wide_nominal.WideNominals.terms>`): from the kept marginal
        likelihoods of :meth:`_kept_log_odds` when there are, else a call of
        :meth:`_arc_log_odds` each; ``n``, ``r`` and ``n_class`` are the features' counts,
        values seen and counts by class (class x feature, the block's class order)."""
        kept = self._kept_log_odds()
        if kept is None:
            odds, tables = self._arc_log_odds, self._tables
            return np.array([odds(f, tables[f]) for f in features], dtype=float)
        log_ml, prior_odds = kept
        ml = gathered(log_ml, features, 2)
        return prior_odds + ml[:, 1] - ml[:, 0]  # eq. 8 and the structure prior

    def _log_weights(self, f, table) -> tuple[float, float]:
        """``(log w(no arc), log w(arc))``: the posterior structure weights of feature ``f``."""
        d = self._arc_log_odds(f, table)
        return log_sigmoid(-d), log_sigmoid(d)

    @property
    def classes_(self) -> tuple:
        """Every label learned, sorted when the labels sort, else in order of first arrival:
        the columns of :meth:`predict_proba_many` (:mod:`onlinebma.labels`)."""
        if self._auto:
            return () if self._rates is None else self._rates.classes_
        return ordered_labels(self._class_counts)

    def feature_posteriors(self) -> dict:
        """``{feature: P(feature used | data)}``, current after every record (with
        ``decay="auto"``, averaged over the rates with :meth:`decay_posterior`).

        What it means per learner:

        - ``ModelAveragedNB``: the posterior probability of the arc class → feature over the
          selective naive Bayes structures, features independent a posteriori (Dash & Cooper
          2002, eq. 12–13).
        - ``BMANB``: the weight of that arc from plug-in likelihoods and the Γ^(N+1)
          structure prior (Wu, Sanner & Oliveira 2015, eq. 11, 14), an approximation that
          tends to 0 or 1 as the records grow.
        - ``NaiveBayes``: 1.0 for every feature: its one fixed structure uses them all (kept
          so that every learner of the family answers the same question).
        """
        if self._auto:
            return self._rate_mixture().feature_posteriors()
        return {f: math.exp(self._log_weights(f, t)[1]) for f, t in self._tables.items()}

    def draw(self, threshold: float = 0.0):
        """Which features depend on the class, as a graphviz graph
        (:func:`onlinebma.drawing.dependency_graph`): an edge from the class to each feature
        as wide as :meth:`feature_posteriors` says (for ``NaiveBayes``, every feature at 1).

        Parameters
        ----------
        threshold : float, default 0.0
            Features whose posterior probability is at most this get no edge.

        Returns
        -------
        graphviz.Graph
            Needs the optional ``graphviz`` package (``pip install "onlinebma[draw]"``).
        """
        from ..drawing import dependency_graph

        posteriors = self.feature_posteriors()
        return dependency_graph(list(posteriors), class_edges=posteriors, threshold=threshold)

    def cut_points(self) -> dict:
        """How numeric features are read: ``{feature: cut points}`` (a sorted float array;
        intervals ``(a, b]``, :mod:`onlinebma.numeric`) or ``{feature: None}`` for a feature
        read per value, for the features whose reading is fixed; ``{}`` with
        ``numeric="Gaussian"``. A numeric feature not listed is still read by its Gaussian
        (its sample is not complete)."""
        if not self._reads or (self._auto and self._rates is None):
            return {}
        return self._number_hosts()[0][0].cut_points()  # with decay="auto", all read alike

    @property
    def numeric_readings(self) -> dict:
        """``{feature: Grids or ValueCodes}``: how every numeric feature with fixed cut points
        is read, in the order they were fixed (a :class:`~onlinebma.numeric.Grids` read by
        its member ``numeric``, a :class:`~onlinebma.numeric.ValueCodes` per value); ``{}``
        when numbers are read by their moments. Give them to another learner's
        :meth:`fix_numeric` to cut the same intervals (and merge with it)."""
        if not self._reads or (self._auto and self._rates is None):
            return {}
        return dict(self._number_hosts()[0][0].readings)

    def numeric_readings_from(self, samples: dict, classes=None) -> dict:
        """How this learner would read each feature from a sample of it, without changing
        anything: the readings :meth:`fix_numeric` takes (a first pass over data cut into
        parts, so that the learners of the parts cut numbers alike and merge).

        A feature with fixed cut points keeps them (its reading is returned as it is). A
        sample is read whole, after the values this learner keeps for the feature (its own
        sample incomplete), as ``learn_many`` on the data would read it. So for the
        :class:`~onlinebma.numeric.sample.ColumnSample` of each column of a table (at most
        :data:`~onlinebma.numeric.sample.TABLE_SAMPLE_SIZE` values) the readings are those
        ``learn_many`` on the table gives.

        Parameters
        ----------
        samples : dict
            ``{feature: sample}``, each sample a
            :class:`~onlinebma.numeric.sample.ColumnSample` (its labels its own), a
            :class:`~onlinebma.numeric.Sample` (values and class codes) or a pair
            ``(values, labels)`` (float values, NaN where missing, and the class label of
            each).
        classes : list or None, default None
            The labels that the Samples' class codes stand for (code ``i`` is
            ``classes[i]``); ``None``: a pair's labels are the labels themselves, and a
            Sample's codes stand for classes of their own (then it must not meet kept
            values).

        Returns
        -------
        dict
            ``{feature: Grids or ValueCodes}`` (:func:`~onlinebma.numeric.read_sample` with
            this learner's settings) for the samples with an observed value; ``{}`` when
            numbers are read by their moments (``numeric="Gaussian"`` or ``absent="zero"``).

        Raises
        ------
        ValueError
            If a sample's values and labels differ in length, or a Sample's codes without
            ``classes`` meet values this learner keeps (their classes would not be known).
        """
        if not isinstance(samples, dict):
            raise TypeError(f"samples must be a dict {{feature: ColumnSample, Sample or "
                            f"(values, labels)}}, "
                            f"got {type(samples).__name__}")
        if not self._reads:
            return {}
        if not self._auto or self._rates is not None:
            reader = self._number_hosts()[0][0]  # with decay="auto", every rate keeps alike
        else:
            reader = NumberReader(self.numeric, self.sample_size)  # nothing learned, nothing kept
        out = {}
        for f, sample in samples.items():
            if f in reader.readings:  # fixed already: read as it is
                out[f] = reader.readings[f]
                continue
            if isinstance(sample, ColumnSample):  # its labels are its own
                values = sample.sample.values
                labels = label_array(sample.classes)[sample.sample.labels]
            else:
                coded = isinstance(sample, Sample)
                values, labels = (sample.values, sample.labels) if coded else sample
                if classes is not None:
                    labels = label_array(list(classes))[np.asarray(labels, dtype=np.int64)]
                elif coded and f in reader.pending.pending:
                    raise ValueError(
                        f"feature {f!r} has values kept by this learner, which come first in "
                        f"its sample: name the labels the Sample's class codes stand for, "
                        f"numeric_readings_from(samples, classes=...)")
            reading = reader.reading_from_sample(values, labels, f)
            if reading is not None:
                out[f] = reading
        return out

    def fix_numeric(self, readings: dict) -> None:
        """Fix numeric features' cut points now, from outside (as the tree learners'
        :meth:`~onlinebma.tan.coding.RecordCoding.fix_numeric`).

        The records kept for those features are replayed exactly (the learner then equals
        one given these cut points from its first record); later records are cut with them.
        Learners given the same readings before learning merge exactly (:meth:`merge`).

        Parameters
        ----------
        readings : dict
            ``{feature: Grids, ValueCodes or ColumnSample}``: from
            :meth:`numeric_readings_from` on a sample of all the data, from
            :func:`onlinebma.numeric.read_table`, or another learner's
            :attr:`numeric_readings`. A Grids must hold this learner's representation
            ``numeric``; a ValueCodes reads the feature per value; a
            :class:`~onlinebma.numeric.sample.ColumnSample` of a whole table's column is read
            as ``learn_many`` on that table would read it (:meth:`numeric_readings_from`; the
            values kept for the feature first).

        Raises
        ------
        TypeError
            If a reading is neither a Grids, a ValueCodes nor a ColumnSample.
        ValueError
            If the learner reads numbers by their moments, a feature is nominal, a Grids
            lacks the representation or a feature already has other cut points; nothing is
            changed then.
        """
        if not isinstance(readings, dict):
            raise TypeError(f"readings must be a dict {{feature: Grids or ValueCodes}}, got "
                            f"{type(readings).__name__}")
        if not readings:
            return
        if not self._reads:
            raise ValueError(f"this learner reads numbers by their moments "
                             f"(numeric={self.numeric!r}, absent={self.absent!r}): it has no "
                             f"cut points to fix; choose an interval representation, such as "
                             f"numeric='8 intervals'")
        kinds = self.feature_kinds
        for f in readings:
            if f in kinds.nominal_attributes or kinds.kind.get(f, NUMERIC) != NUMERIC:
                raise ValueError(f"feature {f!r} is nominal: it has no cut points")
        read = self.numeric_readings_from({f: r for f, r in readings.items()
                                           if isinstance(r, ColumnSample)})
        readings = {f: read.get(f, r) for f, r in readings.items()
                    if not isinstance(r, ColumnSample) or f in read}
        hosts = self._number_hosts()
        todo = [reader.checked(readings) for reader, _, _ in hosts]  # all checked first
        with uninterrupted():
            for (_, fix, _), mine in zip(hosts, todo):
                fix(mine)

    def _fix_readings(self, readings: dict) -> None:
        """Fix checked readings and count the kept values of the features they fix."""
        self._predicted = None
        self._reader.fix_given(readings, self._kinds, self._t, self._replay)

    def _tick(self) -> None:
        """Multiply every statistic by ``decay`` (step 3 of the forgetting recursion) in O(1)
        through the scaled unit (:class:`~onlinebma.forgetting.ScaledClock`), renormalising
        every table when the clock says so."""
        c = self._clock.tick()
        if c is None:
            return
        for t in self._tables.values():
            t.rescale(c)
            if isinstance(t, NumericTable):
                for m in (t.marginal, *t.by_class.values()):
                    if 0 < m.n < MIN_WEIGHT:  # keeps its Gaussian (MIN_WEIGHT)
                        m.m2 *= MIN_WEIGHT / m.n
                        m.n = MIN_WEIGHT
        for label in self._class_counts:
            self._class_counts[label] *= c
        self._n *= c

    def _shared_rates(self):
        terms = self._rate_terms()
        if terms is None:
            return None
        from .rates import SharedRates  # when asked: the member-axis state is a large module

        return SharedRates(terms, self.nominal_attributes,
                           numeric_attributes=self.numeric_attributes,
                           reader=NumberReader(self.numeric, self.sample_size) if self._reads
                           else None)

    def _number_hosts(self) -> list:
        """``(reader, fix_readings, fix_from_table)`` of each state that reads numbers as
        intervals: this learner, or with ``decay="auto"`` the shared rate state or each rate's
        learner (made now if need be); ``[]`` when numbers are read by their moments."""
        if not self._reads:
            return []
        if not self._auto:
            return [(self._reader, self._fix_readings, self._fix_from_table)]
        mixture = self._rate_mixture()
        if isinstance(mixture, RateMixture):
            return [(m.statistics.reader, m.fix_numeric, m._fix_from_table)
                    for m in mixture.members]
        return [(mixture.reader, mixture.fix_readings, mixture.fix_from_table)]

    def _rate_terms(self):
        """The learner's terms (:mod:`~onlinebma.naive_bayes.rate_terms`) for computing
        ``decay="auto"`` as one state with a member axis
        (:class:`~onlinebma.naive_bayes.rates.SharedRates`), or ``None`` to run one learner
        per rate (:class:`~onlinebma.forgetting.RateMixture`)."""
        return None

    def _log_density(self, table: NumericTable, moments: GaussianMoments | None, x: float):
        """Log predictive density of ``x`` from ``moments`` (``None``: a class never seen
        with this feature); ``None`` to skip the feature."""
        raise NotImplementedError

    def _log_density_np(self, table: NumericTable, moments: GaussianMoments | None, x):
        """Vectorised :meth:`_log_density` (``x`` an array; ``None`` to skip the feature)."""
        raise NotImplementedError

    def _learned_nominal(self, f, table: NominalTable, v, y) -> None:
        """Hook called just before ``table`` counts ``(v, y)``."""

    def _learned_numeric(self, f, table: NumericTable, x: float, y) -> None:
        """Hook called just before ``table`` counts ``(x, y)``."""

    def _learn_nominals(self, pairs, y, w) -> None:
        """Count the observed nominal ``(feature, value)`` pairs of a record of class ``y``
        with weight ``w``, calling :meth:`_learned_nominal` before each (learners override
        this loop with a fused one for their common case)."""
        self._count_pairs(pairs, NominalTable, self._learned_nominal, y, w)

    def _learn_numerics(self, pairs, y, w, seen) -> None:
        """Add the observed numeric ``(feature, value)`` pairs of a record of class ``y``,
        calling :meth:`_learned_numeric` before each. ``seen`` is what :meth:`_add_numerics`
        recorded when it predicted this very record just before (or ``None``). A wide record
        goes the array path of :mod:`~onlinebma.naive_bayes.wide` when it can."""
        if (len(pairs) >= tuning.WIDE_FEATURES and self._arrays_apply()
                and self._wide_numerics.learn(pairs, y, w, self._tables,
                                              list(self._class_counts), self._t)):
            return
        self._count_pairs(pairs, NumericTable, self._learned_numeric, y, w)

    def _count_pairs(self, pairs, table_type, learned, y, w) -> None:
        """Count ``(feature, value)`` pairs in their tables (made as ``table_type`` when
        new), calling ``learned(f, table, value, y)`` before each."""
        tables = self._tables
        for f, v in pairs:
            t = tables.get(f)
            if t is None:
                t = tables[f] = table_type()
            learned(f, t, v, y)
            t.update(v, y, w)

    def _learned_bag(self, table: NominalTable, bag: list, y) -> None:
        """Hook called just before ``table`` (:data:`~.counts.COUNTS`) counts the positive
        ``(word, count)`` pairs of ``bag`` with class ``y``."""

    def _bag_densities(self, table: NominalTable, bag: list, classes, marginal: bool = True):
        """``(log p(bag) without the arc, [log p(bag | y) for y in classes])`` for words all in
        ``table``, up to the multinomial coefficient (plug-in; the first is ``None`` unless
        ``marginal``)."""
        return plugin_bag(self.alpha * self._clock.unit, len(table.n_value), table, bag, classes,
                          marginal)

    def _new_class(self, y) -> None:
        """Hook called after a new label was first counted."""

    def _refresh(self, features) -> None:
        """Recompute what the learner derives from the counts of ``features`` (after a batch
        update or a merge)."""

    # ---------------------------------------------------------------- learning

    def learn_one(self, x: dict, y) -> None:
        if self._auto:
            self._learn_through_rates(x, y)
            return
        check_label(y)
        (numeric, nominal, new), seen = self._read_for_learning(x)
        if self._zero:
            check_name(new)
            numeric = check_bag(numeric)
        for f, v in numeric:
            if not -MAX_ABS_VALUE <= v <= MAX_ABS_VALUE:
                check_magnitude(f, v)
        # Validated: from here on nothing can fail, so a refused record changes nothing.
        self._kinds.commit(new)
        if self._reader is not None:
            self._count_read(numeric, nominal, y)
            return
        self._count_record(numeric, nominal, y, seen)

    # ------------------------------------------------- numbers read as intervals

    def _count_read(self, numeric, nominal, y) -> None:
        """Count a validated record whose numbers are read by ``self._reader``: the values of
        fixed features as their intervals (nominal values), those of pending features kept
        (:class:`~onlinebma.numeric.PendingRecords`) and read by their Gaussian until then;
        features whose sample this record completes are then fixed and their kept values
        counted (:meth:`_replay`)."""
        reader = self._reader
        complete = reader.keep(self._t, y, numeric)
        if numeric:
            coded, numeric = reader.split(numeric)
            nominal = nominal + coded
        self._count_record(numeric, nominal, y)
        if complete:
            reader.fix(complete, list(self._class_counts))
            self._replay(*reader.replay_stream(complete, self._t))

    def _fix_from_table(self, columns: dict, labels: list) -> None:
        """``learn_many`` row by row, before the table's rows are learned: fix the numeric
        columns whose sample the table leaves incomplete from the table and count their kept
        values (:meth:`~onlinebma.naive_bayes.numbers.NumberReader.fix_from_table`)."""
        reader = self._reader
        kept = reader.fix_from_table(columns, labels, self._t, list(self._class_counts))
        if kept:
            self._replay(*reader.replay_stream(kept, self._t))

    def _replay(self, first: int, rows: list) -> None:
        """Count the kept values of newly fixed features as if their cut points had been
        fixed from the first record (``rows`` from
        :meth:`~onlinebma.naive_bayes.numbers.NumberReader.replay_stream`). Each feature's
        statistics in a naive Bayes learner depend on its own values, the labels and the
        clock alone, so a fresh learner of the same parameters is fed, from record ``first``
        on, the kept records' intervals (and, when forgetting, an empty record for each record
        between them, a new class at the record where it first came), and the features'
        statistics are taken from it (replacing the Gaussian that read the feature until
        then), rescaled to this learner's clock."""
        reader = self._reader
        # fed interval names: a feature declared numeric must not refuse them as text
        scratch = self.clone({"numeric": GAUSSIAN, "numeric_attributes": None})
        scratch.know_classes(reader.labels_before(first))
        for record, label in reader.replay_records(first, self._t, rows, self._forgets):
            scratch.learn_one(record, label)
        features = list(dict.fromkeys(f for _, _, pairs in rows for f, _ in pairs))
        c = scratch.clock.scale / self._clock.scale
        for f in features:
            self._adopt_feature(f, scratch.feature_statistics(f), c, first)
        if not self._forgets:
            self._refresh(features)
        self._wide_numerics.clear()  # the array blocks of wide records: rebuilt
        self._wide_nominals.clear()

    def know_classes(self, labels) -> None:
        """Know ``labels`` as classes before any of their records, with weight 0 (as
        scikit-learn's ``partial_fit(classes=...)``): they are predicted with their prior
        share, and the classes are ordered with them where they stand (a replay's learner
        knows the classes its learner knew when its first kept record came).

        Parameters
        ----------
        labels : list
            Labels; those known already are left as they are.

        Examples
        --------
        >>> from onlinebma.naive_bayes import NaiveBayes
        >>> model = NaiveBayes()
        >>> model.know_classes(["no", "yes"])
        >>> model.learn_one({"colour": "red"}, "yes")
        >>> model.classes_
        ('no', 'yes')
        """
        labels = list(labels)
        for label in labels:
            check_label(label)
        for label in labels:
            self._class_counts.setdefault(label, 0)

    @property
    def clock(self) -> ScaledClock:
        """The clock of forgetting (:class:`~onlinebma.forgetting.ScaledClock`): a record
        weighs ``clock.unit`` in the stored statistics, each worth ``clock.scale`` records."""
        return self._clock

    def feature_statistics(self, f) -> dict:
        """What this learner keeps for feature ``f``, by name (the live objects: read, do not
        change): ``"table"``, its counts or moments per class (a
        :class:`~onlinebma.stats.tables.NominalTable` or
        :class:`~onlinebma.stats.tables.NumericTable`), and the learner's own terms of the
        feature (see the learner's override). A replay's learner hands a feature's statistics
        over through it.

        Parameters
        ----------
        f : hashable
            A feature this learner has counted.

        Returns
        -------
        dict
        """
        return {"table": self._tables[f]}

    def _adopt_feature(self, f, statistics: dict, c: float, offset: int) -> None:
        """Take feature ``f``'s ``statistics`` (:meth:`feature_statistics` of a replay's
        learner, of this class, that started ``offset`` records later), multiplied by ``c``
        into this clock's unit."""
        t = statistics["table"]
        if c != 1:
            t.rescale(c)
        self._tables[f] = t

    def _count_record(self, numeric, nominal, y, seen=None) -> None:
        """Count a validated record, read as its ``numeric`` and ``nominal`` pairs (kinds
        committed), of class ``y``."""
        tables = self._tables
        w = self._clock.unit  # the record's weight in the scaled unit (1 without forgetting)
        self._learn_nominals(nominal, y, w)
        if len(nominal) >= tuning.NOMINAL_FEATURES:
            self._wide_nominals.counted(nominal, y, w, self._t)
        if not self._zero:
            self._learn_numerics(numeric, y, w, seen)
        elif numeric:  # one observation of the multinomial over words
            t = tables.get(COUNTS)
            if t is None:
                t = tables[COUNTS] = NominalTable()
            self._learned_bag(t, numeric, y)
            for f, v in numeric:
                t.update(f, y, w * v)
        self._n += w
        if y in self._class_counts:
            self._class_counts[y] += w
        else:
            self._class_counts[y] = w
            self._new_class(y)
        self._t += 1
        if self._forgets:
            self._tick()

    def _read_for_learning(self, x: dict):
        """``(self._kinds.split(x), seen)``. Progressive validation predicts a record and
        then learns it: when ``x`` is the same dict as the last prediction's, unchanged, and
        nothing was learned in between, that prediction's reading of it is reused, with what
        it computed per numeric feature (``seen``, see :meth:`_add_numerics`)."""
        last, self._predicted = self._predicted, None
        if last is not None and last[0] is x and last[2] == self._t and last[1] == x:
            return last[3], last[4]
        return read_record(self._kinds, x), None

    # -------------------------------------------------------------- predicting

    def _log_prior(self) -> dict:
        """log P(y) = log((N_y + alpha) / (N + alpha |classes|))."""
        a = self.alpha * self._clock.unit  # pseudo-counts in the counts' scaled unit
        norm = math.log(self._n + a * len(self._class_counts))
        return {y: math.log(c + a) - norm for y, c in self._class_counts.items()}

    def _add_nominals(self, scores: list, pairs, classes) -> list:
        """``scores`` plus, per class and per observed ``(feature, value)`` of ``pairs``, the
        log of the mixed parameter w0 θ(v) + w1 θ(v | y) (eq. 12-13 of Dash & Cooper; eq. 11
        of Wu et al.). A feature or value never seen in training is skipped, like a missing
        value. One loop for all features, no call per feature but the weights'.

        The mixture of the two probabilities is formed in linear space: both are Dirichlet
        posterior means, at least ``a / (N + r a) > 0``, and one weight is at least 1/2, so
        the sum cannot underflow; only its log enters the product over features.
        """
        if (len(pairs) >= tuning.NOMINAL_FEATURES and self._arrays_apply()  # wide: the array
                and not self._cell_prior_varies  # path (.wide_nominal)
                and len(pairs) * (1 + len(classes)) >= self._nominal_cells()):
            return self._wide_nominals.terms(scores, pairs, classes, self._tables, self._t,
                                             self.alpha, self._wide_arc_odds)
        tables = self._tables
        exp, inf = math.exp, math.inf
        odds = self._arc_log_odds
        kept, prior_odds = self._kept_log_odds() or (None, 0.0)
        u = self._clock.unit  # pseudo-counts in the counts' scaled unit
        varies = self._cell_prior_varies
        a0 = a1 = self.alpha * u
        terms = []  # per feature: (w0 θ(v), w1, a1, r a1, N_yv row, N_y)
        for f, v in pairs:
            t = tables.get(f)
            if t is None:
                continue
            n_value = t.n_value
            n_v = n_value.get(v)
            if n_v is None:
                continue  # never seen in training: skipped, like a missing value
            if kept is not None:  # _arc_log_odds, inlined
                no_arc, arc = kept[f]
                d = prior_odds + arc - no_arc
            else:
                d = odds(f, t)
            r = len(n_value)
            if varies:
                a0, a1 = self._pseudo_counts(r)
                a0, a1 = a0 * u, a1 * u
            if d == inf:
                terms.append((0.0, 1.0, a1, r * a1, t.n_joint[v], t.n_class))
                continue
            if d >= 0:  # w1 = 1 / (1 + exp(-d)) without overflow
                e = exp(-d)
                w0, w1 = e / (1.0 + e), 1.0 / (1.0 + e)
            else:
                e = exp(d)
                w0, w1 = 1.0 / (1.0 + e), e / (1.0 + e)
            none = w0 * (a0 + n_v) / (r * a0 + t.n)
            terms.append((none, w1, a1, r * a1, t.n_joint[v], t.n_class))
        if not terms:
            return scores
        log = math.log
        out = []
        for s, y in zip(scores, classes):  # classes outside: no list per feature
            for none, w1, a1, ra1, row, n_class in terms:
                s += log(none + w1 * (a1 + row.get(y, 0)) / (ra1 + n_class.get(y, 0)))
            out.append(s)
        return out

    def _densities(self, f, t: NumericTable, x: float, classes):
        """``(log p(x) without the arc, [log p(x | y) for y in classes])``, or ``None`` to
        skip the feature."""
        density = self._log_density
        none = density(t, t.marginal, x)
        if none is None:
            return None
        by_class = t.by_class
        return none, [density(t, by_class.get(y), x) for y in classes]

    def _add_numerics(self, scores: list, pairs, classes, seen: list) -> list:
        """``scores`` plus, per class, the numeric features' terms of ``pairs``; a learner
        may append to ``seen`` what :meth:`_learn_numerics` will need of this record."""
        tables = self._tables
        scores = list(scores)
        for f, v in pairs:
            t = tables.get(f)
            if t is None:
                continue
            densities = self._densities(f, t, v, classes)
            if densities is not None:
                none, arc = densities
                _add_mixture(scores, [none, *arc], self._arc_log_odds(f, t))
        return scores

    def _bag_term(self, t: NominalTable, bag: list, classes) -> list:
        """Per class, the log of the mixed predictive of a bag of words (all in ``t``)."""
        d = self._arc_log_odds(COUNTS, t)
        if d == math.inf:
            return self._bag_densities(t, bag, classes, marginal=False)[1]
        none, arc = self._bag_densities(t, bag, classes)
        out = [0.0] * len(arc)
        _add_mixture(out, [none, *arc], d)
        return out

    def joint_log_likelihood(self, x: dict) -> dict:
        """Unnormalised ``log P(y, x)`` for every label seen (``{}`` before learning); with
        ``decay="auto"``, the log of the rate-averaged ``P(y | x)``."""
        if self._auto:
            return self._rate_mixture().joint_log_likelihood(x)
        split = read_record(self._kinds, x)
        if not self._class_counts:
            return {}
        numeric, nominal, _ = split
        jll = self._log_prior()
        classes = list(jll)
        scores = list(jll.values())
        tables = self._tables
        if self._zero:
            t = tables.get(COUNTS)
            bag = check_bag(numeric)
            if t is not None:
                known = t.n_value
                bag = [(f, v) for f, v in bag if f in known]  # a word never seen: skipped
                if bag:
                    scores = [s + d for s, d in zip(scores, self._bag_term(t, bag, classes))]
            numeric = ()
        elif self._reader is not None and numeric:
            coded, numeric = self._reader.split(numeric)
            nominal = nominal + coded
        scores = self._add_nominals(scores, nominal, classes)
        seen: list = []
        if numeric:
            scores = self._add_numerics(scores, numeric, classes, seen)
        self._predicted = (x, dict(x), self._t, split, (classes, seen) if seen else None)
        return dict(zip(classes, scores))

    def predict_proba_one(self, x: dict) -> dict:
        if self._auto:
            return self._rate_mixture().predict_proba_one(x)
        return normalize_log(self.joint_log_likelihood(x))

    # ------------------------------------------------------ many records at once

    def learn_many(self, X, y) -> None:
        """Learn a pandas DataFrame (NaN/None = missing) and its labels.

        Without forgetting, vectorised per column (:mod:`~onlinebma.naive_bayes.batches`);
        with it (``decay`` or ``structure_decay`` below 1, or ``"auto"``) and with
        ``absent="zero"``, row by row in order, equal to ``learn_one`` on each row. The whole
        batch is validated before anything changes.

        ``X`` and ``y`` are paired by position, not by index, as in River and scikit-learn
        (align first, ``y.loc[X.index]``, to pair by index). A Ctrl-C while the counts are
        updated is delivered once the batch is counted whole (:mod:`.interrupts`), also row
        by row, where it waits for the batch's last row.
        """
        if self._auto or self._zero or self._forgets:
            self._learn_rows(X, y)
            return
        batch = self._batches.prepared(X, y)
        with uninterrupted():  # Ctrl-C waits for the whole batch (.interrupts)
            features = self._batches.count(batch, self._t, self.fix_numeric)
            self._n += len(batch.codes)
            self._t += len(batch.codes)
            self._refresh(features)

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
            self._batches.add(statistics)
            self._n += statistics.weight
            self._t += statistics.records
            self._refresh(list(self._tables))

    def _check_addable(self, statistics: Statistics) -> None:
        """Refuse statistics that do not add to this learner's (:meth:`add_statistics`)."""
        if not isinstance(statistics, Statistics):
            raise TypeError(f"statistics must be a learner's .statistics, got "
                            f"{type(statistics).__name__}")
        self._refuse_forgetting("merge learners")
        self._batches.check_addable(statistics)

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
        :func:`~onlinebma.naive_bayes.batches.agree_cut_points` fixes the cut points from it,
        so that the learners of the partitions merge and the result equals ``learn_many`` on
        the whole frame. A learner that forgets is refused here, before any partition is
        learned."""
        self._refuse_forgetting("train on Dask learners")
        return self._batches.distributed_plan(self, self.feature_kinds)

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
        return self._batches.probabilities(X, kinds, self._log_prior(), self._add_nominals,
                                           self._numeric_term_np)

    def _numeric_term_np(self, f, t: NumericTable, x: np.ndarray, classes) -> np.ndarray:
        """Per row of ``x`` (``f``'s values, NaN where missing) and class, the feature's
        term (zero where missing), vectorised (:meth:`predict_proba_many`)."""
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


def _add_mixture(scores: list, densities: list, d: float) -> None:
    """Add in place to ``scores[i]`` a feature's term ``log(w0 e^none + w1 e^arc_i)`` for class
    ``i``, where ``densities`` is ``[none, arc_0, arc_1, ...]`` (log densities without and with
    the arc) and ``w1 = 1 - w0 = sigmoid(d)``, ``d`` the arc's posterior log odds (eq. 12-13
    of Dash & Cooper, eq. 11 of Wu et al.). Once the two terms are 40 nats apart the smaller
    adds less than 4.3e-18 and is left out."""
    log1p, exp = math.log1p, math.exp
    # log w(arc) and log w(no arc): stats.numerics.log_sigmoid of d and -d, inlined (two
    # calls per numeric feature would cost a third of this function with two classes)
    if d >= 0:
        lw1 = -log1p(exp(-d))
        a = lw1 - d + densities[0]
    else:
        a = -log1p(exp(d))
        lw1 = a + d
        a += densities[0]
    for i in range(len(scores)):
        b = lw1 + densities[i + 1]
        if a >= b:
            scores[i] += a if a - b > 40.0 else a + log1p(exp(b - a))
        else:
            scores[i] += b if b - a > 40.0 else b + log1p(exp(a - b))

