"""Numbers that are values (issue 38 item 2): when a numeric feature is read per value, new values
joining, and the exact switch to intervals when too many arrive."""

from __future__ import annotations

import pickle
from collections import defaultdict

import numpy as np
import pytest

from onlinebma.numeric.reading import NumericSettings, read_sample
from onlinebma.numeric.values import ValueCodes, reads_as_values


@pytest.mark.parametrize("sample, expected", [
    ([0.0, 1.0, 2.0, 0.0, 1.0, 2.0], True),  # integer codes
    ([0.0, 0.5, 1.0] * 10, True),
    ([0.0, 0.5, 1.0] * 10 + [0.25], False),  # a value seen once: probably more to come
    (list(np.random.default_rng(0).normal(size=200)), False),  # measured
    ([float(v) for v in range(20)] * 5, False),  # too many values (> 16)
    ([7.0, 7.0], True),  # constant
])
def test_which_samples_are_read_per_value(sample, expected):
    reading = read_sample(np.array(sample), np.zeros(len(sample), dtype=int), 1)
    assert isinstance(reading, ValueCodes) == expected
    _, counts = np.unique(sample, return_counts=True)
    assert reads_as_values(counts) == expected


def test_the_rule_s_parameters():
    counts = np.array([3, 3, 2])
    assert not reads_as_values(counts, max_values=2)
    assert not reads_as_values(counts, min_count=3)
    assert reads_as_values(np.array([1, 1]), min_count=1)
    assert not reads_as_values(np.array([], dtype=int))
    settings = NumericSettings(max_values=2)
    assert not isinstance(read_sample(np.repeat([1.0, 2.0, 3.0], 4), np.zeros(12, int), 1,
                                      settings), ValueCodes)


def test_codes_in_order_of_first_appearance_and_new_values_join():
    codes = ValueCodes.from_sample([2.0, 1.0, 2.0, np.nan, 1.0], [0, 1, 1, 0, 0], n_classes=2,
                                   max_values=3)
    assert codes.values == [2.0, 1.0]
    assert codes.class_counts().tolist() == [[1, 1], [1, 1]]
    assert codes.learn(5.0, 1) == 2  # joins, like a nominal value
    assert codes.learn(1.0, 0) == 1
    assert codes.class_counts().tolist() == [[1, 1], [2, 1], [0, 1]]
    before = pickle.dumps(codes)
    assert codes.learn(6.0, 0) is None  # a 4th value: no code, nothing changed
    assert pickle.dumps(codes) == before
    assert codes.code(6.0) == -1 and codes.code(-0.0) == -1
    assert codes.code_many(np.array([5.0, 6.0, np.nan, 2.0])).tolist() == [2, -1, -1, 0]


def test_missing_values_are_skipped_and_infinite_ones_refused():
    codes = ValueCodes()
    assert codes.learn(None, 0) == codes.learn(float("nan"), 1) == -1
    assert codes.values == [] and codes.class_counts().size == 0
    for bad, label in [(float("inf"), 0), (1.0, -1), (1.0, 0.5)]:
        with pytest.raises(ValueError):
            codes.learn(bad, label)
    assert codes.values == []


def test_minus_zero_is_zero():
    codes = ValueCodes()
    assert codes.learn(0.0, 0) == codes.learn(-0.0, 0) == 0


def _stream(n: int, switch_at: int, seed: int):
    """Integer codes, then measured values from ``switch_at`` on; a nominal feature beside."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    x = np.where(np.arange(n) < switch_at, rng.integers(0, 4, n) + labels,
                 rng.normal(labels * 2.0, 1.0))
    colour = rng.choice(["red", "blue"], n)
    return x.astype(float), labels, colour


@pytest.mark.parametrize("decay", [1.0, 0.95])
def test_switching_to_intervals_sums_value_cells_exactly(decay):
    """Per-value cells summed into the switch's intervals equal the cells of a learner that had
    those intervals from the first record (class x interval and class x interval x nominal)."""
    x, labels, colour = _stream(400, switch_at=150, seed=1)
    codes = ValueCodes(max_values=5)
    cells = defaultdict(float)  # ("value", code, c) / ("pair", code, c, colour) while per value
    grids = intervals = None
    for xi, c, v in zip(x, labels, colour):
        for key in cells:
            cells[key] *= decay
        if grids is None:
            code = codes.learn(xi, int(c))
            if code is None:  # the switch: sum the value cells into every member's intervals
                grids, intervals = codes.to_grids(resolutions=(3, 8))
                switched = defaultdict(float)
                for key, w in cells.items():
                    for m, i in enumerate(intervals[key[1]]):
                        switched[(key[0], (m, int(i)), *key[2:])] += w
                cells = switched
        if grids is not None:
            for m, i in enumerate(grids.code(xi)):
                cells[("value", (m, int(i)), c)] += 1.0
                cells[("pair", (m, int(i)), c, v)] += 1.0
        else:
            cells[("value", code, c)] += 1.0
            cells[("pair", code, c, v)] += 1.0
    assert grids is not None and len(codes.values) == 5
    reference = defaultdict(float)
    for xi, c, v in zip(x, labels, colour):
        for key in reference:
            reference[key] *= decay
        for m, i in enumerate(grids.code(xi)):
            reference[("value", (m, int(i)), c)] += 1.0
            reference[("pair", (m, int(i)), c, v)] += 1.0
    keys = set(cells) | set(reference)
    assert max(abs(cells.get(k, 0.0) - reference.get(k, 0.0)) for k in keys) <= 1e-12
    # the frequent values stay intervals of their own
    assert set(grids.masses.tolist()) <= set(codes.values) and grids.masses.size >= 3


def test_to_grids_uses_the_counts_per_class():
    codes = ValueCodes.from_sample([0.0] * 10 + [1.0] * 10 + [2.0] * 10 + [3.0] * 10,
                                   [0] * 20 + [1] * 20, n_classes=2)
    grids, intervals = codes.to_grids(resolutions=(2,))
    mdl = grids.cuts[grids.members.index("MDL")]
    assert 1.0 <= mdl[mdl < 2.0].max() < 2.0  # the class split, between 1 and 2
    assert intervals.shape == (4, 2)
    with pytest.raises(ValueError, match="nothing to cut"):
        ValueCodes().to_grids()


def test_pickling_and_equality():
    codes = ValueCodes.from_sample([1.0, 1.0, 3.0, 3.0], [0, 1, 0, 1], n_classes=2)
    copy = pickle.loads(pickle.dumps(codes))
    assert copy == codes
    copy.learn(4.0, 0)
    assert copy != codes


@pytest.mark.parametrize("call, message", [
    (lambda: ValueCodes(max_values=0), "max_values"),
    (lambda: ValueCodes.from_sample([1.0, 2.0, 3.0], [0, 0, 0], 1, max_values=2), "distinct"),
    (lambda: ValueCodes.from_sample([1.0, 2.0], [0, 2], 2), "class codes"),
    (lambda: ValueCodes.from_sample([1.0, 2.0], [0], 2), "one length"),
    (lambda: reads_as_values(np.array([2]), max_values=0), "max_values"),
])
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
