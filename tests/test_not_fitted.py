"""Fitted attributes read before a fit: a clear "not fitted" error, the learner unchanged."""

from __future__ import annotations

import pickle

import pytest

from onlinebma.mixture import FAN, FiniteMixture, NotFittedError

ATTRIBUTES = ("weights_", "means_", "variances_", "value_probabilities_")


@pytest.mark.parametrize("model_cls", (FAN, FiniteMixture))
@pytest.mark.parametrize("attribute", ATTRIBUTES)
def test_fitted_attributes_before_data_say_not_fitted(model_cls, attribute):
    """Like scikit-learn's ``NotFittedError``: a ``ValueError`` that is also an
    ``AttributeError`` (so ``hasattr`` is False), and nothing changes."""
    model = model_cls()
    before = pickle.dumps(model)
    with pytest.raises(NotFittedError, match="not been fitted") as error:
        getattr(model, attribute)
    assert isinstance(error.value, ValueError) and isinstance(error.value, AttributeError)
    assert not hasattr(model, attribute)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("model_cls", (FAN, FiniteMixture))
def test_fitted_attributes_after_data_fit_first(model_cls):
    """The other side: once records arrived, reading an attribute fits."""
    model = model_cls(max_components=2, n_init=1, seed=0)
    for i in range(12):
        model.learn_one({"a": "xy"[i % 2], "u": float(i)}, i % 3 == 0)
    assert model.weights_.sum() == pytest.approx(1.0)
    assert model.n_fits_ == 1
