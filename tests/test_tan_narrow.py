"""ModelAveragedTAN's plain-Python path for narrow records (:mod:`onlinebma.tan.narrow`)
against the array path it replaces, record by record, to 1e-9: with forgetting of both
kinds and ``decay="auto"``, missing values, a numeric feature, and a class and a value that
first appear mid-stream."""

from __future__ import annotations

import numpy as np
import pytest

import onlinebma.tan.model_averaged as ma
from onlinebma.tan import ModelAveragedTAN
from onlinebma.tan.narrow import NarrowRecords


def narrow_stream(n, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for t in range(n):
        y = int(rng.integers(0, 3 if t > n // 3 else 2))
        a = y if rng.random() < 0.8 else int(rng.integers(0, 3 if t > n // 2 else 2))
        x = {"a": f"v{a}", "b": f"w{a if rng.random() < 0.7 else int(rng.integers(0, 2))}",
             "z": float(rng.normal(y, 1.0))}
        out.append(({f: v for f, v in x.items() if rng.random() >= 0.1}, f"y{y}"))
    return out


def run(params, data, cells, monkeypatch):
    """Every prediction of a learner on ``data`` with the narrow path taken up to ``cells``
    gathered cells, and how many records took it."""
    taken = []
    plain = NarrowRecords._narrow_predictions

    def counted(self, *args):
        taken.append(1)
        return plain(self, *args)

    monkeypatch.setattr(NarrowRecords, "_narrow_predictions", counted)
    monkeypatch.setattr(ma, "NARROW_CELLS", cells)
    model = ModelAveragedTAN(bin_warmup=10, **params)
    out = []
    for x, y in data:
        out.append(model.predict_proba_one(x))
        model.learn_one(x, y)
    out.append(model.predict_proba_one(data[0][0]))
    monkeypatch.undo()
    return out, len(taken)


@pytest.mark.parametrize("params", [
    {},
    {"structures": "trees", "decay": 0.97, "structure_decay": 0.98},
    {"decay": 0.99, "edge_prior": 0.3},
    {"decay": "auto"},
])
def test_narrow_path_equals_the_array_path(params, monkeypatch):
    data = narrow_stream(300, seed=2)
    narrow, n_narrow = run(params, data, 10**9, monkeypatch)
    array, n_array = run(params, data, -1, monkeypatch)
    assert n_array == 0 and n_narrow > 250  # each path really ran
    for got, want in zip(narrow, array):
        assert list(got) == list(want)
        np.testing.assert_allclose(list(got.values()), list(want.values()), rtol=0,
                                   atol=1e-9)
