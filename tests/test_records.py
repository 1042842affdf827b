"""How every learner reads a record (onlinebma.records): missing labels, missing values and
records that are not what a learner can read.

Each learner that reads through ``records.py`` is driven through its public interface; refused
calls must leave it exactly as it was (``pickle.dumps`` before and after).
"""

from __future__ import annotations

import pickle
import random

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from onlinebma import records
from onlinebma.mixture import FiniteMixture
from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
from onlinebma.preprocessing import MDLDiscretizer
from onlinebma.records import FeatureKinds, check_label, check_labels, numeric_values

MISSING = {
    "None": None,
    "float-nan": float("nan"),
    "np.float64-nan": np.float64("nan"),
    "np.float32-nan": np.float32("nan"),
    "np.float16-nan": np.float16("nan"),
    "pd.NA": pd.NA,
    "pd.NaT": pd.NaT,
    "np.datetime64-NaT": np.datetime64("NaT"),
}
missing = pytest.mark.parametrize("m", list(MISSING.values()), ids=list(MISSING))


def learners():
    return [NaiveBayes(), ModelAveragedNB(), BMANB(), FiniteMixture(max_components=2, n_init=1),
            MDLDiscretizer()]


def _trained(model):
    for x, y in [({"a": "u", "n": 1.0}, "p"), ({"a": "v", "n": 2.0}, "q"),
                 ({"a": "u", "n": 1.5}, "p")]:
        model.learn_one(x, y)
    return model


# ------------------------------------------------------------------ item 7: missing labels

@missing
def test_check_label_refuses_every_missing_label(m):
    with pytest.raises(ValueError, match="missing"):
        check_label(m)
    with pytest.raises(ValueError, match="missing"):
        check_labels(pd.Series(["p", m, "q"], dtype=object))


@missing
@pytest.mark.parametrize("model", learners(), ids=lambda m: type(m).__name__)
def test_learn_one_refuses_a_missing_label_and_changes_nothing(model, m):
    """np.float32 NaN, pd.NA and NaT were accepted; each float32 NaN became a class of its own."""
    model = _trained(model)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="label"):
        model.learn_one({"a": "u", "n": 3.0, "new": "w"}, m)
    assert pickle.dumps(model) == before


@missing
@pytest.mark.parametrize("model", learners(), ids=lambda m: type(m).__name__)
def test_learn_many_refuses_a_missing_label_and_changes_nothing(model, m):
    model = _trained(model)
    before = pickle.dumps(model)
    X = pd.DataFrame({"a": ["u", "v", "u"], "n": [0.5, 2.5, 1.0], "new": ["w", "w", "z"]})
    with pytest.raises(ValueError, match="label"):
        model.learn_many(X, pd.Series(["p", m, "q"], dtype=object))
    assert pickle.dumps(model) == before


def test_the_error_names_the_first_row_with_a_missing_label():
    with pytest.raises(ValueError, match="1 row.*index 'r2'"):
        check_labels(pd.Series(["p", "q", pd.NA], index=["r0", "r1", "r2"], dtype=object))


# --------------------------------------------------------- item 8: missing feature values

@missing
def test_a_missing_value_is_skipped_for_a_nominal_feature(m):
    """np.float64/np.float32 NaN were refused as 'a number for a nominal feature'."""
    kinds = FeatureKinds()
    kinds.commit(kinds.split({"c": "x"})[2])
    assert kinds.split({"c": m}) == ([], [], {})


@missing
def test_a_missing_first_value_does_not_fix_the_kind_of_a_new_feature(m):
    """A numpy NaN as the first value made the feature numeric, so later strings were refused."""
    kinds = FeatureKinds()
    numeric, nominal, new = kinds.split({"c": m, "a": 1.0})
    assert (numeric, nominal, new) == ([("a", 1.0)], [], {"a": 1})
    kinds.commit(new)
    numeric, nominal, new = kinds.split({"c": "red"})
    assert nominal == [("c", "red")] and new == {"c": 0}


@missing
def test_a_missing_value_is_not_a_category_under_nominal_attributes(m):
    """Under nominal_attributes every np.float32/np.float64 NaN was a new category."""
    kinds = FeatureKinds(nominal_attributes=["zip"])
    kinds.commit(kinds.split({"zip": 15213})[2])
    assert kinds.split({"zip": m}) == ([], [], {})


@missing
def test_a_missing_value_is_skipped_for_a_numeric_feature(m):
    kinds = FeatureKinds()
    kinds.commit(kinds.split({"n": 2.0})[2])
    assert kinds.split({"n": m}) == ([], [], {})


def _stream(seed, n=120):
    """Records with nominal, named-nominal and numeric features, and the same records with
    missing values of every kind in place of absent keys."""
    rng = random.Random(seed)
    values = list(MISSING.values())
    absent, present = [], []
    for i in range(n):
        y = rng.choice("pq")
        x = {"colour": rng.choice("rgb"), "zip": rng.choice([15213, 15217]),
             "size": rng.gauss(y == "p", 1.0), "late": rng.choice(["on", "off"])}
        if i < 10:
            del x["late"]  # a feature whose first values are missing
        x_missing = dict(x)
        for f in list(x):
            if rng.random() < 0.2:
                del x[f]
                x_missing[f] = rng.choice(values)
        for f in ("late",):
            if f not in x_missing:
                x_missing[f] = rng.choice(values)
        absent.append((x, y))
        present.append((x_missing, y))
    return absent, present


def _state(model):
    # The batch adapter's store grows by doubling with uninitialised rows past its end, so two
    # equal stores can pickle differently: compare what it stores.
    return pickle.dumps((model.data_, model.classes_) if hasattr(model, "data_") else model)


@pytest.mark.parametrize("make", [
    lambda: NaiveBayes(nominal_attributes=["zip"]),
    lambda: ModelAveragedNB(nominal_attributes=["zip"]),
    lambda: BMANB(nominal_attributes=["zip"]),
    lambda: FiniteMixture(max_components=2, n_init=1, seed=1, nominal_attributes=["zip"]),
    lambda: MDLDiscretizer(nominal_attributes=["zip"]),
], ids=["NaiveBayes", "ModelAveragedNB", "BMANB", "FiniteMixture", "MDLDiscretizer"])
def test_a_learner_fed_missing_values_equals_one_fed_absent_keys(make):
    """NaN (any float type), pd.NA, NaT and None are missing everywhere, as the README says:
    the learner ends in exactly the state of one that never saw those keys."""
    absent, present = _stream(3)
    a, b = make(), make()
    for (xa, y), (xb, _) in zip(absent, present):
        a.learn_one(xa, y)
        b.learn_one(xb, y)
    assert _state(a) == _state(b)
    for (xa, _), (xb, _) in list(zip(absent, present))[:20]:
        if hasattr(a, "predict_proba_one"):
            assert a.predict_proba_one(xa) == b.predict_proba_one(xb)
        else:
            assert a.transform_one(xa) == {f: v for f, v in b.transform_one(xb).items() if f in xa}


# ------------------------------------------------- item 5, records level: pd.NA in frames

def test_an_object_column_with_pd_na_is_a_numeric_column_with_missing_values():
    """split_frame accepts it as numeric (pd.NA missing), and numeric_values reads it as floats
    with NaN, where ``to_numpy().astype(float)`` raised a TypeError naming no feature."""
    X = pd.DataFrame({
        "n": pd.Series([1.0, pd.NA, 2.0, None, np.float32("nan")], dtype=object),
        "i": pd.Series([1, pd.NA, 3, 4, 5], dtype="Int64"),
        "f": pd.Series([0.5, None, 1.5, 2.5, pd.NA], dtype="Float64"),
        "c": pd.Series(["u", pd.NA, None, np.float32("nan"), "v"], dtype=object),
    })
    kinds, new = FeatureKinds(nominal_attributes=[]).split_frame(X)
    assert new == kinds == {"n": 1, "i": 1, "f": 1, "c": 0}
    np.testing.assert_array_equal(numeric_values(X["n"]), [1.0, np.nan, 2.0, np.nan, np.nan])
    np.testing.assert_array_equal(numeric_values(X["i"]), [1.0, np.nan, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(numeric_values(X["f"]), [0.5, np.nan, 1.5, 2.5, np.nan])


def test_mdl_discretizer_learn_many_reads_pd_na_as_missing():
    X = pd.DataFrame({"n": pd.Series([1.0, pd.NA, 2.0, 3.0], dtype=object)})
    y = pd.Series(["p", "p", "q", "q"])
    disc = MDLDiscretizer()
    disc.learn_many(X, y)
    expected = MDLDiscretizer()
    expected.learn_many(pd.DataFrame({"n": [1.0, np.nan, 2.0, 3.0]}), y)
    assert pickle.dumps(disc) == pickle.dumps(expected)


# ------------------------------------------- property: random streams with bad records mixed in

_GOOD = st.one_of(st.sampled_from(["a", "b", "c"]),
                  st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: round(v, 3)))
_BAD = st.sampled_from([float("inf"), -np.inf, ["unhashable"], {"a": 1}])
_VALUE = st.one_of(_GOOD, _GOOD, _GOOD, st.sampled_from(list(MISSING.values())), _BAD)
_RECORD = st.dictionaries(st.sampled_from(["f0", "f1", "f2", "f3"]), _VALUE, max_size=4)
_LABEL = st.one_of(st.sampled_from(["p", "q", "r"]), st.sampled_from(list(MISSING.values())))


def _missing(v) -> bool:
    """The test's own notion of missing: one of MISSING (NaN compares unequal to itself)."""
    return any(v is m for m in MISSING.values()) or (isinstance(v, float | np.floating) and v != v)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_RECORD, _LABEL), min_size=1, max_size=25))
def test_random_streams_refusals_change_nothing_and_missing_equals_absent(stream):
    """Each record is learned or refused; a refused one leaves every learner as it was, and an
    accepted one teaches exactly what the record without its missing values teaches."""
    makers = [NaiveBayes, BMANB, lambda: FiniteMixture(max_components=2, n_init=1, seed=0),
              MDLDiscretizer]
    learners = [make() for make in makers]
    twins = [make() for make in makers]  # fed the records with missing values left out
    for x, y in stream:
        clean = {f: v for f, v in x.items() if not _missing(v)}
        for model, twin in zip(learners, twins):
            before = pickle.dumps(model)
            try:
                model.learn_one(x, y)
            except (TypeError, ValueError):
                assert pickle.dumps(model) == before
                with pytest.raises((TypeError, ValueError)):
                    twin.learn_one(clean, y)
            else:
                twin.learn_one(clean, y)
            assert _state(model) == _state(twin)


# ------------------------------------------- issue 17: string columns validated by distinct value

def test_string_columns_are_validated_per_distinct_value_not_per_cell(monkeypatch):
    """learn_many on string columns spent 90% of its time checking every cell: the checks now
    run on the column's distinct values (factorised first)."""
    from onlinebma import records

    seen = []
    # A spy on the private per-value check: no public view counts how often it runs.
    real = records._hashable_or_raise
    monkeypatch.setattr(records, "_hashable_or_raise",
                        lambda f, values: real(f, seen.extend(list(values)) or values))
    X = pd.DataFrame({"s": pd.Series(["a", "b", "c", None] * 250, dtype=object),
                      "t": ["x", "y"] * 500})
    kinds, new = FeatureKinds().split_frame(X)
    assert kinds == new == {"s": 0, "t": 0}
    assert len(seen) <= 5


@pytest.mark.parametrize("bad, error, match", [
    (["u"], TypeError, "'s' has an unhashable value"),
    (3, TypeError, "'s' is nominal .*but got the number 3"),
])
def test_a_bad_cell_in_a_large_string_column_is_still_named(bad, error, match):
    values = ["a", "b"] * 500
    values[777] = bad
    X = pd.DataFrame({"s": pd.Series(values, dtype=object)})
    model = NaiveBayes()
    model.learn_one({"s": "a"}, 0)
    before = pickle.dumps(model)
    with pytest.raises(error, match=match):
        model.learn_many(X, pd.Series([0, 1] * 500))
    assert pickle.dumps(model) == before


class _Str(str):
    pass


@pytest.mark.parametrize("x", [
    {"a": "u", "b": "v"},  # all known nominal: the fast path
    {"p": 1.5, "q": -2.0},  # all known numeric: the fast path
    {"p": float("nan"), "q": 0.0},  # a missing value: skipped
    {"p": float("inf"), "q": 0.0},  # refused
    {"a": "u", "p": 1.5},  # mixed kinds
    {"a": _Str("u"), "b": "v"},  # a str subclass
    {"a": "u", "z": "new"},  # a new feature
    {"p": "text", "q": "x"},  # numeric features given strings: refused
    {"a": 1.0, "b": 2.0},  # nominal features given numbers: refused
    {"p": 3, "q": 1.0},  # an int for a numeric feature
])
def test_split_fast_path_equals_the_general_reading(x):
    """Issue 17: records whose values are all str of known nominal features, or all finite
    floats of known numeric ones, skip the per-value checks; the result (or the error) is the
    one the per-value reading gives."""
    fast = FeatureKinds()
    nominal, numeric = records.NOMINAL, records.NUMERIC
    fast.commit({"a": nominal, "b": nominal, "p": numeric, "q": numeric})
    general = FeatureKinds()
    general.kind.update(fast.kind)  # the same kinds, none in the fast path's sets

    def read(kinds):
        try:
            return kinds.split(x)
        except (TypeError, ValueError) as e:
            return type(e), str(e)

    assert read(fast) == read(general)


def test_feature_kinds_pickle_the_same_whatever_the_history_of_their_sets():
    """The sets of split's fast path are derived from ``kind``; their order depends on their
    history (a copy unpickled halfway and grown again can iterate them in another order), so
    they are not pickled: a learner and its unpickled copy fed the same records pickle to the
    same bytes, under any PYTHONHASHSEED. Integer feature names make the orders deterministic:
    1, 9 and 17 share a slot in a small set's table, not in a large one's."""
    small = FeatureKinds()
    small.commit({17: records.NOMINAL, 9: records.NOMINAL, 1: records.NOMINAL})
    large = FeatureKinds()
    large.kind.update(small.kind)
    large.nominal = set(range(20, 60))  # the same features in a table grown larger
    large.nominal.update([17, 9, 1])
    large.nominal.difference_update(range(20, 60))
    assert list(small.nominal) != list(large.nominal)  # the premise: another order
    assert pickle.dumps(small) == pickle.dumps(large)
    copy = pickle.loads(pickle.dumps(large))
    assert copy.kind == small.kind and copy.nominal == {1, 9, 17} and copy.numeric == set()
    assert copy.split({1: "u", 9: "v", 17: "w"}) == ([], [(1, "u"), (9, "v"), (17, "w")], {})


# The hostile-input catalogue: records that are not dicts, values no float can hold, NaN keys,
# unhashable labels in a batch.

NOT_A_DICT = {"pd.Series": pd.Series({"a": 1.0}), "None": None, "str": "a=1",
              "list of pairs": [("a", 1.0)]}


def _readers():
    """The learners and transformers whose records reach records.FeatureKinds first (the
    order learners look inside a record before: their own check is pending)."""
    from onlinebma.isa import ISA
    from onlinebma.mixture import FAN

    return [*learners(), ISA(), FAN(max_components=2, n_init=1)]


@pytest.mark.parametrize("record", list(NOT_A_DICT.values()), ids=list(NOT_A_DICT))
def test_split_refuses_a_record_that_is_not_a_dict(record):
    kinds = FeatureKinds()
    with pytest.raises(TypeError, match=r"a record is a dict \{feature: value\}, got "):
        kinds.split(record)
    assert kinds.kind == {}


@pytest.mark.parametrize("record", list(NOT_A_DICT.values()), ids=list(NOT_A_DICT))
@pytest.mark.parametrize("model", _readers(), ids=lambda m: type(m).__name__)
def test_every_reader_refuses_a_record_that_is_not_a_dict_and_changes_nothing(model, record):
    model.learn_one({"a": 1.0, "b": "x"}, True)
    before = pickle.dumps(model)
    with pytest.raises(TypeError, match="a record is a dict"):
        model.learn_one(record, False)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("value", [10**400, -(10**400)], ids=["10**400", "-10**400"])
def test_an_integer_no_float_can_hold_is_refused_naming_the_feature(value):
    kinds = FeatureKinds()
    with pytest.raises(ValueError, match="feature 'big' .* too large for a float"):
        kinds.split({"big": value})
    kinds.commit(kinds.split({"big": 1})[2])
    with pytest.raises(ValueError, match="feature 'big' .* too large for a float"):
        kinds.split({"big": value})
    column = pd.DataFrame({"big": pd.Series([1, value], dtype=object)})
    with pytest.raises(ValueError, match="feature 'big' .* too large for a float"):
        FeatureKinds().split_frame(column)


def test_a_signalling_nan_is_missing_like_every_nan():
    from decimal import Decimal

    kinds = FeatureKinds()
    assert kinds.split({"d": Decimal("sNaN"), "e": Decimal("NaN")}) == ([], [], {})
    with pytest.raises(ValueError, match="is missing"):
        check_label(Decimal("sNaN"))


@pytest.mark.parametrize("key", [float("nan"), np.float64("nan")], ids=["float", "np.float64"])
def test_a_nan_feature_name_is_refused(key):
    """Every NaN differs from every other: each would become a new feature."""
    kinds = FeatureKinds()
    with pytest.raises(ValueError, match="a feature name is NaN"):
        kinds.split({key: 1.0, "a": 2.0})
    with pytest.raises(ValueError, match="a feature name is NaN"):
        kinds.split_frame(pd.DataFrame({key: [1.0], "a": [2.0]}))
    assert kinds.split({key: None, "a": 2.0})[0] == [("a", 2.0)]  # missing: never read


@pytest.mark.parametrize("labels", [[[1], [2]], [{"a": 1}, {"b": 2}]], ids=["lists", "dicts"])
def test_mdl_discretizer_learn_many_checks_labels_before_committing_feature_kinds(labels):
    disc = MDLDiscretizer()
    before = pickle.dumps(disc)
    X = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]})
    with pytest.raises(TypeError, match="the label y=.* is not hashable"):
        disc.learn_many(X, pd.Series(labels))
    assert pickle.dumps(disc) == before
    disc.learn_many(pd.DataFrame({"a": ["u", "v"], "b": [1.0, 2.0]}), pd.Series([1, 2]))
    assert disc.transform_one({"a": "u", "b": 1.5})["a"] == "u"  # kinds free to be chosen now


@pytest.mark.parametrize("model", _readers(), ids=lambda m: type(m).__name__)
def test_learn_many_refuses_an_array_and_duplicate_columns_naming_them(model):
    y = pd.Series([True, False])
    before = pickle.dumps(model)
    with pytest.raises(TypeError, match="X is a pandas DataFrame .* got ndarray"):
        model.learn_many(np.array([[1.0, 2.0], [3.0, 4.0]]), y)
    twice = pd.DataFrame([[1.0, 2.0, "u"], [3.0, 4.0, "v"]], columns=["a", "a", "b"])
    # records.py and the frame readers of naive_bayes/frames.py word it differently
    with pytest.raises(ValueError, match=r"(duplicate column names:|column name\(s\)) \['a'\]"):
        model.learn_many(twice, y)
    assert pickle.dumps(model) == before
