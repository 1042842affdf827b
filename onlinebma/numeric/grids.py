"""The interval members of one numeric feature, and the coding of a value for all of them at once.

:class:`Grids` holds the cut points of every interval member of a feature (equal-frequency grids
at several resolutions and the class-aware MDL cut points, :mod:`onlinebma.numeric.cuts`), all
from one shared sample and with one shared set of point masses, and codes a value for every
member with **one** binary search: the members' cut points are merged into one sorted array,
whose ``(a, b]`` cells are each inside exactly one interval of every member, and a table gives
each cell's interval in every member. A value equal to a cut point falls in the lower interval
(``(a, b]``, :mod:`onlinebma.numeric`).

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
    log_measures,
    mass_cuts,
    point_masses,
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
    masses : np.ndarray
        The shared point masses: each must be the upper end of its own interval ``(a⁻, a]`` in
        every member (:func:`~onlinebma.numeric.cuts.mass_cuts` among its cuts).
    low : float
        Lower end of every member's first interval for densities
        (:func:`~onlinebma.numeric.cuts.extent`).
    high : float
        Upper end of every member's last interval for densities.

    Attributes
    ----------
    n_intervals : tuple of int
        Each member's number of intervals.
    log_measures : tuple of np.ndarray
        Each member's :func:`~onlinebma.numeric.cuts.log_measures`: a member's log density of
        a value in its interval ``i`` is ``log P(i) - log_measures[m][i]``.

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
    """

    def __init__(self, members: tuple, cuts: tuple, masses: np.ndarray, low: float,
                 high: float):
        if len(members) != len(cuts) or not members:
            raise ValueError(f"one name per member and at least one member: got {len(members)} "
                             f"names for {len(cuts)} cut arrays")
        cuts = tuple(np.asarray(c, dtype=float) for c in cuts)
        for name, c in zip(members, cuts):
            if c.ndim != 1 or not np.all(np.diff(c) > 0) or not np.isfinite(c).all():
                raise ValueError(f"member {name!r}: cut points must be finite, distinct and "
                                 f"increasing")
            missing = np.setdiff1d(mass_cuts(masses), c)
            if missing.size:
                raise ValueError(f"member {name!r} lacks the cut point {missing[0]!r} of a "
                                 f"point mass's interval (a⁻, a]")
        self.members = tuple(members)
        self.cuts = cuts
        self.masses = np.asarray(masses, dtype=float)
        self.low, self.high = float(low), float(high)
        self.n_intervals = tuple(c.size + 1 for c in cuts)
        self.log_measures = tuple(log_measures(c, self.masses, self.low, self.high) for c in cuts)
        # One sorted array of every member's cut points; cell j is (union[j-1], union[j]].
        union = np.unique(np.concatenate(cuts))
        self._union = union.tolist()  # bisect on a list: the per-record path
        self._union_array = union
        # A value of cell j >= 1 exceeds union[j-1], so it lies above exactly the cuts of a
        # member that are <= union[j-1] (every cut is in the union).
        table = np.zeros((union.size + 1, len(cuts)), dtype=np.int64)
        for m, c in enumerate(cuts):
            table[1:, m] = np.searchsorted(c, union, side="right")
        table.flags.writeable = False
        self._cells = table

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._cells.flags.writeable = False  # unpickled arrays come back writeable

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
            One equal-frequency grid per number of intervals; the point masses are the values
            holding more than ``1 / max(resolutions)`` of the sample, shared by every member.
        class_aware : bool, default True
            Add the member ``"MDL"``: :func:`~onlinebma.numeric.cuts.class_cuts`.

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
        cuts = [equal_frequency_cuts(values, counts, b, masses) for b in resolutions]
        if class_aware:
            members.append("MDL")
            cuts.append(class_cuts(values, class_counts, masses))
        return cls(tuple(members), tuple(cuts), masses, *extent(values))

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
        """The same members with the same cut points, point masses and extent (learners whose
        features have equal grids count the same intervals and can be merged)."""
        if not isinstance(other, Grids):
            return NotImplemented
        return (self.members == other.members and self.low == other.low
                and self.high == other.high and np.array_equal(self.masses, other.masses)
                and all(np.array_equal(a, b) for a, b in zip(self.cuts, other.cuts)))

    __hash__ = None

    def __repr__(self) -> str:
        return (f"Grids(members={self.members}, n_intervals={self.n_intervals}, "
                f"masses={self.masses.tolist()})")
