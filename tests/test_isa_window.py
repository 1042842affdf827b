"""ISA with a window: the sliding eq. 9 against an independent brute force, the scorer sliding
instead of being rebuilt, and bad input refused without a change."""

from __future__ import annotations

import bisect
import itertools
import math
import random

import pytest

from onlinebma.isa import ISA, classifier

# ------------------------------------------------------------------ brute force
# Plain Python over the stream's records as dicts, straight from the definition (docs/isa.md):
# the stored records are the last 2 W of the stream; the score of M(A) is the sum over the
# last W of them of log P(z^p | x^p, M(A), the W records before p) (eq. 9-10 with the
# counts of those W records only); r_i and the classes are those present in the 2 W stored
# records; a model predicts from the last W records; eq. 8 averages every antecedent set.
# Numeric values are replaced by the index of their interval under the learner's cut points
# (the adapter's discretization, tested elsewhere). Shares no code with onlinebma.isa.

MISSING = object()


def _discretized(records, cuts):
    return [{f: (bisect.bisect_left(cuts[f], v) if f in cuts else v) for f, v in x.items()}
            for x in records]


def _config(x, A, test, coding):
    if coding == "full":
        return tuple(x.get(f, MISSING) for f in A)
    return tuple("missing" if f not in x else x[f] == test[f] for f in A)


def _class_logs(x, A, rows, classes, features, r, alpha, skip=()):
    """log P(z = k, x's children | config) + const for every class, from ``rows`` (the records,
    with their labels, of x's configuration)."""
    out = {}
    for k in classes:
        mine = [z for z, label in rows if label == k]
        lp = math.log((len(mine) + alpha) / (len(rows) + len(classes) * alpha))
        for f in features:
            if f in A or f in skip or f not in x:
                continue
            same = sum(1 for z in mine if z.get(f, MISSING) == x[f])
            seen = sum(1 for z in mine if f in z)
            lp += math.log((same + alpha) / (seen + r[f] * alpha))
        out[k] = lp
    return out


def sliding_brute_force(records, labels, window, test, coding, alpha=1.0):
    """``(prediction, {A: (log score, model prediction)})`` over every antecedent set, for a
    learner that saw ``records, labels`` (already discretized) and the test row ``test``."""
    records, labels = records[-2 * window:], labels[-2 * window:]
    values = {}
    for x in records:
        for f, v in x.items():
            values.setdefault(f, set()).add(v)
    classes = sorted(set(labels), key=str)
    features = sorted(values)
    r = {f: len(v) for f, v in values.items()}
    observed = [f for f in features if f in test and test[f] in values[f]]
    live = range(max(0, len(records) - window), len(records))
    models = {}
    for size in range(len(observed) + 1):
        for A in itertools.combinations(observed, size):
            score = 0.0
            for p in live:
                x = records[p]
                config = _config(x, A, test, coding)
                rows = [(records[q], labels[q]) for q in range(max(0, p - window), p)
                        if _config(records[q], A, test, coding) == config]
                logs = _class_logs(x, A, rows, classes, features, r, alpha)
                score += logs[labels[p]] - math.log(sum(math.exp(v) for v in logs.values()))
            config = _config(test, A, test, coding)
            rows = [(records[q], labels[q]) for q in live
                    if _config(records[q], A, test, coding) == config]
            unusable = [f for f in features if f not in observed]
            logs = _class_logs(test, A, rows, classes, features, r, alpha, skip=unusable)
            top = max(logs.values())
            z = sum(math.exp(v - top) for v in logs.values())
            models[A] = (score, {k: math.exp(v - top) / z for k, v in logs.items()})
    top = max(s for s, _ in models.values())
    total = sum(math.exp(s - top) for s, _ in models.values())
    proba = {k: sum(math.exp(s - top) / total * p[k] for s, p in models.values())
             for k in classes}
    return proba, models


# ------------------------------------------------------------------ streams


def _stream(seed, n, p=4, missing=0.15, numeric=False):
    """Records of few values per feature, features depending on the class; ``numeric``: one
    numeric feature more (missing too), a noisy function of the class."""
    rng = random.Random(seed)
    records, labels = [], []
    for _ in range(n):
        y = rng.choice("uvw")
        x = {}
        for j in range(p):
            if rng.random() < missing:
                continue
            v = rng.randrange(3) if rng.random() < 0.6 else ("uvw".index(y) + j) % 3
            x[f"f{j}"] = f"v{v}"
        if numeric and rng.random() >= missing:
            x["num"] = "uvw".index(y) + rng.gauss(0.0, 0.7)
        records.append(x)
        labels.append(y)
    return records, labels


def _exhaustive(coding, window, **kw):
    # Every antecedent set of 5 features is in R (32 models), none negligible: the prediction
    # is eq. 8 over all of them, as in the brute force.
    return ISA(antecedent=coding, window=window, phase1_models=32, max_models=32,
               threshold=0.0, margin=None, **kw)


def _check(model, records, labels, window, test, coding):
    got = model.predict_proba_one(test)
    cuts = dict(zip(model.coding.numeric_features, (c.tolist() for c in model.coding.cuts)))
    seen = _discretized(records, cuts)
    expected, models = sliding_brute_force(seen, labels, window, _discretized([test], cuts)[0],
                                           coding)
    assert set(got) == set(labels)  # every known label, those absent from the store too
    stored = set(labels[-2 * window:])
    # the adapter's, for a class absent from the store, counted over the window (docs/isa.md)
    share = 1.0 / (min(len(labels), window) + len(got))
    scale = 1.0 - share * (len(got) - len(stored))
    for k in got:
        assert got[k] == pytest.approx(scale * expected[k] if k in stored else share, abs=1e-9)
    # The models' cached scores (explain_one brings them up to date through the cache).
    explained = model.explain_one(test)
    assert len(explained) == len(models)
    for m in explained:
        A = tuple(sorted(m["antecedent"]))
        assert m["log_score"] == pytest.approx(models[A][0], abs=1e-9), A


@pytest.mark.parametrize("coding", ["full", "indicator"])
@pytest.mark.parametrize("numeric", [False, True])
def test_windowed_isa_equals_the_sliding_brute_force(coding, numeric):
    W, n = 12, 75
    records, labels = _stream(1 + numeric, n, numeric=numeric)
    tests = [records[3], {"f0": "v1", "f2": "v0", "num": 0.4}, {}, {"f1": "v2", "f3": "v9"}]
    # refit_every: the cut points move during the stream (every record's codes change).
    model = _exhaustive(coding, W, refit_every=10 if numeric else None)
    checked = 0
    for i, (x, y) in enumerate(zip(records, labels)):
        test = tests[i % len(tests)]
        # Predictions at irregular steps: cached scores miss one, a few (terms added record
        # by record), several (in one pass, `tuning.WINDOW_EXTEND_RECORDS`) or more than a
        # window's worth of records when asked for again.
        if i in (1, 5, 11, 12, 13, 20, 26, 27, 41, 50, 60, 61, 62, 70) or i > 70:
            _check(model, records[:i], labels[:i], W, test, coding)
            checked += 1
        elif i % 3 == 0 and i < 40:
            model.predict_proba_one(test)
        model.learn_one(x, y)
    _check(model, records, labels, W, tests[0], coding)
    assert checked > 15


def _count_builds(monkeypatch) -> list:
    """The number of records of every scorer built from now on."""
    built = []

    class Counted(classifier.Scorer):
        def __init__(self, table, alpha, window=None):
            built.append(table.n)
            super().__init__(table, alpha, window)

    monkeypatch.setattr(classifier, "Scorer", Counted)
    return built


@pytest.mark.parametrize("coding", ["full", "indicator"])
def test_the_scorer_slides_and_the_stream_equals_a_learner_of_the_last_2w_records(
        coding, monkeypatch):
    # Three values per feature, all present in any 2 W records after the first few: the scorer
    # is built while values first appear, then slides through the stream (its arrays moving
    # the held records back to their start when full), never rebuilt.
    W, n = 20, 160
    records, labels = _stream(3, n, p=5, missing=0.1)
    built = _count_builds(monkeypatch)
    search = {"phase1_models": 16, "max_models": 32}
    streamed = ISA(antecedent=coding, window=W, **search)
    for i, (x, y) in enumerate(zip(records, labels)):
        streamed.predict_proba_one(records[(7 * i) % n])
        streamed.learn_one(x, y)
    assert len(built) <= 8 and all(size < 2 * W for size in built)
    assert streamed._scorer.base > 0  # the held records moved to the arrays' start (internal)
    # A learner that saw only the stream's last 2 W records has the same store, so the same
    # scores and predictions (the sliding score reads nothing older).
    fresh = ISA(antecedent=coding, window=W, **search)
    for x, y in zip(records[-2 * W:], labels[-2 * W:]):
        fresh.learn_one(x, y)
    for test in records[:10]:
        assert streamed.predict_proba_one(test) == pytest.approx(
            fresh.predict_proba_one(test), abs=1e-9)
    ours = {m["log_score"] for m in streamed.explain_one(records[0])}
    theirs = {m["log_score"] for m in fresh.explain_one(records[0])}
    assert sorted(ours) == pytest.approx(sorted(theirs), abs=1e-9)


@pytest.mark.parametrize("bad", [({"f0": [1, 2]}, "u"), ({"f0": "v1"}, None),
                                 ({"f0": 1.5}, "u")])
def test_bad_input_leaves_a_windowed_learner_unchanged(bad):
    W = 10
    records, labels = _stream(4, 40, numeric=True)
    model = ISA(window=W)
    for x, y in zip(records, labels):
        model.learn_one(x, y)
    before = model.predict_proba_one(records[0])
    stored = model.coding.n_stored, model.coding.n_learned
    with pytest.raises((TypeError, ValueError)):
        model.learn_one(*bad)
    assert (model.coding.n_stored, model.coding.n_learned) == stored
    assert model.predict_proba_one(records[0]) == before


@pytest.mark.parametrize("window", [3, 10])
def test_a_class_seen_once_and_evicted_gets_the_share_the_docs_state(window):
    """Issue 40's catalogue: a class that left a small window got 1 / (2 W + K), about half
    the 1 / (W + K) of the docs and of every other batch learner with a window of W."""
    model = ISA(window=window, phase1_models=5, max_models=10)
    model.learn_one({"s": "u"}, "rare")
    for i in range(3 * window):
        model.learn_one({"s": "xy"[i % 2]}, "ab"[i % 2])
    got = model.predict_proba_one({"s": "x"})
    assert got["rare"] == pytest.approx(1 / (window + 3), abs=1e-12)
    assert sum(got.values()) == pytest.approx(1.0, abs=1e-12)
