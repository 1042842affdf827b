"""ModelAveragedTAN's plain-Python path for narrow records (:mod:`onlinebma.tan.narrow`)
against the array path it replaces, record by record, to 1e-9: with forgetting of both
kinds and ``decay="auto"``, missing values, a numeric feature, and a class and a value that
first appear mid-stream."""

from __future__ import annotations

import numpy as np
import pytest

import onlinebma.tan.members as members
from onlinebma import tuning
from onlinebma.tan import ModelAveragedTAN

# the rate axis over one interval representation (the representation axis:
# tests/test_tan_representations.py)
INTERVALS = "5 intervals"


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
    plain = members.narrow_predictions

    def counted(*args):
        taken.append(1)
        return plain(*args)

    monkeypatch.setattr(members, "narrow_predictions", counted)
    monkeypatch.setattr(tuning, "NARROW_CELLS", cells)
    model = ModelAveragedTAN(numeric=INTERVALS, sample_size=10, **params)
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


@pytest.mark.parametrize("params", [{"decay": 0.99}, {"decay": "auto"}])
def test_kept_readings_equal_fresh_ones(params, monkeypatch):
    """Record codings are kept per distinct coding (``RecordCoding._read_record``) until a
    class, feature or value is added: predictions equal those of a learner that codes
    every record afresh, through new classes, values and the numeric feature's cut points,
    and most records are served from the kept codings."""
    from onlinebma.stats.pairs import PairCounts

    data = narrow_stream(300, seed=5)
    built = []
    plain = PairCounts.record_columns

    def counted(self, codes, values):
        built.append(1)
        return plain(self, codes, values)

    monkeypatch.setattr(PairCounts, "record_columns", counted)
    kept, fresh = (ModelAveragedTAN(numeric=INTERVALS, sample_size=10, **params)
                   for _ in range(2))
    kept_built = 0
    for x, y in data:
        n_built = len(built)
        got = kept.predict_proba_one(x)
        kept_built += len(built) - n_built
        n_built = len(built)
        fresh.state.coding.forget_readings()
        want = fresh.predict_proba_one(x)
        assert len(built) > n_built or not want  # the fresh learner built its coding
        assert list(got) == list(want)
        np.testing.assert_allclose(list(got.values()), list(want.values()), rtol=0, atol=1e-9)
        kept.learn_one(x, y)
        fresh.learn_one(x, y)
    assert kept_built < 0.4 * len(data)  # the kept learner built few


@pytest.mark.parametrize("forests", [True, False])
@pytest.mark.parametrize("m", [2, 3])
def test_tiny_graph_sums_equal_the_elimination(forests, m):
    """The closed sums of 2 and 3 features (graph by graph and over a stack) against the
    log-path elimination of the same graphs (with the root node of the matrix-forest
    theorem for forests), at spreads up to thousands of nats."""
    from onlinebma.stats.spanning import log_tree_sum
    from onlinebma.tan.record_sums import RecordTreeSums
    from onlinebma.tuning import TINY_ARRAY_GRAPHS

    rng = np.random.default_rng(m + 2 * forests)
    sums = RecordTreeSums(forests, 0.0)
    p = m * (m - 1) // 2
    edges = np.concatenate([rng.normal(0.0, scale, (20, p)) for scale in (1.0, 30.0, 3000.0)])
    want = log_tree_sum(sums.graphs(m, edges, 0.0), path="log")
    graph_by_graph = sums.python_sums(m, edges.tolist())
    np.testing.assert_allclose(graph_by_graph, want, rtol=1e-13, atol=1e-12)
    assert len(edges) >= TINY_ARRAY_GRAPHS  # the stack's closed sums with numpy
    stacked = sums(b"tiny", m, np.zeros(p), edges, 0)
    np.testing.assert_allclose(stacked, want, rtol=1e-13, atol=1e-12)
