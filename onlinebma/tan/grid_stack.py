"""Members over several interval grids in one state: :class:`GridStack`.

A :class:`~onlinebma.tan.members.TreeMemberStack` holds the members of one interval
representation (one :class:`~onlinebma.tan.coding.RecordCoding`: its cut points, its
records kept before them and their replay, its pair counts with a row per rate, its ``l``,
units and clocks) beside the Gaussian members, which read the nominal features from its
counts. ``ModelAveragedTAN(numeric=("3 intervals", "16 intervals", "MDL", "Gaussian"))``
averages members of several grids: :class:`GridStack` holds one such stack per grid (the
Gaussian and Gaussian forest members in the first grid's), and the weights over all its
members:

- **Streams**: every member's class probabilities of the record (each grid's stack computes
  its own members', the record's prediction kept for learning it), mixed with the weights;
  learning the record, each grid's stack learns it, and the weights follow the one
  dynamic-model-averaging recursion over every (rate, representation) member
  (:class:`~onlinebma.forgetting.RateWeights`): ``log π_m += log max(p_m(y | x), 1e-300)``
  for a label seen before, then ``π ∝ π^β``, averaged over β.
- **Tables** at ``decay=1``: stacking weights (:mod:`onlinebma.tan.stacking`) of every
  member's cross-validated probabilities, each grid's stack counting its folds
  (:meth:`~onlinebma.tan.members.WeightedMembers.finish_stacked`), so that
  :class:`~onlinebma.tan.merging.StackingPlan` trains it on Dask as it trains
  ``numeric="auto"``.

The weights are the GridStack's: each grid's stack is made ``weighed_outside`` and leaves
its own at equal. The grids fix their cut points at the same record (one ``sample_size``),
each from the same sample; ``numeric_readings`` gives a tuple of Grids per feature, one per
grid, which :meth:`GridStack.fix_numeric` takes back (``tests/test_tan_grids.py`` checks the
whole against separate single-representation learners and the recursions written out).

Each grid's stack validates and codes the record on its own: one reading per grid, not one
for all (a shared reading of the nominal features is left to do).
"""

from __future__ import annotations

import copy
import math

import numpy as np

from ..forgetting import RateWeights
from ..numeric import Grids
from ..numeric.sample import ColumnSample
from ..reading import prepare_frame, records_of, uninterrupted
from ..records import check_label
from .gaussian import GAUSSIANS
from .gaussian_forests import GAUSSIAN_FORESTS
from .members import TreeMemberStack, WeightedMembers

__all__ = ["GridComplements", "GridStack", "interval_representations"]


def interval_representations(members) -> list:
    """The interval representations of ``members`` (:class:`~onlinebma.tan.members.Member`),
    in order of first appearance."""
    return list(dict.fromkeys(m.representation for m in members
                              if m.representation not in (*GAUSSIANS, GAUSSIAN_FORESTS)))


class GridStack(WeightedMembers, RateWeights):
    """The members of several interval grids (and Gaussian ones) as one state (module
    docstring).

    Parameters
    ----------
    structures : str
        ``"forests"`` or ``"trees"``.
    ess : float
        Equivalent sample size of the joint Dirichlet prior.
    edge_prior : float
        Prior weight of each feature–feature edge (forests).
    structure_decay : float
        α: every member's ``l`` is multiplied by α after each record.
    nominal_attributes : list or None
        Features to treat as nominal even though their values are numbers.
    sample_size : int
        Values of a numeric feature its cut points are fixed from, in every grid.
    members : sequence of Member
        At least two interval representations among them.
    numeric_attributes : list or None, default None
        Features that are numeric whatever their first value.

    Attributes
    ----------
    parts : list of TreeMemberStack
        One per interval representation, in order of first appearance in ``members``.

    Examples
    --------
    >>> from onlinebma.tan.members import Member
    >>> stack = GridStack("forests", 10.0, 1.0, 1.0, None, 5,
    ...                   [Member(1.0, "3 intervals"), Member(1.0, "MDL")])
    >>> for t in range(12):
    ...     stack.learn_one({"x": float(t), "c": "ab"[t % 2]}, t < 6)
    >>> sorted(stack.numeric_readings["x"][0].members), len(stack.parts)
    (['3 intervals'], 2)
    >>> round(sum(stack.predict_proba_one({"x": 2.0}).values()), 12)
    1.0
    """

    def __init__(self, structures: str, ess: float, edge_prior: float,
                 structure_decay: float, nominal_attributes: list | None, sample_size: int,
                 members, numeric_attributes: list | None = None):
        self.members = tuple(members)
        grids = interval_representations(self.members)
        if len(grids) < 2:
            raise ValueError(f"a GridStack averages at least two interval representations, "
                             f"got {grids}: use a TreeMemberStack")
        # the members of each grid's stack: its own, and the Gaussian ones in the first
        groups = [[i for i, m in enumerate(self.members)
                   if m.representation == grid
                   or (j == 0 and m.representation in (*GAUSSIANS, GAUSSIAN_FORESTS))]
                  for j, grid in enumerate(grids)]
        self.parts = [TreeMemberStack(structures, ess, edge_prior, structure_decay,
                                      nominal_attributes, sample_size,
                                      [self.members[i] for i in group], numeric_attributes,
                                      weighed_outside=True)
                      for group in groups]
        self._groups = groups
        # the column, in the parts' members laid end to end, of each member
        self._position = np.argsort([i for group in groups for i in group])
        self.rates = self.parts[0].rates
        self.log_weights = [-math.log(len(self.members))] * len(self.members)

    def _in_member_order(self, per_part) -> np.ndarray:
        """The parts' per-member rows laid end to end, in the order of ``members``."""
        return np.concatenate(per_part).take(self._position, axis=0)

    def _with_parts(self, parts) -> GridStack:
        """A stack of the same members over these parts, with equal weights."""
        out = copy.copy(self)
        out.parts = parts
        out.log_weights = [-math.log(len(self.members))] * len(self.members)
        return out

    # ------------------------------------------------------------------ readers

    @property
    def forgets(self) -> bool:
        """Whether any member forgets (a rate or ``structure_decay`` below 1)."""
        return self.parts[0].forgets

    @property
    def counts(self):
        """The first grid's counts (:attr:`TreeMemberStack.counts
        <onlinebma.tan.members.TreeMemberStack.counts>`; every grid codes the classes and
        nominal values alike)."""
        return self.parts[0].counts

    @property
    def edge_log_weights(self) -> np.ndarray:
        """The first grid's ``l`` by rate and pair id, a copy."""
        return self.parts[0].edge_log_weights

    @property
    def gaussian_statistics(self):
        """The Gaussian members' statistics (in the first grid's stack), or ``None``."""
        return self.parts[0].gaussian_statistics

    @property
    def forest_statistics(self):
        """The Gaussian forest members' statistics (in the first grid's stack), or ``None``."""
        return self.parts[0].forest_statistics

    @property
    def classes_(self) -> tuple:
        """The labels in ``classes_`` order (:mod:`onlinebma.labels`)."""
        return self.parts[0].classes_

    @property
    def numeric_readings(self) -> dict:
        """``{feature: (Grids, ...)}``: the cut points of every numeric feature that has them
        in every grid, one :class:`~onlinebma.numeric.Grids` per grid in the order of
        :attr:`parts` (:meth:`fix_numeric` takes them back)."""
        readings = [part.numeric_readings for part in self.parts]
        return {f: tuple(r[f] for r in readings) for f in readings[0]
                if all(f in r for r in readings)}

    def edge_posteriors(self) -> dict:
        """The edge posteriors of every grid's count rows, averaged with the weights of the
        interval members (renormalised)."""
        weights = np.exp(self.log_weights)
        out: dict = {}
        total = 0.0
        for part, group in zip(self.parts, self._groups):
            sums, mass = part.edge_posterior_sums(weights[group])
            total += mass
            for e, p in sums.items():
                out[e] = out.get(e, 0.0) + p
        return {e: p / total for e, p in out.items()}

    # --------------------------------------------------------------- predicting

    def member_predictions(self, x: dict):
        """Every member's class probabilities of ``x``; validates ``x``.

        Parameters
        ----------
        x : dict
            A record, ``{feature: value}``.

        Returns
        -------
        numpy.ndarray or None
            ``(members, K)``: ``K`` probabilities per member (in the order of ``members``),
            or ``None`` before the first label.
        """
        per_part = [part.member_predictions(x) for part in self.parts]
        return None if per_part[0] is None else self._in_member_order(per_part)

    def member_probabilities(self, X) -> np.ndarray:
        """Every member's class probabilities of a DataFrame's rows, ``(rows, members,
        classes)`` (each grid's :meth:`TreeMemberStack.member_probabilities
        <onlinebma.tan.members.TreeMemberStack.member_probabilities>`). Needs a class.

        Parameters
        ----------
        X : pandas.DataFrame
            Records, one per row; a missing value is NaN or None.

        Returns
        -------
        np.ndarray
            ``(rows, members, classes)``, the members in the stack's order.
        """
        p = np.concatenate([part.member_probabilities(X) for part in self.parts], axis=1)
        return p[:, self._position]

    # ----------------------------------------------------------------- learning

    def learn_one(self, x: dict, y) -> None:
        """Every grid's stack learns ``(x, y)``; the weights follow the recursion."""
        probas = self.member_predictions(x)  # validates x once labels exist
        check_label(y)
        c = self.counts.class_code(y)
        # the first grid validates everything before it changes; the others read alike
        for part in self.parts:
            part.learn_one(x, y)
        self._reweigh(probas[:, c].tolist() if probas is not None and c >= 0 else None)

    def learn_many(self, X, y) -> None:
        """Learn a DataFrame and its labels, validated whole first: at ``decay=1`` every
        grid counts the table at once and the weights are its stacking weights
        (:meth:`~onlinebma.tan.members.WeightedMembers._learn_stacked`); a learner that
        forgets learns it row by row, as ``learn_one`` on each row, after every grid took
        the table's cut points."""
        columns, new, labels = prepare_frame(self.parts[0].coding.kinds, X, y)
        with uninterrupted():  # Ctrl-C waits for the whole batch
            if self.forgets:
                for part in self.parts:
                    part.fix_from_table(columns, labels)
                for x, label in zip(records_of(columns, len(labels)), labels):
                    self.learn_one(x, label)
                for part in self.parts:
                    part.fix_pending()
                return
            self._learn_stacked(X, columns, new, labels)

    def fix_numeric(self, readings: dict) -> None:
        """Fix numeric features' cut points now, in every grid (each replays what it kept).

        Parameters
        ----------
        readings : dict
            ``{feature: reading}``, a reading being a
            :class:`~onlinebma.numeric.sample.ColumnSample` (every grid cuts it as
            ``learn_many`` would), a :class:`~onlinebma.numeric.Grids` (given to every grid
            whose representation it holds) or a tuple of them (:attr:`numeric_readings`).

        Raises
        ------
        ValueError
            If a Grids holds no grid's representation, or a grid refuses its cut points
            (:meth:`TreeMemberStack.fix_numeric
            <onlinebma.tan.members.TreeMemberStack.fix_numeric>`); nothing is changed then.
        """
        names = [part.coding.numeric_reading.representation for part in self.parts]
        routed = [{} for _ in self.parts]
        for f, reading in readings.items():
            one_reading = isinstance(reading, (Grids, ColumnSample)) \
                or not isinstance(reading, tuple)  # a ColumnSample is a tuple too
            given = (reading,) if one_reading else reading
            for one in given:
                if not isinstance(one, Grids):
                    for mine in routed:
                        mine[f] = one
                    continue
                takers = [j for j, name in enumerate(names) if name in one.members]
                if not takers:
                    raise ValueError(f"the cut points of feature {f!r} hold {one.members}, "
                                     f"none of the grids {names}")
                for j in takers:
                    routed[j][f] = one
        parts = copy.deepcopy(self.parts)  # a refusal below leaves this stack as it was
        for part, mine in zip(parts, routed):
            if mine:
                part.fix_numeric(mine)
        self.parts = parts

    # ------------------------------------------------------ stacking (no forgetting)

    def agree_on_table(self, columns, new, labels) -> None:
        """Every grid's :meth:`TreeMemberStack.agree_on_table
        <onlinebma.tan.members.TreeMemberStack.agree_on_table>`.

        Parameters
        ----------
        columns : dict
            The validated table's columns (``prepare_frame``).
        new : dict
            The kinds of the features the table brings first.
        labels : pandas.Series
            One per row.
        """
        for part in self.parts:
            part.agree_on_table(columns, new, labels)

    def fold_states(self, X, labels, offset: int = 0) -> list:
        """Every grid's fold states, as one GridStack per fold.

        Parameters
        ----------
        X : pandas.DataFrame
            The table (or one partition of it), validated, :meth:`agree_on_table` done.
        labels : pandas.Series
            One label per row of ``X``.
        offset : int, default 0
            Where ``X`` starts in the whole table (which sets its rows' folds).

        Returns
        -------
        list of GridStack
            By fold: each grid's state of that fold.
        """
        per_part = [part.fold_states(X, labels, offset) for part in self.parts]
        return [self._with_parts(list(states)) for states in zip(*per_part)]

    def complements(self, folds: list) -> GridComplements:
        """Each fold's complement, grid by grid.

        Parameters
        ----------
        folds : list of GridStack
            By fold, each the fold's state over the whole table (:meth:`fold_states`, the
            partitions' merged).

        Returns
        -------
        GridComplements
            One :class:`~onlinebma.tan.members.StackComplements` per grid.
        """
        return GridComplements([part.complements([fold.parts[j] for fold in folds])
                                for j, part in enumerate(self.parts)], self._position)

    def add_records(self, others) -> None:
        """Add other GridStacks' records, grid by grid (counts and Gaussian statistics,
        exactly); the weights are left as they are.

        Parameters
        ----------
        others : iterable of GridStack
            Of the same members, forgetting nothing; left unchanged.
        """
        others = list(others)
        for j, part in enumerate(self.parts):
            part.add_records([other.parts[j] for other in others])


class GridComplements:
    """The complements of a table's folds, one
    :class:`~onlinebma.tan.members.StackComplements` per grid.

    Parameters
    ----------
    per_grid : list of StackComplements
        By grid.
    position : list of int
        The column, in the grids' members laid end to end, of each member.
    """

    def __init__(self, per_grid, position):
        self.per_grid = list(per_grid)
        self.position = list(position)

    def cross_validated_probabilities(self, X, labels, offset: int = 0) -> np.ndarray:
        """Each row's probability of its label under each member of its fold's complement.

        Parameters
        ----------
        X : pandas.DataFrame
            Some validated rows of the table (all, or one partition).
        labels : pandas.Series
            The label of each row, a class of every complement.
        offset : int, default 0
            Where ``X`` starts in the whole table (which sets its rows' folds).

        Returns
        -------
        np.ndarray
            ``(rows, members)``, the members in the stack's order.
        """
        p = np.concatenate([c.cross_validated_probabilities(X, labels, offset)
                            for c in self.per_grid], axis=1)
        return p[:, self.position]
