"""RecordTreeSums.python_sums: a record's few small graphs straight from their edge lists,
in shifted linear floats while the spread of the log weights allows
(:func:`onlinebma.stats.elimination.python_float_nats`), else on the log path; both equal
the log-space elimination of the graph matrices."""

from __future__ import annotations

import numpy as np
import pytest

import onlinebma.tan.record_sums as rs
from onlinebma.stats.elimination import python_float_nats
from onlinebma.stats.spanning import log_tree_sum


def sums_and_calls(monkeypatch, forests, m, edges):
    calls = []
    plain = rs.log_tree_sums_python

    def spy(graphs):
        calls.append(len(graphs))
        return plain(graphs)

    monkeypatch.setattr(rs, "log_tree_sums_python", spy)
    sums = rs.RecordTreeSums(forests, 0.0)
    return sums.python_sums(m, edges.tolist()), calls


@pytest.mark.parametrize("forests", [True, False])
@pytest.mark.parametrize("m", [4, 6, 9])
def test_shifted_floats_equal_the_log_path(monkeypatch, forests, m):
    rng = np.random.default_rng(m)
    p = m * (m - 1) // 2
    edges = rng.uniform(-300.0, 300.0, (3, p))  # 600 nats: within the float range
    assert (edges.max(axis=1) - np.minimum(edges.min(axis=1), 0.0)
            <= python_float_nats(m + forests)).all()
    got, calls = sums_and_calls(monkeypatch, forests, m, edges)
    assert calls == []  # no graph on the log path
    sums = rs.RecordTreeSums(forests, 0.0)
    want = log_tree_sum(sums.graphs(m, edges, 0.0), path="log")
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("forests", [True, False])
def test_a_spread_beyond_floats_takes_the_log_path(monkeypatch, forests):
    """A strong pair at +900 nats and weak ones at -200: 1,100 nats, beyond a float's
    range. That graph goes to the log path (the other stays in floats), and both equal
    the log-space elimination; in shifted floats its weak edges would underflow to 0."""
    m = 5
    p = m * (m - 1) // 2
    rng = np.random.default_rng(1)
    edges = rng.uniform(-5.0, 5.0, (2, p))
    edges[1] = -200.0 + rng.uniform(-1.0, 1.0, p)
    edges[1, 0] = 900.0
    assert edges[1].max() - edges[1].min() > python_float_nats(m + forests)
    got, calls = sums_and_calls(monkeypatch, forests, m, edges)
    assert calls == [1]  # the wide graph alone
    sums = rs.RecordTreeSums(forests, 0.0)
    want = log_tree_sum(sums.graphs(m, edges, 0.0), path="log")
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)
    # without the spread check, the shifted floats: a pivot underflows to 0, or is wrong
    monkeypatch.setattr(rs, "python_float_nats", lambda g: np.inf)
    try:
        forced = rs.RecordTreeSums(forests, 0.0).python_sums(m, edges.tolist())
    except ValueError:  # log(0)
        forced = None
    assert forced is None or np.abs(forced - want).max() > 1e-9
