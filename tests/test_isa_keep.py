"""With a window, the models a search saw near its margin are kept up to date for the next
records (`tuning.KEEP_SLACK`, `cache`): which scores are extended, and when, changes neither
the predictions nor the models averaged and their scores (phase 2's threshold above the
weight a negligible model could have, as with the defaults: it cannot choose one)."""

from __future__ import annotations

import math
import random

import pytest

from onlinebma import tuning
from onlinebma.isa import ISA

MARGIN = 4.0


def _stream(seed, n, p=6):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        y = rng.choice("ab")
        x = {f"f{j}": f"v{rng.randrange(3) if rng.random() < 0.6 else ('ab'.index(y) + j) % 3}"
             for j in range(p) if rng.random() >= 0.1}
        out.append((x, y))
    return out


def _streamed(data, window):
    # margin 4: some models of R are negligible, so the slack decides which are kept;
    # threshold 0.02 > exp(-4): phase 2 cannot choose a negligible model.
    model = ISA(window=window, phase1_models=20, max_models=40, margin=MARGIN, threshold=0.02)
    preds, explained, negligible = [], [], 0
    for i, (x, y) in enumerate(data):
        if i % 4 != 3:  # some records arrive between predictions: scores miss one or two
            preds.append(model.predict_proba_one(x))
        if i % 10 == 9:
            best = model.explain_one(x)
            top = max(m["log_score"] for m in best)
            explained.append({tuple(sorted(m["antecedent"])): m["log_score"] for m in best
                              if m["log_score"] >= top - MARGIN})
            negligible += len(best) - len(explained[-1])
        model.learn_one(x, y)
    assert negligible > 0  # the margin was used
    return preds, explained


@pytest.mark.parametrize("slack", [-math.inf, 0.0, math.inf])
def test_which_models_are_kept_changes_no_prediction(slack, monkeypatch):
    data = _stream(5, 90)
    preds, explained = _streamed(data, window=15)
    monkeypatch.setattr(tuning, "KEEP_SLACK", slack)
    other, other_explained = _streamed(data, window=15)
    for a, b in zip(preds, other):
        assert a.keys() == b.keys() and a == pytest.approx(b, abs=1e-12)
    for a, b in zip(explained, other_explained):  # the models within the margin
        assert a.keys() == b.keys()
        for A in a:
            assert a[A] == pytest.approx(b[A], abs=1e-9)
