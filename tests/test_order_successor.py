"""New candidate parents in a stream, counted a slice at a time: once the new tables are
complete the learner is the one that rebuilt them at once; meanwhile the old tables answer.

These tests read the stream state ``_live`` (its pending successor, scores and candidates):
whether a spread rebuild is still pending has no public view, and it is what they test."""

from __future__ import annotations

import pickle

import numpy as np

from onlinebma import tuning
from onlinebma.order_mcmc import FixedOrderBMA, OrderMCMC, streaming
from onlinebma.order_mcmc.successor import Successor
from tests.test_order_mcmc import _frame, _sample_records


def test_spread_rebuild_ends_as_the_rebuild_at_once(monkeypatch):
    records, features = _sample_records(6, 200, n_features=6)
    X, y = _frame(records, features)
    at_once = FixedOrderBMA(max_parents=2, max_candidates=2)
    spread = FixedOrderBMA(max_parents=2, max_candidates=2)
    swaps = 0
    for i in range(len(X)):
        x = X.iloc[i].to_dict()
        at_once.predict_proba_one(x)  # progressive validation: rebuilt at once when due
        at_once.learn_one(x, y[i])
        monkeypatch.setattr(tuning, "REBUILD_AT", 0)  # every rebuild is spread
        pending = spread._live is not None and spread._live.successor is not None
        spread.learn_one(x, y[i])
        assert abs(sum(spread.predict_proba_one(x).values()) - 1) < 1e-12
        monkeypatch.undo()
        swaps += pending and spread._live.successor is None
        if i == 150:
            spread = pickle.loads(pickle.dumps(spread))  # a pending successor pickles
    assert swaps >= 2  # candidates chosen again at 2, 4, ..., 128 records, spread each time
    assert spread._live.successor is None  # chosen at 128: counted by record 200
    np.testing.assert_allclose(spread.predict_proba(X).to_numpy(),
                               at_once.predict_proba(X).to_numpy(), atol=1e-9)


def test_order_mcmc_streams_through_a_spread_rebuild(monkeypatch):
    monkeypatch.setattr(tuning, "REBUILD_AT", 0)
    records, features = _sample_records(2, 90, n_features=6)
    X, y = _frame(records, features)
    model = OrderMCMC(max_parents=2, max_candidates=2, n_orders=2, burn_in=20, n_iter=60,
                      seed=0, iterations_per_record=2)
    for i in range(len(X)):
        x = X.iloc[i].to_dict()
        proba = model.predict_proba_one(x)
        assert not proba or abs(sum(proba.values()) - 1) < 1e-12
        model.learn_one(x, y[i])
    scores = model._live.scores
    fresh = streaming.StreamingScores(scores.n, 2, model.alpha,
                                      candidates=model._live.candidates)
    fresh.add_many(model.coding.node_rows(model._live.cuts)[:scores.n_records])
    assert scores.n_records > 80  # counted up to the last refit, the new tables answering
    for i in range(scores.n):
        np.testing.assert_allclose(scores.log_score(i), fresh.log_score(i), rtol=1e-12)


def test_a_successor_counts_late_new_values_and_missing_values_exactly():
    rng = np.random.default_rng(4)
    rows = rng.integers(0, 2, (120, 5))
    late = rng.integers(0, 4, (60, 5))  # codes 2 and 3 first arrive during the counting
    late[rng.random(late.shape) < 0.2] = -1
    late[:, -1] = rng.integers(0, 2, 60)
    cands = [np.array([j for j in range(5) if j != i][:2]) for i in range(5)]
    successor = Successor(streaming.StreamingScores(5, 2, 0.5, candidates=cands), rows, cands)
    done = [successor.advance(late[t:t + 1], 1) for t in range(len(late))]
    assert done[-1] and not done[0] and successor.step == 16
    want = streaming.StreamingScores(5, 2, 0.5, candidates=cands)
    want.add_many(np.vstack([rows, late]))
    for i in range(5):
        np.testing.assert_allclose(successor.scores.log_score(i), want.log_score(i), rtol=1e-12)


def test_a_spread_rebuild_equals_the_rebuild_at_once_whenever_it_completes(monkeypatch):
    """The slices' counts are summed as they come: when the new tables take over, the
    learner predicts as the one that rebuilt them at once (the batch fit on those records,
    over the same candidates), a new value arriving on the way included."""
    records, features = _sample_records(6, 300, n_features=6)
    for t in range(129, 300, 7):  # first seen while the rebuild chosen at 128 is counted
        records[t][features[0]] = "late"
    X, y = _frame(records, features)
    rebuild_at = {"at once": 10**9, "spread": 0}  # REBUILD_AT of each learner
    models = {name: FixedOrderBMA(max_parents=2, max_candidates=2) for name in rebuild_at}
    checked = 0
    for i, x in enumerate(X.to_dict("records")):
        pending = models["spread"]._live is not None and models["spread"]._live.successor
        for name, model in models.items():
            monkeypatch.setattr(tuning, "REBUILD_AT", rebuild_at[name])
            model.learn_one(x, y[i])
            model.predict_proba_one(x)
        if pending and models["spread"]._live.successor is None:  # the new tables answer
            got, want = (models[k].predict_proba(X).to_numpy() for k in ("spread", "at once"))
            np.testing.assert_allclose(got, want, atol=1e-9)
            checked += 1
    assert checked == 4  # new candidates at 32, 64, 128 and 256 records, spread each time


def test_a_successor_counts_a_bounded_number_of_record_set_pairs_per_record(monkeypatch):
    rng = np.random.default_rng(5)
    rows = rng.integers(0, 3, (600, 6))
    cands = [np.array([j for j in range(6) if j != i][:3]) for i in range(6)]
    tables = streaming.StreamingScores(6, 2, candidates=cands)
    monkeypatch.setattr(tuning, "STEP_PAIRS", 20 * tables.n_tables)
    spread = Successor(tables, rows, cands, slices=4)  # 150 records a step, uncapped
    assert spread.step == 20
    advances = 1
    while not spread.advance(rows[:1], 1):
        advances += 1
    assert advances == 32  # 600 records and one more each time, 20 at a time
    want = streaming.StreamingScores(6, 2, candidates=cands)
    want.add_many(np.vstack([rows, np.repeat(rows[:1], advances, axis=0)]))
    for i in range(6):
        np.testing.assert_allclose(spread.scores.log_score(i), want.log_score(i), rtol=1e-12)


def test_a_successor_pickled_with_its_slices_in_a_list_resumes_exactly():
    """Pickles made before the running sum held the slices' counts in a list."""
    rows = np.random.default_rng(6).integers(0, 3, (100, 4))
    now = Successor(streaming.StreamingScores(4, 2), rows, None)
    now.advance(rows[:1], 1)  # 16 records counted
    state = pickle.loads(pickle.dumps(now)).__dict__
    del state["_counted"]
    state["_parts"] = [state["scores"].count(rows[:5]), state["scores"].count(rows[5:16])]
    before = Successor.__new__(Successor)
    before.__setstate__(state)
    while not now.advance(rows[:0], 1):
        assert not before.advance(rows[:0], 1)
    assert before.advance(rows[:0], 1)
    assert before.scores.n_records == now.scores.n_records == 101
    for i in range(4):
        np.testing.assert_array_equal(before.scores.log_score(i), now.scores.log_score(i))
