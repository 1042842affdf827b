"""One route chooser for a record's tree sum (tan.record_sums.choose_route): it follows the
crossovers of onlinebma.tuning, and every route it can take sums the same graphs as the
log-path elimination."""

import numpy as np
import pytest

from onlinebma import tuning
from onlinebma.stats.spanning import log_tree_sum
from onlinebma.tan import record_sums
from onlinebma.tan.record_sums import RecordTreeSums, choose_route, takes_narrow_terms


def test_the_route_follows_the_crossovers(monkeypatch):
    assert choose_route(3, tuning.TINY_ARRAY_GRAPHS, True) == "closed stack"
    assert choose_route(3, tuning.TINY_ARRAY_GRAPHS - 1, True) == "python"
    g = tuning.BASIS_NODES
    assert choose_route(g, 1, False) == "basis"  # g^3 > BASIS_WORK
    assert choose_route(g + 1, 1, False) == "elimination"
    monkeypatch.setattr(tuning, "BASIS_WORK", 10 ** 9)
    assert choose_route(g + 1, 1, False) == "python"
    monkeypatch.setattr(tuning, "NARROW_CELLS", 5)
    assert takes_narrow_terms(5) and not takes_narrow_terms(6)


def _forced(monkeypatch, route):
    """Crossovers under which every stack of 4-6 features takes ``route``."""
    settings = {"closed stack": {}, "python": {"BASIS_WORK": 10 ** 9},
                "basis": {"BASIS_WORK": -1, "BASIS_NODES": 100},
                "elimination": {"BASIS_WORK": -1, "BASIS_NODES": 0}}[route]
    for name, value in settings.items():
        monkeypatch.setattr(tuning, name, value)


@pytest.mark.parametrize("forests", [True, False])
@pytest.mark.parametrize("route", ["python", "basis", "elimination"])
def test_every_route_sums_like_the_log_path(monkeypatch, route, forests):
    _forced(monkeypatch, route)
    taken = []
    choose = record_sums.choose_route
    monkeypatch.setattr(record_sums, "choose_route",
                        lambda *a: taken.append(choose(*a)) or taken[-1])
    rng = np.random.default_rng(7 + forests)
    for m in (4, 5, 6):
        p = m * (m - 1) // 2
        sums = RecordTreeSums(forests, -0.5)
        l_pairs = rng.normal(0.0, 2.0, p)
        log_q = rng.normal(0.0, 1.0, (5, p))
        got = sums(bytes([m]), m, l_pairs, log_q, t=100)
        want = log_tree_sum(sums.graphs(m, l_pairs, log_q), path="log")
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    assert set(taken) == {route}


def test_the_closed_stack_sums_like_the_log_path(monkeypatch):
    _forced(monkeypatch, "closed stack")
    rng = np.random.default_rng(3)
    for forests in (True, False):
        for m in (2, 3):
            sums = RecordTreeSums(forests, 0.0)
            p = m * (m - 1) // 2
            log_q = rng.normal(0.0, 3.0, (tuning.TINY_ARRAY_GRAPHS + 2, p))
            assert choose_route(m, len(log_q), forests) == "closed stack"
            got = sums(b"x", m, np.zeros(p), log_q, t=1)
            want = log_tree_sum(sums.graphs(m, np.zeros(p), log_q), path="log")
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)

