"""Hostile records and frames (issue 27's catalogue) for every learner of the registry: a clear
error naming the record, feature or column, the learner unchanged."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

from onlinebma.naive_bayes import NaiveBayes
from onlinebma.preprocessing import MDLDiscretizer
from tests.support.learners import LEARNERS, forgetting_variants

#: Every learner of the registry (tests/support/learners.py), batch learners refitting at
#: every record, and the forgetting ones with a fixed and an automatic rate as well.
CASES = [(learner.name, learner.make(refit_every=1) if learner.batch else learner.make())
         for learner in LEARNERS] + forgetting_variants()
IDS = [name for name, _ in CASES]
LEARNERS = [learner for _, learner in CASES]


def trained(learner, n=30):
    """A learner after ``n`` records of a numeric ``a``, a nominal ``c``, and one prediction
    (so a batch learner has fitted: a refused prediction then cannot pass for a refit)."""
    model = learner.clone()
    for i in range(n):
        model.learn_one({"a": float(i % 7), "c": "xyz"[i % 3]}, i % 2 == 0)
    model.predict_proba_one({"a": 1.0, "c": "x"})
    return model


def refused(model, call, error, match):
    """``call(model)`` raises ``error`` matching ``match`` and leaves ``model`` unchanged."""
    before = pickle.dumps(model)
    with pytest.raises(error, match=match):
        call(model)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("learner", LEARNERS, ids=IDS)
@pytest.mark.parametrize("record", [None, "a=1", [("a", 1.0)], pd.Series({"a": 1.0})],
                         ids=["None", "str", "list", "Series"])
def test_a_record_that_is_not_a_dict_is_a_type_error(learner, record):
    model = trained(learner)
    refused(model, lambda m: m.learn_one(record, True), TypeError, "a record is a dict")
    refused(model, lambda m: m.predict_proba_one(record), TypeError, "a record is a dict")


@pytest.mark.parametrize("learner", LEARNERS, ids=IDS)
def test_a_value_no_float_holds_names_its_feature(learner):
    """``10**400`` is refused naming the feature; a ``Decimal('sNaN')`` is a NaN, so it is a
    missing value like every other NaN (records.py), not an error."""
    model = trained(learner)
    record = {"c": "x", "a": 10**400}
    refused(model, lambda m: m.learn_one(record, True), ValueError, "feature 'a'")
    refused(model, lambda m: m.predict_proba_one(record), ValueError, "feature 'a'")
    X = pd.DataFrame({"c": ["x", "y"], "a": pd.Series([1.0, 10**400], dtype=object)})
    named = "(column|feature) 'a'"
    refused(model, lambda m: m.learn_many(X, pd.Series([True, False])), ValueError, named)
    refused(model, lambda m: m.predict_proba_many(X), ValueError, named)


@pytest.mark.parametrize("learner", LEARNERS, ids=IDS)
def test_x_must_be_a_frame_with_distinct_column_names(learner):
    model = trained(learner)
    y = pd.Series([True, False])
    array = np.array([[1.0, 2.0], [3.0, 4.0]])
    refused(model, lambda m: m.learn_many(array, y), TypeError, "DataFrame.*ndarray")
    refused(model, lambda m: m.predict_proba_many(array), TypeError, "DataFrame.*ndarray")
    twice = pd.DataFrame([[1.0, "x", 2.0], [3.0, "y", 4.0]], columns=["a", "c", "a"])
    refused(model, lambda m: m.learn_many(twice, y), ValueError, r"repeats .*\['a'\]")
    refused(model, lambda m: m.predict_proba_many(twice), ValueError, r"repeats .*\['a'\]")


@pytest.mark.parametrize("learner", LEARNERS, ids=IDS)
def test_tuple_labels_in_a_list_are_learned_as_learn_one_learns_them(learner):
    """A list of tuples is a column of labels (``np.asarray`` would make it 2-D). Nominal
    features: with numbers, ``learn_many`` cuts them from the table at once while
    ``learn_one`` keeps them until a sample is complete (by design). A learner that weighs
    several members (ModelAveragedTAN's AODE members) stacks them in ``learn_many`` and
    weighs them record by record in ``learn_one``: compared with one member."""
    X = pd.DataFrame({"a": ["u", "v", "u", "w"], "c": ["x", "y", "x", "y"]})
    labels = [("p", 1), ("q", 2), ("p", 1), ("q", 2)]
    if getattr(learner, "weighs_members", False):
        learner = learner.clone({"aode": False})
    many, one = learner.clone(), learner.clone()
    many.learn_many(X, labels)
    for x, label in zip(X.to_dict("records"), labels):
        one.learn_one(x, label)
    x = {"a": "v", "c": "x"}
    assert set(many.predict_proba_one(x)) == {("p", 1), ("q", 2)}
    assert many.predict_proba_one(x) == pytest.approx(one.predict_proba_one(x), abs=1e-12)


def test_a_pipeline_learns_tuple_labels_whole():
    """The catalogue's case: MDLDiscretizer | NaiveBayes refused them half-way."""
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0]})
    pipeline = MDLDiscretizer() | NaiveBayes()
    pipeline.learn_many(X, [("p", 1), ("q", 2), ("p", 1), ("q", 2)])
    assert set(pipeline.predict_proba_one({"a": 1.0})) == {("p", 1), ("q", 2)}


@pytest.mark.parametrize("learner", LEARNERS, ids=IDS)
def test_learn_many_pairs_x_and_y_by_position_not_by_index(learner):
    """Documented (as River's and scikit-learn's): the indexes are ignored."""
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0, 9.0], "c": ["x", "y", "x", "z"]}, index=[0, 1, 2, 3])
    y = pd.Series([True, True, False, False], index=[3, 2, 1, 0])
    by_position, by_index = learner.clone(), learner.clone()
    by_position.learn_many(X, y)
    by_index.learn_many(X, y.loc[X.index])
    mine = by_position.predict_proba_one({"a": 9.0, "c": "z"})
    assert mine[False] > mine[True]  # 9.0 / "z" came with False, its label by position
    assert by_index.predict_proba_one({"a": 9.0, "c": "z"})[True] > 0.5


@pytest.mark.parametrize("learner", LEARNERS, ids=IDS)
def test_a_one_column_label_frame_is_learned_as_its_column(learner):
    """Issue 40: ``y.to_frame()`` was refused after the learner had changed (or raised an
    AttributeError); it is learned as the Series is, as scikit-learn reads a column vector."""
    model = trained(learner)
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0, 9.0], "c": ["x", "y", "x", "z"]})
    y = pd.Series([True, True, False, False], name="label")
    as_series, as_frame, as_column = model.clone(), model.clone(), model.clone()
    for m in (as_series, as_frame, as_column):  # the same history before the batch
        m.learn_many(*_history())
    as_series.learn_many(X, y)
    as_frame.learn_many(X, y.to_frame())
    as_column.learn_many(X, y.to_numpy().reshape(-1, 1))
    for x in X.to_dict("records"):
        expected = as_series.predict_proba_one(x)
        assert as_frame.predict_proba_one(x) == pytest.approx(expected, abs=1e-12)
        assert as_column.predict_proba_one(x) == pytest.approx(expected, abs=1e-12)


def _history():
    X = pd.DataFrame({"a": [float(i % 7) for i in range(12)],
                      "c": ["xyz"[i % 3] for i in range(12)]})
    return X, pd.Series([i % 3 == 0 for i in range(12)])


@pytest.mark.parametrize("learner", LEARNERS, ids=IDS)
@pytest.mark.parametrize("labels", [pd.DataFrame({"y": [True, False], "z": [1, 2]}),
                                    np.array([[True, False], [False, True]]),
                                    (b for b in [True, False]), "yn"],
                         ids=["two-column frame", "2-D array", "generator", "str"])
def test_labels_that_are_not_one_per_row_are_refused_unchanged(learner, labels):
    model = trained(learner)
    X = pd.DataFrame({"a": [1.0, 2.0], "c": ["x", "y"]})
    refused(model, lambda m: m.learn_many(X, labels), TypeError, "one label per row")


@pytest.mark.parametrize("learner", LEARNERS, ids=IDS)
@pytest.mark.parametrize(("make", "fix"), [
    (lambda X: (r for r in X.to_dict("records")), r"pd\.DataFrame\(list\(X\)\)"),
    (lambda X: X.to_numpy(), r"pd\.DataFrame\(X, columns=names\)"),
    (lambda X: X.to_dict("list"), r"pd\.DataFrame\(X\)"),
    (lambda X: X.iloc[0], r"X\.to_dict\(\)"),
], ids=["generator", "ndarray", "dict of lists", "Series"])
def test_x_that_is_not_a_frame_is_a_type_error_naming_what_to_pass(learner, make, fix):
    """Issue 40's catalogue: the order learners raised other exception types."""
    model = trained(learner)
    X = pd.DataFrame({"a": [1.0, 2.0], "c": ["x", "y"]})
    y = pd.Series([True, False])
    refused(model, lambda m: m.learn_many(make(X), y), TypeError, "DataFrame.*" + fix)
    refused(model, lambda m: m.predict_proba_many(make(X)), TypeError, "DataFrame.*" + fix)
    refused(model, lambda m: m.predict_many(make(X)), TypeError, "DataFrame.*" + fix)


@pytest.mark.parametrize("learner", LEARNERS, ids=IDS)
def test_a_placeholder_read_as_text_gets_an_error_naming_the_real_fix(learner):
    """Issue 40: a ``"?"`` in a numeric CSV column made the column nominal and the later error
    suggested ``nominal_attributes``; the error names ``na_values`` and ``numeric_attributes``,
    in the record path and the frame path."""
    model = learner.clone()
    model.learn_one({"a": "?", "c": "x"}, True)  # "a" is nominal now: its first value is text
    model.learn_one({"a": "?", "c": "y"}, False)
    fix = r"na_values='\?'.*numeric_attributes"
    refused(model, lambda m: m.learn_one({"a": 3.0, "c": "x"}, True), TypeError, fix)
    X = pd.DataFrame({"a": [1.5, 2.5], "c": ["x", "y"]})
    refused(model, lambda m: m.learn_many(X, pd.Series([True, False])), TypeError, fix)
    # the other way round: "?" for a feature that is numeric
    numeric = trained(learner)
    fix = r"feature 'a' is numeric but got '\?'.*na_values='\?'"
    refused(numeric, lambda m: m.learn_one({"a": "?", "c": "x"}, True), TypeError, fix)
    X = pd.DataFrame({"a": ["?", 2.5], "c": ["x", "y"]})
    refused(numeric, lambda m: m.learn_many(X, pd.Series([True, False])), TypeError, fix)


@pytest.mark.parametrize("learner", LEARNERS, ids=IDS)
def test_numeric_attributes_declares_numbers_before_any_arrive(learner):
    """A feature named in ``numeric_attributes`` is numeric whatever its first value: a text
    placeholder is refused naming the fix, not made a category; its numbers are learned as
    those of a feature whose first value was a number."""
    declared = learner.clone({"numeric_attributes": ["a"]})
    refused(declared, lambda m: m.learn_one({"a": "?", "c": "x"}, True), TypeError,
            r"feature 'a' is numeric but got '\?'.*na_values")
    X = pd.DataFrame({"a": pd.Series(["?", 1.0, 2.0], dtype=object), "c": ["x", "y", "x"]})
    y = pd.Series([True, False, True])
    refused(declared, lambda m: m.learn_many(X, y), TypeError, "na_values")
    read = X.replace("?", np.nan).astype({"a": float})  # what read_csv(na_values="?") gives
    plain = learner.clone()
    declared.learn_many(read, y)
    plain.learn_many(read, y)
    for x in ({"a": 1.0, "c": "x"}, {"a": 2.0}, {"c": "y"}):
        assert declared.predict_proba_one(x) == pytest.approx(plain.predict_proba_one(x),
                                                              abs=1e-12)
    with pytest.raises(ValueError, match="both nominal_attributes and numeric_attributes"):
        learner.clone({"numeric_attributes": ["a"], "nominal_attributes": ["a", "b"]})
    with pytest.raises(TypeError, match=r"write \['a'\]"):
        learner.clone({"numeric_attributes": "a"})
