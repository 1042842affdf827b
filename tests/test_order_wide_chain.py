"""The order chain's shortcuts (prefix masks, skipped unchanged nodes, keys over the candidate
parents) and the fast row unique of the order model, each against a plain recomputation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from onlinebma.order_mcmc import OrderChain, OrderModel
from onlinebma.order_mcmc.candidates import choose_candidates
from onlinebma.stats.unique import unique_rows


def _replayed_chain(model, seed, n_iter):
    """The chain of :meth:`OrderChain.run` replayed from the same draws, every step scored
    by ``model.log_evidence`` of the whole order (nothing cached, nothing skipped)."""
    rng = np.random.default_rng(seed)
    n = model.n
    order = rng.permutation(n).tolist()
    current = model.log_evidence(order)
    trace = []
    first = rng.integers(0, n, n_iter)
    second = rng.integers(0, n - 1, n_iter)
    second = np.where(second >= first, second + 1, second)
    log_u = np.log(rng.random(n_iter))
    for a, b, u in zip(first, second, log_u):
        a, b = min(a, b), max(a, b)
        proposal = list(order)
        proposal[a], proposal[b] = proposal[b], proposal[a]
        value = model.log_evidence(proposal)
        if u < value - current:
            order, current = proposal, value
        trace.append(current)
    return np.array(trace), order


@pytest.mark.parametrize("seed,k", [(0, None), (1, 2), (2, 3)])
def test_the_chain_is_the_plain_metropolis_hastings_chain(seed, k):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, (60, 7))
    codes[:, 1] = codes[:, 0]  # some structure for the chain to find
    codes[rng.random(codes.shape) < 0.1] = -1
    model = OrderModel(codes, max_parents=2, candidates=choose_candidates(codes, k,
                                                                          class_node=6))
    n_iter = 400  # under one block of draws: the replay draws as run() does
    chain = OrderChain(model, seed=seed)
    trace, _ = chain.run(n_iter, 0, 1)
    expected, order = _replayed_chain(model, seed, n_iter)
    assert chain.order == order
    np.testing.assert_allclose(trace, expected, rtol=0, atol=1e-9)
    assert math.isclose(chain.log_evidence, model.log_evidence(chain.order), abs_tol=1e-9)


def test_unique_rows_is_numpys_row_unique():
    rng = np.random.default_rng(0)
    for case in range(60):
        m, n = int(rng.integers(1, 200)), int(rng.integers(1, 90))
        rows = rng.integers(-2, int(rng.integers(1, 50)), (m, n))
        if case % 3 == 0:
            rows = rows > 0
        rows = rows[rng.integers(0, m, m)]  # repeats
        expected = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
        got = unique_rows(rows)
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1].ravel())
        np.testing.assert_array_equal(got[2], expected[2])
