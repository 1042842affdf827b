"""Numbers read as intervals (the family's default): declared numeric features, and
``decay="auto"`` on the shared rate state against one learner per rate."""

import pickle

import numpy as np
import pytest

from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
from onlinebma.naive_bayes.rates import SharedRates
from tests.test_nb_auto_shared import Reference
from tests.test_nb_numbers import assert_same, coded, frame, records


@pytest.mark.parametrize("cls", [NaiveBayes, ModelAveragedNB, BMANB])
def test_a_declared_numeric_feature_is_cut_when_its_sample_completes(cls):
    """numeric_attributes: the replay counts the declared feature's intervals (its kept
    values are not refused as text), as a learner given the cut points from the first record."""
    rng = np.random.default_rng(31)
    data = [({"g": float(rng.normal(y)), "colour": "red" if rng.random() < 0.3 + 0.4 * y
              else "blue"}, y) for y in rng.integers(2, size=700).tolist()]
    learner = cls(numeric="8 intervals", numeric_attributes=["g"])
    for x, y in data:
        learner.learn_one(x, y)
    cuts = learner.cut_points()
    assert list(cuts) == ["g"]
    reference = cls(numeric="Gaussian")
    for x, y in data:
        reference.learn_one(coded(x, cuts), y)
    assert_same(learner, reference, [x for x, _ in data[:20]], cuts)


AUTO = [(NaiveBayes, {}), (ModelAveragedNB, {}), (BMANB, {"gamma": 1.1})]


def assert_like_members(learner, reference, tests, tol=1e-9):
    """The shared state's predictions, feature posteriors and rate posterior are the
    per-rate learners' combined by the reference's rule."""
    for x in tests:
        p, q = learner.predict_proba_one(x), reference.predict_proba_one(x)
        assert p.keys() == q.keys()
        for y in p:
            assert p[y] == pytest.approx(q[y], abs=tol, rel=tol)
    fp, fq = learner.feature_posteriors(), reference.feature_posteriors()
    assert list(fp) == list(fq)
    for f in fq:
        assert fp[f] == pytest.approx(fq[f], abs=tol, rel=tol)
    assert list(learner.decay_posterior().values()) == pytest.approx(
        list(reference.decay_posterior().values()), abs=tol, rel=tol)


@pytest.mark.parametrize("cls, params", AUTO)
@pytest.mark.parametrize("numeric", ["8 intervals", "MDL"])
def test_decay_auto_reads_intervals_on_the_shared_state(cls, params, numeric):
    """decay="auto" with intervals runs on the shared rate state (no learner per rate) and
    equals one learner per rate of the grid combined by the DMA rule: before, at and after
    each feature's fix (the late feature fixed after the others, a class arriving after the
    first fix), with missing values and a feature read per value. ("late" is observed from
    the first record, missing in a third of them: a numeric feature first observed later
    starts its Gaussian at a clock unit that the shared state and a lone learner round
    differently, a difference of the Gaussian path that is not the subject here.)"""
    data = records(1000, seed=32, third_class_at=650, late_at=0)
    rng = np.random.default_rng(36)
    for x, _ in data:
        if rng.random() < 0.35:
            x["late"] = None
    learner = cls(decay="auto", numeric=numeric, **params)
    reference = Reference(lambda rate: cls(decay=rate, numeric=numeric, **params))
    tests = [x for x, _ in records(15, seed=33)]
    for i, (x, y) in enumerate(data):
        learner.predict_proba_one(x)  # progressive validation: the prediction's reading reused
        learner.learn_one(x, y)
        reference.learn_one(x, y)
        if i in (100, 499, 500, 720, 999):
            assert_like_members(learner, reference, tests)
    assert isinstance(learner._rate_mixture(), SharedRates)
    assert set(learner.cut_points()) == {"g", "spike", "code", "late"}
    for f, c in reference.members[0].cut_points().items():
        mine = learner.cut_points()[f]
        assert (mine is None and c is None) or np.array_equal(mine, c)


@pytest.mark.parametrize("cls, params", AUTO)
def test_decay_auto_shared_learn_many_fix_numeric_and_pickle(cls, params):
    """learn_many's cut points from a small table, cut points given by fix_numeric after kept
    records, and a pickle mid-sample: the shared state stays equal to the members."""
    data = records(700, seed=34, third_class_at=400, late_at=150)
    X, y = frame(data)
    learner = cls(decay="auto", numeric="8 intervals", **params)
    reference = Reference(lambda rate: cls(decay=rate, numeric="8 intervals", **params))
    learner.learn_many(X.iloc[:120], y.iloc[:120])  # every feature fixed from the table
    for m in reference.members:
        m.learn_many(X.iloc[:120], y.iloc[:120])
    reference.weigh_as(learner._rate_mixture())  # where learn_many's recursion is
    tests = [x for x, _ in records(15, seed=35)]
    assert_like_members(learner, reference, tests)
    for x, label in data[120:300]:  # "late" arrives at 150: kept, read by its Gaussian
        learner.learn_one(x, label)
        reference.learn_one(x, label)
    learner = pickle.loads(pickle.dumps(learner))
    readings = {"late": cls(numeric="8 intervals").numeric_readings_from(
        {"late": (X["late"].to_numpy(dtype=float), y.to_numpy())})["late"]}
    learner.fix_numeric(readings)
    for m in reference.members:
        m.fix_numeric(readings)
    assert_like_members(learner, reference, tests)
    for x, label in data[300:]:
        learner.learn_one(x, label)
        reference.learn_one(x, label)
    assert_like_members(learner, reference, tests)
