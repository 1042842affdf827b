"""The wide-record path of nominal features (onlinebma.naive_bayes.wide_nominal) computes what
the plain path computes.

As in ``tests/test_nb_wide.py``: the same stream through a learner forced the plain way and one
taking the array path wherever it can (the shipped thresholds, or forced at every width),
predictions and structure posteriors compared to 1e-12 after every record, the tables after.
"""

import contextlib
import copy
import functools
import pickle
import random

import numpy as np
import pytest

from onlinebma import tuning
from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes, wide_nominal
from tests.test_nb_wide import (
    _after_learn_many,
    _array_always,
    _assert_same,
    _plain,
    _reordered,
    _run,
)

LEARNERS = [(NaiveBayes, {}), (BMANB, {}), (BMANB, {"gamma": 1.3, "alpha": 0.5}),
            (ModelAveragedNB, {}), (ModelAveragedNB, {"alpha": 0.3, "inclusion_prior": 0.2})]
IDS = ["NaiveBayes", "BMANB", "BMANB-gamma", "ModelAveragedNB", "ModelAveragedNB-alpha"]

WIDTH = tuning.NOMINAL_CELLS // 2  # wide from the first class on

_nominal_plain = functools.partial(_plain, "nominal")
_nominal_always = functools.partial(_array_always, "nominal")


def _stream(n, n_features, n_classes, seed, missing=0.0, numeric=0, new_features_at=None):
    """Nominal records whose values follow the class; classes, values and (from
    ``new_features_at``) features keep arriving; some values missing or never seen."""
    rng = random.Random(seed)
    for i in range(n):
        y = rng.randrange(min(n_classes, 1 + i // 7))
        x = {f"c{j}": f"v{(y + j) % 4 if rng.random() < 0.4 else rng.randrange(2 + i // 15)}"
             for j in range(n_features) if rng.random() >= missing}
        for j in range(numeric):
            x[f"z{j}"] = rng.gauss(y, 1.0)
        if new_features_at is not None and i >= new_features_at:
            x[f"late{i % 3}"] = rng.choice("ab")
        if missing and rng.random() < 0.2:
            x["c0"] = None
        yield x, y


def _array_path_used(model) -> bool:
    """Whether ``model``'s block followed its last record (no public view: the block is
    derived state of the path, current for the learner's count of records)."""
    block = model._wide_nominals.block
    return block is not None and block.t == model._t


def _run_nominal(learner, params, stream, wide_path=contextlib.nullcontext):
    """``tests/test_nb_wide.py``'s twins, on the nominal path's thresholds."""
    return _run(learner, stream, wide_path=wide_path, plain_path=_nominal_plain, **params)


def _assert_block_is_tables(model):
    """The block followed record by record equals one rebuilt from the tables."""
    block = model._wide_nominals.block
    fresh = wide_nominal.NominalBlock(model._tables, block.classes, model._t)
    assert block.slots.keys() == fresh.slots.keys() and block.rows.keys() == fresh.rows.keys()
    mine, theirs = list(block.slots.values()), [fresh.slots[p] for p in block.slots]
    np.testing.assert_array_equal(block.n_value[mine], fresh.n_value[theirs])
    np.testing.assert_array_equal(block.joint[:, mine], fresh.joint[:, theirs])
    rows = [fresh.rows[f] for f in block.rows]
    np.testing.assert_array_equal(fresh.slot_row[theirs], np.array(rows)[block.slot_row[mine]])
    mine = list(block.rows.values())
    for name in ("n", "r", "n_class"):
        np.testing.assert_array_equal(getattr(block, name)[..., mine],
                                      getattr(fresh, name)[..., rows])


@pytest.mark.parametrize(("learner", "params"), LEARNERS, ids=IDS)
def test_nominal_equal_to_plain(learner, params):
    plain, other = _run_nominal(learner, params, _stream(80, WIDTH + 9, 3, seed=1))
    assert _array_path_used(other)  # the shipped thresholds chose the array path
    _assert_block_is_tables(other)
    _assert_marginals_exact(plain, other)


def _assert_marginals_exact(plain, other):
    """ModelAveragedNB's marginal likelihoods learned the array way are the plain path's to
    1e-13 relative (no public view: the learner's ``_marginals.log_ml``). Its predictive
    terms are the plain path's floats bit for bit; a domain's growth sums its classes in
    another order."""
    if isinstance(plain, ModelAveragedNB):
        assert plain._marginals.log_ml.keys() == other._marginals.log_ml.keys()
        for f, log_ml in plain._marginals.log_ml.items():
            assert other._marginals.log_ml[f] == pytest.approx(log_ml, rel=1e-13, abs=0)


@pytest.mark.parametrize(("learner", "params"), LEARNERS, ids=IDS)
def test_forced_array_path_at_every_width(learner, params):
    """Narrow records too, with missing values, numeric features, new classes, values and
    features mid-stream."""
    for width in (1, 3, 8):
        _, other = _run_nominal(learner, params, _stream(60, width, 3, seed=10 + width, missing=0.1,
                                                 numeric=2, new_features_at=40),
                        wide_path=_nominal_always)
        assert _array_path_used(other)
        _assert_block_is_tables(other)


@pytest.mark.parametrize(("learner", "params"), LEARNERS, ids=IDS)
def test_narrow_records_go_the_plain_way(learner, params):
    narrow = min(tuning.NOMINAL_CELLS, tuning.BMANB_NOMINAL_CELLS) // 3 - 1
    _, other = _run_nominal(learner, params, _stream(20, narrow, 2, seed=7))
    assert other._wide_nominals.block is None  # no public view: derived state


def test_bmanb_goes_the_array_way_from_fewer_cells():
    """Between the two thresholds (2 classes: 3 cells a feature) BMANB's records go the
    array way, equal to its plain path, and the other learners' the plain way."""
    width = (tuning.BMANB_NOMINAL_CELLS + tuning.NOMINAL_CELLS) // 6
    for learner in (BMANB, NaiveBayes, ModelAveragedNB):
        plain, other = _run_nominal(learner, {}, _stream(40, width, 2, seed=5))
        assert _array_path_used(other) == (learner is BMANB)


@pytest.mark.parametrize(("learner", "params"), LEARNERS, ids=IDS)
def test_unseen_values_subsets_and_orders(learner, params):
    """Records in other key orders, with some features left out, and predictions of records
    whose values (or all of them) were never seen."""
    plain, other = _run_nominal(learner, params, _reordered(_stream(50, WIDTH + 6, 2, seed=3)))
    _assert_marginals_exact(plain, other)
    for x in ({f"c{j}": "never" for j in range(WIDTH + 6)},
              {**{f"c{j}": "never" for j in range(WIDTH)}, "c1": "v1", "c2": "v2"},
              {f"new{j}": "v1" for j in range(WIDTH)}):
        with _nominal_plain():
            p = plain.predict_proba_one(x)
        _assert_same(p, other.predict_proba_one(x))


@pytest.mark.parametrize(("learner", "params"), LEARNERS, ids=IDS)
def test_after_learn_many_copy_and_pickle(learner, params):
    other = _after_learn_many(learner, list(_stream(60, WIDTH + 2, 3, seed=4)),
                              copied=lambda m: pickle.loads(pickle.dumps(copy.deepcopy(m))),
                              plain_path=_nominal_plain, **params)
    assert _array_path_used(other)
    _assert_block_is_tables(other)


@pytest.mark.parametrize(("learner", "params"), [
    (NaiveBayes, {"decay": 0.95}), (BMANB, {"decay": 0.9}),
    (ModelAveragedNB, {"prior": "BDeu", "ess": 2.0}),
    (ModelAveragedNB, {"structure_decay": 0.9})])
def test_forgetting_and_bdeu_go_the_plain_way(learner, params):
    _, other = _run_nominal(learner, params, _stream(40, WIDTH + 1, 2, seed=5))
    assert other._wide_nominals.block is None  # no public view: derived state


def test_refused_record_changes_nothing():
    model = ModelAveragedNB()
    records = list(_stream(20, WIDTH, 2, seed=6))
    for x, y in records:
        model.predict_proba_one(x)
        model.learn_one(x, y)
    assert _array_path_used(model)
    before = pickle.dumps(model)
    with pytest.raises(TypeError, match="c1"):
        model.learn_one(dict(records[0][0], c1=[1]), 0)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize(("learner", "params"), LEARNERS, ids=IDS)
def test_new_class_grows_the_block(learner, params):
    """A class first seen adds a row of zeros to the block, which stays current (a rebuild
    costs a Python pass over every slot and class), and equal to the tables."""
    records = list(_stream(40, WIDTH, 6, seed=8))
    model = learner(**params)
    blocks = []  # kept alive: distinct blocks are distinct objects
    for x, y in records:
        model.predict_proba_one(x)
        model.learn_one(x, y)
        block = model._wide_nominals.block
        if block is not None and not any(b is block for b in blocks):
            blocks.append(block)
    assert len(model._class_counts) == 6 and _array_path_used(model)
    assert len(blocks) == 1  # built once, at the first wide prediction
    _assert_block_is_tables(model)
