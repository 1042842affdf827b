"""Exactness of the naive Bayes family against independent brute force.

The brute forces here enumerate every one of the 2^N structures (ModelAveragedNB) or feature
subsets (BMANB) from raw records, with their own counting, lgamma formulas and scipy's Student
t — nothing from onlinebma.stats — so they check the factorisation, not just the arithmetic.
"""

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps
from scipy.special import logsumexp

from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
from onlinebma.stats import NormalGammaPrior
from tests.support.records import observed


def make_data(n, n_nominal, n_numeric=0, n_classes=3, missing=0.1, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(n_classes, size=n)
    rows = []
    for i in range(n):
        x = {}
        for j in range(n_nominal):
            # the first half of the features depend on the class
            if j < n_nominal // 2 and rng.random() < 0.7:
                v = int(y[i] + j) % 3
            else:
                v = int(rng.integers(2 + j % 3))
            x[f"c{j}"] = "abcde"[v]
        for j in range(n_numeric):
            x[f"z{j}"] = float(rng.normal(loc=(y[i] if j == 0 else 0.0), scale=1.0))
        for f in list(x):
            if rng.random() < missing:
                x[f] = None if rng.random() < 0.5 else float("nan")
                if rng.random() < 0.5:
                    del x[f]
        rows.append((x, f"k{y[i]}"))
    return rows


class Summary:
    """Raw counts and values per feature, computed from scratch."""

    def __init__(self, rows):
        self.classes = list(dict.fromkeys(y for _, y in rows))
        self.n = len(rows)
        self.class_count = {c: sum(1 for _, y in rows if y == c) for c in self.classes}
        self.features = list(dict.fromkeys(f for x, _ in rows for f in observed(x)))
        self.pairs = {f: [(observed(x)[f], y) for x, y in rows if f in observed(x)]
                      for f in self.features}

    def is_numeric(self, f):
        return isinstance(self.pairs[f][0][0], float)

    def domain(self, f):
        return list(dict.fromkeys(v for v, _ in self.pairs[f]))


def lgamma_ml(counts, a):
    r = len(counts)
    return math.lgamma(r * a) - math.lgamma(r * a + sum(counts)) + sum(
        math.lgamma(a + c) - math.lgamma(a) for c in counts
    )


def ng_closed_form(values, p):
    """Normal-Gamma log marginal likelihood (Murphy 2007, eq. 95) from raw values."""
    n = len(values)
    if n == 0:
        return 0.0
    v = np.asarray(values)
    xbar = v.mean()
    kn = p.kappa0 + n
    an = p.a0 + n / 2
    bn = p.b0 + 0.5 * ((v - xbar) ** 2).sum() + p.kappa0 * n * (xbar - p.mu0) ** 2 / (2 * kn)
    return (math.lgamma(an) - math.lgamma(p.a0) + p.a0 * math.log(p.b0) - an * math.log(bn)
            + 0.5 * math.log(p.kappa0 / kn) - n / 2 * math.log(2 * math.pi))


def ng_predictive(x, values, p):
    n = len(values)
    v = np.asarray(values, dtype=float)
    xbar = v.mean() if n else 0.0
    kn, an = p.kappa0 + n, p.a0 + n / 2
    mun = (p.kappa0 * p.mu0 + n * xbar) / kn
    bn = p.b0 + 0.5 * ((v - xbar) ** 2).sum() + p.kappa0 * n * (xbar - p.mu0) ** 2 / (2 * kn)
    scale = math.sqrt(bn * (kn + 1) / (an * kn))
    return float(sps.t.logpdf(x, df=2 * an, loc=mun, scale=scale))


def brute_force_ma(rows, x_test, prior="K2", alpha=1.0, ess=1.0, pi=0.5, ng=None):
    """Eq. 7 of Dash & Cooper: sum over all 2^N structures. Returns (proba, inclusion probs)."""
    ng = ng or NormalGammaPrior()
    s = Summary(rows)
    C = len(s.classes)
    per_feature = {}  # f -> {False: (log ML, log theta(y) list), True: ...}
    xo = observed(x_test)
    for f in s.features:
        pairs = s.pairs[f]
        if s.is_numeric(f):
            vals = [v for v, _ in pairs]
            by = {c: [v for v, y in pairs if y == c] for c in s.classes}
            ml0 = ng_closed_form(vals, ng)
            ml1 = sum(ng_closed_form(by[c], ng) for c in s.classes)
            if f in xo:
                t0 = [ng_predictive(xo[f], vals, ng)] * C
                t1 = [ng_predictive(xo[f], by[c], ng) for c in s.classes]
            else:
                t0 = t1 = [0.0] * C
        else:
            dom = s.domain(f)
            r = len(dom)
            a0, a1 = (alpha, alpha) if prior == "K2" else (ess / r, ess / (r * C))
            nv = [sum(1 for v, _ in pairs if v == d) for d in dom]
            nvy = {c: [sum(1 for v, y in pairs if v == d and y == c) for d in dom]
                   for c in s.classes}
            ml0 = lgamma_ml(nv, a0)
            ml1 = sum(lgamma_ml(nvy[c], a1) for c in s.classes)
            if f in xo and xo[f] in dom:
                k = dom.index(xo[f])
                t0 = [math.log((a0 + nv[k]) / (r * a0 + len(pairs)))] * C
                t1 = [math.log((a1 + nvy[c][k]) / (r * a1 + sum(nvy[c]))) for c in s.classes]
            else:
                t0 = t1 = [0.0] * C
        per_feature[f] = {False: (ml0, t0), True: (ml1, t1)}
    log_prior_y = [math.log((s.class_count[c] + alpha) / (s.n + alpha * C)) for c in s.classes]
    terms, weights = [], []
    for arcs in itertools.product([False, True], repeat=len(s.features)):
        log_ps = sum(math.log(pi) if a else math.log(1 - pi) for a in arcs)
        log_ml = sum(per_feature[f][a][0] for f, a in zip(s.features, arcs))
        pred = [log_prior_y[k] + sum(per_feature[f][a][1][k] for f, a in zip(s.features, arcs))
                for k in range(C)]
        terms.append([log_ps + log_ml + p for p in pred])
        weights.append((arcs, log_ps + log_ml))
    scores = logsumexp(np.array(terms), axis=0)
    proba = dict(zip(s.classes, np.exp(scores - logsumexp(scores))))
    lw = np.array([w for _, w in weights])
    post = np.exp(lw - logsumexp(lw))
    incl = {f: float(sum(p for (arcs, _), p in zip(weights, post) if arcs[i]))
            for i, f in enumerate(s.features)}
    return proba, incl


def plugin_gauss(x, vals, marginal_vals):
    floor = 1e-9 * np.var(marginal_vals)
    if len(vals) == 0:
        vals = marginal_vals
    var = np.var(vals) + floor
    return -0.5 * (math.log(2 * math.pi * var) + (x - np.mean(vals)) ** 2 / var)


def brute_force_bma(rows, x_test, gamma=1.0, alpha=1.0):
    """Eq. 11 of Wu et al. enumerated over all 2^N feature subsets, products over i = 1..N+1."""
    s = Summary(rows)
    C = len(s.classes)
    xo = observed(x_test)
    logp = {}  # f -> (list over training records of log P(x_ik), of log P(x_ik|y_i), test terms)
    for f in s.features:
        pairs = s.pairs[f]
        if s.is_numeric(f):
            vals = [v for v, _ in pairs]
            by = {c: [v for v, y in pairs if y == c] for c in s.classes}
            l0 = [plugin_gauss(v, vals, vals) for v, _ in pairs]
            l1 = [plugin_gauss(v, by[y], vals) for v, y in pairs]
            t0 = [plugin_gauss(xo[f], vals, vals)] * C if f in xo else [0.0] * C
            t1 = [plugin_gauss(xo[f], by[c], vals) for c in s.classes] if f in xo else [0.0] * C
        else:
            dom = s.domain(f)
            M = len(dom)
            n_y = {c: sum(1 for _, y in pairs if y == c) for c in s.classes}

            def p0(v, pairs=pairs, M=M):
                n_v = sum(1 for w, _ in pairs if w == v)
                return math.log((n_v + alpha) / (len(pairs) + alpha * M))

            def p1(v, c, pairs=pairs, M=M, n_y=n_y):
                n_vy = sum(1 for w, y in pairs if w == v and y == c)
                return math.log((n_vy + alpha) / (n_y[c] + alpha * M))

            l0 = [p0(v) for v, _ in pairs]
            l1 = [p1(v, y) for v, y in pairs]
            seen = f in xo and xo[f] in dom
            t0 = [p0(xo[f])] * C if seen else [0.0] * C
            t1 = [p1(xo[f], c) for c in s.classes] if seen else [0.0] * C
        log_beta = (len(pairs) + 1) * math.log(gamma)
        logp[f] = (sum(l0), sum(l1), t0, t1, log_beta)
    log_prior_y = [math.log((s.class_count[c] + alpha) / (s.n + alpha * C)) for c in s.classes]
    terms = []
    for used in itertools.product([False, True], repeat=len(s.features)):
        t = []
        for k in range(C):
            total = log_prior_y[k]
            for f, u in zip(s.features, used):
                L0, L1, t0, t1, log_beta = logp[f]
                total += (L1 + t1[k] - log_beta) if u else (L0 + t0[k])
            t.append(total)
        terms.append(t)
    scores = logsumexp(np.array(terms), axis=0)
    proba = dict(zip(s.classes, np.exp(scores - logsumexp(scores))))
    incl = {}
    for f in s.features:
        L0, L1, _, _, log_beta = logp[f]
        incl[f] = 1 / (1 + math.exp(-(L1 - log_beta - L0)))
    return proba, incl


TESTS = [
    {"c0": "a", "c1": "b", "c2": "c", "c3": "a", "z0": 0.5, "z1": -1.0},
    {"c0": "b", "c2": None, "c4": float("nan"), "z0": 2.0},  # missing features
    {"c1": "zzz", "c3": "b", "c5": "e"},  # a value never seen: skipped
    {},
]


def assert_close_dicts(a, b, tol=1e-9):
    assert a.keys() == b.keys()
    for k in a:
        assert abs(a[k] - b[k]) <= tol, (k, a[k], b[k])


@pytest.mark.parametrize("n_nominal, n_numeric, prior, pi, seed", [
    (10, 0, "K2", 0.5, 0),
    (8, 0, "BDeu", 0.3, 1),
    (6, 2, "K2", 0.5, 2),
    (5, 2, "BDeu", 0.7, 3),
])
def test_model_averaged_nb_equals_enumeration_of_all_structures(n_nominal, n_numeric, prior, pi,
                                                                seed):
    rows = make_data(60, n_nominal, n_numeric, seed=seed)
    model = ModelAveragedNB(prior=prior, ess=2.0, inclusion_prior=pi)
    for x, y in rows:
        model.learn_one(x, y)
    for x in TESTS:
        proba, incl = brute_force_ma(rows, x, prior=prior, ess=2.0, pi=pi)
        assert_close_dicts(model.predict_proba_one(x), proba)
    assert_close_dicts(model.feature_posteriors(), incl)


@pytest.mark.parametrize("n_nominal, n_numeric, gamma, seed", [
    (10, 0, 1.0, 0),
    (8, 0, 1.05, 4),
    (6, 2, 0.9, 5),
    (5, 3, 1.02, 6),
])
def test_bmanb_equals_enumeration_of_eq_11(n_nominal, n_numeric, gamma, seed):
    rows = make_data(60, n_nominal, n_numeric, seed=seed)
    model = BMANB(gamma=gamma)
    for x, y in rows:
        model.learn_one(x, y)
    for x in TESTS:
        proba, incl = brute_force_bma(rows, x, gamma=gamma)
        assert_close_dicts(model.predict_proba_one(x), proba)
    assert_close_dicts(model.feature_posteriors(), incl)


def test_naive_bayes_matches_sklearn_categorical_nb():
    from sklearn.naive_bayes import CategoricalNB

    rng = np.random.default_rng(7)
    X = rng.integers(4, size=(300, 6))
    X[:, 0] = (X[:, 0] + rng.integers(2, size=300)) % 4
    y = (X[:, 0] + X[:, 1] > 3).astype(int) + (X[:, 2] == 0)
    for alpha in (1.0, 0.5):
        ours = NaiveBayes(alpha=alpha)
        for row, label in zip(X, y):
            ours.learn_one({f"f{j}": f"v{v}" for j, v in enumerate(row)}, int(label))
        classes = sorted(set(y.tolist()))
        prior = np.array([(np.sum(y == c) + alpha) / (len(y) + alpha * len(classes))
                          for c in classes])
        sk = CategoricalNB(alpha=alpha, class_prior=prior).fit(X, y)
        for j in range(X.shape[1]):
            # no public view of the counts: compared to CategoricalNB's fitted parameters
            t = ours._tables[f"f{j}"]
            r = len(t.n_value)
            ours_log = np.array([[math.log((alpha + t.n_joint.get(f"v{v}", {}).get(c, 0))
                                           / (alpha * r + t.n_class[c]))
                                  for v in range(4)] for c in classes])
            np.testing.assert_allclose(ours_log, sk.feature_log_prob_[j], rtol=0, atol=1e-12)
        got = np.array([[ours.predict_proba_one({f"f{j}": f"v{v}" for j, v in enumerate(row)})[c]
                         for c in classes] for row in X[:50]])
        np.testing.assert_allclose(got, sk.predict_proba(X[:50]), rtol=0, atol=1e-12)
