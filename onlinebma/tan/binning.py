"""Numeric features for the tree-augmented learners: streaming equal-frequency intervals.

The tree-augmented learners count values per class and per pair of features, so a numeric
feature is cut into a few intervals, each interval one value. :class:`StreamingBins` chooses
the cut points once, from the feature's first ``warmup`` observed values:

- Those first ``warmup`` values are only collected: for the learner the feature is missing in
  those records (its counts, pair counts and edge weights do not see them).
- At the ``warmup``-th value the cut points are fixed at the sample's ``1/n_bins, ...,
  (n_bins-1)/n_bins`` quantiles (duplicates, and cuts at the sample's minimum, dropped, so a
  feature with few distinct values gets fewer intervals, a constant one a single interval)
  and the feature gets all its intervals as values at once, so its number of values ``r``
  is fixed from then on.
- A value falls in interval ``i`` when ``cuts[i-1] <= x < cuts[i]``; values below the first
  or above the last cut point fall in the end intervals, however far out they are.
- The cut points are never moved afterwards, so every count stays a count of the same
  intervals and learning stays exact (moving a cut would need the values themselves).

Defaults (``n_bins=5``, ``warmup=200`` in the learners), measured with
``ModelAveragedTAN(decay="auto")`` by progressive validation on the first 5,000 records of the
drift benchmark's streams (accuracy at warm-up 30 / 200): Elec2 0.827 / 0.870, SEA 0.833 /
0.829, Hyperplane 0.858 / 0.855, RandomRBFDrift 0.855 / 0.851. A short warm-up cuts at the
quantiles of an unrepresentative start (Elec2's first 30 records are 15 hours of one day, so
the time of day and the prices get cut points of those hours only); 200 costs little
elsewhere. More intervals helped Elec2 (8: 0.876 at warm-up 200) but cost accuracy on SEA,
Hyperplane and RandomRBFDrift (8 intervals: 0.820, 0.848, 0.845; 12 and 16 worse still):
with forgetting the counts per cell are few, so 5 stays.

Under drift the intervals keep the early stream's quantiles: a feature whose range moves
away ends up mostly in one end interval and loses resolution (but never breaks the counts).
For cut points fitted to the class, or to a whole training set, discretise first with
:class:`onlinebma.preprocessing.MDLDiscretizer` in a pipeline (``MDLDiscretizer() |
learner``), or give the learner nominal features. Learners whose cut points differ cannot be
merged (their intervals are not the same values).

>>> bins = StreamingBins(n_bins=3, warmup=6)
>>> [bins.learn(x) for x in [5.0, 1.0, 3.0, 2.0, 6.0, 4.0]]
[None, None, None, None, None, None]
>>> [round(c, 3) for c in bins.cuts], bins.n_values
([2.667, 4.333], 3)
>>> [bins.learn(x) for x in [-100.0, 3.0, 100.0]], bins.bin(4.5)
([0, 1, 2], 2)
"""

from __future__ import annotations

import bisect

import numpy as np

__all__ = ["StreamingBins"]


class StreamingBins:
    """Cut points of one numeric feature, fixed at the quantiles of its first values."""

    __slots__ = ("n_bins", "warmup", "sample", "cuts")

    def __init__(self, n_bins: int, warmup: int):
        self.n_bins = n_bins
        self.warmup = warmup
        self.sample: list = []  # the first values, until the cut points exist
        self.cuts: list | None = None

    def __getstate__(self):
        return self.n_bins, self.warmup, self.sample, self.cuts

    def __setstate__(self, state):
        self.n_bins, self.warmup, self.sample, self.cuts = state

    @property
    def n_values(self) -> int:
        """The number of intervals (0 until the cut points exist)."""
        return 0 if self.cuts is None else len(self.cuts) + 1

    def _fix(self) -> None:
        sample = np.array(self.sample)
        q = np.unique(np.quantile(sample, np.arange(1, self.n_bins) / self.n_bins))
        self.cuts = [float(c) for c in q[q > sample.min()]]
        self.sample = []

    def learn(self, x: float):
        """The interval of ``x``, or ``None`` while the cut points do not exist yet (``x``
        is then collected; the cut points are fixed at the ``warmup``-th value)."""
        if self.cuts is not None:
            return bisect.bisect_right(self.cuts, x)
        self.sample.append(x)
        if len(self.sample) >= self.warmup:
            self._fix()
        return None

    def bin(self, x: float):
        """The interval of ``x`` for prediction, ``None`` while there are no cut points."""
        return None if self.cuts is None else bisect.bisect_right(self.cuts, x)

    def learn_many(self, x: np.ndarray) -> np.ndarray:
        """:meth:`learn` on each value of ``x`` in order (NaN missing): intervals, -1 for
        missing values and the values collected."""
        out = np.full(len(x), -1, dtype=np.int64)
        present = np.flatnonzero(~np.isnan(x))
        if self.cuts is None:
            take = present[:self.warmup - len(self.sample)]
            self.sample.extend(x[take].tolist())
            present = present[len(take):]
            if len(self.sample) >= self.warmup:
                self._fix()
        if self.cuts is not None and len(present):
            out[present] = np.searchsorted(self.cuts, x[present], side="right")
        return out

    def bin_many(self, x: np.ndarray) -> np.ndarray:
        """:meth:`bin` of each value (-1 where missing or without cut points)."""
        out = np.full(len(x), -1, dtype=np.int64)
        if self.cuts is not None:
            present = ~np.isnan(x)
            out[present] = np.searchsorted(self.cuts, x[present], side="right")
        return out

    def merge(self, other: StreamingBins, feature) -> None:
        """Combine with ``other`` (the same feature of another learner): cut points must be
        equal where both exist; without any, the samples are pooled."""
        if other.cuts is None:
            if self.cuts is None:
                for x in other.sample:
                    self.learn(x)
            return
        if self.cuts is None:
            self.sample, self.cuts = [], list(other.cuts)
        elif self.cuts != other.cuts:
            raise ValueError(
                f"cannot merge: numeric feature {feature!r} was cut into different intervals "
                f"({self.cuts} vs {other.cuts}); discretise before learning "
                f"(MDLDiscretizer() | learner) to merge learners with numeric features"
            )
