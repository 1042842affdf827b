"""OrderMCMC and FixedOrderBMA on Dask: count tables summed over partitions give the model
of ``fit(X, y)`` on the whole frame; ``n_chains`` chains with distinct seeds and their R-hat."""

import math
import pickle
import statistics

import dask
import dask.dataframe as dd
import distributed as dask_distributed
import numpy as np
import pytest

from onlinebma import distributed
from onlinebma.datasets import UCIDataset
from onlinebma.order_mcmc import FixedOrderBMA, OrderMCMC
from onlinebma.order_mcmc.distributed_counts import count_tables
from onlinebma.order_mcmc.incremental import StreamingScores
from onlinebma.order_mcmc.sampler import split_rhat

CHAIN = {"max_parents": 2, "n_orders": 4, "burn_in": 100, "n_iter": 600, "seed": 11}


def _frame(X, y, npartitions):
    return dd.from_pandas(X.assign(label=y), npartitions=npartitions, sort=False)


def assert_same(got, one, X):
    assert got.classes_ == one.classes_
    assert got.orders_ == one.orders_
    for name in ("class_parent_proba_", "class_child_proba_", "markov_blanket_proba_"):
        a, b = getattr(got, name), getattr(one, name)
        assert list(a) == list(b)
        assert all(abs(a[f] - b[f]) <= 1e-9 for f in b)
    pa, pb = got.predict_proba(X), one.predict_proba(X)
    assert list(pa.columns) == list(pb.columns)
    np.testing.assert_allclose(pa.to_numpy(), pb.to_numpy(), rtol=0, atol=1e-9)
    x = {k: v for k, v in X.iloc[5].items() if isinstance(v, str)}
    pa, pb = got.predict_proba_one(x), one.predict_proba_one(x)
    assert pa.keys() == pb.keys() and all(abs(pa[c] - pb[c]) <= 1e-9 for c in pb)


LEARNERS = {
    "mcmc-1-chain": lambda: OrderMCMC(**CHAIN),
    "mcmc-3-chains": lambda: OrderMCMC(n_chains=3, **CHAIN),
    "fixed-order": lambda: FixedOrderBMA(max_parents=2),
}


@pytest.mark.parametrize("learner", list(LEARNERS))
@pytest.mark.parametrize("npartitions,split_every", [(1, 2), (3, 2), (7, 2), (3, 8), (7, 8)])
def test_count_tables_summed_over_partitions_give_the_single_machine_fit(
        votes, learner, npartitions, split_every):
    X, y = votes
    model = LEARNERS[learner]()
    before = pickle.dumps(model)
    one = model.clone().fit(X, y)
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(model, _frame(X, y, npartitions), target="label",
                              split_every=split_every)
    assert pickle.dumps(model) == before
    assert got.data_.n == 0  # counts travelled, records did not
    assert_same(got, one, X)
    if isinstance(one, OrderMCMC):
        np.testing.assert_array_equal(got.log_evidence_traces_, one.log_evidence_traces_)
        assert got.rhat_ == one.rhat_ and got.acceptance_rate_ == one.acceptance_rate_
    else:
        assert got.log_evidence_ == pytest.approx(one.log_evidence_, rel=1e-12)


def test_chains_as_tasks_on_a_local_cluster(votes):
    X, y = votes
    model = OrderMCMC(n_chains=3, **CHAIN)
    fixed = FixedOrderBMA(max_parents=2, order=("class", "physician-fee-freeze"))
    with dask_distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster, \
            dask_distributed.Client(cluster):
        got = distributed.fit(model, _frame(X, y, 5), target="label", split_every=2)
        got_fixed = distributed.fit(fixed, _frame(X, y, 3), target="label", split_every=8)
    one = model.clone().fit(X, y)
    assert_same(got, one, X)
    np.testing.assert_array_equal(got.log_evidence_traces_, one.log_evidence_traces_)
    assert_same(got_fixed, fixed.clone().fit(X, y), X)


def test_a_stream_goes_on_counting_after_a_distributed_fit(votes):
    X, y = votes
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(FixedOrderBMA(max_parents=2), _frame(X[:300], y[:300], 4),
                              target="label")
    one = FixedOrderBMA(max_parents=2).fit(X[:300], y[:300])
    for i in range(300, 320):
        got.learn_one(X.iloc[i].dropna().to_dict(), y[i])
        one.learn_one(X.iloc[i].dropna().to_dict(), y[i])
    got.learn_many(X[320:], y[320:])
    one.learn_many(X[320:], y[320:])
    assert_same(got, one, X)


def test_refusals(votes):
    X, y = votes
    with dask.config.set(scheduler="synchronous"):
        # Called directly, the count path refuses a window; distributed.fit trains such a
        # learner, and a frame with numeric features, through merge (next test).
        with pytest.raises(ValueError, match="window"):
            count_tables(OrderMCMC(window=50, **CHAIN), _frame(X, y, 2), "label", 8)
        Xi, yi = UCIDataset("iris").to_frame()
        _, scores = count_tables(FixedOrderBMA(), _frame(Xi, yi, 2), "label", 8)
        assert scores is None  # numeric features: no count tables


@pytest.mark.parametrize("case", ["window", "numeric"])
def test_what_counts_cannot_start_from_trains_through_merge(votes, case):
    if case == "window":
        X, y = votes
        make = lambda: OrderMCMC(window=200, **CHAIN)  # noqa: E731
    else:
        X, y = UCIDataset("iris").to_frame()
        make = FixedOrderBMA
    one = make()
    one.learn_many(X, y)
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(make(), _frame(X, y, 3), target="label")
    assert got.classes_ == one.classes_
    np.testing.assert_allclose(got.predict_proba_many(X).to_numpy(),
                               one.predict_proba_many(X).to_numpy(), rtol=0, atol=1e-9)


# --------------------------------------------------------------------- chains

def test_n_chains_is_validated():
    for bad in (0, -1, 1.5, "2", True):
        with pytest.raises((TypeError, ValueError), match="n_chains"):
            OrderMCMC(n_chains=bad)


@pytest.mark.parametrize("window", [None, 200])
def test_chains_have_distinct_reproducible_seeds_and_pool_their_orders(votes, window):
    X, y = votes
    a = OrderMCMC(n_chains=3, window=window, **CHAIN).fit(X, y)
    b = OrderMCMC(n_chains=3, window=window, **CHAIN).fit(X, y)
    single = OrderMCMC(window=window, **CHAIN).fit(X, y)
    traces = a.log_evidence_traces_
    assert traces.shape == (3, CHAIN["n_iter"])
    np.testing.assert_array_equal(traces, b.log_evidence_traces_)  # reproducible
    assert not np.array_equal(traces[0], traces[1]) and not np.array_equal(traces[1], traces[2])
    np.testing.assert_array_equal(traces[0], single.log_evidence_trace_)  # chain 1 = 1 chain
    np.testing.assert_array_equal(a.log_evidence_trace_, traces[0])
    assert len(a.orders_) == 3 * CHAIN["n_orders"]
    assert a.orders_[:CHAIN["n_orders"]] == single.orders_


def _rhat_from_the_definition(chains):
    """Split R-hat written out from BDA3 §11.4 with the statistics module."""
    halves = []
    for chain in chains:
        chain = list(chain)
        if len(chain) % 2:
            chain = chain[1:]
        n = len(chain) // 2
        halves += [chain[:n], chain[n:]]
    n = len(halves[0])
    means = [statistics.fmean(h) for h in halves]
    w = statistics.fmean(statistics.variance(h) for h in halves)
    b = n * statistics.variance(means)
    return math.sqrt(((n - 1) / n * w + b / n) / w)


def test_rhat_equals_an_independent_computation(votes):
    X, y = votes
    m = OrderMCMC(n_chains=4, **{**CHAIN, "n_iter": 601}).fit(X, y)  # odd length after burn-in
    post = m.log_evidence_traces_[:, CHAIN["burn_in"]:]
    assert m.rhat_ == pytest.approx(_rhat_from_the_definition(post), rel=1e-12)
    g = np.random.default_rng(0)
    mixed = g.normal(size=(3, 200))
    assert split_rhat(mixed) == pytest.approx(_rhat_from_the_definition(mixed), rel=1e-12)
    assert split_rhat(mixed) < 1.05
    apart = mixed + np.array([[0.0], [3.0], [6.0]])
    assert split_rhat(apart) == pytest.approx(_rhat_from_the_definition(apart), rel=1e-12)
    assert split_rhat(apart) > 2
    drifting = np.cumsum(g.normal(size=(1, 400)), axis=1) + np.arange(400) * 0.5
    assert split_rhat(drifting) > 1.1  # one chain that has not settled is seen too
    assert math.isnan(split_rhat(np.ones((2, 3))))
    assert split_rhat(np.ones((2, 8))) == 1.0


def test_counts_of_chunks_add_up_to_the_counts_of_all_records(votes):
    rng = np.random.default_rng(3)
    rows = rng.integers(-1, 3, size=(120, 5))
    rows[:, -1] = rng.integers(0, 2, 120)
    room, missing = np.array([3, 3, 3, 3, 2]), np.append((rows[:, :-1] < 0).any(axis=0), False)
    whole = StreamingScores(5, 2, n_values=room)
    whole.add_many(rows)
    parts = StreamingScores(5, 2, n_values=room)
    parts.reserve(room, missing)
    parts.add_counts(parts.count(rows[:50]) + parts.count(rows[50:51]) + parts.count(rows[51:]))
    assert parts.n_cells == whole.n_cells
    for f in range(len(whole.family_nodes)):  # every family's cells and configurations
        for got, want in zip(parts.dense_counts(f), whole.dense_counts(f)):
            np.testing.assert_array_equal(got, want)
    for i in range(5):
        np.testing.assert_allclose(parts.log_score(i), whole.log_score(i), rtol=1e-12)
    with pytest.raises(ValueError, match="layout"):
        StreamingScores(5, 2).count(rows)
