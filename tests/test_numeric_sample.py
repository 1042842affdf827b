"""A column's sample from a whole table (onlinebma.numeric.sample.ColumnSample): the same
however the table is cut into partitions, a uniform draw when the column is longer than the
bound, and refusals of what does not merge."""

from __future__ import annotations

import numpy as np
import pytest

from onlinebma.numeric.sample import ColumnSample

CLASSES = ("a", "b", "c")


def column(n=500, seed=0):
    rng = np.random.default_rng(seed)
    values = np.where(rng.random(n) < 0.2, 0.0, rng.normal(size=n))
    values[rng.random(n) < 0.15] = np.nan
    values[:7] = np.nan
    return values, rng.integers(0, 3, n)


@pytest.mark.parametrize("cuts", [[250], [1, 2, 3], [100, 101, 400, 499], list(range(50, 500, 50))])
def test_partitions_merge_into_the_sample_of_the_whole_column(cuts):
    values, codes = column()
    whole = ColumnSample.of_column(values, codes, CLASSES, size=80)
    bounds = [0, *cuts, len(values)]
    parts = [ColumnSample.of_column(values[a:b], codes[a:b], CLASSES, size=80, offset=a)
             for a, b in zip(bounds, bounds[1:])]
    parts = [p for p in parts if p is not None]
    merged = parts[0]
    for p in parts[1:]:
        merged = merged.merge(p)
    np.testing.assert_array_equal(merged.sample.rows, whole.sample.rows)
    np.testing.assert_array_equal(merged.sample.values, whole.sample.values)
    np.testing.assert_array_equal(merged.sample.labels, whole.sample.labels)
    assert merged.first == whole.first == 7
    # the tree of merges may pair neighbours in any grouping
    if len(parts) >= 3:
        regrouped = parts[0].merge(parts[1].merge(parts[2]))
        for p in parts[3:]:
            regrouped = regrouped.merge(p)
        np.testing.assert_array_equal(regrouped.sample.rows, whole.sample.rows)


def test_a_long_column_is_drawn_from_everywhere_and_a_short_one_is_kept_whole():
    values, codes = column(2000, seed=1)
    drawn = ColumnSample.of_column(values, codes, CLASSES, size=100)
    observed = np.flatnonzero(~np.isnan(values))
    assert len(drawn.sample.values) == 100
    assert set(drawn.sample.rows) <= set(observed)
    # a uniform draw: about a quarter of the rows in each quarter of the column
    quarters = np.bincount(drawn.sample.rows * 4 // len(values), minlength=4)
    assert quarters.min() >= 12
    np.testing.assert_array_equal(drawn.sample.values, values[drawn.sample.rows])
    np.testing.assert_array_equal(drawn.sample.labels, codes[drawn.sample.rows])
    short = ColumnSample.of_column(values[:150], codes[:150], CLASSES, size=1000)
    np.testing.assert_array_equal(short.sample.rows, observed[observed < 150])


def test_what_does_not_merge_is_refused():
    values, codes = column()
    assert ColumnSample.of_column(np.full(5, np.nan), codes[:5], CLASSES, size=10) is None
    left = ColumnSample.of_column(values[:100], codes[:100], CLASSES, size=10)
    other_classes = ColumnSample.of_column(values[100:], codes[100:], ("c", "b", "a"), size=10,
                                           offset=100)
    with pytest.raises(ValueError, match="same classes"):
        left.merge(other_classes)
    with pytest.raises(ValueError, match="offered twice"):
        left.merge(left)
    smaller = ColumnSample.of_column(values[100:], codes[100:], CLASSES, size=5, offset=100)
    with pytest.raises(ValueError, match="one size"):
        left.merge(smaller)
