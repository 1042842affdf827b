"""Every value counts: a member that learns the replayed records ends with the counts of the same
member given the cut points from the first record (issue 38, item 1).

The harness is a plain count table (class counts, class x nominal value, class x code per numeric
feature and member, and class x code x code for every pair of features, numeric or nominal),
learned two ways: by a host that keeps records in :class:`PendingRecords` until a feature's
sample is complete, reads the feature from its sample and learns the replay; and by a reference
that has the final readings from record 0. With forgetting (every cell multiplied by ``λ``
before each record, a record added with weight 1) the replayed records weigh ``λ^age``.
"""

from __future__ import annotations

import pickle
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onlinebma.numeric.grids import Grids
from onlinebma.numeric.pending import PendingRecords
from onlinebma.numeric.reading import NumericSettings, read_sample
from onlinebma.numeric.values import ValueCodes

N_CLASSES = 3


class CountTable:
    """Cells keyed by tuples, every one multiplied by ``decay`` before each record."""

    def __init__(self, decay: float):
        self.decay = decay
        self.cells: dict = defaultdict(float)

    def forget(self) -> None:
        if self.decay != 1.0:
            for key in self.cells:
                self.cells[key] *= self.decay

    def count(self, label, new: dict, known: dict, nominal: dict, weight: float) -> None:
        """Singles of ``new``; pairs within ``new``, of ``new`` with ``known`` and with the
        nominal values. Codes are tuples, one per member; a pair is keyed by its sorted names."""
        for f, codes in new.items():
            for m, code in enumerate(codes):
                self.cells[("single", f, m, label, code)] += weight
            for g, other in [*new.items(), *known.items()]:
                if g in new and g <= f:
                    continue  # each pair within new once
                (a, ca), (b, cb) = sorted([(f, codes), (g, other)], key=lambda p: p[0])
                for m, (i, j) in enumerate(zip(ca, cb)):
                    self.cells[("pair", a, b, m, label, i, j)] += weight
            for g, v in nominal.items():
                for m, code in enumerate(codes):
                    self.cells[("nominal pair", f, g, m, label, code, v)] += weight


def n_members(settings: NumericSettings) -> int:
    return len(settings.resolutions) + settings.class_aware


def codes_of(reading, x: float, members: int) -> tuple:
    """Every member's code of ``x``; a feature read per value has the code of the value (or of
    its gap, a value not in the sample) in every member."""
    if isinstance(reading, Grids):
        return tuple(int(c) for c in reading.code(x))
    code = reading.code(x)
    assert 0 <= code < reading.n_codes
    return (code,) * members


def learn_pending(records, labels, settings, decay):
    """The host: keeps records until their features are read, then learns the replay."""
    table = CountTable(decay)
    pending = PendingRecords(settings.sample_size)
    readings: dict = {}
    members = n_members(settings)
    most_kept = 0

    def fix(features, learned):
        for f in features:
            values, classes = pending.sample(f)
            readings[f] = read_sample(values, classes, N_CLASSES, settings)
        for r in pending.replay(features, learned):
            new = {f: codes_of(readings[f], v, members) for f, v in r.new.items()}
            known = {f: codes_of(readings[f], v, members) for f, v in r.known.items()}
            table.count(r.label, new, known, r.payload, decay ** r.age)

    for t, (x, c) in enumerate(zip(records, labels)):
        table.forget()
        numeric = {f: v for f, v in x.items() if isinstance(v, float)}
        nominal = {f: v for f, v in x.items() if isinstance(v, str)}
        table.cells[("class", c)] += 1.0
        for f, v in nominal.items():
            table.cells[("nominal", f, c, v)] += 1.0
        live = {f: codes_of(readings[f], v, members) for f, v in numeric.items()
                if f in readings and v == v}
        table.count(c, live, {}, nominal, 1.0)
        complete = pending.learn(t, c, numeric, payload=nominal)
        if complete:
            fix(complete, t + 1)
        assert len(pending) <= settings.sample_size * max(1, len(pending.pending))
        most_kept = max(most_kept, len(pending))
    if pending.pending:  # the end of the stream: read the rest from what they have
        fix(pending.pending, len(records))
    return table, readings, most_kept


def learn_reference(records, labels, readings, settings, decay):
    """The same count table, every feature read with the final readings from record 0."""
    table = CountTable(decay)
    members = n_members(settings)
    for x, c in zip(records, labels):
        table.forget()
        table.cells[("class", c)] += 1.0
        nominal = {f: v for f, v in x.items() if isinstance(v, str)}
        for f, v in nominal.items():
            table.cells[("nominal", f, c, v)] += 1.0
        numeric = {f: codes_of(readings[f], v, members) for f, v in x.items()
                   if isinstance(v, float) and v == v}
        table.count(c, numeric, {}, nominal, 1.0)
    return table


def stream(n: int, seed: int):
    """Numeric features observed at different rates (one too rarely to complete its sample),
    an adult-like point mass, integer codes, a nominal feature, missing values (absent, NaN)."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, N_CLASSES, n)
    records = []
    for c in labels:
        x = {}
        x["a"] = float(rng.normal(c, 1.0))
        if rng.random() < 0.3:
            x["b"] = float(rng.normal(-c, 2.0))
        if rng.random() < 0.8:
            x["gain"] = 0.0 if rng.random() < 0.92 else float(rng.exponential(1000.0 * (c + 1)))
        if rng.random() < 0.6:
            x["level"] = float(rng.integers(0, 4) + (c == 2))
        if rng.random() < 0.02:
            x["rare"] = float(rng.normal())
        if rng.random() < 0.1:
            x["a"] = float("nan")
        if rng.random() < 0.9:
            x["colour"] = str(rng.choice(["red", "green", "blue"]))
        records.append(x)
    return records, labels


def assert_same_counts(got: CountTable, want: CountTable) -> None:
    keys = set(got.cells) | set(want.cells)
    worst = max(abs(got.cells.get(k, 0.0) - want.cells.get(k, 0.0)) for k in keys)
    assert worst <= 1e-12, worst


@pytest.mark.parametrize("decay", [1.0, 0.97])
def test_replayed_counts_equal_those_of_cut_points_from_the_first_record(decay):
    settings = NumericSettings(resolutions=(3, 5, 8), sample_size=60)
    records, labels = stream(900, seed=1)
    got, readings, most_kept = learn_pending(records, labels, settings, decay)
    want = learn_reference(records, labels, readings, settings, decay)
    assert_same_counts(got, want)
    # the scenario covers what it claims: every kind of reading, a late and a forced fix
    assert isinstance(readings["level"], ValueCodes)
    assert isinstance(readings["a"], Grids) and isinstance(readings["b"], Grids)
    assert readings["gain"].masses.tolist() == [0.0]
    assert isinstance(readings["rare"], Grids)
    assert sum(1 for x in records if "rare" in x) < settings.sample_size
    assert most_kept > settings.sample_size  # "b" kept records after "a" was fixed
    # and the numbers were counted: every observed value of "b" in its single cells
    observed_b = sum(1 for x in records if "b" in x)
    total_b = sum(v for k, v in want.cells.items() if k[:3] == ("single", "b", 0))
    assert total_b == pytest.approx(observed_b) if decay == 1.0 else total_b < observed_b


def test_the_harness_sees_a_replay_that_drops_a_record():
    """The comparison can fail: forgetting one replayed record shows."""
    settings = NumericSettings(resolutions=(3,), class_aware=False, sample_size=20)
    records, labels = stream(100, seed=2)
    got, readings, _ = learn_pending(records, labels, settings, 1.0)
    want = learn_reference(records[1:], labels[1:], readings, settings, 1.0)
    with pytest.raises(AssertionError):
        assert_same_counts(got, want)


def test_ages_count_every_record_the_host_learned():
    pending = PendingRecords(sample_size=2)
    pending.learn(3, 0, {"x": 1.0})
    assert pending.learn(10, 1, {"x": 2.0}) == ["x"]
    assert [r.age for r in pending.replay(["x"], learned=11)] == [7, 0]


def test_missing_values_are_skipped_and_fixed_only_records_are_not_kept():
    pending = PendingRecords(sample_size=2)
    assert pending.learn(0, 0, {"x": None, "y": float("nan")}) == []
    assert len(pending) == 0 and pending.pending == []
    pending.learn(1, 0, {"x": 1.0})
    pending.learn(2, 1, {"x": 2.0})
    pending.replay(["x"], learned=3)
    assert pending.learn(3, 0, {"x": 5.0}) == [] and len(pending) == 0
    assert pending.is_fixed("x") and not pending.is_fixed("y")


def test_a_pair_is_replayed_once_at_the_later_feature():
    pending = PendingRecords(sample_size=1)
    assert pending.learn(0, 0, {"a": 1.0, "b": 2.0}) == ["a", "b"]
    first = pending.replay(["a"], learned=1)
    assert [(r.new, r.known) for r in first] == [({"a": 1.0}, {})]
    second = pending.replay(["b"], learned=1)
    assert [(r.new, r.known) for r in second] == [({"b": 2.0}, {"a": 1.0})]
    assert len(pending) == 0


@pytest.mark.parametrize("call, message", [
    (lambda p: p.learn(1, 0, {"x": 1.0}), "index must be an integer >= 3"),
    (lambda p: p.learn(True, 0, {"x": 1.0}), "index must be"),
    (lambda p: p.learn(5, -1, {"x": 1.0}), "label must be an integer >= 0"),
    (lambda p: p.learn(5, 0, {"x": float("inf")}), "finite number"),
    (lambda p: p.learn(5, 0, {"x": "1.0"}), "finite number"),
    (lambda p: p.replay(["nope"], learned=5), "not pending"),
    (lambda p: p.replay(["x"], learned=2), "learned must be an integer >= 3"),
    (lambda p: p.sample("nope"), "not pending"),
])
def test_bad_input_is_refused_and_changes_nothing(call, message):
    pending = PendingRecords(sample_size=5)
    pending.learn(0, 0, {"x": 1.0})
    pending.learn(2, 1, {"x": 2.0, "y": 3.0})
    before = pickle.dumps(pending)
    with pytest.raises((ValueError, KeyError), match=message):
        call(pending)
    assert pickle.dumps(pending) == before


def test_bad_sample_size_is_refused():
    with pytest.raises(ValueError, match="sample_size must be an integer >= 1"):
        PendingRecords(sample_size=0)


def test_pickled_mid_stream_continues_the_same():
    settings = NumericSettings(resolutions=(3,), sample_size=30)
    records, labels = stream(200, seed=3)
    pending = PendingRecords(settings.sample_size)

    def learn(p, start, stop):
        for t in range(start, stop):
            numeric = {f: v for f, v in records[t].items() if isinstance(v, float)}
            done = p.learn(t, int(labels[t]), numeric)
            if done:
                p.replay(done, t + 1)

    learn(pending, 0, 40)
    assert pending.is_fixed("a") and len(pending) > 0
    copy = pickle.loads(pickle.dumps(pending))
    for p in (pending, copy):
        learn(p, 40, 200)
    assert copy.__dict__ == pending.__dict__
    assert [f for f in ("a", "b") if pending.is_fixed(f)] == ["a", "b"]


_value = st.one_of(st.none(), st.sampled_from([0.0, 0.0, 1.0, 2.5]),
                   st.floats(-10, 10, allow_nan=False))
_record = st.fixed_dictionaries({}, optional={
    "p": _value, "q": _value, "r": _value, "colour": st.sampled_from(["red", "blue"])})


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(_record, st.integers(0, N_CLASSES - 1)), min_size=1,
                     max_size=40),
       sample_size=st.integers(1, 8), decay=st.sampled_from([1.0, 0.9]))
def test_replay_equality_on_any_small_stream(rows, sample_size, decay):
    """Any order of missing values, completions and forced fixes gives the reference counts."""
    records = [{f: v for f, v in x.items() if v is not None} for x, _ in rows]
    labels = [c for _, c in rows]
    numeric_settings = NumericSettings(resolutions=(2, 3), sample_size=sample_size,
                                       max_values=3)
    got, readings, _ = learn_pending(records, labels, numeric_settings, decay)
    want = learn_reference(records, labels, readings, numeric_settings, decay)
    assert_same_counts(got, want)


@pytest.mark.parametrize("decay", [1.0, 0.97])
def test_replay_then_new_values_as_gaps_equals_the_reading_from_the_first_record(decay):
    """A feature read per value from its sample (replayed), then given measured values: each
    is counted as the gap between sample values it falls in, and the cells equal those of the
    same reading from record 0."""
    records, labels = stream(700, seed=4)
    rng = np.random.default_rng(5)
    for t, x in enumerate(records):
        if t >= 400 and "level" in x:
            x["level"] = float(rng.normal(2.0, 2.0))
    settings = NumericSettings(resolutions=(3, 8), sample_size=60, max_values=6)
    got, readings, _ = learn_pending(records, labels, settings, decay)
    level = readings["level"]
    assert isinstance(level, ValueCodes)
    gaps = {k[4] for k in got.cells if k[:2] == ("single", "level")} - set(range(len(
        level.values)))
    assert len(gaps) == len(level.values) + 1  # every gap was met
    want = learn_reference(records, labels, readings, settings, decay)
    assert_same_counts(got, want)
