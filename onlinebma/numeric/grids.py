"""The interval members of one numeric feature, and the coding of a value for all of them at once.

:class:`Grids` holds the cut points of every interval member of a feature (equal-frequency grids
at several resolutions and the class-aware MDL cut points, :mod:`onlinebma.numeric.cuts`), all
from one shared sample, and codes a value for every member with **one** binary search: the
members' cut points (and the shared point masses' intervals) are merged into one sorted array,
whose ``(a, b]`` cells each lie inside exactly one interval of every member, and tables give
each cell's interval in every member and its **within-interval factor**. A value equal to a
cut point falls in the lower interval (``(a, b]``, :mod:`onlinebma.numeric`).

**Point masses, and members' predictive densities that compare.** The feature's point masses
(values holding more than ``1 / max(resolutions)`` of the sample) are shared by all members;
each member's grid of ``B`` intervals gives its own interval ``(a⁻, a]`` to those holding more
than ``1 / B`` (so a grid of 3 stays near 3 intervals on a feature with many moderate point
masses). Within each interval a member spreads the interval's probability in a way fixed from
the sample (:func:`~onlinebma.numeric.cuts.within_shares`): a share to each point mass inside
it, the rest uniformly over the interval's width (end intervals measured within
:func:`~onlinebma.numeric.cuts.extent`). So every member gives a point mass a probability
and any other value a density, and a member's predictive for a value of interval ``i`` is
``log P(i) + log_within[cell, member]``: the members' predictive densities are of one measure
(counting at the point masses, length elsewhere) and can be compared. The member's counts are
per interval; the within-interval factors are fixed, not learned.

>>> import numpy as np
>>> from onlinebma.numeric.cuts import distinct_counts
>>> values, counts = distinct_counts(np.arange(12.0))
>>> grids = Grids.from_sample(values, counts[:, None], resolutions=(2, 4), class_aware=False)
>>> grids.members, [c.tolist() for c in grids.cuts]
(('2 intervals', '4 intervals'), [[5.5], [2.5, 5.5, 8.5]])
>>> grids.code(5.5).tolist(), grids.code(5.6).tolist()
([0, 1], [1, 2])
>>> grids.code_many(np.array([-3.0, np.nan, 20.0])).tolist()
[[0, 0], [-1, -1], [1, 3]]
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from ..table import MISSING
from .cuts import (
    class_cuts,
    equal_frequency_cuts,
    extent,
    interval_widths,
    mass_cuts,
    point_masses,
    within_shares,
)

__all__ = ["DEFAULT_RESOLUTIONS", "Grids", "check_resolutions"]

#: The grids' numbers of intervals by default (the probe in the shared notes found the best
#: single grid anywhere from 3 to 32 intervals, depending on the stream).
DEFAULT_RESOLUTIONS = (3, 5, 8, 16, 32)


def check_resolutions(resolutions) -> None:
    """A non-empty tuple of distinct integers, each at least 2 (a grid's number of intervals).

    >>> check_resolutions((3, 3))
    Traceback (most recent call last):
    ...
    ValueError: resolutions must be distinct integers >= 2, got (3, 3)
    """
    if not isinstance(resolutions, tuple) or not resolutions or any(
            isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 2
            for b in resolutions) or len(set(resolutions)) != len(resolutions):
        raise ValueError(f"resolutions must be distinct integers >= 2, got {resolutions!r}")


class Grids:
    """The interval members of one numeric feature, coded with one search per value.

    Parameters
    ----------
    members : tuple of str
        One name per member, such as ``"5 intervals"`` or ``"MDL"``.
    cuts : tuple of np.ndarray
        Each member's sorted distinct cut points; interval ``i`` is ``(cuts[i-1], cuts[i]]``.
    values : np.ndarray
        The sample's distinct values, increasing (for the extent and the within-interval
        shares).
    counts : np.ndarray
        How often each value occurs in the sample.
    masses : np.ndarray
        The shared point masses (values of ``values``).

    Attributes
    ----------
    n_intervals : tuple of int
        Each member's number of intervals.
    low, high : float
        The extent within which the end intervals are measured
        (:func:`~onlinebma.numeric.cuts.extent`).

    Examples
    --------
    A feature that is 0 in 92 % of its records: the grids keep 0 as an interval of its own and
    cut the positive values into the rest of their intervals.

    >>> from onlinebma.numeric.cuts import distinct_counts
    >>> sample = np.array([0.0] * 92 + [float(v) for v in range(1, 9)])
    >>> values, counts = distinct_counts(sample)
    >>> grids = Grids.from_sample(values, counts[:, None], resolutions=(3,), class_aware=False)
    >>> grids.masses.tolist(), grids.n_intervals
    ([0.0], (4,))
    >>> grids.code_many(np.array([-1.0, 0.0, 0.5, 4.0, 7.0])).ravel().tolist()
    [0, 1, 2, 2, 3]
    >>> np.exp(grids.log_within(0.0)).tolist()  # 0 is measured by its interval's probability
    [1.0]
    """

    def __init__(self, members: tuple, cuts: tuple, values: np.ndarray, counts: np.ndarray,
                 masses: np.ndarray):
        if len(members) != len(cuts) or not members:
            raise ValueError(f"one name per member and at least one member: got {len(members)} "
                             f"names for {len(cuts)} cut arrays")
        cuts = tuple(np.asarray(c, dtype=float) for c in cuts)
        for name, c in zip(members, cuts):
            if c.ndim != 1 or not np.all(np.diff(c) > 0) or not np.isfinite(c).all():
                raise ValueError(f"member {name!r}: cut points must be finite, distinct and "
                                 f"increasing")
        masses = np.asarray(masses, dtype=float)
        self.low, self.high = extent(values)
        shares = [within_shares(c, values, counts, masses) for c in cuts]  # checks the sample
        widths = [interval_widths(c, self.low, self.high) for c in cuts]
        self.members = tuple(members)
        self.cuts = cuts
        self.masses = masses
        self.n_intervals = tuple(c.size + 1 for c in cuts)
        # One sorted array of every member's cut points and the point masses' intervals; cell j
        # is (union[j-1], union[j]], and each point mass is a cell of its own.
        union = np.unique(np.concatenate([*cuts, mass_cuts(masses)]))
        self._union = union.tolist()  # bisect on a list: the per-record path
        self._union_array = union
        # A value of cell j >= 1 exceeds union[j-1], so it lies above exactly the cuts of a
        # member that are <= union[j-1] (every cut is in the union).
        table = np.zeros((union.size + 1, len(cuts)), dtype=np.int64)
        within = np.empty(table.shape)
        mass_cells = np.searchsorted(union, masses, side="left")
        for m, (c, (mass_shares, free_shares), w) in enumerate(zip(cuts, shares, widths)):
            table[1:, m] = np.searchsorted(c, union, side="right")
            free = free_shares[table[:, m]]
            # a free share is 0 only in an interval (a⁻, a], whose one cell is a's (set below)
            within[:, m] = np.log(np.where(free > 0, free, 1.0)) - np.log(w[table[:, m]])
            within[mass_cells, m] = np.log(mass_shares)
        table.flags.writeable = within.flags.writeable = False
        self._cells = table
        self._within = within

    def __setstate__(self, state):
        self.__dict__.update(state)
        # unpickled arrays come back writeable; code() and log_within() hand out their rows
        self._cells.flags.writeable = self._within.flags.writeable = False

    @classmethod
    def from_sample(cls, values: np.ndarray, class_counts: np.ndarray,
                    resolutions: tuple = DEFAULT_RESOLUTIONS, class_aware: bool = True) -> Grids:
        """The members of a feature from its sample.

        Parameters
        ----------
        values : np.ndarray
            Distinct sample values, increasing (at least one).
        class_counts : np.ndarray
            Integer counts of shape ``(len(values), n_classes)``.
        resolutions : tuple of int, default ``DEFAULT_RESOLUTIONS``
            One equal-frequency grid per number of intervals ``B``, giving its own interval to
            each value holding more than ``1 / B`` of the sample; the point masses, shared by
            every member, are the values holding more than ``1 / max(resolutions)``.
        class_aware : bool, default True
            Add the member ``"MDL"``: Weka's MDL cut points
            (:func:`~onlinebma.numeric.cuts.class_cuts`), its point masses measured within its
            intervals.

        Returns
        -------
        Grids
        """
        values = np.asarray(values, dtype=float)
        class_counts = np.asarray(class_counts)
        check_resolutions(resolutions)
        if class_counts.ndim != 2 or class_counts.shape[0] != values.size:
            raise ValueError(f"class_counts must have shape (len(values), n_classes), got "
                             f"{class_counts.shape} for {values.size} values")
        counts = class_counts.sum(axis=1)
        masses = point_masses(values, counts, 1 / max(resolutions))
        members = [f"{b} intervals" for b in resolutions]
        cuts = [equal_frequency_cuts(values, counts, b, point_masses(values, counts, 1 / b))
                for b in resolutions]
        if class_aware:
            members.append("MDL")
            cuts.append(class_cuts(values, class_counts, np.array([])))
        return cls(tuple(members), tuple(cuts), values, counts, masses)

    @property
    def n_cells(self) -> int:
        """The number of cells of the merged cut points (each inside one interval per member)."""
        return self._cells.shape[0]

    def cell(self, x: float) -> int:
        """The cell of a value (one binary search, ``(a, b]``).

        Parameters
        ----------
        x : float
            An observed value.

        Returns
        -------
        int
            A row of :meth:`intervals_of_cells`.
        """
        return bisect_left(self._union, x)

    def intervals_of_cells(self) -> np.ndarray:
        """The read-only table ``(n_cells, n_members)`` of each cell's interval in every member."""
        return self._cells

    def log_within_of_cells(self) -> np.ndarray:
        """The read-only table ``(n_cells, n_members)`` of each cell's within-interval factor
        (log): a member's log probability (point mass) or log density of a value of the cell
        is its interval's log probability plus this."""
        return self._within

    def log_within(self, x: float) -> np.ndarray:
        """Every member's within-interval factor (log) of one value.

        Parameters
        ----------
        x : float
            A value of the feature; NaN is not one (a missing value has no factor).

        Returns
        -------
        np.ndarray
            Per member (read-only), the log probability (a point mass) or log density of ``x``
            minus the log probability of its interval.
        """
        return self._within[bisect_left(self._union, x)]

    def code(self, x: float) -> np.ndarray:
        """Every member's interval of one value.

        Parameters
        ----------
        x : float
            An observed value (not NaN).

        Returns
        -------
        np.ndarray
            A read-only row of ``n_members`` ints.
        """
        return self._cells[bisect_left(self._union, x)]

    def code_many(self, x: np.ndarray) -> np.ndarray:
        """Every member's interval of each value.

        Parameters
        ----------
        x : np.ndarray
            Float values, NaN where missing.

        Returns
        -------
        np.ndarray
            ``(len(x), n_members)`` ints, ``MISSING`` (-1) where a value is missing.
        """
        x = np.asarray(x, dtype=float)
        missing = np.isnan(x)
        out = self._cells[np.searchsorted(self._union_array, np.where(missing, 0.0, x),
                                          side="left")]
        out[missing] = MISSING
        return out

    def __eq__(self, other) -> bool:
        """The same members with the same cut points, point masses, extent and within-interval
        factors (learners whose features have equal grids count the same intervals and can be
        merged)."""
        if not isinstance(other, Grids):
            return NotImplemented
        return (self.members == other.members and self.low == other.low
                and self.high == other.high and np.array_equal(self.masses, other.masses)
                and all(np.array_equal(a, b) for a, b in zip(self.cuts, other.cuts))
                and np.array_equal(self._within, other.log_within_of_cells()))

    __hash__ = None

    def __repr__(self) -> str:
        return (f"Grids(members={self.members}, n_intervals={self.n_intervals}, "
                f"masses={self.masses.tolist()})")
