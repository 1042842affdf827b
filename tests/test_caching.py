"""The bounded cache of onlinebma.caching: eviction by weight, versions, empty pickles, the
size it reports, and a budget named in onlinebma.tuning followed at run time."""

import copy
import pickle

import numpy as np
import pytest

from onlinebma import tuning
from onlinebma.caching import BoundedCache, CacheSize, array_cells


def test_the_oldest_entries_make_room_by_weight():
    cache = BoundedCache(budget=10, weigh="cells")
    cache.put("a", np.zeros(4))
    cache.put("b", np.zeros(5))
    assert cache.size == CacheSize(entries=2, weight=9)
    cache.put("c", np.zeros(3))  # 12 > 10: "a" (the oldest) goes, 8 left
    assert "a" not in cache and "b" in cache and "c" in cache
    assert cache.size == CacheSize(entries=2, weight=8)
    cache.put("d", np.zeros(9))  # both others go
    assert list(cache) == ["d"] and cache.size.weight == 9


def test_an_entry_heavier_than_the_budget_is_returned_but_not_kept():
    cache = BoundedCache(budget=3, weigh="cells")
    cache.put("a", np.zeros(2))
    value = np.zeros(4)
    assert cache.put("big", value) is value
    assert "big" not in cache and cache.size == CacheSize(1, 2)


def test_putting_a_key_again_replaces_its_weight():
    cache = BoundedCache(budget=10, weigh="cells")
    cache.put("a", np.zeros(6))
    cache.put("a", np.zeros(2))
    assert cache.size == CacheSize(1, 2)
    assert cache.get("a").size == 2


def test_tuples_with_none_weigh_their_arrays():
    assert array_cells((np.zeros((2, 3)), None, np.zeros(1))) == 7


def test_entries_follow_their_owners_version():
    cache = BoundedCache(budget=5)
    assert cache.follow(1) is True  # the first version seen
    cache.put("a", 1.0)
    assert cache.follow(1) is False and cache.get("a") == 1.0
    assert cache.follow(2) is True and cache.get("a") is None and len(cache) == 0
    cache.put("b", 2.0)
    cache.clear()  # forgets the version too
    assert cache.follow(2) is True


@pytest.mark.parametrize("clone", [lambda c: pickle.loads(pickle.dumps(c)), copy.deepcopy,
                                   copy.copy])
def test_a_pickle_or_a_copy_is_empty_and_keeps_the_budget(clone):
    cache = BoundedCache(budget="PAIR_PLAN_CELLS", weigh="cells")
    cache.follow(3)
    cache.put("a", np.zeros(3))
    other = clone(cache)
    assert other.size == CacheSize(0, 0) and other.version is None
    assert other.budget == "PAIR_PLAN_CELLS" and other.weigh == "cells"
    assert cache.size == CacheSize(1, 3)  # the original keeps its entries
    other.put("b", np.zeros(2))
    assert "b" not in cache


def test_a_named_budget_is_read_at_every_insertion(monkeypatch):
    cache = BoundedCache(budget="TREE_BASES")
    assert cache.limit == tuning.TREE_BASES
    monkeypatch.setattr(tuning, "TREE_BASES", 2)
    for key in range(5):
        cache.put(key, key)
    assert list(cache) == [3, 4] and cache.limit == 2


def test_an_unknown_budget_name_is_refused():
    with pytest.raises(ValueError, match="NO_SUCH_BUDGET"):
        BoundedCache(budget="NO_SUCH_BUDGET")


def test_an_unknown_weighing_is_refused():
    with pytest.raises(ValueError, match="weigh"):
        BoundedCache(budget=3, weigh=len)
