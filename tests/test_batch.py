"""The batch adapter: encoding, window, refit policy, bad input, River and pandas APIs."""

import copy

import numpy as np
import pandas as pd
import pytest
from river import checks

from onlinebma.batch import BufferRefitClassifier


class ClassCounts(BufferRefitClassifier):
    """Smoothed class frequencies of the fitted records: the smallest eager model."""

    def _fit(self, data):
        self.counts_ = np.bincount(data.y, minlength=len(data.classes)) + 1.0

    def _predict_proba(self, data, rows):
        return np.tile(self.counts_ / self.counts_.sum(), (rows.n, 1))


class LazyCounts(BufferRefitClassifier):
    """The same, lazily from the store."""

    _lazy = True

    def _predict_proba(self, data, rows):
        c = np.bincount(data.y, minlength=len(data.classes)) + 1.0
        return np.tile(c / c.sum(), (rows.n, 1))


@pytest.mark.slow
@pytest.mark.parametrize("model", [ClassCounts(), ClassCounts(window=30), LazyCounts()])
def test_river_estimator_checks(model):
    checks.check_estimator(model)


def _stream(n=40, seed=0):
    rng = np.random.default_rng(seed)
    for i in range(n):
        x = {"colour": rng.choice(["r", "g", "b"]), "size": float(rng.normal())}
        if i % 7 == 0:
            del x["colour"]
        if i % 5 == 0:
            x["size"] = None
        yield x, str(rng.choice(["a", "b"]))


def test_learn_one_and_learn_many_store_the_same_codes():
    one, many = ClassCounts(), ClassCounts()
    rows = list(_stream())
    for x, y in rows:
        one.learn_one(x, y)
    X = pd.DataFrame([x for x, _ in rows])
    many.learn_many(X, pd.Series([y for _, y in rows]))
    a, b = one.data_, many.data_
    assert a.nominal_features == b.nominal_features and a.classes == b.classes
    np.testing.assert_array_equal(a.codes, b.codes)
    np.testing.assert_array_equal(a.numeric, b.numeric)
    np.testing.assert_array_equal(a.y, b.y)
    assert (a.codes == -1).sum() == 6 and np.isnan(a.numeric).sum() == 8


def test_window_keeps_the_last_records_in_order():
    model = ClassCounts(window=5)
    for i in range(12):
        model.learn_one({"i": str(i)}, i % 2)
    data = model.data_
    assert [data.values[0][c] for c in data.codes[:, 0]] == [str(i) for i in range(7, 12)]


def test_default_refit_policy_grows_geometrically():
    model = ClassCounts()
    for i in range(1000):
        model.learn_one({"f": "v"}, i % 3)
        model.predict_proba_one({"f": "v"})
    # A refit whenever the store grew by 10%: about log(1000) / log(1.1) of them.
    assert 40 <= model.n_fits_ <= 80


def test_refit_every_counts_records():
    model = ClassCounts(refit_every=10)
    for i in range(100):
        model.learn_one({"f": "v"}, i % 2)
        model.predict_proba_one({"f": "v"})
    assert model.n_fits_ == 10


def test_fit_uses_exactly_the_given_records():
    model = ClassCounts()
    for x, y in _stream():
        model.learn_one(x, y)
    X = pd.DataFrame({"colour": ["r", "g"], "size": [1.0, 2.0]})
    model.fit(X, pd.Series(["a", "a"]))
    assert model.data_.n == 2 and model.classes_ == ("a",)
    assert model.predict_proba(X).shape == (2, 1)


def test_predict_before_learning_is_empty():
    assert ClassCounts().predict_proba_one({"a": 1}) == {}
    assert ClassCounts().predict_proba_many(pd.DataFrame({"a": [1, 2]})).shape == (2, 0)


@pytest.mark.parametrize(
    "x, y, error",
    [
        ({"colour": ["unhashable"]}, "a", TypeError),
        ({"size": float("inf")}, "a", ValueError),
        ({"size": "big"}, "a", TypeError),
        ({"colour": 3}, "a", TypeError),
        ({"colour": "r"}, None, ValueError),
    ],
)
def test_bad_input_is_refused_and_leaves_the_model_unchanged(x, y, error):
    model = ClassCounts()
    for xx, yy in _stream(10):
        model.learn_one(xx, yy)
    was = copy.deepcopy(model.coding)
    with pytest.raises(error):
        model.learn_one(x, y)
    now = model.coding  # compared through the coding's public views
    for a, b in zip(was.stored(), now.stored()):
        np.testing.assert_array_equal(a, b)
    assert [was.values_of(f) for f in was.nominal_features] == \
        [now.values_of(f) for f in now.nominal_features]
    assert was.kinds.kind == now.kinds.kind
    assert was.n_learned == now.n_learned


def test_bad_frame_is_refused_and_leaves_the_model_unchanged():
    model = ClassCounts()
    model.learn_many(pd.DataFrame({"size": [1.0, 2.0]}), pd.Series(["a", "b"]))
    before = model.data_
    with pytest.raises(ValueError, match="infinite"):
        model.learn_many(pd.DataFrame({"size": [1.0, np.inf], "new": ["u", "v"]}),
                         pd.Series(["a", "b"]))
    with pytest.raises(ValueError, match="missing"):
        model.learn_many(pd.DataFrame({"size": [1.0, 2.0]}), pd.Series(["a", None]))
    after = model.data_
    assert after.nominal_features == before.nominal_features == ()
    np.testing.assert_array_equal(after.numeric, before.numeric)


def test_unseen_values_and_late_features_are_skipped_at_prediction():
    seen = []

    class Spy(ClassCounts):
        # The adapter's subclass hook, overridden as every batch learner does: a spy on its rows.
        def _predict_proba(self, data, rows):
            seen.append(rows)
            return super()._predict_proba(data, rows)

    model = Spy(refit_every=1000)
    model.learn_one({"c": "r"}, "a")
    model.predict_proba_one({"c": "r"})  # fits now
    model.learn_one({"c": "g", "late": 1.0}, "b")  # after the fit: "g" and "late" are unknown to it
    model.predict_proba_one({"c": "g", "late": 2.0})
    rows = seen[-1]
    assert rows.codes.tolist() == [[-1]] and rows.numeric.shape == (1, 0)


# ------------------------------------------------------- classes absent from the table


def _policy_stream(n=60, seed=3):
    """Class "c" only among the first 10 records; "a" and "b" throughout."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        y = "c" if i < 10 and i % 2 else str(rng.choice(["a", "b"]))
        x = {"sky": str(rng.choice(["sun", "rain"] if y == "a" else ["rain", "fog"])),
             "temp": float(rng.normal(20.0 if y == "a" else 15.0, 3.0))}
        out.append((x, y))
    return out


def _policy_models():
    from onlinebma.isa import ISA
    from onlinebma.mixture import FAN, FiniteMixture
    from onlinebma.order_mcmc import FixedOrderBMA, OrderMCMC

    return [
        (FAN, {"max_components": 1}),
        (FiniteMixture, {"max_components": 1}),
        (FixedOrderBMA, {"order": ("class",), "max_parents": 1}),
        (OrderMCMC, {"n_orders": 2, "burn_in": 20, "n_iter": 60, "seed": 1, "max_parents": 1}),
        (ISA, {}),
    ]


@pytest.mark.parametrize("cls, params", _policy_models(),
                         ids=["FAN", "FiniteMixture", "FixedOrderBMA", "OrderMCMC", "ISA"])
def test_classes_absent_from_the_window_get_the_documented_share(cls, params):
    """Every batch method: a known class without a record in the table gets
    (m_k + 1) / (n + K); the table's classes share the rest in the model's proportions."""
    window = 30
    stream = _policy_stream()
    # ISA(window=w) stores the last 2 w records (the window and the contexts of its sliding
    # score, docs/isa.md): its store is the same 30 records with window=15.
    stored_by = {"ISA": {"window": window // 2}}.get(cls.__name__, {"window": window})
    model = cls(refit_every=10**6, **stored_by, **params)
    for x, y in stream:
        model.learn_one(x, y)
    test = {"sky": "rain", "temp": 17.0}
    got = model.predict_proba_one(test)  # the first (and only) fit: on the last 30 records
    kept = stream[-window:]
    assert "c" not in {y for _, y in kept} and set(model.classes_) == {"a", "b", "c"}
    fresh = cls(**params, **({} if cls.__name__ != "ISA" else stored_by)).fit(
        pd.DataFrame([x for x, _ in kept]), pd.Series([y for _, y in kept]))
    own = fresh.predict_proba_one(test)  # the same model, fitted on the window alone
    assert set(got) == {"a", "b", "c"} and sum(got.values()) == pytest.approx(1.0, abs=1e-12)
    # n counts the window's records (for ISA the last W of its 2 W stored: docs/isa.md)
    share = 1 / (model.window + 3)
    assert got["c"] == pytest.approx(share, abs=1e-12)
    for label in ("a", "b"):
        assert got[label] == pytest.approx(own[label] * (1 - share), abs=1e-9)
    frame = model.predict_proba(pd.DataFrame([test, test]))
    assert list(frame.columns) == list(model.classes_)
    np.testing.assert_allclose(frame.iloc[0].to_numpy(), [got[k] for k in frame.columns])
    if cls.__name__ != "ISA":
        # A class that arrived after an eager model's fit: m_d = 1 among the stored records.
        model.learn_one({"sky": "sun", "temp": 30.0}, "d")
        after = model.predict_proba_one(test)
        assert model.n_fits_ == 1 and set(after) == {"a", "b", "c", "d"}
        assert after["d"] == pytest.approx(2 / (window + 4), abs=1e-12)
        assert after["c"] == pytest.approx(1 / (window + 4), abs=1e-12)
        rest = 1 - 3 / (window + 4)
        assert after["a"] / rest == pytest.approx(own["a"], abs=1e-9)
        assert sum(after.values()) == pytest.approx(1.0, abs=1e-12)


# ------------------------------------------------------- refusals leave the learner as it was


def test_learn_many_with_an_unhashable_label_changes_nothing():
    """Issue 13, item 5: the whole batch is checked before anything changes."""
    import pickle

    model = ClassCounts()
    model.learn_many(pd.DataFrame({"size": [1.0, 2.0]}), pd.Series(["a", "b"]))
    before = pickle.dumps(model)
    X = pd.DataFrame({"size": [1.0, 2.0], "colour": ["r", "g"]})
    with pytest.raises(TypeError, match="label"):
        model.learn_many(X, pd.Series(["a", ["unhashable"]]))
    assert pickle.dumps(model) == before
    model.learn_many(pd.DataFrame({"colour": [3.5, 4.5]}), pd.Series(["a", "b"]))  # still new
    assert "colour" in model.data_.numeric_features


@pytest.mark.parametrize("make", ["FAN", "ISA", "ClassCounts"])
def test_a_refused_fit_keeps_the_fitted_model(make):
    """Issue 13, item 6: fit(X, y[:5]) raises and the previous fit is still there."""
    import pickle

    from onlinebma.isa import ISA
    from onlinebma.mixture import FAN

    model = {"FAN": lambda: FAN(max_components=2, seed=0), "ISA": ISA,
             "ClassCounts": ClassCounts}[make]()
    rows = list(_stream(30))
    X = pd.DataFrame([x for x, _ in rows])
    y = pd.Series([label for _, label in rows])
    model.fit(X, y)
    proba = model.predict_proba_one(rows[0][0])
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="rows"):
        model.fit(X, y[:5])
    assert pickle.dumps(model) == before
    assert model.predict_proba_one(rows[0][0]) == proba
