"""A numeric feature the naive Bayes family reads per value keeps a bounded domain.

Its sample's ``k`` values are nominal values of their own; any other value that arrives later is
the gap between sample values it falls in, ``(-inf, v1)``, ``(v1, v2)``, ..., ``(vk, inf)``, so
the feature's domain has at most ``2k + 1`` values whatever arrives. The reading is fixed at
the fix, so a learner equals the one given that reading from its first record.

The reference of the exactness tests is independent of the reader: a learner with
``numeric="Gaussian"`` given, from the first record, each value of the feature read per value
as the nominal value named here (:func:`gap_name`, a linear scan over the sample's values), and
every other numeric value as its interval's index under the learner's cut points.
"""

import copy
import math
import pickle
from bisect import bisect_left

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from onlinebma import distributed
from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
from onlinebma.numeric import ValueCodes
from tests.test_naive_bayes_intervals import assert_like_members
from tests.test_nb_auto_shared import Reference
from tests.test_nb_numbers import frame

SAMPLE_SIZE = 100
SAMPLE_VALUES = (1.0, 2.0, 4.0)

LEARNERS = [
    (NaiveBayes, {}),
    (NaiveBayes, {"decay": 0.97}),
    (ModelAveragedNB, {}),
    (ModelAveragedNB, {"prior": "BDeu"}),
    (ModelAveragedNB, {"decay": 0.97, "structure_decay": 0.9}),
    (BMANB, {}),
    (BMANB, {"decay": 0.97, "gamma": 1.1}),
]
THREE = [NaiveBayes, ModelAveragedNB, BMANB]


def stream(n, seed, fix_at=SAMPLE_SIZE, third_class_at=300):
    """Records whose feature ``level`` takes the values {1, 2, 4} (each repeated, depending on
    the class) until record ``fix_at``, then new values half of the time (below, between and
    above the sample's values, a few equal to them), missing (absent, None, NaN) now and then;
    a numeric feature read by intervals, a nominal one, a third class after the fix."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        y = 2 if i == third_class_at else int(rng.integers(3 if i > third_class_at else 2))
        if i < fix_at or rng.random() < 0.5:
            level = SAMPLE_VALUES[int(rng.integers(2)) + (y == 1)]
        else:
            level = round(float(rng.uniform(-2.0, 7.0)) + y, 3)
        x = {"g": float(rng.normal(y)), "level": level,
             "colour": "red" if rng.random() < 0.3 + 0.3 * (y == 1) else "blue"}
        u = rng.random()
        if i >= fix_at and u < 0.05:
            x["level"] = [None, float("nan")][int(u < 0.025)]
        elif i >= fix_at and u < 0.08:
            del x["level"]
        out.append((x, y))
    return out


def gap_name(values, x: float) -> str:
    """The nominal value a feature read per value with sample ``values`` gives ``x``."""
    values = [v + 0.0 for v in values]
    if x in values:
        return repr(x + 0.0)
    lo = max([v for v in values if v < x], default=-math.inf)
    hi = min([v for v in values if v > x], default=math.inf)
    return f"({lo!r}, {hi!r})"


def coded(record, learner):
    """The reference's record: ``level`` by :func:`gap_name`, ``g`` by its interval."""
    values = learner.numeric_readings["level"].values
    cuts = learner.cut_points()["g"].tolist()
    out = {}
    for f, v in record.items():
        if v is None or v != v:
            continue
        out[f] = (gap_name(values, v) if f == "level"
                  else f"i{bisect_left(cuts, v)}" if f == "g" else v)
    return out


def assert_same(learner, reference, tests, tol=1e-10, code=True):
    for x in tests:
        p = learner.predict_proba_one(x)
        q = reference.predict_proba_one(coded(x, learner) if code else x)
        assert p.keys() == q.keys()
        for y in p:
            assert p[y] == pytest.approx(q[y], abs=tol, rel=tol)
    fp, fq = learner.feature_posteriors(), reference.feature_posteriors()
    assert fp.keys() == fq.keys()
    for f in fq:
        assert fp[f] == pytest.approx(fq[f], abs=tol, rel=tol)


def domain(learner, f="level") -> set:
    """The values of ``f`` the learner's counts hold."""
    return set(learner.statistics.tables[f].n_value)


def test_the_gap_names():
    assert [gap_name(SAMPLE_VALUES, x) for x in (0.5, 1.0, 1.5, 3.0, 4.0, 9.0, -0.0)] == [
        "(-inf, 1.0)", "1.0", "(1.0, 2.0)", "(2.0, 4.0)", "4.0", "(4.0, inf)", "(-inf, 1.0)"]


@pytest.mark.parametrize("cls", THREE)
@pytest.mark.parametrize("decay", [1.0, 0.999])
def test_new_values_after_the_fix_leave_the_domain_bounded(cls, decay):
    """100 new distinct values after the fix: the domain holds at most 2k + 1 values (the
    sample's k values and the gaps between them), all named."""
    learner = cls(sample_size=SAMPLE_SIZE, decay=decay)
    rng = np.random.default_rng(0)
    for i in range(SAMPLE_SIZE):
        learner.learn_one({"level": SAMPLE_VALUES[i % 3]}, i % 2)
    assert learner.cut_points() == {"level": None}
    k = len(learner.numeric_readings["level"].values)
    assert k == 3
    for x in rng.uniform(-5.0, 10.0, 100):
        learner.learn_one({"level": float(x)}, int(x > 2.5))
    assert len(domain(learner)) <= 2 * k + 1
    assert domain(learner) == {"1.0", "2.0", "4.0", "(-inf, 1.0)", "(1.0, 2.0)", "(2.0, 4.0)",
                               "(4.0, inf)"}


@pytest.mark.parametrize("cls, params", LEARNERS)
def test_a_stream_equals_the_reading_given_from_the_first_record(cls, params):
    """A learner that fixes ``level`` per value when its sample completes (the kept records
    replayed) and then reads new values as gaps equals the learner given that reading from
    its first record and the independent reference: with and without forgetting, a class
    first seen after the fix."""
    data = stream(600, seed=1)
    learner = cls(sample_size=SAMPLE_SIZE, **params)
    for x, y in data:
        learner.learn_one(x, y)
    reading = learner.numeric_readings["level"]
    assert isinstance(reading, ValueCodes) and sorted(reading.values) == list(SAMPLE_VALUES)
    given = cls(sample_size=SAMPLE_SIZE, **params)
    given.fix_numeric(learner.numeric_readings)
    reference = cls(numeric="Gaussian", **params)
    for x, y in data:
        given.learn_one(x, y)
        reference.learn_one(coded(x, learner), y)
    tests = [x for x, _ in stream(60, seed=2, fix_at=0)]
    assert_same(learner, given, tests, tol=1e-12, code=False)
    assert_same(learner, reference, tests)
    assert domain(learner) == domain(given) == domain(reference)
    assert len(domain(learner)) == 7  # every gap was met
    mine, theirs = (m.statistics.tables["level"] for m in (learner, given))
    for v, row in theirs.n_joint.items():
        assert mine.n_joint[v] == pytest.approx(row, rel=1e-12)


@pytest.mark.parametrize("cls", THREE)
def test_decay_auto_counts_equal_the_reading_given_from_the_first_record(cls):
    """decay="auto": the shared state equals one learner per rate fed the stream (each fixing
    ``level`` when its sample completes); its counts equal those of per-rate learners given
    the reading from the first record, and those of the independent reference per rate (both
    weighed with the learner's rate posterior: the weights sum the predictions made while the
    sample was incomplete, read by the Gaussian, so they are not the subject here)."""
    data = stream(600, seed=1)
    learner = cls(sample_size=SAMPLE_SIZE, decay="auto")
    members = Reference(lambda rate: cls(sample_size=SAMPLE_SIZE, decay=rate))
    for x, y in data:
        learner.learn_one(x, y)
        members.learn_one(x, y)
    tests = [x for x, _ in stream(60, seed=2, fix_at=0)]
    assert_like_members(learner, members, tests)
    given = Reference(lambda rate: cls(sample_size=SAMPLE_SIZE, decay=rate))
    reference = Reference(lambda rate: cls(numeric="Gaussian", decay=rate))
    for m in given.members:
        m.fix_numeric(learner.numeric_readings)
    for x, y in data:
        given.learn_one(x, y)
        reference.learn_one(coded(x, learner), y)
    for m in given.members + reference.members:
        assert len(domain(m)) == 7
    for weighed in (given, reference):
        weighed.weigh(list(learner.decay_posterior().values()))
    assert_same(learner, given, tests, tol=1e-9, code=False)
    assert_same(learner, reference, tests, tol=1e-9)


@pytest.mark.parametrize("cls, params", [(NaiveBayes, {}), (ModelAveragedNB, {}), (BMANB, {}),
                                         (ModelAveragedNB, {"decay": 0.97}),
                                         (BMANB, {"decay": "auto"})])
def test_learn_many_reads_new_values_as_gaps(cls, params):
    """A first table fixes ``level`` per value from the table; a second brings new values:
    counted as their gaps (as the reference counts the named values), and predict_proba_many
    names them as predict_proba_one does."""
    data = stream(500, seed=3, fix_at=200)
    X, y = frame(data)
    learner = cls(**params)
    learner.learn_many(X.iloc[:200], y.iloc[:200])
    assert learner.cut_points()["level"] is None
    learner.learn_many(X.iloc[200:], y.iloc[200:])
    reference = cls(numeric="Gaussian", **params)
    reference.learn_many(pd.DataFrame([coded(x, learner) for x, _ in data]), y)
    tests = [x for x, _ in stream(40, seed=4, fix_at=0)]
    assert_same(learner, reference, tests)
    many = learner.predict_proba_many(pd.DataFrame(tests))
    for i, x in enumerate(tests):
        for label, p in learner.predict_proba_one(x).items():
            assert many[label].iloc[i] == pytest.approx(p, abs=1e-12)


def test_merge_counts_gaps_alike_and_refuses_other_sample_values():
    """Learners given one table's readings (fix_numeric) count their parts' new values as the
    same gaps and merge into the learner of the whole; a per-value reading from other sample
    values is refused, naming the feature and both samples."""
    data = stream(600, seed=5, fix_at=200)
    X, y = frame(data)
    first = ModelAveragedNB()
    first.learn_many(X.iloc[:200], y.iloc[:200])
    parts = [ModelAveragedNB(), ModelAveragedNB(), ModelAveragedNB()]
    for part, (a, b) in zip(parts, [(0, 350), (350, 600), (0, 600)]):
        part.fix_numeric(first.numeric_readings)
        part.learn_many(X.iloc[a:b], y.iloc[a:b])
    left, right, whole = parts
    merged = left.merge(right)
    assert domain(merged) == domain(whole) and len(domain(merged)) == 7
    assert_same(merged, whole, [x for x, _ in stream(30, seed=6, fix_at=0)], tol=1e-12,
                code=False)
    other = ModelAveragedNB()  # read per value from the values {1, 2}: other gaps
    other.learn_many(pd.DataFrame({"level": [1.0, 2.0] * 10}), pd.Series([0, 1] * 10))
    before = pickle.dumps(left)
    with pytest.raises(ValueError, match=r"'level'.*per value \[1.0, 2.0, 4.0\]"):
        left.merge(other)
    assert pickle.dumps(left) == before


@pytest.mark.parametrize("make", [NaiveBayes, ModelAveragedNB, BMANB])
def test_distributed_fit_reads_new_values_as_gaps(make):
    """A learner that fixed ``level`` per value continues on a Dask frame whose partitions
    bring new values: the partitions read them as the same gaps and merge into the learner
    that continued serially."""
    data = stream(500, seed=7)
    start = make(sample_size=SAMPLE_SIZE)
    for x, y in data[:SAMPLE_SIZE + 20]:
        start.learn_one(x, y)
    assert start.cut_points()["level"] is None
    X, y = frame(data[SAMPLE_SIZE + 20:])
    whole = X.assign(label=y)
    ddf = dd.from_pandas(whole, npartitions=3, sort=False)
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(start, ddf, target="label")
    serial = copy.deepcopy(start)
    serial.learn_many(X, y)
    assert got.numeric_readings == serial.numeric_readings
    assert domain(got) == domain(serial) and len(domain(got)) == 7
    tests = [x for x, _ in stream(30, seed=8, fix_at=0)]
    assert_same(got, serial, tests, tol=1e-9, code=False)


@pytest.mark.parametrize("cls", THREE)
def test_missing_values_are_skipped_and_bad_ones_refused_after_the_fix(cls):
    learner = cls(sample_size=SAMPLE_SIZE, decay=0.99)
    for x, y in stream(SAMPLE_SIZE + 50, seed=9):
        learner.learn_one(x, y)
    before = pickle.dumps(learner)
    assert learner.predict_proba_one({"level": None}) == learner.predict_proba_one({})
    assert learner.predict_proba_one({"level": math.nan}) == learner.predict_proba_one({})
    with pytest.raises(ValueError, match="'level'"):
        learner.learn_one({"level": math.inf}, 0)
    with pytest.raises(TypeError, match="'level'"):
        learner.learn_one({"level": "high"}, 0)
    assert pickle.dumps(learner) == before
    counted = copy.deepcopy(learner.statistics.tables["level"].n_value)
    learner.learn_one({"level": None, "colour": "red"}, 0)
    learner.learn_one({"level": math.nan, "colour": "red"}, 0)
    assert learner.statistics.tables["level"].n_value == counted  # (scaled unit)
