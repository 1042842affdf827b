"""The coding object (onlinebma.coding): one coding of records for every batch learner.

Its rows since a mark against the snapshot, its encoder against the table's, and the window
bounding the value codes held (codes of values no longer stored go), for every learner.
"""

from __future__ import annotations

import pickle
import random

import numpy as np
import pandas as pd
import pytest

from onlinebma.coding import COMPACT_FACTOR, Coding
from onlinebma.growth import growth_due
from onlinebma.isa import ISA
from onlinebma.mixture import FAN, FiniteMixture
from onlinebma.order_mcmc import FixedOrderBMA, OrderMCMC


def _stream(n, seed=0):
    """Records with an ID-like feature (a new value every record), a nominal feature that
    tells the class, a numeric one, and now and then a missing value."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        y = rng.random() < 0.5
        x = {"id": f"r{i}", "a": ("u" if y else "v") if rng.random() < 0.8 else "w",
             "b": rng.gauss(1.0 if y else -1.0, 1.0)}
        if rng.random() < 0.1:
            del x["a"]
        out.append((x, y))
    return out


def _coding(records, window=None):
    coding = Coding(window=window)
    for x, y in records:
        coding.learn_one(x, y)
    return coding


# ----------------------------------------------------------------- the coding alone


def test_rows_since_a_mark_are_the_rows_appended_and_evicted():
    records = _stream(300)
    coding = _coding(records[:40], window=25)
    cuts = [np.array([0.0])]
    before, mark = coding.node_rows(cuts), coding.mark()
    for x, y in records[40:47]:
        coding.learn_one(x, y)
    changes = coding.changes(mark, cuts)
    after = coding.node_rows(cuts)
    # Counting consumer: what it held, less the evicted rows, plus the appended ones.
    np.testing.assert_array_equal(before[:len(changes.evicted)], changes.evicted)
    np.testing.assert_array_equal(np.vstack([before[len(changes.evicted):], changes.appended]),
                                  after)
    assert len(changes.appended) == len(changes.evicted) == 7
    empty = coding.changes(coding.mark(), cuts)
    assert empty.appended.shape == (0, 4) and empty.evicted.shape == (0, 4)


def test_renumbered_codes_make_changes_unavailable():
    records = _stream(300)
    coding = _coding(records[:20], window=10)
    mark = coding.mark()
    for x, y in records[20:100]:  # the ID column outgrows COMPACT_FACTOR * 10 codes
        coding.learn_one(x, y)
    assert coding.changes(mark, []) is None


def test_compacting_codes_leaves_the_table_as_it_was():
    records = _stream(200)
    windowed = _coding(records, window=30)
    fresh = _coding(records[-30:])
    t, f = windowed.table(), fresh.table()
    assert t.nominal_features == f.nominal_features
    for j in range(len(t.nominal_features)):  # the same value of every stored record
        values_t = np.array(t.values[j] + (None,), dtype=object)[t.codes[:, j]]
        values_f = np.array(f.values[j] + (None,), dtype=object)[f.codes[:, j]]
        assert values_t.tolist() == values_f.tolist()
    np.testing.assert_array_equal(t.numeric, f.numeric)
    assert windowed.n_value_codes <= COMPACT_FACTOR * 30 + 3
    assert windowed.n_learned == 200 and windowed.n_stored == len(windowed) == 30


def test_one_encoder_for_the_coding_and_its_tables():
    records = _stream(120)
    coding = _coding(records)
    coding.cuts = coding.fit_cuts()
    table = coding.table(discretize=True)
    test = [x for x, _ in _stream(40, seed=1)] + [{"a": "new", "b": float("nan")}, {}]
    frame = pd.DataFrame(test)
    rows = coding.encode_frame(frame, coding.cuts)
    for x, row in zip(test, rows):
        np.testing.assert_array_equal(coding.encode_one(x, coding.cuts)[0], row)
        # The table's codes are the coding's, compacted: the same value or interval, or -1.
        coded = table.encode_one(x).codes[0]
        for j, f in enumerate(table.nominal_features):
            if f in coding.nominal_features:
                k = coding.nominal_features.index(f)
                want = -1 if row[k] < 0 else table.values[j].index(coding.values_of(f)[row[k]])
            else:
                want = row[len(coding.nominal_features)]  # every interval is present here
            assert coded[j] == want


def test_the_class_expansion_rule():
    coding = _coding([({"a": "x"}, "p")] * 3 + [({"a": "y"}, "q")] + [({"a": "z"}, "r")])
    out = coding.expand_classes(("q", "p"), np.array([[0.25, 0.75]]))
    share = (1 + 1) / (5 + 3)  # class "r": one stored record
    np.testing.assert_allclose(out, [[0.75 * (1 - share), 0.25 * (1 - share), share]])
    assert coding.class_code("r") == 2 and coding.class_code("s") == -1


def test_the_growth_policy():
    assert [growth_due(n, 100) for n in (9, 10)] == [False, True]
    assert growth_due(1, 0) and not growth_due(0, 0)


def test_refused_records_leave_the_coding_unchanged():
    coding = _coding(_stream(30), window=10)
    state = pickle.dumps(coding)
    with pytest.raises(TypeError, match="'b'"):
        coding.learn_one({"b": "text"}, True)
    with pytest.raises(TypeError, match="'a'"):
        coding.learn_many(pd.DataFrame({"a": ["u", 3]}), pd.Series([True, False]))
    assert pickle.dumps(coding) == state


# ------------------------------------------- the window bounds the value codes held

_WINDOW = 50
_LEARNERS = {
    "ISA": lambda **kw: ISA(phase1_models=2, max_models=2, **kw),
    "FixedOrderBMA": lambda **kw: FixedOrderBMA(max_parents=1, **kw),
    "OrderMCMC": lambda **kw: OrderMCMC(max_parents=1, n_iter=20, burn_in=5, n_orders=2, seed=1,
                                        **kw),
    "FAN": lambda **kw: FAN(seed=1, **kw),
    "FiniteMixture": lambda **kw: FiniteMixture(max_components=2, seed=1, **kw),
}


def _learned(make, records, **kw):
    model = make(**kw)
    for x, y in records:
        model.learn_one(x, y)
    return model


@pytest.mark.parametrize("name", list(_LEARNERS))
def test_a_window_bounds_the_value_codes_and_the_state(name):
    make = _LEARNERS[name]
    records = _stream(2000)
    test = [x for x, _ in records[-5:]] + [{"a": "u"}, {"a": "v", "b": 0.5}]
    model = _learned(make, records[:500], window=_WINDOW, refit_every=1)
    model.predict_proba_one(test[0])
    size = len(pickle.dumps(model))
    for x, y in records[500:]:
        model.learn_one(x, y)
    # ISA stores the last 2 windows (the window and the contexts of its sliding score,
    # docs/isa.md): a windowed ISA that learned only those predicts the same.
    stored = 2 * _WINDOW if name == "ISA" else _WINDOW
    fresh = _learned(make, records[-stored:], refit_every=1,
                     **({"window": _WINDOW} if name == "ISA" else {}))
    # Value codes: at most the store's worth per feature (the ID column's grow and go).
    assert model.coding.n_value_codes <= COMPACT_FACTOR * stored + 3
    for x in test:
        proba, want = model.predict_proba_one(x), fresh.predict_proba_one(x)
        assert sum(proba.values()) == pytest.approx(1.0)
        if name in ("ISA", "FixedOrderBMA"):  # no history beyond the window
            assert set(proba) == set(want)
            for label, p in want.items():
                assert proba[label] == pytest.approx(p, abs=1e-9)
    # What is pickled does not grow with the stream (1,500 more records, 1,500 more IDs): at
    # most the window's worth of codes more (a code is a few tens of bytes).
    assert len(pickle.dumps(model)) <= size + 40 * COMPACT_FACTOR * stored
    assert model.coding.n_learned == 2000
