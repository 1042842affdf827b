"""ISA against an independent brute force, its search, streaming behaviour and River checks."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pandas as pd
import pytest

from onlinebma import tuning
from onlinebma.isa import ISA

# ------------------------------------------------------------------ brute force
# Plain Python over records and dicts: eq. 9 record by record, eq. 10 from counts, eq. 8 over
# every antecedent set. Shares no code with onlinebma.isa.

MISSING = object()


def _present_values(records, labels):
    values = {}
    for x in records:
        for f, v in x.items():
            values.setdefault(f, set()).add(v)
    return values, sorted(set(labels), key=str)


def _parent_config(x, A, test, coding):
    if coding == "full":
        return tuple(x.get(f, MISSING) for f in A)
    return tuple("missing" if f not in x else x[f] == test[f] for f in A)


def _class_logs(x, A, config, classes, features, r, counts, alpha, skip=()):
    n_c, n_ck, n_x, n_o = counts
    out = {}
    for k in classes:
        lp = math.log((n_ck.get((config, k), 0) + alpha)
                      / (n_c.get(config, 0) + len(classes) * alpha))
        for f in features:
            if f in A or f in skip or f not in x:
                continue
            num = n_x.get((config, k, f, x[f]), 0) + alpha
            den = n_o.get((config, k, f), 0) + r[f] * alpha
            lp += math.log(num / den)
        out[k] = lp
    return out


def _add(counts, x, y, A, config, features):
    n_c, n_ck, n_x, n_o = counts
    n_c[config] = n_c.get(config, 0) + 1
    n_ck[(config, y)] = n_ck.get((config, y), 0) + 1
    for f in features:
        if f in A or f not in x:
            continue
        n_x[(config, y, f, x[f])] = n_x.get((config, y, f, x[f]), 0) + 1
        n_o[(config, y, f)] = n_o.get((config, y, f), 0) + 1


def brute_force(records, labels, test, coding="full", alpha=1.0):
    """``(prediction, {A: (log score, model prediction)})`` over every antecedent set."""
    values, classes = _present_values(records, labels)
    features = sorted(values)
    r = {f: len(v) for f, v in values.items()}
    observed = [f for f in features if f in test and test[f] in values[f]]
    models = {}
    for size in range(len(observed) + 1):
        for A in itertools.combinations(observed, size):
            counts = ({}, {}, {}, {})
            score = 0.0
            for x, y in zip(records, labels):  # eq. 9, in arrival order
                config = _parent_config(x, A, test, coding)
                logs = _class_logs(x, A, config, classes, features, r, counts, alpha)
                score += logs[y] - math.log(sum(math.exp(v) for v in logs.values()))
                _add(counts, x, y, A, config, features)
            config = _parent_config(test, A, test, coding)
            unusable = [f for f in features if f not in observed]
            logs = _class_logs(test, A, config, classes, features, r, counts, alpha, skip=unusable)
            top = max(logs.values())
            z = sum(math.exp(v - top) for v in logs.values())
            models[A] = (score, {k: math.exp(v - top) / z for k, v in logs.items()})
    top = max(s for s, _ in models.values())
    total = sum(math.exp(s - top) for s, _ in models.values())
    proba = {k: sum(math.exp(s - top) / total * p[k] for s, p in models.values()) for k in classes}
    return proba, models


def _random_data(seed, n=40, p=5, missing=0.1):
    rng = random.Random(seed)
    cards = [rng.randint(2, 4) for _ in range(p)]
    records, labels = [], []
    for _ in range(n):
        y = rng.choice("uvw")
        x = {}
        for j, card in enumerate(cards):
            if rng.random() < missing:
                continue
            v = rng.randrange(card)
            if rng.random() < 0.5:  # make features depend on the class and on each other
                v = ("uvw".index(y) + j) % card
            x[f"f{j}"] = f"v{v}"
        if rng.random() < 0.8:
            x["const"] = "k"  # one value: a child that carries no information
        records.append(x)
        labels.append(y)
    return records, labels


def _exhaustive(coding, **kw):
    return ISA(antecedent=coding, phase1_models=64, max_models=64, threshold=0.0, **kw)


def _learned(model, records, labels):
    for x, y in zip(records, labels):
        model.learn_one(x, y)
    return model


TESTS = [
    {"f0": "v1", "f1": "v0", "f2": "v2", "f3": "v1", "f4": "v0", "const": "k"},
    {"f0": "v0", "f2": "v1", "f4": "v9"},  # f1, f3, f5 missing; v9 never stored
    {},
]


@pytest.mark.parametrize("coding", ["full", "indicator"])
@pytest.mark.parametrize("seed", [0, 1])
def test_isa_equals_brute_force_over_every_antecedent_set(coding, seed):
    records, labels = _random_data(seed, n=40, p=5)  # 6 features with "const"
    model = _learned(_exhaustive(coding), records, labels)
    for test in TESTS:
        expected, models = brute_force(records, labels, test, coding)
        got = model.predict_proba_one(test)
        assert got.keys() == expected.keys()
        for k in expected:
            assert got[k] == pytest.approx(expected[k], abs=1e-9)
        explained = model.explain_one(test)
        assert len(explained) == len(models)
        for m in explained:
            A = tuple(sorted(m["antecedent"]))
            assert m["antecedent"] == {f: test[f] for f in A}
            assert m["log_score"] == pytest.approx(models[A][0], abs=1e-9)
            for k, q in models[A][1].items():
                assert m["proba"][k] == pytest.approx(q, abs=1e-9)


def test_scoring_ahead_in_small_passes_changes_no_search(monkeypatch):
    # Phase 1 scores the children of the model it will likely expand next together with those
    # of the model it expands, in passes of few records (tuning.SMALL_PASS): the same models,
    # scores and predictions as without.
    from onlinebma.datasets import UCIDataset

    data = list(UCIDataset("house-votes-84").take(160))
    X = pd.DataFrame([x for x, _ in data[:140]])
    y = pd.Series([label for _, label in data[:140]])
    tests = [x for x, _ in data[140:]]
    monkeypatch.setattr(tuning, "SMALL_PASS", 1 << 30)
    ahead = ISA().fit(X, y)
    explained = [ahead.explain_one(x) for x in tests]
    assert len(ahead._cache) > 0  # the score cache is internal: no public view
    monkeypatch.setattr(tuning, "SMALL_PASS", 0)
    alone = ISA().fit(X, y)
    for x, models in zip(tests, explained):
        expected = alone.explain_one(x)
        assert [m["antecedent"] for m in models] == [m["antecedent"] for m in expected]
        for m, e in zip(models, expected):
            assert m["log_score"] == pytest.approx(e["log_score"], abs=1e-9)
            assert m["weight"] == pytest.approx(e["weight"], abs=1e-9)


def _house_votes(n_train=140, n_test=60):
    from onlinebma.datasets import UCIDataset

    data = list(UCIDataset("house-votes-84").take(n_train + n_test))  # with missing votes
    X = pd.DataFrame([x for x, _ in data[:n_train]])
    y = pd.Series([label for _, label in data[:n_train]])
    return X, y, [x for x, _ in data[n_train:]]


def _random_problem():
    records, labels = _random_data(3, n=60, p=6, missing=0.3)
    tests = [x for x, _ in zip(*_random_data(4, n=30, p=6, missing=0.3))]
    return pd.DataFrame(records), pd.Series(labels), tests


@pytest.mark.parametrize("problem", [_house_votes, _random_problem])
def test_batch_predictions_equal_row_by_row_predictions_of_fresh_models(problem):
    # predict_proba shares one cache of scores over the frame's rows.
    X, y, tests = problem()
    batch = ISA().fit(X, y).predict_proba(pd.DataFrame(tests))
    for i, x in enumerate(tests):
        alone = ISA().fit(X, y).predict_proba_one(x)
        assert batch.iloc[i].to_dict() == pytest.approx(alone, abs=1e-12)


def test_scores_stay_finite_when_every_class_present_fits_far_worse_than_an_absent_one():
    # The last record has a value no earlier record has on each of 400 features: every
    # class present (both) predicts it with about log(1 / 300) per feature, far below (by
    # more than exp's range) the value an absent class would get, log(1 / 3) per feature;
    # the log-sum-exp over classes must shift by the classes present, not the absent value.
    # Reference: the record-by-record terms, from the index, over all classes.
    p, n = 400, 600
    records = [{f"f{j}": str(t % 2) for j in range(p)} for t in range(n - 1)]
    records.append({f"f{j}": "2" for j in range(p)})
    labels = [str(t % 2) for t in range(n)]
    model = ISA(phase1_models=1, max_models=1).fit(pd.DataFrame(records), pd.Series(labels))
    model.predict_proba_one(records[-1])
    scorer = model._scorer  # ISA's internal scorer: no public view of single scores
    score = scorer.log_score((), "full", None)
    expected = sum(float(scorer.record_terms([()], None, t)[0]) for t in range(n))
    assert math.isfinite(score)
    assert score == pytest.approx(expected, abs=1e-9)


def test_scores_equal_brute_force_with_a_child_of_many_values():
    # The scorer packs a child's counts in 64-bit words of b-bit fields (b: bits of n), a few
    # values per word: a child of 14 values among 40 records (b = 6, 9 values per word) spans
    # two words, some records missing it.
    records, labels = _random_data(2, n=40, p=3)
    rng = random.Random(5)
    for x, y in zip(records, labels):
        if rng.random() < 0.9:
            x["many"] = f"m{('uvw'.index(y) * 5 + rng.randrange(6)) % 14}"
    model = _learned(_exhaustive("full"), records, labels)
    for test in ({"f0": "v1", "f1": "v0", "many": "m3"}, {"f2": "v0", "many": "m13"}, {}):
        expected, models = brute_force(records, labels, test)
        got = model.predict_proba_one(test)
        for k in expected:
            assert got[k] == pytest.approx(expected[k], abs=1e-9)
        explained = model.explain_one(test)
        assert len(explained) == len(models)
        for m in explained:
            assert m["log_score"] == pytest.approx(models[tuple(sorted(m["antecedent"]))][0],
                                                   abs=1e-9)


@pytest.mark.parametrize("coding", ["full", "indicator"])
def test_average_false_predicts_with_the_best_model_in_R(coding):
    records, labels = _random_data(2, n=50, p=5)
    model = _learned(_exhaustive(coding, average=False), records, labels)
    for test in TESTS:
        _, models = brute_force(records, labels, test, coding)
        best = max(models, key=lambda A: models[A][0])
        got = model.predict_proba_one(test)
        for k, q in models[best][1].items():
            assert got[k] == pytest.approx(q, abs=1e-9)
    # With the default (non-exhaustive) search too: the highest-scoring model of R.
    model = _learned(ISA(average=False, phase1_models=3, max_models=5), records, labels)
    got = model.predict_proba_one(TESTS[0])
    best = max(model.explain_one(TESTS[0]), key=lambda m: m["log_score"])
    assert got == pytest.approx(best["proba"], abs=1e-12)


def test_record_order_changes_the_score_only_as_eq_9_implies():
    records, labels = _random_data(3, n=40, p=4)
    test = TESTS[0]
    rng = random.Random(0)
    reference = None
    for _ in range(3):
        order = list(range(len(records)))
        rng.shuffle(order)
        recs = [records[i] for i in order]
        labs = [labels[i] for i in order]
        _, models = brute_force(recs, labs, test)
        model = _learned(_exhaustive("full"), recs, labs)
        explained = {tuple(sorted(m["antecedent"])): m for m in model.explain_one(test)}
        for A, (score, proba) in models.items():
            assert explained[A]["log_score"] == pytest.approx(score, abs=1e-9)
            assert explained[A]["proba"] == pytest.approx(proba, abs=1e-12)
        scores = {A: s for A, (s, _) in models.items()}
        if reference is None:
            reference = scores
        else:  # each model's prediction is order-free; its prequential score is not
            assert any(abs(scores[A] - reference[A]) > 1e-6 for A in scores)


def test_phase_two_expands_children_of_the_models_it_adds():
    records, labels = _random_data(4, n=60, p=6, missing=0.0)
    test = TESTS[0]
    kw = {"phase1_models": 2, "max_models": 30, "threshold": 0.0}
    expanding = _learned(ISA(phase2_expand=True, **kw), records, labels)
    fixed = _learned(ISA(phase2_expand=False, **kw), records, labels)
    R_exp = [tuple(sorted(m["antecedent"])) for m in expanding.explain_one(test)]
    R_fix = [tuple(sorted(m["antecedent"])) for m in fixed.explain_one(test)]
    # Without expansion phase 2 draws only from phase 1's queue: the children of the two
    # phase-1 models (naive Bayes and its best child), at most 1 + 7 + 6 = 14 sets of size <= 2.
    assert len(R_fix) <= 14 and max(map(len, R_fix)) <= 2
    assert len(R_exp) > len(R_fix) and max(map(len, R_exp)) >= 3
    # Every model in R is the child of another model in R (or naive Bayes).
    members = set(R_exp)
    assert all(A == () or any(tuple(sorted(set(A) - {f})) in members for f in A) for A in R_exp)


def test_phase_two_picks_the_largest_change_of_any_class_probability():
    # Eq. 11 with three classes: f = s_M / (W + s_M) * max_k |P_M(k) - g(R)(k)|.
    records, labels = _random_data(9, n=60, p=5)
    test = TESTS[0]
    _, models = brute_force(records, labels, test)
    s0, p0 = models[()]
    classes = sorted(p0)

    def change(A):
        s, p = models[A]
        w = 1.0 / (1.0 + math.exp(s0 - s))
        return w * max(abs(p[k] - p0[k]) for k in classes)

    singles = [A for A in models if len(A) == 1]
    expected = max(singles, key=change)
    assert sorted(change(A) for A in singles)[-2] < change(expected)  # a clear winner
    model = _learned(ISA(phase1_models=1, max_models=2, threshold=0.0), records, labels)
    chosen = {tuple(sorted(m["antecedent"])) for m in model.explain_one(test)}
    assert chosen == {(), expected}


def test_phase_two_stops_at_the_threshold_and_at_max_models():
    records, labels = _random_data(5, n=60, p=6)
    test = TESTS[0]
    loose = _learned(ISA(phase1_models=1, max_models=50, threshold=0.5), records, labels)
    assert len(loose.explain_one(test)) < 50
    capped = _learned(ISA(phase1_models=1, max_models=7, threshold=0.0), records, labels)
    assert len(capped.explain_one(test)) == 7


def _with_absent_classes(own: dict, known, n_counted: int) -> dict:
    """The adapter's class policy: a known class with no stored record gets 1 / (n + K), ``n``
    the records counted (for ISA the window's, docs/isa.md), the classes present share the
    rest in the model's proportions."""
    share = 1.0 / (n_counted + len(known))
    absent = [k for k in known if k not in own]
    return {**dict.fromkeys(absent, share),
            **{k: v * (1.0 - share * len(absent)) for k, v in own.items()}}


def test_window_equals_a_windowed_isa_trained_on_the_last_2w_records():
    # With a window W the store holds the last 2 W records (the window and the contexts of its
    # terms, docs/isa.md): a learner that saw only those predicts the same.
    rng = np.random.default_rng(0)
    records, labels = _random_data(6, n=80, p=4)
    for x in records:
        x["num"] = float(rng.normal())
    labels = labels[:60] + ["w"] * 20  # classes u, v drop out of the store
    windowed = _learned(ISA(window=10), records, labels)
    fresh = _learned(ISA(window=10), records[-20:], labels[-20:])
    for test in TESTS[:2] + [{**TESTS[0], "num": 0.3}]:
        a, b = windowed.predict_proba_one(test), fresh.predict_proba_one(test)
        assert set(b) == {"w"} and set(a) == set("uvw")
        assert a == pytest.approx(_with_absent_classes(b, "uvw", 10), abs=1e-12)
    w2 = _learned(ISA(window=30), records, labels)
    f2 = _learned(ISA(window=30), records[-60:], labels[-60:])
    assert w2.predict_proba_one(TESTS[1]) == pytest.approx(
        _with_absent_classes(f2.predict_proba_one(TESTS[1]), "uvw", 30), abs=1e-12)
    # On a stream, predictions between records: with refit_every=1 the cut points too are
    # those of the stored records at every step.
    streamed = ISA(window=10, refit_every=1)
    for i, (x, y) in enumerate(zip(records, labels)):
        streamed.learn_one(x, y)
        streamed.predict_proba_one(TESTS[0])
        if i in (30, 79):
            start = max(0, i + 1 - 20)
            fresh = _learned(ISA(window=10), records[start: i + 1], labels[start: i + 1])
            a, b = streamed.predict_proba_one(TESTS[0]), fresh.predict_proba_one(TESTS[0])
            assert a == pytest.approx(_with_absent_classes(b, "uvw", 10), abs=1e-12)


def test_scores_are_cached_and_refreshed_when_records_arrive():
    records, labels = _random_data(7, n=60, p=5)
    model = _learned(ISA(), records[:59], labels[:59])
    model.predict_proba_one(TESTS[0])
    # The caches are internal (no public view): what this test checks is that they are kept.
    n_scores = len(model._cache)
    model.predict_proba_one({**TESTS[0], "f0": "v0"})  # same observed features: phase 1 reused
    assert len(model._cache) >= n_scores and len(model._phase1) == 1
    model.learn_one(records[59], labels[59])
    fresh = _learned(ISA(), records, labels)
    assert model.predict_proba_one(TESTS[0]) == pytest.approx(
        fresh.predict_proba_one(TESTS[0]), abs=1e-12)


def _spy_fresh_scorings(monkeypatch):
    """Record every model scored from all records (not extended): ``[(A, was cached)]``."""
    from onlinebma.isa import cache

    calls = []
    original = cache.ScoreCache.refresh

    def refresh(self, keys):
        n = self.scorer.n
        for k in keys:
            entry = self.entries.get(k)  # [score, first, total] (the cache's own entries)
            if entry is None or n - entry[2] > tuning.FRESH_RECORDS + tuning.FRESH_FRACTION * n:
                calls.append((k, entry is not None))
        return original(self, keys)

    monkeypatch.setattr(cache.ScoreCache, "refresh", refresh)
    return calls


@pytest.mark.parametrize("coding", ["full", "indicator"])
def test_scores_extend_record_by_record_as_records_arrive(coding, monkeypatch):
    records, labels = _random_data(11, n=52, p=5)
    model = _learned(_exhaustive(coding), records[:40], labels[:40])
    model.predict_proba_one(TESTS[0])
    fresh = _spy_fresh_scorings(monkeypatch)
    for i in range(40, 52):
        model.learn_one(records[i], labels[i])
        _, models = brute_force(records[: i + 1], labels[: i + 1], TESTS[0], coding)
        explained = model.explain_one(TESTS[0])
        assert len(explained) == 2 ** len(TESTS[0])  # every antecedent set of its features
        for m in explained:
            A = tuple(sorted(m["antecedent"]))
            assert m["log_score"] == pytest.approx(models[A][0], abs=1e-9)
    assert fresh == []  # every score was extended by the new records' terms, none recomputed


@pytest.mark.parametrize("coding", ["full", "indicator"])
@pytest.mark.parametrize("k", [1, 32, 33, 500])
def test_a_prediction_after_k_appended_records_equals_a_fresh_models(coding, k):
    records, labels = _random_data(12, n=60 + k, p=5)
    model = _learned(ISA(antecedent=coding), records[:60], labels[:60])
    for test in TESTS[:2]:
        model.predict_proba_one(test)  # caches built on the first 60 records
    model.learn_many(pd.DataFrame(records[60:]), pd.Series(labels[60:]))
    fresh = _learned(ISA(antecedent=coding), records, labels)
    for test in TESTS:
        assert model.predict_proba_one(test) == pytest.approx(
            fresh.predict_proba_one(test), abs=1e-9)


def test_no_cliff_cached_scores_are_extended_after_many_new_records(monkeypatch):
    # Today's cliff was 33 new records: scores were then dropped and computed afresh. Cached
    # scores are now extended record by record whenever that is cheaper than scoring afresh,
    # however many arrived (beyond FRESH_RECORDS + FRESH_FRACTION * n, scoring afresh is).

    records, labels = _random_data(13, n=400, p=5)
    model = _learned(ISA(), records[:200], labels[:200])
    model.predict_proba_one(TESTS[0])
    assert 33 <= tuning.FRESH_RECORDS + tuning.FRESH_FRACTION * 233
    fresh = _spy_fresh_scorings(monkeypatch)
    model.learn_many(pd.DataFrame(records[200:233]), pd.Series(labels[200:233]))
    got = model.predict_proba_one(TESTS[0])
    assert not any(was_cached for _, was_cached in fresh)
    assert got == pytest.approx(
        _learned(ISA(), records[:233], labels[:233]).predict_proba_one(TESTS[0]), abs=1e-9)


def test_margin_changes_predictions_by_less_than_it_implies():
    # Negligible models (more than `margin` nats behind the best in R) are left out of the
    # average: each has less than exp(-margin) of the best's weight, so a prediction moves by
    # at most |R| exp(-margin) (R has at most max_models models).
    records, labels = _random_data(14, n=400, p=6)
    tests = records[300:330] + TESTS
    for margin in (6.0, 12.0):
        cut = _learned(ISA(margin=margin, phase1_models=30, max_models=60), records[:300],
                       labels[:300])
        exact = _learned(ISA(margin=None, phase1_models=30, max_models=60), records[:300],
                         labels[:300])
        negligible = 0
        for i, test in enumerate(tests):
            if i == 10:  # and on a stream, with scores left stale
                for x, y in zip(records[300:400], labels[300:400]):
                    cut.learn_one(x, y)
                    exact.learn_one(x, y)
                    cut.predict_proba_one(TESTS[0])
            a, b = cut.predict_proba_one(test), exact.predict_proba_one(test)
            assert max(abs(a[k] - b[k]) for k in b) <= 60 * math.exp(-margin)
            scores = [m["log_score"] for m in exact.explain_one(test)]
            negligible += sum(s < max(scores) - margin for s in scores)
        assert negligible > 0  # the margin was used


def test_probabilities_are_distributions_with_one_class_and_defaults():
    # issue 13, item 11: ISA() once returned 1.0000000000000004 when one class had been seen.
    rng = random.Random(0)
    model = ISA()
    for _ in range(60):
        x = {f"f{j}": rng.choice("abc") for j in range(8)}
        model.learn_one(x, "only")
        proba = model.predict_proba_one({f"f{j}": rng.choice("abc") for j in range(8)})
        assert proba == {"only": 1.0}
    records, labels = _random_data(15, n=80, p=6)
    model = _learned(ISA(), records, labels)
    for test in TESTS + records[:20]:
        proba = model.predict_proba_one(test)
        assert all(0.0 <= v <= 1.0 for v in proba.values())
        assert abs(sum(proba.values()) - 1.0) <= 1e-9


def test_the_index_stays_bounded_with_a_window():
    records, labels = _random_data(16, n=600, p=5)
    model = ISA(window=50)
    sizes = []
    for i, (x, y) in enumerate(zip(records, labels)):
        model.learn_one(x, y)
        if i % 100 == 99:
            model.predict_proba_one(TESTS[0])
            sizes.append(model.nbytes_)
    assert max(sizes[1:]) <= sizes[0]  # records beyond the window are not kept


def test_pandas_fit_matches_learning_one_by_one():
    records, labels = _random_data(8, n=50, p=5)
    X = pd.DataFrame(records)
    fitted = ISA().fit(X, pd.Series(labels))
    streamed = _learned(ISA(), records, labels)
    proba = fitted.predict_proba(pd.DataFrame(TESTS[:2]))
    for i, test in enumerate(TESTS[:2]):
        assert proba.iloc[i].to_dict() == pytest.approx(streamed.predict_proba_one(test), abs=1e-12)


def test_numeric_features_are_discretized_like_mdl_discretizer_and_pipelines_work():
    from onlinebma.datasets import UCIDataset
    from onlinebma.preprocessing import MDLDiscretizer

    data = list(UCIDataset("iris"))
    random.Random(0).shuffle(data)
    train, test = data[:100], data[100:]
    direct, piped, disc = ISA(), MDLDiscretizer() | ISA(), MDLDiscretizer()
    for x, y in train:
        direct.learn_one(x, y)
        piped.learn_one(x, y)
        disc.learn_one(x, y)
    # Internal discretization = cut points fitted on the stored records.
    on_codes = _learned(ISA(), [disc.transform_one(x) for x, _ in train], [y for _, y in train])
    for x, _ in test[:10]:
        assert direct.predict_proba_one(x) == pytest.approx(
            on_codes.predict_proba_one(disc.transform_one(x)), abs=1e-12)
    # In a River pipeline each record is discretized with the cut points of its arrival time
    # (River transforms before the transformer learns), so results differ but stay sensible.
    for model in (direct, piped):
        correct = sum(max(p := model.predict_proba_one(x), key=p.get) == y for x, y in test)
        assert correct >= 45


@pytest.mark.parametrize(
    "kw",
    [
        {"antecedent": "joint"},
        {"alpha": 0.0},
        {"alpha": float("nan")},
        {"phase1_models": 0},
        {"max_models": 5, "phase1_models": 10},
        {"threshold": -0.1},
        {"average": 1},
        {"window": 0},
    ],
)
def test_bad_parameters_are_refused(kw):
    with pytest.raises(ValueError):
        ISA(**kw)



@pytest.mark.slow
@pytest.mark.experiments
def test_isa_table1_quick_smoke(tmp_path):
    from experiments import isa_table1

    result = isa_table1.run(quick=True, out=tmp_path)
    table = result["tables"]["table1"]
    assert list(table["dataset"]) == list(isa_table1.QUICK)
    for col in ("NB", "ISA", "NB (whole)", "ISA (whole)"):
        values = table[col].str.split().str[0].astype(float)
        assert np.isfinite(values).all() and ((values >= 0) & (values <= 100)).all()
    assert (table["paper ISA"] != "").all()
    assert (tmp_path / "results" / "isa-table1.md").exists()


def test_cv_splits_are_stratified_partitions_with_shuffled_training_rows():
    from experiments._cv import cv_splits  # the experiments' shared split, not an attribute

    y = np.array(["a"] * 53 + ["b"] * 53)  # sorted by class, like promoters
    splits = list(cv_splits(y, 10, np.random.default_rng(0)))
    tests = np.concatenate([test for _, test in splits])
    assert sorted(tests.tolist()) == list(range(len(y)))  # every record tested once
    for train, test in splits:
        assert sorted(np.concatenate([train, test]).tolist()) == list(range(len(y)))
        assert abs((y[test] == "a").sum() - (y[test] == "b").sum()) <= 1  # stratified
        assert (np.diff(train) < 0).any()  # training rows not in file order
    again = list(cv_splits(y, 10, np.random.default_rng(0)))
    assert all(np.array_equal(a, b) for (a, _), (b, _) in zip(splits, again))


def _iris_stream(n):
    from onlinebma.datasets import UCIDataset

    data = list(UCIDataset("iris"))
    random.Random(1).shuffle(data)
    return data[:n]


def _coded(x, cuts_by_feature):
    """``x`` with its numeric values replaced by the names of their intervals."""
    from onlinebma.preprocessing import interval_labels

    return {
        f: interval_labels(c)[int(np.searchsorted(c, v, side="left"))]
        for f, v in x.items() for c in [cuts_by_feature[f]]
    }


def test_cut_points_follow_the_refit_policy_and_cached_scores_are_extended(monkeypatch):
    from onlinebma.preprocessing import mdl_cut_points

    data = _iris_stream(120)
    model = _learned(ISA(), [x for x, _ in data[:100]], [y for _, y in data[:100]])
    test = data[-1][0]
    model.predict_proba_one(test)
    coding = model.coding
    cuts = {f: c.copy() for f, c in zip(coding.numeric_features, coding.cuts)}
    fresh = _spy_fresh_scorings(monkeypatch)
    for x, y in data[100:109]:  # 9 records: less than 10% growth, no refit
        model.learn_one(x, y)
        model.predict_proba_one(test)
    assert model.n_fits_ == 1
    # Every cached score was extended by the new records' terms (new models may be scored).
    assert not any(was_cached for _, was_cached in fresh)
    monkeypatch.undo()
    assert all(np.array_equal(cuts[f], c) for f, c in zip(coding.numeric_features, coding.cuts))
    # Predictions = ISA on the records coded with the frozen cut points; extended scores =
    # scores recomputed from scratch.
    coded = _learned(ISA(), [_coded(x, cuts) for x, _ in data[:109]], [y for _, y in data[:109]])
    assert model.predict_proba_one(test) == pytest.approx(
        coded.predict_proba_one(_coded(test, cuts)), abs=1e-12)
    # ISA's internal scorer and cache (no public view): extended scores = recomputed ones.
    recs, keys = model._scorer, list(model._cache.entries)[:20]
    for A, score in zip(keys, model._cache.refresh(keys)):
        assert score == pytest.approx(recs.log_score(A, "full", None), abs=1e-9)
    model.learn_one(*data[109])  # the 10th new record: the next prediction refits
    model.predict_proba_one(test)
    assert model.n_fits_ == 2

    every = ISA(refit_every=1)
    for i, (x, y) in enumerate(data[:30]):
        every.learn_one(x, y)
        every.predict_proba_one(test)
        X = np.array([[r[f] for f in every.coding.numeric_features] for r, _ in data[: i + 1]])
        Y = np.array([every.coding.class_code(label) for _, label in data[: i + 1]])
        for j, cuts_j in enumerate(every.coding.cuts):
            np.testing.assert_array_equal(cuts_j, mdl_cut_points(X[:, j], Y, len(every.classes_)))


def test_a_new_numeric_feature_refits_the_cut_points_at_once():
    data = _iris_stream(60)
    model = _learned(ISA(), [x for x, _ in data[:50]], [y for _, y in data[:50]])
    model.predict_proba_one(data[0][0])
    model.learn_one({**data[50][0], "extra": 1.5}, data[50][1])
    proba = model.predict_proba_one({**data[0][0], "extra": 1.5})
    assert model.n_fits_ == 2 and len(model.coding.cuts) == 5
    assert sum(proba.values()) == pytest.approx(1)


def test_explain_one_top_k_is_the_k_weightiest_models_and_refuses_a_bad_k():
    from onlinebma.datasets import UCIDataset

    model = ISA()
    for x, y in UCIDataset("house-votes-84").take(120):
        model.learn_one(x, y)
    x, _ = next(iter(UCIDataset("house-votes-84")))
    every = model.explain_one(x)
    assert len(every) > 3
    assert model.explain_one(x, top=3) == every[:3]
    assert model.explain_one(x, top=len(every) + 5) == every
    assert ISA().explain_one(x, top=2) == []
    for bad in (0, -1, 2.0, True, "3"):
        with pytest.raises(ValueError, match="top must be an integer >= 1"):
            model.explain_one(x, top=bad)
