"""The wide-record path (onlinebma.naive_bayes.wide) computes what the plain path computes."""

import copy
import math
import pickle
import random

import pytest

from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
from onlinebma.naive_bayes.wide import WIDE_CELLS, with_wide_path

WIDTH = WIDE_CELLS // 2  # wide from the first class on

LEARNERS = [NaiveBayes, BMANB, ModelAveragedNB]


def _stream(n, n_features, n_classes, seed, missing=0.0, nominal=0, new_features_at=None):
    rng = random.Random(seed)
    shift = [[rng.gauss(0, 1) for _ in range(n_features)] for _ in range(n_classes)]
    for i in range(n):
        # classes appear one by one: new classes arrive mid-stream
        y = rng.randrange(min(n_classes, 1 + i // 7))
        x = {f"z{j}": rng.gauss(shift[y][j], 1.0) for j in range(n_features)
             if rng.random() >= missing}
        for j in range(nominal):
            x[f"c{j}"] = f"v{rng.randrange(3 + i // 20)}"  # new values keep arriving
        if new_features_at is not None and i >= new_features_at:
            x[f"late{i % 3}"] = rng.gauss(0, 1)
        if missing and rng.random() < 0.2:
            x["z0"] = None if rng.random() < 0.5 else math.nan
        yield x, y


def _assert_same(p, q):
    assert p.keys() == q.keys()
    for y in p:
        assert q[y] == pytest.approx(p[y], rel=1e-12, abs=1e-12)


def _run(learner, stream, **params):
    plain, wide = learner(**params), with_wide_path(learner)(**params)
    for x, y in stream:
        _assert_same(plain.predict_proba_one(x), wide.predict_proba_one(x))
        plain.learn_one(x, y)
        wide.learn_one(x, y)
        if isinstance(plain, ModelAveragedNB) or isinstance(plain, BMANB):
            a, b = plain.feature_posteriors(), wide.feature_posteriors()
            for f in a:
                assert b[f] == pytest.approx(a[f], rel=1e-12, abs=1e-12)
    return plain, wide


@pytest.mark.parametrize("learner", LEARNERS)
def test_numeric_equal_to_plain(learner):
    _, wide = _run(learner, _stream(80, WIDTH + 9, 3, seed=1))
    assert wide._wide.t == wide._t  # the last record was learned the array way


@pytest.mark.parametrize("learner", LEARNERS)
def test_narrow_records_go_the_plain_way(learner):
    _, wide = _run(learner, _stream(20, WIDE_CELLS // 3 - 1, 2, seed=7))
    assert wide.__dict__.get("_wide") is None


@pytest.mark.parametrize("learner", LEARNERS)
def test_mixed_missing_new_values_classes_features(learner):
    plain, wide = _run(learner, _stream(90, WIDTH + 4, 4, seed=2, missing=0.1,
                                        nominal=3, new_features_at=50))
    # the state every other path reads is the plain path's
    for f, t in plain._tables.items():
        u = wide._tables[f]
        if hasattr(t, "marginal"):
            for a, b in [(t.marginal, u.marginal)] + [(t.by_class[y], u.by_class[y])
                                                      for y in t.by_class]:
                assert (b.n, b.mean) == (a.n, pytest.approx(a.mean, rel=1e-12, abs=1e-12))
                assert b.m2 == pytest.approx(a.m2, rel=1e-12, abs=1e-12)
                assert type(b.n) is type(a.n)


@pytest.mark.parametrize("learner", LEARNERS)
def test_records_of_other_orders_and_subsets(learner):
    rng = random.Random(3)
    records = []
    for x, y in _stream(60, WIDTH + 6, 2, seed=3):
        keys = list(x)
        rng.shuffle(keys)
        records.append(({k: x[k] for k in keys[: len(keys) - rng.randrange(4)]}, y))
    _run(learner, records)


@pytest.mark.parametrize("learner", LEARNERS)
def test_after_learn_many_and_pickle(learner):
    pd = pytest.importorskip("pandas")
    records = list(_stream(60, WIDTH + 2, 3, seed=4))
    plain, wide = _run(learner, records[:30])
    X = pd.DataFrame([x for x, _ in records[30:45]])
    y = pd.Series([y for _, y in records[30:45]])
    plain.learn_many(X, y)
    wide.learn_many(X, y)
    wide = copy.deepcopy(wide)  # the block is copied with the tables
    for x, label in records[45:]:
        _assert_same(plain.predict_proba_one(x), wide.predict_proba_one(x))
        plain.learn_one(x, label)
        wide.learn_one(x, label)


@pytest.mark.parametrize("learner", LEARNERS)
def test_decay_goes_the_plain_way(learner):
    plain, wide = _run(learner, _stream(40, WIDTH + 1, 2, seed=5), decay=0.95)
    assert wide.__dict__.get("_wide") is None


def test_refused_record_changes_nothing():
    wide = with_wide_path(ModelAveragedNB)()
    records = list(_stream(20, WIDTH, 2, seed=6))
    for x, y in records:
        wide.learn_one(x, y)
    before = pickle.dumps(wide._tables)
    bad = dict(records[0][0], z1=1e300)
    with pytest.raises(ValueError, match="z1"):
        wide.learn_one(bad, 0)
    assert pickle.dumps(wide._tables) == before
