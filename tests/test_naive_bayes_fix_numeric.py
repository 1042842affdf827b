"""fix_numeric: the naive Bayes family given cut points from outside, and merging learners that
share them (a first pass over data cut into parts, then one learner per part).

The reference of the exactness tests is independent of the reader: a learner with
``numeric="Gaussian"`` given, from the first record, each numeric value as the nominal value
"its interval" under the given cut points (test_nb_numbers.py's ``coded``).
"""

import copy
import pickle

import numpy as np
import pandas as pd
import pytest

from onlinebma.distributed.protocol import Partitions
from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes, batches
from onlinebma.numeric import Grids, NumericSettings, Sample, ValueCodes, read_sample
from onlinebma.numeric.sample import ColumnSample
from tests.test_nb_numbers import assert_same, coded, frame, records

LEARNERS = [(NaiveBayes, {}), (ModelAveragedNB, {}), (ModelAveragedNB, {"prior": "BDeu"}),
            (BMANB, {})]
NUMERIC = ["8 intervals", "MDL"]
FEATURES = ("g", "spike", "code", "late")


def first_pass(data, size=500, spread=True, labels=None) -> dict:
    """One mergeable Sample per numeric feature over the whole stream, built from two parts
    (as a Dask first pass would), labels as class codes: indices into ``labels`` (default:
    the labels in order of first appearance)."""
    labels = labels or list(dict.fromkeys(y for _, y in data))
    codes = np.array([labels.index(y) for _, y in data])
    X = pd.DataFrame([x for x, _ in data])
    rows = np.arange(len(data))
    out = {}
    for f in (f for f in FEATURES if f in X):
        values = X[f].to_numpy(dtype=float)
        left, right = Sample(size, spread), Sample(size, spread)
        half = len(data) // 2
        left.add_many(rows[:half], values[:half], codes[:half])
        right.add_many(rows[half:], values[half:], codes[half:])
        left.merge(right)
        out[f] = left
    return out


def cuts_of(readings: dict, numeric: str) -> dict:
    """``{feature: cut points or None}`` of readings (the reference's coding)."""
    return {f: None if isinstance(r, ValueCodes) else r.cuts[r.members.index(numeric)]
            for f, r in readings.items()}


@pytest.mark.parametrize("cls, params", LEARNERS)
@pytest.mark.parametrize("numeric", NUMERIC)
def test_merge_of_learners_with_agreed_cut_points_equals_one_learner(cls, params, numeric):
    """Two learners given the same cut points before learning, each on part of a stream with
    missing values (a class and a feature arriving in the second part only), merge into the
    learner of the whole stream: to 1e-9, and both equal the independent reference."""
    data = records(900, seed=21, third_class_at=500, late_at=480)
    template = cls(numeric=numeric, **params)
    readings = template.numeric_readings_from(first_pass(data))
    assert set(readings) == set(FEATURES)
    assert isinstance(readings["code"], ValueCodes) and isinstance(readings["g"], Grids)
    left, right, whole = (copy.deepcopy(template) for _ in range(3))
    for learner in (left, right, whole):
        learner.fix_numeric(readings)
    X, y = frame(data)
    for x, label in data[:300]:  # the first part streamed, then a table
        left.learn_one(x, label)
        whole.learn_one(x, label)
    left.learn_many(X.iloc[300:450], y.iloc[300:450])
    whole.learn_many(X.iloc[300:450], y.iloc[300:450])
    right.learn_many(X.iloc[450:], y.iloc[450:])
    whole.learn_many(X.iloc[450:], y.iloc[450:])
    merged = left.merge(right)
    assert merged.numeric_readings.keys() == whole.numeric_readings.keys()
    tests = [x for x, _ in records(40, seed=22)]
    for x in tests:
        p, q = merged.predict_proba_one(x), whole.predict_proba_one(x)
        assert p.keys() == q.keys()
        for label in p:
            assert p[label] == pytest.approx(q[label], abs=1e-9, rel=1e-9)
    fp, fq = merged.feature_posteriors(), whole.feature_posteriors()
    assert fp.keys() == fq.keys()
    for f in fq:
        assert fp[f] == pytest.approx(fq[f], abs=1e-9, rel=1e-9)
    cuts = cuts_of(readings, numeric)
    reference = cls(numeric="Gaussian", **params)
    for x, label in data:
        reference.learn_one(coded(x, cuts), label)
    assert_same(merged, reference, tests, cuts, tol=1e-9)


@pytest.mark.parametrize("cls, params", [(NaiveBayes, {}), (ModelAveragedNB, {}),
                                         (ModelAveragedNB, {"decay": 0.97,
                                                            "structure_decay": 0.9}),
                                         (BMANB, {"decay": 0.97})])
def test_fix_numeric_replays_the_kept_records(cls, params):
    """Cut points given after 120 records (kept while the samples were incomplete) give the
    learner that had them from the first record, with and without forgetting."""
    data = records(400, seed=23, third_class_at=200, late_at=60)
    learner = cls(numeric="8 intervals", **params)
    for x, label in data[:120]:
        learner.learn_one(x, label)
    assert learner.numeric_readings == {}
    with pytest.raises(ValueError, match="classes="):  # kept values, codes of unknown labels
        learner.numeric_readings_from(first_pass(data))
    readings = learner.numeric_readings_from(first_pass(data), classes=[0, 1, 2])
    learner.fix_numeric(readings)
    for x, label in data[120:]:
        learner.learn_one(x, label)
    cuts = cuts_of(readings, "8 intervals")
    assert {f: (None if c is None else c.tolist()) for f, c in learner.cut_points().items()} \
        == {f: (None if c is None else c.tolist()) for f, c in cuts.items()}
    reference = cls(numeric="Gaussian", **params)
    for x, label in data:
        reference.learn_one(coded(x, cuts), label)
    assert_same(learner, reference, [x for x, _ in records(30, seed=24)], cuts)


def test_readings_from_a_sample_are_read_samples_and_travel_between_learners():
    """numeric_readings_from is read_sample with the learner's settings on (values, labels)
    pairs too (labels of any kind); numeric_readings gives them to another learner."""
    rng = np.random.default_rng(25)
    values = rng.normal(size=300)
    values[::7] = np.nan
    labels = np.where(rng.random(300) < 0.5, "yes", "no")
    learner = ModelAveragedNB(numeric="MDL")
    readings = learner.numeric_readings_from({"x": (values, labels), "empty": ([np.nan], ["a"])})
    assert list(readings) == ["x"]  # no observed value: not read
    codes = (labels == "no").astype(int)  # another coding of the same classes
    expected = read_sample(values, codes, 2, NumericSettings())
    assert readings["x"] == expected
    learner.fix_numeric(readings)
    other = ModelAveragedNB(numeric="8 intervals")  # MDL's Grids hold the 8-interval grid
    other.fix_numeric(learner.numeric_readings)
    assert other.cut_points()["x"].tolist() == expected.cuts[expected.members.index(
        "8 intervals")].tolist()
    assert NaiveBayes(numeric="Gaussian").numeric_readings_from({"x": (values, labels)}) == {}


def test_decay_auto_takes_the_cut_points_in_every_rate():
    data = records(300, seed=26, late_at=100)
    learner = BMANB(numeric="8 intervals", decay="auto")
    readings = learner.numeric_readings_from(first_pass(data))
    learner.fix_numeric(readings)
    assert learner.numeric_readings.keys() == readings.keys()
    fixed = BMANB(numeric="8 intervals", decay=0.99)
    fixed.fix_numeric(readings)
    for x, label in data:
        learner.learn_one(x, label)
        fixed.learn_one(x, label)
    for f, c in fixed.cut_points().items():
        mine = learner.cut_points()[f]
        assert (mine is None and c is None) or np.array_equal(mine, c)


def test_refusals_name_the_fix_and_change_nothing():
    data = records(600, seed=27, late_at=0)
    X, y = frame(data)
    left = NaiveBayes(numeric="8 intervals")
    left.learn_many(X.iloc[:300], y.iloc[:300])  # cut points from its own table
    right = NaiveBayes(numeric="8 intervals")
    right.learn_many(X.iloc[300:], y.iloc[300:])
    with pytest.raises(ValueError, match=r"numeric feature 'g' was cut into different.*"
                                         r"fix_numeric"):
        left.merge(right)
    streaming = NaiveBayes(numeric="8 intervals")
    streaming.learn_one(*data[0])
    with pytest.raises(ValueError, match=r"not fixed.*fix_numeric"):
        left.merge(streaming)
    before = copy.deepcopy(left)
    other = right.numeric_readings
    with pytest.raises(ValueError, match="'g' has other cut points already"):
        left.fix_numeric({"code": other["code"], "g": other["g"]})
    with pytest.raises(ValueError, match="'colour' is nominal"):
        left.fix_numeric({"colour": other["g"]})
    with pytest.raises(ValueError, match="not the representation '8 intervals'"):
        NaiveBayes(numeric="8 intervals").fix_numeric(
            NaiveBayes(numeric="16 intervals").numeric_readings_from(
                {"g": (X["g"].to_numpy(dtype=float), y.to_numpy())}))
    with pytest.raises(TypeError, match="must be a Grids or a ValueCodes"):
        left.fix_numeric({"new": [0.5, 1.0]})
    with pytest.raises(ValueError, match="reads numbers by their moments"):
        NaiveBayes(numeric="Gaussian").fix_numeric(other)
    NaiveBayes(numeric="Gaussian").fix_numeric({})  # nothing to fix: nothing refused
    with pytest.raises(ValueError, match="'colour' is nominal"):
        NaiveBayes(numeric="8 intervals", nominal_attributes=["colour"]).fix_numeric(
            {"colour": other["g"]})
    tests = [x for x, _ in records(10, seed=28)]
    assert [left.predict_proba_one(x) for x in tests] == \
        [before.predict_proba_one(x) for x in tests]
    assert left.numeric_readings.keys() == before.numeric_readings.keys()


def column_samples(X, y, size) -> dict:
    """The ColumnSample of each numeric column of a whole table, as a first pass over it
    draws them (labels coded in order of first appearance)."""
    codes, names = pd.factorize(y)
    return {f: ColumnSample.of_column(X[f].to_numpy(dtype=float), codes, tuple(names), size)
            for f in FEATURES if f in X}


@pytest.mark.parametrize("cls", [NaiveBayes, ModelAveragedNB, BMANB])
@pytest.mark.parametrize("numeric", NUMERIC)
def test_readings_of_the_column_samples_are_those_of_learn_many(monkeypatch, cls, numeric):
    """The whole table's column samples (ColumnSample, here at most 300 values: a draw)
    give the readings learn_many on the table gives: for a fresh learner, and for one
    keeping values from learn_one (they come first); counting with them then equals
    learn_many."""
    monkeypatch.setattr(batches, "TABLE_SAMPLE_SIZE", 300)
    data = records(900, seed=29, third_class_at=300, late_at=200)
    X, y = frame(data)
    fresh = cls(numeric=numeric)
    whole = cls(numeric=numeric)
    whole.learn_many(X, y)
    readings = fresh.numeric_readings_from(column_samples(X, y, 300))
    assert readings == whole.numeric_readings
    streamed, copied = cls(numeric=numeric), cls(numeric=numeric)
    for x, label in data[:150]:
        streamed.learn_one(x, label)
        copied.learn_one(x, label)
    samples = column_samples(X.iloc[150:], y.iloc[150:], 300)
    readings = copied.numeric_readings_from(samples)
    copied.fix_numeric(samples)
    assert copied.numeric_readings == readings
    assert copied.numeric_readings_from(samples) == readings  # kept
    copied.learn_many(X.iloc[150:], y.iloc[150:])
    streamed.learn_many(X.iloc[150:], y.iloc[150:])
    assert copied.numeric_readings == streamed.numeric_readings
    tests = [x for x, _ in records(20, seed=30)]
    for x in tests:
        p, q = copied.predict_proba_one(x), streamed.predict_proba_one(x)
        assert p.keys() == q.keys()
        for label in p:
            assert p[label] == pytest.approx(q[label], abs=1e-12)


class InMemory(Partitions):
    """Partitions held in memory, combined in a tree of pairs, left to right."""

    def __init__(self, parts):
        self.parts = parts

    def reduce(self, plan):
        partials = [plan.learn_numbered(i, X, y) for i, (X, y) in enumerate(self.parts)]
        while len(partials) > 1:
            partials = [plan.combine(partials[i:i + 2]) for i in range(0, len(partials), 2)]
        return partials[0]


@pytest.mark.parametrize("cls", [NaiveBayes, ModelAveragedNB, BMANB])
@pytest.mark.parametrize("numeric", NUMERIC)
def test_the_distributed_plan_agrees_cut_points_first(monkeypatch, cls, numeric):
    """distributed_plan's first pass gives each partition the cut points learn_many on the
    whole frame takes (a learner's kept values first, then the whole-column sample, here a
    draw of 300): the partitions' learners merge into the learner that continued serially,
    and the given learner is not changed."""
    monkeypatch.setattr(batches, "TABLE_SAMPLE_SIZE", 300)
    data = records(1100, seed=37, third_class_at=600, late_at=400)
    X, y = frame(data)
    start = cls(numeric=numeric)
    for x, label in data[:150]:  # kept: every sample incomplete
        start.learn_one(x, label)
    before = pickle.dumps(start)
    cuts = [150, 300, 310, 700, 1100]  # partitions of unequal sizes, "late" from the third
    parts = [(X.iloc[a:b], y.iloc[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]
    model = start.distributed_plan().run(InMemory(parts))
    assert pickle.dumps(start) == before
    serial = pickle.loads(before)
    serial.learn_many(X.iloc[150:], y.iloc[150:])
    mine, theirs = model.cut_points(), serial.cut_points()
    assert set(mine) == set(theirs)
    for f, c in theirs.items():  # a ValueCodes' class coding may differ: compare the cuts
        assert (c is None and mine[f] is None) or np.array_equal(mine[f], c)
    for x, _ in records(30, seed=38):
        p, q = model.predict_proba_one(x), serial.predict_proba_one(x)
        assert p.keys() == q.keys()
        for label in p:
            assert p[label] == pytest.approx(q[label], abs=1e-9, rel=1e-9)
