"""Reading numeric features from a whole table (``learn_many`` takes its cut points from the table
itself) and samples that partitions agree on (issue 38 items 1 and 5)."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

from onlinebma.numeric.cuts import distinct_counts
from onlinebma.numeric.grids import Grids
from onlinebma.numeric.pending import PendingRecords
from onlinebma.numeric.reading import NumericSettings, code_column, read_sample, read_table
from onlinebma.numeric.sample import Sample
from onlinebma.numeric.values import ValueCodes
from onlinebma.records import FeatureKinds, numeric_values
from onlinebma.table import interval_index


def small_table(n: int = 120, seed: int = 0):
    """A 120-row numeric table: today's learners give it the class prior (its values are all
    in the warm-up); read from the table itself every value has an interval."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = pd.DataFrame({
        "width": rng.normal(y * 2.0, 1.0),
        "gain": np.where(rng.random(n) < 0.9, 0.0, rng.exponential(1000.0, n)),
        "stars": rng.integers(1, 4, n).astype(float),
        "empty": np.full(n, np.nan),
    })
    X.loc[3, "width"] = None
    return X, y


def test_a_table_is_read_from_its_own_values():
    X, y = small_table()
    kinds, _ = FeatureKinds().split_frame(X)
    columns = {f: numeric_values(X[f]) for f in kinds}
    readings = read_table(columns, y, n_classes=2)
    assert set(readings) == {"width", "gain", "stars"}  # "empty" has no value: no reading
    assert isinstance(readings["stars"], ValueCodes)
    width, gain = readings["width"], readings["gain"]
    assert isinstance(width, Grids) and gain.masses.tolist() == [0.0]
    codes = code_column(width, columns["width"])
    assert codes.shape == (120, 6)
    assert (codes[3] == -1).all() and (np.delete(codes, 3, axis=0) >= 0).all()
    # the cut points are the table's: the 5-interval grid splits its own values evenly
    sizes = np.bincount(codes[~np.isnan(columns["width"]), 1])
    assert sizes.size == 5 and sizes.max() - sizes.min() <= 1
    # the class-aware member found the class boundary of this table
    mdl = width.cuts[width.members.index("MDL")]
    assert mdl.size >= 1 and 0.0 < mdl[0] < 2.0
    stars = code_column(readings["stars"], columns["stars"])
    assert stars.shape == (120, 1)
    assert np.array_equal(np.array(readings["stars"].values)[stars[:, 0]], columns["stars"])


def test_code_column_equals_a_search_per_member():
    X, y = small_table(seed=1)
    column = numeric_values(X["gain"])
    reading = read_sample(column, y, 2, NumericSettings(resolutions=(3, 8)))
    codes = code_column(reading, column)
    for m, cuts in enumerate(reading.cuts):
        assert np.array_equal(codes[:, m], interval_index(column, cuts))
    with pytest.raises(TypeError, match="Grids or ValueCodes"):
        code_column(object(), column)


def test_read_sample_counts_each_value_with_its_class():
    x = np.array([1.0, 2.0, 2.0, np.nan, 3.0])
    labels = np.array([0, 1, 1, 0, 0])
    grids = read_sample(x, labels, 2, NumericSettings(resolutions=(2,), min_count=3))
    assert isinstance(grids, Grids)
    values, counts = distinct_counts(x)
    class_counts = np.array([[1, 0], [0, 2], [1, 0]])
    assert grids == Grids.from_sample(values, class_counts, (2,))


@pytest.mark.parametrize("call, message", [
    (lambda: read_sample(np.array([np.nan]), np.array([0]), 2), "no observed value"),
    (lambda: read_sample(np.array([1.0]), np.array([2]), 2), "class codes"),
    (lambda: read_sample(np.array([1.0, 2.0]), np.array([0]), 2), "one length"),
    (lambda: read_sample(np.array([1.0, np.inf]), np.array([0, 0]), 2), "infinite"),
    (lambda: read_table({"a": np.ones(3)}, np.zeros(2, int), 1), "shape"),
    (lambda: NumericSettings(resolutions=[3, 5]), "resolutions"),
    (lambda: NumericSettings(class_aware=1), "class_aware"),
    (lambda: NumericSettings(sample_size=0), "sample_size"),
    (lambda: NumericSettings(max_values=0), "max_values"),
    (lambda: NumericSettings(min_count=0), "min_count"),
])
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_records_refuse_infinities_before_the_numeric_layer():
    with pytest.raises(ValueError, match="infinite"):
        FeatureKinds().split({"x": float("inf")})
    with pytest.raises(ValueError, match="infinite"):
        FeatureKinds().split_frame(pd.DataFrame({"x": [1.0, -np.inf]}))


def _frame(n: int, seed: int):
    rng = np.random.default_rng(seed)
    values = np.where(rng.random(n) < 0.2, np.nan, rng.normal(size=n))
    return np.arange(n), values, rng.integers(0, 3, n)


@pytest.mark.parametrize("spread", [False, True])
def test_partition_samples_merge_to_the_whole_frame_s(spread):
    rows, values, labels = _frame(3000, seed=2)
    whole = Sample(size=200, spread=spread)
    whole.add_many(rows, values, labels)
    bounds = [0, 100, 1100, 1200, 3000]
    parts = []
    for a, b in zip(bounds, bounds[1:]):
        part = Sample(size=200, spread=spread)
        part.add_many(rows[a:b], values[a:b], labels[a:b])
        parts.append(part)
    merged = parts[2]
    for part in (parts[3], parts[0], parts[1]):
        merged.merge(part)
    assert np.array_equal(merged.rows, whole.rows)
    assert np.array_equal(merged.values, whole.values)
    assert np.array_equal(merged.labels, whole.labels)
    assert whole.rows.size == 200 and not np.isnan(whole.values).any()
    if spread:  # uniform over the frame, not its first rows
        assert whole.rows.max() > 2500 and 1000 < whole.rows.mean() < 2000
    else:
        assert whole.rows.max() < 300


def test_the_first_rows_sample_is_the_stream_s_sample():
    rows, values, labels = _frame(1000, seed=3)
    pending = PendingRecords(sample_size=150)
    for r, v, c in zip(rows, values, labels):
        if pending.learn(int(r), int(c), {"x": v}):
            break
    stream_values, stream_labels = pending.sample("x")
    frame = Sample(size=150)
    for a in range(0, 1000, 77):
        part = Sample(size=150)
        part.add_many(rows[a:a + 77], values[a:a + 77], labels[a:a + 77])
        frame.merge(part)
    assert np.array_equal(frame.values, stream_values)
    assert np.array_equal(frame.labels, stream_labels)
    settings = NumericSettings(resolutions=(3, 5))
    assert read_sample(frame.values, frame.labels, 3, settings) == read_sample(
        stream_values, stream_labels, 3, settings)


def test_sample_pickles_and_refuses_bad_input():
    sample = Sample(size=3)
    sample.add_many(np.array([0, 1]), np.array([1.0, 2.0]), np.array([0, 1]))
    copy = pickle.loads(pickle.dumps(sample))
    assert np.array_equal(copy.rows, sample.rows) and copy.size == 3
    before = pickle.dumps(sample)
    for call, message in [
        (lambda: sample.add_many(np.array([1]), np.array([5.0]), np.array([0])), "twice"),
        (lambda: sample.add_many(np.array([-1]), np.array([5.0]), np.array([0])), "row"),
        (lambda: sample.add_many(np.array([7]), np.array([np.inf]), np.array([0])), "finite"),
        (lambda: sample.add_many(np.array([7]), np.array([1.0]), np.array([-1])), "class"),
        (lambda: sample.add_many(np.array([7]), np.array([1.0, 2.0]), np.array([0])), "length"),
        (lambda: sample.merge(Sample(size=4)), "one size"),
    ]:
        with pytest.raises(ValueError, match=message):
            call()
        assert pickle.dumps(sample) == before
    with pytest.raises(ValueError, match="size"):
        Sample(size=0)


def test_adult_s_capital_gain_keeps_its_zero_and_cuts_the_rest():
    """On adult (shipped), capital-gain is 0 in about 92 % of records: equal-frequency quantiles
    collapse to the one cut 0, while every grid keeps {0} and cuts the positive values."""
    from onlinebma.datasets import UCIDataset

    X, y = UCIDataset("adult").to_frame()
    gain = numeric_values(X["capital-gain"])
    assert 0.9 < np.mean(gain == 0) < 0.93
    assert np.unique(np.quantile(gain, np.arange(1, 5) / 5)).tolist() == [0.0]
    reading = read_table({"capital-gain": gain}, pd.factorize(y)[0], 2)["capital-gain"]
    codes = code_column(reading, gain)
    for m, name in enumerate(reading.members[:-1]):  # the grids
        b = int(name.split()[0])
        zero = codes[gain == 0, m]
        assert (zero == zero[0]).all() and not np.isin(zero[0], codes[gain > 0, m])
        # B - 1 groups of the positive values (fewer at 32, where repeated values such as
        # 15024 and 99999 merge boundaries)
        groups = len(np.unique(codes[gain > 0, m]))
        assert groups == b - 1 if b <= 16 else groups >= 20
