"""Order learners on wide data: candidate parents (exact over the restricted space), the
hostile-input defects of the order learners, and compact pickles."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pandas as pd
import pytest

from onlinebma.order_mcmc import FixedOrderBMA, OrderMCMC, OrderModel
from onlinebma.order_mcmc.candidates import choose_candidates, pair_tables, pairwise_gains
from onlinebma.order_mcmc.fixed_order import NotFittedError
from onlinebma.order_mcmc.incremental import StreamingScores
from tests.test_order_mcmc import CLASS, BruteForce, _frame, _queries, _sample_records


class RestrictedBruteForce(BruteForce):
    """Every DAG of an order whose parent sets lie within the given candidates."""

    def __init__(self, records, nodes, max_parents, candidates):
        super().__init__(records, nodes, max_parents)
        self.candidates = candidates  # node name -> set of candidate parent names

    def dags(self, order):
        choices = []
        for pos, v in enumerate(order):
            pred = [p for p in order[:pos] if p in self.candidates[v]]
            choices.append([c for s in range(min(self.k, len(pred)) + 1)
                            for c in itertools.combinations(pred, s)])
        for combo in itertools.product(*choices):
            yield dict(zip(order, combo))


def _codes(records, nodes, coding=None):
    """Node codes of ``records`` by the sorted values of ``coding`` (default: ``records``)."""
    values = {v: sorted({r[v] for r in coding or records if r[v] is not None}) for v in nodes}
    return np.array([[-1 if r[v] is None else values[v].index(r[v]) for v in nodes]
                     for r in records], dtype=np.int64)


@pytest.mark.parametrize("seed,k", [(0, 2), (1, 3), (2, 1)])
def test_restricted_averaging_equals_brute_force_over_the_restricted_space(seed, k):
    records, features = _sample_records(seed, 40, n_features=5, p_missing=0.1)
    nodes = features + [CLASS]
    codes = _codes(records, nodes)
    candidates = choose_candidates(codes, k, class_node=len(nodes) - 1)
    assert all(len(c) == k for c in candidates)
    assert all(len(nodes) - 1 in c for c in candidates[:-1])  # the class always a candidate
    model = OrderModel(codes, max_parents=2, prune_tol=0.0, candidates=candidates)
    brute = RestrictedBruteForce(records, nodes, 2,
                                 {nodes[i]: {nodes[j] for j in c}
                                  for i, c in enumerate(candidates)})
    rng = np.random.default_rng(seed)
    for _ in range(2):
        order = rng.permutation(len(nodes))
        names = [nodes[v] for v in order]
        assert model.log_evidence(order) == pytest.approx(brute.order_terms(names, [])[0],
                                                          abs=1e-9)
        for x in _queries(records, features, seed):
            expected = brute.class_proba([names], x)
            row = _codes([{**x, CLASS: None}], nodes, records)
            got = np.exp(model.class_log_proba(row, [model.log_weights(order)], len(nodes) - 1))
            classes = brute.values[CLASS]
            np.testing.assert_allclose(got[0], [expected[c] for c in classes], atol=1e-9)


def test_fixed_order_candidates_are_predecessors_and_the_learner_is_exact_over_them():
    records, features = _sample_records(4, 60, n_features=5)
    X, y = _frame(records, features)
    order = (CLASS,) + tuple(features)
    model = FixedOrderBMA(order=order, max_parents=2, max_candidates=2).fit(X, y)
    names = tuple(features) + (CLASS,)
    codes = _codes(records, list(names))
    cands = choose_candidates(codes, 2, class_node=len(names) - 1,
                              order=[names.index(v) for v in order])
    brute = RestrictedBruteForce(records, list(names), 2,
                                 {names[i]: {names[j] for j in c} for i, c in enumerate(cands)})
    assert model.log_evidence_ == pytest.approx(brute.order_terms(list(order), [])[0], abs=1e-9)
    for x in _queries(records, features, 4):
        expected = brute.class_proba([list(order)], x)
        got = model.predict_proba_one({f: v for f, v in x.items() if v is not None})
        for c, p in expected.items():
            assert got[c] == pytest.approx(p, abs=1e-9)


@pytest.mark.parametrize("cls,params", [
    (FixedOrderBMA, {"max_parents": 2}),
    (OrderMCMC, {"max_parents": 2, "n_orders": 3, "burn_in": 30, "n_iter": 90, "seed": 3}),
])
def test_all_features_as_candidates_give_todays_results(cls, params):
    records, features = _sample_records(5, 50, n_features=5, p_missing=0.1)
    X, y = _frame(records, features)
    today = cls(max_candidates=None, **params).fit(X, y)
    wide = cls(max_candidates=5, **params).fit(X, y)  # 5 features + class: all candidates
    assert wide.orders_ == today.orders_
    np.testing.assert_array_equal(wide.predict_proba(X).to_numpy(),
                                  today.predict_proba(X).to_numpy())


def test_candidate_gains_do_not_depend_on_padding_of_the_tables():
    rng = np.random.default_rng(0)
    rows = rng.integers(-1, 3, (80, 4))
    scores = StreamingScores(4, 1, n_values=[5, 5, 5, 5])  # padded room, every pair a family
    scores.add_many(rows)
    np.testing.assert_array_equal(pairwise_gains(scores.pair_tables()),
                                  pairwise_gains(pair_tables(rows)))


def test_restricted_tables_equal_tables_built_restricted():
    rng = np.random.default_rng(1)
    rows = rng.integers(-1, 3, (120, 6))
    full = StreamingScores(6, 2)
    full.add_many(rows)
    cands = choose_candidates(rows, 3, class_node=5)
    direct = StreamingScores(6, 2, candidates=cands)
    direct.add_many(rows)
    cut = full.restricted(cands)
    for i in range(6):
        np.testing.assert_array_equal(cut.parents[i], direct.parents[i])
        np.testing.assert_allclose(cut.log_score(i), direct.log_score(i), rtol=1e-12)


def test_a_stream_rechooses_candidates_and_stays_the_batch_model_with_them():
    records, features = _sample_records(6, 160, n_features=6)
    X, y = _frame(records, features)
    stream = FixedOrderBMA(max_parents=2, max_candidates=2)
    for i in range(len(X)):
        stream.learn_one(X.iloc[i].to_dict(), y[i])
    batch = FixedOrderBMA(max_parents=2, max_candidates=2).fit(X, y)  # 160 = 2 x 80: chosen
    np.testing.assert_allclose(stream.predict_proba(X).to_numpy(),
                               batch.predict_proba(X).to_numpy(), atol=1e-9)


# ------------------------------------------------------------- hostile-input defects


def test_an_empty_frame_counts_nothing():
    records, features = _sample_records(7, 40)
    X, y = _frame(records, features)
    model = FixedOrderBMA(max_parents=2).fit(X, y)
    before = model.predict_proba(X).to_numpy()
    for _ in range(3):
        model.learn_many(X.iloc[:0], y.iloc[:0])
    np.testing.assert_array_equal(model.predict_proba(X).to_numpy(), before)


def test_a_refused_fit_leaves_order_mcmc_as_it_was():
    records, features = _sample_records(8, 40)
    X, y = _frame(records, features)
    params = {"max_parents": 2, "n_orders": 2, "burn_in": 20, "n_iter": 60, "seed": 1}
    model, twin = OrderMCMC(**params), OrderMCMC(**params)
    for m in (model, twin):
        m.learn_many(X, y)
    with pytest.raises(ValueError):
        model.fit(X.assign(**{CLASS: "x"}), y)  # a feature named like the class node
    assert pickle.dumps(model) == pickle.dumps(twin)
    np.testing.assert_array_equal(model.predict_proba(X).to_numpy(),
                                  twin.predict_proba(X).to_numpy())


@pytest.mark.parametrize("cls", [FixedOrderBMA, OrderMCMC])
def test_one_wide_record_is_handled(cls):
    model = cls(max_parents=2, **({"n_iter": 60, "burn_in": 20, "n_orders": 2, "seed": 0}
                                  if cls is OrderMCMC else {}))
    model.learn_one({f"f{j}": j % 3 for j in range(150)}, "a")
    model.learn_one({"f0": 1, "f1": 2}, "b")
    proba = model.predict_proba_one({"f0": 1})
    assert set(proba) == {"a", "b"} and sum(proba.values()) == pytest.approx(1.0)


def test_a_record_too_wide_for_the_full_space_is_refused_up_front():
    model = FixedOrderBMA(max_candidates=None)
    model.learn_one({"a": 1}, "x")
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="max_candidates"):
        model.learn_one({f"f{j}": 1 for j in range(300)}, "y")
    with pytest.raises(ValueError, match="max_candidates"):
        model.learn_many(pd.DataFrame({f"f{j}": [1] for j in range(300)}), ["y"])
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("cls,name", [(FixedOrderBMA, "orders_"), (FixedOrderBMA, "log_evidence_"),
                                      (OrderMCMC, "orders_"), (OrderMCMC, "rhat_"),
                                      (OrderMCMC, "class_parent_proba_")])
def test_fitted_attributes_before_data_say_not_fitted(cls, name):
    with pytest.raises(NotFittedError, match="not fitted"):
        getattr(cls(), name)
    assert not hasattr(cls(), name)  # still an AttributeError for hasattr


def test_a_pickle_carries_the_nonzero_counts_only():
    rows = np.random.default_rng(0).integers(0, 6, (30, 8))
    scores = StreamingScores(8, 3)
    scores.add_many(rows)
    # dense int32 tables: 6 ** |Z| configurations and 6 cells each per family (1.9 MB)
    dense = sum(4 * 7 * 6 ** int((par < 8).sum()) for par in scores.family_parents)
    blob = pickle.dumps(scores)
    assert len(blob) < dense / 4
    again = pickle.loads(blob)
    for f in range(len(scores.family_parents)):
        for got, want in zip(again.dense_counts(f), scores.dense_counts(f)):
            np.testing.assert_array_equal(got, want)
    for i in range(8):
        np.testing.assert_array_equal(again.log_score(i), scores.log_score(i))
    records, features = _sample_records(9, 30, n_features=6)
    X, y = _frame(records, features)
    model = OrderMCMC(n_orders=2, burn_in=20, n_iter=60, seed=0).fit(X, y)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict_proba(X).to_numpy(),
                                  model.predict_proba(X).to_numpy())


@pytest.mark.parametrize("make", [FixedOrderBMA, lambda: OrderMCMC(seed=0)],
                         ids=["FixedOrderBMA", "OrderMCMC"])
@pytest.mark.parametrize("record", [None, "a=1", 3], ids=["None", "str", "int"])
def test_a_record_that_is_not_a_dict_is_a_type_error(make, record):
    """The order learners read the record's keys for their own checks first; a record that is
    not a dict must still meet the library's TypeError, not a bare 'not iterable'."""
    model = make()
    model.learn_one({"a": "x"}, True)
    before = pickle.dumps(model)
    with pytest.raises(TypeError, match="a record is a dict"):
        model.learn_one(record, True)
    assert pickle.dumps(model) == before
