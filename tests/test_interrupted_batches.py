"""A ``KeyboardInterrupt`` that arrives while ``learn_many`` commits a batch (issue 27's
catalogue) is delivered once the batch is committed whole: the learner then equals one that
learned the batch uninterrupted, never a half-updated one. Every learner of the registry
(``tests/support/learners.py``) is checked, with a fixed and an automatic rate where it forgets.

The interrupt is SIGINT's handler called from inside the commit, as Python calls it when
Ctrl-C arrives there (called directly, not sent with os.kill: a signal sent to the test process
was delivered late in a full run, in whatever the process did next, and broke pytest itself).
"Inside the commit" is wherever a handler other than Python's default one is in force (the
commit holds SIGINT back: :func:`onlinebma.reading.uninterrupted`); the interrupt comes at the
first, the middle or the last function call made there, counted by a profile hook.
"""

from __future__ import annotations

import inspect
import pickle
import signal
import sys

import numpy as np
import pandas as pd
import pytest

from tests.support.learners import LEARNERS, forgetting_variants
from tests.support.state import state_of

CASES = [(learner.name, learner.make()) for learner in LEARNERS] + forgetting_variants() + [
    ("NaiveBayes-zero", LEARNERS[0].make(absent="zero"))]


def frame(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": np.where(y == 1, "p", "q"), "b": np.where(rng.random(n) < .5, "r", "s"),
                      "u": np.abs(rng.normal(y, 1.0))})  # a count for absent="zero"
    return X, pd.Series(y == 1)


@pytest.fixture(autouse=True)
def python_sigint_handler():
    """Python's own SIGINT handler in force, whatever the test runner inherited: a process
    started in the background of a non-interactive shell (nohup, ``cmd &``) ignores SIGINT,
    and Python then installs no handler."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


class CommitCalls:
    """A profile hook counting the function calls made while SIGINT is held back, and calling
    the handler in force at call number ``at`` (``None``: only count)."""

    def __init__(self, at=None):
        self.at, self.calls, self.sent = at, 0, False

    def __call__(self, frame, event, arg):
        if event != "call" or signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            return
        self.calls += 1
        if self.calls == self.at:
            self.sent = True
            signal.getsignal(signal.SIGINT)(signal.SIGINT, inspect.currentframe())

    def run(self, call):
        sys.setprofile(self)
        try:
            call()
        finally:
            sys.setprofile(None)


def trained(learner):
    model = learner.clone()
    model.learn_many(*frame(40, seed=1))
    model.predict_proba_one({"a": "p"})  # a batch learner fits: the next batch is evidence
    return model


@pytest.mark.parametrize("where", ["first", "middle", "last"])
@pytest.mark.parametrize("learner", [pytest.param(learner, id=name) for name, learner in CASES])
def test_a_batch_is_committed_whole(learner, where):
    X, y = frame()
    model = trained(learner)
    # three copies alike (a pickle leaves derived caches out): the dry run counts the calls
    model, twin, dry = (pickle.loads(pickle.dumps(model)) for _ in range(3))
    twin.learn_many(X, y)
    counter = CommitCalls()
    counter.run(lambda: dry.learn_many(X, y))
    assert counter.calls, f"{type(learner).__name__}.learn_many never holds Ctrl-C back"
    at = {"first": 1, "middle": (counter.calls + 1) // 2, "last": counter.calls}[where]
    interrupt = CommitCalls(at)
    with pytest.raises(KeyboardInterrupt):
        interrupt.run(lambda: model.learn_many(X, y))
    assert interrupt.sent
    assert state_of(model) == state_of(twin)
