"""The records of one scoring pass of ISA's scorer, grouped for eq. 9-10's counts.

A pass scores several models over all stored records at once: element ``e = m n + t`` is
record ``t`` under model ``m``. Sorting the elements by (configuration, class, arrival) makes
each (configuration, class) a block, whose running sums give every count of eq. 10 as a
difference within a block; `Pairs` lists the (element, class) pairs whose class the
element's configuration already holds (the others share one value), with where to read their
counts. The rest are small tools of the scorer: radix-sorted stable orders, runs and ranges,
configuration codes, and the packing of a child's counts in 64-bit words.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Pairs", "count_table", "dense", "ranges", "refine", "runs", "stable_order"]


class Pairs:
    """The (element, class) pairs of one scoring pass whose class the element's configuration
    already holds: element ``e = m n + t`` is record ``t`` under model ``m``, ``c[e]`` its
    configuration (distinct across models), ``y[e]`` its class.

    Attributes: ``elem``, ``k`` (block by block, so grouped by model), ``count`` (earlier
    records of class ``k`` in the configuration), ``n_c`` per element (earlier records in its
    configuration),
    ``order`` (the elements by configuration, class, arrival: each (configuration, class)
    a block), ``first`` (the blocks' starts in ``order``) and ``last`` per pair (the position
    in ``order`` of the last of its ``count`` records).

    ``window``: the records counted for an element at arrival position ``t[e]`` are only those
    at ``t[e] - window .. t[e] - 1`` (the sliding score, `onlinebma.isa.scorer`): ``count``
    and ``n_c`` count those, the pairs are the classes present among them, and ``before``
    per pair is the position in ``order`` of the last of the block's records before them
    (-1: none), whose running sums are taken away from those at ``last``. Elements at
    ``t < skip`` (records counted, not scored) have no pairs then.
    """

    def __init__(self, c: np.ndarray, y: np.ndarray, K: int, t: np.ndarray | None = None,
                 window: int | None = None, skip: int = 0):
        size = c.size
        by_config = stable_order(c)  # (configuration, arrival)
        starts, lengths = runs(c[by_config])
        rank = np.empty(size, dtype=np.int64)  # position of each element in ``by_config``
        rank[by_config] = np.arange(size)
        self.n_c = rank - np.repeat(starts, lengths)[rank]
        self.before = None
        if window is not None:  # only the earlier records at t - window .. t - 1 count
            span = int(t.max(initial=0)) + 1
            oldest = np.maximum(t - window, 0)
            self.n_c -= _earlier(c[by_config] * span + t[by_config], c * span + oldest,
                                 np.repeat(starts, lengths)[rank])
        key = c * K + y
        self.order = stable_order(key)
        first, sizes = runs(key[self.order])
        self.first = first
        at = rank[self.order]  # configuration order, rising within each block
        # A block's class is present for the elements after its first in the configuration:
        # the positions q of ``by_config`` in ``head + 1 .. end - 1``, block by block.
        head = at[first]
        end = (np.repeat(starts + lengths, lengths))[head]
        length = end - head - 1
        b = np.repeat(np.arange(first.size), length)
        q = ranges(head + 1, end)
        # Records of block b before q: its first, and those of its class in between.
        mine = key[by_config].take(q) == key[self.order[first]].take(b)
        between = np.cumsum(mine) - mine
        run = (np.cumsum(length) - length)[length > 0]  # where each block's positions start
        count = 1 + between - np.repeat(between[run], length[length > 0])
        self.elem, self.count = by_config[q], count
        self.k = (key[self.order[first]] % K).take(b)
        self.last = first.take(b) + count - 1
        if window is not None:
            # Block b's records before t - window: their counts are taken away (``before``:
            # the position in ``order`` of the last of them, -1 for none); the pairs left
            # with no record in the window are those of a class absent from it.
            block = np.repeat(np.arange(first.size), sizes)
            gone = _earlier(block * span + t[self.order],
                            b * span + np.maximum(t.take(self.elem) - window, 0), first.take(b))
            keep = (count > gone) & (t.take(self.elem) >= skip)
            self.elem, self.k, self.last = self.elem[keep], self.k[keep], self.last[keep]
            self.count = (count - gone)[keep]
            self.before = np.where(gone > 0, first.take(b) + gone - 1, -1)[keep]


def _earlier(keys: np.ndarray, queries: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """For each query, the sorted ``keys`` below it from ``starts`` on (a group's records
    before a position: keys are group * span + position)."""
    return np.searchsorted(keys, queries) - starts


def runs(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Starts and lengths of the runs of equal values of ``keys``."""
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    return starts, np.diff(np.append(starts, keys.size))


def ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The integers of the ranges ``starts[i]:ends[i]``, concatenated."""
    keep = ends > starts
    starts, lengths = starts[keep], (ends - starts)[keep]
    if not starts.size:
        return np.empty(0, dtype=np.int64)
    steps = np.ones(int(lengths.sum()), dtype=np.int64)
    steps[0] = starts[0]
    steps[np.cumsum(lengths)[:-1]] = starts[1:] - (starts[:-1] + lengths[:-1] - 1)
    return np.cumsum(steps)


def stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for non-negative integer keys, by numpy's radix sort
    (used for 16-bit keys) in one or two passes when the keys allow it."""
    top = int(keys.max(initial=0))
    if top < 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    if top < 1 << 32:  # least significant half first, then the most significant: stable
        low = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
        return low[np.argsort((keys[low] >> 16).astype(np.uint16), kind="stable")]
    return np.argsort(keys, kind="stable")


def dense(c: np.ndarray, size: int) -> np.ndarray:
    """Codes ``c`` in ``0..size-1`` renumbered ``0..C-1`` (C = number of distinct codes), in
    the order of the codes."""
    if size > 4 * c.size + 1024:
        return np.unique(c, return_inverse=True)[1].reshape(-1)
    present = np.bincount(c, minlength=size) > 0
    return (np.cumsum(present) - 1)[c]


def refine(c: np.ndarray, size: int, v: np.ndarray, card: int) -> tuple[np.ndarray, int]:
    """Configurations ``c`` (codes below ``size``) refined by one more parent's codes ``v``
    (below ``card``), ordered by ``c`` first; returns the codes and their bound."""
    if size * card >= 2**62:
        c = dense(c, size)
        size = int(c.max(initial=0)) + 1
    return c * card + v, size * card


def count_table(r: int, b: int, per: int) -> np.ndarray:
    """``(words, r + 1)``: column v is what a record with value v of an r-valued child adds
    to each of the child's words of counts (`Scorer._pair_terms`): 1 in field ``v %
    per`` (b bits each) of word ``v // per``, and 1 in the top field of every word (the child
    observed). Column r, a missing value, adds nothing."""
    v = np.arange(r)
    table = np.zeros((-(-r // per), r + 1), dtype=np.uint64)
    table[v // per, v] = np.left_shift(np.uint64(1), (v % per * b).astype(np.uint64))
    table[:, :r] += np.uint64(1) << np.uint64(b * per)
    return table
