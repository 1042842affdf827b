"""Every value counts: the records kept until a numeric feature's cut points are fixed, and their
replay.

A representation that needs cut points (an interval grid, MDL cuts, or the decision to read a
feature per value) cannot count a numeric value before the feature's sample is complete.
:class:`PendingRecords` keeps those records and, when the host fixes some features' cut points,
gives back (:meth:`PendingRecords.replay`), in arrival order, exactly what a member must still
learn, each record with its **age** for forgetting. A member that adds each replayed record's
cells with weight ``λ^age`` (times the weight its newest record has at that moment) ends with
the counts of the same member given those cut points from the first record, with or without
forgetting (tests/test_numeric_pending.py checks single and pair count tables to 1e-12).

What is kept
    A record is kept while one of its observed numeric features is **pending** (has no cut
    points): its index in the host's stream, its class code, all its numeric values (those of
    fixed features too: their pairs with a pending feature are counted at that feature's
    replay) and one ``payload`` the host chooses (its nominal codes, say). Records whose
    numeric features are all fixed or missing are not kept. Missing values (``None``, NaN) are
    skipped; infinite ones are refused (:mod:`onlinebma.records` refuses them before).

When a feature is complete
    :meth:`PendingRecords.learn` counts each pending feature's observed values and names the
    features whose ``sample_size``-th value this record brought: their samples
    (:meth:`PendingRecords.sample`, the first ``sample_size`` values in arrival order, with
    classes) are complete, and the host should fix their cut points and replay them at once.
    The host may also fix a feature earlier (the end of a stream, or ``learn_many`` on a table
    that takes its cut points from the table itself).

The bound
    A kept record has an observed pending feature, and a pending feature's sample is complete
    at ``sample_size`` values (then fixed at once), so at most ``sample_size`` records are
    kept per pending feature: ``sample_size`` when the numeric features are observed together,
    at most ``sample_size × (number of numeric features)`` in all. Each costs its numeric
    values (a dict of floats) and its payload: about ``sample_size × width`` floats for a table
    without missing values (500 × 54 features: 27,000 values, a few MB as Python floats).

What a replay gives, per kept record with a replayed feature observed (:class:`Replayed`)
    ``new``: the values of the replayed features (their single cells, their pairs with each
    other and with the payload are due); ``known``: the values of features fixed before (their
    pairs with ``new`` are due); the pairs with features still pending are left to those
    features' replays, where the values replayed now are ``known``. Each pair is so counted
    exactly once, at the replay of the later of its two features.

>>> pending = PendingRecords(sample_size=2)
>>> pending.learn(0, label=1, values={"a": 0.5, "b": 2.0})
[]
>>> pending.learn(1, label=0, values={"a": 0.7})
['a']
>>> [(r.index, r.age, r.new, r.known) for r in pending.replay(["a"], learned=2)]
[(0, 1, {'a': 0.5}, {}), (1, 0, {'a': 0.7}, {})]
>>> len(pending), pending.pending
(1, ['b'])
>>> [(r.new, r.known) for r in pending.replay(["b"], learned=5)]
[({'b': 2.0}, {'a': 0.5})]
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..validation import check_int

__all__ = ["PendingRecords", "Replayed"]


class Replayed(NamedTuple):
    """What a member must learn of one kept record when features are fixed.

    Attributes
    ----------
    index : int
        The record's index in the host's stream.
    age : int
        The number of records the host learned after it: its weight is ``λ^age`` times the
        weight the member's newest record has now.
    label : int
        Its class code.
    new : dict
        ``{feature: value}`` of the replayed features observed in it.
    known : dict
        ``{feature: value}`` of its features fixed before this replay.
    payload : object
        What the host gave with the record.
    """

    index: int
    age: int
    label: int
    new: dict
    known: dict
    payload: object


class PendingRecords:
    """The records kept until their numeric features' cut points are fixed (module docstring).

    Parameters
    ----------
    sample_size : int, default 500
        A feature's sample is complete at this many observed values.

    Examples
    --------
    A feature observed in every record is complete at its ``sample_size``-th record:

    >>> pending = PendingRecords(sample_size=3)
    >>> [pending.learn(i, label=i % 2, values={"x": float(i)}) for i in range(3)]
    [[], [], ['x']]
    >>> pending.sample("x")
    (array([0., 1., 2.]), array([0, 1, 0]))
    >>> [r.age for r in pending.replay(["x"], learned=3)], len(pending)
    ([2, 1, 0], 0)
    >>> pending.learn(3, label=1, values={"x": 3.0})  # fixed: nothing kept
    []
    """

    def __init__(self, sample_size: int = 500):
        check_int("sample_size", sample_size, 1)
        self.sample_size = sample_size
        self._records: list = []  # (index, label, {feature: value}, payload), arrival order
        self._observed: dict = {}  # pending feature -> number of its observed values
        self._fixed: dict = {}  # fixed feature -> None (a dict: pickles in a fixed order)
        self._next_index = 0  # indices must increase

    def __len__(self) -> int:
        """The number of records kept."""
        return len(self._records)

    @property
    def pending(self) -> list:
        """The features seen with a value and not fixed, in order of their first value."""
        return list(self._observed)

    def is_fixed(self, feature) -> bool:
        """Whether a feature has been replayed (its cut points are fixed).

        Parameters
        ----------
        feature : hashable
            A feature name.

        Returns
        -------
        bool
        """
        return feature in self._fixed

    def learn(self, index: int, label: int, values: dict, payload=None) -> list:
        """Keep the record if one of its observed numeric features is pending.

        Parameters
        ----------
        index : int
            The record's index in the host's stream (increasing, gaps allowed: the records
            without numeric values need not be given).
        label : int
            Its class code.
        values : dict
            ``{feature: float}``: the record's numeric values (``None`` and NaN are skipped).
        payload : object, default None
            Kept with the record and given back by :meth:`replay`.

        Returns
        -------
        list
            The features whose sample this record completed: fix and replay them before the
            next record (a later replay would also give values beyond the sample, which a
            feature read per value may not have codes for).

        Raises
        ------
        ValueError
            If ``index`` does not exceed the previous one, ``label`` is not a class code or a
            value is not a finite number; nothing is changed then.
        """
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) \
                or index < self._next_index:
            raise ValueError(f"index must be an integer >= {self._next_index} (indices "
                             f"increase), got {index!r}")
        check_int("label", label, 0)
        observed = {}
        for f, v in values.items():
            if v is None or v != v:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                    or not math.isfinite(v):
                raise ValueError(f"feature {f!r} has the value {v!r}; a numeric value must be "
                                 f"a finite number")
            observed[f] = float(v)
        self._next_index = int(index) + 1
        waiting = [f for f in observed if f not in self._fixed]
        if not waiting:
            return []
        self._records.append((int(index), int(label), observed, payload))
        complete = []
        for f in waiting:
            n = self._observed.get(f, 0) + 1
            self._observed[f] = n
            if n == self.sample_size:
                complete.append(f)
        return complete

    def sample(self, feature) -> tuple[np.ndarray, np.ndarray]:
        """A pending feature's sample: its first ``sample_size`` observed values.

        Parameters
        ----------
        feature : hashable
            A pending feature.

        Returns
        -------
        tuple of np.ndarray
            ``(values, labels)`` in arrival order: floats and their class codes.

        Raises
        ------
        KeyError
            If the feature is not pending.
        """
        if feature not in self._observed:
            raise KeyError(f"feature {feature!r} is not pending (never observed, or fixed)")
        taken = [(r[2][feature], r[1]) for r in self._records if feature in r[2]]
        taken = taken[:self.sample_size]
        return (np.array([v for v, _ in taken], dtype=float),
                np.array([c for _, c in taken], dtype=np.int64))

    def replay(self, features, learned: int) -> list:
        """Fix ``features`` and give what members must learn of the kept records.

        Parameters
        ----------
        features : iterable
            Pending features whose cut points the host has just fixed.
        learned : int
            The number of records the host has learned (the ages are ``learned - 1 - index``);
            more than every kept record's index.

        Returns
        -------
        list of Replayed
            In arrival order, one per kept record where a replayed feature is observed.
        """
        features = list(dict.fromkeys(features))
        for f in features:
            if f not in self._observed:
                raise ValueError(f"feature {f!r} is not pending (never observed, or fixed)")
        if isinstance(learned, bool) or not isinstance(learned, (int, np.integer)) \
                or learned < self._next_index:
            raise ValueError(f"learned must be an integer >= {self._next_index} (every kept "
                             f"record learned), got {learned!r}")
        replayed = set(features)
        out = []
        for index, label, values, payload in self._records:
            new = {f: v for f, v in values.items() if f in replayed}
            if new:
                known = {f: v for f, v in values.items() if f in self._fixed}
                out.append(Replayed(index, int(learned) - 1 - index, label, new, known, payload))
        for f in features:
            del self._observed[f]
            self._fixed[f] = None
        self._records = [r for r in self._records
                         if any(f in self._observed for f in r[2])]
        return out
