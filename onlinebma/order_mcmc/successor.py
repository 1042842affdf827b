"""Count tables for new candidate parents, built a slice at a time while the old ones answer.

When a stream's candidate parents change (:mod:`~onlinebma.order_mcmc.candidates`, chosen
again each time the records learned have doubled), the count tables of the new candidate
families must be counted from every stored record. Done at once this is a stall that grows
with the stream (``python -m experiments order-wide`` measures it). A :class:`Successor`
spreads it: it holds the new tables and the records still to count in them, and counts ``step`` of
them for every record learned (the new records join the queue), so that the tables are complete
after about ``records / (step - 1)`` further records, long before the next doubling. The
step is a 128th of the records, but never more record-set pairs than
:data:`onlinebma.tuning.STEP_PAIRS` (nor fewer than 16 records): what a record costs does not grow
with the stream. The slices' counts
(:meth:`~onlinebma.order_mcmc.incremental.StreamingScores.count`) are added to a running sum as
each slice is counted (one pass over the sum per record: summing 128 slices at the end instead
would be a stall of its own), and the families are scored from the sum once, when the last slice is
in (or when a new code arrives on the way, before the tables make room for it). Until then the old
tables, which count every new record too, answer: exact over the old candidates' space, as they
were before the change.
"""

from __future__ import annotations

import math

import numpy as np

from .. import tuning

__all__ = ["Successor"]



class Successor:
    """New count tables ``scores`` being counted from ``rows`` (module docstring).

    Parameters
    ----------
    scores
        Empty :class:`~onlinebma.order_mcmc.incremental.StreamingScores` of the new
        candidate parents.
    rows
        ``(m, n)`` the stored records to count in them.
    candidates
        The new candidate parents (per node).
    slices
        The records are counted in about this many steps (one per record learned), or more
        when a step would count more than :data:`~onlinebma.tuning.STEP_PAIRS` record-set pairs.

    >>> from onlinebma.order_mcmc.incremental import StreamingScores
    >>> rows = np.arange(40).reshape(20, 2) % 3
    >>> s = Successor(StreamingScores(2, 1), rows, None)
    >>> s.step, s.advance(np.zeros((0, 2), np.int64), 1), s.advance(np.array([[0, 0]]), 1)
    (16, False, True)
    >>> s.scores.n_records
    21
    """

    def __init__(self, scores, rows, candidates, slices: int = 128):
        self.scores = scores
        self.candidates = candidates
        self.step = max(16, min(math.ceil(len(rows) / slices),
                                tuning.STEP_PAIRS // max(1, scores.n_tables)))
        self._queue = [np.asarray(rows, np.int64)]
        self._counted = None  # the counts of the slices counted so far, in the scores' layout

    def __setstate__(self, state):
        parts = state.pop("_parts", None)  # pickles made before the running sum
        if parts is not None:
            state["_counted"] = sum(parts[1:], parts[0]) if parts else None
        self.__dict__.update(state)

    def advance(self, new_rows, k: int) -> bool:
        """Queue ``new_rows`` (records learned since the last call), count ``k * step``
        queued records; return whether every record is counted (the tables then hold them
        all and score them)."""
        if len(new_rows):
            self._queue.append(np.asarray(new_rows, np.int64).reshape(-1, self.scores.n))
        take, budget = [], k * self.step
        while self._queue and budget:
            head = self._queue[0]
            take.append(head[:budget])
            budget -= len(take[-1])
            if len(head) > len(take[-1]):
                self._queue[0] = head[len(take[-1]):]
            else:
                self._queue.pop(0)
        if take:
            rows = np.vstack(take)
            if not self.scores.layout.fits(rows):  # new codes: re-key what is counted
                self._regrow(rows)
            part = self.scores.count(rows)
            if self._counted is None:
                self._counted = part
            else:
                self._counted += part
        if self._queue:
            return False
        self._score_counted()
        return True

    def _score_counted(self) -> None:
        """Add the counts taken so far to the tables, which score them."""
        if self._counted is not None:
            self.scores.add_counts(self._counted)
            self._counted = None

    def _regrow(self, rows) -> None:
        """Grow the tables' layout for ``rows``, adding the counts taken so far first (the
        tables re-key their counts as they grow)."""
        self._score_counted()
        self.scores.reserve(rows.max(axis=0) + 1, (rows < 0).any(axis=0))

