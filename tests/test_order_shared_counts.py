"""Count tables shared between families: every variable set is counted once, and the scores
read from the shared tables equal those of tables counted family by family."""

from __future__ import annotations

import math

import numpy as np
import pytest

from onlinebma import tuning
from onlinebma.order_mcmc.incremental import StreamingScores
from onlinebma.order_mcmc.scores import ScoreTables


def _rows(m, n, seed, missing):
    rng = np.random.default_rng(seed)
    rows = np.column_stack([rng.integers(0, 2 + j % 3, m) for j in range(n)])
    rows[:, 1] = (rows[:, 0] + rng.integers(0, 2, m)) % 2  # some dependence
    rows[rng.random(rows.shape) < missing] = -1
    rows[:, -1] = np.where(rows[:, -1] < 0, 0, rows[:, -1])  # the class: always observed
    rows[0] = np.arange(n) % 2  # every value observed: the stream's r_i equal the cards
    return rows


@pytest.mark.parametrize("missing", [0.0, 0.15])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_shared_tables_score_as_tables_counted_family_by_family(missing, k, monkeypatch):
    monkeypatch.setattr(tuning, "RESCORE_CHUNK", 7)  # rescored from the counts 7 at a time
    n = 6
    rows = _rows(150, n, 7 * k, missing)
    shared = StreamingScores(n, k, 0.7)
    for row in rows[:40]:  # record by record, a rebuild-sized batch, then a window's removals
        shared.add(row)
    shared.add_many(rows[40:])
    for row in rows[:20]:
        shared.remove(row)
    kept = rows[20:]
    cards = np.maximum(kept.max(axis=0) + 1, 1)
    assert (shared.cards() == cards).all()
    unshared = ScoreTables(kept, cards, k, 0.7, prune_tol=0)  # per family, from the records
    for i in range(n):
        want = {tuple(p): s for p, s in zip(unshared.parents[i].tolist(), unshared.log_score[i])}
        got = shared.log_score(i)
        assert len(got) == len(want)
        for par, score in zip(shared.parents[i].tolist(), got):
            assert score == pytest.approx(want[tuple(par)], rel=1e-12, abs=1e-12)
    # one table per variable set {i} ∪ Z and Z, against one cell and one configuration
    # table per family when unshared
    sets = {frozenset(int(v) for v in par if v < n) | extra
            for i, par in zip(shared.family_nodes, shared.family_parents)
            for extra in (frozenset(), frozenset([int(i)]))}
    assert shared.n_tables == len(sets)
    assert shared.n_tables == sum(math.comb(n, z) for z in range(k + 2))  # every set of ≤ k + 1
    assert shared.n_tables < len(shared.family_nodes)  # fewer than half the unshared tables
