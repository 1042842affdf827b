"""Fayyad–Irani MDL discretization: Weka's numbers, Weka itself, and the River transformer."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from river import checks

from experiments.peers.weka import weka_cut_points, write_arff
from onlinebma.datasets import UCIDataset
from onlinebma.preprocessing import MDLDiscretizer, interval_labels, mdl_cut_points
from tests.support.weka import needs_weka


def _coded(Y):
    classes = sorted(Y.astype(str).unique())
    return Y.astype(str).map({c: i for i, c in enumerate(classes)}).to_numpy(), classes


def test_iris_cut_points_match_weka_3_6_14_numbers_from_the_issue():
    X, Y = UCIDataset("iris").to_frame()
    y, _ = _coded(Y)
    expected = {
        "sepal length": [5.55, 6.15],
        "sepal width": [2.95, 3.35],
        "petal length": [2.45, 4.75],
        "petal width": [0.8, 1.75],
    }
    for col, cuts in expected.items():
        np.testing.assert_allclose(mdl_cut_points(X[col].to_numpy(float), y, 3), cuts,
                                   rtol=0, atol=1e-12)


def _compare_with_weka(X, Y, numeric, tmp_path, classes=None):
    classes = classes or _coded(Y)[1]
    y = Y.astype(str).map({c: i for i, c in enumerate(classes)}).to_numpy()
    weka = weka_cut_points(write_arff(X, Y, tmp_path / "d.arff", numeric=numeric, classes=classes))
    assert set(weka) == set(numeric)
    n_cuts = 0
    for col in numeric:
        ours = mdl_cut_points(X[col].to_numpy(float), y, len(classes))
        assert ours.shape == weka[col].shape, (col, ours, weka[col])
        # Weka prints cut points with 6 decimals.
        np.testing.assert_allclose(ours, weka[col], rtol=0, atol=5.1e-7, err_msg=col)
        n_cuts += ours.size
    return n_cuts


@needs_weka
@pytest.mark.parametrize("name", ["iris", "glass", "crx", "horse-colic", "sonar"])
def test_cut_points_equal_weka_on_uci_datasets(name, tmp_path):
    ds = UCIDataset(name)
    X, Y = ds.to_frame()
    assert _compare_with_weka(X, Y, list(ds.numeric), tmp_path) > 0


@needs_weka
def test_cut_points_equal_weka_on_random_data_with_ties_missing_values_and_unused_classes(tmp_path):
    rng = np.random.default_rng(7)
    n, k = 300, 5
    y = rng.integers(0, k - 1, n)  # class k-1 never occurs
    cols = {}
    for j in range(24):
        if j % 3 == 0:
            x = rng.integers(0, 6, n) + y * (j % 2)  # heavy ties
        elif j % 3 == 1:
            x = rng.normal(0.6 * y, 1.0, n).round(1)
        else:
            x = rng.normal(y, 1.0, n)
        x = x.astype(float)
        x[rng.random(n) < 0.1] = np.nan
        cols[f"a{j}"] = x
    X = pd.DataFrame(cols)
    Y = pd.Series([f"c{v}" for v in y])
    assert _compare_with_weka(X, Y, list(cols), tmp_path, classes=[f"c{i}" for i in range(k)]) > 0


def test_degenerate_inputs():
    assert mdl_cut_points(np.array([]), np.array([], dtype=int), 2).size == 0
    assert mdl_cut_points(np.array([1.0]), np.array([0]), 2).size == 0
    assert mdl_cut_points(np.array([1.0, 1.0, 1.0, 1.0]), np.array([0, 1, 0, 1]), 2).size == 0
    assert mdl_cut_points(np.full(5, np.nan), np.zeros(5, dtype=int), 2).size == 0
    # Pure class: no gain, no cut.
    assert mdl_cut_points(np.arange(10.0), np.zeros(10, dtype=int), 1).size == 0


def test_cut_points_ignore_record_order_and_missing_values():
    rng = np.random.default_rng(3)
    x = rng.normal(size=200)
    y = (x + rng.normal(scale=0.5, size=200) > 0).astype(int)
    cuts = mdl_cut_points(x, y, 2)
    perm = rng.permutation(200)
    np.testing.assert_array_equal(mdl_cut_points(x[perm], y[perm], 2), cuts)
    xm = np.concatenate([x, np.full(30, np.nan)])
    ym = np.concatenate([y, np.ones(30, dtype=int)])
    np.testing.assert_array_equal(mdl_cut_points(xm, ym, 2), cuts)
    assert cuts.size >= 1 and np.all(np.diff(cuts) > 0)


@pytest.mark.parametrize(
    "x, y, k, match",
    [
        (np.zeros((2, 2)), np.zeros(2, dtype=int), 2, "1-d"),
        (np.zeros(3), np.zeros(2, dtype=int), 2, "1-d"),
        (np.zeros(2), np.array([0, 2]), 2, "class codes"),
        (np.zeros(2), np.array([0.0, 1.0]), 2, "class codes"),
        (np.array([0.0, np.inf]), np.array([0, 1]), 2, "infinite"),
        (np.zeros(2), np.array([0, 1]), 0, "n_classes"),
    ],
)
def test_bad_input_is_refused_with_a_clear_error(x, y, k, match):
    with pytest.raises(ValueError, match=match):
        mdl_cut_points(x, y, k)


# ---------------------------------------------------------------- MDLDiscretizer


@pytest.mark.slow
def test_discretizer_passes_river_checks():
    checks.check_estimator(MDLDiscretizer())


def test_discretizer_cut_points_are_mdl_cut_points_of_the_learned_values():
    ds = UCIDataset("crx")
    X, Y = ds.to_frame()
    disc = MDLDiscretizer()
    for x, y in ds:
        disc.learn_one(x, y)
    classes = list(dict.fromkeys(Y))  # codes in order of appearance
    y = Y.map({c: i for i, c in enumerate(classes)}).to_numpy()
    for f in ds.numeric:
        np.testing.assert_array_equal(
            disc.cut_points_[f], mdl_cut_points(X[f].to_numpy(float), y, len(classes))
        )
    # learn_many / fit on the frame give the same cut points as learning one record at a time.
    batch = MDLDiscretizer().fit(X, Y)
    for f in ds.numeric:
        np.testing.assert_array_equal(batch.cut_points_[f], disc.cut_points_[f])


def test_transform_maps_numbers_to_interval_names_and_leaves_the_rest_alone():
    X, Y = UCIDataset("iris").to_frame()
    disc = MDLDiscretizer().fit(X, Y)
    names = interval_labels([2.45, 4.75])
    out = disc.transform_one({"petal length": 2.45, "sepal width": float("nan"), "note": "x"})
    assert out["petal length"] == names[0]  # bins are closed on the right, as in Weka
    assert out["sepal width"] != out["sepal width"]  # missing stays missing (NaN kept)
    assert out["note"] == "x"
    assert disc.transform_one({"petal length": 2.4500001})["petal length"] == names[1]
    assert disc.transform_one({"petal length": 9.0})["petal length"] == names[2]
    assert disc.transform_one({"new": 3.0}) == {"new": "(-inf, inf)"}
    frame = disc.transform_many(X.iloc[:3].assign(**{"petal width": [0.2, None, 2.0]}))
    assert list(frame["petal length"]) == [names[0]] * 3
    assert frame["petal width"].iloc[1] is None
    assert frame["petal width"].iloc[2] == "(1.75, inf)"


def test_cut_points_follow_new_data():
    disc = MDLDiscretizer()
    for v in range(8):
        disc.learn_one({"a": float(v)}, v >= 4)
    assert disc.transform_one({"a": 3.0})["a"] == "(-inf, 3.5]"
    for v in range(8, 16):
        disc.learn_one({"a": float(v)}, v >= 12)
    np.testing.assert_allclose(disc.cut_points_["a"], mdl_cut_points(
        np.arange(16.0), np.array([0, 0, 0, 0, 1, 1, 1, 1] * 2), 2))


def test_discretizer_refuses_bad_records_and_stays_unchanged():
    disc = MDLDiscretizer()
    disc.learn_one({"a": 1.0, "b": "u"}, "yes")
    before = pickle.dumps(disc)  # its whole state: values, labels, kinds, cached cuts
    with pytest.raises(TypeError, match="'a' is numeric"):
        disc.learn_one({"a": "high"}, "no")
    with pytest.raises(ValueError, match="label"):
        disc.learn_one({"a": 2.0}, None)
    with pytest.raises(ValueError, match="infinite"):
        disc.learn_many(pd.DataFrame({"a": [1.0, np.inf]}), pd.Series(["a", "b"]))
    assert pickle.dumps(disc) == before


# ------------------------------------- issue 13: refit policy (item 9) and pipelines (item 12)

def _stream(n, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    a = rng.normal(y, 1.0)
    return [({"a": float(v), "b": "u"}, int(c)) for v, c in zip(a, y)]


def test_streamed_cut_points_are_refitted_by_the_documented_policy():
    """Cut points are recomputed only once a feature's values grew by 10% since the last fit
    (item 9: recomputing them at every transform made streaming quadratic), and then equal
    the cut points of every value learned so far."""
    data = _stream(3000)
    disc = MDLDiscretizer()
    fits, before = [], None
    for i, (x, y) in enumerate(data, 1):
        disc.learn_one(x, y)
        disc.transform_one(x)  # refits if due; reading cut_points_ next refits nothing more
        cuts = disc.cut_points_["a"]  # the same array object until the next refit
        if cuts is not before:
            fits.append(i)
        before = cuts
    assert len(fits) < 100  # O(log n) refits, not one per record
    for prev, cur in zip(fits, fits[1:]):
        assert cur == prev + max(1, -(-prev // 10))  # the first record at >= 10% growth
    n = fits[-1]
    xs = np.array([x["a"] for x, _ in data[:n]])
    ys = np.array([y for _, y in data[:n]])
    np.testing.assert_array_equal(disc.cut_points_["a"], mdl_cut_points(xs, ys, 2))


def test_refit_every_one_recomputes_at_every_transform():
    data = _stream(300)
    disc = MDLDiscretizer(refit_every=1)
    for i, (x, y) in enumerate(data, 1):
        disc.learn_one(x, y)
        xs = np.array([r["a"] for r, _ in data[:i]])
        ys = np.array([c for _, c in data[:i]])
        np.testing.assert_array_equal(disc.cut_points_["a"], mdl_cut_points(xs, ys, 2))


@pytest.mark.parametrize("bad", [0, -1, 1.5, "10", True])
def test_refit_every_is_validated(bad):
    with pytest.raises((TypeError, ValueError), match="refit_every"):
        MDLDiscretizer(refit_every=bad)


def test_in_a_pipeline_learn_many_discretizes_the_batch_with_cut_points_learned_from_it():
    """Item 12: River's Pipeline.learn_many transforms a batch before the discretizer learns
    it, so every value became "(-inf, inf)" and the learner behind learned nothing."""
    from onlinebma.naive_bayes import NaiveBayes

    X, Y = UCIDataset("iris").to_frame()
    order = np.random.default_rng(1).permutation(len(X))
    X, Y = X.iloc[order].reset_index(drop=True), Y.iloc[order].reset_index(drop=True)
    train, test = slice(0, 100), slice(100, None)
    piped = MDLDiscretizer() | NaiveBayes()
    piped.learn_many(X[train], Y[train])
    by_hand = MDLDiscretizer().fit(X[train], Y[train])
    nb = NaiveBayes()
    nb.learn_many(by_hand.transform_many(X[train]), Y[train])
    pd.testing.assert_frame_equal(piped.predict_proba_many(X[test]),
                                  nb.predict_proba_many(by_hand.transform_many(X[test])))
    assert (piped.predict_many(X[test]) == Y[test]).mean() > 0.85


def test_a_transformed_frame_is_rewritten_only_for_the_batch_learned_right_after():
    X, Y = UCIDataset("iris").to_frame()
    disc = MDLDiscretizer()
    kept = disc.transform_many(X)
    other = X.copy()
    disc.learn_many(other, Y)  # another frame object: the earlier output is left alone
    assert set(kept["petal length"]) == {"(-inf, inf)"}
    pickle.dumps(disc)  # what the pipeline bookkeeping holds is not part of the state
