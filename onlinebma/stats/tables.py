"""Per-feature sufficient statistics of the naive Bayes family, updated record by record.

One table per feature holds the statistics of *both* naive structures at once: without the
arc C → F (the feature's marginal: ``N_v`` or marginal moments) and with it (``N_yv`` or
class-conditional moments). Only records in which the feature was observed are counted, so
``n_class[y]`` is "records of class y in which this feature was observed".

Tables add up (:meth:`merge`), so learners trained on shards combine exactly. Counts are
weights, not only integers: a learner that forgets (``decay`` < 1) adds each record with a
weight in its own scaled unit and calls :meth:`NominalTable.rescale` when it renormalises.

>>> t = NominalTable()
>>> for v, y in [("a", 0), ("b", 0), ("a", 1)]:
...     t.update(v, y)
>>> t.n, t.n_value, t.n_class, t.n_joint
(3, {'a': 2, 'b': 1}, {0: 2, 1: 1}, {'a': {0: 1, 1: 1}, 'b': {0: 1}})
"""

from __future__ import annotations

from .gaussian import GaussianMoments

__all__ = ["NominalTable", "NumericTable"]


class NominalTable:
    """Counts of one nominal feature: ``n``, ``n_value[v]``, ``n_class[y]``, ``n_joint[v][y]``."""

    __slots__ = ("n", "n_value", "n_class", "n_joint")

    def __init__(self):
        self.n = 0
        self.n_value: dict = {}
        self.n_class: dict = {}
        self.n_joint: dict = {}

    def update(self, v, y, w=1) -> None:
        self.n += w
        self.n_value[v] = self.n_value.get(v, 0) + w
        self.n_class[y] = self.n_class.get(y, 0) + w
        row = self.n_joint.get(v)
        if row is None:
            self.n_joint[v] = {y: w}
        else:
            row[y] = row.get(y, 0) + w

    def merge(self, other: NominalTable) -> None:
        for v, row in other.n_joint.items():
            for y, c in row.items():
                self.update(v, y, c)

    def rescale(self, c: float) -> None:
        """Multiply every count by ``c``."""
        self.n *= c
        for counts in (self.n_value, self.n_class, *self.n_joint.values()):
            for k in counts:
                counts[k] *= c

    def __eq__(self, other):
        return isinstance(other, NominalTable) and self.n_joint == other.n_joint


class NumericTable:
    """Moments of one numeric feature: marginal and per class (:class:`GaussianMoments`)."""

    __slots__ = ("marginal", "by_class")

    def __init__(self):
        self.marginal = GaussianMoments()
        self.by_class: dict = {}

    @property
    def n(self):
        return self.marginal.n

    def update(self, x: float, y, w=1) -> None:
        by_y = self.by_class.get(y)
        if by_y is None:
            by_y = self.by_class[y] = GaussianMoments()
        if w != 1:
            self.marginal.update(x, w)
            by_y.update(x, w)
            return
        for m in (self.marginal, by_y):  # GaussianMoments.update, inlined (per feature, record)
            n = m.n + 1
            delta = x - m.mean
            mean = m.mean + delta / n
            m.m2 += delta * (x - mean)
            m.mean = mean
            m.n = n

    def rescale(self, c: float) -> None:
        """Multiply every weight (and so every centred sum of squares) by ``c``."""
        for m in (self.marginal, *self.by_class.values()):
            m.rescale(c)

    def merge(self, other: NumericTable) -> None:
        self.marginal.merge(other.marginal)
        for y, m in other.by_class.items():
            mine = self.by_class.get(y)
            if mine is None:
                self.by_class[y] = m.copy()
            else:
                mine.merge(m)
