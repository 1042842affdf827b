"""Numbers that are values (issue 38 item 2): when a numeric feature is read per value, and a
value not in its sample coded as the gap between sample values it falls in (a fixed reading of
at most 2k + 1 codes)."""

from __future__ import annotations

import math
import pickle

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


def test_codes_in_order_of_first_appearance_and_other_values_by_their_gap():
    codes = ValueCodes.from_sample([2.0, 1.0, 2.0, np.nan, 1.0], [0, 1, 1, 0, 0], n_classes=2,
                                   max_values=3)
    assert codes.values == [2.0, 1.0] and codes.n_codes == 5
    assert codes.class_counts().tolist() == [[1, 1], [1, 1]]
    assert codes.gaps() == [(-math.inf, 1.0), (1.0, 2.0), (2.0, math.inf)]
    assert [codes.code(x) for x in (2.0, 1.0, 0.5, 1.5, 5.0, 1e300, -1e300)] == \
        [0, 1, 2, 3, 4, 4, 2]
    before = pickle.dumps(codes)
    assert codes.code_many(np.array([5.0, 2.0, np.nan, 1.5])).tolist() == [4, 0, -1, 3]
    assert pickle.dumps(codes) == before  # coding changes nothing


def test_code_many_is_code_of_each_value():
    rng = np.random.default_rng(0)
    sample = rng.integers(0, 6, 200).astype(float) / 2
    codes = ValueCodes.from_sample(sample, np.zeros(200, dtype=int), n_classes=1)
    x = np.concatenate([rng.uniform(-1.0, 4.0, 300), sample[:50], [np.nan, -0.0]])
    assert codes.code_many(x).tolist() == [codes.code(v) for v in x.tolist()]
    assert set(codes.code_many(x).tolist()) == set(range(codes.n_codes)) | {-1}


def test_missing_values_are_skipped_and_infinite_ones_refused():
    codes = ValueCodes.from_sample([1.0, 1.0], [0, 0], n_classes=1)
    assert codes.code(None) == codes.code(float("nan")) == -1
    for bad in (math.inf, -math.inf):
        with pytest.raises(ValueError, match="finite"):
            codes.code(bad)
        with pytest.raises(ValueError, match=r"finite, got -?inf$"):
            codes.code_many(np.array([1.0, bad]))


def test_minus_zero_is_zero():
    codes = ValueCodes.from_sample([-0.0, 0.0, 1.0, 1.0], [0, 0, 0, 0], n_classes=1)
    assert codes.values == [0.0, 1.0] and math.copysign(1.0, codes.values[0]) == 1.0
    assert codes.code(0.0) == codes.code(-0.0) == 0
    assert codes.code_many(np.array([-0.0, 0.0])).tolist() == [0, 0]
    assert codes.gaps()[0] == (-math.inf, 0.0)


def test_pickling_and_equality():
    codes = ValueCodes.from_sample([1.0, 1.0, 3.0, 3.0], [0, 1, 0, 1], n_classes=2)
    copy = pickle.loads(pickle.dumps(codes))
    assert copy == codes and copy.code(2.0) == codes.code(2.0)
    assert codes != ValueCodes.from_sample([1.0, 1.0, 4.0, 4.0], [0, 1, 0, 1], n_classes=2)


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
