"""The wide-record path of nominal features: a record's (feature, value) counts at once, in numpy.

A record with many nominal features costs :meth:`~onlinebma.naive_bayes.base.BaseNB._add_nominals`
a Python loop over its features and classes. From :data:`NOMINAL_FEATURES` observed nominal
features on, the learners predict it here instead: beside the tables (still the state every
other path reads, and written by every learning path), :class:`NominalBlock` keeps the
counts as arrays, one slot per (feature, value) seen with a
class axis, one row per feature; a record's known pairs are located through one dict of
slots, and the mixed parameters ``w0 θ(v) + w1 θ(v | y)`` (eq. 12-13 of Dash & Cooper 2002,
eq. 11 of Wu et al. 2015), their logs and the sum over features are a few numpy calls. The
structure weights come from the learner (a function of the learner given to
:meth:`WideNominals.terms`: ModelAveragedNB's kept marginal likelihoods, BMANB's kept
sums of eq. 14, both as arrays). Learning a record adds one to its slots and rows by fancy
indexing, after the learner counted it: in its own loop, or, for ModelAveragedNB with K2,
from the block's counts too (``ModelAveragedNB._wide_marginals``: eq. 8's terms in numpy's
arithmetic and ``math.log``, the plain path's floats bit for bit).

The path computes what the plain one computes, in the same operations (numpy's ``log`` may
differ from the math module's in the last bit, and the sum over features is pairwise, not
sequential: equal to ~1e-13, tested to 1e-12 in ``tests/test_nb_wide_nominal.py``). It runs
only without forgetting, with ``absent="missing"`` and with pseudo-counts that do not vary by
cell (not BDeu); a value or feature never seen is skipped, as there. The block follows
``learn_one`` record by record (unit weights, known labels); any other change (a new class,
``learn_many``, ``merge``) leaves it stale, and it is rebuilt from the tables at the next wide
prediction (it notes the learner's record count it is current for).

The path is taken from :data:`onlinebma.tuning.NOMINAL_FEATURES` observed nominal features
and :data:`onlinebma.tuning.NOMINAL_CELLS` (BMANB: ``BMANB_NOMINAL_CELLS``) cells on: speed
crossovers measured by ``python -m experiments wide`` ("Crossover of the nominal path" in
docs/results/wide.md; the measurements behind the values in docs/naive_bayes.md, *Speed*). They
are read at each record, so setting them chooses the path, as for
:mod:`~onlinebma.naive_bayes.wide`.
"""

from __future__ import annotations

from itertools import chain, repeat

import numpy as np

from ..stats.tables import NominalTable

__all__ = ["NominalBlock", "WideNominals"]



class NominalBlock:
    """The counts of every nominal feature of a learner as arrays: per slot (a (feature,
    value) pair, ``slots`` its index) ``n_value``, ``joint`` (a row per class, in ``classes``
    order: the class axis first, so a class's counts are contiguous) and its feature's row
    ``slot_row``; per feature row (``rows`` its index) ``n``, ``r`` (values seen) and
    ``n_class``. The last axis keeps spare capacity, so a new value costs no copy."""

    def __init__(self, tables: dict, classes: list, t: int):
        self.classes = list(classes)
        self.t = t
        self.rows: dict = {}
        self.slots: dict = {}
        k = len(self.classes)
        self.n, self.r, self.n_class = np.zeros(8), np.zeros(8), np.zeros((k, 8))
        self.slot_row = np.zeros(8, dtype=np.intp)
        self.n_value, self.joint = np.zeros(8), np.zeros((k, 8))
        self.located = None  # (pairs, their slots, -1 where unknown)
        nominal = [(f, tab) for f, tab in tables.items() if isinstance(tab, NominalTable)]
        for f, tab in nominal:  # a feature's values, as new features'
            self.add_slots([(f, v) for v in tab.n_value])
        if nominal:
            rows = [self.rows[f] for f, _ in nominal]
            self.n[rows] = [tab.n for _, tab in nominal]
            self.n_class[:, rows] = [[tab.n_class.get(y, 0) for _, tab in nominal]
                                     for y in self.classes]
            slots = len(self.slots)
            self.n_value[:slots] = [n for _, tab in nominal for n in tab.n_value.values()]
            self.joint[:, :slots] = [[tab.n_joint[v].get(y, 0) for _, tab in nominal
                                      for v in tab.n_value] for y in self.classes]

    def add_slots(self, pairs) -> np.ndarray:
        """New, empty slots for the (feature, value) ``pairs``, none of them in the block,
        either all of one feature or of distinct features (new, empty rows for new
        features); their indices."""
        rows, slots = self.rows, self.slots
        at = len(slots)
        owner = list(map(rows.get, [p[0] for p in pairs]))
        if None in owner:  # new features: new rows
            for k, p in enumerate(pairs):
                i = owner[k] = rows.get(p[0])
                if i is None:
                    owner[k] = rows[p[0]] = len(rows)
        slots.update(zip(pairs, range(at, at + len(pairs))))
        while len(rows) > len(self.n):
            self.n, self.r, self.n_class = _grown(self.n), _grown(self.r), _grown(self.n_class)
        while len(slots) > len(self.slot_row):
            self.slot_row, self.n_value, self.joint = (
                _grown(self.slot_row), _grown(self.n_value), _grown(self.joint))
        if len(owner) > 1 and owner[0] == owner[1]:  # all of one feature
            self.r[owner[0]] += len(owner)
            self.slot_row[at: len(slots)] = owner[0]
        else:
            owner = np.array(owner, dtype=np.intp)
            self.r[owner] += 1
            self.slot_row[at: len(slots)] = owner
        return np.arange(at, len(slots))

    def add_class(self, y) -> None:
        """A class never counted before: a row of zeros (a rebuild would cost a Python pass
        over every slot and class)."""
        self.classes.append(y)
        self.joint = np.vstack([self.joint, np.zeros((1, self.joint.shape[1]))])
        self.n_class = np.vstack([self.n_class, np.zeros((1, self.n_class.shape[1]))])

    def locate(self, pairs) -> np.ndarray:
        """The slots of ``pairs`` (-1: a pair never seen), kept for the same list of pairs
        (a prediction's, which learning the same record reuses)."""
        last = self.located
        if last is not None and last[0] is pairs:
            return last[1]
        codes = np.array(list(map(self.slots.get, pairs, repeat(-1, len(pairs)))), dtype=np.intp)
        self.located = (pairs, codes)
        return codes


def gathered(lists: dict, keys: list, width: int) -> np.ndarray:
    """``np.array([lists[k] for k in keys])`` for lists of ``width`` floats, in half the
    time (read flat)."""
    flat = chain.from_iterable(map(lists.__getitem__, keys))
    return np.fromiter(flat, float, width * len(keys)).reshape(len(keys), width)


def _grown(a: np.ndarray) -> np.ndarray:
    """``a`` with its last axis twice as long, zeros after."""
    out = np.zeros((*a.shape[:-1], 2 * a.shape[-1]), dtype=a.dtype)
    out[..., : a.shape[-1]] = a
    return out


class WideNominals:
    """The array path of wide nominal records, held by each learner of the naive Bayes
    family (its ``_wide_nominals``) with the one :class:`NominalBlock` it keeps (``block``,
    ``None`` until the first wide prediction). The learner hands it, per call, the state it
    reads: the tables, the number of records learned (the block is current for that count)
    and its structure weights as a function. The learner decides when the path applies (no
    forgetting, ``absent="missing"``, pseudo-counts that do not vary by cell, from
    :data:`~onlinebma.tuning.NOMINAL_FEATURES` observed nominal features and its threshold
    in cells on) and calls :meth:`terms` from its ``_add_nominals`` and :meth:`counted`
    after counting such a record.

    Examples
    --------
    Every feature depending on the class (``arc_odds`` gives ``None``, as NaiveBayes's),
    a record's terms are the smoothed ``(N_vy + 1) / (N_y + r)``:

    >>> import math
    >>> from onlinebma.stats.tables import NominalTable
    >>> from onlinebma.naive_bayes.wide_nominal import WideNominals
    >>> table = NominalTable()
    >>> table.update("red", "yes")
    >>> table.update("blue", "no")
    >>> path = WideNominals()
    >>> scores = path.terms([0.0, 0.0], [("colour", "red")], ["yes", "no"],
    ...                     {"colour": table}, 2, 1.0, lambda *counts: None)
    >>> [round(math.exp(s), 12) for s in scores]
    [0.666666666667, 0.333333333333]
    >>> path.counted([("colour", "red")], "yes", 1, 2)  # after the learner counted it
    >>> path.current_block(3) is path.block
    True
    """

    def __init__(self):
        self.block: NominalBlock | None = None

    def clear(self) -> None:
        """Forget the block (state changed in a way it does not follow: rebuilt when next
        needed)."""
        self.block = None

    def current_block(self, records: int) -> NominalBlock | None:
        """The block if it is current for a learner that learned ``records`` records, else
        ``None``."""
        block = self.block
        return block if block is not None and block.t == records else None

    def terms(self, scores: list, pairs, classes: list, tables: dict, records: int,
              alpha: float, arc_odds) -> list:
        """``scores`` plus, per class, the log mixed parameter of every known pair of
        ``pairs`` (the base's ``_add_nominals``, all pairs at once; a value or feature never
        seen is skipped, like a missing value).

        Parameters
        ----------
        scores : list
            Per class of ``classes``, the score so far.
        pairs : list
            The record's observed nominal ``(feature, value)`` pairs.
        classes : list
            The learner's classes, in its order.
        tables : dict
            The learner's ``{feature: NominalTable or NumericTable}``.
        records : int
            The number of records the learner learned (the block is rebuilt when it is
            current for another count, or for other classes).
        alpha : float
            The Dirichlet pseudo-count of every cell (no forgetting: in records).
        arc_odds : callable
            ``arc_odds(features, n, r, n_class)``: per feature, the arc's posterior log odds
            as an array, or ``None`` when every feature always depends on the class
            (``n``, ``r`` and ``n_class`` the features' counts, values seen and counts by
            class, class x feature).

        Returns
        -------
        list
        """
        block = self.block
        if block is None or block.t != records or block.classes != classes:
            block = self.block = NominalBlock(tables, classes, records)
        slots = block.locate(pairs)
        if slots.min() < 0:  # a value or feature never seen: skipped, like a missing value
            known = slots >= 0
            features = [f for (f, _), k in zip(pairs, known.tolist()) if k]
            slots = slots[known]
            if not len(slots):
                return scores
        else:
            features = [f for f, _ in pairs]
        rows = block.slot_row[slots]
        n, r, n_class = block.n[rows], block.r[rows], block.n_class[:, rows]
        d = arc_odds(features, n, r, n_class)
        a = alpha  # no forgetting: the unit is 1
        ra = r * a
        mixed = (a + block.joint[:, slots]) / (ra + n_class)  # class x feature
        if d is not None:  # w1 = sigmoid(d), w0 = 1 - w1 (exp overflows to w = 0, exactly)
            with np.errstate(over="ignore"):
                w0, w1 = 1.0 / (1.0 + np.exp(d)), 1.0 / (1.0 + np.exp(-d))
            mixed *= w1
            mixed += w0 * (a + block.n_value[slots]) / (ra + n)
        return (np.asarray(scores) + np.log(mixed).sum(axis=1)).tolist()

    def counted(self, pairs, y, w, records: int) -> None:
        """After a learner that had learned ``records`` records counted a record's nominal
        ``pairs`` of class ``y`` with weight ``w``: the same counts in the block, when it is
        current (else it stays stale)."""
        block = self.current_block(records)
        if block is None or w != 1:
            return
        if y not in block.classes:  # the learner's classes gain y at the end, as here
            block.add_class(y)
        slots = block.locate(pairs)
        if slots.min() < 0:  # new values or features: new slots, counted below
            slots = slots.copy()
            new = np.flatnonzero(slots < 0)
            slots[new] = block.add_slots([pairs[k] for k in new.tolist()])
        block.located = None
        rows = block.slot_row[slots]
        j = block.classes.index(y)
        block.n_value[slots] += 1  # a record's features are distinct: no repeated index
        block.joint[j, slots] += 1
        block.n[rows] += 1
        block.n_class[j, rows] += 1
        block.t = records + 1  # the learner counts the record next
