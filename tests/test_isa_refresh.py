"""Phase 1 brings the stale bounds at the top of its queue up to date together
(`tuning.REFRESH_BATCH`): the same search, scores and predictions as one at a time."""

from __future__ import annotations

import random

import pytest

from onlinebma import tuning
from onlinebma.isa import ISA


def _stream(seed, n, p=7):
    rng = random.Random(seed)
    cards = [rng.randint(2, 4) for _ in range(p)]
    out = []
    for _ in range(n):
        y = rng.choice("ab")
        x = {f"f{j}": f"v{(v if rng.random() < 0.5 else ('ab'.index(y) + j) % card)}"
             for j, card in enumerate(cards) for v in [rng.randrange(card)]
             if rng.random() >= 0.1}
        out.append((x, y))
    return out


def _streamed(data, **params):
    model, preds, explained = ISA(phase1_models=12, max_models=40, **params), [], []
    for i, (x, y) in enumerate(data):
        preds.append(model.predict_proba_one(x))
        if i % 15 == 14:
            explained.append(model.explain_one(x))
        model.learn_one(x, y)
    return model, preds, explained


@pytest.mark.parametrize("antecedent", ["full", "indicator"])
@pytest.mark.parametrize("window", [None, 25])
def test_batched_refreshes_search_as_one_at_a_time(antecedent, window, monkeypatch):
    data = _stream(3, 60)
    batched, preds, explained = _streamed(data, antecedent=antecedent, window=window)
    monkeypatch.setattr(tuning, "REFRESH_BATCH", 1)
    _, single, single_explained = _streamed(data, antecedent=antecedent, window=window)
    for a, b in zip(preds, single):
        assert a.keys() == b.keys() and a == pytest.approx(b, abs=1e-12)
    for a, b in zip(explained, single_explained):
        assert [m["antecedent"] for m in a] == [m["antecedent"] for m in b]
        assert [m["log_score"] for m in a] == pytest.approx([m["log_score"] for m in b],
                                                            abs=1e-9)
    # Streaming equals a model that learned the stored records at once (with a window, the
    # last 2 W: the window and the contexts of its terms).
    monkeypatch.undo()
    kept = data if window is None else data[-2 * window:]
    fresh = ISA(phase1_models=12, max_models=40, antecedent=antecedent, window=window)
    for x, y in kept:
        fresh.learn_one(x, y)
    for x, _ in data[:5]:
        got, want = batched.predict_proba_one(x), fresh.predict_proba_one(x)
        assert got == pytest.approx(want, abs=1e-9)
