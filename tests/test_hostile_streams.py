"""Every learner of the registry (``tests/support/learners.py``) under hostile streams: every
prediction is a finite distribution, every refused call leaves the learner exactly as it was,
and it keeps learning."""

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.learners import BY_NAME

_NOMINAL = st.sampled_from(["a", "b", "c"])
_NUMBER = st.one_of(
    st.floats(-1e3, 1e3, allow_nan=False).map(lambda v: round(v, 2)),
    st.sampled_from([1e300, -1e300, 5e200, 1e-300, 0.0, 1e155, -1e120]),  # extreme, finite
)
_MISSING = st.sampled_from([None, float("nan"), np.float32("nan"), pd.NA])
_BAD = st.sampled_from([float("inf"), -math.inf, ["unhashable"], {"a": 1}])
# f0/f1 nominal, f2/f3 numeric, f4/f5 appear mid-stream (hypothesis chooses when).
_RECORD = st.fixed_dictionaries({}, optional={
    "f0": st.one_of(_NOMINAL, _NOMINAL, _MISSING, _BAD),
    "f1": st.one_of(_NOMINAL, _MISSING),
    "f2": st.one_of(_NUMBER, _NUMBER, _MISSING, _BAD),
    "f3": st.one_of(_NUMBER, _MISSING),
    "f4": _NOMINAL,
    "f5": _NUMBER,
})
_LABEL = st.one_of(st.sampled_from(["p", "q", "p", "q", "r"]), _MISSING)


def _assert_distribution(proba: dict, name: str):
    values = list(proba.values())
    assert all(isinstance(v, float) and math.isfinite(v) and 0.0 <= v <= 1.0 for v in values), \
        f"{name}: {proba}"
    assert sum(values) == pytest.approx(1.0, abs=1e-9), f"{name}: {proba}"


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BY_NAME))
@settings(max_examples=25, deadline=None, derandomize=True,  # the same cases in every CI run
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(stream=st.lists(st.tuples(_RECORD, _LABEL), min_size=1, max_size=30))
def test_hostile_streams_give_distributions_and_refusals_change_nothing(name, stream):
    model = BY_NAME[name].make()
    for x, y in stream:
        proba = model.predict_proba_one(x) if _predictable(x) else {}
        if proba:
            _assert_distribution(proba, name)
        before = pickle.dumps(model)
        try:
            model.learn_one(x, y)
        except (TypeError, ValueError):
            assert pickle.dumps(model) == before, f"{name} changed on a refused {x!r}, {y!r}"
    # ... and it keeps learning
    for i in range(4):
        model.learn_one({"f0": "a", "f2": float(i)}, "p" if i % 2 else "q")
    _assert_distribution(model.predict_proba_one({"f0": "b", "f2": 0.5}), name)


def _predictable(x: dict) -> bool:
    """Records a learner must answer: no unhashable or infinite value (those are refused)."""
    for v in x.values():
        if isinstance(v, list | dict):
            return False
        if isinstance(v, float) and math.isinf(v):
            return False
    return True


@pytest.mark.parametrize("make", [BY_NAME["FAN"].make, BY_NAME["FiniteMixture"].make],
                         ids=["FAN", "FiniteMixture"])
def test_a_missing_numeric_value_is_learned_as_missing_once_components_are_averaged(make):
    """Found by the property above: pd.NA for a numeric feature, learned while several
    numbers of components are averaged, raised a TypeError after the record was stored."""
    model, twin = make(), make()
    stream = [({"f4": "c", "f1": "c"}, "p"), ({"f2": 0.0, "f4": "c"}, "q"),
              ({"f4": "c", "f3": 924.18}, "p"), ({"f3": 0.0, "f1": "c"}, "q")]
    for x, y in stream:
        for m in (model, twin):
            m.predict_proba_one(x)
            m.learn_one(x, y)
    model.learn_one({"f3": pd.NA, "f1": "b"}, "q")
    twin.learn_one({"f1": "b"}, "q")
    assert model.predict_proba_one({"f1": "b"}) == twin.predict_proba_one({"f1": "b"})


def test_a_huge_number_is_predicted_by_the_gaussian_member_and_refused_for_learning():
    """Found by the property above: a value of 1e300 made ModelAveragedTAN's Gaussian member
    raise in predict_proba_one, and in learn_one only after the counts had changed."""
    model = BY_NAME["ModelAveragedTAN"].make()
    model.learn_one({"f0": "a", "f5": 0.0}, "p")
    model.learn_one({"f0": "b", "f5": 1.0}, "q")
    _assert_distribution(model.predict_proba_one({"f1": "a", "f5": 1e300}), "ModelAveragedTAN")
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="'f5'"):
        model.learn_one({"f0": "a", "f5": 1e300}, "p")
    assert pickle.dumps(model) == before
