"""FAN and the finite-mixture classifier as stream learners (issue 14) and on hostile numbers
(issue 13): warm-started EM, the numeric default against its own one-component case, new
classes at once, finite distributions for any finite input, memory bounded by the tables,
key-order independence and River's checks on the default parameters."""

from __future__ import annotations

import itertools
import math
import random
import tracemalloc

import numpy as np
import pandas as pd
import pytest
from river import checks, datasets
from river.checks import common

from onlinebma.mixture import FAN, FiniteMixture

MODELS = (FAN, FiniteMixture)


def progressive_log_loss(model, stream, n=None) -> float:
    """Mean ``-log p(y | x)`` of every record predicted before it is learned (River's
    ``LogLoss`` clips probabilities at 1e-15 the same way); records with ``{}`` are skipped."""
    total, count = 0.0, 0
    for x, y in itertools.islice(stream, n):
        p = model.predict_proba_one(x)
        if p:
            total -= math.log(min(max(p.get(y, 0.0), 1e-15), 1.0))
            count += 1
        model.learn_one(x, y)
    return total / count


def clustered_stream(n, seed):
    """A stationary stream: two well-separated clusters per class, nominal and numeric."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    h = rng.integers(0, 2, n)
    X = pd.DataFrame({
        "a": np.where(rng.random(n) < 0.9, np.where(h == 1, "p", "q"), "r"),
        "b": np.where(rng.random(n) < 0.8, np.where(y == 1, "u", "v"), "w"),
        "u": rng.normal(6.0 * h + y, 1.0, n),
        "v": rng.normal(-4.0 * h, 1.0, n),
    })
    return X, pd.Series(np.where(y == 1, "yes", "no"))


def records(X):
    return X.to_dict("records")


# ---------------------------------------------------------------- warm-started EM


@pytest.mark.parametrize("model_cls", MODELS)
def test_warm_start_reaches_the_cold_optimum_in_fewer_iterations(model_cls):
    """On a stationary stream, the refit that starts from the previous fit's parameters ends
    at the optimum a cold start on the same records finds (log likelihood within 1e-6
    relative) and needs fewer EM iterations to get there. K = 2, the stream's true number of
    components, so that the optimum is unique (with more components EM has several)."""
    X, y = clustered_stream(1500, seed=1)
    params = {"max_components": 2, "n_init": 1, "criterion": "icl", "tol": 1e-10,
              "max_iter": 2000, "seed": 0}
    stream = model_cls(**params, refit_every=500)
    rows = records(X)
    for x, label in zip(rows[:1000], y[:1000]):
        stream.learn_one(x, label)
    stream.predict_proba_one(rows[0])  # first fit: cold
    for x, label in zip(rows[1000:], y[1000:]):
        stream.learn_one(x, label)
    stream.predict_proba_one(rows[0])  # second fit: warm
    assert stream.n_fits_ == 2
    cold = model_cls(**params).fit(X, y)
    warm_ll, cold_ll = stream.criteria_[2]["loglik"], cold.criteria_[2]["loglik"]
    assert abs(warm_ll - cold_ll) <= 1e-6 * abs(cold_ll), (warm_ll, cold_ll)
    assert stream.n_iter_[2] < cold.n_iter_[2], (stream.n_iter_, cold.n_iter_)


# ------------------------------------------------------------ the numeric default


@pytest.mark.slow
def test_default_fan_does_not_lose_to_its_one_component_case_on_phishing():
    """Phishing's numeric features take two or three values: Gaussian components collapse on
    them. The default FAN must still predict as well as FAN(max_components=1), up to the
    log(2) nats in total that averaging over K may cost (the bound of
    onlinebma.mixture.averaging; 0.00055 per record here), whatever the seed.
    Before: 0.85-1.11 against 0.553."""
    n = 1250
    one = progressive_log_loss(FAN(max_components=1), datasets.Phishing())
    losses = [progressive_log_loss(FAN(seed=seed), datasets.Phishing()) for seed in (0, 1, 2)]
    # The bound is for unclipped probabilities; clipping them at 1e-15 (as River's LogLoss and
    # the test do) can move it by a little: 1e-6 per record allowed, 4.4e-7 seen.
    assert max(losses) <= one + math.log(2) / n + 1e-6, (losses, one)
    assert max(losses) - min(losses) < 0.01, losses


# ----------------------------------------------------------------- new classes


@pytest.mark.parametrize("model_cls", MODELS)
def test_a_new_class_gets_its_prior_share_at_once(model_cls):
    """The adapter's policy: a class absent from the fitted table gets (m + 1) / (n + K)."""
    X, y = clustered_stream(200, seed=2)
    model = model_cls(max_components=2, seed=0, refit_every=1000)
    rows = records(X)
    for x, label in zip(rows, y):
        model.learn_one(x, label)
    model.predict_proba_one(rows[0])
    model.learn_one(rows[1], "new")
    p = model.predict_proba_one(rows[2])
    assert set(p) == set(model.classes_) == {"yes", "no", "new"}
    assert p["new"] == pytest.approx(2 / (201 + 3), abs=1e-12)
    assert sum(p.values()) == pytest.approx(1.0, abs=1e-12)


# --------------------------------------------------------- hostile finite numbers


@pytest.mark.parametrize("model_cls", MODELS)
def test_a_huge_finite_value_does_not_poison_the_model(model_cls):
    model = model_cls(max_components=2, seed=0)
    model.learn_one({"b": 1e200, "c": 1.0}, "x")
    rng = np.random.default_rng(0)
    for i in range(600):
        label = "x" if i % 2 else "y"
        model.learn_one({"b": rng.normal(i % 2), "c": rng.normal(3.0 * (i % 2))}, label)
        if i % 50 == 0:
            p = model.predict_proba_one({"b": 0.5, "c": 1.5})
            assert all(math.isfinite(v) for v in p.values()), (i, p)
    for x in ({"b": 1.0, "c": 3.0}, {"b": 1e200}, {"c": 3.0}):
        p = model.predict_proba_one(x)
        assert all(math.isfinite(v) for v in p.values()), (x, p)
        assert sum(p.values()) == pytest.approx(1.0, abs=1e-9)
    assert model.predict_one({"c": 3.0}) == "x"  # the learner keeps learning


@pytest.mark.parametrize("model_cls", MODELS)
def test_every_row_is_a_distribution_for_any_finite_input(model_cls):
    X, y = clustered_stream(300, seed=3)
    model = model_cls(max_components=3, seed=0).fit(X, y)
    values = [1e7, -1e12, 1e100, 1e200, -1e300, 1.7e308, 5e-324]
    rows = pd.DataFrame({"a": "p", "b": "u", "u": values, "v": values[::-1]})
    proba = model.predict_proba(rows).to_numpy()
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    for x in records(rows):
        p = model.predict_proba_one(x)
        assert all(math.isfinite(v) for v in p.values())
        assert abs(sum(p.values()) - 1.0) <= 1e-9


def test_memory_is_bounded_by_the_tables_not_records_times_values():
    """An ID-like nominal feature (a new value per record): the fit must not build a
    records x values matrix (5,000 x 5,000 floats would be 200 MB)."""
    n = 5000
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"id": [f"r{i}" for i in range(n)],
                      "a": rng.choice(["p", "q"], n), "u": rng.normal(size=n)})
    y = pd.Series(rng.choice(["yes", "no"], n))
    tracemalloc.start()
    try:
        FAN(max_components=2, n_init=1, seed=0, criterion="icl").fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 60e6, f"{peak / 1e6:.0f} MB"


# ---------------------------------------------------------------- River's checks


def test_default_fan_does_not_depend_on_the_order_of_the_keys():
    random.seed(0)
    stream = list(itertools.islice(datasets.ImageSegments(), 200))
    common.check_shuffle_features_no_impact(FAN(), stream)


@pytest.mark.slow
@pytest.mark.parametrize("model_cls", MODELS)
def test_river_estimator_checks_on_default_parameters(model_cls):
    checks.check_estimator(model_cls())
