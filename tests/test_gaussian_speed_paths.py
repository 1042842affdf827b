"""The Gaussian members' Student t predictives
(:meth:`~onlinebma.stats.normal_wishart.FullStatistics.log_predictive`: ``log|R|`` and the
quadratic form from one QR of the stacked factors bordered by the record, no solve) after
every record of a stream, with and without forgetting: equal to scipy's Student t
(``scipy.stats.multivariate_t``) and to ``np.linalg.slogdet`` and a solve, both built from the
explicitly accumulated weighted scatter; and near-duplicate features against 50-digit
arithmetic.

The statistics forget by multiplying their weights and factors by the rate before each record
(no scaled clock of their own; the members' counts renormalise theirs, which the Gaussian
statistics do not see).
"""

import copy
import pickle
from math import lgamma, log, pi

import mpmath
import numpy as np
import pytest
from scipy import stats

from onlinebma import tuning
from onlinebma.stats.normal_wishart import FullStatistics, NormalWishartPrior
from onlinebma.tan.gaussian import GaussianStatistics

RATES = (1.0, 0.95)
TOL = 1e-10
#: TRIANGLE_UPDATE_FEATURES sending every record down one update path
UPDATE_PATHS = {"triangle": 10**12, "qr": -1}


class ExplicitClass:
    """One class's forgotten weight, sum and raw sum of squares of its records (every
    record forgets by ``rate`` first), and from them the Student t predictive straight from
    the definitions (Kuipers et al. 2014; module docstring of ``normal_wishart``)."""

    def __init__(self, d: int, rate: float):
        self.rate, self.n, self.sum, self.squares = rate, 0.0, np.zeros(d), np.zeros((d, d))

    def add(self, x, weight: float) -> None:
        self.n = self.rate * self.n + weight
        self.sum = self.rate * self.sum + weight * x
        self.squares = self.rate * self.squares + weight * np.outer(x, x)

    def posterior(self, prior, idx):
        """``(n, location, R, df)`` of the features ``idx``."""
        k0, nu, T = prior.k0, prior.nu[idx], np.diag(prior.t[idx])
        n = self.n
        if n == 0:
            return 0.0, nu, T, prior.df(0.0)
        m = self.sum[idx] / n
        S = self.squares[np.ix_(idx, idx)] - n * np.outer(m, m)
        kappa = k0 + n
        R = T + S + k0 * n / kappa * np.outer(m - nu, m - nu)
        return n, (k0 * nu + n * m) / kappa, R, prior.df(n)

    def log_t(self, prior, x) -> float:
        """scipy's log density of the observed features of ``x``."""
        idx = np.flatnonzero(~np.isnan(x))
        n, loc, R, df = self.posterior(prior, idx)
        kappa = prior.k0 + n
        return stats.multivariate_t(loc=loc, shape=R * (kappa + 1) / (kappa * df),
                                    df=df).logpdf(x[idx])

    def log_t_from_slogdet(self, prior, x) -> float:
        """The same density from ``np.linalg.slogdet`` of ``R`` and a solve (a second
        reference: scipy's own path factors the shape matrix)."""
        n, loc, R, df = self.posterior(prior, np.arange(len(x)))
        kappa, d = prior.k0 + n, len(x)
        sign, log_det = np.linalg.slogdet(R)
        assert sign > 0
        delta = x - loc
        quad = delta @ np.linalg.solve(R, delta)
        ratio = kappa / (kappa + 1.0)
        return (lgamma(0.5 * (df + d)) - lgamma(0.5 * df) - 0.5 * d * log(pi)
                - 0.5 * (log_det - d * log(ratio)) - 0.5 * (df + d) * np.log1p(ratio * quad))


def stream(d: int, k: int, size: int, seed: int, missing: float = 0.0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(k, size=size)
    centres = rng.normal(size=(k, d)) * 2.0 + 1.0
    X = centres[labels] + rng.normal(size=(size, d)) * rng.uniform(0.5, 2.0, size=d)
    if missing:
        X[rng.random(size=X.shape) < missing] = np.nan
    return X, labels


@pytest.mark.parametrize("predictive_path", ["plain floats", "qr"])
@pytest.mark.parametrize("update_path", ["triangle", "qr"])
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("d", [1, 2, 5, 20])
def test_predictive_is_the_explicit_student_t_after_every_record(monkeypatch, d, k,
                                                                 update_path, predictive_path):
    """Rates 1 and 0.95 side by side; every record predicted (complete, and every tenth
    with a value hidden) before it is learned, some records missing a value (not learned:
    only the forgetting); the factors updated by LAPACK's triangle-plus-row QR (``dtpqrt``,
    also past its feature bound here) or by numpy's QR, a
    complete record's Student t by plain-float rotations or by the bordered QR."""
    monkeypatch.setattr(tuning, "NARROW_PREDICTIVE_WORK", 10**12
                        if predictive_path == "plain floats" else -1)
    monkeypatch.setattr(tuning, "TRIANGLE_UPDATE_FEATURES", UPDATE_PATHS[update_path])
    prior = NormalWishartPrior(d)
    size = 120 if d == 20 else 200
    X, labels = stream(d, k, size, seed=10 * d + k, missing=0.01)
    s = FullStatistics(d, (len(RATES), k), np.array(RATES)[:, None])
    explicit = [[ExplicitClass(d, rate) for _ in range(k)] for rate in RATES]
    for i, (x, c) in enumerate(zip(X, labels)):
        complete = np.nan_to_num(x, nan=0.5)
        got = s.log_predictive(prior, complete)
        want = np.array([[e.log_t(prior, complete) for e in row] for row in explicit])
        np.testing.assert_allclose(got, want, rtol=0, atol=TOL, err_msg=f"record {i}")
        want = np.array([[e.log_t_from_slogdet(prior, complete) for e in row]
                         for row in explicit])
        np.testing.assert_allclose(got, want, rtol=0, atol=TOL, err_msg=f"record {i}")
        if i % 10 == 0 and d > 1:  # a value hidden: the marginal t of the others
            hidden = complete.copy()
            hidden[i % d] = np.nan
            want = np.array([[e.log_t(prior, hidden) for e in row] for row in explicit])
            np.testing.assert_allclose(s.log_predictive(prior, hidden), want, rtol=0,
                                       atol=TOL, err_msg=f"record {i}")
        weight = np.zeros((len(RATES), k))
        weight[:, c] = 1.0
        s.add(x, weight)
        learned = not np.isnan(x).any()
        for row in explicit:
            for j, e in enumerate(row):
                e.add(np.nan_to_num(x), float(learned and j == c))


@pytest.mark.parametrize("rate", [1.0, 0.95])
def test_long_stream_of_gaussian_statistics(rate):
    """2 000 records through :class:`GaussianStatistics` (the third class first seen late,
    an empty learner merged in half way): after every record equal to the explicit
    ``slogdet`` density, every tenth to scipy's."""
    d, k = 5, 3
    prior = NormalWishartPrior(d)
    X, labels = stream(d, k, 2000, seed=7)
    labels[:40] = np.minimum(labels[:40], 1)  # the third class comes later (grow)
    g = GaussianStatistics((rate,))
    explicit = [ExplicitClass(d, rate) for _ in range(k)]
    features = [f"x{j}" for j in range(d)]
    n_classes = 0
    for i, (x, c) in enumerate(zip(X, labels)):
        n_classes = max(n_classes, int(c) + 1)
        if g.features is not None:
            got = g.log_densities(x, n_classes)[0]
            want = [explicit[j].log_t_from_slogdet(prior, x) for j in range(n_classes)]
            np.testing.assert_allclose(got, want, rtol=0, atol=TOL, err_msg=f"record {i}")
            if i % 10 == 0:
                want = [explicit[j].log_t(prior, x) for j in range(n_classes)]
                np.testing.assert_allclose(got, want, rtol=0, atol=TOL, err_msg=f"record {i}")
        if i == 1000:  # pooling an empty learner's statistics changes nothing
            other = GaussianStatistics((rate,))
            other.choose(features)
            g.merge(other, range(1))
        g.learn(list(zip(features, x.tolist())), int(c), n_classes)
        for j, e in enumerate(explicit):
            e.add(x, float(j == c))
    assert np.all(np.isfinite(g.log_densities(X[0], k)))


def mp_log_t(prior, X, x):
    """The Student t predictive of ``x`` after the rows ``X`` in 50-digit arithmetic."""
    with mpmath.workdps(50):
        d = X.shape[1]
        n = len(X)
        rows = [[mpmath.mpf(float(v)) for v in r] for r in X]
        m = [sum(r[j] for r in rows) / n for j in range(d)]
        k0, nu = mpmath.mpf(prior.k0), [mpmath.mpf(float(v)) for v in prior.nu]
        kappa = k0 + n
        R = mpmath.matrix(d, d)
        for a in range(d):
            for b in range(d):
                R[a, b] = (sum((r[a] - m[a]) * (r[b] - m[b]) for r in rows)
                           + k0 * n / kappa * (m[a] - nu[a]) * (m[b] - nu[b])
                           + (mpmath.mpf(float(prior.t[a])) if a == b else 0))
        df = mpmath.mpf(prior.df(n))
        delta = mpmath.matrix([mpmath.mpf(float(v)) - (k0 * nu[j] + n * m[j]) / kappa
                               for j, v in enumerate(x)])
        quad = (delta.T * mpmath.lu_solve(R, delta))[0]
        ratio = kappa / (kappa + 1)
        return (mpmath.loggamma((df + d) / 2) - mpmath.loggamma(df / 2)
                - d / mpmath.mpf(2) * mpmath.log(mpmath.pi)
                - (mpmath.log(mpmath.det(R)) - d * mpmath.log(ratio)) / 2
                - (df + d) / 2 * mpmath.log(1 + ratio * quad))


@pytest.mark.parametrize("update_path", ["triangle", "qr"])
def test_near_duplicate_features_predict_with_their_digits(monkeypatch, update_path):
    """Features 1 and 2 near-duplicates (``x_2 = x_1 + 1e-9`` noise), 2 000 records
    streamed (by each way of rotating a record into the factor): the predictive of records
    on and off the duplicate direction matches 50-digit arithmetic to 1e-10 nats (``|R|``
    keeps ``T``'s share of the near-singular scatter)."""
    monkeypatch.setattr(tuning, "TRIANGLE_UPDATE_FEATURES", UPDATE_PATHS[update_path])
    rng = np.random.default_rng(0)
    n = 2000
    xu = rng.normal(size=n) * 3.0 + 1.0
    X = np.column_stack([rng.normal(size=n), xu, xu + 1e-9 * rng.normal(size=n)])
    prior = NormalWishartPrior(3)
    full, explicit = FullStatistics(3, (2,)), ExplicitClass(3, 1.0)
    for x in X:
        full.add(x, [1.0, 0.0])
        explicit.add(x, 1.0)
    for x in ([0.0, 0.5, 0.5 + 1e-9], [0.3, -2.0, -2.0], [0.0, 0.5, 0.6]):
        want = float(mp_log_t(prior, X, x))
        assert abs(full.log_predictive(prior, np.array(x))[0] - want) < TOL
    # The test can fail: slogdet and a solve of R formed from the raw sums miss by far more.
    assert abs(explicit.log_t_from_slogdet(prior, np.array(x)) - want) > 1000 * TOL


def test_copies_and_pickles_predict_as_the_original():
    """A copy and a pickled copy learn other records than the original; predictions
    interleaved, each equals the explicit density of its own records (the array the
    predictive fills is no state, and not shared)."""
    d, k = 4, 2
    prior = NormalWishartPrior(d)
    X, labels = stream(d, k, 60, seed=3)
    s = FullStatistics(d, (2, k), np.array(RATES)[:, None])
    mine = [[ExplicitClass(d, rate) for _ in range(k)] for rate in RATES]
    for x, c in zip(X[:30], labels[:30]):
        s.add(x, np.eye(k)[c][None].repeat(2, 0))
        for row in mine:
            row[c].add(x, 1.0)
            row[1 - c].add(x, 0.0)
    s.log_predictive(prior, X[0])
    others = [s.copy(), pickle.loads(pickle.dumps(s))]
    theirs = [copy.deepcopy(mine) for _ in others]
    for i, (x, c) in enumerate(zip(X[30:], labels[30:])):
        learner, explicit = ([s] + others)[i % 3], ([mine] + theirs)[i % 3]
        learner.add(x, np.eye(k)[c][None].repeat(2, 0))
        for row in explicit:
            row[c].add(x, 1.0)
            row[1 - c].add(x, 0.0)
        for learner, explicit in zip([s] + others, [mine] + theirs):
            want = [[e.log_t_from_slogdet(prior, X[0]) for e in row] for row in explicit]
            np.testing.assert_allclose(learner.log_predictive(prior, X[0]), want, rtol=0,
                                       atol=TOL)


@pytest.mark.parametrize("predictive_path", ["plain floats", "qr"])
def test_one_batch_scale_keeps_a_near_class_to_its_digits(monkeypatch, predictive_path):
    """The bordered QR divides every statistic's ``x - location`` by the batch's largest
    one: with one class near 1e90, the record near the other class is scaled to about
    1e-90 there. Each class's density still equals scipy's of its own records, and
    records beyond every class (1e200, 1e300) keep the Student t tail of each."""
    monkeypatch.setattr(tuning, "NARROW_PREDICTIVE_WORK", 10**12
                        if predictive_path == "plain floats" else -1)
    d = 3
    prior = NormalWishartPrior(d)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, d)) + 1.0
    far = rng.normal(size=(40, d)) * 1e89 + 1e90
    s = FullStatistics(d, (2,))
    explicit = [ExplicitClass(d, 1.0), ExplicitClass(d, 1.0)]
    for near_x, far_x in zip(X, far):
        s.add(near_x, [1.0, 0.0])
        s.add(far_x, [0.0, 1.0])
        explicit[0].add(near_x, 1.0)
        explicit[1].add(far_x, 1.0)
    for x in (X[3] + 0.1, np.full(d, 2e90), np.array([1.0, 2.0, 3.0])):
        got = s.log_predictive(prior, x)
        for c, e in enumerate(explicit):
            want = e.log_t(prior, x)
            assert abs(got[c] - want) < 1e-9 * max(1.0, abs(want)), (x, c)
    # far beyond both: the log density falls by (df + d) log(1e100) from 1e200 to 1e300
    direction = np.array([0.6, -0.8, 0.0])
    near, beyond = (s.log_predictive(prior, a * direction) for a in (1e200, 1e300))
    np.testing.assert_allclose(beyond - near, -(prior.df(40.0) + d) * log(1e100), rtol=1e-12)


def test_full_statistics_refuse_bad_records_and_weights_unchanged():
    """The record and weight checks of :meth:`FullStatistics.add` (a value beyond 1e100,
    an infinite one, a negative, NaN or infinite weight) leave the statistics as they
    were; values each within 1e100 whose sum is not are learned as any other record, and a
    record whose values sum beyond the largest float is predicted, not taken as missing."""
    d = 20
    prior = NormalWishartPrior(d)
    X, labels = stream(d, 2, 30, seed=11)
    s = FullStatistics(d, (2,), 0.9)
    for x, c in zip(X, labels):
        s.add(x, np.eye(2)[c])
    before = s.copy()
    good = np.ones(d)
    for x, w in [(np.full(d, 1.1e100), [1.0, 0.0]), (np.r_[np.inf, good[1:]], [1.0, 0.0]),
                 (good, [-1.0, 0.0]), (good, [np.nan, 0.0]), (good, [np.inf, 0.0])]:
        with pytest.raises(ValueError):
            s.add(x, w)
        for got, want in zip(s.state, before.state):
            np.testing.assert_array_equal(got, want)
    big = np.full(d, 9e99)  # each value within 1e100, their sum not: learned
    s.add(big, [0.0, 1.0])
    batch = FullStatistics(d, (2,), 0.9)  # Chan et al.'s pooling of the same rows at once
    batch.add_many(np.vstack([X, big]), np.eye(2)[np.r_[labels, 1]])
    for got, want in zip((s.n, s.mean, s.scatter), (batch.n, batch.mean, batch.scatter)):
        for c in range(2):
            np.testing.assert_allclose(got[c], want[c], rtol=1e-9,
                                       atol=1e-9 * np.abs(want[c]).max())
    # 20 values of 1e307 sum beyond the largest float, those of 1e306 do not: both are
    # complete records far out, where the log density falls as -(df + d) log|x|
    near, beyond = (s.log_predictive(prior, np.full(d, a)) for a in (1e306, 1e307))
    np.testing.assert_allclose(beyond - near, -(prior.df(s.n) + d) * log(10.0), rtol=1e-9)
    with pytest.raises(ValueError, match="finite"):
        s.log_predictive(prior, np.r_[np.inf, good[1:]])



@pytest.mark.parametrize("d", [3, 7, 16])
def test_update_paths_agree_after_every_record(monkeypatch, d):
    """The two ways :meth:`FullStatistics.add` rotates a record into the factors (LAPACK's
    triangle-plus-row QR, numpy's QR of the stacked factors) learn the same stream into two
    statistics: after every record the same weights, means, scatters
    and Student t's to 1e-12 relative. Three rates (forgetting), a third class first seen mid-stream
    (``grow``), records missing a value (only forgotten) and features 1 and 2
    near-duplicates (``x_2 = x_1 + 1e-9`` noise: a near-singular scatter)."""
    prior = NormalWishartPrior(d)
    X, labels = stream(d, 3, 150, seed=d, missing=0.01)
    X[:, 2] = X[:, 1] + 1e-9 * np.random.default_rng(d).normal(size=len(X))
    labels[:60] = np.minimum(labels[:60], 1)  # the third class comes at record 60 or later
    rates = np.array([1.0, 0.95, 0.9])[:, None]
    learners = {path: FullStatistics(d, (3, 2), rates) for path in UPDATE_PATHS}
    for i, (x, c) in enumerate(zip(X, labels)):
        for path, features in UPDATE_PATHS.items():
            s = learners[path]
            if c >= s.shape[1]:
                s.grow(1, c + 1)
            monkeypatch.setattr(tuning, "TRIANGLE_UPDATE_FEATURES", features)
            weight = np.zeros(s.shape)
            weight[:, c] = 1.0
            s.add(x, weight)
        want = learners["qr"]
        after = np.nan_to_num(X[(i + 1) % len(X)], nan=0.5)
        for path in ("triangle",):
            got = learners[path]
            # the scatter, not its factor: fewer records than features leave a singular
            # scatter, whose triangular factors are many
            for a, b in zip((got.n, got.mean, got.scatter), (want.n, want.mean, want.scatter)):
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * np.abs(b).max(),
                                           err_msg=f"{path}, record {i}")
            assert np.all(np.diagonal(got.cholesky, 0, -2, -1) >= 0)
            np.testing.assert_allclose(got.log_predictive(prior, after),
                                       want.log_predictive(prior, after), rtol=1e-12,
                                       err_msg=f"{path}, record {i}")
    assert learners["qr"].shape == (3, 3) and learners["qr"].n[0, 2] > 0
