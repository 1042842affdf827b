"""The cheaper per-record paths of ModelAveragedTAN's member stack, against independent
computations.

- The members' class probabilities (``onlinebma.tan.members.class_probabilities``) in plain
  floats and with numpy (``tuning.MEMBER_SOFTMAX_CELLS`` forcing each): ``decay="auto"``
  against the brute force over every structure of tests/test_tan_exact.py, and a stack of
  Gaussian, interval and AODE members against separate learners weighed by the recursion
  written out (tests/test_tan_aode_member.py).
- A Gaussian member beside interval members on numbers alone: its class terms are read from
  the record's counts gathered for the interval members; it equals the class prior times a
  Student t per class written out with one FullStatistics per class (the record's numeric
  vector built once for its prediction and its learning).
- ``NumericFeatures.vector`` kept for the same list of pairs, ``PairCounts.n_values`` kept
  per version: both follow what they are asked.
- ``PairCounts`` stored by column: a record's gathered counts of several members equal the
  weighted records counted out cell by cell.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from onlinebma import tuning
from onlinebma.stats.normal_wishart import FullStatistics, NormalWishartPrior
from onlinebma.stats.pairs import PairCounts
from onlinebma.tan import ModelAveragedTAN
from onlinebma.tan.gaussian import GAUSSIAN, GaussianStatistics
from onlinebma.tan.members import class_probabilities
from tests.test_tan_aode_member import (
    test_aode_members_equal_the_explicit_recursion_over_separate_learners as aode_recursion,
)
from tests.test_tan_exact import (
    test_decay_auto_equals_brute_force_members_and_weights as auto_brute_force,
)
from tests.test_tan_representations import close

PATHS = {"plain": 10**9, "numpy": -1}


@pytest.mark.parametrize("path", PATHS)
def test_class_probabilities_are_the_normalised_exponentials_on_both_paths(path, monkeypatch):
    monkeypatch.setattr(tuning, "MEMBER_SOFTMAX_CELLS", PATHS[path])
    scores = np.array([[0.0, math.log(3.0), -800.0], [-1000.0, -1000.0 + math.log(2.0), 5.0]])
    want = [[0.25, 0.75, 0.0], [0.0, 0.0, 1.0]]
    np.testing.assert_allclose(class_probabilities(scores), want, rtol=0, atol=1e-15)
    p = class_probabilities(np.array([[-1000.0, -1000.0 + math.log(2.0)]]))
    np.testing.assert_allclose(p, [[1 / 3, 2 / 3]], rtol=1e-12)  # ulp(1000) ~ 1e-13


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("structure_decay, structures", [(1.0, "forests"), (0.9, "trees")])
def test_decay_auto_members_on_both_paths_equal_brute_force(path, structure_decay, structures,
                                                           monkeypatch):
    monkeypatch.setattr(tuning, "MEMBER_SOFTMAX_CELLS", PATHS[path])
    auto_brute_force(structure_decay, structures)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("decay", ["auto", 0.97])
def test_aode_interval_and_gaussian_members_on_both_paths_equal_separate_learners(
        path, decay, monkeypatch):
    monkeypatch.setattr(tuning, "MEMBER_SOFTMAX_CELLS", PATHS[path])
    aode_recursion(decay, "auto", {})


class PriorTimesStudentT:
    """``P(c | x) ∝ (ess/K + N_c) t_c(x)`` written out: the counts ``N_c`` decayed after each
    record (the last one weighs λ), one FullStatistics per class over ``z`` and ``w`` (every
    class forgets before each record, the record's class adds it)."""

    def __init__(self, ess: float, decay: float):
        self.ess, self.decay = ess, decay
        self.prior = NormalWishartPrior(2)
        self.counts: dict = {}
        self.stats: dict = {}

    def predict(self, vector) -> dict:
        jll = {c: math.log(self.ess / len(self.counts) + n)
               + float(self.stats[c].log_predictive(self.prior, vector))
               for c, n in self.counts.items()}
        top = max(jll.values())
        weights = {c: math.exp(s - top) for c, s in jll.items()}
        return {c: w / sum(weights.values()) for c, w in weights.items()}

    def learn(self, vector, y) -> None:
        if y not in self.counts:
            self.counts[y], self.stats[y] = 0.0, FullStatistics(2, decay=self.decay)
        for c, stats in self.stats.items():
            self.counts[c] = self.decay * (self.counts[c] + (c == y))
            stats.add(vector, float(c == y))


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("decay", [1.0, 0.95])
def test_a_gaussian_member_beside_intervals_is_the_class_prior_times_a_student_t(
        path, decay, monkeypatch):
    """numeric=("8 intervals", "Gaussian") on numbers alone, cut points fixed after 10
    records: the Gaussian member is :class:`PriorTimesStudentT`, its class counts read from
    the counts the interval member gathered."""
    monkeypatch.setattr(tuning, "MEMBER_SOFTMAX_CELLS", PATHS[path])
    rng = np.random.default_rng(11)
    model = ModelAveragedTAN(aode=False, numeric=("8 intervals", GAUSSIAN), decay=decay,
                             ess=3.0, sample_size=10)
    member = [m.representation for m in model.state.members].index(GAUSSIAN)
    reference = PriorTimesStudentT(3.0, decay)
    for t in range(80):
        y = ["p", "q", "p", "r"][t % 3 if t < 40 else t % 4]  # unequal class counts
        x = {"z": float(rng.normal(ord(y) - ord("p"))), "w": float(rng.normal())}
        vector = np.array([x["z"], x["w"]])
        if t:
            got = model.state.member_predictions(x)[member]
            want = reference.predict(vector)
            close(dict(zip(model.counts.classes_, got.tolist())),
                  {c: want[c] for c in model.counts.classes_}, 1e-12)
        model.learn_one(x, y)
        reference.learn(vector, y)
    assert list(model.numeric_readings) == ["z", "w"]  # the intervals were read: the test
    # covered records whose every feature is cut


def test_the_vector_is_kept_for_the_same_pairs_only():
    gaussian = GaussianStatistics((1.0,))
    assert gaussian.vector([("a", 1.0)]) is None  # no feature modelled yet
    gaussian.choose(["a", "b"])
    pairs = [("b", 2.0), ("a", 1)]
    x = gaussian.vector(pairs)
    assert x.tolist() == [1.0, 2.0] and x.dtype == float and not x.flags.writeable
    assert gaussian.vector(pairs) is x
    other = gaussian.vector([("b", 2.0), ("a", 1.0)])  # equal pairs, another list: rebuilt
    assert other is not x and other.tolist() == [1.0, 2.0]
    assert np.isnan(gaussian.vector([("a", 3.0)])).tolist() == [False, True]
    assert gaussian.vector([("c", 3.0)]) is None


def test_n_values_follow_every_new_feature_and_value():
    counts = PairCounts()
    assert counts.n_values.tolist() == []
    u = counts.add_feature("a")
    assert counts.n_values.tolist() == [0]
    counts.add_value(u, "x")
    counts.add_value(u, "y")
    counts.add_value(u, "x")
    v = counts.add_feature("b")
    counts.add_value(v, 1)
    assert counts.n_values.tolist() == [len(values) for values in counts.values_] == [2, 1]
    assert not counts.n_values.flags.writeable


def test_gathered_counts_of_several_members_equal_the_records_counted_out():
    """PairCounts stored by column: after records of three members with their own weights,
    a class and values first seen midway (the layout moves) and a member rescaled, every
    gathered cell ``(R, K, L)`` equals the weighted records counted out cell by cell."""
    rng = np.random.default_rng(5)
    counts = PairCounts(n_members=3)
    features = ["a", "b", "c"]
    records = []  # (class, {feature: value}, weights)
    for t in range(60):
        x = {f: int(rng.integers(0, 2 if t < 30 else 5)) for f in features
             if rng.random() > 0.2}
        y = ["p", "q"][t % 2] if t < 40 else "r"
        w = rng.random(3)
        c = counts.add_class(y)
        codes = np.array([counts.add_feature(f) for f in x], dtype=np.int64)
        values = np.array([counts.add_value(u, v) for u, v in zip(codes, x.values())],
                          dtype=np.int64)
        order = np.argsort(codes)
        counts.add(c, counts.record_columns(codes[order], values[order]), w)
        records.append((y, x, w))
        if t == 45:
            counts.scale(0.5, 1)
            records = [(y, x, w * [1.0, 0.5, 1.0]) for y, x, w in records]

    def counted(member, label, cell):  # sum of the weights of the records in the cell
        return sum(w[member] for y, x, w in records if y == label and cell(x))

    probe = {"a": 3, "b": 1, "c": 0}
    codes = np.array([counts.feature_code(f) for f in features])
    values = np.array([counts.value_code(u, probe[f]) for u, f in zip(codes, features)])
    order = np.argsort(codes)
    got = counts.gather(counts.record_columns(codes[order], values[order]))
    names = [features[u] for u in codes[order]]
    i, j = np.triu_indices(3, 1)
    cells = ([lambda x: True]
             + [lambda x, f=f: x.get(f) == probe[f] for f in names]
             + [lambda x, f=f: f in x for f in names]
             + [lambda x, f=names[a], g=names[b]: x.get(f) == probe[f] and x.get(g) == probe[g]
                for a, b in zip(i, j)]
             + [lambda x, f=names[a], g=names[b]: x.get(f) == probe[f] and g in x
                for a, b in zip(i, j)]
             + [lambda x, f=names[a], g=names[b]: f in x and x.get(g) == probe[g]
                for a, b in zip(i, j)]
             + [lambda x, f=names[a], g=names[b]: f in x and g in x for a, b in zip(i, j)])
    want = [[[counted(r, label, cell) for cell in cells] for label in counts.classes_]
            for r in range(3)]
    assert got.shape == (3, 3, len(cells))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
