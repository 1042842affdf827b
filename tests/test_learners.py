"""What every public learner does, run over the registry (``tests/support/learners.py``):
River's estimator checks with every parameter set of the class's ``_unit_test_params``, and a
pickle round trip that learns and predicts on as if nothing happened. The registry itself is
checked to hold every public learner of the package, so a new learner cannot miss these tests
(nor the hostile streams, bad frames, interrupted batches, merges and fitted attributes)."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from river import checks

from tests.support.learners import LEARNERS, public_learners
from tests.support.state import state_of

#: River's checks for every (learner, parameter set) pair.
RIVER = []
for _learner in LEARNERS:
    for _i, _params in enumerate(_learner.unit_test_params()):
        RIVER.append(pytest.param(_learner, _params, id=f"{_learner.name}-{_i}"))


def test_every_public_learner_is_in_the_registry():
    registered = {learner.cls for learner in LEARNERS}
    assert public_learners() - registered == set(), "add them to tests/support/learners.py"
    assert len(registered) == len(LEARNERS)  # each once


def test_the_registry_finds_a_learner_that_is_not_in_it(monkeypatch):
    """The check above can fail: a public learner left out of the list is found."""
    import onlinebma.naive_bayes as package

    class Newcomer(package.NaiveBayes):
        pass

    monkeypatch.setattr(package, "Newcomer", Newcomer, raising=False)
    monkeypatch.setattr(package, "__all__", [*package.__all__, "Newcomer"])
    assert Newcomer in public_learners() - {learner.cls for learner in LEARNERS}


@pytest.mark.slow
@pytest.mark.parametrize(("learner", "params"), RIVER)
def test_river_estimator_checks(learner, params):
    # No check is skipped: every set of _unit_test_params, River's own hook for its checks
    # (collected by calling it on the class, as River does).
    checks.check_estimator(learner.cls(**params))


@pytest.mark.parametrize("learner", [pytest.param(x, id=x.name) for x in LEARNERS])
def test_a_pickled_learner_goes_on_as_the_original(learner):
    model = learner.make()
    stream = [({"a": "xyz"[i % 3], "u": float(i % 5)}, i % 2 == 0) for i in range(30)]
    for x, y in stream[:20]:
        model.learn_one(x, y)
    model.predict_proba_one({"a": "x", "u": 1.0})
    copy = pickle.loads(pickle.dumps(model))
    for x, y in stream[20:]:
        assert copy.predict_proba_one(x) == model.predict_proba_one(x)
        model.learn_one(x, y)
        copy.learn_one(x, y)
    assert state_of(pickle.loads(pickle.dumps(copy))) == state_of(pickle.loads(pickle.dumps(model)))


#: Labels of each kind, in the order the stream brings them, and the ``classes_`` they make.
LABEL_ORDERS = {
    "bools": ([True, False, True], (False, True)),
    "strings": (["no", "yes", "maybe"], ("maybe", "no", "yes")),
    "integers": ([3, 1, 2], (1, 2, 3)),
    "tuples": ([("b", 1), ("a", 2), ("a", 1)], (("a", 1), ("a", 2), ("b", 1))),
    "mixed types (first arrival)": (["b", 1, "a"], ("b", 1, "a")),
}


@pytest.mark.parametrize("labels", LABEL_ORDERS.values(), ids=LABEL_ORDERS.keys())
@pytest.mark.parametrize("learner", [pytest.param(x, id=x.name) for x in LEARNERS])
def test_batch_predictions_come_in_classes_order(learner, labels):
    """Issue 40: ``classes_`` on every learner, sorted where the labels sort (else in order of
    first arrival), and ``predict_proba_many``'s columns in that order, whatever the order
    the stream brought the labels in (docs/batch.md)."""
    stream, expected = labels
    model = learner.make()
    X = pd.DataFrame({"a": [float(i) for i in range(12)], "c": ["xyz"[i % 3] for i in range(12)]})
    y = pd.Series([stream[i % len(stream)] for i in range(12)], dtype=object)
    model.learn_many(X, y)
    assert model.classes_ == expected
    proba = model.predict_proba_many(X)
    assert list(proba.columns) == list(expected)
    for (_, row), x in zip(proba.iterrows(), X.to_dict("records")):
        one = model.predict_proba_one(x)
        assert [row[c] for c in expected] == pytest.approx([one[c] for c in expected], abs=1e-12)


@pytest.mark.parametrize("learner", [pytest.param(x, id=x.name) for x in LEARNERS])
def test_scikit_learn_scores_the_batch_predictions_as_their_columns_say(learner):
    """The catalogue's case: ``log_loss(y, p.to_numpy())`` read the first-seen columns
    ``[True, False]`` as ``[False, True]`` (14.14 instead of 0.985)."""
    from sklearn.metrics import log_loss

    model = learner.make()
    X = pd.DataFrame({"a": [float(i % 5) for i in range(40)]})
    y = pd.Series([i % 5 < 2 or i % 7 == 0 for i in range(40)])
    y.iloc[0] = True  # True arrives first
    model.learn_many(X, y)
    proba = model.predict_proba_many(X)
    by_label = -np.mean([np.log(proba[label].iloc[i]) for i, label in enumerate(y)])
    assert log_loss(y, proba.to_numpy()) == pytest.approx(by_label, rel=1e-9)
