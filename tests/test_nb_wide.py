"""The wide-record path (onlinebma.naive_bayes.wide) computes what the plain path computes.

The learners choose the path by width (``tuning.WIDE_FEATURES``, ``tuning.WIDE_CELLS``); each test
runs the same stream through a learner forced the plain way and one taking the array path
wherever it can (from the thresholds of the shipped learners, or forced at every width) and
compares predictions, structure posteriors and the tables to 1e-12.
"""

import contextlib
import copy
import math
import pickle
import random

import pytest

from experiments.wide import forced_path
from onlinebma import tuning
from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes

WIDTH = tuning.WIDE_CELLS // 2  # wide from the first class on

LEARNERS = [NaiveBayes, BMANB, ModelAveragedNB]


def _plain(kind="numeric"):
    """Every record the plain way."""
    return forced_path("plain", kind)


def _array_always(kind="numeric"):
    """Every record that can go the array way goes it, however narrow."""
    return forced_path("array", kind)


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


def _array_path_used(model) -> bool:
    """Whether ``model`` learned its last record the array way (no public view: the array
    block is derived state of the path, current for the learner's count of records, which
    has no public view either)."""
    block = model._wide_numerics.block
    return block is not None and block.t == model._t


def _run(learner, stream, wide_path=contextlib.nullcontext, plain_path=_plain, **params):
    """The stream through a learner under ``plain_path`` and one under ``wide_path``, in
    step, compared after every record."""
    plain, other = learner(**params), learner(**params)
    for x, y in stream:
        with plain_path():
            p = plain.predict_proba_one(x)
            plain.learn_one(x, y)
        with wide_path():
            q = other.predict_proba_one(x)
            other.learn_one(x, y)
        _assert_same(p, q)
        if isinstance(plain, (ModelAveragedNB, BMANB)):
            a, b = plain.feature_posteriors(), other.feature_posteriors()
            assert a.keys() == b.keys()
            for f in a:
                assert b[f] == pytest.approx(a[f], rel=1e-12, abs=1e-12)
    _assert_same_state(plain, other)
    return plain, other


def _assert_same_state(plain, other):
    """The tables, which every other path reads, are the plain path's (no public view of a
    table's moments: read through the learner's ``_tables``)."""
    assert plain._tables.keys() == other._tables.keys()
    for f, t in plain._tables.items():
        u = other._tables[f]
        if not hasattr(t, "marginal"):
            assert u == t  # nominal counts, exactly
        else:
            assert t.by_class.keys() == u.by_class.keys()
            for a, b in [(t.marginal, u.marginal)] + [(t.by_class[y], u.by_class[y])
                                                      for y in t.by_class]:
                assert (b.n, b.mean) == (a.n, pytest.approx(a.mean, rel=1e-12, abs=1e-12))
                assert b.m2 == pytest.approx(a.m2, rel=1e-12, abs=1e-12)
                assert type(b.n) is type(a.n)


@pytest.mark.parametrize("learner", LEARNERS)
def test_numeric_equal_to_plain(learner):
    _, other = _run(learner, _stream(80, WIDTH + 9, 3, seed=1))
    assert _array_path_used(other)  # the shipped thresholds chose the array path


@pytest.mark.parametrize("learner", LEARNERS)
def test_narrow_records_go_the_plain_way(learner):
    _, other = _run(learner, _stream(20, tuning.WIDE_CELLS // 3 - 1, 2, seed=7))
    assert other._wide_numerics.block is None  # no public view: the block is derived state


@pytest.mark.parametrize("learner", LEARNERS)
def test_forced_array_path_equal_to_plain_at_every_width(learner):
    """The forced twins: narrow records too, with missing values, nominal features, new
    classes, values and features mid-stream."""
    for width in (1, 3, 8):
        _, other = _run(learner, _stream(60, width, 3, seed=10 + width, missing=0.1,
                                         nominal=2, new_features_at=40),
                        wide_path=_array_always)
    _, other = _run(learner, _stream(40, 4, 2, seed=9), wide_path=_array_always)
    assert _array_path_used(other)


@pytest.mark.parametrize("learner", LEARNERS)
def test_mixed_missing_new_values_classes_features(learner):
    _run(learner, _stream(90, WIDTH + 4, 4, seed=2, missing=0.1, nominal=3,
                          new_features_at=50))


def _reordered(stream, seed=3):
    """The records of ``stream`` with their keys shuffled and up to 3 of them left out."""
    rng = random.Random(seed)
    for x, y in stream:
        keys = list(x)
        rng.shuffle(keys)
        yield {k: x[k] for k in keys[: len(keys) - rng.randrange(4)]}, y


@pytest.mark.parametrize("learner", LEARNERS)
def test_records_of_other_orders_and_subsets(learner):
    _run(learner, _reordered(_stream(60, WIDTH + 6, 2, seed=3)))


def _after_learn_many(learner, records, copied=copy.deepcopy, plain_path=_plain, **params):
    """The twins on records[:30] one by one, [30:45] through ``learn_many``, then the other
    ``copied`` (its block with its tables) and both on the rest, compared record by record."""
    pd = pytest.importorskip("pandas")
    plain, other = _run(learner, records[:30], plain_path=plain_path, **params)
    X = pd.DataFrame([x for x, _ in records[30:45]])
    y = pd.Series([y for _, y in records[30:45]])
    plain.learn_many(X, y)
    other.learn_many(X, y)
    other = copied(other)
    for x, label in records[45:]:
        with plain_path():
            p = plain.predict_proba_one(x)
            plain.learn_one(x, label)
        _assert_same(p, other.predict_proba_one(x))
        other.learn_one(x, label)
    _assert_same_state(plain, other)
    return other


@pytest.mark.parametrize("learner", LEARNERS)
def test_after_learn_many_and_pickle(learner):
    other = _after_learn_many(learner, list(_stream(60, WIDTH + 2, 3, seed=4)),
                              numeric="Gaussian")  # a table of 15 rows fixes intervals
    assert _array_path_used(other)


@pytest.mark.parametrize("learner", LEARNERS)
def test_decay_goes_the_plain_way(learner):
    _, other = _run(learner, _stream(40, WIDTH + 1, 2, seed=5), decay=0.95)
    assert other._wide_numerics.block is None  # no public view: the block is derived state


def test_refused_record_changes_nothing():
    model = ModelAveragedNB()
    records = list(_stream(20, WIDTH, 2, seed=6))
    for x, y in records:
        model.learn_one(x, y)
    assert _array_path_used(model)
    before = pickle.dumps(model)
    bad = dict(records[0][0], z1=1e300)
    with pytest.raises(ValueError, match="z1"):
        model.learn_one(bad, 0)
    assert pickle.dumps(model) == before
