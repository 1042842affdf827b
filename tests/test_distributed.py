"""Training on Dask gives exactly the learner one machine builds from the whole frame."""

import pickle

import dask
import dask.dataframe as dd
import distributed as dask_distributed
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onlinebma import distributed
from onlinebma.datasets import UCIDataset
from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes

LEARNERS = [NaiveBayes, ModelAveragedNB, BMANB]


@pytest.fixture(scope="module")
def crx():
    """Mixed nominal/numeric records with missing values; rows grouped by class, so the
    partitions meet the labels in a fixed order and some partitions hold one class only."""
    X, y = UCIDataset("crx").to_frame()
    order = np.argsort(y.to_numpy() == "+", kind="stable")
    X, y = X.iloc[order].reset_index(drop=True), y.iloc[order].reset_index(drop=True)
    return X, y


def _frame(X, y, npartitions):
    return dd.from_pandas(X.assign(label=y), npartitions=npartitions, sort=False)


def _assert_same(a, b, X):
    pa, pb = a.predict_proba_many(X), b.predict_proba_many(X)
    assert list(pa.columns) == list(pb.columns)
    np.testing.assert_allclose(pa.to_numpy(), pb.to_numpy(), rtol=0, atol=1e-9)
    if hasattr(a, "feature_posteriors"):
        fa, fb = a.feature_posteriors(), b.feature_posteriors()
        assert fa.keys() == fb.keys()
        for f in fa:
            assert fa[f] == pytest.approx(fb[f], abs=1e-9)


@pytest.mark.parametrize("learner", LEARNERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("npartitions", [1, 3, 7])
@pytest.mark.parametrize("split_every", [2, 8])
def test_fit_equals_learn_many_on_the_whole_frame(crx, learner, npartitions, split_every):
    X, y = crx
    one = learner()
    one.learn_many(X, y)
    with dask.config.set(scheduler="synchronous"):
        model = distributed.fit(learner(), _frame(X, y, npartitions), target="label",
                                split_every=split_every)
        proba = distributed.predict_proba(model, dd.from_pandas(X, npartitions=3)).compute()
    _assert_same(model, one, X)
    expected = one.predict_proba_many(X)
    assert list(proba.columns) == list(expected.columns)
    np.testing.assert_allclose(proba.to_numpy(), expected.to_numpy(), rtol=0, atol=1e-9)


def test_fit_continues_from_what_the_model_learned(crx):
    X, y = crx
    start = ModelAveragedNB()
    start.learn_many(X[:100], y[:100])
    before = pickle.dumps(start)
    with dask.config.set(scheduler="synchronous"):
        model = distributed.fit(start, _frame(X[100:], y[100:], 4), target="label")
    assert pickle.dumps(start) == before  # the given learner is not modified
    one = ModelAveragedNB()
    one.learn_many(X, y)
    _assert_same(model, one, X)


def test_on_a_local_cluster(crx):
    X, y = crx
    one = BMANB()
    one.learn_many(X, y)
    with dask_distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster, \
            dask_distributed.Client(cluster):
        model = distributed.fit(BMANB(), _frame(X, y, 5), target="label", split_every=2)
        proba = distributed.predict_proba(model, dd.from_pandas(X, npartitions=2)).compute()
    _assert_same(model, one, X)
    np.testing.assert_allclose(proba.to_numpy(), one.predict_proba_many(X).to_numpy(),
                               rtol=0, atol=1e-9)


def test_empty_partitions_and_partitions_with_other_columns(crx):
    X, y = crx
    parts = [X[:50].assign(label=y[:50]), X[:0].assign(label=y[:0]),
             X[50:300].drop(columns=["A1", "A2"]).assign(label=y[50:300]),
             X[300:].assign(label=y[300:])]
    ddf = dd.concat([dd.from_pandas(p, npartitions=1) for p in parts])
    with dask.config.set(scheduler="synchronous"):
        model = distributed.fit(ModelAveragedNB(), ddf, target="label")
    one = ModelAveragedNB()
    for p in parts:
        if len(p):
            one.learn_many(p.drop(columns="label"), p["label"])
    _assert_same(model, one, X)


def test_bad_input_is_refused_clearly(crx):
    X, y = crx
    with pytest.raises(TypeError, match="dask DataFrame"):
        distributed.fit(NaiveBayes(), X.assign(label=y), target="label")
    with pytest.raises(ValueError, match="target column 'nope'"):
        distributed.fit(NaiveBayes(), _frame(X, y, 2), target="nope")
    with pytest.raises(ValueError, match="split_every"):
        distributed.fit(NaiveBayes(), _frame(X, y, 2), target="label", split_every=1)
    with pytest.raises(TypeError, match="dask DataFrame"):
        distributed.predict_proba(NaiveBayes(), X)

    class NoMerge:
        def learn_many(self, X, y):
            pass

    with pytest.raises(TypeError, match="no exact merge"):
        distributed.fit(NoMerge(), _frame(X, y, 2), target="label")
    bad = y.astype(object).copy()
    bad[400] = None
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError):
        distributed.fit(NaiveBayes(), _frame(X, bad, 3), target="label")


# ------------------------------------------------------------ merges as a monoid


def _shards(X, y, cuts):
    edges = [0, *sorted(cuts), len(X)]
    return [(X[a:b], y[a:b]) for a, b in zip(edges, edges[1:])]


def _learned(learner, X, y):
    m = learner()
    if len(X):
        m.learn_many(X, y)
    return m


def _tree_merge(models, shape):
    """Merge ``models`` (kept in order) by a tree drawn from ``shape``: a list of split points."""
    if len(models) == 1:
        return models[0]
    k = 1 + shape[0] % (len(models) - 1) if shape else len(models) // 2
    return _tree_merge(models[:k], shape[1:]).merge(_tree_merge(models[k:], shape[1:]))


@settings(max_examples=25, deadline=None)
@given(learner=st.sampled_from(LEARNERS),
       cuts=st.lists(st.integers(1, 689), min_size=1, max_size=6, unique=True),
       shape=st.lists(st.integers(0, 100), max_size=8),
       perm_seed=st.integers(0, 2**16))
def test_merge_is_associative_and_commutative(crx, learner, cuts, shape, perm_seed):
    X, y = crx
    models = [_learned(learner, a, b) for a, b in _shards(X, y, cuts)]
    left = models[0]
    for m in models[1:]:
        left = left.merge(m)
    tree = _tree_merge(models, shape)
    _assert_same(tree, left, X)  # associative: any tree, same learner, same label order
    perm = np.random.default_rng(perm_seed).permutation(len(models))
    shuffled = models[perm[0]]
    for i in perm[1:]:
        shuffled = shuffled.merge(models[i])
    pa, pb = shuffled.predict_proba_many(X), left.predict_proba_many(X)
    pa = pa[list(pb.columns)]  # commutative up to the order of the label columns
    np.testing.assert_allclose(pa.to_numpy(), pb.to_numpy(), rtol=0, atol=1e-9)


def test_predict_proba_of_an_untrained_learner_has_no_columns(crx):
    X, _ = crx
    with dask.config.set(scheduler="synchronous"):
        out = distributed.predict_proba(NaiveBayes(), dd.from_pandas(X, npartitions=2))
        assert isinstance(out.compute(), pd.DataFrame)
        assert out.compute().shape == (len(X), 0)


@pytest.mark.experiments
def test_scale_out_benchmark_runs_and_checks_its_learners(tmp_path):
    """The benchmark's smallest run: one process against one Dask worker (one small cluster)."""
    from experiments import scale_out

    result = scale_out.run(quick=True, out=tmp_path, workers=1, records=20_000)
    runs = result["tables"]["runs"]
    assert list(runs["workers"]) == ["one process", 1] * 2
    assert np.isfinite(runs["seconds"]).all() and (runs["seconds"] > 0).all()
    text = (tmp_path / "results" / "scale-out.md").read_text()
    assert "largest difference in predicted probabilities" in text
    gap = float(text.split("largest difference in predicted probabilities ")[1].split(".\n")[0])
    assert gap < 1e-9
    assert (tmp_path / "figures" / "scale-out-speedup.png").exists()
