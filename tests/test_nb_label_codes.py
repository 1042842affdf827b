"""learn_many codes integer labels by subtraction (frames.coded_labels): the classes, their
order of first appearance and every count equal those of the same labels as Python objects,
learned row by row."""

import numpy as np
import pandas as pd
import pytest

from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
from onlinebma.reading import SMALL_RANGE, coded_labels, factorize, labels_of


def _labels(kind, n, rng):
    if kind == "late":  # a class first seen after the first prefixes of rows
        y = rng.choice([5, 9], size=n)
        y[n - 3] = -4
        return pd.Series(y)
    if kind == "uint8":
        return pd.Series(rng.integers(3, 6, size=n).astype(np.uint8))
    if kind == "array":  # a numpy array, not a Series; the first label is the largest
        y = rng.integers(0, 4, size=n)
        y[0] = 3
        return y
    if kind == "categorical":  # categories in another order than first seen, one unused
        codes = rng.integers(0, 3, size=n)
        return pd.Series(pd.Categorical.from_codes(codes, ["c", "a", "b", "unused"]))
    if kind == "categorical ints":
        return pd.Series(pd.Categorical(rng.choice([30, 10, 20], size=n)))
    if kind == "wide":  # too wide a range to subtract: pandas' factorisation
        return pd.Series(rng.choice([0, SMALL_RANGE * 5, -SMALL_RANGE], size=n))
    return pd.Series(rng.integers(-2, 1, size=n) * 7)  # negative, with gaps


KINDS = ["late", "uint8", "array", "categorical", "categorical ints", "wide", "gaps"]


@pytest.mark.parametrize("kind", KINDS)
def test_coded_labels_equal_factorised_objects(kind):
    rng = np.random.default_rng(3)
    n = 9000
    X = pd.DataFrame({"a": rng.integers(3, size=n)})
    y = _labels(kind, n, rng)
    names, codes = coded_labels(X, y)
    want_names, want_codes = factorize(labels_of(X, y))
    assert names == want_names
    assert [type(v) for v in names] == [type(v) for v in want_names]
    np.testing.assert_array_equal(codes, want_codes)


@pytest.mark.parametrize("learner", [NaiveBayes, BMANB, ModelAveragedNB])
@pytest.mark.parametrize("kind", KINDS)
def test_learn_many_with_integer_labels_equals_learn_one(learner, kind):
    rng = np.random.default_rng(4)
    n = 2500
    y = _labels(kind, n, rng)
    labels = y.tolist()
    first = {v: i for i, v in enumerate(dict.fromkeys(labels))}
    signal = np.asarray([first[v] % 2 for v in labels])  # the feature follows the class
    X = pd.DataFrame({"a": rng.integers(3, size=n) + signal,
                      "z": rng.normal(size=n)})
    batch, rows = learner(nominal_attributes=["a"]), learner(nominal_attributes=["a"])
    batch.learn_many(X.iloc[:1200], y[:1200])
    batch.learn_many(X.iloc[1200:], y[1200:])
    rows.fix_numeric(batch.numeric_readings)  # z's cut points: of the first table's sample
    for x, label in zip(X.to_dict("records"), labels):
        rows.learn_one({"a": int(x["a"]), "z": x["z"]}, label)
    for q in [{"a": 0}, {"a": 1, "z": 0.5}, {"z": -1.0}]:
        p, r = batch.predict_proba_one(q), rows.predict_proba_one(q)
        assert list(p) == list(r)  # the classes, in the order first seen
        for c in p:
            assert p[c] == pytest.approx(r[c], rel=1e-12, abs=1e-12)


def test_a_length_mismatch_is_refused_and_changes_nothing():
    model = NaiveBayes(nominal_attributes=["a"])
    model.learn_many(pd.DataFrame({"a": [1, 2]}), pd.Series([0, 1]))
    before = model.predict_proba_one({"a": 1})
    with pytest.raises(ValueError, match="rows but y has"):
        model.learn_many(pd.DataFrame({"a": [1, 2, 3]}), np.array([0, 1]))
    assert model.predict_proba_one({"a": 1}) == before


def test_a_missing_categorical_label_is_refused_and_changes_nothing():
    model = NaiveBayes(nominal_attributes=["a"])
    model.learn_many(pd.DataFrame({"a": [1, 2]}), pd.Series(["x", "y"]))
    before = model.predict_proba_one({"a": 1})
    y = pd.Series(pd.Categorical(["x", None, "y"]))
    with pytest.raises(ValueError, match="missing"):
        model.learn_many(pd.DataFrame({"a": [1, 2, 3]}), y)
    assert model.predict_proba_one({"a": 1}) == before
