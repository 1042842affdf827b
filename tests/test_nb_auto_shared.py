"""decay="auto" computed as one state with a member axis (naive_bayes.rates) against the
per-member definition: one learner per rate of AUTO_GRID with that fixed decay, combined by
the documented dynamic-model-averaging rule, written out here independently."""

import pickle
import random

import numpy as np
import pandas as pd
import pytest

from onlinebma.forgetting import AUTO_FORGETTINGS, AUTO_GRID, RateMixture
from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
from onlinebma.naive_bayes.rates import SharedRates
from onlinebma.stats import NormalGammaPrior
from tests.support.dma import WrittenOutWeights

TOL = 1e-12


class Reference:
    """One learner per rate and the weights written out in tests/support/dma.py; predictions
    are the weighted members' predictions."""

    def __init__(self, make):
        self.members = [make(rate) for rate in AUTO_GRID]
        self.dma = WrittenOutWeights(len(AUTO_GRID))

    def learn_one(self, x, y):
        ps = [m.predict_proba_one(x) for m in self.members]
        self.dma.update([p[y] for p in ps] if ps[0] and y in ps[0] else None)
        for m in self.members:
            m.learn_one(x, y)

    def weights(self):
        return self.dma.weights()

    def weigh(self, weights):
        """Start the weights' recursion from ``weights`` (one per rate)."""
        self.dma = WrittenOutWeights(len(self.members), start=weights)

    def weigh_as(self, state):
        """Continue the weights' recursion from where ``state`` (a
        :class:`~onlinebma.forgetting.RateWeights`) is: its weights per β and the β's."""
        self.dma.log_pi = dict(zip(AUTO_FORGETTINGS, state.beta_log_weights.tolist()))
        self.dma.log_omega = dict(zip(AUTO_FORGETTINGS, state.beta_log_posterior.tolist()))

    def predict_proba_one(self, x):
        mix = {}
        for m, w in zip(self.members, self.weights()):
            for c, p in m.predict_proba_one(x).items():
                mix[c] = mix.get(c, 0.0) + w * p
        total = sum(mix.values())
        return {c: p / total for c, p in mix.items()}

    def feature_posteriors(self):
        out = {}
        for m, w in zip(self.members, self.weights()):
            for f, p in m.feature_posteriors().items():
                out[f] = out.get(f, 0.0) + w * p
        return out

    def decay_posterior(self):
        return dict(zip(AUTO_GRID, self.weights()))


def stream(n, seed=0):
    """Nominal and numeric features, missing values (absent, None, NaN), values, features and
    a third class appearing mid-stream, a concept that flips, a feature constant for a while."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        y = rng.randrange(3 if i > n // 3 else 2)
        flip = i >= n // 2
        x = {"colour": "rgbk"[(y + flip) % (3 if i < n // 4 else 4)] if rng.random() < 0.8
             else rng.choice("rgb"),
             "shape": rng.choice("sq" if i < n // 5 else "sqt"),
             "z": rng.gauss(y - 2 * y * flip, 1.0),
             "w": rng.gauss(0.0, 3.0),
             "const": 1.5 if i < n // 3 else rng.gauss(1.5, 0.1)}
        if i > n // 2:
            x["late"] = rng.gauss(y, 0.5)
            x["late_nominal"] = rng.choice("uv")
        for f in list(x):
            if rng.random() < 0.1:
                if rng.random() < 0.5:
                    del x[f]
                else:
                    x[f] = None if rng.random() < 0.5 else float("nan")
        rows.append((x, f"k{y}"))
    return rows


QUERIES = [{}, {"colour": "r"}, {"colour": "k", "z": 0.3}, {"z": -1.0, "w": 2.0, "shape": "t"},
           {"colour": "never", "z": 1e200}, {"late": 0.5, "late_nominal": "u", "const": 1.5},
           {"unknown": 3.0, "shape": "s", "w": -1e-3}]

LEARNERS = [
    lambda d: NaiveBayes(decay=d, numeric="Gaussian"),
    lambda d: NaiveBayes(alpha=0.5, decay=d, numeric="Gaussian"),
    lambda d: BMANB(decay=d, numeric="Gaussian"),
    lambda d: BMANB(gamma=1.1, alpha=0.7, decay=d, numeric="Gaussian"),
    lambda d: ModelAveragedNB(decay=d, numeric="Gaussian"),
    lambda d: ModelAveragedNB(alpha=2.0, inclusion_prior=0.3, decay=d, numeric="Gaussian",
                              normal_gamma=NormalGammaPrior(mu0=0.5, kappa0=0.1, a0=2.0, b0=0.5)),
]
IDS = ["nb", "nb-alpha", "bmanb", "bmanb-gamma", "manb", "manb-priors"]


def assert_close(got: dict, want: dict, tol=TOL):
    assert list(got) == list(want)
    for k in want:
        assert abs(got[k] - want[k]) <= tol * max(1.0, abs(want[k])), (k, got[k], want[k])


@pytest.mark.parametrize("make", LEARNERS, ids=IDS)
def test_shared_rates_equal_one_learner_per_rate(make):
    rows = stream(240, seed=1)
    model, ref = make("auto"), Reference(make)
    for t, (x, y) in enumerate(rows):
        # progressive validation on even records, learning alone on odd ones
        if t % 2 == 0 and t:
            assert_close(model.predict_proba_one(x), ref.predict_proba_one(x))
        model.learn_one(x, y)
        ref.learn_one(x, y)
        if t % 20 == 19:
            assert_close(model.decay_posterior(), ref.decay_posterior())
            assert_close(model.beta_posterior(), ref.dma.beta_posterior())
            assert_close(model.feature_posteriors(), ref.feature_posteriors())
            for q in QUERIES:
                assert_close(model.predict_proba_one(q), ref.predict_proba_one(q))
    # no public view of which decay=auto implementation runs: what this test is about
    assert isinstance(model._rate_mixture(), SharedRates)
    assert make(0.99).beta_posterior() == {}  # a fixed decay weighs no members


@pytest.mark.parametrize("make", LEARNERS[::2], ids=IDS[::2])
def test_learn_many_and_predict_proba_many(make):
    rows = stream(160, seed=2)
    model, ref = make("auto"), Reference(make)
    X = pd.DataFrame([x for x, _ in rows])
    y = pd.Series([label for _, label in rows])
    for start in range(0, len(rows), 50):
        model.learn_many(X.iloc[start:start + 50], y.iloc[start:start + 50])
    for x, label in rows:
        ref.learn_one(x, label)
    Q = pd.DataFrame(QUERIES[1:4] + [x for x, _ in rows[:10]])
    many = model.predict_proba_many(Q)
    assert list(many.columns) == list(ref.predict_proba_one(rows[0][0]))
    for i, (_, row) in enumerate(Q.iterrows()):
        assert_close(many.iloc[i].to_dict(), ref.predict_proba_one(row.to_dict()))
    assert_close(model.decay_posterior(), ref.decay_posterior())


@pytest.mark.slow
@pytest.mark.parametrize("make", LEARNERS[::2], ids=IDS[::2])
def test_past_the_renormalisation_of_the_fastest_rate(make):
    """λ = 0.95 renormalises its scaled unit every 1,730 records."""
    rng = random.Random(4)
    model, ref = make("auto"), Reference(make)
    for i in range(1900):
        y = rng.randrange(2)
        x = {"a": rng.choice("ab") if i % 700 < 400 else "ab"[y], "z": rng.gauss(y, 1.0)}
        model.learn_one(x, y)
        ref.learn_one(x, y)
    for q in [{"a": "a", "z": 0.2}, {"z": 1.0}, {"a": "b"}]:
        assert_close(model.predict_proba_one(q), ref.predict_proba_one(q), tol=1e-10)
    assert_close(model.decay_posterior(), ref.decay_posterior(), tol=1e-10)


def test_configurations_without_a_shared_state_keep_one_learner_per_rate():
    for model in [ModelAveragedNB(prior="BDeu", decay="auto", numeric="Gaussian"),
                  ModelAveragedNB(structure_decay=0.9, decay="auto"),
                  NaiveBayes(absent="zero", decay="auto")]:
        model.learn_one({"a": 1}, True)
        # no public view of which decay=auto implementation runs: what this test is about
        assert isinstance(model._rate_mixture(), RateMixture)
    rows = stream(60, seed=3)
    model = ModelAveragedNB(prior="BDeu", decay="auto", numeric="Gaussian")
    ref = Reference(lambda d: ModelAveragedNB(prior="BDeu", decay=d, numeric="Gaussian"))
    for x, y in rows:
        model.learn_one(x, y)
        ref.learn_one(x, y)
    for q in QUERIES:
        assert_close(model.predict_proba_one(q), ref.predict_proba_one(q))


@pytest.mark.parametrize("make", LEARNERS[::2], ids=IDS[::2])
def test_refused_records_pickles_and_clones(make):
    rows = stream(90, seed=5)
    model = make("auto")
    for x, y in rows[:45]:
        model.learn_one(x, y)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="'z'"):
        model.learn_one({"colour": "r", "z": 1e200}, "k0")
    with pytest.raises(TypeError, match="'z'"):
        model.learn_one({"colour": "r", "z": "high"}, "k0")
    assert pickle.dumps(model) == before
    copy = pickle.loads(before)
    for x, y in rows[45:]:
        model.learn_one(x, y)
        copy.learn_one(x, y)
    assert pickle.dumps(copy) == pickle.dumps(model)
    assert model.predict_proba_one(QUERIES[2]) == copy.predict_proba_one(QUERIES[2])
    fresh = model.clone()
    assert fresh.predict_proba_one({"colour": "r"}) == {} and fresh.decay == "auto"
    with pytest.raises(ValueError, match="forget"):
        model.merge(copy)


def test_a_record_changed_after_its_prediction_is_read_afresh():
    model = ModelAveragedNB(decay="auto", numeric="Gaussian")
    ref = Reference(lambda d: ModelAveragedNB(decay=d, numeric="Gaussian"))
    for x, y in stream(80, seed=6):
        model.predict_proba_one(x)
        x["z"] = 2.0  # changed in place between prediction and learning
        model.learn_one(x, y)
        ref.learn_one(x, y)
    assert_close(model.predict_proba_one({"z": 0.0}), ref.predict_proba_one({"z": 0.0}))
    assert np.isclose(sum(model.decay_posterior().values()), 1.0)
