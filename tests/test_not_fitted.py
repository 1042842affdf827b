"""Fitted attributes read before a fit: a clear "not fitted" error, the learner unchanged.

Every learner of the registry (``tests/support/learners.py``) that lists fitted attributes."""

from __future__ import annotations

import pickle

import pytest

from onlinebma.mixture import FAN, FiniteMixture
from onlinebma.validation import NotFittedError
from tests.support.learners import LEARNERS

CASES = [pytest.param(learner, attribute, id=f"{learner.name}-{attribute}")
         for learner in LEARNERS for attribute in learner.fitted]
FITTED = [pytest.param(learner, id=learner.name) for learner in LEARNERS if learner.fitted]


@pytest.mark.parametrize(("learner", "attribute"), CASES)
def test_fitted_attributes_before_data_say_not_fitted(learner, attribute):
    """Like scikit-learn's ``NotFittedError``: a ``ValueError`` that is also an
    ``AttributeError`` (so ``hasattr`` is False), and nothing changes."""
    model = learner.make()
    before = pickle.dumps(model)
    with pytest.raises(NotFittedError, match="not (been )?fitted") as error:
        getattr(model, attribute)
    assert isinstance(error.value, ValueError) and isinstance(error.value, AttributeError)
    assert not hasattr(model, attribute)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("learner", FITTED)
def test_fitted_attributes_exist_once_records_are_fitted(learner):
    """The other side: after records and a prediction (which fits a batch learner), every
    fitted attribute reads."""
    model = learner.make()
    for i in range(12):
        model.learn_one({"a": "xy"[i % 2], "u": float(i)}, i % 3 == 0)
    model.predict_proba_one({"a": "x", "u": 1.0})
    for attribute in learner.fitted:
        assert hasattr(model, attribute), attribute


@pytest.mark.parametrize("make", [FAN, FiniteMixture])
def test_reading_a_mixtures_fitted_attribute_fits_first(make):
    model = make(max_components=2, n_init=1, seed=0)
    for i in range(12):
        model.learn_one({"a": "xy"[i % 2], "u": float(i)}, i % 3 == 0)
    assert model.weights_.sum() == pytest.approx(1.0)
    assert model.n_fits_ == 1
