"""Candidate parents chosen given the class: the gains against the score tables, their
padding and partition invariance, and the Dask counts plan choosing them first on a
60-feature frame (tables of the candidate families only, the one-machine fit)."""

from __future__ import annotations

import itertools
import math

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from onlinebma import distributed
from onlinebma.order_mcmc import FixedOrderBMA, OrderMCMC
from onlinebma.order_mcmc.candidates import (
    choose_candidates,
    class_gains,
    class_pair_counts,
)
from onlinebma.order_mcmc.distributed_counts import count_tables
from onlinebma.order_mcmc.incremental import StreamingScores
from onlinebma.order_mcmc.scores import ScoreTables


def test_class_gains_are_differences_of_the_score_tables():
    rng = np.random.default_rng(0)
    rows = rng.integers(-1, 3, (90, 5))
    rows[:, 4] = rng.integers(0, 3, 90)  # the class: never missing
    rows[:, 1] = np.where(rng.random(90) < 0.8, rows[:, 0], rows[:, 1])
    cards = rows.max(axis=0) + 1
    tables = ScoreTables(rows, cards, max_parents=2, prune_tol=0)
    n, c = 5, 4
    prior = [-math.log(n) - math.log(math.comb(n, z)) for z in range(3)]

    def score(i, parents):  # log S(X_i; Z) without the prior of eq. 13
        par = [sorted(p[p < n].tolist()) for p in tables.parents[i]]
        return tables.log_score[i][par.index(sorted(parents))] - prior[len(parents)]

    gains = class_gains(class_pair_counts(rows, c))
    for i, j in itertools.permutations(range(n), 2):
        if i == c:
            expected = score(i, [j]) - score(i, [])
        elif j == c:
            expected = 0.0
        else:
            expected = score(i, [j, c]) - score(i, [c])
        assert gains[i, j] == pytest.approx(expected, abs=1e-9), (i, j)
    assert np.isneginf(np.diag(gains)).all()


def test_class_gains_do_not_depend_on_padding_or_on_partitions():
    rng = np.random.default_rng(1)
    rows = rng.integers(-1, 4, (150, 6))
    rows[:, 5] = rng.integers(0, 3, 150)
    whole = class_pair_counts(rows, 5)
    padded = class_pair_counts(rows, 5, cards=[6, 5, 7, 4, 9, 4])
    parts = class_pair_counts(rows[:40], 5, [6, 5, 7, 4, 9, 4]) + \
        class_pair_counts(rows[40:41], 5, [6, 5, 7, 4, 9, 4]) + \
        class_pair_counts(rows[41:], 5, [6, 5, 7, 4, 9, 4])
    assert parts.n_records == 150
    np.testing.assert_array_equal(class_gains(padded), class_gains(whole))
    np.testing.assert_array_equal(class_gains(parts), class_gains(whole))
    for k in (1, 2, 3):
        for order in (None, [5, 0, 1, 2, 3, 4], [2, 0, 5, 1, 4, 3]):
            a = choose_candidates(rows, k, class_node=5, order=order)
            b = choose_candidates(np.zeros((0, 6)), k, class_node=5, order=order, tables=parts)
            assert (a is None and b is None) or all(map(np.array_equal, a, b))


def test_the_class_is_a_candidate_and_widening_only_adds_candidates():
    rng = np.random.default_rng(2)
    rows = rng.integers(0, 3, (100, 9))
    previous = None
    for k in range(1, 8):
        cands = choose_candidates(rows, k, class_node=8)
        assert all(8 in c for c in cands[:8])
        assert all(len(c) == k for c in cands)
        if previous is not None:
            assert all(set(p) <= set(c) for p, c in zip(previous, cands))
        previous = cands
    assert choose_candidates(rows, 8, class_node=8) is None


def _wide(n_records=240, n_features=60, seed=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n_records)
    cols = {}
    for f in range(n_features):
        noisy = np.where(rng.random(n_records) < 0.3, rng.integers(0, 3, n_records), y)
        cols[f"f{f:02d}"] = np.array(["a", "b", "c"])[noisy]
    X = pd.DataFrame(cols)
    X.iloc[rng.integers(0, n_records, 30), rng.integers(0, n_features, 30)] = None
    return X, pd.Series(np.array(["u", "v", "w"])[y])


@pytest.mark.slow
@pytest.mark.parametrize("make", [lambda: FixedOrderBMA(max_parents=2),
                                  lambda: OrderMCMC(max_parents=2, n_orders=2, burn_in=20,
                                                    n_iter=60, seed=4)])
def test_dask_chooses_candidates_first_on_a_wide_frame(make):
    X, y = _wide()
    ddf = dd.from_pandas(X.assign(label=y), npartitions=3, sort=False)
    with dask.config.set(scheduler="synchronous"):
        _, scores = count_tables(make(), ddf, "label", 2)
        got = distributed.fit(make(), ddf, target="label", split_every=2)
    one = make().fit(X, y)
    # The tables hold the candidate families only: 10 candidates, at most 2 parents.
    assert all(len(c) <= 10 for c in scores.candidate_parents)
    assert max(len(p) for p in scores.parents) <= 1 + 10 + 45
    full = sum(len(p) for p in StreamingScores(61, 2).parents)  # every parent set
    assert sum(len(p) for p in scores.parents) * 20 < full
    assert got.orders_ == one.orders_
    np.testing.assert_allclose(got.predict_proba(X).to_numpy(), one.predict_proba(X).to_numpy(),
                               rtol=0, atol=1e-9)
