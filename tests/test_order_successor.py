"""New candidate parents in a stream, counted a slice at a time: once the new tables are
complete the learner is the one that rebuilt them at once; meanwhile the old tables answer."""

from __future__ import annotations

import pickle

import numpy as np

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
        monkeypatch.setattr(streaming, "REBUILD_AT", 0)  # every rebuild is spread
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
    monkeypatch.setattr(streaming, "REBUILD_AT", 0)
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
