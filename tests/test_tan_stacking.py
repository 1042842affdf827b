"""ModelAveragedTAN.learn_many at decay=1 weighs its members by stacking (issue 38).

``onlinebma.tan.stacking``'s weights against the optimality conditions and a grid over the
simplex; ``learn_many``'s cross-validated probabilities against the folds written out, one
single-representation learner per member and fold learning the rows outside the fold with
``learn_one`` (given the table's cut points, classes and Gaussian features, as a Dask chain
agrees them); its counts and Gaussian statistics against ``learn_one`` on every row; its
weights against stacking of the written-out probabilities; what the docs promise about the
rows' order; tiny tables; the DMA recursion continued by ``learn_one``; bad input.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pandas as pd
import pytest

from onlinebma.numeric.sample import TABLE_SAMPLE_SIZE, ColumnSample
from onlinebma.reading import prepare_frame
from onlinebma.records import FeatureKinds
from onlinebma.tan import ModelAveragedTAN
from onlinebma.tan.members import Member, TreeMemberStack
from onlinebma.tan.merging import first_record_samples
from onlinebma.tan.stacking import FOLDS, folds_of, stacking_weights
from tests.support.dma import WrittenOutWeights

REPRESENTATIONS = ("MDL", "Gaussian")  # two members, one interval grid (a TreeMemberStack)


def score(P, w):
    return float(np.log(P @ w).sum())


@pytest.mark.parametrize("members, seed", [(2, 0), (2, 1), (3, 2), (3, 3)])
def test_stacking_is_the_maximum_over_the_simplex(members, seed):
    rng = np.random.default_rng(seed)
    P = rng.beta(2, 2, size=(80, members)) * rng.uniform(0.2, 1.0, members)
    w = stacking_weights(P)
    assert w.min() >= 0 and math.isclose(w.sum(), 1.0, abs_tol=1e-12)
    # Karush-Kuhn-Tucker: the gradient Σ_i P_ir / (P_i · w) is n where w_r > 0, at most n
    gradient = (P / (P @ w)[:, None]).sum(axis=0)
    n = len(P)
    for g, wr in zip(gradient, w):
        if wr > 1e-8:
            assert g == pytest.approx(n, rel=1e-6)
        else:
            assert g <= n * (1 + 1e-6)
    steps = 200
    best = max(score(P, np.array([*c, steps - sum(c)]) / steps)
               for c in itertools.product(range(steps + 1), repeat=members - 1)
               if sum(c) <= steps)
    assert score(P, w) >= best - 1e-9


def test_a_member_never_better_gets_no_weight():
    P = np.array([[0.9, 0.5], [0.8, 0.4], [0.7, 0.7]])
    np.testing.assert_allclose(stacking_weights(P), [1.0, 0.0], atol=1e-9)


def test_identical_members_keep_equal_weights():
    P = np.repeat(np.linspace(0.1, 0.9, 7)[:, None], 3, axis=1)
    np.testing.assert_allclose(stacking_weights(P), [1 / 3] * 3, atol=1e-15)


def test_weights_do_not_depend_on_the_order_of_the_rows():
    rng = np.random.default_rng(4)
    P = rng.uniform(0.01, 1.0, size=(500, 3))
    shuffled = P[rng.permutation(500)]
    np.testing.assert_allclose(stacking_weights(shuffled), stacking_weights(P), atol=1e-9)


def test_folds_follow_the_row_positions():
    folds = folds_of(np.arange(1000), 4)
    assert set(folds.tolist()) == {0, 1, 2, 3}
    for start, stop in [(0, 10), (10, 500), (500, 1000)]:  # partitions at their offsets
        np.testing.assert_array_equal(folds_of(np.arange(start, stop), 4), folds[start:stop])
    with pytest.raises(ValueError, match="n_folds"):
        folds_of(np.arange(3), 1)
    with pytest.raises(ValueError, match="non-negative"):
        folds_of(np.array([-1, 2]))


@pytest.mark.parametrize("bad, match", [
    (np.zeros((0, 2)), "rows"),
    (np.array([0.5, 0.5]), "rows"),
    (np.array([[0.5, 1.5]]), r"\[0, 1\]"),
    (np.array([[0.5, np.nan]]), r"\[0, 1\]"),
])
def test_bad_probabilities_are_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        stacking_weights(bad)


# ------------------------------------------------------------------ the learner


def table(n=150, seed=1):
    """Nominal a (depends on the class) with missing values and a value first seen late,
    numeric z (a point mass, missing values) and w (missing in the first rows), and a rare
    class: some folds' complements lack it."""
    rng = np.random.default_rng(seed)
    y = rng.choice(3, n, p=[0.5, 0.46, 0.04])
    y[n - 3] = 2
    z = np.where(rng.random(n) < 0.2, 0.0, rng.normal(y, 1.0))
    z[rng.random(n) < 0.08] = np.nan
    w = rng.normal(-y, 1.5)
    w[:3] = np.nan
    w[rng.random(n) < 0.08] = np.nan
    a = np.array([f"a{(c + rng.integers(0, 2)) % 3}" for c in y], dtype=object)
    a[rng.random(n) < 0.1] = None
    a[n - 5] = "late"
    z[0] = 0.25
    return pd.DataFrame({"a": a, "z": z, "w": w}), pd.Series([f"y{c}" for c in y])


def records(X):
    return [{f: v for f, v in row.items() if v is not None and v == v}
            for row in X.to_dict("records")]


def agreed(make, before, X, y):
    """A learner that learned ``before`` with learn_one, then agreed on the table ``X, y``
    what learn_many agrees before counting (cut points, classes, Gaussian features)."""
    learner = make()
    for x, label in before:
        learner.learn_one(x, label)
    codes, names = pd.factorize(y)
    samples = {}
    for f in ("z", "w"):
        sample = ColumnSample.of_column(X[f].to_numpy(float), codes, tuple(names),
                                        TABLE_SAMPLE_SIZE)
        if sample is not None:
            samples[f] = sample
    learner.fix_numeric(first_record_samples(samples))  # the Gaussian's features
    learner.fix_numeric(samples)
    return learner


def written_out(X, y, before=(), representations=None, **params):
    """``P[i, r]`` from one learner per (member, fold) trained with learn_one on the rows
    outside the fold, and the members trained on every row (the members of
    ``representations``, by default the module's ``REPRESENTATIONS`` when called)."""
    representations = representations or REPRESENTATIONS
    folds = folds_of(np.arange(len(X)))
    rows = records(X)
    P = np.zeros((len(X), len(representations)))
    whole = []
    for r, representation in enumerate(representations):
        make = functools.partial(ModelAveragedTAN, aode=False, numeric=representation, **params)
        for k in range(FOLDS):
            learner = agreed(make, before, X, y)
            for i in np.flatnonzero(folds != k):
                learner.learn_one(rows[i], y[i])
            for i in np.flatnonzero(folds == k):
                P[i, r] = learner.predict_proba_one(rows[i])[y[i]]
        learner = agreed(make, before, X, y)
        for x, label in zip(rows, y):
            learner.learn_one(x, label)
        whole.append(learner)
    return P, whole


def stack_probabilities(X, y, **params):
    """The cross-validated probabilities of a fresh stack (its steps of learn_many)."""
    stack = TreeMemberStack(params.get("structures", "forests"), params.get("ess", 10.0),
                            1.0, 1.0, None, 200, [Member(1.0, r) for r in REPRESENTATIONS])
    columns, new, labels = prepare_frame(FeatureKinds(), X, y)  # a fresh stack's kinds
    stack.agree_on_table(columns, new, labels)
    folds = stack.fold_states(X, labels)
    return stack.complements(folds).cross_validated_probabilities(X, labels)


def mixture(weights: dict, members, x):
    ps = [m.predict_proba_one(x) for m in members]
    out = {c: sum(w * p[c] for w, p in zip(weights.values(), ps)) for c in ps[0]}
    total = sum(out.values())
    return {c: p / total for c, p in out.items()}


def assert_close_dicts(got, want, tol=1e-9):
    assert sorted(got) == sorted(want)
    np.testing.assert_allclose([got[c] for c in want], list(want.values()), rtol=0, atol=tol)


@pytest.mark.parametrize("params", [{}, {"structures": "trees", "ess": 3.0}], ids=repr)
def test_learn_many_equals_the_folds_written_out(params):
    X, y = table()
    P, whole = written_out(X, y, **params)
    np.testing.assert_allclose(stack_probabilities(X, y, **params), P, rtol=0, atol=1e-9)
    model = ModelAveragedTAN(aode=False, numeric=REPRESENTATIONS, **params)
    model.learn_many(X, y)
    weights = model.representation_posterior()
    assert list(weights) == list(REPRESENTATIONS)
    np.testing.assert_allclose(list(weights.values()), stacking_weights(P), rtol=0, atol=1e-9)
    assert 0.01 < weights["MDL"] < 0.99  # both members are kept: the test can fail
    # the counts and statistics are those of learn_one on every row: each member predicts
    # as the single-representation learner that learned every row
    for x in records(X.iloc[:40]) + [{}, {"a": "late"}, {"z": 1.0}]:
        assert_close_dicts(model.predict_proba_one(x), mixture(weights, whole, x))
    assert model.numeric_readings == whole[0].numeric_readings
    batch = model.predict_proba_many(X)
    for i, x in enumerate(records(X)):
        assert_close_dicts(dict(batch.iloc[i]), model.predict_proba_one(x))


def test_learn_many_after_records_learned_before():
    """The records learned before are in every fold's training state, the weights become
    the table's stacking weights."""
    X, y = table(seed=5)
    before = list(zip(records(X.iloc[:20]), y[:20]))
    X, y = X.iloc[20:].reset_index(drop=True), y[20:].reset_index(drop=True)
    P, whole = written_out(X, y, before)
    model = ModelAveragedTAN(aode=False, numeric=REPRESENTATIONS)
    for x, label in before:
        model.learn_one(x, label)
    model.learn_many(X, y)
    weights = model.representation_posterior()
    np.testing.assert_allclose(list(weights.values()), stacking_weights(P), rtol=0, atol=1e-9)
    for x in records(X.iloc[:30]):
        assert_close_dicts(model.predict_proba_one(x), mixture(weights, whole, x))


def test_learn_one_continues_the_recursion_from_the_stacking_weights():
    X, y = table(seed=2)
    model = ModelAveragedTAN(aode=False, numeric=REPRESENTATIONS)
    model.learn_many(X, y)
    weights = model.representation_posterior()
    _, whole = written_out(X, y)
    x, label = {"a": "a1", "z": 0.3, "w": -1.0}, "y1"
    p = [m.predict_proba_one(x)[label] for m in whole]
    want = WrittenOutWeights(len(whole), start=list(weights.values()))
    want.update(p)
    model.learn_one(x, label)
    np.testing.assert_allclose(list(model.representation_posterior().values()),
                               want.weights(), rtol=0, atol=1e-12)


def test_rows_exchanged_within_a_fold_give_the_same_learner():
    """The weights depend on which rows share a fold (their positions), not on the order of
    the rows within a fold (the table smaller than the cut points' sample, no value missing
    from the first row: the cut points and Gaussian features do not depend on it either)."""
    X, y = table(seed=3)
    X["w"] = X["w"].fillna(0.5)
    X["z"] = X["z"].fillna(-0.5)
    folds = folds_of(np.arange(len(X)))
    rng = np.random.default_rng(0)
    order = np.arange(len(X))
    for k in range(FOLDS):
        rows = np.flatnonzero(folds == k)
        order[rows] = rng.permutation(rows)
    assert (order != np.arange(len(X))).any()
    one = ModelAveragedTAN(aode=False, numeric=REPRESENTATIONS)
    other = ModelAveragedTAN(aode=False, numeric=REPRESENTATIONS)
    one.learn_many(X, y)
    other.learn_many(X.iloc[order].reset_index(drop=True), y[order].reset_index(drop=True))
    assert_close_dicts(other.representation_posterior(), one.representation_posterior(),
                       1e-12)
    want = one.predict_proba_many(X)
    got = other.predict_proba_many(X)[list(want.columns)]
    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=0, atol=1e-9)
    # a permutation across folds moves rows to other folds: other weights
    shuffled = ModelAveragedTAN(aode=False, numeric=REPRESENTATIONS)
    perm = rng.permutation(len(X))
    shuffled.learn_many(X.iloc[perm].reset_index(drop=True), y[perm].reset_index(drop=True))
    assert abs(shuffled.representation_posterior()["MDL"]
               - one.representation_posterior()["MDL"]) > 1e-6


@pytest.mark.parametrize("n", [1, 2, 4])
def test_tables_smaller_than_the_folds(n):
    X, y = table(seed=4)
    X, y = X.iloc[3:3 + n].reset_index(drop=True), y[3:3 + n].reset_index(drop=True)
    P, whole = written_out(X, y)
    model = ModelAveragedTAN(aode=False, numeric=REPRESENTATIONS)
    model.learn_many(X, y)
    np.testing.assert_allclose(list(model.representation_posterior().values()),
                               stacking_weights(P), rtol=0, atol=1e-9)
    x = records(X)[0]
    assert_close_dicts(model.predict_proba_one(x),
                       mixture(model.representation_posterior(), whole, x))
    model.learn_one({"a": "a0", "z": 1.0, "w": 2.0}, "y0")  # the stream goes on
    assert math.isclose(sum(model.representation_posterior().values()), 1.0)


def test_one_row_of_a_fresh_learner_keeps_equal_weights():
    model = ModelAveragedTAN(aode=False, numeric=REPRESENTATIONS)
    model.learn_many(pd.DataFrame({"z": [1.0], "a": ["p"]}), pd.Series(["u"]))
    assert model.representation_posterior() == pytest.approx({"MDL": 0.5, "Gaussian": 0.5})


def test_a_nominal_table_keeps_equal_weights():
    """Without numbers the members predict alike: no evidence either way."""
    X, y = table(seed=5)
    model = ModelAveragedTAN(aode=False, numeric=REPRESENTATIONS)
    model.learn_many(X[["a"]], y)
    assert model.representation_posterior() == pytest.approx({"MDL": 0.5, "Gaussian": 0.5},
                                                             abs=1e-12)


def snapshot(model, X):
    return (model.predict_proba_many(X).to_numpy().tolist(), model.representation_posterior(),
            model.numeric_readings, model.counts.classes_, model.counts.features_)


@pytest.mark.parametrize("bad, match", [
    (lambda X, y: (X.assign(z=X["z"].where(X.index != 7, 1e200)), y), "z"),
    (lambda X, y: (X, y.where(y.index != 9, None)), "label"),
    (lambda X, y: (X.assign(a=X["a"].where(X.index != 4, 1.5)), y), "a"),
])
def test_a_bad_table_changes_nothing(bad, match):
    X, y = table(seed=6)
    model = ModelAveragedTAN(aode=False, numeric=REPRESENTATIONS)
    model.learn_many(X[:60], y[:60])
    before = snapshot(model, X)
    with pytest.raises((TypeError, ValueError), match=match):
        model.learn_many(*bad(X[60:].reset_index(drop=True), y[60:].reset_index(drop=True)))
    assert snapshot(model, X) == before



def test_gaussian_statistics_of_a_table_equal_learning_its_rows():
    """GaussianStatistics.learn_many (the fold states' Gaussian counting) against learn on
    each row: a row missing a value or every value, a class seen late."""
    from onlinebma.tan.gaussian import GaussianStatistics

    rng = np.random.default_rng(8)
    values = rng.normal(size=(40, 2)) * [1.0, 3.0] + [0.0, 5.0]
    values[3, 1] = values[7, 0] = np.nan
    values[11] = np.nan
    classes = rng.integers(0, 2, 40)
    classes[30:33] = 2
    rows, table = GaussianStatistics((1.0,)), GaussianStatistics((1.0,))
    for stats in (rows, table):
        stats.choose(["u", "v"])
    for x, c in zip(values, classes):
        rows.learn([(f, v) for f, v in zip(["u", "v"], x) if v == v], int(c), 3)
    table.learn_many(values, classes, 3)
    np.testing.assert_allclose(table.statistics.n, rows.statistics.n, rtol=0, atol=1e-12)
    np.testing.assert_allclose(table.statistics.mean, rows.statistics.mean, rtol=0,
                               atol=1e-12)
    for x in ([0.5, 4.0], [np.nan, 7.0], [-1.0, np.nan]):
        np.testing.assert_allclose(table.log_densities(np.array(x), 3),
                                   rows.log_densities(np.array(x), 3), rtol=0, atol=1e-10)
    assert rows.statistics.n.tolist() == [[float((classes[:11] == k).sum()
                                                 + (classes[12:] == k).sum())
                                           - (k == classes[3]) - (k == classes[7])
                                           for k in range(3)]]
