"""The speed caches of the tree-augmented learners stay bounded on streams whose records each
miss another set of features (a cache keyed by the set of observed features would otherwise
grow with the stream). The caches are private derived state with no public view, so these
tests read them; what they bound is memory, and predictions do not depend on them (the
exactness tests run with and without hits)."""

import pickle

import numpy as np
import pytest

from onlinebma import tuning
from onlinebma.tan import ModelAveragedTAN


def _varied(model, n=400, features=12, seed=1):
    """``n`` records, each feature present with probability 0.7: nearly every record
    observes another set of features."""
    rng = np.random.default_rng(seed)
    for t in range(n):
        x = {f"f{j}": f"v{int(rng.integers(3))}" for j in range(features) if rng.random() < 0.7}
        model.predict_proba_one(x)
        model.learn_one(x, f"y{t % 2}")
    return model


@pytest.mark.parametrize("decay", [1.0, "auto"])
def test_caches_keyed_by_observed_features_stay_bounded(decay, monkeypatch):
    # small budgets, so that 400 records of ~300 distinct sets pass them several times
    monkeypatch.setattr(tuning, "PAIR_PLAN_CELLS", 1 << 14)
    monkeypatch.setattr(tuning, "TREE_PLAN_CELLS", 1 << 12)
    monkeypatch.setattr(tuning, "TREE_BASES", 16)
    monkeypatch.setattr(tuning, "FLAT_CELLS", 1 << 12)
    model = _varied(ModelAveragedTAN(aode=False, decay=decay, numeric=("8 intervals", "Gaussian")))
    state = model._state
    plans = state.counts._plans
    assert 0 < plans.size.weight <= 1 << 14
    assert plans.size.weight == sum(sum(a.size for a in plans.get(key) if a is not None)
                                    for key in plans)
    tree = state._tree
    assert 0 < tree.plans.size.weight <= 1 << 12
    assert 0 < tree.sums.bases.size.entries <= 16
    assert sum(flat.size for flat in state._flat.values()) <= 2 * (1 << 12)


def test_bounded_caches_predict_the_same():
    """The budgets change what is kept, not what is predicted."""
    small = ModelAveragedTAN(aode=False, decay="auto")
    big = pickle.loads(pickle.dumps(small))
    rng = np.random.default_rng(3)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tuning, "PAIR_PLAN_CELLS", 1 << 10)
        patch.setattr(tuning, "TREE_PLAN_CELLS", 1 << 8)
        patch.setattr(tuning, "TREE_BASES", 2)
        patch.setattr(tuning, "FLAT_CELLS", 1 << 8)
        small = _varied(small, n=150, seed=3)
    big = _varied(big, n=150, seed=3)
    for _ in range(20):
        x = {f"f{j}": f"v{int(rng.integers(3))}" for j in range(12) if rng.random() < 0.7}
        p, q = small.predict_proba_one(x), big.predict_proba_one(x)
        assert p.keys() == q.keys()
        for c in p:
            assert p[c] == pytest.approx(q[c], rel=1e-9, abs=1e-12)


def test_class_rows_of_auto_keep_one_layout():
    """decay="auto" keeps the flat starts of each class's member rows per width of the count
    table; a stream with a new value in every record widens the table every record, so only
    the current width's entries may be kept (at most one per class)."""
    model = ModelAveragedTAN(aode=False, decay="auto")
    for t in range(300):
        x = {"id": f"v{t}", "a": f"w{t % 3}"}
        model.predict_proba_one(x)
        model.learn_one(x, f"y{t % 2}")
    assert len(model.counts._starts) <= 2


def _count_puts(cache, monkeypatch) -> list:
    """Spy on one cache's insertions: the list of keys put, in order."""
    keys = []
    put = cache.put
    monkeypatch.setattr(cache, "put", lambda key, value: keys.append(key) or put(key, value))
    return keys


def test_the_caches_of_a_set_of_features_live_as_long_as_what_they_read(monkeypatch):
    """Why the column plans and the tree plans of a set of observed features are two caches
    (docs/architecture.md, *Caches*): on a stream with a new value in every record the counts'
    version moves at every record, their layout only when a capacity doubles. The column plans
    read the layout and survive the new values; the priors read the domains and do not. One
    cache following the version would build the column plans at every record."""
    model = ModelAveragedTAN(aode=False, decay=1.0, numeric=("8 intervals", "Gaussian"))
    model.learn_one({"id": "v", "a": "w"}, "y0")  # the state exists from the first record
    state = model._state
    column_plans = _count_puts(state.counts._plans, monkeypatch)
    tree_plans = _count_puts(state._tree.plans, monkeypatch)
    n = 256
    versions = set()
    for t in range(n):
        x = {"id": f"v{t}", "a": f"w{t % 3}"}
        model.predict_proba_one(x)
        model.learn_one(x, f"y{t % 2}")
        versions.add(state.counts.version)
    assert len(versions) >= n  # a new value every record
    both = np.array([0, 1]).tobytes()  # the set {id, a} (a prediction reads {a} only)
    # built again at the doublings of id's domain only, against at every new value
    assert column_plans.count(both) <= n.bit_length() + 2
    assert tree_plans.count(both) >= n
