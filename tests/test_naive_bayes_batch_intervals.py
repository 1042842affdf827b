"""learn_many and predict_proba_many with numbers read as intervals, vectorised per column:
the cut points of every numeric column without them are those of the column's whole-table
sample (the tree learners' rule, issue 38), and then the counts and predictions are those of
learning and predicting the rows one by one with those cut points. A learner that forgets
learns a table row by row, each sample completed as in a stream."""

import math

import numpy as np
import pandas as pd
import pytest

from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes, batches
from onlinebma.numeric import NumericSettings, read_sample
from onlinebma.numeric.sample import ColumnSample
from onlinebma.stats.tables import NominalTable
from tests.test_nb_numbers import frame, records

LEARNERS = [(NaiveBayes, {}), (ModelAveragedNB, {}), (BMANB, {"gamma": 1.1}),
            (NaiveBayes, {"decay": 0.97}), (ModelAveragedNB, {"decay": 0.99}),
            (BMANB, {"decay": 0.98})]
BOUND = 300  # the whole-table sample's bound, lowered below the tables' rows: a draw


@pytest.fixture
def small_bound(monkeypatch):
    monkeypatch.setattr(batches, "TABLE_SAMPLE_SIZE", BOUND)


def whole_table_readings(kept, table, numeric):
    """Each numeric column's reading as the numeric layer reads a sample, independently of
    the learners: the values of ``kept`` (the ``(X, y)`` learned one by one before, observed
    ones in order) followed by the values of the table ``(X, y)``'s column sample
    (ColumnSample: at most BOUND drawn by row position), the labels coded in order of first
    appearance."""
    settings = (NumericSettings(sample_size=500) if numeric == "MDL" else
                NumericSettings(resolutions=(int(numeric.split()[0]),), class_aware=False,
                                sample_size=500))
    (X0, y0), (X, y) = kept, table
    codes, names = pd.factorize(y)
    out = {}
    for f in ("g", "spike", "code", "late"):
        sample = ColumnSample.of_column(X[f].to_numpy(dtype=float), codes, tuple(names), BOUND)
        before = X0[f].to_numpy(dtype=float) if f in X0 else np.zeros(0)
        observed = ~np.isnan(before)
        drawn = sample.sample if sample is not None else None  # None: an empty table
        values = np.concatenate([before[observed], drawn.values if drawn else np.zeros(0)])
        labels = [*np.asarray(y0)[observed].tolist(),
                  *([names[c] for c in drawn.labels.tolist()] if drawn else [])]
        label_codes, classes = pd.factorize(pd.Series(labels, dtype=object))
        out[f] = read_sample(values, label_codes, len(classes), settings)
    return out


def frame_to_predict():
    """Records to predict: seen and unseen values of the feature read per value ("code"),
    missing values, numbers beyond every cut point."""
    X, _ = frame(records(40, seed=77, late_at=10))
    X.loc[3, "code"] = 9.0  # never seen: skipped, as a new nominal value
    X.loc[4, ["g", "late"]] = np.nan
    X.loc[5, "spike"] = -1e6
    X.loc[6, "g"] = 1e6
    return X


def assert_equal_counts(learner, reference):
    """Same features, same cut points, same counts (to 1e-12) and structure weights."""
    assert learner.cut_points().keys() == reference.cut_points().keys()
    for f, c in reference.cut_points().items():
        assert (c is None and learner.cut_points()[f] is None) or np.array_equal(
            c, learner.cut_points()[f])
    mine, theirs = learner._tables, reference._tables
    assert list(mine) == list(theirs)
    for f, t in theirs.items():
        assert type(mine[f]) is type(t)
        if isinstance(t, NominalTable):
            assert mine[f].n == pytest.approx(t.n, rel=1e-12, abs=1e-12)
            for v, row in t.n_joint.items():
                assert mine[f].n_joint[v] == pytest.approx(row, rel=1e-12, abs=1e-12)
            assert mine[f].n_class == pytest.approx(t.n_class, rel=1e-12, abs=1e-12)
    assert learner._class_counts == pytest.approx(reference._class_counts, rel=1e-12)
    fp, fq = learner.feature_posteriors(), reference.feature_posteriors()
    assert list(fp) == list(fq)
    for f in fq:
        assert fp[f] == pytest.approx(fq[f], rel=1e-12, abs=1e-12)


def assert_equal_predictions(learner, reference, X):
    """predict_proba_many (vectorised) equals the reference's predict_proba_one per row."""
    got = learner.predict_proba_many(X)
    rows = X.to_dict("records")
    for i, x in enumerate(rows):
        x = {f: v for f, v in x.items() if not (isinstance(v, float) and math.isnan(v))}
        want = reference.predict_proba_one(x)
        assert set(got.columns) == set(want)
        for y, p in want.items():
            assert got.iloc[i][y] == pytest.approx(p, rel=1e-12, abs=1e-12)


def two_learners_after_300_records(learner):
    """``(data, X, y, learner, reference)``: 1300 records (a third class from record 700,
    the late feature from 250) and ``learner`` and a clone of it given the first 300 one by
    one (samples pending)."""
    data = records(1300, seed=3, third_class_at=700, late_at=250)
    reference = learner.clone()
    for x, label in data[:300]:
        x = {f: v for f, v in x.items() if v is not None}
        learner.learn_one(x, label)
        reference.learn_one(x, label)
    return (data, *frame(data), learner, reference)


@pytest.mark.parametrize("cls, params", LEARNERS[:3])
@pytest.mark.parametrize("numeric", ["8 intervals", "MDL"])
def test_learn_many_cuts_from_the_whole_column_sample(small_bound, cls, params, numeric):
    """300 records one by one (samples pending), then a table of 700 rows (a third class,
    the late feature): every numeric column is fixed from the values kept for it followed by
    the table's whole-column sample, a draw of BOUND values; the counts and predictions are
    those of a learner given those cut points before the table, learning its rows one by
    one. A later table with every feature fixed adds what its rows add."""
    data, X, y, learner, reference = two_learners_after_300_records(cls(numeric=numeric,
                                                                        **params))
    tests = frame_to_predict()
    assert_equal_predictions(learner, reference, tests)  # pending: read by the Gaussian
    learner.learn_many(X.iloc[300:1000], y.iloc[300:1000])
    readings = whole_table_readings((X.iloc[:300], y.iloc[:300]),
                                    (X.iloc[300:1000], y.iloc[300:1000]), numeric)
    assert learner.numeric_readings == readings
    assert learner.cut_points()["code"] is None  # read per value
    reference.fix_numeric(readings)
    for lo, hi in [(300, 1000), (1000, 1300)]:
        if lo == 1000:
            learner.learn_many(X.iloc[lo:hi], y.iloc[lo:hi])
        for x, label in data[lo:hi]:
            reference.learn_one({f: v for f, v in x.items() if v is not None}, label)
        assert_equal_counts(learner, reference)
        assert_equal_predictions(learner, reference, tests)


@pytest.mark.parametrize("cls, params", LEARNERS[:3])
def test_learn_many_of_a_fresh_learner_cuts_from_the_whole_column_sample(small_bound, cls,
                                                                         params):
    """A fresh learner's table: the cut points of each column's whole-table sample (not of
    its first values), every row counted by its interval."""
    data = records(900, seed=8, third_class_at=600, late_at=100)
    X, y = frame(data)
    learner, reference = cls(**params), cls(**params)
    learner.learn_many(X, y)
    readings = whole_table_readings((X.iloc[:0], y.iloc[:0]), (X, y), "8 intervals")
    assert learner.numeric_readings == readings
    first_values = whole_table_readings((X.iloc[:BOUND], y.iloc[:BOUND]),
                                        (X.iloc[:0], y.iloc[:0]), "8 intervals")
    assert first_values["g"] != readings["g"]  # the draw is not the first values
    reference.fix_numeric(readings)
    for x, label in data:
        reference.learn_one({f: v for f, v in x.items() if v is not None}, label)
    assert_equal_counts(learner, reference)
    assert_equal_predictions(learner, reference, frame_to_predict())


@pytest.mark.parametrize("cls, params", LEARNERS[3:])
@pytest.mark.parametrize("numeric", ["8 intervals", "MDL"])
def test_learn_many_of_a_learner_that_forgets_counts_what_the_rows_count(cls, params,
                                                                         numeric):
    """A learner that forgets learns a table row by row: 300 records one by one (samples
    pending), then a table that completes every sample mid-table (the late feature's too,
    and brings a third class), then a table with every feature fixed: the counts and
    predictions are those of learn_one on each row, with missing values and a few-valued
    feature read per value."""
    data, X, y, learner, reference = two_learners_after_300_records(cls(numeric=numeric,
                                                                        **params))
    tests = frame_to_predict()
    for lo, hi in [(300, 1000), (1000, 1300)]:
        learner.learn_many(X.iloc[lo:hi], y.iloc[lo:hi])
        for x, label in data[lo:hi]:
            reference.learn_one({f: v for f, v in x.items() if v is not None}, label)
        assert set(learner.cut_points()) == {"g", "spike", "code", "late"}
        assert learner.cut_points()["code"] is None  # read per value
        assert_equal_counts(learner, reference)
        assert_equal_predictions(learner, reference, tests)


def test_predict_proba_many_of_an_unlearned_frame_is_empty():
    X = frame_to_predict()
    assert NaiveBayes().predict_proba_many(X).shape == (len(X), 0)


def test_learn_many_gaussian_columns_unchanged_by_a_nominal_only_table():
    """A table with no numeric column goes the nominal path alone, reader untouched."""
    learner = ModelAveragedNB()
    X = pd.DataFrame({"colour": ["red", "blue", None, "red"]})
    learner.learn_many(X, pd.Series([0, 1, 1, 0]))
    assert learner.cut_points() == {}
    reference = ModelAveragedNB()
    for x, label in zip(X.to_dict("records"), [0, 1, 1, 0]):
        reference.learn_one({f: v for f, v in x.items() if v is not None}, label)
    assert_equal_counts(learner, reference)


def test_learn_many_with_tuple_labels():
    """Tuple labels stay labels (not rows of an array) when the table's columns are cut."""
    X, _ = frame(records(30, seed=9))
    labels = [("a", i % 2) for i in range(30)]
    learner = NaiveBayes()
    learner.learn_many(X, pd.Series(labels, dtype=object))
    assert learner.classes_ == (("a", 0), ("a", 1))
    assert list(learner.predict_proba_many(X).columns) == [("a", 0), ("a", 1)]
