"""AODE members of ModelAveragedTAN's stack (``aode=True``).

The shared state is run beside the explicit recursion over separate learners: one
``ModelAveragedTAN(numeric=representation, decay=rate)`` per structure-average member and one
``AODE(numeric=representation, decay=rate)`` per AODE member, weighed by the
dynamic-model-averaging recursion written out here. Predictions and every posterior agree to
1e-10 after every record (nominal and numeric features, missing values, a class and a value
first seen mid-stream, cut points fixed mid-stream); ``learn_many``'s stacking weights are
checked against the cross-validated probabilities of separate learners per fold.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

from onlinebma.forgetting import AUTO_GRID
from onlinebma.numeric.sample import TABLE_SAMPLE_SIZE, ColumnSample
from onlinebma.tan import AODE, ModelAveragedTAN
from onlinebma.tan.model_averaged import auto_representations
from onlinebma.tan.numbers import REPRESENTATIONS
from onlinebma.tan.stacking import FOLDS, folds_of, stacking_weights
from tests.support.dma import WrittenOutWeights
from tests.test_tan_representations import ExplicitRecursion as RepresentationRecursion
from tests.test_tan_representations import close, learn_beside, stream
from tests.test_tan_stacking import agreed, assert_close_dicts, mixture, records, table


class ExplicitRecursion(RepresentationRecursion):
    """One learner per (representation, rate, predictive), weighed as
    tests/test_tan_representations.py's recursion (tests/support/dma.py)."""

    def __init__(self, rates, representations, **params):
        self.keys = [(rep, rate, "structures") for rep in representations for rate in rates]
        self.keys += [(rep, rate, "AODE") for rep in representations if rep in REPRESENTATIONS
                      for rate in rates]
        self.learners = [
            ModelAveragedTAN(numeric=rep, decay=rate, aode=False, **params)
            if how == "structures"
            else AODE(numeric=rep, decay=rate, sample_size=params["sample_size"])
            for rep, rate, how in self.keys]
        self.weights = WrittenOutWeights(len(self.keys))


@pytest.mark.parametrize("decay, numeric, params", [
    ("auto", "auto", {}),
    (0.97, "auto", {"structures": "trees"}),
    (1.0, "auto", {"ess": 4.0}),
    ("auto", "5 intervals", {}),
    (0.98, ("3 intervals", "MDL", "Gaussian"), {}),  # several grids (a GridStack)
], ids=repr)
def test_aode_members_equal_the_explicit_recursion_over_separate_learners(decay, numeric,
                                                                         params):
    data = stream(240, seed=3)
    shared = ModelAveragedTAN(decay=decay, numeric=numeric, aode=True, sample_size=20,
                              **params)
    rates = AUTO_GRID if decay == "auto" else (decay,)
    representations = (auto_representations(decay) if numeric == "auto"
                       else numeric if isinstance(numeric, tuple) else (numeric,))
    reference = ExplicitRecursion(rates, representations, sample_size=20, **params)
    learn_beside(shared, reference, data, rates=True)  # every record, 1e-10
    close(shared.predictive_posterior(), reference.posterior(2))
    X = pd.DataFrame([x for x, _ in data[-40:]])
    many = shared.predict_proba_many(X)
    for i, (x, _) in enumerate(data[-40:]):
        assert_close_dicts(many.iloc[i].to_dict(), shared.predict_proba_one(x), tol=1e-10)


def test_learn_many_weighs_aode_members_by_stacking_cross_validated_probabilities():
    """The weights after ``learn_many`` are the stacking weights of every row's probability
    of its label under each member trained, as a separate learner with the table's agreed
    cut points, on the rows outside the row's fold (tests/test_tan_stacking.py's protocol);
    every member then predicts as its learner trained on every row."""
    X, y = table()
    ess = 20.0  # smoother structure averages: AODE earns a weight (0 at ess 10 here)
    model = ModelAveragedTAN(aode=True, ess=ess)
    model.learn_many(X, y)
    makers = {("MDL", "structures"): lambda: agreed(
                  functools.partial(ModelAveragedTAN, numeric="MDL", ess=ess), (), X, y),
              ("Gaussian", "structures"): lambda: agreed(
                  functools.partial(ModelAveragedTAN, numeric="Gaussian", ess=ess), (), X, y),
              ("MDL", "AODE"): lambda: agreed_aode(X, y)}
    folds = folds_of(np.arange(len(X)))
    rows = records(X)
    P = np.zeros((len(X), len(makers)))
    whole = []
    for j, make in enumerate(makers.values()):
        for k in range(FOLDS):
            learner = make()
            for i in np.flatnonzero(folds != k):
                learner.learn_one(rows[i], y[i])
            for i in np.flatnonzero(folds == k):
                P[i, j] = learner.predict_proba_one(rows[i])[y[i]]
        learner = make()
        for x, label in zip(rows, y):
            learner.learn_one(x, label)
        whole.append(learner)
    want = stacking_weights(P)
    assert 0.01 < want[2] < 0.99  # the AODE member is kept: the test can fail
    got = model.representation_posterior()
    np.testing.assert_allclose([got["MDL"], got["Gaussian"]], [want[0] + want[2], want[1]],
                               rtol=0, atol=1e-9)
    np.testing.assert_allclose(model.predictive_posterior()["AODE"], want[2], rtol=0,
                               atol=1e-9)
    weights = dict(zip(makers, want))
    for x in rows[:40] + [{}, {"a": "late"}, {"z": 1.0}]:
        assert_close_dicts(model.predict_proba_one(x), mixture(weights, whole, x))


def agreed_aode(X, y):
    """An AODE learner with the cut points learn_many agrees on the table."""
    learner = AODE(numeric="MDL")
    codes, names = pd.factorize(y)
    learner.fix_numeric({f: ColumnSample.of_column(X[f].to_numpy(float), codes, tuple(names),
                                                   TABLE_SAMPLE_SIZE) for f in ("z", "w")})
    return learner


def test_without_an_interval_representation_there_is_no_aode_member():
    for model in (ModelAveragedTAN(numeric="Gaussian", decay="auto", aode=True),
                  ModelAveragedTAN(decay="auto", aode=False)):
        for x, y in stream(30):
            model.learn_one(x, y)
        assert list(model.predictive_posterior()) == ["structures"]


def test_aode_must_be_a_bool():
    with pytest.raises((TypeError, ValueError), match="aode"):
        ModelAveragedTAN(aode="yes")
