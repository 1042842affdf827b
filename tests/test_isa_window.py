"""ISA with a window: the scorer slides and the cached scores follow it, exactly."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from onlinebma.isa import ISA, classifier
from onlinebma.isa.scorer import Scorer


def _stream(seed, n, p=5, missing=0.1):
    """Records of few values per feature (every value stays in a window of 40, so the scorer
    slides instead of being rebuilt), features depending on the class."""
    rng = random.Random(seed)
    records, labels = [], []
    for _ in range(n):
        y = rng.choice("uv")
        x = {}
        for j in range(p):
            if rng.random() < missing:
                continue
            v = rng.randrange(3) if rng.random() < 0.6 else ("uv".index(y) + j) % 3
            x[f"f{j}"] = f"v{v}"
        records.append(x)
        labels.append(y)
    return records, labels


def _count_builds(monkeypatch) -> list:
    """The number of records of every scorer built from now on."""
    built = []

    class Counted(classifier.Scorer):
        def __init__(self, table, alpha):
            built.append(table.n)
            super().__init__(table, alpha)

    monkeypatch.setattr(classifier, "Scorer", Counted)
    return built


@pytest.mark.parametrize("coding", ["full", "indicator"])
@pytest.mark.parametrize("margin", [40.0, None])
def test_windowed_stream_predicts_as_a_fresh_isa_on_the_window(coding, margin, monkeypatch):
    W, n = 40, 130
    records, labels = _stream(1, n)
    tests = [records[5], {"f0": "v1", "f2": "v0"}, {}]
    streamed = ISA(antecedent=coding, margin=margin, window=W)
    built = _count_builds(monkeypatch)
    for i, (x, y) in enumerate(zip(records, labels)):
        test = tests[i % len(tests)]
        if i >= W and i % 3 == 0:  # a fresh ISA on just the window's records
            fresh = ISA(antecedent=coding, margin=margin)
            for r, label in zip(records[i - W: i], labels[i - W: i]):
                fresh.learn_one(r, label)
            expected = fresh.predict_proba_one(test)
            built.pop()  # the fresh ISA's scorer
            assert streamed.predict_proba_one(test) == pytest.approx(expected, abs=1e-9)
        else:
            streamed.predict_proba_one(test)
        streamed.learn_one(x, y)
    # The scorer slid through the stream: rebuilt while values first appear and when its
    # arrays filled with evicted records (once per window's worth), not at every record.
    full = [size for size in built if size == W]
    assert 1 <= len(full) <= (n - W) // W + 1 and len(built) - len(full) <= 8


@pytest.mark.parametrize("coding", ["full", "indicator"])
def test_slid_scores_equal_scores_recomputed_on_the_window(coding):
    W = 30
    records, labels = _stream(2, 100)
    model = ISA(antecedent=coding, window=W)
    for i, (x, y) in enumerate(zip(records, labels)):
        model.learn_one(x, y)
        if i % 7 == 0 or i > 90:  # stale scores miss several evictions, then one at a time
            model.predict_proba_one(records[(5 * i) % 100])
    model.predict_proba_one(records[0])
    # The cache is ISA's internal state (no public view): every cached score, slid or
    # extended, equals the score recomputed over the window's records.
    cache, scorer = model._cache, model._scorer
    assert scorer.live == W and scorer.start > 0
    keys = list(cache.entries)
    assert len(keys) > 20
    slid = cache.refresh(keys)
    for key, score in zip(keys, slid):
        A, values = (key, None) if coding == "full" else (key[0], _row(scorer.p, *key))
        assert score == pytest.approx(scorer.log_score(A, coding, values), abs=1e-9)


def _row(p, A, values):
    xt = np.full(p, -1, dtype=np.int64)
    xt[list(A)] = values
    return xt


def test_rescored_equals_a_fresh_scoring_for_every_eviction_and_append_pattern():
    # Scores over positions first .. total - 1 brought to the live records start .. n - 1 for
    # many (first, total): equal to scoring the live records afresh.
    records, labels = _stream(3, 90, p=4, missing=0.2)
    model = ISA(window=50)
    for i, (x, y) in enumerate(zip(records[:70], labels[:70])):
        model.learn_one(x, y)
        if i == 49:
            model.predict_proba_one(records[0])  # the scorer is built, positions = records
    model.predict_proba_one(records[0])
    scorer = model._scorer  # ISA's internal scorer: no public view
    assert scorer.start == 20 and scorer.n == 70
    models = [(), (0,), (1, 2), (0, 1, 3), (0, 1, 2, 3)]
    expected = scorer.log_scores(models, "full", [None] * len(models))
    # Every record in the scorer's coding: codes numbered in order of first arrival, values
    # compacted to those present, and every value of the 70 records is present in the window.
    whole = ISA()
    for x, y in zip(records[:70], labels[:70]):
        whole.learn_one(x, y)
    table = whole.data_
    assert table.values == scorer.values and table.classes == scorer.classes
    k = len(models)
    for first, total in [(20, 70), (0, 70), (0, 40), (5, 21), (19, 69), (10, 60), (19, 21)]:
        # The scores over first .. total - 1 (eq. 9 over just those records, same r_i and K).
        part = dataclasses.replace(table, codes=table.codes[first:total], y=table.y[first:total])
        scores = Scorer(part, 1.0).log_scores(models, "full", [None] * k)
        got = scorer.rescored(models, "full", [None] * k, scores, [first] * k, [total] * k)
        np.testing.assert_allclose(got, expected, atol=1e-9, err_msg=f"{first}, {total}")


def _live_terms(scorer, key, coding):
    A, values = (key, None) if coding == "full" else (key[0], _row(scorer.p, *key))
    return scorer.log_scores([A], coding, [values], per_record=True)[0]


@pytest.mark.parametrize("coding", ["full", "indicator"])
@pytest.mark.parametrize("seed", [4, 5])
def test_bounds_after_evictions_are_at_least_the_scores_and_kept_terms_are_exact(coding, seed):
    # The cache of a windowed ISA keeps each score's terms of eq. 9 (its internal state: no
    # public view); the bound it gives the search once records left the window
    # (`Scorer.evicted_bounds`) is never below the score recomputed over the window.
    W = 30
    records, labels = _stream(seed, 120, p=5, missing=0.2)
    model = ISA(antecedent=coding, window=W)
    checked = below = 0
    for i, (x, y) in enumerate(zip(records, labels)):
        model.learn_one(x, y)
        if i % 5:
            continue
        model.predict_proba_one(records[(7 * i) % 120])
        cache, scorer = model._cache, model._scorer
        for key, (score, first, total) in cache.entries.items():
            kept = cache.terms[key]
            assert kept.size == total - first and kept.sum() == pytest.approx(score, abs=1e-9)
            if first == scorer.start and total == scorer.n:  # exact: the terms as scored
                np.testing.assert_allclose(kept, _live_terms(scorer, key, coding), atol=1e-9)
        moved = [k for k, e in cache.entries.items() if scorer.start > e[1] and e[2] > scorer.start]
        if not moved:
            continue
        bounds = cache.evicted_bounds(moved)
        for key in moved:
            exact = _live_terms(scorer, key, coding).sum()
            assert bounds[key] >= exact
            checked += 1
            below += bounds[key] < -1.0  # not the trivial bound 0
    assert checked > 50 and below > checked // 4


@pytest.mark.parametrize("coding", ["full", "indicator"])
@pytest.mark.parametrize("wasted", [1.0, 0.0])
def test_searches_on_bounds_average_the_models_of_a_fresh_search(coding, wasted, monkeypatch):
    # The search of a windowed ISA sees bounds for the scores some of whose records left; it
    # averages the same models, with the same scores, as a fresh ISA on the window's records
    # (whose scores are all exact). `_search` is internal: the averaged models have no
    # public view but `explain_one`, which lists the negligible models too. wasted=1: bounds
    # at every search; 0: after a search given bounds, the next ones score at once.
    from onlinebma.isa import cache

    monkeypatch.setattr(cache, "WASTED_BOUNDS", wasted)
    W, n = 40, 110
    records, labels = _stream(6, n, p=6)
    streamed = ISA(antecedent=coding, window=W, phase1_models=20, max_models=60)
    compared = 0
    for i, (x, y) in enumerate(zip(records, labels)):
        test = records[(3 * i) % n]
        if i >= W and i % 4 == 0:
            fresh = ISA(antecedent=coding, window=W, phase1_models=20, max_models=60)
            for r, label in zip(records[i - W: i], labels[i - W: i]):
                fresh.learn_one(r, label)
            got, want = ([(A, s) for s, A in m._search(m._prepared(m._training_data()),
                                                        m._encode_one(test).codes[0]
                                                        .astype(np.int64))[1]]
                         for m in (streamed, fresh))
            assert sorted(A for A, _ in got) == sorted(A for A, _ in want)
            assert dict(got) == pytest.approx(dict(want), abs=1e-9)
            compared += 1
        else:
            streamed.predict_proba_one(test)
        streamed.learn_one(x, y)
    assert compared > 10
