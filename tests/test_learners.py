"""What every public learner does, run over the registry (``tests/support/learners.py``):
River's estimator checks with every parameter set of the class's ``_unit_test_params``, and a
pickle round trip that learns and predicts on as if nothing happened. The registry itself is
checked to hold every public learner of the package, so a new learner cannot miss these tests
(nor the hostile streams, bad frames, interrupted batches, merges and fitted attributes)."""

from __future__ import annotations

import pickle

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
