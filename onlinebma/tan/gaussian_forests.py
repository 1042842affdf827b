"""The Gaussian forest representation of numeric features in
:class:`~onlinebma.tan.ModelAveragedTAN`: the exact average over every forest- (tree-)
augmented structure of nominal and numeric features.

A Gaussian forest member of the stack (:class:`~onlinebma.tan.members.TreeMemberStack`)
averages over the structures in which the class parents every feature and each feature has
at most one feature parent (:mod:`onlinebma.stats.mixed_forests`, the maths): two nominal
features by the Dirichlet pair families of the stack's counts, two numeric ones by the
margins of one Normal–Wishart prior per class (the BGe score, Geiger & Heckerman 2002, eq.
(18)–(20); score-equivalent, so the edge weight is symmetric), a nominal parent of a numeric
child by one Gaussian per parent value, never a numeric parent of a nominal child. Per class
``c`` and record ``x``::

    log P(c, x | D) = base_c + F(l + log Q_c(x)) - F(l)

with ``F`` the log sum over directed forests (trees) by Tutte's directed matrix-tree theorem
(:mod:`onlinebma.stats.directed_forests`). Learning is ``l <- alpha (l + log Q_y(x))`` with the
statistics before the record (:func:`onlinebma.stats.mixed_forests.learned_weights`), then the
statistics forget by the member's rate and add the record.

What is shared and what is this module's:

- the nominal part (class and nominal singles and pairs, and the nominal pairs' ``l``) is the
  stack's counts and edge weights at the member's rate, exactly those of
  :class:`~onlinebma.tan.mixed_statistics.MixedStatistics` (the same
  :class:`~onlinebma.tan.tree_terms.TreeTerms`), so a record is coded once;
- :class:`GaussianForestStatistics` keeps, per rate, the numeric features' pairwise
  Normal–Wishart statistics per class and their moments per class, nominal feature code and
  value code (the stack's codes), and the ``l`` of numeric–numeric and nominal→numeric
  edges.

**Classes, features and values appearing online** are grown, not rebuilt: a new class, nominal
feature or value is an empty statistic (axis lengthened with zeros,
:meth:`~onlinebma.stats.normal_wishart.PairStatistics.grow`), whose edge weight is 0 (an
empty family has marginal likelihood 1 under either structure); its first record's ``log Q``
is read from the prior, so the chain rule ``l += log Q_y(x)`` stays exact. As in the stack, a
member that forgets nothing sets ``l`` to its closed form from the statistics after growing
(the same value up to rounding). A value unseen before is ignored when predicting (as the
stack does: it is an unknown value).

**Forgetting** is the counts' (docs/tan.md, *Forgetting*): after each record every statistic
of a member is multiplied by its rate λ, so that after records ``1..t`` record ``i`` weighs
``λ^(t - i + 1)`` in the nominal and the numeric families alike. The Normal–Wishart
statistics forget *before* adding (:mod:`onlinebma.stats.normal_wishart`), so the record is
added with weight λ: ``λ S + λ x = λ (S + x)``. (The Gaussian member,
:mod:`onlinebma.tan.gaussian`, adds with weight 1: its last record weighs 1, its counts' λ.)

**Which numeric features** and **missing values**: as the Gaussian member
(:mod:`onlinebma.tan.gaussian`): the features observed in the first record with a numeric
value; a missing value (NaN, or a feature not modelled) leaves its pairs unlearned
(pairwise-complete, :class:`~onlinebma.tan.mixed_statistics.MixedStatistics`' meaning) and a
record is predicted by the structures of its observed features.
"""

from __future__ import annotations

import numpy as np

from ..stats.mixed_forests import log_joint_scores
from ..stats.normal_wishart import (
    MomentStatistics,
    NormalWishartPrior,
    PairStatistics,
    nominal_parent_log_weights,
)
from .gaussian import NumericFeatures

__all__ = ["GAUSSIAN_FORESTS", "GaussianForestStatistics"]

# Rows added at once by learn_table (its weights are rows x rates x classes x codes x values).
_BLOCK = 256

#: The name of the Gaussian forest representation
#: (``ModelAveragedTAN(numeric=GAUSSIAN_FORESTS)``).
GAUSSIAN_FORESTS = "Gaussian forests"


class GaussianForestStatistics(NumericFeatures):
    """The numeric statistics and edge weights of the Gaussian forest members, one row per
    forgetting rate (module docstring).

    Parameters
    ----------
    rates : tuple of float
        The forgetting rate of each row.
    structure_decay : float
        ``alpha``: ``l`` is multiplied by it after each record.

    Attributes
    ----------
    features : list or None
        The numeric features modelled (``None`` until the first record with a numeric value).

    Examples
    --------
    >>> s = GaussianForestStatistics((1.0,), 1.0)
    >>> s.learn(0, [], [], [("x", 1.0), ("z", 2.0)], n_classes=1, n_codes=0, top=1)
    False
    >>> s.features, s.numeric_log_weights.shape
    (['x', 'z'], (1, 2, 2))
    """

    def __init__(self, rates, structure_decay: float):
        super().__init__(rates)
        self.structure_decay = structure_decay
        self._forgetting = [rate != 1 or structure_decay != 1 for rate in self.rates]
        self._prior = self._pairs = self._cells = None
        self._l_numeric = self._l_nominal = None  # (R, D, D), (R, codes, D)

    def _start(self) -> None:
        d, rates = len(self.features), np.array(self.rates)
        self._prior = NormalWishartPrior(d)
        self._pairs = PairStatistics(d, shape=(len(rates), 1), decay=rates[:, None])
        self._cells = MomentStatistics(d, shape=(len(rates), 1, 1, 1),
                                       decay=rates[:, None, None, None])
        self._l_numeric = np.zeros((len(rates), d, d))
        self._l_nominal = np.zeros((len(rates), 1, d))

    @property
    def numeric_log_weights(self) -> np.ndarray:
        """``l`` of the numeric–numeric edges ``(R, D, D)`` (a copy)."""
        return self._l_numeric.copy()

    def grow(self, n_classes: int, n_codes: int, top: int) -> bool:
        """Lengthen the class, nominal feature code and value code axes (module docstring);
        whether anything grew."""
        if self._pairs is None:
            return False
        cells = self._cells
        grew = False
        for axis, size in ((1, n_classes), (2, max(n_codes, 1)), (3, max(top, 1))):
            if cells.shape[axis] < size:
                cells.grow(axis, size)
                grew = True
        if self._pairs.shape[1] < n_classes:
            self._pairs.grow(1, n_classes)
        extra = cells.shape[2] - self._l_nominal.shape[1]
        if extra:
            self._l_nominal = np.pad(self._l_nominal, ((0, 0), (0, extra), (0, 0)))
        return grew

    def _record_blocks(self, codes, values, z):
        """``(singles, q_nominal, q_numeric)`` of a record's modelled numeric values ``z``
        and observed nominal ``(codes, values)``: ``sum_v log p_c(x_v)`` ``(R, K)``,
        ``log Q_c(x)(u -> v)`` of its nominal parents ``(R, K, S, D)`` and of its numeric
        pairs ``(R, K, D, D)`` (0 where a value is missing)."""
        prior = self._prior
        singles = self._pairs.log_predictive_singles(prior, z).sum(axis=-1)
        q_numeric = self._pairs.log_q(prior, z)
        cond = self._cells.log_predictive(prior, z)[:, :, codes, values]
        pooled = self._cells.pooled(-1).log_predictive(prior, z)[:, :, codes]
        return singles, cond - pooled, q_numeric

    def joint(self, codes, values, numeric, base, l_pairs, q_pairs, log_edge_prior: float,
              structures: str) -> np.ndarray:
        """Every row's ``log P(c, x | D)`` ``(R, K)`` of a record (up to a constant per row).

        Parameters
        ----------
        codes, values : np.ndarray
            The record's observed nominal feature codes (increasing) and value codes.
        numeric : list
            Its validated ``(feature, value)`` numeric pairs.
        base : np.ndarray
            ``(R, K)``: the class and nominal single terms (the stack's counts).
        l_pairs, q_pairs : np.ndarray
            ``(R, P)`` and ``(R, K, P)``: ``l`` and ``log Q_c(x)`` of the nominal pairs in
            triu order of ``codes``.
        log_edge_prior : float
            ``log beta`` per feature–feature edge (forests).
        structures : str
            ``"forests"`` or ``"trees"``.
        """
        z = self.vector(numeric)
        s = len(codes)
        if z is None:
            seen = np.zeros(0, dtype=np.int64)
        else:
            seen = np.flatnonzero(~np.isnan(z))
        n, r, k = s + len(seen), base.shape[0], base.shape[1]
        if n < 2:  # no edge: naive Bayes
            return base + (self._record_blocks(codes, values, z)[0] if len(seen) else 0.0)
        lw = np.zeros((r, n, n))
        lq = np.zeros((r, k, n, n))
        u, v = np.triu_indices(s, 1)
        lw[:, u, v] = lw[:, v, u] = l_pairs
        lq[:, :, u, v] = lq[:, :, v, u] = q_pairs
        if len(seen):
            singles, q_nominal, q_numeric = self._record_blocks(codes, values, z)
            base = base + singles
            lw[:, s:, :s] = -np.inf
            lw[:, :s, s:] = self._l_nominal[:, codes][:, :, seen]
            lw[:, s:, s:] = self._l_numeric[:, seen][:, :, seen]
            lq[:, :, :s, s:] = q_nominal[..., seen]
            lq[:, :, s:, s:] = q_numeric[:, :, seen][..., seen]
        return log_joint_scores(lw, base, lq, log_edge_prior, structures)

    def learn(self, c: int, codes, values, numeric, n_classes: int, n_codes: int,
              top: int) -> bool:
        """``l <- alpha (l + log Q_c(x))`` from the statistics before the record, then each
        row forgets by its rate and adds the record of class code ``c`` (nominal ``(codes,
        values)``, validated numeric pairs); ``n_codes`` and ``top`` the stack's number of
        feature codes and largest number of values. Whether a class, feature or value grew
        the statistics (then the caller refreshes the rows that forget nothing,
        :meth:`refresh`)."""
        if self.features is None:
            self.choose([f for f, _ in numeric])
            if self.features is None:
                return False
        grew = self.grow(n_classes, n_codes, top)
        z = self.vector(numeric)
        codes = np.asarray(codes, dtype=np.int64)
        values = np.asarray(values, dtype=np.int64)
        if z is None:  # no modelled value: log Q is 0, only the forgetting
            z = np.full(len(self.features), np.nan)
        else:
            _, q_nominal, q_numeric = self._record_blocks(codes, values, z)
            self._l_nominal[:, codes] += q_nominal[:, c]
            self._l_numeric += q_numeric[:, c]
        if self.structure_decay != 1:
            self._l_nominal *= self.structure_decay
            self._l_numeric *= self.structure_decay
        # the counts' forgetting (times the rate after each record) on statistics that
        # forget before adding: the record added with weight λ (module docstring)
        rates = np.array(self.rates)
        weight = np.zeros(self._pairs.shape)
        weight[:, c] = rates
        self._pairs.add(z, weight)
        cells = np.zeros(self._cells.shape)
        cells[:, c, codes, values] = rates[:, None]
        self._cells.add(z, cells)
        return grew

    def learn_table(self, nominal, numeric, classes, n_classes: int, top: int) -> None:
        """Add a table's records at once (statistics that forget nothing; ``l`` is left to
        :meth:`refresh`): equal to :meth:`learn`'s statistics on each row.

        Parameters
        ----------
        nominal : np.ndarray
            ``(rows, codes)``: each row's value code of every feature code, -1 where missing
            or not nominal.
        numeric : np.ndarray
            ``(rows, features)``: the modelled features' values, NaN where missing.
        classes : np.ndarray
            Each row's class code.
        n_classes : int
            The number of classes known.
        top : int
            The largest number of values of a feature.
        """
        if any(rate != 1 for rate in self.rates):
            raise ValueError("learn_table adds records to statistics that forget nothing")
        self.grow(n_classes, nominal.shape[1], top)
        r = len(self.rates)
        for start in range(0, len(classes), _BLOCK):
            rows = np.arange(start, min(start + _BLOCK, len(classes)))
            weights = np.zeros((len(rows),) + self._pairs.shape)
            weights[np.arange(len(rows)), :, classes[rows]] = 1.0
            self._pairs.add_many(numeric[rows], weights)
            cells = np.zeros((len(rows),) + self._cells.shape)
            row, u = np.nonzero(nominal[rows] >= 0)
            for i in range(r):
                cells[row, i, classes[rows][row], u, nominal[rows][row, u]] = 1.0
            self._cells.add_many(numeric[rows], cells)

    def merge(self, other: GaussianForestStatistics) -> None:
        """Add ``other``'s statistics (the same features, class codes and nominal codes,
        checked by the caller; ``l`` is left to :meth:`refresh`)."""
        if other.features is None:
            return
        if self.features is None:
            self.choose(other.features)
        elif self.features != other.features:
            raise ValueError(f"cannot merge: the Gaussian forest members model the numeric "
                             f"features {self.features} and {other.features}")
        theirs_pairs, theirs_cells = other._pairs.copy(), other._cells.copy()
        shape = np.maximum(self._cells.shape, theirs_cells.shape)
        self.grow(*shape[1:])
        for axis in (1, 2, 3):
            theirs_cells.grow(axis, shape[axis])
        theirs_pairs.grow(1, shape[1])
        self._pairs.merge(theirs_pairs)
        self._cells.merge(theirs_cells)

    def refresh(self) -> None:
        """``l`` of the rows that forget nothing from the statistics in closed form
        (``sum_c [log ML_c(v | u) - log ML_c(v)]``, as
        :meth:`~onlinebma.tan.mixed_statistics.MixedStatistics.log_weights`)."""
        if self._pairs is None:
            return
        rows = [i for i, forgets in enumerate(self._forgetting) if not forgets]
        if rows:
            self._l_numeric[rows] = self._pairs.edge_log_weights(self._prior)[rows].sum(axis=1)
            self._l_nominal[rows] = nominal_parent_log_weights(
                self._cells, self._prior)[rows].sum(axis=1)
