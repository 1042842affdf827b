"""The state of :class:`~onlinebma.tan.ModelAveragedTAN`: its members as one stack.

A member is one model-averaged tree learner, described by its :class:`Member` (today its
forgetting rate; the axis is generic so that other descriptions, e.g. a numeric
representation, can join the rate). A fixed ``decay`` is a stack of one member; ``"auto"``
the members of :data:`~onlinebma.forgetting.AUTO_GRID`, averaged with
dynamic-model-averaging weights (:class:`~onlinebma.forgetting.RateWeights`). The
members learn the same records, so they share everything but the weights of those records:
the record reading and coding, the numeric cut points (and the records kept before them) and
the layout. :class:`TreeMemberStack`
keeps

- one :class:`~onlinebma.stats.pairs.PairCounts` with ``R`` members (row ``c R + r`` is member
  ``r``'s counts of class ``c``), so that a record is read and coded once, its columns gathered
  for every member in one ``take`` and counted by every member in one add, and a new feature
  or value lays out every member's counts at once;
- each member's scaled unit (λ_r^-k_r, renormalised on its own clock) and its edge weights
  ``l`` as the rows of one array ``(R, pairs)``;
- the record's terms and tree sums of all ``R x K`` graphs in one stack
  (:class:`~onlinebma.tan.tree_terms.TreeTerms`); the ``R`` denominators ``LT(l)``, one
  per member and the same for every class, cancel in its class probabilities and are not
  computed.

Each member follows exactly the recursion of docs/tan.md at its rate: ``l <- α (l + log
Q_y(x))`` before counting a record (prequential, ``α`` = ``structure_decay``), counts times
λ after it, and ``l = log W`` from the counts after a new class or value for a member that
does not forget. The weights are updated as
:class:`~onlinebma.forgetting.RateMixture`'s (:class:`~onlinebma.forgetting.RateWeights`:
``log π_{β,r} += log max(p_r(y | x), 1e-300)`` for a label seen before, then ``π_{β,r} ∝
π_{β,r}^β`` for each β of :data:`~onlinebma.forgetting.AUTO_FORGETTINGS`, the β's weighed by
their own mixtures' predictions), in log space (``tests/test_tan_auto_shared.py`` runs the
stack against separate learners, and a stack of one against the recursion written out).

A stack holds one interval representation; several interval grids are several stacks, one
per grid, under one set of weights (:class:`~onlinebma.tan.grid_stack.GridStack`), which
shares with this one what :class:`WeightedMembers` does with the weights.
"""

from __future__ import annotations

import copy
import math
from typing import NamedTuple

import numpy as np

from .. import tuning
from ..forgetting import MIN_PROBABILITY, RateWeights
from ..labels import ordered_labels, proba_frame
from ..reading import factorize, prepare_columns, prepare_frame, records_of, uninterrupted
from ..records import NOMINAL, FeatureKinds, check_label
from ..stats.gaussian import MAX_ABS_VALUE, check_magnitude
from ..stats.numerics import RENORMALISE_ABOVE
from ..stats.pairs import PairCounts
from ..stats.unique import unique_rows
from .coding import RecordCoding, ReplayClock
from .gaussian import GAUSSIAN, GAUSSIANS, GaussianStatistics
from .gaussian_forests import GAUSSIAN_FORESTS, GaussianForestStatistics
from .narrow import narrow_predictions
from .numbers import NumericReading
from .one_dependence import log_joint, log_joint_many
from .record_sums import takes_narrow_terms
from .stacking import FOLDS, folds_of, stacking_weights
from .tree_terms import TreeTerms

__all__ = ["AODE", "STRUCTURES", "Member", "StackComplements", "TreeMemberStack",
           "WeightedMembers", "class_probabilities"]

# The column of the class counts in every record's columns (``PairCounts.record_columns``).
_CLASS_COLUMN = np.zeros(1, dtype=np.int64)


class Member(NamedTuple):
    """What sets a member of the stack apart from the others: its forgetting rate λ (every
    count times λ after each record) and how it reads numeric features: an interval
    representation of :data:`~onlinebma.tan.numbers.REPRESENTATIONS` or
    :data:`~onlinebma.tan.gaussian.GAUSSIAN` (a full-covariance Gaussian per class,
    :mod:`onlinebma.tan.gaussian`) or :data:`~onlinebma.tan.gaussian.INDEPENDENT_GAUSSIANS`
    (one Gaussian per feature and class), and how it predicts from its counts: the exact average
    over every structure (:data:`STRUCTURES`) or AODE's estimates (:data:`AODE`, an interval
    representation's only: :func:`onlinebma.tan.one_dependence.log_joint`, Laplace
    estimates, every value a super-parent, from the same count row as the structure average
    of its rate)."""

    rate: float
    representation: str = "5 intervals"
    predictive: str = "structures"


#: A member predicting with the exact average over every tree- or forest-augmented structure.
STRUCTURES = "structures"
#: A member predicting with AODE's estimates (Webb, Boughton & Wang 2005) from its counts.
AODE = "AODE"


def _score_source(member: Member) -> str:
    """Which joint log likelihoods a member predicts with: :data:`AODE`'s, the Gaussian
    statistics' (:data:`~onlinebma.tan.gaussian.GAUSSIAN` for either Gaussian
    representation), the Gaussian forests' or the interval structure average's
    (:data:`STRUCTURES`)."""
    if member.predictive == AODE:
        return AODE
    if member.representation in GAUSSIANS:
        return GAUSSIAN
    if member.representation == GAUSSIAN_FORESTS:
        return GAUSSIAN_FORESTS
    return STRUCTURES


def _score_rows(members, rows, n_rows: int) -> np.ndarray:
    """Each member's row in the joint log likelihoods of a record that
    :meth:`TreeMemberStack._predict` stacks: a block per source the members use, in the order
    structures, Gaussian, Gaussian forests, AODE, of ``n_rows`` rows (one per rate; ``rows``
    each member's rate row), but the Gaussian block one row per Gaussian member, in order."""
    sources = [s for s in (STRUCTURES, GAUSSIAN, GAUSSIAN_FORESTS, AODE)
               if any(_score_source(m) == s for m in members)]
    gaussian = [j for j, m in enumerate(members) if _score_source(m) == GAUSSIAN]
    sizes = [len(gaussian) if s == GAUSSIAN else n_rows for s in sources]
    starts = dict(zip(sources, np.cumsum([0, *sizes]).tolist()))
    return np.array([starts[_score_source(m)]
                     + (gaussian.index(j) if _score_source(m) == GAUSSIAN else i)
                     for j, (m, i) in enumerate(zip(members, rows))], dtype=np.int64)


def class_probabilities(scores: np.ndarray) -> np.ndarray:
    """Each row's class probabilities from its joint log likelihoods ``scores`` ``(M, K)``
    (``exp`` shifted by the row's largest, normalised): in plain floats up to
    :data:`onlinebma.tuning.MEMBER_SOFTMAX_CELLS` cells, else with numpy.

    >>> p = class_probabilities(np.log([[1.0, 3.0], [2.0, 2.0]]))
    >>> p.round(12).tolist()
    [[0.25, 0.75], [0.5, 0.5]]
    """
    if scores.size <= tuning.MEMBER_SOFTMAX_CELLS:
        exp = math.exp
        out = []
        for row in scores.tolist():
            top = max(row)
            e = [exp(s - top) for s in row]
            total = sum(e)
            out.append([q / total for q in e])
        return np.array(out)
    z = scores - scores.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


class WeightedMembers:
    """What every state of weighted members shares (a mixin): :class:`TreeMemberStack` (one
    interval grid) and :class:`~onlinebma.tan.grid_stack.GridStack` (several). The host has
    ``members`` (:class:`Member`), ``log_weights`` (one per member), ``rates``, ``counts``,
    and computes ``member_predictions(x)``, ``member_probabilities(X)``, ``add_records``,
    ``agree_on_table``, ``fold_states`` and ``complements``."""

    def predict_proba_one(self, x: dict) -> dict:
        """The members' class probabilities of ``x`` averaged with their weights (``{}``
        before the first label)."""
        probas = self.member_predictions(x)
        if probas is None:
            return {}
        mixed = (np.exp(self.log_weights) @ probas).tolist()
        total = sum(mixed)
        return {label: q / total for label, q in zip(self.counts.classes_, mixed)}

    def predict_proba_many(self, X):
        """Every member's batch predictions (:meth:`member_probabilities`), averaged."""
        import pandas as pd

        counts = self.counts
        if not counts.n_classes:
            return pd.DataFrame(index=X.index)
        p = self.member_probabilities(X)
        out = np.einsum("nrk,r->nk", p, np.exp(self.log_weights))
        return proba_frame(out / out.sum(axis=1, keepdims=True), counts.classes_, X.index)

    def _learn_stacked(self, X, columns, new, labels) -> None:
        """``learn_many`` of a validated table by members that forget nothing
        (:mod:`onlinebma.tan.stacking`).

        1. What every fold agrees on is fixed here first (:meth:`agree_on_table`): cut points
           from the table, the table's classes, the Gaussian's features.
        2. Row ``i`` is in fold :func:`~onlinebma.tan.stacking.folds_of` ``(i)``; each fold's
           rows are counted at once by an empty stack that agrees (:meth:`fold_states`).
        3. Member ``r``'s probability ``P[i, r]`` of row ``i``'s label is read from this stack
           (the records it learned before the table) merged with every fold but row ``i``'s
           (:meth:`complements`, :meth:`cross_validated_probabilities`): merges are exact.
        4. Every fold is merged into this stack and the members' weights become
           :func:`~onlinebma.tan.stacking.stacking_weights` of ``P`` (:meth:`finish_stacked`).
        """
        self.agree_on_table(columns, new, labels)
        folds = self.fold_states(X, labels)
        P = self.complements(folds).cross_validated_probabilities(X, labels)
        self.finish_stacked(folds, P)

    def finish_stacked(self, folds: list, probabilities) -> None:
        """Add every fold's records and set the members' weights to the stacking weights of
        ``probabilities`` (unchanged without rows).

        Parameters
        ----------
        folds : list
            :meth:`fold_states` of the table, by fold.
        probabilities : np.ndarray
            ``(rows, members)``: the complements' ``cross_validated_probabilities`` of
            the table's rows.
        """
        self.add_records(folds)
        if len(probabilities):
            weights = np.maximum(stacking_weights(probabilities), MIN_PROBABILITY)
            self.log_weights = np.log(weights / weights.sum()).tolist()

    def merge(self, other) -> None:
        """Add ``other``'s records (a state of the same members that forgets nothing): the
        counts and the Gaussian statistics add exactly. The weights of several members are
        not a function of the statistics (the recursion over a stream depends on the order
        of its records, the stacking weights of a table on its cross-validated
        probabilities), so stacks whose weights have moved are refused."""
        for stack in (self, other):  # members that predicted alike keep equal weights
            if max(stack.log_weights) - min(stack.log_weights) > 1e-9:
                raise ValueError(
                    "cannot merge: the weights of the members (numeric representations or "
                    "rates) are not a function of the counts (the recursion over a stream, "
                    "the stacking weights of a table); merge learners of one member (one "
                    "representation, numeric='8 intervals', 'MDL' or 'Gaussian', with "
                    "aode=False), or learn the union with learn_many (distributed.fit for a "
                    "Dask frame)")
        self.add_records([other])

    def posterior(self) -> dict:
        """``{rate: posterior probability}``: the members' weights summed over the
        representations."""
        out = dict.fromkeys(self.rates, 0.0)
        for m, lw in zip(self.members, self.log_weights):
            out[m.rate] += math.exp(lw)
        return out

    def representation_posterior(self) -> dict:
        """``{representation: posterior probability}``: the members' weights summed over the
        rates (and the predictives)."""
        return self._summed("representation")

    def predictive_posterior(self) -> dict:
        """``{predictive: posterior probability}``: the members' weights summed over the
        rates and representations, by :data:`STRUCTURES` or :data:`AODE`."""
        return self._summed("predictive")

    def _summed(self, field: str) -> dict:
        out: dict = {}
        for m, lw in zip(self.members, self.log_weights):
            key = getattr(m, field)
            out[key] = out.get(key, 0.0) + math.exp(lw)
        return out



class TreeMemberStack(WeightedMembers, RateWeights):
    """The members of a :class:`~onlinebma.tan.ModelAveragedTAN` as one state (module
    docstring).

    Parameters
    ----------
    structures
        ``"forests"`` or ``"trees"``.
    ess
        Equivalent sample size of the joint Dirichlet prior.
    edge_prior
        Prior weight of each feature–feature edge (forests).
    structure_decay
        α: every member's ``l`` is multiplied by α after each record.
    nominal_attributes
        Features to treat as nominal even though their values are numbers.
    sample_size
        Values of a numeric feature its cut points are fixed from
        (:mod:`onlinebma.tan.numbers`).
    members
        The members, a sequence of :class:`Member`: at most one interval representation
        among them (the counts have one row per distinct rate; a Gaussian member reads the
        row of its rate for its nominal features).
    numeric_attributes
        Features that are numeric whatever their first value.
    weighed_outside
        Whether another state weighs these members (a grid's stack in a
        :class:`~onlinebma.tan.grid_stack.GridStack`): then ``learn_one`` leaves
        ``log_weights`` as they are instead of running a recursion no one reads.
    """

    def __init__(self, structures: str, ess: float, edge_prior: float,
                 structure_decay: float, nominal_attributes: list | None, sample_size: int,
                 members, numeric_attributes: list | None = None,
                 weighed_outside: bool = False):
        self.members = tuple(members)
        self._arguments = (structures, ess, edge_prior, structure_decay, nominal_attributes,
                           sample_size, self.members, numeric_attributes, weighed_outside)
        self._reweighs = len(self.members) > 1 and not weighed_outside
        grids = {m.representation for m in self.members} - {*GAUSSIANS, GAUSSIAN_FORESTS}
        if len(grids) > 1:
            raise ValueError(f"one interval representation per stack, got {sorted(grids)}")
        self.rates = tuple(dict.fromkeys(m.rate for m in self.members))  # the count rows
        self._rows = [self.rates.index(m.rate) for m in self.members]
        self._gaussian_members = [i for i, m in enumerate(self.members)
                                  if m.representation in GAUSSIANS]
        self._forest_members = [i for i, m in enumerate(self.members)
                                if m.representation == GAUSSIAN_FORESTS]
        self._aode_members = [i for i, m in enumerate(self.members) if m.predictive == AODE]
        self._score_rows = _score_rows(self.members, self._rows, len(self.rates))
        for m in self.members:
            if m.predictive not in (STRUCTURES, AODE):
                raise ValueError(f"a member predicts with {STRUCTURES!r} or {AODE!r}, got "
                                 f"{m.predictive!r}")
            if m.predictive == AODE and m.representation in (*GAUSSIANS, GAUSSIAN_FORESTS):
                raise ValueError(f"an AODE member reads intervals, not {m.representation!r}")
        self._interval_members = (len(self.members) - len(self._gaussian_members)
                                  - len(self._forest_members) - len(self._aode_members))
        self._structures, self._log_edge_prior = structures, math.log(edge_prior)
        self.structure_decay = structure_decay
        self.log_weights = [-math.log(len(self.members))] * len(self.members)
        r = len(self.rates)
        self.coding = RecordCoding(FeatureKinds(nominal_attributes, numeric_attributes),
                                   PairCounts(r),
                                   NumericReading(grids.pop() if grids else None, sample_size))
        gaussian = [self.members[i] for i in self._gaussian_members]  # one row each
        self._gaussian = GaussianStatistics([m.rate for m in gaussian],
                                            [m.representation for m in gaussian]) \
            if gaussian else None
        # each Gaussian member's row of the Gaussian statistics, and the count row of its rate
        self._gaussian_rows = {i: g for g, i in enumerate(self._gaussian_members)}
        self._gaussian_count_rows = [self._rows[i] for i in self._gaussian_members]
        self._forests = (GaussianForestStatistics(self.rates, structure_decay)
                         if self._forest_members else None)
        self._numeric_codes = (-1, frozenset())  # (counts version, codes of numeric features)
        self._tree = TreeTerms(ess, structures == "forests", edge_prior)
        self._k = [0] * r  # records since each member's last renormalisation
        self._units = np.ones(r)  # each member's scaled unit λ^-k
        self._l = np.zeros((r, 0))  # each member's l per pair id
        # whether a member's l is a prequential recursion (else log W, refreshed from the
        # counts after a new class or value)
        self._forgetting = [rate != 1 or structure_decay != 1 for rate in self.rates]
        self._t = 0
        self._last = None  # the last prediction (see _predict)
        self._flat: dict = {}  # pair ids -> flat positions in _l, _flat_pairs wide
        self._flat_pairs = -1

    def __getstate__(self):  # the caches are derived, not state
        return {**self.__dict__, "_last": None, "_flat": {}, "_flat_pairs": -1,
                "_numeric_codes": (-1, frozenset())}

    @property
    def forgets(self) -> bool:
        """Whether any member forgets (a rate or ``structure_decay`` below 1)."""
        return any(self._forgetting)

    @property
    def gaussian_statistics(self):
        """The Gaussian members' :class:`~onlinebma.tan.gaussian.GaussianStatistics`, or
        ``None`` without a Gaussian member (read only)."""
        return self._gaussian

    @property
    def forest_statistics(self):
        """The Gaussian forest members'
        :class:`~onlinebma.tan.gaussian_forests.GaussianForestStatistics`, or ``None``
        without one (read only)."""
        return self._forests

    @property
    def counts(self) -> PairCounts:
        """The members' counts, one :class:`~onlinebma.stats.pairs.PairCounts` with a member
        axis (read only; each member's in its scaled unit)."""
        return self.coding.counts

    @property
    def numeric_readings(self) -> dict:
        """``{feature: Grids}``: the cut points of every numeric feature that has them
        (:attr:`~onlinebma.tan.coding.RecordCoding.numeric_readings`)."""
        return self.coding.numeric_readings

    @property
    def records_learned(self) -> int:
        """The number of records the members learned (the same for every member)."""
        return self._t

    def _clock(self) -> ReplayClock:
        """The members' clocks for records replayed into the counts: the record being learned
        (or the next one) and each member's weight of an older record
        (:meth:`_replay_weight`)."""
        return ReplayClock(self._t, self._replay_weight)

    @property
    def edge_log_weights(self) -> np.ndarray:
        """Every member's ``l`` by pair id, ``(R, pairs)``, a copy."""
        return self._l.copy()

    # --------------------------------------------------------------- predicting

    def _predict(self, x: dict):
        """``(probabilities, memo, reading, split)`` of ``x`` (all ``None`` before the
        first label): every member's class probabilities ``(members, K)``, what learning
        ``x`` next reuses (``memo`` = ``log_q (R, K, P)``; the coding
        if every value was known) and the validated record. Kept for the same unchanged
        dict until something is learned."""
        last = self._last
        if last is not None and last[0] is x and last[1] == x:
            return last[2]
        if not self.counts.n_classes:
            return None, None, None, None
        codes, values, columns, split = self.coding.read(x)
        numeric, nominal, _ = split
        rows = jll = memo = forest_rows = aode_rows = None
        # the record's counts, gathered once for the structure averages and AODE
        gathered = self.counts.gather(columns) if self._interval_members or \
            self._aode_members else None
        if self._interval_members:
            jll, memo = self._member_terms(codes, columns, gathered)
        if self._aode_members:
            aode_rows = self._aode_terms(codes, gathered)
        if self._gaussian is not None:
            rows = self._gaussian_terms(codes, values, columns, numeric, jll, gathered)
        if self._forests is not None:
            forest_rows = self._forest_terms(codes, values, columns, numeric)
        scores = [s for s in (jll, rows, forest_rows, aode_rows) if s is not None]
        p = class_probabilities(np.concatenate(scores).take(self._score_rows, axis=0))
        cuts = self.coding.numeric_reading.cuts_numbers
        complete = len(codes) == len(nominal) + (len(numeric) if cuts else 0)
        out = (p, memo, (codes, values, columns) if complete else None, split)
        self._last = (x, dict(x), out)
        return out

    def _aode_terms(self, codes, gathered) -> np.ndarray:
        """AODE's ``log P̂(c, x)`` of every count row ``(R, K)``
        (:func:`~onlinebma.tan.one_dependence.log_joint` of the record's ``gathered`` counts
        in record units: the stored counts divided by the row's scaled unit)."""
        cells = gathered / self._units[:, None, None]
        return log_joint(cells, self.counts.n_values[codes], None, 1)

    def _gaussian_terms(self, codes, values, columns, numeric, jll, gathered) -> np.ndarray:
        """The Gaussian members' joint log likelihoods ``(Gaussian members, K)``: the forest
        average over the record's nominal features at each one's rate plus ``log t_c`` of its
        numeric values (:mod:`onlinebma.tan.gaussian`); ``jll`` the count rows' terms of the
        whole coded record if computed (reused when it has no numeric code), ``gathered`` its
        counts if gathered (their first column the class counts)."""
        counts = self.counts
        codes, values, columns, cut = self._nominal_part(codes, values, columns)
        if cut:
            jll = None
        if jll is None and len(codes):
            jll = self._member_terms(codes, columns)[0]
        elif jll is None:
            jll = self._class_terms(None if gathered is None else gathered[..., 0])
        return jll[self._gaussian_count_rows] + self._gaussian.log_densities(
            self._gaussian.vector(numeric), counts.n_classes)

    def _nominal_part(self, codes, values, columns):
        """``(codes, values, columns, cut)``: a coded record without the codes of its numeric
        features cut into intervals (``cut``: whether it had any)."""
        counts = self.counts
        version, numeric_codes = self._numeric_codes
        if version != counts.version:
            cut = self.coding.numeric_reading.readings
            numeric_codes = frozenset(counts.feature_code(f) for f in cut)
            self._numeric_codes = (counts.version, numeric_codes)
        if numeric_codes and not numeric_codes.isdisjoint(codes.tolist()):
            keep = np.array([u not in numeric_codes for u in codes.tolist()])
            codes, values = codes[keep], values[keep]
            columns = counts.record_columns(codes, values) if len(codes) else _CLASS_COLUMN
            return codes, values, columns, True
        return codes, values, columns, False

    def _forest_terms(self, codes, values, columns, numeric) -> np.ndarray:
        """The Gaussian forest rows' joint log likelihoods ``(rows, K)``
        (:mod:`onlinebma.tan.gaussian_forests`): the class and nominal terms and the nominal
        pairs' ``l`` from the counts, the numeric families from the forest statistics."""
        counts = self.counts
        codes, values, columns, _ = self._nominal_part(codes, values, columns)
        k = counts.n_classes
        if len(codes):
            ids, prior = self._tree.plan(counts, codes, k)
            base, log_q = self._tree.record(len(codes), counts.gather(columns), prior,
                                            self._units[:, None], False)
            l_pairs = self._l.take(ids, axis=1)
        else:
            base, log_q, l_pairs = self._class_terms(), None, None
        if len(codes) < 2:
            r = len(self.rates)
            log_q, l_pairs = np.zeros((r, k, 0)), np.zeros((r, 0))
        self._forests.grow(k, counts.n_features, int(counts.n_values.max(initial=1)))
        return self._forests.joint(codes, values, numeric, base, l_pairs, log_q,
                                   self._log_edge_prior, self._structures)

    def _class_terms(self, class_counts=None) -> np.ndarray:
        """Every count row's class terms ``log(a_c + N_c)`` ``(R, K)`` in its unit: the
        joint log likelihoods of a record without nominal features (up to a constant per
        row), from ``class_counts`` ``(R, K)`` if gathered already, else one gather of
        them."""
        counts = self.counts
        n = counts.gather(_CLASS_COLUMN)[..., 0] if class_counts is None else class_counts
        return np.log(self._tree.ess / counts.n_classes * self._units[:, None] + n)

    def _member_terms(self, codes, columns, gathered=None):
        """Every count row's joint log likelihoods ``(R, K)`` of a coded record, up to a
        constant per row, and the memo (``log_q``): one gather of the rows' counts, one stack
        of terms and tree sums. Each row's class probabilities are normalised over the
        classes, so the constants are left out: ``log(ess + N)``, and the tree sums'
        denominator ``LT(l)`` over the record's features (the same for every class, it is not
        computed: one tree sum per class, not one more). ``gathered``: the record's counts
        (``counts.gather(columns)``) if already read."""
        counts = self.counts
        r, k = len(self.rates), counts.n_classes
        ids, prior = self._tree.plan(counts, codes, k)
        m = len(codes)
        if gathered is None:
            gathered = counts.gather(columns)
        if takes_narrow_terms(r * k * len(columns)):
            jll, memo, _ = narrow_predictions(
                self._tree, self._t, codes, ids, prior, gathered.tolist(),
                self._units.tolist(), self._l.take(ids, axis=1).tolist(), [0.0] * r)
            return np.array(jll), np.array([q for q, _ in memo])
        base, log_q = self._tree.record(m, gathered, prior, self._units[:, None], False)
        if m < 2:
            return base, log_q
        l_pairs = self._l.take(ids, axis=1)[:, None, :]
        return base + self._tree.sums(codes.tobytes(), m, l_pairs, log_q, self._t), log_q

    def member_predictions(self, x: dict):
        """Every member's class probabilities of ``x`` (a row of ``K`` per member, the
        classes in the counts' order), or ``None`` before the first label; validates ``x``.

        Parameters
        ----------
        x : dict
            The record.

        Returns
        -------
        numpy.ndarray or None
            ``(members, K)``.
        """
        return self._predict(x)[0]

    def member_probabilities(self, X) -> np.ndarray:
        """Every member's class probabilities of a DataFrame's rows, ``(rows, members,
        classes)``, the classes in the counts' order (:meth:`TreeTerms.batch`; a Gaussian
        member's from the nominal columns and its Student t of each row). Needs a class.

        Parameters
        ----------
        X : pandas.DataFrame
            The rows (NaN/None = missing).

        Returns
        -------
        np.ndarray
        """
        counts = self.counts
        if self._forests is not None:  # record by record (the structure sums of each)
            return np.array([self._predict(x)[0] for x in records_of(
                prepare_columns(self.coding.kinds, X)[0], len(X))]).reshape(
                    len(X), len(self.members), counts.n_classes)
        coded = self.coding.code_frame(X)
        # identical coded rows (frequent after discretisation) are computed once
        distinct, back, _ = unique_rows(coded)
        if self._gaussian is not None:
            nominal = coded.copy()
            nominal[:, [counts.feature_code(f) for f in self.coding.numeric_reading.readings]] = -1
            nominal_rows, nominal_back, _ = unique_rows(nominal)
            log_t = self._gaussian_batch(X, counts.n_classes)
        out = np.empty((len(X), len(self.members), counts.n_classes))
        for j, (m, i) in enumerate(zip(self.members, self._rows)):
            table = counts.member_table(i)
            if m.predictive == AODE:
                jll = log_joint_many(counts, distinct, 1 / self._units[i], None, 1,
                                     member=i)[back]
            elif m.representation in GAUSSIANS:
                jll = self._tree.batch(counts, table, self._units[i], self._l[i],
                                       nominal_rows, self._t)[nominal_back] \
                    + log_t[:, self._gaussian_rows[j]]
            else:
                jll = self._tree.batch(counts, table, self._units[i], self._l[i], distinct,
                                       self._t)[back]
            p = np.exp(jll - jll.max(axis=1, keepdims=True))
            out[:, j] = p / p.sum(axis=1, keepdims=True)
        return out

    @property
    def classes_(self) -> tuple:
        """The labels in ``classes_`` order (:mod:`onlinebma.labels`)."""
        return ordered_labels(self.counts.classes_)

    def _gaussian_batch(self, X, n_classes: int) -> np.ndarray:
        """``log t_c`` of every row of a validated DataFrame, ``(rows, Gaussian members,
        K)``."""
        from ..records import numeric_values

        gaussian = self._gaussian
        features = gaussian.features or []
        columns = np.full((len(X), len(features)), np.nan)
        for j, f in enumerate(features):
            if f in X.columns:
                columns[:, j] = numeric_values(X[f])
        out = np.zeros((len(X), len(self._gaussian_members), n_classes))
        for n, row in enumerate(columns):
            present = ~np.isnan(row)
            if present.any():
                out[n] = gaussian.log_densities(row, n_classes)
        return out

    # ----------------------------------------------------------------- learning

    def learn_one(self, x: dict, y) -> None:
        last = self._last
        if (last is not None and last[0] is x and last[1] == x) or len(self.members) > 1:
            # the prediction of this very record, or the members' probabilities the
            # weights need; validates x (once labels exist)
            probas, memo, reading, split = self._predict(x)
        else:
            probas = memo = reading = split = None
        check_label(y)
        if reading is None:
            split = self.coding.kinds.split(x) if split is None else split
        for f, v in split[0]:  # a learned square must stay finite (stats.gaussian)
            if not -MAX_ABS_VALUE <= v <= MAX_ABS_VALUE:
                check_magnitude(f, v)
        # validated: nothing fails after
        self._last = None
        counts = self.counts
        if reading is None:
            codes, values, grew, nominal = self.coding.code_for_learning(split)
            columns = counts.record_columns(codes, values)
        else:  # coded by the prediction, every value known: nothing new
            codes, values, columns = reading
            grew = False
        k = counts.n_classes
        c = counts.add_class(y)
        known = c < k
        grew = grew or not known
        self._learn(c, codes, columns, None if grew else memo)
        counts.add(c, columns, self._units)
        if self._gaussian is not None:
            self._gaussian.learn(split[0], c, counts.n_classes)
        if self._forests is not None:
            nominal_codes, nominal_values, _, _ = self._nominal_part(codes, values, columns)
            grew = self._forests.learn(
                c, nominal_codes, nominal_values, split[0], counts.n_classes,
                counts.n_features, int(counts.n_values.max(initial=1))) or grew
        if reading is None:
            width = self.coding.keep_pending(split, c, nominal, self._clock())
            self._after_fixing(width)
            grew = width is not None or grew
        self._t += 1
        self._tick()
        if grew:
            self._refresh(only_remembering=True)
        if self._reweighs:
            self._reweigh(probas[:, c].tolist() if known else None)

    def _learn(self, c: int, codes, columns, memo) -> None:
        """Every member's ``l <- α (l + log Q_c(x))`` before the record of class code ``c``
        is counted (``log Q`` from the prediction's ``memo``, else from the counts)."""
        counts = self.counts
        r = len(self.rates)
        self._widen()
        ids, prior = self._tree.plan(counts, codes, counts.n_classes)
        if memo is None:
            rows = counts.gather(columns)[:, c:c + 1]
            log_q = self._tree.record(len(codes), rows, prior, self._units[:, None])[1][:, 0]
        else:
            log_q = memo[:, c]
        # self._l[:, ids] += log_q, as a take and a put of the flat positions (cheaper)
        width = self._l.shape[1]
        flat = self._flat.get(ids.tobytes()) if self._flat_pairs == width else None
        if flat is None:
            if self._flat_pairs != width or len(self._flat) * r * len(ids) > tuning.FLAT_CELLS:
                self._flat, self._flat_pairs = {}, width
            flat = self._flat[ids.tobytes()] = (np.arange(r)[:, None] * width + ids).ravel()
        self._l.put(flat, self._l.take(flat) + log_q.ravel())
        if self.structure_decay != 1:
            self._l *= self.structure_decay

    def _widen(self) -> None:
        """Give the pairs of new features their ``l``, 0 (no counts yet)."""
        r, width = self._l.shape
        if width < self.counts.n_pairs:
            self._l = np.concatenate([self._l, np.zeros((r, self.counts.n_pairs - width))], 1)

    def _tick(self) -> None:
        """Each member's counts times its rate, through its scaled unit; a member's counts
        are renormalised before its unit passes 2^128."""
        for i, rate in enumerate(self.rates):
            if rate == 1:
                continue
            k = self._k[i] + 1
            unit = rate ** -k
            if unit > RENORMALISE_ABOVE:
                self.counts.scale(rate ** k, i)
                k, unit = 0, 1.0
            self._k[i] = k
            self._units[i] = unit

    def _replay_weight(self, age: int) -> np.ndarray:
        """Each member's weight of a record ``age`` records before the one whose weight is
        its unit (the record being learned, or the next one), in its current unit."""
        return self._units * np.array(self.rates) ** age

    def _after_fixing(self, width) -> None:
        """Cut points were fixed and kept records replayed (new features from pair ``width``
        on; nothing when ``width`` is ``None``): ``l = log W`` for the members that do not
        forget; a member that forgets gets ``log W`` of its decayed counts for the new pairs
        only (:mod:`onlinebma.tan.numbers`: its recursion over the records before cannot be
        replayed)."""
        if width is None:
            return
        counts = self.counts
        self._last = None
        self._widen()
        for i, forgets in enumerate(self._forgetting):
            l_i = self._tree.log_weights(counts, counts.member_table(i), self._units[i])
            if forgets:
                self._l[i, width:] = l_i[width:]
            else:
                self._l[i] = l_i

    def fix_numeric(self, readings: dict) -> None:
        """:meth:`RecordCoding.fix_numeric <onlinebma.tan.coding.RecordCoding.fix_numeric>`,
        the last prediction forgotten."""
        self._last = None
        self._after_fixing(self.coding.fix_numeric(readings, self._clock()))
        if self._gaussian is not None:
            self._gaussian.choose(list(readings))
        if self._forests is not None:
            self._forests.choose(list(readings))

    def fix_from_table(self, columns, labels) -> None:
        """Give a validated table's numeric columns without cut points those of the whole
        table, replaying what was kept
        (:meth:`RecordCoding.fix_from_table <onlinebma.tan.coding.RecordCoding.fix_from_table>`).

        Parameters
        ----------
        columns : dict
            The validated table's columns (``prepare_frame``), read, not changed.
        labels : pandas.Series
            One per row: MDL cut points read them.
        """
        self._after_fixing(self.coding.fix_from_table(columns, labels, self._clock()))

    def fix_pending(self) -> None:
        """Fix every feature still without cut points from the values kept for it, and
        replay them (the end of a table)."""
        self._after_fixing(self.coding.fix_pending(self._clock()))

    def _refresh(self, only_remembering: bool = False) -> None:
        """``l = log W`` from the counts for every member (``only_remembering``: for the
        members that do not forget, whose ``l`` is that by definition)."""
        counts = self.counts
        self._last = None
        self._widen()
        if self._forests is not None:
            self._forests.refresh()
        for i, forgets in enumerate(self._forgetting):
            if not (only_remembering and forgets):
                self._l[i] = self._tree.log_weights(counts, counts.member_table(i),
                                                    self._units[i])

    def learn_many(self, X, y) -> None:
        """Learn a DataFrame and its labels. The whole batch is validated before anything
        changes, and the table's numeric columns without cut points get them from the table
        first (:meth:`~onlinebma.tan.coding.RecordCoding.fix_from_table`: a sample of the
        whole column). Then

        - one member that forgets nothing: every row counted at once (one ``bincount`` per
          block of rows);
        - several members (or a Gaussian one) that forget nothing: :meth:`_learn_stacked`,
          the counts and Gaussian statistics of the whole table added at once and the
          members' weights set to the table's stacking weights (:mod:`.stacking`), which do
          not depend on the order of the rows;
        - a member that forgets: row by row in order, as ``learn_one`` on each row (the
          weights and the counts move with every record).

        The counts and statistics of a table learned in parts after the same cut points were
        agreed equal those of it learned at once; the stacking weights are those of the last
        table learned (the records before it are in every fold's training state), so a table
        is learned at once, in memory or with :func:`onlinebma.distributed.fit` (whose plan,
        :class:`~onlinebma.tan.merging.StackingPlan`, gives the weights of the whole frame)."""
        columns, new, labels = prepare_frame(self.coding.kinds, X, y)
        with uninterrupted():  # Ctrl-C waits for the whole batch
            if self.forgets:
                self.fix_from_table(columns, labels)
                for x, label in zip(records_of(columns, len(labels)), labels):
                    self.learn_one(x, label)
                self.fix_pending()  # the end of the table ends its numeric samples
                return
            self._last = None
            if len(self.members) > 1:
                self._learn_stacked(X, columns, new, labels)
            elif self._gaussian is not None or self._forests is not None:  # its weight is 1
                self.agree_on_table(columns, new, labels)
                self._count_rows(columns, new, labels)
                self._refresh()
            else:
                self.coding.count_table(columns, new, labels, self._clock())
                self._t += len(labels)
                self._refresh()

    # ------------------------------------------------------ stacking (no forgetting)

    def agree_on_table(self, columns, new, labels) -> None:
        """Fix, before the folds of a validated table are counted, what every fold state
        must share (nothing fails after the table's validation): the table's new feature
        kinds; the cut points of its numeric columns from the table (and of the features
        whose kept records the table ends,
        :meth:`~onlinebma.tan.coding.RecordCoding.fix_pending`); its classes, in order of
        first appearance (a member trained on the other folds knows every class of the
        table, as the cut points' samples make it know them); and, if the Gaussian models
        no feature yet, the features observed in the table's first row with a numeric value
        (those ``learn_one`` on its rows in order would model).

        Parameters
        ----------
        columns : dict
            :func:`~onlinebma.reading.prepare_frame`'s ``columns`` of the table.
        new : dict
            Its ``new_kinds``.
        labels : pandas.Series
            Its labels.
        """
        self.fix_from_table(columns, labels)
        self.fix_pending()
        self.coding.kinds.commit(new)
        for label in factorize(labels)[0]:  # l is refreshed once the folds are added
            self.counts.add_class(label)
        if self._forests is not None:  # the nominal codes too, so that the folds' merge
            self.coding.code_batch(columns, {}, labels)
        numeric = {f: values for f, (kind, values, _) in columns.items() if kind != NOMINAL}
        for gaussian in (self._gaussian, self._forests):
            if gaussian is not None and gaussian.features is None and numeric:
                observed = ~np.isnan(np.column_stack(list(numeric.values())))
                first = observed.any(axis=1).argmax()
                gaussian.choose([f for f, seen in zip(numeric, observed[first]) if seen])

    def _empty_copy(self) -> TreeMemberStack:
        """A stack of the same members that has learned nothing but agrees with this one
        (:meth:`agree_with`)."""
        out = TreeMemberStack(*self._arguments)
        out.agree_with(self)
        return out

    def agree_with(self, other: TreeMemberStack) -> None:
        """Take, before learning anything, what ``other`` (a stack of the same members)
        agreed: its feature kinds, cut points, classes (in its order) and Gaussian
        features, so that the two merge and their Gaussian statistics share a layout.

        Parameters
        ----------
        other : TreeMemberStack
            Read through its public views; left unchanged.
        """
        self.coding.kinds.commit(other.coding.kinds.kind)
        theirs = other.gaussian_statistics
        if self._gaussian is not None and theirs.features is not None:
            self._gaussian.choose(theirs.features)
        self._after_fixing(self.coding.fix_numeric(other.numeric_readings, self._clock()))
        counts = self.counts
        for label in other.counts.classes_:
            counts.add_class(label)
        if self._forests is not None:  # the same nominal codes (the statistics add)
            if other.forest_statistics.features is not None:
                self._forests.choose(other.forest_statistics.features)
            for f, values in zip(other.counts.features_, other.counts.values_):
                u = counts.add_feature(f)
                for value in values:
                    counts.add_value(u, value)

    def fold_states(self, X, labels, offset: int = 0) -> list:
        """One empty copy of this stack (:meth:`_empty_copy`) per fold, each having counted
        the rows of ``X`` in its fold at once (``offset + i`` the position of row ``i`` in
        the whole table).

        Parameters
        ----------
        X : pandas.DataFrame
            Rows validated by ``learn_many`` (after :meth:`agree_on_table`).
        labels : pandas.Series
            Their labels.
        offset : int, default 0
            The position of ``X``'s first row in the table.

        Returns
        -------
        list of TreeMemberStack
            :data:`~onlinebma.tan.stacking.FOLDS` stacks, by fold.
        """
        folds = folds_of(offset + np.arange(len(labels)))
        out = []
        for k in range(FOLDS):
            state = self._empty_copy()
            rows = np.flatnonzero(folds == k)
            if rows.size:
                state.count_table(X.iloc[rows], labels.iloc[rows])
            out.append(state)
        return out

    def count_table(self, X, y) -> None:
        """Validate a table and count it at once (:meth:`_count_rows`): every numeric column
        cut already (:meth:`agree_with`); ``l`` is not refreshed (:meth:`add_records` or
        ``learn_many`` do).

        Parameters
        ----------
        X : pandas.DataFrame
            The rows.
        y : pandas.Series
            Their labels.
        """
        self._count_rows(*prepare_frame(self.coding.kinds, X, y))

    def _count_rows(self, columns, new, labels) -> None:
        """Count a validated table at once, every numeric column cut already (or not cut by
        this stack): its counts and its Gaussian statistics; no ``l`` refreshed."""
        matrix, classes = self.coding.code_batch(columns, new, labels)
        self.counts.learn_many(matrix, classes)
        if self._gaussian is not None and self._gaussian.features is not None:
            numeric = np.full((len(labels), len(self._gaussian.features)), np.nan)
            for j, f in enumerate(self._gaussian.features):
                if f in columns and columns[f][0] != NOMINAL:
                    numeric[:, j] = columns[f][1]
            self._gaussian.learn_many(numeric, classes, self.counts.n_classes)
        forests = self._forests
        if forests is not None and forests.features is not None:
            numeric = np.full((len(labels), len(forests.features)), np.nan)
            for j, f in enumerate(forests.features):
                if f in columns and columns[f][0] != NOMINAL:
                    numeric[:, j] = columns[f][1]
            nominal = matrix.copy()
            cut = self.coding.numeric_reading.readings
            nominal[:, [self.counts.feature_code(f) for f in cut]] = -1
            forests.learn_table(nominal, numeric, classes, self.counts.n_classes,
                                int(self.counts.n_values.max(initial=1)))
        self._t += len(labels)

    def complements(self, folds: list) -> StackComplements:
        """Each fold's complement: this stack merged with every other fold's state.

        Parameters
        ----------
        folds : list of TreeMemberStack
            :meth:`fold_states` of a table (merged across its parts), by fold.

        Returns
        -------
        StackComplements
        """
        out = []
        for k in range(len(folds)):
            state = copy.deepcopy(self)
            state.add_records([other for j, other in enumerate(folds) if j != k])
            out.append(state)
        return StackComplements(out)

    def add_records(self, others) -> None:
        """Add other stacks' records (counts and Gaussian statistics, exactly), then ``l``
        from the counts; the weights are left as they are (:meth:`merge` checks them).

        Parameters
        ----------
        others : iterable of TreeMemberStack
            Stacks of the same members that forget nothing, with this stack's cut points
            where both have them; left unchanged.
        """
        counts = self.counts
        for other in others:
            if self._forests is not None:
                self._check_forest_codes(other)
            self._after_fixing(self.coding.merge(other.coding, self._clock()))
            self._t += other.records_learned
            if self._forests is not None:
                self._forests.merge(other.forest_statistics)
            if self._gaussian is not None:
                self._gaussian.merge(other.gaussian_statistics,
                                     [counts.class_code(c) for c in other.counts.classes_])
        self._refresh()

    def _check_forest_codes(self, other: TreeMemberStack) -> None:
        """Refuse, naming the problem, to add a stack whose classes, nominal features or
        values are coded otherwise (the Gaussian forest statistics are laid out by code)."""
        mine, theirs = self.counts, other.counts

        def agree(a, b) -> bool:  # one a prefix of the other: RecordCoding.merge appends the rest
            n = min(len(a), len(b))
            return list(a)[:n] == list(b)[:n]

        same = (agree(theirs.classes_, mine.classes_) and agree(theirs.features_, mine.features_)
                and all(agree(v, w) for v, w in zip(theirs.values_, mine.values_)))
        if not same:
            raise ValueError(
                "cannot merge Gaussian forest members whose classes, nominal features or "
                "values were first seen in different orders (their statistics are laid out "
                "by code); learn the union with learn_many")

    # ------------------------------------------------------------------ reading

    def edge_posteriors(self) -> dict:
        """Every count row's edge posteriors, averaged with the weights of the interval
        members (renormalised; every member's when all are Gaussian): the structure posterior
        given the interval representation of the numbers."""
        sums, mass = self.edge_posterior_sums(np.exp(self.log_weights))
        return {e: p / mass for e, p in sums.items()}

    def edge_posterior_sums(self, member_weights) -> tuple:
        """``({edge: Σ_m w_m P_m(edge)}, Σ_m w_m)`` over the interval members ``m`` (every
        member when all are Gaussian), ``P_m`` the edge posterior of ``m``'s count row.

        Parameters
        ----------
        member_weights : sequence of float
            A non-negative weight per member (not necessarily normalised).

        Returns
        -------
        tuple
        """
        counts = self.counts
        intervals = [i for i, m in enumerate(self.members) if m.predictive == STRUCTURES
                     and m.representation not in (*GAUSSIANS, GAUSSIAN_FORESTS)]
        chosen = intervals or range(len(self.members))
        weights = np.zeros(len(self.rates))
        for i in chosen:
            weights[self._rows[i]] += member_weights[i]
        out: dict = {}
        for w, l_r in zip(weights, self._l):
            for e, p in self._tree.edge_posteriors(counts, l_r, counts.n_classes).items():
                out[e] = out.get(e, 0.0) + w * p
        return out, float(weights.sum())


class StackComplements:
    """The complement of every fold of a table (:meth:`TreeMemberStack.complements`): fold
    ``k``'s is the stack that learned every row of the table outside fold ``k``, after what
    the stack had learned before the table.

    Parameters
    ----------
    states : list of TreeMemberStack
        By fold, each with ``l`` refreshed from its counts.
    """

    def __init__(self, states):
        self.states = list(states)

    def cross_validated_probabilities(self, X, labels, offset: int = 0) -> np.ndarray:
        """Each row's probability of its label under each member of its fold's complement.

        Parameters
        ----------
        X : pandas.DataFrame
            Rows of the table (validated).
        labels : pandas.Series
            Their labels, every one a class of the complements (:meth:`TreeMemberStack.
            agree_on_table` gives them every class of the table).
        offset : int, default 0
            The position of ``X``'s first row in the table (its rows' folds).

        Returns
        -------
        np.ndarray
            ``(rows, members)``.
        """
        folds = folds_of(offset + np.arange(len(labels)))
        out = np.zeros((len(labels), len(self.states[0].members)))
        for k, state in enumerate(self.states):
            rows = np.flatnonzero(folds == k)
            if not rows.size:
                continue
            p = state.member_probabilities(X.iloc[rows])
            codes = np.array([state.counts.class_code(label) for label in labels.iloc[rows]])
            out[rows] = p[np.arange(rows.size), :, codes]
        return out
