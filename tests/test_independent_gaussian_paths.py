"""The independent Gaussians' two ways of computing a record's Student t's
(onlinebma.tan.gaussian): plain Python floats for few statistics
(``tuning.NARROW_INDEPENDENT_CELLS``) against the numpy path
(:meth:`~onlinebma.stats.normal_wishart.MomentStatistics.spread` and
:meth:`~onlinebma.stats.normal_wishart.MomentStatistics.log_predictive`), on the same
statistics after every record of streams with forgetting, a third class arriving
mid-stream, missing values (one feature, all of them), a constant feature and values far
from the data. The numpy path itself is checked against the written-out definition in
tests/test_tan_independent_gaussians.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from onlinebma import tuning
from onlinebma.stats.normal_wishart import MomentStatistics
from onlinebma.tan.gaussian import GAUSSIAN, INDEPENDENT_GAUSSIANS, GaussianStatistics

PLAIN, NUMPY = 10**9, -1


def records(rng, n: int, d: int):
    """``(numeric pairs, class)``: classes 0 and 1, then 2 from record 60 on; the last
    feature constant (5.0) when there are several; a value missing one time in eight, every
    value of one record in 25; now and then a value far out."""
    for i in range(n):
        c = int(rng.integers(3 if i >= 60 else 2))
        x = rng.normal(loc=c, size=d) * (1 + c)
        if d > 1:
            x[-1] = 5.0
        if i % 17 == 3:
            x[0] = 1e6 * (-1) ** i
        x[rng.random(d) < 0.125] = np.nan
        if i % 25 == 7:
            x[:] = np.nan
        yield [(f"f{j}", float(v)) for j, v in enumerate(x) if not np.isnan(v)], c


def both_paths(g: GaussianStatistics, x, n_classes: int, monkeypatch):
    """The independent rows' densities of ``x`` by each path, on the same statistics."""
    out = {}
    for name, cells in (("plain", PLAIN), ("numpy", NUMPY)):
        monkeypatch.setattr(tuning, "NARROW_INDEPENDENT_CELLS", cells)
        out[name] = g.log_densities(x, n_classes)
    return out["plain"], out["numpy"]


@pytest.mark.parametrize("rates, d", [((1.0, 0.9), 3), ((0.95,), 1), ((1.0, 0.99, 0.8), 6)])
def test_plain_floats_equal_the_numpy_path_after_every_record(rates, d, monkeypatch):
    rng = np.random.default_rng(7)
    kinds = (GAUSSIAN,) + (INDEPENDENT_GAUSSIANS,) * len(rates)
    g = GaussianStatistics((rates[0],) + rates, kinds)
    checked = 0
    for numeric, c in records(rng, 150, d):
        n_classes = 3 if checked >= 60 else 2
        x = g.vector(numeric)
        if x is not None:
            plain, numpy_path = both_paths(g, x, n_classes, monkeypatch)
            assert plain.shape == numpy_path.shape == (len(kinds), n_classes)
            np.testing.assert_allclose(plain, numpy_path, rtol=1e-12, atol=1e-12)
        g.learn(numeric, c, max(n_classes, c + 1))
        checked += 1
    assert g.independent_statistics.shape == (len(rates), 3)


def test_each_threshold_takes_its_path(monkeypatch):
    """The comparison above compares two paths: with the threshold high the numpy
    predictive is never called, with it low it is."""
    rng = np.random.default_rng(1)
    g = GaussianStatistics((0.9,), (INDEPENDENT_GAUSSIANS,))
    for numeric, c in records(rng, 30, 3):
        g.learn(numeric, c, 2)
    x = g.vector([("f0", 0.5), ("f1", -0.3), ("f2", 5.0)])
    calls = []
    original = MomentStatistics.log_predictive

    def spy(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(MomentStatistics, "log_predictive", spy)
    monkeypatch.setattr(tuning, "NARROW_INDEPENDENT_CELLS", PLAIN)
    g.log_densities(x, 2)
    assert calls == []
    monkeypatch.setattr(tuning, "NARROW_INDEPENDENT_CELLS", NUMPY)
    g.log_densities(x, 2)
    assert calls == [1]


def test_spread_is_the_pooled_statistics_spread():
    """MomentStatistics.spread against the pooled statistics it summarises (1 where they
    have no weight or no scatter)."""
    rng = np.random.default_rng(3)
    s = MomentStatistics(3, shape=(2, 4), decay=np.array([[1.0], [0.9]]))
    for _ in range(40):
        x = rng.normal(size=3)
        x[2] = 1.5  # constant: no scatter
        w = np.zeros((2, 4))
        w[:, rng.integers(3)] = 1.0  # class slot 3 never learns
        s.add(x, w)
    pooled = s.pooled(1)
    expected = np.sqrt(pooled.scatter / pooled.n)
    expected[..., 2] = 1.0
    np.testing.assert_allclose(s.spread(1), expected, rtol=1e-13)
    assert np.all(MomentStatistics(2, shape=(3,)).spread(0) == 1.0)  # no weight


@pytest.mark.parametrize("shape, decay", [((), 1.0), ((2, 3), [[1.0], [0.9]]), ((4,), 0.97)])
def test_moment_update_in_plain_floats_is_the_numpy_update(shape, decay, monkeypatch):
    """MomentStatistics.add in plain floats and by numpy, the same records (one-hot and
    fractional weights, weights of 0, missing values, a constant feature, far values) into
    two copies: the same arithmetic, so the same numbers exactly, after every record."""
    rng = np.random.default_rng(5)
    plain, numpy_path = MomentStatistics(3, shape, decay), MomentStatistics(3, shape, decay)
    for i in range(120):
        x = rng.normal(size=3)
        x[2] = -2.0
        if i % 13 == 5:
            x[0] = -1e8
        x[rng.random(3) < 0.2] = np.nan
        w = rng.random(shape) * (rng.random(shape) < 0.6)
        for stats, cells in ((plain, PLAIN), (numpy_path, NUMPY)):
            monkeypatch.setattr(tuning, "NARROW_MOMENT_UPDATE_CELLS", cells)
            stats.add(x, w)
        for a, b in zip(plain.state, numpy_path.state):
            assert a.shape == b.shape
            np.testing.assert_array_equal(a, b)
    assert plain.n.max() > 1  # records were learned
