"""Numbers that are values: a numeric feature with few distinct values, counted per value.

**When a feature is read per value** (:func:`reads_as_values`): when its sample has at most
``max_values`` distinct values (16 by default) and every one of them occurs at least
``min_count`` times (2 by default). Integer codes, ratings, ``{0, 0.5, 1}`` pass; a measured
quantity does not, since most of its sampled values occur once. The reason for "every value
repeated": Good and Turing's estimate of the probability that the next value is one not seen
yet is the share of the sample's values seen exactly once; with no value seen once it is 0,
below ``1 / n`` for a sample of ``n``, so the sample is taken to show every value the feature
has. ``max_values`` keeps the per-value count tables small (a pair of such features has
``max_values²`` cells per class).

**Reading per value** (:class:`ValueCodes`): each value of the sample gets a code in order of
first appearance, as a nominal value does, and is counted exactly. Every such value is its own
interval ``(a⁻, a]`` (a point mass), so a member measures it by its probability, as the interval
members measure their point masses.

**When more values arrive afterwards**: a value not in the sample is coded as the **gap** it
falls in between the sample's values ``v1 < ... < vk``: ``(-inf, v1)``, ``(v1, v2)``, ...,
``(vk, inf)``, the open intervals between the point masses (codes ``k`` to ``2k`` from the
lowest gap up, :meth:`ValueCodes.gaps`). So the reading is fixed with the sample: at most
``2k + 1`` codes, whatever arrives later, and a learner counting with it equals one given the
same reading from its first record, with forgetting too (nothing is recoded mid-stream). The
tree learners bound such a feature too, by a grid whose point masses are its values
(:mod:`~onlinebma.numeric.grids`).

>>> codes = ValueCodes.from_sample([1.0, 0.0, 1.0, 0.0, 0.5, 0.5], [0, 1, 1, 1, 0, 0],
...                                n_classes=2, max_values=3)
>>> codes.values, codes.code(0.5)
([1.0, 0.0, 0.5], 2)
>>> codes.code(0.25), codes.code(7.0), codes.gaps()[codes.code(0.25) - 3]  # new values
(4, 6, (0.0, 0.5))
"""

from __future__ import annotations

import math
from bisect import bisect_left

import numpy as np

from ..table import MISSING
from ..validation import check_int
from .cuts import observed_sample

__all__ = ["ValueCodes", "reads_as_values"]


def reads_as_values(counts: np.ndarray, max_values: int = 16, min_count: int = 2) -> bool:
    """Whether a feature whose sample has these value counts is read per value.

    Parameters
    ----------
    counts : np.ndarray
        How often each distinct value occurs in the feature's sample.
    max_values : int, default 16
        At most this many distinct values.
    min_count : int, default 2
        Every distinct value occurs at least this many times (module docstring: why).

    Returns
    -------
    bool

    >>> reads_as_values(np.array([50, 30, 20])), reads_as_values(np.array([50, 30, 1]))
    (True, False)
    """
    check_int("max_values", max_values, 1)
    check_int("min_count", min_count, 1)
    counts = np.asarray(counts)
    return 1 <= counts.size <= max_values and int(counts.min()) >= min_count


class ValueCodes:
    """A numeric feature read per value: the values of its sample, coded in order of first
    appearance, and how often each occurred with each class in the sample; a value not in the
    sample is coded as the gap between sample values it falls in (module docstring).

    Parameters
    ----------
    max_values : int, default 16
        The most distinct values a sample may have (:func:`reads_as_values`).

    Attributes
    ----------
    values : list of float
        The sample's values, by code.

    Examples
    --------
    >>> codes = ValueCodes.from_sample([3.0, 1.0, 3.0, 1.0], [0, 1, 1, 1], n_classes=2)
    >>> codes.code(3.0), codes.code(1.0), codes.code(2.0), codes.n_codes
    (0, 1, 3, 5)
    >>> codes.gaps()
    [(-inf, 1.0), (1.0, 3.0), (3.0, inf)]
    >>> codes.class_counts().tolist()
    [[1, 1], [0, 2]]
    """

    def __init__(self, max_values: int = 16):
        check_int("max_values", max_values, 1)
        self.max_values = max_values
        self.values: list = []
        self._codes: dict = {}
        self._ordered: list = []  # the values in increasing order: the gaps' bounds
        self._counts = np.zeros((0, 0), dtype=np.int64)  # (value code, class code)

    @classmethod
    def from_sample(cls, values, labels, n_classes: int, max_values: int = 16) -> ValueCodes:
        """The codes of a sample's values, in order of first appearance, with their counts.

        Parameters
        ----------
        values : array-like of float
            Sample values in arrival order (codes follow the order of first appearance); NaN
            where missing.
        labels : array-like of int
            The class code of each value, counted with it.
        n_classes : int
            The number of classes (columns of :meth:`class_counts`).
        max_values : int, default 16
            As in the class; the sample must not have more distinct values.

        Returns
        -------
        ValueCodes
        """
        values, labels = observed_sample(values, labels, n_classes)
        out = cls(max_values)
        distinct, first = np.unique(values, return_index=True)
        if distinct.size > max_values:
            raise ValueError(f"the sample has {distinct.size} distinct values, more than "
                             f"max_values={max_values}")
        order = np.argsort(first, kind="stable")
        rank = np.empty(distinct.size, dtype=np.int64)
        rank[order] = np.arange(distinct.size)
        counts = np.zeros((distinct.size, n_classes), dtype=np.int64)
        np.add.at(counts, (rank[np.searchsorted(distinct, values)], labels), 1)
        out.values = [v + 0.0 for v in distinct[order].tolist()]  # -0.0 + 0.0 is 0.0
        out._codes = {v: c for c, v in enumerate(out.values)}
        out._ordered = sorted(out.values)
        out._counts = counts
        return out

    @property
    def n_codes(self) -> int:
        """The number of codes: ``2k + 1`` for ``k`` sample values (each value, each gap)."""
        return 2 * len(self.values) + 1

    def gaps(self) -> list:
        """The bounds ``(lo, hi)`` of each gap, the open interval between consecutive sample
        values (``-inf`` below the lowest, ``inf`` above the highest), lowest first: gap ``g``
        has code ``k + g``."""
        bounds = [-math.inf, *self._ordered, math.inf]
        return list(zip(bounds[:-1], bounds[1:]))

    def code(self, x: float) -> int:
        """The code of a value.

        Parameters
        ----------
        x : float or None
            A value; ``None`` or NaN is missing.

        Returns
        -------
        int
            The code of its sample value, or ``k`` plus the index of its gap
            (:meth:`gaps`) for a value not in the sample; ``MISSING`` (-1) for a missing
            value.

        Raises
        ------
        ValueError
            If ``x`` is infinite.
        """
        if x is None or x != x:
            return MISSING
        c = self._codes.get(x)
        if c is not None:
            return c
        if not math.isfinite(x):
            raise ValueError(f"a numeric value must be finite, got {x!r}")
        return len(self.values) + bisect_left(self._ordered, x)

    def code_many(self, x) -> np.ndarray:
        """:meth:`code` of each value of an array.

        Parameters
        ----------
        x : array-like of float
            Values, NaN where missing.

        Returns
        -------
        np.ndarray
            int64 codes, ``MISSING`` (-1) where missing.

        Raises
        ------
        ValueError
            If a value is infinite.
        """
        x = np.asarray(x, dtype=float)
        missing = np.isnan(x)
        if np.isinf(x).any():
            raise ValueError(f"a numeric value must be finite, got {float(x[np.isinf(x)][0])!r}")
        ordered = np.array(self._ordered)
        observed = np.where(missing, 0.0, x)
        out = len(self.values) + np.searchsorted(ordered, observed, side="left")
        if ordered.size:  # a sample value: its own code (by first appearance)
            at = np.minimum(out - len(self.values), ordered.size - 1)
            hit = (ordered[at] == observed) & ~missing
            out[hit] = np.array([self._codes[v] for v in self._ordered])[at[hit]]
        out[missing] = MISSING
        return out.astype(np.int64)

    def class_counts(self) -> np.ndarray:
        """How often each sample value (by code) occurred with each class in the sample:
        ``(k, n_classes)`` ints (a copy)."""
        return self._counts.copy()

    def __eq__(self, other) -> bool:
        if not isinstance(other, ValueCodes):
            return NotImplemented
        return (self.max_values == other.max_values and self.values == other.values
                and np.array_equal(self._counts, other.class_counts()))

    __hash__ = None

    def __repr__(self) -> str:
        return f"ValueCodes(values={self.values}, max_values={self.max_values})"
