"""Every numeric value counts in the tree-augmented learners (onlinebma.tan.numbers).

The records that arrive before a numeric feature's cut points are fixed are kept and replayed:
a learner's counts then equal, to rounding, those of the same learner given those cut points
from the first record (``fix_numeric`` before learning), with and without forgetting, with
missing values, a feature first seen mid-stream, new classes and values; without forgetting
its predictions are equal too. ``learn_many`` counts a small table's numbers (iris is far from
the class prior), merging needs equal cut points and refuses kept records, and bad cut points
are refused with the model unchanged.
"""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pandas as pd
import pytest

from onlinebma.numeric import read_table
from onlinebma.tan import AODE, TAN, ModelAveragedTAN, coding
from onlinebma.tan.gaussian import GAUSSIANS
from onlinebma.tan.numbers import NumericReading


def stream(n, seed=0):
    """Two nominal features, numeric ``z`` (from record 0, a point mass at 0) and ``w`` (from
    n/3 on), missing values of every kind, a third class and a new nominal value after n/2."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(n):
        y = int(rng.integers(0, 3 if t > n // 2 else 2))
        x = {"a": f"a{(y + rng.integers(0, 2)) % 3}",
             "b": f"b{rng.integers(0, 3 if t > n // 2 else 2)}",
             "z": 0.0 if rng.random() < 0.3 else float(rng.normal(y, 1.0))}
        if t > n // 3:
            x["w"] = float(rng.normal(-y, 2.0))
        out.append((with_missing(x, rng, 0.05, 0.03), f"y{y}"))
    return out


def with_missing(x, rng, absent, none):
    """``x`` with each value absent with probability ``absent``, else missing (``None`` for
    the nominal a and b, NaN for numbers) with probability ``none``."""
    for f in list(x):
        u = rng.random()
        if u < absent:
            del x[f]
        elif u < absent + none:
            x[f] = None if f in ("a", "b") else math.nan
    return x


def tables(model, member=0):
    """Every count table of a learner by feature name: class counts, singles and pairs."""
    counts = model.counts
    names = list(counts.features_)
    code = {f: counts.feature_code(f) for f in names}
    out = {"classes": counts.class_counts(member)}
    for f in names:
        out[f] = counts.single(code[f], member)
    for i, f in enumerate(sorted(names)):
        for g in sorted(names)[i + 1:]:
            out[f, g] = counts.pair(code[f], code[g], member)
    return out


def assert_same_tables(got, want, rtol=1e-10):
    assert set(got) == set(want)
    for key in want:
        g, w = got[key], want[key]
        for a, b in zip(g, w) if isinstance(w, tuple) else [(g, w)]:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12, err_msg=str(key))


LEARNERS = [
    (ModelAveragedTAN, {"numeric": "5 intervals", "aode": False}),
    (ModelAveragedTAN, {}),  # intervals and Gaussian, equal counts (not weights: below)
    (ModelAveragedTAN, {"structures": "trees", "numeric": "MDL", "aode": False}),
    (ModelAveragedTAN, {"decay": 0.95}),
    (ModelAveragedTAN, {"decay": "auto", "numeric": "8 intervals"}),
    (TAN, {}),
    (TAN, {"decay": 0.9}),
    (AODE, {"numeric": "3 intervals"}),
]


@pytest.mark.parametrize("make, params", LEARNERS, ids=repr)
def test_replay_equals_cut_points_from_the_first_record(make, params):
    data = stream(260, seed=1)
    late = make(sample_size=25, **params)
    for t, (x, y) in enumerate(data):
        if t % 3:
            late.predict_proba_one(x)
        late.learn_one(x, y)
    readings = late.numeric_readings
    assert list(readings) == ["z", "w"]  # both samples completed in the stream
    early = make(sample_size=25, **params)
    early.fix_numeric(readings)
    for x, y in data:
        early.learn_one(x, y)
    members = early.counts.n_members
    for r in range(members):
        assert_same_tables(tables(late, r), tables(early, r))
    # without forgetting and with one member, the predictions are equal too; with members,
    # their weights moved with predictions made before the cut points existed
    if params.get("decay", 1.0) == 1.0 and params.get("numeric", "auto") != "auto" \
            and not params.get("aode", True):
        for x, _ in data[-20:]:
            p, q = late.predict_proba_one(x), early.predict_proba_one(x)
            assert list(p) == list(q)
            np.testing.assert_allclose(list(p.values()), list(q.values()), rtol=0, atol=1e-10)


def test_replayed_counts_are_every_value():
    """Nothing is dropped: the single counts of z sum to its observed values."""
    data = stream(200, seed=2)
    model = ModelAveragedTAN(aode=False, sample_size=40)
    for x, y in data:
        model.learn_one(x, y)
    observed = sum(1 for x, _ in data if x.get("z") is not None and x["z"] == x["z"])
    single, margin = model.counts.single(model.counts.feature_code("z"))
    assert single.sum() == observed == margin.sum()


def test_cut_points_are_fixed_at_the_sample_size_th_value():
    model = TAN(sample_size=30)
    data = stream(90, seed=3)  # w from record 31 on
    for x, y in data[:20]:
        model.learn_one(x, y)
    assert model.numeric_readings == {}  # z has fewer than 30 values: no cut points yet
    for x, y in data[20:50]:
        model.learn_one(x, y)
    assert list(model.numeric_readings) == ["z"]  # w has not 30 values yet


@pytest.mark.parametrize("make", [ModelAveragedTAN, TAN, AODE])
def test_small_numeric_table_learns_its_numbers(make):
    """iris, 5 folds, learn_many + predict_proba_many, defaults: far below ln 3 (the class
    prior's log loss) and far above chance."""
    frame = pd.read_csv("/work/shared/datasets/iris.csv")
    X, y = frame.drop(columns="class"), frame["class"]
    folds = np.random.default_rng(0).permutation(len(frame)) % 5
    loss = correct = 0.0
    for k in range(5):
        model = make()
        train, test = folds != k, folds == k
        model.learn_many(X[train].reset_index(drop=True), y[train].reset_index(drop=True))
        p = model.predict_proba_many(X[test])
        truth = y[test].to_numpy()
        loss -= sum(math.log(max(p.loc[i, c], 1e-15)) for i, c in zip(p.index, truth))
        correct += (p.idxmax(axis=1).to_numpy() == truth).sum()
    assert loss / len(frame) < 0.4 < math.log(3)
    assert correct / len(frame) > 0.85


def test_learn_many_on_a_small_table_equals_learning_its_rows_then_fixing():
    data = stream(120, seed=4)
    frame = pd.DataFrame([x for x, _ in data])
    labels = pd.Series([y for _, y in data])
    batch = ModelAveragedTAN(aode=False)  # sample_size 200 > 120 rows: the table ends the samples
    batch.learn_many(frame, labels)
    assert list(batch.numeric_readings) == ["z", "w"]
    rows = ModelAveragedTAN(aode=False)
    for x, y in data:
        rows.learn_one(x, y)
    assert rows.numeric_readings == {}
    rows.fix_numeric(batch.numeric_readings)
    assert_same_tables(tables(rows), tables(batch))
    # with forgetting, learn_many runs the rows and fixes what is still pending at the end
    slow = ModelAveragedTAN(aode=False, decay=0.99)
    slow.learn_many(frame, labels)
    assert list(slow.numeric_readings) == ["z", "w"]


def test_learn_many_takes_cut_points_from_the_whole_table():
    """A table shorter than the bound: every observed value of the column is the sample (not
    its first sample_size values, as a stream takes)."""
    data = stream(300, seed=5)
    frame = pd.DataFrame([x for x, _ in data])
    labels = pd.Series([y for _, y in data])
    model = TAN(sample_size=50)
    model.learn_many(frame, labels)
    z = frame["z"].to_numpy(dtype=float)
    codes = pd.factorize(labels)[0]  # class codes: first appearance
    want = NumericReading("5 intervals", 50).grids_from_sample(z, codes, 3)
    assert model.numeric_readings["z"] == want


@pytest.mark.parametrize("params", [{}, {"decay": 0.99}, {"decay": "auto"}],
                         ids=["auto at decay 1", "forgetting", "decay auto"])
def test_learn_many_row_by_row_takes_cut_points_from_the_whole_table_too(params):
    """The learners whose learn_many goes row by row (several members, or forgetting) cut a
    table's numbers as the vectorised path does: from the whole column, not from its first
    sample_size values (which a stream of the same rows takes)."""
    data = stream(300, seed=5)
    frame = pd.DataFrame([x for x, _ in data])
    labels = pd.Series([y for _, y in data])
    model = ModelAveragedTAN(aode=False, sample_size=50, **params)
    model.learn_many(frame, labels)
    z = frame["z"].to_numpy(dtype=float)
    codes = pd.factorize(labels)[0]
    readings = model.numeric_readings["z"]  # a tuple of Grids with several grids
    readings = readings if isinstance(readings, tuple) else (readings,)
    for representation in set(model.representation_posterior()) - set(GAUSSIANS):
        want = NumericReading(representation, 50).grids_from_sample(z, codes, 3)
        assert want in readings


def test_learn_many_samples_a_long_column_uniformly(monkeypatch):
    """A column longer than the bound: the cut points of the values in the bound's rows of
    smallest SplitMix64 priority (written out here), a draw from the whole column."""
    monkeypatch.setattr(coding, "TABLE_SAMPLE_SIZE", 40)
    data = stream(300, seed=9)
    frame = pd.DataFrame([x for x, _ in data])
    labels = pd.Series([y for _, y in data])
    model = TAN()
    model.learn_many(frame, labels)
    z = frame["z"].to_numpy(dtype=float)
    rows = np.flatnonzero(~np.isnan(z))
    mask = (1 << 64) - 1

    def priority(i):  # SplitMix64's finaliser of the row index
        v = (i + 0x9E3779B97F4A7C15) & mask
        v = ((v ^ (v >> 30)) * 0xBF58476D1CE4E5B9) & mask
        v = ((v ^ (v >> 27)) * 0x94D049BB133111EB) & mask
        return v ^ (v >> 31)

    chosen = sorted(sorted(rows.tolist(), key=priority)[:40])
    assert rows[-1] > 250 and max(chosen) > 150  # drawn from the whole column
    codes = pd.factorize(labels)[0]
    want = NumericReading("5 intervals", 200).grids_from_sample(z[chosen], codes[chosen], 3)
    assert model.numeric_readings["z"] == want


def test_learn_many_after_learn_one_keeps_the_kept_values_first():
    """Records kept by learn_one count: the sample is their values, then the table's."""
    data = stream(200, seed=10)
    model = TAN(sample_size=100)
    for x, y in data[:30]:
        model.learn_one(x, y)
    assert model.numeric_readings == {}
    frame = pd.DataFrame([x for x, _ in data[30:]])
    labels = pd.Series([y for _, y in data[30:]])
    model.learn_many(frame, labels)
    everything = pd.DataFrame([x for x, _ in data])
    z = everything["z"].to_numpy(dtype=float)
    codes = pd.factorize(pd.Series([y for _, y in data]))[0]
    want = NumericReading("5 intervals", 100).grids_from_sample(z, codes, 3)
    assert model.numeric_readings["z"] == want
    fixed = TAN()
    fixed.fix_numeric(model.numeric_readings)
    for x, y in data:
        fixed.learn_one(x, y)
    assert_same_tables(tables(fixed), tables(model))


def test_merge_needs_the_same_cut_points():
    data = stream(240, seed=6)
    left, right = (ModelAveragedTAN(aode=False, sample_size=20, numeric="8 intervals")
                   for _ in range(2))
    for x, y in data[:120]:
        left.learn_one(x, y)
    for x, y in data[120:130]:
        right.learn_one(x, y)
    with pytest.raises(ValueError, match="'z' has no cut points yet"):
        left.merge(right)
    # a first pass agrees the cut points; then the merge equals one learner on both streams
    frame = pd.DataFrame([x for x, _ in data])
    codes = np.array([int(y[1:]) for _, y in data])
    first_pass = read_table({f: frame[f].to_numpy(dtype=float) for f in ("z", "w")}, codes,
                            n_classes=3)
    readings = dict(first_pass)
    parts = [ModelAveragedTAN(aode=False, numeric="8 intervals") for _ in range(3)]
    whole = ModelAveragedTAN(aode=False, numeric="8 intervals")
    for m in (*parts, whole):  # read_table's grids hold 3, 5, 8, 16, 32 intervals and MDL
        m.fix_numeric(readings)
    for i, (x, y) in enumerate(data):
        parts[i * 3 // len(data)].learn_one(x, y)
        whole.learn_one(x, y)
    merged = parts[0].merge(parts[1]).merge(parts[2])
    assert_same_tables(tables(merged), tables(whole))
    other = ModelAveragedTAN(aode=False, numeric="8 intervals")
    other.fix_numeric({"z": other_cut_points("8 intervals")})
    with pytest.raises(ValueError, match="'z' was cut into different intervals"):
        merged.merge(other)


def other_cut_points(representation="5 intervals"):
    """Cut points of another sample."""
    values = np.arange(20.0) * 7.0
    return NumericReading(representation, 20).grids_from_sample(values, np.arange(20) % 2, 2)


def test_bad_cut_points_are_refused_and_change_nothing():
    model = ModelAveragedTAN(aode=False, sample_size=10, numeric="5 intervals")
    for x, y in stream(30, seed=7):
        model.learn_one(x, y)
    before = pickle.dumps(model)
    grids = model.numeric_readings["z"]
    with pytest.raises(ValueError, match="'a' is nominal"):
        model.fix_numeric({"a": grids})
    with pytest.raises(TypeError, match="feature 'q'"):
        model.fix_numeric({"q": [0.5, 1.0]})
    with pytest.raises(ValueError, match="'z' has other cut points"):
        model.fix_numeric({"z": other_cut_points()})
    with pytest.raises(ValueError, match="numeric"):
        ModelAveragedTAN(aode=False, numeric="7 intervals")
    assert pickle.dumps(model) == before
    model.fix_numeric({"z": copy.deepcopy(grids)})  # the same cut points: nothing to do
    assert pickle.dumps(model) == before


def test_missing_numeric_values_are_skipped():
    """A missing numeric value is neither counted nor kept: learning {z: NaN} equals learning
    the record without z."""
    a, b = TAN(sample_size=5), TAN(sample_size=5)
    for x, y in stream(60, seed=8):
        a.learn_one(x, y)
        b.learn_one({f: v for f, v in x.items() if v is not None and v == v}, y)
    assert_same_tables(tables(a), tables(b))


def test_a_sample_without_values_is_refused_and_changes_nothing():
    from onlinebma.numeric.sample import ColumnSample, Sample

    model = TAN()
    for x, y in stream(30, seed=11):
        model.learn_one(x, y)
    before = pickle.dumps(model)
    empty = ColumnSample(Sample(10, spread=True), ("y0", "y9"), 0)  # a new class y9
    with pytest.raises(ValueError, match="no observed value"):
        model.fix_numeric({"q": empty})
    assert pickle.dumps(model) == before
