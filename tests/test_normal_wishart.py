"""Normal–Wishart (BGe) statistics: every score against an independent computation.

- the marginal likelihood against numerical integration (d = 1), the house's Normal–Gamma code
  (d = 1) and the chain rule of Student t predictives evaluated by scipy from brute-force
  posterior parameters (d = 1, 2, 3, and 60);
- score equivalence: ``ML({u, v}) = ML({u}) + ML({v} | u)`` in both orders, the conditional
  family computed as a chain of conditional Student t's;
- streaming = batch = brute-force weighted statistics (with and without forgetting, with
  missing values, over batch axes), merge = the union;
- the edge terms' chain rule ``l_uv(after x) = l_uv(before) + log Q(x)_uv`` with missing values;
- near-duplicate features against 50-digit arithmetic, a 10^6-record stream, d = 60.
"""

import math
import pickle

import mpmath
import numpy as np
import pytest
from scipy import integrate, stats

from onlinebma import tuning
from onlinebma.stats.gaussian import NormalGammaPrior
from onlinebma.stats.normal_wishart import (
    FullStatistics,
    MomentStatistics,
    NormalWishartPrior,
    PairStatistics,
    nominal_parent_log_q,
    nominal_parent_log_weights,
)

# ------------------------------------------------------------------- brute-force references


def posterior(prior, X, idx, w=None):
    """Brute-force posterior of the features ``idx`` from the rows of ``X`` (weights ``w``):
    ``(n, location, R, df)`` straight from the definitions (Kuipers et al. 2014)."""
    X = np.asarray(X, dtype=float)[:, idx]
    w = np.ones(len(X)) if w is None else np.asarray(w, dtype=float)
    n = w.sum()
    k0, nu, T = prior.k0, prior.nu[idx], np.diag(prior.t[idx])
    if n == 0:
        return 0.0, nu, T, prior.df(0.0)
    m = (w[:, None] * X).sum(axis=0) / n
    C = X - m
    S = (w[:, None, None] * C[:, :, None] * C[:, None, :]).sum(axis=0)
    kappa = k0 + n
    R = T + S + k0 * n / kappa * np.outer(m - nu, m - nu)
    return n, (k0 * nu + n * m) / kappa, R, prior.df(n)


def scipy_log_t(prior, X, idx, x):
    """Log Student t predictive of ``x[idx]`` after the rows ``X`` (scipy's density)."""
    n, loc, R, df = posterior(prior, X, idx)
    kappa = prior.k0 + n
    shape = R * (kappa + 1) / (kappa * df)
    return stats.multivariate_t(loc=loc, shape=shape, df=df).logpdf(np.asarray(x)[idx])


def chain_rule(prior, X, idx):
    """``sum_i log t(x_i | x_1..x_{i-1})``: the marginal likelihood by the chain rule."""
    return sum(scipy_log_t(prior, X[:i], idx, X[i]) for i in range(len(X)))


def conditional_chain(prior, X, child, parent):
    """``log ML({child} | parent)`` as the chain of conditional Student t's of the child given
    the parent (the conditional of a bivariate t is a univariate t with one more degree of
    freedom)."""
    total = 0.0
    for i in range(len(X)):
        n, loc, R, df = posterior(prior, X[:i], [parent, child])
        kappa = prior.k0 + n
        sh = R * (kappa + 1) / (kappa * df)
        du = X[i, parent] - loc[0]
        cond_loc = loc[1] + sh[1, 0] / sh[0, 0] * du
        cond_var = (sh[1, 1] - sh[1, 0] ** 2 / sh[0, 0]) * (df + du * du / sh[0, 0]) / (df + 1)
        total += stats.t(df=df + 1, loc=cond_loc, scale=math.sqrt(cond_var)).logpdf(X[i, child])
    return total


def data(n, d, seed=0, missing=0.0):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(d, d))
    X = rng.normal(size=(n, d)) @ A + rng.normal(size=d)
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    return X


PRIOR_ARGS = [{}, {"k0": 0.7, "alpha_w": None, "mean": 0.3, "scale": 1.7}]


# ------------------------------------------------------------------------------- the prior


def test_prior_margins_and_defaults():
    p = NormalWishartPrior(4)
    assert p.alpha_w == 6.0 and p.alpha(1) == 3.0 and p.alpha(4) == 6.0
    # Kuipers et al.'s t: the prior predictive of each feature has variance scale^2.
    p = NormalWishartPrior(3, k0=0.5, scale=[1.0, 2.0, 3.0])
    df = p.df(0)
    var = p.t * (p.k0 + 1) / (p.k0 * df) * df / (df - 2)
    np.testing.assert_allclose(var, [1.0, 4.0, 9.0], rtol=1e-14)


def test_prior_compares_and_pickles_whatever_vectors_it_was_given():
    p = NormalWishartPrior(2, mean=np.array([0.0, 1.0]), scale=[1, 2])
    q = NormalWishartPrior(2, mean=(0.0, 1.0), scale=np.array([1.0, 2.0]))
    assert p == q and hash(p) == hash(q)
    r = pickle.loads(pickle.dumps(p))
    assert r == p
    np.testing.assert_array_equal(r.t, p.t)
    s = PairStatistics(2, shape=(2,), decay=0.9)
    s.add([1.0, 2.0], [1.0, 0.0])
    s2 = pickle.loads(pickle.dumps(s))
    s2.add([0.5, np.nan], [0.0, 1.0])
    s.add([0.5, np.nan], [0.0, 1.0])
    for a, b in zip(public_state(s), public_state(s2)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bad", [{"n_features": 0}, {"n_features": 2.5}, {"k0": 0.0},
                                 {"k0": math.inf}, {"alpha_w": 3.0}, {"scale": 0.0},
                                 {"scale": [1.0, -1.0]}, {"mean": math.nan},
                                 {"mean": [0.0, 0.0, 0.0]}])
def test_prior_refuses_bad_parameters(bad):
    with pytest.raises(ValueError):
        NormalWishartPrior(**{"n_features": 2, **bad})


# --------------------------------------------------------------------- marginal likelihood


@pytest.mark.parametrize("args", PRIOR_ARGS)
def test_univariate_marginal_against_numerical_integration(args):
    """``log ML`` of one feature = log of the integral over (mu, log var) of likelihood x
    N(mu | nu, var / k0) x InvGamma(var | alpha_1 / 2, t / 2), the densities written out."""
    prior = NormalWishartPrior(1, **args)
    x = [0.4, -1.1, 2.3, 0.9]
    a, t, k0, nu = prior.alpha(1), float(prior.t[0]), prior.k0, float(prior.nu[0])
    full = FullStatistics(1)
    full.add_many(np.array(x)[:, None])
    ours = float(full.log_marginal(prior))
    centre, log_2pi = sum(x) / len(x), math.log(2 * math.pi)

    def integrand(z, log_var):  # mu = centre + z sd: d mu d var = sd var dz d log_var
        var = math.exp(log_var)
        mu = centre + z * math.sqrt(var)
        lik = -0.5 * sum((xi - mu) ** 2 for xi in x) / var - 0.5 * len(x) * (log_2pi + log_var)
        mu_prior = -0.5 * k0 * (mu - nu) ** 2 / var - 0.5 * (log_2pi + log_var - math.log(k0))
        var_prior = (a / 2 * math.log(t / 2) - math.lgamma(a / 2) - (a / 2 + 1) * log_var
                     - t / (2 * var))
        return math.exp(lik + mu_prior + var_prior + 1.5 * log_var - ours)

    integral, err = integrate.dblquad(integrand, -15, 25, -12, 12, epsabs=1e-14, epsrel=1e-12)
    assert err < 1e-10
    assert abs(math.log(integral)) < 1e-9
    # The house's Normal–Gamma code is the same model for one feature: a0 = alpha/2, b0 = t/2.
    ng = NormalGammaPrior(mu0=nu, kappa0=k0, a0=a / 2, b0=t / 2)
    xs = np.array(x)
    assert abs(ours - ng.log_marginal(len(xs), xs.mean(), ((xs - xs.mean()) ** 2).sum())) < 1e-12


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("args", PRIOR_ARGS)
def test_marginal_is_the_chain_of_student_t_predictives(d, args):
    prior = NormalWishartPrior(d, **args)
    X = data(12, d, seed=d)
    full, pairs = FullStatistics(d), PairStatistics(d)
    full.add_many(X)
    pairs.add_many(X)
    for size in range(1, d + 1):
        for idx in [list(range(size)), list(range(d - size, d))[::-1]]:
            assert abs(full.log_marginal(prior, idx) - chain_rule(prior, X, idx)) < 1e-9
    for u in range(d):
        assert abs(pairs.log_marginal_singles(prior)[u] - chain_rule(prior, X, [u])) < 1e-9
        for v in range(d):
            if u != v:
                ref = chain_rule(prior, X, [u, v])
                assert abs(pairs.log_marginal_pairs(prior)[u, v] - ref) < 1e-9


@pytest.mark.parametrize("args", PRIOR_ARGS)
def test_score_equivalence_both_orders(args):
    prior = NormalWishartPrior(3, **args)
    X = data(15, 3, seed=4)
    pairs = PairStatistics(3)
    pairs.add_many(X)
    single = pairs.log_marginal_singles(prior)
    pair = pairs.log_marginal_pairs(prior)
    for u, v in [(0, 1), (0, 2), (1, 2)]:
        v_given_u = conditional_chain(prior, X, v, u)
        u_given_v = conditional_chain(prior, X, u, v)
        assert abs(single[u] + v_given_u - pair[u, v]) < 1e-9
        assert abs(single[v] + u_given_v - pair[u, v]) < 1e-9
        assert pair[u, v] == pair[v, u]
        # the edge term is the pair against its margins, here the singles
        l_uv = pairs.edge_log_weights(prior)[u, v]
        assert abs(l_uv - (v_given_u - single[v])) < 1e-9


def test_any_finite_value_is_predicted_with_the_student_t_tail():
    """Found by the hostile-stream property: a value of 1e300 made the quadratic form
    overflow (inf - inf). Far out along a direction the log density falls as
    -(df + d) log|x| (the Student t tail), so from 1e50 (computed without any scaling
    trouble) to 1e300 it must fall by (df + d) log(1e250), to 1e-9."""
    d = 3
    prior = NormalWishartPrior(d)
    X = data(15, d, seed=3)
    full = FullStatistics(d)
    full.add_many(X)
    direction = np.array([0.6, -0.8, 0.0])
    near, far = (full.log_predictive(prior, a * direction) for a in (1e50, 1e300))
    assert np.isfinite(far)
    assert abs((far - near) + (prior.df(15.0) + d) * math.log(1e250)) < 1e-9
    with pytest.raises(ValueError, match="finite"):
        full.log_predictive(prior, np.array([np.inf, 0.0, 0.0]))


def test_empty_statistics_score_zero():
    prior = NormalWishartPrior(3)
    assert FullStatistics(3).log_marginal(prior) == 0.0
    assert np.all(PairStatistics(3).log_marginal_pairs(prior) == 0.0)
    assert np.all(PairStatistics(3).edge_log_weights(prior) == 0.0)
    assert np.all(MomentStatistics(3).log_marginal(prior) == 0.0)
    assert FullStatistics(3).log_marginal(prior, []) == 0.0


# ---------------------------------------------------------------------------- predictives


@pytest.mark.parametrize("args", PRIOR_ARGS)
def test_predictives_against_scipy_with_missing_values(args):
    d = 4
    prior = NormalWishartPrior(d, **args)
    X = data(20, d, seed=7)
    full, pairs, moments = FullStatistics(d), PairStatistics(d), MomentStatistics(d)
    for s in (full, pairs, moments):
        s.add_many(X)
    x = np.array([0.3, np.nan, -1.4, 2.2])
    obs = [0, 2, 3]
    assert abs(full.log_predictive(prior, x) - scipy_log_t(prior, X, obs, x)) < 1e-9
    assert abs(full.log_predictive(prior, X[3]) - scipy_log_t(prior, X, list(range(d)), X[3])) \
        < 1e-9
    assert full.log_predictive(prior, np.full(d, np.nan)) == 0.0
    t1 = pairs.log_predictive_singles(prior, x)
    np.testing.assert_allclose(t1, moments.log_predictive(prior, x), rtol=1e-14)
    t2 = pairs.log_predictive_pairs(prior, x)
    for u in range(d):
        if u in obs:
            assert abs(t1[u] - scipy_log_t(prior, X, [u], x)) < 1e-9
        else:
            assert t1[u] == 0.0 and np.all(t2[u] == 0.0) and np.all(t2[:, u] == 0.0)
        for v in obs:
            if u in obs and u != v:
                assert abs(t2[u, v] - scipy_log_t(prior, X, [u, v], x)) < 1e-9
    q = pairs.log_q(prior, x)
    np.testing.assert_allclose(q, np.where(np.isnan(x)[:, None] | np.isnan(x)[None, :]
                                           | np.eye(d, dtype=bool), 0.0,
                                           t2 - t1[:, None] - t1[None, :]), atol=1e-12)


def test_full_learns_complete_records_only():
    X = data(10, 3, seed=2)
    Xm = np.vstack([X[:5], [[1.0, np.nan, 2.0]], X[5:]])
    a, b = FullStatistics(3), FullStatistics(3)
    a.add_many(X)
    for x in Xm:
        b.add(x)
    prior = NormalWishartPrior(3)
    assert abs(a.log_marginal(prior) - b.log_marginal(prior)) < 1e-10


def test_edge_terms_follow_log_q_with_missing_values():
    """Learning ``x`` adds ``log Q(x)_uv`` to ``l_uv`` exactly, pairs learned pairwise
    complete; and the singles grow by ``log t1``."""
    d = 4
    prior = NormalWishartPrior(d, k0=0.3)
    X = data(40, d, seed=11, missing=0.25)
    s = PairStatistics(d, shape=(2,))  # two classes
    labels = np.arange(len(X)) % 2
    for x, y in zip(X, labels):
        w = np.eye(2)[y]
        before_l = s.edge_log_weights(prior)
        before_1 = s.log_marginal_singles(prior)
        q = s.log_q(prior, x)
        t1 = s.log_predictive_singles(prior, x)
        s.add(x, weight=w)
        np.testing.assert_allclose(s.edge_log_weights(prior)[y], before_l[y] + q[y], rtol=0,
                                   atol=1e-9)
        np.testing.assert_array_equal(s.edge_log_weights(prior)[1 - y], before_l[1 - y])
        np.testing.assert_allclose(s.log_marginal_singles(prior)[y], before_1[y] + t1[y],
                                   rtol=0, atol=1e-9)
    l_uv = s.edge_log_weights(prior)
    np.testing.assert_array_equal(l_uv, np.swapaxes(l_uv, -1, -2))
    # and l_uv is the brute-force pair score against its margins over the pair's records
    for c in range(2):
        Xc = X[labels == c]
        for u, v in [(0, 1), (1, 3)]:
            Xuv = Xc[~np.isnan(Xc[:, u]) & ~np.isnan(Xc[:, v])]
            ref = (chain_rule(prior, Xuv, [u, v]) - chain_rule(prior, Xuv, [u])
                   - chain_rule(prior, Xuv, [v]))
            assert abs(l_uv[c, u, v] - ref) < 1e-9


# ---------------------------------------------------------------- streaming, batch, merge


def brute_pair_stats(X, w):
    """Pairwise-complete weight, means and scatter from the definitions."""
    d = X.shape[1]
    n, mean, S = np.zeros((d, d)), np.zeros((d, d)), np.zeros((d, d))
    for u in range(d):
        for v in range(d):
            keep = ~np.isnan(X[:, u]) & ~np.isnan(X[:, v])
            wk = w[keep]
            n[u, v] = wk.sum()
            if n[u, v] > 0:
                mu = (wk * X[keep, u]).sum() / n[u, v]
                mv = (wk * X[keep, v]).sum() / n[u, v]
                mean[u, v] = mu
                S[u, v] = (wk * (X[keep, u] - mu) * (X[keep, v] - mv)).sum()
    return n, mean, S


@pytest.mark.parametrize("block", [None, 7])
def test_streaming_equals_batch_equals_brute_force(monkeypatch, block):
    if block:  # several blocks per add_many, the tree reduction's odd lengths included
        monkeypatch.setattr(tuning, "GAUSSIAN_BLOCK", block * 2 * 3 * 9)
    d = 3
    X = data(61, d, seed=5, missing=0.2)
    labels = np.random.default_rng(1).integers(0, 3, len(X))
    decay = np.array([[1.0], [0.93]])  # members x classes = (2, 3)
    W = np.broadcast_to(np.eye(3)[labels][:, None, :], (len(X), 2, 3))
    for cls in (PairStatistics, FullStatistics, MomentStatistics):
        stream, batch = cls(d, (2, 3), decay), cls(d, (2, 3), decay)
        for x, w in zip(X[:10], W[:10]):
            stream.add(x, w)
            batch.add(x, w)
        for x, w in zip(X[10:], W[10:]):
            stream.add(x, w)
        batch.add_many(X[10:], W[10:])
        np.testing.assert_allclose(stream.n, batch.n, rtol=1e-12)
        np.testing.assert_allclose(stream.mean, batch.mean, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(stream.scatter if cls is not PairStatistics
                                   else stream.root, batch.scatter if cls is not PairStatistics
                                   else batch.root, rtol=1e-10, atol=1e-12)
        if cls is PairStatistics:
            for name in ("cross", "residual"):
                np.testing.assert_allclose(getattr(stream, name), getattr(batch, name),
                                           rtol=1e-10, atol=1e-12)
    # against the definitions, one member and class at a time
    pairs, full = PairStatistics(d, (2, 3), decay), FullStatistics(d, (2, 3), decay)
    pairs.add_many(X, W)
    full.add_many(X, W)
    complete = ~np.isnan(X).any(axis=1)
    for m, lam in enumerate(decay[:, 0]):
        for c in range(3):
            w = (labels == c) * lam ** np.arange(len(X) - 1, -1, -1.0)
            n, mean, S = brute_pair_stats(X, w)
            np.testing.assert_allclose(pairs.n[m, c], n, rtol=1e-12)
            np.testing.assert_allclose(pairs.mean[m, c], mean, rtol=1e-10, atol=1e-12)
            a, cr = pairs.root[m, c], pairs.cross[m, c]
            np.testing.assert_allclose(a * cr, S, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(np.diag(a) ** 2, np.diag(S), rtol=1e-10)
            S_vv = np.swapaxes(a, 0, 1) ** 2  # scatter of v over the pair's records
            e = pairs.residual[m, c]
            off = ~np.eye(d, dtype=bool)
            np.testing.assert_allclose((cr ** 2 + e ** 2)[off], S_vv[off], rtol=1e-10)
            nf, meanf, Sf = brute_pair_stats(X[complete], w[complete])
            np.testing.assert_allclose(full.n[m, c], nf[0, 0], rtol=1e-12)
            np.testing.assert_allclose(full.scatter[m, c], Sf, rtol=1e-10, atol=1e-12)


def test_batch_axes_score_each_slice_as_alone():
    """Statistics over (member, class) axes score every slice as statistics of that slice's
    records alone would (one-hot class weights, a forgetting rate per member)."""
    d = 3
    prior = NormalWishartPrior(d, k0=0.4, mean=[0.1, -0.2, 0.0], scale=[1.0, 2.0, 0.5])
    X = data(40, d, seed=14, missing=0.15)
    labels = np.random.default_rng(2).integers(0, 2, len(X))
    decay = np.array([[1.0], [0.95]])
    W = np.eye(2)[labels]
    x = np.array([0.3, np.nan, 1.1])
    for cls in (PairStatistics, FullStatistics, MomentStatistics):
        stacked = cls(d, (2, 2), decay)
        stacked.add_many(X, W[:, None, :])
        scores = {PairStatistics: lambda s: (s.edge_log_weights(prior), s.log_q(prior, x),
                                             s.log_marginal_pairs(prior),
                                             s.log_predictive_pairs(prior, x)),
                  FullStatistics: lambda s: (s.log_marginal(prior), s.log_marginal(prior, [2, 0]),
                                             s.log_predictive(prior, x)),
                  MomentStatistics: lambda s: (s.log_marginal(prior),
                                               s.log_predictive(prior, x))}[cls]
        together = scores(stacked)
        for m in range(2):
            for c in range(2):
                alone = cls(d, decay=decay[m, 0])
                alone.add_many(X, W[:, c])
                for a, b in zip(together, scores(alone)):
                    np.testing.assert_allclose(a[m, c], b, rtol=1e-12, atol=1e-12)


def test_merge_equals_learning_the_union():
    d = 3
    X = data(50, d, seed=9, missing=0.15)
    for cls in (PairStatistics, FullStatistics, MomentStatistics):
        whole, a, b = cls(d), cls(d), cls(d)
        whole.add_many(X)
        a.add_many(X[:23])
        b.add_many(X[23:])
        a.merge(b)
        np.testing.assert_allclose(a.n, whole.n, rtol=1e-12)
        np.testing.assert_allclose(a.mean, whole.mean, rtol=1e-12)
        prior = NormalWishartPrior(d)
        if cls is PairStatistics:
            got, want = a.log_marginal_pairs(prior), whole.log_marginal_pairs(prior)
        else:
            got, want = a.log_marginal(prior), whole.log_marginal(prior)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError):
        PairStatistics(d).merge(PairStatistics(d + 1))
    with pytest.raises(ValueError):
        PairStatistics(d).merge(FullStatistics(d))


def test_nominal_parent_against_normal_gamma():
    """The conditional Gaussian family: one univariate Gaussian of the child per value of the
    parent, against the child's own family over the same records; each family scored by the
    house's Normal–Gamma code (a0 = alpha_1 / 2, b0 = t / 2)."""
    prior = NormalWishartPrior(2, k0=0.2, scale=[1.0, 3.0])
    rng = np.random.default_rng(3)
    values = rng.integers(0, 3, 30)
    X = rng.normal(size=(30, 2)) + values[:, None] * [1.0, -2.0]
    X[rng.random(X.shape) < 0.2] = np.nan
    s = MomentStatistics(2, shape=(3,))
    s.add_many(X, np.eye(3)[values])
    got = nominal_parent_log_weights(s, prior, value_axis=0)

    def score(ng, x):
        return ng.log_marginal(len(x), x.mean(), ((x - x.mean()) ** 2).sum()) if len(x) else 0.0

    for v in range(2):
        ng = NormalGammaPrior(mu0=0.0, kappa0=0.2, a0=prior.alpha(1) / 2, b0=prior.t[v] / 2)
        xs = X[:, v]
        keep = ~np.isnan(xs)
        ref = sum(score(ng, xs[keep & (values == j)]) for j in range(3)) - score(ng, xs[keep])
        assert abs(got[v] - ref) < 1e-10


def test_nominal_parent_log_q_is_the_increment_of_the_edge_weight():
    prior = NormalWishartPrior(3, k0=0.5)
    rng = np.random.default_rng(8)
    s = MomentStatistics(3, shape=(2, 4))  # classes x values of the parent
    for _ in range(30):
        y, j = rng.integers(0, 2), rng.integers(0, 4)
        x = rng.normal(size=3) + j
        x[rng.random(3) < 0.2] = np.nan
        before = nominal_parent_log_weights(s, prior)
        q = nominal_parent_log_q(s, prior, x, j)
        w = np.zeros((2, 4))
        w[y, j] = 1.0
        s.add(x, w)
        np.testing.assert_allclose(nominal_parent_log_weights(s, prior)[y], before[y] + q[y],
                                   rtol=0, atol=1e-10)
        assert np.all(q[:, np.isnan(x)] == 0.0)
    with pytest.raises(ValueError):
        nominal_parent_log_q(s, prior, np.zeros(3), 4)


def public_state(s):
    """Every array a statistics object shows."""
    names = {PairStatistics: ("root", "cross", "residual"), FullStatistics: ("cholesky",),
             MomentStatistics: ("scatter",)}[type(s)]
    return (s.n, s.mean) + tuple(getattr(s, name) for name in names)


def test_grow_adds_empty_statistics():
    """A class (or a parent's value) first seen mid-stream: growing the axis then learning
    equals having had the longer axis from the start."""
    X = data(20, 3, seed=12, missing=0.1)
    labels = [0] * 8 + [0, 1, 2, 1, 0, 2, 2, 1, 0, 0, 1, 2]
    for cls in (PairStatistics, FullStatistics, MomentStatistics):
        grown, whole = cls(3, (2, 1), decay=[[0.9], [1.0]]), cls(3, (2, 3), [[0.9], [1.0]])
        for i, (x, y) in enumerate(zip(X, labels)):
            if i == 8:
                grown.grow(1, 3)
            grown.add(x, np.eye(grown.shape[1])[y])
            whole.add(x, np.eye(3)[y])
        assert grown.shape == (2, 3)
        for a, b in zip(public_state(grown), public_state(whole)):
            np.testing.assert_array_equal(a, b)
        with pytest.raises(ValueError):
            grown.grow(1, 2)


def test_scores_are_equivariant_under_rescaling_up_to_the_largest_values():
    """Features in units of 1e99 with a prior in the same units: the edge terms and log Q are
    unchanged, each log ML moves by -n log(scale) per feature, nothing overflows."""
    d, scale = 3, 1e99
    X = data(30, d, seed=13, missing=0.1)
    x = np.array([0.2, np.nan, -0.7])
    unit, big = NormalWishartPrior(d, mean=0.1), NormalWishartPrior(d, mean=0.1 * scale,
                                                                      scale=scale)
    for cls in (PairStatistics, FullStatistics):
        small, large = cls(d), cls(d)
        small.add_many(X[:20])
        large.add_many(X[:20] * scale)
        for row in X[20:]:
            small.add(row)
            large.add(row * scale)
        if cls is PairStatistics:
            np.testing.assert_allclose(large.edge_log_weights(big),
                                       small.edge_log_weights(unit), rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(large.log_q(big, x * scale), small.log_q(unit, x),
                                       rtol=1e-12, atol=1e-12)
            shift = -small.n * 2 * math.log(scale)
            np.fill_diagonal(shift, -np.diag(small.n) * math.log(scale))
            np.testing.assert_allclose(large.log_marginal_pairs(big),
                                       small.log_marginal_pairs(unit) + shift, rtol=1e-13)
        else:
            got = large.log_marginal(big)
            assert np.isfinite(got)
            np.testing.assert_allclose(got, small.log_marginal(unit)
                                       - small.n * d * math.log(scale), rtol=1e-13)
            np.testing.assert_allclose(large.log_predictive(big, x * scale),
                                       small.log_predictive(unit, x) - 2 * math.log(scale),
                                       rtol=1e-12)


# ------------------------------------------------------------------------------- numerics


def mp_log_ml_pair(prior, X, u, v):
    """``log ML({u, v})`` and ``l_uv`` in 50-digit arithmetic from the raw records."""
    mpmath.mp.dps = 50
    mpf = mpmath.mpf
    xu = [mpf(float(a)) for a in X[:, u]]
    xv = [mpf(float(a)) for a in X[:, v]]
    n = len(xu)
    k0 = mpf(prior.k0)
    kappa = k0 + n
    mu, mv = sum(xu) / n, sum(xv) / n
    Suu = sum((a - mu) ** 2 for a in xu)
    Svv = sum((b - mv) ** 2 for b in xv)
    Suv = sum((a - mu) * (b - mv) for a, b in zip(xu, xv))
    f = k0 * n / kappa
    bu, bv = mu - mpf(prior.nu[u]), mv - mpf(prior.nu[v])
    tu, tv = mpf(prior.t[u]), mpf(prior.t[v])
    Ruu, Rvv, Ruv = tu + Suu + f * bu * bu, tv + Svv + f * bv * bv, Suv + f * bu * bv
    det = Ruu * Rvv - Ruv * Ruv
    a1, a2 = mpf(prior.alpha(1)), mpf(prior.alpha(2))

    def single(t, r):
        return (-n / mpf(2) * mpmath.log(mpmath.pi) + mpmath.log(k0 / kappa) / 2
                + mpmath.loggamma((a1 + n) / 2) - mpmath.loggamma(a1 / 2)
                + a1 / 2 * mpmath.log(t) - (a1 + n) / 2 * mpmath.log(r))

    pair = (-n * mpmath.log(mpmath.pi) + mpmath.log(k0 / kappa)
            + mpmath.loggamma((a2 + n) / 2) + mpmath.loggamma((a1 + n) / 2)
            - mpmath.loggamma(a2 / 2) - mpmath.loggamma(a1 / 2)
            + a2 / 2 * mpmath.log(tu * tv) - (a2 + n) / 2 * mpmath.log(det))
    return pair, pair - single(tu, Ruu) - single(tv, Rvv), (Suu, Svv, Suv, Ruu, Rvv, Ruv)


def test_near_duplicate_features_keep_their_digits():
    """Features 1 and 2 are near-duplicates (not the leading pair of the full factor): their
    scores match 50-digit arithmetic to a few units in the last place (5e-11 nats out of 2.6e4),
    where ``|R|`` as ``ab - c^2`` from the correctly rounded ``R`` is off by more than 5e-9 (and
    a QR with ``T`` above the scatter's factor by 2.5e-10)."""
    rng = np.random.default_rng(0)
    n = 10_000
    xu = rng.normal(size=n) * 3.0 + 1.0
    X = np.column_stack([rng.normal(size=n), xu, xu + 1e-9 * rng.normal(size=n)])
    prior = NormalWishartPrior(3)
    pairs, full = PairStatistics(3), FullStatistics(3)
    for i in range(0, n, 1000):  # streamed in blocks
        pairs.add_many(X[i:i + 1000])
        full.add_many(X[i:i + 1000])
    ref_pair, ref_l, sums = mp_log_ml_pair(prior, X, 1, 2)
    tol = 2e-15 * abs(float(ref_pair))  # a few units in the last place of the score: 5e-11
    assert abs(pairs.log_marginal_pairs(prior)[1, 2] - float(ref_pair)) < tol
    assert abs(pairs.edge_log_weights(prior)[1, 2] - float(ref_l)) < tol
    assert abs(full.log_marginal(prior, [1, 2]) - float(ref_pair)) < tol
    assert abs(full.log_marginal(prior, [2, 1]) - float(ref_pair)) < tol
    # The test can fail: |R| as ab - c^2 from the correctly rounded R misses it by far more.
    Ruu, Rvv, Ruv = sums[3:]
    naive_det = float(Ruu) * float(Rvv) - float(Ruv) ** 2
    naive_error = (prior.alpha(2) + n) / 2 * abs(math.log(naive_det)
                                                 - float(mpmath.log(Ruu * Rvv - Ruv ** 2)))
    assert naive_error > 100 * tol
    # the last records one by one: the same digits, and the t2 / t1 chain rule still exact
    stream = PairStatistics(3)
    stream.add_many(X[:-500])
    for x in X[-500:]:
        stream.add(x)
    assert abs(stream.edge_log_weights(prior)[1, 2] - float(ref_l)) < tol
    x = np.array([0.0, 0.5, 0.5 + 1e-9])
    before = stream.edge_log_weights(prior)[1, 2]
    q = stream.log_q(prior, x)[1, 2]
    stream.add(x)
    assert abs(stream.edge_log_weights(prior)[1, 2] - (before + q)) < tol


def test_wide_full_gaussian_is_the_chain_of_predictives():
    d = 60
    prior = NormalWishartPrior(d)
    X = data(80, d, seed=6)
    s, seq = FullStatistics(d), 0.0
    for x in X:
        seq += s.log_predictive(prior, x)
        s.add(x)
    ml = s.log_marginal(prior)
    assert np.isfinite(ml) and abs(ml - seq) < 1e-9 * abs(ml)
    assert abs(s.log_predictive(prior, X[0]) - scipy_log_t(prior, X, list(range(d)), X[0])) \
        < 1e-9 * abs(s.log_predictive(prior, X[0]))
    pairs = PairStatistics(d)
    pairs.add_many(X)
    np.testing.assert_allclose(pairs.log_marginal_pairs(prior)[3, 7],
                               s.log_marginal(prior, [3, 7]), rtol=1e-12)


@pytest.mark.slow
def test_long_stream_with_and_without_forgetting():
    rng = np.random.default_rng(2)
    N, d = 1_000_000, 3
    X = rng.normal(size=(N, d)) * [1.0, 1e3, 1e-3] + [5.0, -2e4, 0.0]
    X[:, 2] += X[:, 0] * 1e-3
    for decay in (1.0, 0.999):
        pairs, full = PairStatistics(d, decay=decay), FullStatistics(d, decay=decay)
        for i in range(0, N, 50_000):
            pairs.add_many(X[i:i + 50_000])
            full.add_many(X[i:i + 50_000])
        prior = NormalWishartPrior(d)
        scores = [pairs.log_marginal_pairs(prior), pairs.edge_log_weights(prior),
                  full.log_marginal(prior), full.log_predictive(prior, X[-1]),
                  pairs.log_q(prior, X[-1])]
        assert all(np.all(np.isfinite(s)) for s in scores)
        np.testing.assert_allclose(pairs.log_marginal_pairs(prior)[0, 2],
                                   full.log_marginal(prior, [0, 2]), rtol=1e-12)
        if decay == 1.0:
            assert pairs.n[0, 1] == N and full.n == N
            np.testing.assert_allclose(full.mean, X.mean(axis=0), rtol=1e-12)
            C = X - X.mean(axis=0)
            np.testing.assert_allclose(full.scatter, C.T @ C, rtol=1e-9)
        else:
            assert abs(full.n - 1 / (1 - decay)) < 1e-6


# ----------------------------------------------------------------------------- bad input


def test_bad_input_is_refused_and_changes_nothing():
    s = PairStatistics(2, shape=(2,), decay=0.9)
    s.add([1.0, 2.0], [1.0, 0.0])
    before = s.copy()
    for call in [lambda: s.add([1.0, np.inf]), lambda: s.add([1.0, 2.0, 3.0]),
                 lambda: s.add([1.0, 2.0], [1.0, -1.0]), lambda: s.add([1.0, 2.0], [1.0] * 3),
                 lambda: s.add([1e101, 0.0]),
                 lambda: s.add_many([[1.0, 2.0], [np.inf, 0.0]]),
                 lambda: s.add_many([[1.0, 2.0]], weights=[np.nan]),
                 lambda: s.add_many([1.0, 2.0])]:
        with pytest.raises(ValueError):
            call()
        for a, b in zip(public_state(s), public_state(before)):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError):  # the arrays shown are read only
        s.n[0, 0, 0] = 5.0
    with pytest.raises(ValueError):
        PairStatistics(2, decay=1.5)
    with pytest.raises(ValueError):
        FullStatistics(2).log_marginal(NormalWishartPrior(3))
    with pytest.raises(ValueError):
        FullStatistics(2).log_marginal(NormalWishartPrior(2), [0, 0])


# ------------------------------------------------------------------ plain-float record paths


@pytest.mark.parametrize("d, shape, decay", [(1, (), 1.0), (3, (2,), 0.97), (5, (3, 2), 0.9),
                                             (6, (1, 2), 0.99)])
def test_plain_float_record_paths_equal_the_array_paths(monkeypatch, d, shape, decay):
    """The same records predicted by the plain-float rotations and learned by LAPACK's
    triangle-plus-row QR (thresholds above any work), and both by numpy's QR (thresholds
    below any): the same statistics and Student t's to rounding, each equal to scipy's
    density of the weighted records; records with a missing value, far values and a class
    slot never learned."""
    rng = np.random.default_rng(d)
    X = data(60, d, seed=d, missing=0.02)
    X[7] *= 1e3  # a far record: the factors must take it as a sum of squares
    k = int(np.prod(shape, dtype=int))
    labels = rng.integers(max(k - 1, 1), size=len(X))  # the last slot never learned (k > 1)
    prior = NormalWishartPrior(d)
    paths = {}
    for name, bound, features in (("python", 10**12, 10**12), ("numpy", -1, -1)):
        monkeypatch.setattr(tuning, "NARROW_PREDICTIVE_WORK", bound)
        monkeypatch.setattr(tuning, "TRIANGLE_UPDATE_FEATURES", features)
        s, preds = FullStatistics(d, shape, decay), []
        for x, c in zip(X, labels):
            preds.append(s.log_predictive(prior, np.nan_to_num(x, nan=0.5)))
            preds.append(s.log_predictive(prior, x))
            s.add(x, np.eye(k)[c].reshape(shape) if k > 1 else 1.0)
        preds.append(s.log_predictive(prior, np.full(d, 1e250)))  # any finite value
        paths[name] = (s, np.array(preds))
    (a, pa), (b, pb) = paths["python"], paths["numpy"]
    for got, want in zip(public_state(a), public_state(b)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
    assert np.all(np.isfinite(pa))
    np.testing.assert_allclose(pa, pb, rtol=1e-10, atol=1e-10)
    # each slot's density is scipy's of its own records, weighted by decay^age
    x = X[-1].copy()
    x[np.isnan(x)] = 0.1
    complete = ~np.isnan(X).any(axis=1)
    ages = decay ** np.arange(len(X) - 1, -1, -1.0)
    got = a.log_predictive(prior, x).reshape(-1)
    for slot in range(k):
        mine = complete & ((labels == slot) if k > 1 else True)
        idx = list(range(d))
        n, loc, R, df = posterior(prior, X[mine], idx, ages[mine])
        kappa = prior.k0 + n
        want = (stats.multivariate_t(loc=loc, shape=R * (kappa + 1) / (kappa * df), df=df)
                .logpdf(x) if n > 0 else scipy_log_t(prior, X[:0], idx, x))
        assert abs(got[slot] - want) < 1e-8 * max(1.0, abs(want))
