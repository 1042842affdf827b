"""FAN and the finite mixture on Dask: distributed EM gives the model of ``fit(X, y)`` on the
whole frame (one refit over all records) — same starts, iterates, criteria, predictions."""

import math
import pickle

import dask
import dask.dataframe as dd
import distributed as dask_distributed
import numpy as np
import pandas as pd
import pytest

from onlinebma import distributed, tuning
from onlinebma.mixture import FAN, FiniteMixture, chunks
from onlinebma.mixture import distributed_em as dem

TOL = 1e-9


def _frame(X, y, npartitions):
    return dd.from_pandas(X.assign(label=y), npartitions=npartitions, sort=False)


def _close(a, b):
    return abs(a - b) <= TOL * max(1.0, abs(b))


def assert_same_fit(got, one, X):
    """Every fitted attribute and prediction of ``got`` equals ``one``'s to 1e-9."""
    assert got.classes_ == one.classes_
    assert got.n_components_ == one.n_components_
    assert got.n_iter_ == one.n_iter_  # the same EM runs, iteration by iteration
    assert got.objective_.keys() == one.objective_.keys()
    for k in one.objective_:
        assert all(_close(a, b) for a, b in zip(got.objective_[k], one.objective_[k]))
    for k in one.criteria_:
        for name, value in one.criteria_[k].items():
            assert _close(got.criteria_[k][name], value), (k, name)
    assert got.scores_.keys() == one.scores_.keys()
    np.testing.assert_allclose(got.weights_, one.weights_, rtol=TOL, atol=0)
    np.testing.assert_allclose(got.means_, one.means_, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(got.variances_, one.variances_, rtol=TOL, atol=0)
    va, vb = got.value_probabilities_, one.value_probabilities_
    assert list(va) == list(vb)
    for f in vb:
        assert list(va[f]) == list(vb[f])  # values in the same order
        for v in vb[f]:
            np.testing.assert_allclose(va[f][v], vb[f][v], rtol=TOL, atol=0)
    pa, pb = got.predict_proba(X), one.predict_proba(X)
    assert list(pa.columns) == list(pb.columns)
    np.testing.assert_allclose(pa.to_numpy(), pb.to_numpy(), rtol=0, atol=TOL)
    x = {k: v for k, v in X.iloc[3].items() if not pd.isna(v)}
    one_row = got.predict_proba_one(x)
    assert one_row.keys() == one.predict_proba_one(x).keys()
    assert all(_close(one_row[c], p) for c, p in one.predict_proba_one(x).items())


CASES = [
    (FAN, {"criterion": "bic", "em": "soft", "n_init": 3}),
    (FiniteMixture, {"criterion": "icl", "em": "hard", "n_init": 2}),
]


@pytest.mark.parametrize("learner,params", CASES, ids=["FAN-bic-soft", "FM-icl-hard"])
@pytest.mark.parametrize("npartitions,split_every", [(1, 2), (3, 2), (7, 2), (3, 8), (7, 8)])
def test_distributed_em_equals_fit_on_the_whole_frame(crx, learner, params, npartitions,
                                                      split_every):
    X, y = crx
    model = learner(max_components=3, seed=7, **params)
    before = pickle.dumps(model)
    one = model.clone().fit(X, y)  # the single-machine fit: one refit over all records
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(model, _frame(X, y, npartitions), target="label",
                              split_every=split_every)
    assert pickle.dumps(model) == before  # the given learner is not modified
    assert type(got) is learner
    assert_same_fit(got, one, X)


@pytest.mark.parametrize("criterion", ["aic", "cs"])
def test_other_criteria_and_numeric_features_only(iris, criterion):
    X, y = iris
    model = FAN(max_components=3, criterion=criterion, seed=1)
    one = model.clone().fit(X, y)
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(model, _frame(X, y, 4), target="label", split_every=3)
    assert_same_fit(got, one, X)


def test_on_a_local_cluster(crx, iris):
    X, y = crx
    fan = FAN(max_components=3, criterion="icl", seed=3)
    fm = FiniteMixture(max_components=2, criterion="bic", seed=5)
    with dask_distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster, \
            dask_distributed.Client(cluster):
        got_fan = distributed.fit(fan, _frame(X, y, 5), target="label", split_every=2)
        got_fm = distributed.fit(fm, _frame(*iris, 3), target="label", split_every=8)
    assert_same_fit(got_fan, fan.clone().fit(X, y), X)
    assert_same_fit(got_fm, fm.clone().fit(*iris), iris[0])


def test_empty_partition_and_missing_columns(crx):
    X, y = crx
    parts = [X[:60].assign(label=y[:60]), X[:0].assign(label=y[:0]),
             X[60:400].assign(A1=np.nan, A9=None).assign(label=y[60:400]),
             X[400:].assign(label=y[400:])]
    whole = pd.concat(parts)
    ddf = dd.concat([dd.from_pandas(p, npartitions=1) for p in parts])
    model = FAN(max_components=2, criterion="bic", seed=2)
    Xw, yw = whole.drop(columns="label").reset_index(drop=True), whole["label"]
    one = model.clone().fit(Xw, yw.reset_index(drop=True))
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(model, ddf, target="label")
    assert_same_fit(got, one, Xw)


def test_refusals_name_the_problem(crx):
    X, y = crx
    ddf = _frame(X, y, 2)
    with dask.config.set(scheduler="synchronous"):
        # Called directly, the EM path refuses what it cannot fit from sums; distributed.fit
        # trains those learners through merge instead (next test).
        with pytest.raises(ValueError, match="prequential"):
            dem.fit_em(FAN(), ddf, "label", 8)
        with pytest.raises(ValueError, match="window"):
            dem.fit_em(FAN(criterion="bic", window=100), ddf, "label", 8)
        bad = X.copy()
        bad.loc[500, "A2"] = np.inf
        with pytest.raises(ValueError, match="A2"):
            distributed.fit(FAN(criterion="bic"), _frame(bad, y, 3), target="label")
        no_label = y.astype(object).copy()
        no_label[200] = None
        with pytest.raises(ValueError):
            distributed.fit(FAN(criterion="bic"), _frame(X, no_label, 3), target="label")
        with pytest.raises(ValueError, match="no records"):
            distributed.fit(FAN(criterion="bic"), _frame(X[:0], y[:0], 1), target="label")


@pytest.mark.parametrize("params", [{}, {"criterion": "bic", "window": 300}])
def test_what_sums_cannot_start_from_trains_through_merge(crx, params):
    """The prequential criterion and a window: distributed.fit gathers the records through
    merge, and the learner equals learn_many on the whole frame."""
    X, y = crx
    params = {"max_components": 2, "n_init": 1, "seed": 0, **params}
    one = FAN(**params)
    one.learn_many(X, y)
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(FAN(**params), _frame(X, y, 3), target="label")
    assert got.classes_ == one.classes_
    np.testing.assert_allclose(got.predict_proba_many(X).to_numpy(),
                               one.predict_proba_many(X).to_numpy(), rtol=0, atol=TOL)


def test_a_stream_continues_from_a_distributed_fit(crx):
    """The fit holds no records; a stream learned afterwards refits on its own records,
    warm-started from the distributed fit (documented in docs/fan.md)."""
    X, y = crx
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(FAN(max_components=2, criterion="bic", seed=0), _frame(X, y, 3),
                              target="label")
    assert got.data_.n == 0
    before = got.predict_proba(X[:5])
    got.learn_many(X[:10], y[:10])  # fewer than 10% of the records: no refit yet
    np.testing.assert_array_equal(got.predict_proba(X[:5]).to_numpy(), before.to_numpy())
    got.learn_many(X[10:100], y[10:100])
    assert got.predict_proba(X[:5]).shape == (5, 2)
    assert got.n_fits_ == 2


# ------------------------------------------------------------- order statistics

class _Local:
    """Chunks in this process, for the exact selection."""

    def __init__(self, parts):
        self.parts, self.split_every, self.rounds = parts, 2, 0

    map_chunks = dem.PartitionedEngine.map_chunks


def _values(chunk):
    return chunk


@pytest.mark.parametrize("seed", range(4))
def test_exact_selection_and_median_over_chunks(seed, monkeypatch):
    monkeypatch.setattr(tuning, "ORDER_STATISTIC_GATHER", 50)  # force several narrowing rounds
    monkeypatch.setattr(tuning, "ORDER_STATISTIC_SAMPLES", 4)
    g = np.random.default_rng(seed)
    values = np.concatenate([g.normal(size=300), np.full(200, 0.25), [np.inf, 1e308, -1e308]])
    g.shuffle(values)
    parts = np.array_split(values, [17, 17, 250, 400])  # one chunk empty
    engine = _Local(parts)
    ordered = np.sort(values)
    with dask.config.set(scheduler="synchronous"):
        for k in [0, 1, 150, 250, 301, 450, len(values) - 2, len(values) - 1]:
            assert dem.select(engine, (_values,), k) == ordered[k]
        assert dem.median(engine, (_values,)) == np.median(values)
        assert dem.median(_Local([values[:0]]), (_values,)) is None
        odd = values[:-1]
        assert dem.median(_Local(np.array_split(odd, 3)), (_values,)) == np.median(odd)


def test_expected_statistics_add_up_to_those_of_all_records(iris):
    """The pooled moments of two chunks are those of their union (the M step's input)."""
    from onlinebma.mixture.em import EMEngine
    from onlinebma.mixture.layout import design, rows_of
    from onlinebma.stats.numerics import VAR_SMOOTHING

    X, y = iris
    table = FAN().fit(X, y).data_
    d_all = design(table, table, table.y, 3)
    s_all = EMEngine(d_all, True, 1.0, VAR_SMOOTHING)
    coords = (s_all.center, s_all.scale)
    tau = np.random.default_rng(0).dirichlet(np.ones(3), size=table.n)
    parts = [rows_of(table, slice(0, 40)), rows_of(table, slice(40, 41)),
             rows_of(table, slice(41, 150))]
    engines = [EMEngine(design(table, p, p.y, 3), True, 1.0, VAR_SMOOTHING, coords=coords)
               for p in parts]
    summed = chunks.add(*[e.expected(tau[a:b]) for e, (a, b)
                          in zip(engines, [(0, 40), (40, 41), (41, 150)])])
    whole = s_all.expected(tau)
    for name in ("nk", "nkc", "counts", "w", "mean", "m2"):
        np.testing.assert_allclose(getattr(summed, name), getattr(whole, name), rtol=1e-12,
                                   atol=1e-12)
    totals = chunks.add(*[e.chunk_totals() for e in engines])
    assert totals.n == 150 and math.isclose(totals.m2.sum(), s_all.chunk_totals().m2.sum(),
                                            rel_tol=1e-12)
