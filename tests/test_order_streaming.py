"""Streaming order averaging: per-record family scores equal the batch score tables."""

import pickle

import numpy as np
import pytest

from onlinebma.order_mcmc.incremental import StreamingScores
from onlinebma.order_mcmc.scores import ScoreTables


def _compact(codes):
    """Codes renumbered over the values present, and the number of values (batch coding)."""
    out = np.full(codes.shape, -1, dtype=np.int64)
    cards = []
    for j in range(codes.shape[1]):
        col = codes[:, j]
        values = np.unique(col[col >= 0])
        out[col >= 0, j] = np.searchsorted(values, col[col >= 0])
        cards.append(max(1, len(values)))
    return out, np.array(cards)


def _batch_scores(codes, max_parents, alpha):
    compact, cards = _compact(codes)
    return ScoreTables(compact, cards, max_parents, alpha, prune_tol=0.0)


def _stream(seed, m=60, n=5, missing=0.15, values=(2, 3, 4, 1, 3)):
    rng = np.random.default_rng(seed)
    codes = np.column_stack([rng.integers(0, v, m) for v in values[:n]])
    codes[:, 1] = np.where(rng.random(m) < 0.7, codes[:, 0] % 3, codes[:, 1])  # dependence
    codes[rng.random(codes.shape) < missing] = -1
    return codes


@pytest.mark.parametrize("max_parents", [0, 1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_scores_equal_batch_after_every_record(max_parents, seed):
    codes = _stream(seed)
    alpha = 0.7
    s = StreamingScores(codes.shape[1], max_parents, alpha)
    for t in range(len(codes)):
        s.add(codes[t])
        batch = _batch_scores(codes[:t + 1], max_parents, alpha)
        for i in range(codes.shape[1]):
            np.testing.assert_array_equal(s.parents[i], batch.parents[i])
            np.testing.assert_allclose(s.log_score(i), batch.log_score[i], rtol=0, atol=1e-9)


@pytest.mark.parametrize("order", [[4, 0, 1, 2, 3], [1, 3, 4, 2, 0], [2, 4, 0, 3, 1]])
def test_order_restricted_scores_equal_batch(order):
    codes = _stream(7, m=50)
    s = StreamingScores(codes.shape[1], 2, 1.0, order=order)
    pos = {v: p for p, v in enumerate(order)}
    for t in range(len(codes)):
        s.add(codes[t])
        batch = _batch_scores(codes[:t + 1], 2, 1.0)
        for i in range(codes.shape[1]):
            allowed = [z for z, par in enumerate(batch.parents[i])
                       if all(v == 5 or pos[v] < pos[i] for v in par)]
            np.testing.assert_array_equal(s.candidates[i], allowed)
            np.testing.assert_array_equal(s.parents[i], batch.parents[i][allowed])
            np.testing.assert_allclose(s.log_score(i), batch.log_score[i][allowed], atol=1e-9)


def test_remove_is_the_batch_fit_of_the_window():
    codes = _stream(3, m=80)
    s = StreamingScores(codes.shape[1], 2, 1.0)
    window = 25
    for t in range(len(codes)):
        s.add(codes[t])
        if t >= window:
            s.remove(codes[t - window])
        live = codes[max(0, t - window + 1):t + 1]
        batch = _batch_scores(live, 2, 1.0)
        assert s.n_records == len(live)
        for i in range(codes.shape[1]):
            np.testing.assert_allclose(s.log_score(i), batch.log_score[i], rtol=0, atol=1e-9)


def test_predictive_is_the_counts_ratio():
    codes = _stream(4, missing=0.0)
    s = StreamingScores(codes.shape[1], 2, 0.5)
    for row in codes:
        s.add(row)
    i = 1
    sets = np.arange(len(s.parents[i]))
    got = s.predictive(i, sets, codes[:7])
    r = len(np.unique(codes[:, i]))
    for t in range(7):
        for z in sets:
            par = [v for v in s.parents[i][z] if v < codes.shape[1]]
            same = (codes[:, par] == codes[t, par]).all(axis=1)
            want = (0.5 + (same & (codes[:, i] == codes[t, i])).sum()) / (r * 0.5 + same.sum())
            assert got[t, z] == pytest.approx(want, abs=1e-12)


def test_size_bounded_by_the_candidate_sets_not_the_records():
    codes = _stream(5, m=400, missing=0.0)
    s = StreamingScores(codes.shape[1], 2, 1.0)
    for row in codes[:100]:
        s.add(row)
    size_100 = len(pickle.dumps(s))
    for row in codes[100:]:
        s.add(row)
    assert abs(len(pickle.dumps(s)) - size_100) <= 8  # the record count's own bytes


def test_add_many_equals_adding_one_by_one():
    codes = _stream(8, m=70)
    one = StreamingScores(codes.shape[1], 2, 1.0, order=[2, 0, 4, 1, 3])
    many = StreamingScores(codes.shape[1], 2, 1.0, order=[2, 0, 4, 1, 3])
    for row in codes[:30]:
        one.add(row)
    many.add_many(codes[:30])
    for row in codes[30:]:
        one.add(row)
    many.add_many(codes[30:])
    for i in range(codes.shape[1]):
        np.testing.assert_allclose(many.log_score(i), one.log_score(i), atol=1e-9)
        np.testing.assert_array_equal(many.cards(), one.cards())
