"""Every public learner, once, with what the cross-cutting tests need to know of it.

The tests that hold for every learner (hostile streams, bad frames, Ctrl-C in a batch,
``merge``, pickles, River's ``check_estimator`` with every set of the class's
``_unit_test_params``, fitted attributes read too early) run over :data:`LEARNERS`: a new
learner is checked by all of them once it joins this list, and ``tests/test_registry.py``
fails while a public learner of the package is missing from it (:func:`public_learners`).
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field

from river import base

from onlinebma.batch import BufferRefitClassifier
from onlinebma.isa import ISA
from onlinebma.mixture import FAN, FiniteMixture
from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
from onlinebma.order_mcmc import FixedOrderBMA, OrderMCMC
from onlinebma.tan import AODE, TAN, ModelAveragedTAN

#: The packages whose ``__all__`` holds the public learners.
PACKAGES = ("onlinebma.naive_bayes", "onlinebma.tan", "onlinebma.isa", "onlinebma.mixture",
            "onlinebma.order_mcmc", "onlinebma.batch")


@dataclass(frozen=True)
class Learner:
    """A public learner class and the parameters that keep its tests fast."""

    cls: type
    #: parameters that keep a fit to a fraction of a second (the defaults otherwise)
    fast: dict = field(default_factory=dict)
    #: fitted attributes (``name_``) that are refused with NotFittedError before any record
    fitted: tuple = ()

    @property
    def name(self) -> str:
        return self.cls.__name__

    @property
    def batch(self) -> bool:
        """Stores its records and fits from them (the batch adapter's learners)."""
        return issubclass(self.cls, BufferRefitClassifier)

    @property
    def forgets(self) -> bool:
        """Takes ``decay`` (a rate in (0, 1] or ``"auto"``)."""
        return "decay" in inspect.signature(self.cls).parameters

    def make(self, **params):
        """A fresh learner with the fast parameters, ``params`` over them."""
        return self.cls(**{**self.fast, **params})

    def unit_test_params(self) -> list:
        """River's parameter sets for its checks, read from the class (a classmethod)."""
        return list(self.cls._unit_test_params())


_MIXTURE_FITTED = ("weights_", "means_", "variances_", "value_probabilities_")

LEARNERS = (
    Learner(NaiveBayes),
    Learner(ModelAveragedNB),
    Learner(BMANB),
    Learner(TAN),
    Learner(AODE),
    Learner(ModelAveragedTAN),
    Learner(ISA, {"phase1_models": 5, "max_models": 10}),
    Learner(FixedOrderBMA, {"max_parents": 2}, fitted=("orders_", "log_evidence_")),
    Learner(OrderMCMC, {"max_parents": 1, "n_orders": 3, "burn_in": 10, "n_iter": 40,
                        "seed": 3}, fitted=("orders_", "log_evidence_trace_")),
    Learner(FAN, {"max_components": 2, "n_init": 1, "seed": 1}, fitted=_MIXTURE_FITTED),
    Learner(FiniteMixture, {"max_components": 2, "n_init": 1, "seed": 1},
            fitted=_MIXTURE_FITTED),
)

BY_NAME = {learner.name: learner for learner in LEARNERS}


def ids(learners) -> list:
    return [learner.name for learner in learners]


def forgetting_variants() -> list:
    """``(id, learner)`` of every learner that forgets, with a fixed rate and with ``"auto"``."""
    out = []
    for learner in LEARNERS:
        if learner.forgets:
            out.append((f"{learner.name}-decay", learner.make(decay=0.9)))
            out.append((f"{learner.name}-auto", learner.make(decay="auto")))
    return out


def public_learners() -> set:
    """Every concrete River classifier in the ``__all__`` of :data:`PACKAGES`."""
    out = set()
    for name in PACKAGES:
        module = importlib.import_module(name)
        for attr in module.__all__:
            obj = getattr(module, attr)
            if (inspect.isclass(obj) and issubclass(obj, base.Classifier)
                    and not obj.__name__.startswith("Base") and obj is not BufferRefitClassifier):
                out.add(obj)
    return out
