"""The scaled clock of forgetting (onlinebma.forgetting.ScaledClock) against plain powers."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from onlinebma.forgetting import ScaledClock, renormalisation_step
from onlinebma.stats.numerics import RENORMALISE_ABOVE


@pytest.mark.parametrize("rate", [0.5, 0.9, 0.95, 0.99, 0.999, 0.9999, 1 - 1e-7])
def test_the_renormalisation_step_is_the_first_power_past_the_threshold(rate):
    k = renormalisation_step(rate)
    assert rate ** -k > RENORMALISE_ABOVE >= rate ** -(k - 1)


@pytest.mark.parametrize("rates", [0.7, (1.0, 0.9, 0.7), (0.95, 0.5)])
def test_a_statistic_kept_in_the_scaled_unit_decays_as_plain_powers(rates):
    """One record per tick, added with weight ``unit``, every statistic times the returned
    factors: the statistic in records (times ``scale``) is ``sum_a rate^a`` over the ages,
    as a sum of plain powers computes it."""
    clock = ScaledClock(rates)
    lam = np.asarray(rates, dtype=float)
    stored = np.zeros_like(lam)
    for n in range(1, 400):
        stored = stored + clock.unit
        factors = clock.tick()
        if factors is not None:
            stored = stored * factors
            assert clock.k == 0 and np.all(clock.unit == 1)
        clock = pickle.loads(pickle.dumps(clock)) if n % 97 == 0 else clock  # state survives
        brute = np.array([sum(r ** a for a in range(1, n + 1)) for r in np.atleast_1d(lam)])
        np.testing.assert_allclose(np.atleast_1d(stored * clock.scale), brute, rtol=1e-12)


def test_a_rate_of_one_never_renormalises_and_starts_with_ints():
    clock = ScaledClock(1)
    assert type(clock.unit) is int and type(clock.scale) is int  # a learner that never ticks
    assert [clock.tick() for _ in range(1000)] == [None] * 1000
    assert clock.unit == 1 and math.isinf(clock.k_limit)
