"""numeric=: the naive Bayes family reading numbers as the intervals of the numeric layer.

The reference of every exactness test is an independent path: a learner with
``numeric="Gaussian"`` given, from the first record, each numeric value as the nominal value
"its interval" under the cut points the tested learner fixed (so no pending records, no
replay, no reader).
"""

import copy
import math
import pickle
from bisect import bisect_left

import numpy as np
import pandas as pd
import pytest

from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
from onlinebma.numeric import NumericSettings, read_table
from onlinebma.numeric.grids import Grids

LEARNERS = [
    (NaiveBayes, {}),
    (NaiveBayes, {"decay": 0.97}),
    (ModelAveragedNB, {}),
    (ModelAveragedNB, {"prior": "BDeu", "ess": 2.0}),
    (ModelAveragedNB, {"decay": 0.97, "structure_decay": 0.9}),
    (ModelAveragedNB, {"decay": 0.97, "prior": "BDeu"}),
    (BMANB, {}),
    (BMANB, {"decay": 0.97, "gamma": 1.1}),
]
NUMERIC = ["3 intervals", "8 intervals", "32 intervals", "MDL"]


def records(n, seed, third_class_at=650, late_at=300):
    """Mixed records: a Gaussian feature with missing values, a spiky feature (mostly 0), an
    integer code read per value, a nominal one, a feature arriving late, a third class
    arriving mid-stream (before and after the first features are fixed)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        y = int(rng.integers(3 if i >= third_class_at else 2))
        if i == third_class_at:
            y = 2
        x = {"g": float(rng.normal(y)) if rng.random() > 0.1 else None,
             "spike": 0.0 if rng.random() < 0.7 else float(rng.exponential(1 + y)),
             "code": float(rng.integers(4) + (y == 1)),
             "colour": "red" if rng.random() < 0.3 + 0.3 * (y == 1) else "blue"}
        if i >= late_at:
            x["late"] = float(rng.normal(-y))
        out.append((x, y))
    return out


def coded(record, cuts):
    """The reference's reading of a record: each numeric value as its interval (or value)."""
    out = {}
    for f, v in record.items():
        if v is None:
            continue
        if f in cuts:
            c = cuts[f]
            out[f] = f"v{v!r}" if c is None else f"i{bisect_left(c.tolist(), v)}"
        else:
            out[f] = v
    return out


def assert_same(learner, reference, tests, cuts, tol=1e-10):
    for x in tests:
        p, q = learner.predict_proba_one(x), reference.predict_proba_one(coded(x, cuts))
        assert p.keys() == q.keys()
        for y in p:
            assert p[y] == pytest.approx(q[y], abs=tol, rel=tol)
    fp, fq = learner.feature_posteriors(), reference.feature_posteriors()
    for f in fq:
        assert fp[f] == pytest.approx(fq[f], abs=tol, rel=tol)


@pytest.mark.parametrize("cls, params", LEARNERS)
@pytest.mark.parametrize("numeric", NUMERIC)
def test_stream_replay_equals_cut_points_from_the_first_record(cls, params, numeric):
    """Kept records replayed when a feature's sample completes (500 values, the late feature
    later than the others) give the state of the learner that had those cut points from
    the first record: with and without forgetting, new classes before and after the fix."""
    data = records(1000, seed=1)
    learner = cls(numeric=numeric, **params)
    for x, y in data:
        learner.learn_one(x, y)
    cuts = learner.cut_points()
    assert set(cuts) == {"g", "spike", "code", "late"}
    assert cuts["code"] is None  # few repeated values: read per value
    reference = cls(numeric="Gaussian", **params)
    for x, y in data:
        reference.learn_one(coded(x, cuts), y)
    assert_same(learner, reference, [x for x, _ in records(40, seed=2)], cuts)


@pytest.mark.parametrize("cls, params", LEARNERS[:1] + LEARNERS[2:3] + LEARNERS[6:7])
def test_before_the_fix_a_feature_is_read_by_its_gaussian(cls, params):
    """While its sample is incomplete a feature counts through the Gaussian of
    numeric='Gaussian' (the same predictions), and it is not listed in cut_points."""
    data = records(300, seed=3, late_at=10**9)
    learner, gaussian = cls(numeric="8 intervals", **params), cls(numeric="Gaussian", **params)
    for x, y in data:
        learner.learn_one(x, y)
        gaussian.learn_one(x, y)
    assert learner.cut_points() == {}
    for x, _ in records(20, seed=4):
        assert learner.predict_proba_one(x) == pytest.approx(gaussian.predict_proba_one(x),
                                                             abs=1e-12)


def frame(data):
    X = pd.DataFrame([x for x, _ in data])
    return X, pd.Series([y for _, y in data])


@pytest.mark.parametrize("cls, params", [(NaiveBayes, {}), (ModelAveragedNB, {}), (BMANB, {}),
                                         (ModelAveragedNB, {"decay": 0.97}),
                                         (BMANB, {"decay": "auto"})])
def test_learn_many_takes_cut_points_from_the_table(cls, params):
    """learn_many on a table of 200 rows (less than a stream's sample) fixes every numeric
    feature from the table itself, as the numeric layer's read_table reads it, and counts the
    table with those cut points."""
    data = records(200, seed=5, late_at=50, third_class_at=120)
    X, y = frame(data)
    learner = cls(numeric="8 intervals", **params)
    learner.learn_many(X, y)
    cuts = learner.cut_points()
    names = list(dict.fromkeys(y))
    columns = {f: X[f].to_numpy(dtype=float) for f in ("g", "spike", "code", "late")}
    readings = read_table(columns, [names.index(v) for v in y], len(names),
                          NumericSettings(resolutions=(8,), class_aware=False))
    for f, r in readings.items():
        if isinstance(r, Grids):
            assert np.array_equal(cuts[f], r.cuts[0])
        else:
            assert cuts[f] is None
    reference = cls(numeric="Gaussian", **params)
    reference.learn_many(pd.DataFrame([coded(x, cuts) for x, _ in data]), y)
    tests = [x for x, _ in records(30, seed=6)]
    assert_same(learner, reference, tests, cuts)
    many = learner.predict_proba_many(pd.DataFrame(tests))
    for i, x in enumerate(tests):
        for label, p in learner.predict_proba_one(x).items():
            assert many[label].iloc[i] == pytest.approx(p, abs=1e-12)


def test_learn_many_after_learn_one_reads_the_kept_values_first():
    """Kept records of learn_one and then a table: the feature's sample is the kept values
    followed by the column, and the kept values are counted with the table's cut points."""
    data = records(260, seed=7, late_at=10**9)
    learner = ModelAveragedNB(numeric="5 intervals")
    for x, y in data[:60]:
        learner.learn_one(x, y)
    X, y = frame(data[60:])
    learner.learn_many(X, y)
    cuts = learner.cut_points()
    sample = pd.DataFrame([x for x, _ in data])["g"].to_numpy(dtype=float)
    labels = [lab for _, lab in data]
    expected = read_table({"g": sample}, labels, 3,
                          NumericSettings(resolutions=(5,), class_aware=False))["g"].cuts[0]
    assert np.array_equal(cuts["g"], expected)
    reference = ModelAveragedNB()
    for x, lab in data:
        reference.learn_one(coded(x, cuts), lab)
    assert_same(learner, reference, [x for x, _ in records(20, seed=8)], cuts)


def test_merge_with_equal_cut_points_and_refusals():
    data = records(600, seed=9, late_at=0)
    X, y = frame(data)
    base = ModelAveragedNB(numeric="8 intervals")
    base.learn_many(X.iloc[:200], y.iloc[:200])
    left, right, whole = copy.deepcopy(base), copy.deepcopy(base), copy.deepcopy(base)
    left.learn_many(X.iloc[200:400], y.iloc[200:400])
    right.learn_many(X.iloc[400:], y.iloc[400:])
    whole.learn_many(X.iloc[:200], y.iloc[:200])  # the base's rows, counted twice by merge
    whole.learn_many(X.iloc[200:], y.iloc[200:])
    merged = left.merge(right)
    tests = [x for x, _ in records(20, seed=10)]
    for x in tests:
        assert merged.predict_proba_one(x) == pytest.approx(whole.predict_proba_one(x),
                                                            abs=1e-12)
    other = ModelAveragedNB(numeric="8 intervals")
    other.learn_many(X.iloc[300:], y.iloc[300:])
    with pytest.raises(ValueError, match="numeric feature 'g' was cut into different"):
        left.merge(other)
    streaming = ModelAveragedNB(numeric="8 intervals")
    streaming.learn_one(*data[0])
    with pytest.raises(ValueError, match="not fixed"):
        left.merge(streaming)


def test_pickle_mid_sample_continues_alike():
    data = records(900, seed=11)
    a = BMANB(numeric="16 intervals", decay=0.98)
    for x, y in data[:300]:
        a.learn_one(x, y)
    b = pickle.loads(pickle.dumps(a))
    for x, y in data[300:]:
        a.learn_one(x, y)
        b.learn_one(x, y)
    assert a.feature_posteriors() == b.feature_posteriors()
    assert {f: c.tolist() for f, c in a.cut_points().items() if c is not None} == \
        {f: c.tolist() for f, c in b.cut_points().items() if c is not None}
    for x, _ in records(10, seed=12):
        assert a.predict_proba_one(x) == b.predict_proba_one(x)


@pytest.mark.parametrize("cls", [NaiveBayes, ModelAveragedNB, BMANB])
def test_bad_input_names_the_feature_and_changes_nothing(cls):
    learner = cls(numeric="8 intervals")
    for x, y in records(520, seed=13):
        learner.learn_one(x, y)
    before = pickle.dumps(learner)
    with pytest.raises(TypeError, match="'g'"):
        learner.learn_one({"g": "tall", "spike": 1.0}, 0)
    with pytest.raises(ValueError, match="'spike'"):
        learner.learn_one({"g": 1.0, "spike": math.inf}, 0)
    with pytest.raises(ValueError, match="'spike'"):
        learner.learn_many(pd.DataFrame({"g": [1.0], "spike": [math.inf]}), pd.Series([0]))
    assert pickle.dumps(learner) == before
    with pytest.raises(ValueError, match="numeric must be one of"):
        cls(numeric="7 intervals")


def test_a_value_not_in_the_sample_joins_a_feature_read_per_value_as_its_gap():
    """A feature read per value: a later value not in the sample is counted as its gap (the
    gap joins the domain as a nominal value does), so a value of the same gap reads alike;
    a gap never learned is skipped at prediction (as a nominal's new value is)."""
    learner = NaiveBayes(numeric="8 intervals")
    learner.learn_many(pd.DataFrame({"stars": [1.0, 2.0] * 50}), pd.Series(["no", "yes"] * 50))
    assert learner.cut_points() == {"stars": None}
    assert learner.predict_proba_one({"stars": 3.0}) == learner.predict_proba_one({})
    learner.learn_one({"stars": 3.0}, "yes")
    assert learner.predict_proba_one({"stars": 3.0})["yes"] > learner.predict_proba_one({})["yes"]
    assert learner.predict_proba_one({"stars": 7.5}) == learner.predict_proba_one({"stars": 3.0})
    assert set(learner.statistics.tables["stars"].n_value) == {"1.0", "2.0", "(2.0, inf)"}
    assert learner.predict_proba_one({"stars": 1.5}) == learner.predict_proba_one({})


@pytest.mark.parametrize("make, params", [
    (ModelAveragedNB, {"sample_size": 10, "decay": 0.9}),
    (BMANB, {"sample_size": 10, "decay": "auto"}),
    (ModelAveragedNB, {"sample_size": 10, "decay": 0.9, "numeric": "MDL"}),
], ids=repr)
def test_river_learn_many_matches_learn_one_where_every_sample_completes(make, params):
    """River's check (skipped in check_estimator while reading intervals, see
    BaseNB._unit_test_skips) on learners that forget, which learn a batch row by row, whose
    numeric samples complete within its batches (a learner that forgets nothing cuts a batch's
    columns from their whole-table samples: tests/test_naive_bayes_batch_intervals.py)."""
    from river import datasets
    from river.checks.common import check_learn_many_matches_learn_one

    check_learn_many_matches_learn_one(make(**params), datasets.Phishing())


def test_learn_many_completing_a_sample_equals_learn_one():
    """A table that completes a feature's sample fixes it from its first sample_size values,
    as learn_one on the rows does: the same learner."""
    data = records(800, seed=14, late_at=10**9)
    X, y = frame(data)
    one, many = ModelAveragedNB(decay=0.99), ModelAveragedNB(decay=0.99)
    for x, lab in data:
        one.learn_one(x, lab)
    many.learn_many(X.iloc[:650], y.iloc[:650])  # every sample completes in the first table
    many.learn_many(X.iloc[650:], y.iloc[650:])
    assert {f: None if c is None else c.tolist() for f, c in one.cut_points().items()} == \
        {f: None if c is None else c.tolist() for f, c in many.cut_points().items()}
    for x, _ in records(20, seed=15):
        assert one.predict_proba_one(x) == pytest.approx(many.predict_proba_one(x), abs=1e-12)


def test_minus_zero_is_the_value_zero_of_a_feature_read_per_value():
    learner = NaiveBayes()
    learner.learn_many(pd.DataFrame({"n": [0.0, 1.0] * 20}), pd.Series(["a", "b"] * 20))
    assert learner.predict_proba_one({"n": -0.0}) == learner.predict_proba_one({"n": 0.0})
