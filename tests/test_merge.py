"""``merge`` equals learning the concatenated stream: the batch learners (history included) and,
as a monoid on random shard trees, the naive Bayes family too."""

import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onlinebma.datasets import UCIDataset
from onlinebma.isa import ISA
from tests.support.learners import LEARNERS

#: Every batch learner of the registry, with parameters that keep a fit to a fraction of a
#: second (tests/support/learners.py).
MAKERS = {learner.name: learner.make for learner in LEARNERS if learner.batch}
#: The naive Bayes family's learners (the tree-augmented ones: tests/test_tan_*.py).
NAIVE_BAYES = [learner.cls for learner in LEARNERS
               if learner.cls.__module__.startswith("onlinebma.naive_bayes")]
#: Where the fitted model does not depend on the order of the stored records.
COMMUTATIVE = ("FixedOrderBMA", "OrderMCMC")


@pytest.fixture(scope="module")
def records():
    """Nominal and numeric features with missing values, 150 records of crx; the rows are
    grouped by class so that shards meet the labels in different orders."""
    X, y = UCIDataset("crx").to_frame()
    X, y = X[["A1", "A2", "A4", "A9", "A14"]].iloc[:150], y.iloc[:150]
    order = np.argsort(y.to_numpy().astype(bool), kind="stable")[::-1]  # "+" is True
    return X.iloc[order].reset_index(drop=True), y.iloc[order].reset_index(drop=True)


def _learned(name, X, y, **kw):
    model = MAKERS[name](**kw) if isinstance(name, str) else name(**kw)
    if len(X):
        model.learn_many(X, y)
    return model


def _assert_same(a, b, X, columns_in_order=True):
    pa, pb = a.predict_proba_many(X), b.predict_proba_many(X)
    if columns_in_order:
        assert list(pa.columns) == list(pb.columns)
    else:
        assert sorted(map(str, pa.columns)) == sorted(map(str, pb.columns))
        pa = pa.reindex(columns=pb.columns)  # bool labels would read as a mask
    np.testing.assert_allclose(pa.to_numpy(), pb.to_numpy(), rtol=0, atol=1e-9)
    if hasattr(a, "feature_posteriors"):  # the naive Bayes family
        fa, fb = a.feature_posteriors(), b.feature_posteriors()
        assert fa.keys() == fb.keys()
        for f in fa:
            assert fa[f] == pytest.approx(fb[f], abs=1e-9)
    else:
        assert a.classes_ == b.classes_ or not columns_in_order
        assert a.coding.n_learned == b.coding.n_learned


@pytest.mark.parametrize("name", MAKERS)
def test_merge_equals_learning_the_concatenation(records, name):
    X, y = records
    a, b = _learned(name, X[:60], y[:60]), _learned(name, X[60:], y[60:])
    before = pickle.dumps(a), pickle.dumps(b)
    merged = a.merge(b)
    assert (pickle.dumps(a), pickle.dumps(b)) == before  # neither learner is modified
    one = _learned(name, X, y)
    _assert_same(merged, one, X)
    assert merged.coding.classes == tuple(pd.unique(y))  # class codes in order of first arrival


@pytest.mark.parametrize("name", MAKERS)
def test_merge_continues_the_history_of_a_learner_that_has_predicted(records, name):
    """Refits, warm starts, prequential scores, streaming counts: ``self``'s history is
    continued by the other learner's records, as learning them would (its own fits are not)."""
    X, y = records
    a = _learned(name, X[:40], y[:40])
    a.predict_proba_many(X[:5])  # a fit
    a.learn_many(X[40:70], y[40:70])
    a.predict_proba_one(X.iloc[0].to_dict())
    b = _learned(name, X[70:], y[70:])
    b.predict_proba_many(X[:3])  # b's fits are not part of the concatenated stream
    one = _learned(name, X[:40], y[:40])
    one.predict_proba_many(X[:5])
    one.learn_many(X[40:70], y[40:70])
    one.predict_proba_one(X.iloc[0].to_dict())
    one.learn_many(X[70:], y[70:])
    _assert_same(a.merge(b), one, X)


@pytest.mark.parametrize("name", MAKERS)
def test_merge_respects_the_window(records, name):
    X, y = records
    a, b = _learned(name, X[:30], y[:30], window=50), _learned(name, X[30:], y[30:], window=50)
    assert b.coding.n_learned > b.data_.n  # b's window dropped records
    merged = a.merge(b)
    one = _learned(name, X, y, window=50)
    _assert_same(merged, one, X)
    assert merged.data_.n == (100 if name == "ISA" else 50)  # ISA stores 2 windows


@pytest.mark.parametrize("name", ["FixedOrderBMA", "OrderMCMC", "FAN", "FiniteMixture"])
def test_records_dropped_by_the_window_after_a_fit_are_refused(records, name):
    X, y = records
    a, b = _learned(name, X[:30], y[:30], window=50), _learned(name, X[30:], y[30:], window=50)
    a.predict_proba_many(X[:2])  # fitted: learning a record may now change its state
    before = pickle.dumps(a)
    with pytest.raises(ValueError, match="window dropped 70 record"):
        a.merge(b)
    assert pickle.dumps(a) == before


def test_a_lazy_learner_merges_dropped_records_after_a_fit(records):
    """ISA learns a record by storing it: the other learner's dropped records leave their
    trace (count, labels) and the result equals learning the concatenation."""
    X, y = records
    a, b = _learned("ISA", X[:30], y[:30], window=50), _learned("ISA", X[30:], y[30:], window=50)
    a.predict_proba_many(X[:2])
    one = _learned("ISA", X[:30], y[:30], window=50)
    one.predict_proba_many(X[:2])
    one.learn_many(X[30:], y[30:])
    _assert_same(a.merge(b), one, X)


def test_labels_and_values_seen_only_in_dropped_records_are_kept(records):
    X, y = records
    X = X.assign(extra=[None] * 149 + ["late"])
    X.loc[0, "extra"] = "early"
    y = y.astype(object)  # bool labels, and one string label beside them
    y[1] = "rare"  # a label that b's window drops
    a, b = _learned("ISA", X[:1], y[:1], window=20), _learned("ISA", X[1:], y[1:], window=20)
    merged, one = a.merge(b), _learned("ISA", X, y, window=20)
    assert merged.classes_ == one.classes_ and "rare" in merged.classes_
    # The values that hold a code, those no stored record holds too (data_ lists the values
    # present only).
    assert merged.coding.values_of("extra") == one.coding.values_of("extra")
    _assert_same(merged, one, X)


def test_bad_merges_are_refused(records):
    X, y = records
    a = _learned("ISA", X[:20], y[:20])
    with pytest.raises(TypeError, match="cannot merge ISA with FAN"):
        a.merge(_learned("FAN", X[:20], y[:20]))
    with pytest.raises(ValueError, match="different hyperparameters"):
        a.merge(ISA(alpha=2.0))
    other = ISA(phase1_models=5, max_models=10)
    other.learn_many(pd.DataFrame({"A1": [1.0, 2.0]}), pd.Series([True, False]))
    with pytest.raises(TypeError, match="feature 'A1' is nominal in one learner and numeric"):
        a.merge(other)


def test_merging_an_empty_learner_changes_nothing(records):
    X, y = records
    for name in MAKERS:
        a = _learned(name, X[:40], y[:40])
        _assert_same(a.merge(MAKERS[name]()), a, X)
        _assert_same(MAKERS[name]().merge(a), a, X)


# ------------------------------------------------------------ merges as a monoid


def _shards(X, y, cuts):
    edges = [0, *sorted(cuts), len(X)]
    return [(X[a:b], y[a:b]) for a, b in zip(edges, edges[1:])]


def _tree_merge(models, shape):
    """Merge ``models`` (kept in order) by a tree drawn from ``shape``: a list of split points."""
    if len(models) == 1:
        return models[0]
    k = 1 + shape[0] % (len(models) - 1) if shape else len(models) // 2
    return _tree_merge(models[:k], shape[1:]).merge(_tree_merge(models[k:], shape[1:]))


@settings(max_examples=30, deadline=None, derandomize=True)
@given(name=st.sampled_from(sorted(MAKERS)),
       cuts=st.lists(st.integers(1, 149), min_size=1, max_size=5, unique=True),
       shape=st.lists(st.integers(0, 100), max_size=6),
       perm_seed=st.integers(0, 2**16),
       window=st.sampled_from([None, 40]))
def test_merge_is_associative_and_commutative_where_defined(records, name, cuts, shape,
                                                            perm_seed, window):
    X, y = records
    models = [_learned(name, a, b, window=window) for a, b in _shards(X, y, cuts)]
    left = models[0]
    for m in models[1:]:
        left = left.merge(m)
    _assert_same(left, _learned(name, X, y, window=window), X)  # = the concatenation
    _assert_same(_tree_merge(models, shape), left, X)  # associative: any tree
    if name in COMMUTATIVE and window is None:
        perm = np.random.default_rng(perm_seed).permutation(len(models))
        shuffled = models[perm[0]]
        for i in perm[1:]:
            shuffled = shuffled.merge(models[i])
        _assert_same(shuffled, left, X, columns_in_order=False)  # up to the label order


@settings(max_examples=25, deadline=None, derandomize=True)
@given(learner=st.sampled_from(NAIVE_BAYES),
       cuts=st.lists(st.integers(1, 689), min_size=1, max_size=6, unique=True),
       shape=st.lists(st.integers(0, 100), max_size=8),
       perm_seed=st.integers(0, 2**16))
def test_naive_bayes_merges_are_associative_and_commutative(crx, learner, cuts, shape,
                                                           perm_seed):
    X, y = crx
    # numbers read as intervals (the default) merge once the shards cut them alike: every
    # shard starts from the cut points of the whole table (fix_numeric, as Dask's first pass)
    agreed = _learned(learner, X, y).numeric_readings
    models = []
    for a, b in _shards(X, y, cuts):
        model = learner()
        model.fix_numeric(agreed)
        model.learn_many(a, b)
        models.append(model)
    left = models[0]
    for m in models[1:]:
        left = left.merge(m)
    _assert_same(_tree_merge(models, shape), left, X)  # associative: any tree, same labels
    perm = np.random.default_rng(perm_seed).permutation(len(models))
    shuffled = models[perm[0]]
    for i in perm[1:]:
        shuffled = shuffled.merge(models[i])
    _assert_same(shuffled, left, X, columns_in_order=False)  # commutative up to label order
