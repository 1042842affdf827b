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

**Reading per value** (:class:`ValueCodes`): each value gets a code in order of first
appearance, as a nominal value does, and is counted exactly. Every value is its own interval
``(a⁻, a]`` (a point mass), so a member measures it by its probability, as the interval members
measure their point masses.

**When more values arrive afterwards**: a new value joins as a new value (a new code, like a
nominal's new value) while the feature has at most ``max_values`` of them. The value that would
make ``max_values + 1`` is not coded (:meth:`ValueCodes.learn` returns ``None`` and changes
nothing): the feature then **switches** to interval members. :meth:`ValueCodes.to_grids` cuts
it from the values read so far (each counted once per record that had it, whatever the
forgetting) and gives the interval of every value code in every member; since each value lies
in exactly one interval, summing a member's per-value cells into those intervals gives exactly
the counts of a learner that had those cut points from the first record (with forgetting too:
the cells are sums of weights). The values that held more than ``1 / max(resolutions)`` of the
records stay point masses (measured by probability in every member, and an interval of their own
in each grid of ``B`` intervals where they held more than ``1 / B``).

>>> codes = ValueCodes.from_sample([1.0, 0.0, 1.0, 0.0, 0.5, 0.5], [0, 1, 1, 1, 0, 0],
...                                n_classes=2, max_values=3)
>>> codes.values, codes.code(0.5), codes.code(0.25)
([1.0, 0.0, 0.5], 2, -1)
>>> codes.learn(0.25, 1) is None  # a 4th value: the feature switches to intervals
True
"""

from __future__ import annotations

import math

import numpy as np

from ..table import MISSING
from ..validation import check_int
from .cuts import observed_sample
from .grids import DEFAULT_RESOLUTIONS, Grids

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
    """A numeric feature read per value: codes in order of first appearance, at most
    ``max_values`` of them, and how often each value occurred with each class.

    Parameters
    ----------
    max_values : int, default 16
        The number of values beyond which the feature switches to intervals.

    Attributes
    ----------
    values : list of float
        The values, by code.

    Examples
    --------
    >>> codes = ValueCodes(max_values=2)
    >>> codes.learn(3.0, 0), codes.learn(1.0, 1), codes.learn(3.0, 1)
    (0, 1, 0)
    >>> codes.class_counts().tolist()
    [[1, 1], [0, 1]]
    >>> grids, intervals = codes.to_grids(resolutions=(2,), class_aware=False)
    >>> grids.masses.tolist(), intervals.tolist()  # 3.0 holds 2/3 > 1/2: its own interval
    ([3.0], [[1], [0]])
    """

    def __init__(self, max_values: int = 16):
        check_int("max_values", max_values, 1)
        self.max_values = max_values
        self.values: list = []
        self._codes: dict = {}
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
        out._start(distinct[order].tolist(), counts)
        return out

    def _start(self, values: list, counts: np.ndarray) -> None:
        """Take ``values`` (coded in this order) and their class ``counts`` (empty codes)."""
        self.values = values
        self._codes = {v: c for c, v in enumerate(values)}
        self._counts = counts

    def code(self, x: float) -> int:
        """The code of a value for prediction.

        Parameters
        ----------
        x : float
            A value.

        Returns
        -------
        int
            Its code; ``MISSING`` (-1) for a value never read (skipped, as a nominal value
            never seen is).
        """
        return self._codes.get(x, MISSING)

    def code_many(self, x) -> np.ndarray:
        """:meth:`code` of each value of an array.

        Parameters
        ----------
        x : array-like of float
            Values, NaN where missing.

        Returns
        -------
        np.ndarray
            int64 codes, ``MISSING`` (-1) where missing or never read.
        """
        x = np.asarray(x, dtype=float)
        out = np.full(x.shape, MISSING, dtype=np.int64)
        if self.values:
            values = np.array(self.values)
            order = np.argsort(values)
            ordered = values[order]
            at = np.minimum(np.searchsorted(ordered, x), ordered.size - 1)
            hit = ordered[at] == x
            out[hit] = order[at[hit]]
        return out

    def learn(self, x: float, label: int):
        """Count a value with its class.

        Parameters
        ----------
        x : float or None
            The value; ``None`` or NaN is missing (nothing counted).
        label : int
            Its class code.

        Returns
        -------
        int or None
            The code of ``x`` (a new value gets the next code); ``MISSING`` (-1) for a missing
            value; ``None``, with nothing changed, when ``x`` is new and ``max_values`` values
            exist already (the feature switches: :meth:`to_grids`).

        Raises
        ------
        ValueError
            If ``x`` is infinite or ``label`` is not a class code (nothing changed).
        """
        if x is None or x != x:
            return MISSING
        if not math.isfinite(x):
            raise ValueError(f"a numeric value must be finite, got {x!r}")
        check_int("label", label, 0)
        c = self._codes.get(x)
        if c is None:
            if len(self.values) >= self.max_values:
                return None
            c = self._codes[x] = len(self.values)
            self.values.append(x)
        rows, classes = self._counts.shape
        if c >= rows or label >= classes:
            grown = np.zeros((max(rows, c + 1), max(classes, label + 1)), dtype=np.int64)
            grown[:rows, :classes] = self._counts
            self._counts = grown
        self._counts[c, label] += 1
        return c

    def class_counts(self) -> np.ndarray:
        """How often each value (by code) occurred with each class: ``(n_values, n_classes)``
        ints, once per record, not decayed (a copy)."""
        return self._counts.copy()

    def to_grids(self, resolutions: tuple = DEFAULT_RESOLUTIONS,
                 class_aware: bool = True) -> tuple[Grids, np.ndarray]:
        """The interval members of the feature cut from its values (the switch), and the
        interval of each value code in each member (nothing here changes).

        Parameters
        ----------
        resolutions : tuple of int, default ``DEFAULT_RESOLUTIONS``
            As in :meth:`Grids.from_sample`.
        class_aware : bool, default True
            As in :meth:`Grids.from_sample`.

        Returns
        -------
        tuple
            ``(grids, intervals)``: ``intervals[code, member]`` is the member's interval of
            the value of that code; a member's cell of an interval is the sum of its value
            cells mapped there.
        """
        if not self.values:
            raise ValueError("no value has been read: there is nothing to cut")
        values = np.array(self.values)
        order = np.argsort(values)
        grids = Grids.from_sample(values[order], self._counts[order], resolutions, class_aware)
        return grids, grids.code_many(values)

    def __eq__(self, other) -> bool:
        if not isinstance(other, ValueCodes):
            return NotImplemented
        return (self.max_values == other.max_values and self.values == other.values
                and np.array_equal(self._counts, other.class_counts()))

    __hash__ = None

    def __repr__(self) -> str:
        return f"ValueCodes(values={self.values}, max_values={self.max_values})"
