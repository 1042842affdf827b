"""ModelAveragedTAN as a River classifier: River's checks, progressive validation, pipelines,
pickling, refused input and Dask's plan."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pandas as pd
import pytest
from river import checks, compose, datasets, evaluate, metrics

from onlinebma.distributed.protocol import MergePlan
from onlinebma.preprocessing import MDLDiscretizer
from onlinebma.tan import AODE, TAN, ModelAveragedTAN


def stream(n, seed=0, missing=0.1):
    """Mixed records: nominal a, b (b depends on a given the class), numeric z, missing
    values."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        y = int(rng.integers(0, 3))
        a = int((y + rng.integers(0, 2)) % 3)
        b = (a + y) % 3 if rng.random() < 0.8 else int(rng.integers(0, 3))
        x = {"a": f"a{a}", "b": f"b{b}", "z": float(rng.normal(y, 1.0))}
        out.append(({f: v for f, v in x.items() if rng.random() >= missing}, f"y{y}"))
    return out


@pytest.mark.slow
def test_river_estimator_checks_on_default_parameters():
    """River's checks on the defaults. Every parameter set of ``_unit_test_params`` (River's
    hook for its checks) goes through the same checks in tests/test_learners.py, which runs
    them for every learner: running them here as well checked the same code twice."""
    checks.check_estimator(ModelAveragedTAN())


@pytest.mark.parametrize("make, params", [
    # one member (several are stacked by learn_many: test_tan_stacking, test_tan_grids)
    (ModelAveragedTAN, {"sample_size": 10, "numeric": "MDL", "aode": False}),
    (ModelAveragedTAN, {"sample_size": 10, "decay": 0.9}),
    (ModelAveragedTAN, {"sample_size": 10, "decay": "auto"}),
    (TAN, {"sample_size": 10, "decay": 0.9}),
    (AODE, {"sample_size": 10, "decay": "auto"}),
], ids=repr)
def test_learn_many_matches_learn_one_once_cut_points_are_agreed(make, params):
    """River's check that learn_many on 12-row batches equals learn_one on their rows
    (skipped in check_estimator: onlinebma.tan.numbers.LEARN_MANY_CHECK), on learners given
    the same cut points first: learn_many takes a table's cut points from the table, a stream
    from its first sample_size values, and with the cut points agreed the two must agree."""
    data = list(datasets.Phishing())[:240]
    frame = pd.DataFrame([x for x, _ in data])
    labels = pd.Series([y for _, y in data])
    agreed = make(**params)
    agreed.learn_many(frame, labels)
    many, one = make(**params), make(**params)
    for model in (many, one):
        model.fix_numeric(agreed.numeric_readings)
    for start in range(0, len(data), 12):
        many.learn_many(frame[start:start + 12], labels[start:start + 12])
    for x, y in data:
        one.learn_one(x, y)
    assert many.numeric_readings == one.numeric_readings == agreed.numeric_readings
    for x, _ in data[:30]:
        got, want = many.predict_proba_one(x), one.predict_proba_one(x)
        assert got.keys() == want.keys()
        assert all(abs(got[c] - want[c]) < 1e-12 for c in want)


def test_progressive_validation_equals_predict_then_learn():
    data = stream(400, seed=1)
    model = ModelAveragedTAN(sample_size=20)
    metric = evaluate.progressive_val_score(data, model, metrics.CrossEntropy())
    manual, loss = ModelAveragedTAN(sample_size=20), metrics.CrossEntropy()
    for x, y in data:
        p = manual.predict_proba_one(x)
        if p:  # River does not score the empty prediction before the first record
            loss.update(y, p)
        manual.learn_one(x, y)
    assert metric.get() == pytest.approx(loss.get(), abs=1e-12)
    # and it learns: better than the class frequencies alone
    assert metric.get() < math.log(3) - 0.2


def test_predict_before_learning_and_labels_online():
    model = ModelAveragedTAN()
    assert model.predict_proba_one({"a": "x"}) == {}
    assert model.predict_one({"a": "x"}) is None
    assert model.predict_proba_many(pd.DataFrame({"a": ["x"]})).shape == (1, 0)
    model.learn_one({"a": "x"}, True)
    model.learn_one({"a": "y"}, False)
    assert set(model.predict_proba_one({"a": "x"})) == {True, False}


def test_pipelines_with_a_discretiser_and_a_selection():
    data = stream(300, seed=2, missing=0.0)
    for model in (MDLDiscretizer() | ModelAveragedTAN(),
                  compose.Select("a", "b") | ModelAveragedTAN(structures="trees")):
        metric = evaluate.progressive_val_score(data, model, metrics.Accuracy())
        assert metric.get() > 0.5  # three balanced classes: chance is 1/3


def test_phishing_numeric_features_out_of_the_box():
    model = ModelAveragedTAN()
    metric = evaluate.progressive_val_score(datasets.Phishing(), model, metrics.ROCAUC())
    assert metric.get() > 0.85
    assert model.counts.n_features == 9
    # each numeric feature's values in the counts are the intervals of the first grid (MDL;
    # the 16-interval grid has counts of its own)
    assert set(model.representation_posterior()) == {"MDL", "16 intervals", "Gaussian"}
    counts = model.counts
    assert all(len(counts.values_[counts.feature_code(f)])
               == grids[0].n_intervals[grids[0].members.index("MDL")]
               for f, grids in model.numeric_readings.items())


@pytest.mark.parametrize("numeric", ["5 intervals", "auto"])
def test_pickle_round_trip_and_clone(numeric):
    data = stream(200, seed=3)
    model = ModelAveragedTAN(structures="trees", decay=0.99, structure_decay=0.98,
                             numeric=numeric)
    for x, y in data[:150]:
        model.learn_one(x, y)
    copy_ = pickle.loads(pickle.dumps(model))
    for x, y in data[150:]:
        assert model.predict_proba_one(x) == copy_.predict_proba_one(x)
        model.learn_one(x, y)
        copy_.learn_one(x, y)
    if numeric != "auto":
        # equal states pickle to equal bytes, part by part (the parts may share objects,
        # e.g. numpy dtypes or floats, differently after unpickling, which changes the
        # bytes of the whole but not what they hold: equal predictions above)
        state, copied = model.state.__getstate__(), copy_.state.__getstate__()
        assert list(state) == list(copied)
        for name, part in state.items():
            assert pickle.dumps(part) == pickle.dumps(copied[name]), name
    fresh = model.clone()
    assert fresh.predict_proba_one(data[0][0]) == {}
    assert fresh._get_params() == model._get_params()  # River's own accessor (no public one)


BAD = [
    ({"a": "a0", "z": "high"}, "y0", TypeError, "'z' is numeric"),
    ({"a": 3}, "y0", TypeError, "'a' is nominal"),
    ({"a": ["unhashable"]}, "y0", TypeError, "'a' has an unhashable"),
    ({"z": math.inf}, "y0", ValueError, "'z' has an infinite"),
    ({"a": "a0"}, None, ValueError, "label"),
    ({"a": "a0"}, ["unhashable"], TypeError, "label"),
]


@pytest.mark.parametrize("x,y,error,match", BAD)
@pytest.mark.parametrize("params", [{}, {"decay": 0.9, "structure_decay": 0.9},
                                    {"decay": "auto"}], ids=repr)
def test_bad_input_leaves_the_model_unchanged(x, y, error, match, params):
    model = ModelAveragedTAN(sample_size=5, **params)
    for xi, yi in stream(60, seed=4):
        model.learn_one(xi, yi)
    model.predict_proba_one({"a": "a0", "z": 1.0})
    before = pickle.dumps(model)
    with pytest.raises(error, match=match):
        model.learn_one(x, y)
    assert pickle.dumps(model) == before
    frame = pd.DataFrame([{"a": "a1", "b": "b0", "z": 0.5}, x])
    with pytest.raises((TypeError, ValueError)):
        model.learn_many(frame, pd.Series(["y1", y]))
    assert pickle.dumps(model) == before


def test_refused_hyperparameters_and_merges():
    for bad in ({"structures": "graphs"}, {"ess": 0.0}, {"edge_prior": -1.0},
                {"structure_decay": 1.5}, {"decay": "sometimes"}, {"numeric": "7 intervals"}):
        with pytest.raises(ValueError):
            ModelAveragedTAN(**bad)
    with pytest.raises(ValueError, match="hyperparameters"):
        ModelAveragedTAN().merge(ModelAveragedTAN(ess=2.0))
    with pytest.raises(ValueError, match="forget"):
        ModelAveragedTAN(structure_decay=0.9).merge(ModelAveragedTAN(structure_decay=0.9))
    left, right = (ModelAveragedTAN(sample_size=5, numeric="5 intervals", aode=False)
                   for _ in range(2))
    data = stream(40, seed=5)
    for x, y in data[:20]:
        left.learn_one(x, y)
    for x, y in data[20:]:
        right.learn_one(x, y)
    before = pickle.dumps((left, right))
    with pytest.raises(ValueError, match="'z' was cut into different intervals"):
        left.merge(right)
    assert pickle.dumps((left, right)) == before


def test_dask_plan_is_an_exact_merge():
    data = stream(120, seed=6, missing=0.2)
    data = [({f: v for f, v in x.items() if f != "z"}, y) for x, y in data]
    X = pd.DataFrame([x for x, _ in data])
    y = pd.Series([y for _, y in data])
    model = ModelAveragedTAN(aode=False)  # members that predict alike on nominal frames
    plan = model.distributed_plan()
    assert isinstance(plan, MergePlan)
    parts = [plan.learn_partition(X[i:i + 40], y[i:i + 40]) for i in (0, 40, 80)]
    trained = plan.finish(plan.combine(parts))
    whole = ModelAveragedTAN(aode=False)
    whole.learn_many(X, y)
    expected = whole.predict_proba_many(X).to_numpy()
    got = trained.predict_proba_many(X).reindex(columns=whole.classes_).to_numpy()
    np.testing.assert_allclose(got, expected, atol=1e-9)


def test_decay_auto_averages_rates():
    data = stream(300, seed=7)
    model = ModelAveragedTAN(decay="auto")
    for x, y in data:
        model.predict_proba_one(x)
        model.learn_one(x, y)
    posterior = model.decay_posterior()
    assert sum(posterior.values()) == pytest.approx(1.0)
    p = model.predict_proba_one(data[0][0])
    assert sum(p.values()) == pytest.approx(1.0)
    edges = model.edge_posteriors()
    assert set(edges) == {("a", "b"), ("a", "z"), ("b", "z")} or len(edges) == 3
    batch = model.predict_proba_many(pd.DataFrame([x for x, _ in data[:20]]))
    one = pd.DataFrame([model.predict_proba_one(x) for x, _ in data[:20]])
    one = one.reindex(columns=batch.columns)
    np.testing.assert_allclose(batch.to_numpy(), one.to_numpy(), atol=1e-12)
    deep = copy.deepcopy(model)
    assert deep.predict_proba_one(data[1][0]) == model.predict_proba_one(data[1][0])
