"""``ModelAveragedTAN(numeric=(...))`` with several interval grids (and Gaussian members) in
one learner, against separate single-representation learners combined by the recursions
written out here.

Streams (``tests/test_tan_auto_shared.py``'s: nominal and numeric features, missing values
of every kind, a class, values and a feature first seen mid-stream, records kept before the
cut points and replayed in every grid): one learner per member (a fixed rate and one
representation), their predictions mixed with dynamic-model-averaging weights updated by
``log π_m += log max(p_m(y | x), 1e-300)`` for a label seen before, then ``π ∝ π^β``; with
``decay="auto"``, a fixed ``decay < 1`` and ``decay=1``; predictions and the posteriors to
1e-10 after every record. ``learn_many`` at ``decay=1`` against the folds written out
(``tests/test_tan_stacking.py``'s helpers). Merge, pickling, River's checks, bad names.
"""

from __future__ import annotations

import functools
import pickle

import numpy as np
import pytest
from river import checks

from onlinebma.forgetting import AUTO_GRID
from onlinebma.tan import ModelAveragedTAN
from onlinebma.tan.stacking import stacking_weights
from tests.test_tan_auto_shared import close, mixed_stream
from tests.test_tan_representations import ExplicitRecursion
from tests.test_tan_stacking import assert_close_dicts, records, table, written_out

GRIDS = ("3 intervals", "8 intervals", "MDL", "Gaussian")


def written_out_recursion(representations, decay, **params):
    """One learner per member (representation, rate), mixed by the DMA recursion."""
    return ExplicitRecursion(AUTO_GRID if decay == "auto" else (decay,), representations,
                             **params)


@pytest.mark.parametrize("decay, representations, params", [
    (1.0, GRIDS, {}),
    (0.97, GRIDS, {"structure_decay": 0.99}),
    ("auto", ("5 intervals", "16 intervals", "Gaussian"), {}),
    (1.0, ("3 intervals", "MDL", "Gaussian", "Gaussian forests"), {"structures": "trees"}),
    (0.98, ("3 intervals", "32 intervals"), {}),
], ids=repr)
def test_stream_equals_separate_learners_mixed_by_the_recursion(decay, representations,
                                                                 params):
    data = mixed_stream(160, seed=3)
    model = ModelAveragedTAN(aode=False, numeric=representations, decay=decay, sample_size=25,
                             **params)
    reference = written_out_recursion(representations, decay, sample_size=25, **params)
    for t, (x, y) in enumerate(data):
        if t % 3:  # records learned with and without their prediction just before
            close(model.predict_proba_one(x), reference.predict_proba_one(x))
        model.learn_one(x, y)
        reference.learn_one(x, y)
        close(model.representation_posterior(), reference.posterior(0))
        close(model.decay_posterior(), reference.posterior(1))
    for x, _ in data[:20] + [({}, None), ({"z": 100.0}, None), ({"f0": "new"}, None)]:
        close(model.predict_proba_one(x), reference.predict_proba_one(x))
    # the edge posteriors: averaged over the interval members with their weights
    weights = np.array(reference.weights.weights())
    grids = [i for i, (r, _) in enumerate(reference.keys)
             if r not in ("Gaussian", "Gaussian forests")]
    want: dict = {}
    for i in grids:
        for e, p in reference.learners[i].edge_posteriors().items():
            want[e] = want.get(e, 0.0) + weights[i] * p / weights[grids].sum()
    got = model.edge_posteriors()
    close(dict(sorted(got.items())), dict(sorted(want.items())))
    for x, y in data[:5]:  # pickled: the same learner, going on
        model = pickle.loads(pickle.dumps(model))
        model.learn_one(x, y)
        reference.learn_one(x, y)
        close(model.predict_proba_one(x), reference.predict_proba_one(x))


def test_batch_predictions_equal_one_by_one():
    data = mixed_stream(120, seed=4)
    model = ModelAveragedTAN(aode=False, numeric=GRIDS, sample_size=20)
    for x, y in data:
        model.learn_one(x, y)
    import pandas as pd

    X = pd.DataFrame([x for x, _ in data[:40]])
    batch = model.predict_proba_many(X)
    for i, row in enumerate(records(X)):
        assert_close_dicts(dict(batch.iloc[i]), model.predict_proba_one(row), 1e-10)


@pytest.mark.parametrize("representations", [("3 intervals", "MDL", "Gaussian"),
                                             ("3 intervals", "8 intervals")], ids=repr)
def test_learn_many_weighs_the_grids_by_stacking_the_folds_written_out(representations):
    X, y = table(n=120, seed=2)
    P, whole = written_out(X, y, representations=representations)
    model = ModelAveragedTAN(aode=False, numeric=representations)
    model.learn_many(X, y)
    weights = model.representation_posterior()
    assert list(weights) == list(representations)
    np.testing.assert_allclose(list(weights.values()), stacking_weights(P), rtol=0, atol=1e-9)
    assert max(weights.values()) < 0.99  # more than one member kept: the test can fail
    for x in records(X.iloc[:30]) + [{}, {"a": "late"}, {"z": 1.0}]:
        ps = [m.predict_proba_one(x) for m in whole]
        want = {c: sum(w * p[c] for w, p in zip(weights.values(), ps)) for c in ps[0]}
        total = sum(want.values())
        assert_close_dicts(model.predict_proba_one(x), {c: p / total for c, p in want.items()})
    for got, member in zip(model.numeric_readings["z"], whole):
        assert got == member.numeric_readings["z"]


def test_merge_of_several_grids_equals_the_union_where_the_weights_have_not_moved():
    """Nominal streams: every member predicts alike, the weights stay equal and merge adds
    the counts; numbers move the weights and the merge is refused, naming the problem."""
    data = [({f: v for f, v in x.items() if f.startswith("f")}, y)
            for x, y in mixed_stream(90, seed=5)]
    make = functools.partial(ModelAveragedTAN, aode=False, numeric=GRIDS)
    left, right, whole = make(), make(), make()
    for i, (x, y) in enumerate(data):
        (left if i < 50 else right).learn_one(x, y)
        whole.learn_one(x, y)
    merged = left.merge(right)
    for x, _ in data[:20]:
        close(merged.predict_proba_one(x), whole.predict_proba_one(x), 1e-9)
    numeric = make()
    for x, y in mixed_stream(60, seed=5):
        numeric.learn_one(x, y)
    with pytest.raises(ValueError, match="weights of the members"):
        numeric.merge(make())


def test_bad_numeric_names_are_refused_naming_them():
    with pytest.raises(ValueError, match="'7 intervals'"):
        ModelAveragedTAN(aode=False, numeric=("3 intervals", "7 intervals"))
    with pytest.raises(ValueError, match="twice"):
        ModelAveragedTAN(aode=False, numeric=("MDL", "MDL"))
    with pytest.raises(ValueError, match="numeric"):
        ModelAveragedTAN(aode=False, numeric=())
    with pytest.raises(ValueError, match="'auto'"):
        ModelAveragedTAN(aode=False, numeric=("auto", "MDL"))
    assert ModelAveragedTAN(aode=False, numeric=["MDL", "Gaussian"]).representation_posterior() == \
        pytest.approx({"MDL": 0.5, "Gaussian": 0.5})


def test_fix_numeric_gives_every_grid_its_cut_points():
    """A learner given another's cut points (a tuple per feature, one Grids per grid) learns
    as it from the first record."""
    data = mixed_stream(100, seed=7)
    make = functools.partial(ModelAveragedTAN, aode=False, numeric=("3 intervals", "MDL"),
                             sample_size=30)
    first = make()
    for x, y in data:
        first.learn_one(x, y)
    readings = first.numeric_readings
    assert set(readings) == {"z", "w"} and all(len(g) == 2 for g in readings.values())
    late, reference = make(), written_out_recursion(("3 intervals", "MDL"), 1.0)
    late.fix_numeric(readings)
    for m, (r, _) in zip(reference.learners, reference.keys):
        m.fix_numeric({f: grids[0 if r == "3 intervals" else 1]
                       for f, grids in readings.items()})
    for x, y in data[:40]:
        close(late.predict_proba_one(x), reference.predict_proba_one(x))
        late.learn_one(x, y)
        reference.learn_one(x, y)
    before = pickle.dumps(late)
    with pytest.raises(ValueError):
        late.fix_numeric({"z": readings["w"]})  # other cut points already
    assert pickle.dumps(late) == before


@pytest.mark.slow
def test_river_checks_with_several_grids():
    checks.check_estimator(ModelAveragedTAN(aode=False, numeric=("3 intervals", "MDL", "Gaussian"),
                                            decay="auto"))
    checks.check_estimator(ModelAveragedTAN(aode=False, numeric=("5 intervals", "16 intervals")))


def test_learn_many_of_a_forgetting_learner_equals_learn_one_after_the_tables_cut_points():
    import pandas as pd

    from onlinebma.numeric.sample import TABLE_SAMPLE_SIZE, ColumnSample

    X, y = table(n=90, seed=3)
    make = functools.partial(ModelAveragedTAN, aode=False, numeric=("3 intervals", "MDL"),
                             decay=0.97)
    many, one = make(), make()
    many.learn_many(X, y)
    codes, names = pd.factorize(y)
    one.fix_numeric({f: ColumnSample.of_column(X[f].to_numpy(float), codes, tuple(names),
                                               TABLE_SAMPLE_SIZE) for f in ("z", "w")})
    for x, label in zip(records(X), y):
        one.learn_one(x, label)
    close(many.representation_posterior(), one.representation_posterior(), 1e-12)
    for x in records(X.iloc[:20]):
        close(many.predict_proba_one(x), one.predict_proba_one(x), 1e-12)


def test_a_refused_record_or_label_changes_nothing():
    model = ModelAveragedTAN(aode=False, numeric=GRIDS, sample_size=10)
    for x, y in mixed_stream(40, seed=8):
        model.learn_one(x, y)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="z"):
        model.learn_one({"z": 1e200, "f0": "v1"}, "y0")
    with pytest.raises((TypeError, ValueError), match="label"):
        model.learn_one({"z": 1.0}, None)
    with pytest.raises((TypeError, ValueError), match="f0"):
        model.learn_one({"f0": [1, 2]}, "y0")
    assert pickle.dumps(model) == before


def test_the_grids_stacks_leave_the_weighing_to_the_grid_stack():
    """Each grid's stack is weighed outside (by the GridStack): its own weights stay equal,
    while the GridStack's move with the evidence."""
    model = ModelAveragedTAN(numeric=("3 intervals", "MDL", "Gaussian"), decay="auto",
                             sample_size=25)
    for x, y in mixed_stream(120, seed=5):
        model.predict_proba_one(x)
        model.learn_one(x, y)
    state = model.state
    assert max(state.log_weights) - min(state.log_weights) > 1e-3
    for part in state.parts:
        assert max(part.log_weights) == min(part.log_weights)
