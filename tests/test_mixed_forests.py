"""The mixed nominal/numeric forest average (onlinebma.stats.mixed_forests on the statistics of
onlinebma.tan.mixed_statistics) against a brute force over every structure.

The reference enumerates every allowed DAG in which each feature has at most one feature
parent (tests/support/arborescences.py; a numeric parent of a nominal child is not allowed),
scores each by its families' marginal likelihoods computed *from the raw (weighted) records*
(Dirichlet margins with lgamma for nominal families; the Normal–Wishart formula with
numpy's slogdet and scipy's multigammaln for numeric ones), and predicts

    P(c, x | D) = sum_G P(G) P(D + (x, c) | G) / sum_G P(G) P(D | G)

(without forgetting), or, with forgetting, by the dynamic model average over the DAGs (each
DAG's weight multiplied by its predictive P(y, x | G, D) = P(D + (x, y) | G) / P(D | G) on the
decayed records, then raised to structure_decay). No matrix-tree theorem, no chain rule of the
learner, no statistics of the learner. With missing values each family is scored on the
records where its features are observed (docs/tan.md's meaning) and a record is predicted by
the structures of its observed features. With nominal features only, the average must be
ModelAveragedTAN's.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy.special import gammaln, multigammaln

from onlinebma.stats.mixed_forests import edge_posteriors, learned_weights, log_joint_scores
from onlinebma.stats.normal_wishart import NormalWishartPrior
from onlinebma.tan.mixed_statistics import MixedStatistics
from tests.support.arborescences import ROOT, forests, trees

PRIOR_MEAN_SHIFT = 0.2


class Reference:
    """Family log marginal likelihoods of weighted records, straight from the formulas."""

    def __init__(self, k, r, d, ess, nu, t, k0, alpha):
        self.k, self.r, self.d = k, list(r), d
        self.a = len(self.r)
        self.ess, self.nu, self.t, self.k0, self.alpha = ess, nu, t, k0, alpha

    def nominal(self, ys, xs, w, v, u):
        """Nominal ``v`` with nominal parent ``u`` (or ``None``), summed over classes."""
        a_c = self.ess / self.k
        total = 0.0
        for c in range(self.k):
            sel = ys == c
            if u is None:
                prior = a_c / self.r[v]
                counts = np.array([w[sel & (xs[:, v] == b)].sum() for b in range(self.r[v])])
                total += (gammaln(a_c) - gammaln(a_c + w[sel].sum())
                          + (gammaln(prior + counts) - gammaln(prior)).sum())
                continue
            cell = a_c / (self.r[u] * self.r[v])
            for b in range(self.r[u]):
                s = sel & (xs[:, u] == b)
                counts = np.array([w[s & (xs[:, v] == e)].sum() for e in range(self.r[v])])
                total += (gammaln(a_c / self.r[u]) - gammaln(a_c / self.r[u] + w[s].sum())
                          + (gammaln(cell + counts) - gammaln(cell)).sum())
        return total

    def gaussian(self, z, w, dims):
        """``log ML`` of the numeric columns ``dims`` of the records ``z`` (weights ``w``)
        under the margin of the Normal–Wishart prior."""
        dims = list(dims)
        dd = len(dims)
        n = w.sum()
        nu = self.nu[dims]
        t = self.t[np.ix_(dims, dims)]
        alpha = self.alpha - self.d + dd
        x = z[:, dims]
        mean = (w[:, None] * x).sum(axis=0) / n if n > 0 else np.zeros(dd)
        centred = x - mean
        scatter = (w[:, None, None] * centred[:, :, None] * centred[:, None, :]).sum(axis=0)
        kappa = self.k0 + n
        r = t + scatter + self.k0 * n / kappa * np.outer(mean - nu, mean - nu)
        return (-n * dd / 2 * math.log(math.pi) + dd / 2 * math.log(self.k0 / kappa)
                + multigammaln((alpha + n) / 2, dd) - multigammaln(alpha / 2, dd)
                + alpha / 2 * np.linalg.slogdet(t)[1] - (alpha + n) / 2 * np.linalg.slogdet(r)[1])

    def observed(self, xs, z, v):
        return xs[:, v] >= 0 if v < self.a else ~np.isnan(z[:, v - self.a])

    def family(self, ys, xs, z, w, v, u, on):
        """``log ML`` of feature ``v``'s family with feature parent ``u`` (``None``: root) on
        the records ``on`` (a mask)."""
        a = self.a
        ys, xs, z, w = ys[on], xs[on], z[on], w[on]
        if v < a:
            return self.nominal(ys, xs, w, v, u)
        total = 0.0
        for c in range(self.k):
            sel = ys == c
            if u is None:
                total += self.gaussian(z[sel], w[sel], [v - a])
            elif u >= a:
                total += (self.gaussian(z[sel], w[sel], [u - a, v - a])
                          - self.gaussian(z[sel], w[sel], [u - a]))
            else:
                for b in range(self.r[u]):
                    s = sel & (xs[:, u] == b)
                    total += self.gaussian(z[s], w[s], [v - a])
        return total

    def classes(self, ys, w):
        a_c = self.ess / self.k
        counts = np.array([w[ys == c].sum() for c in range(self.k)])
        return (gammaln(self.ess) - gammaln(self.ess + w.sum())
                + (gammaln(a_c + counts) - gammaln(a_c)).sum())

    def table(self, ys, xs, z, w):
        """``(class term, F)``: ``F[v, p]`` the score of ``v`` with parent ``p`` (``p = N``:
        root; ``-inf`` where not allowed): its own family on the records where it is observed,
        plus, with a parent, its family given ``p`` against its own family, both on the
        records where ``v`` and ``p`` are observed (the meaning of missing values)."""
        n = self.a + self.d
        f = np.full((n, n + 1), -np.inf)
        for v in range(n):
            seen_v = self.observed(xs, z, v)
            f[v, n] = self.family(ys, xs, z, w, v, None, seen_v)
            for u in range(n):
                if u != v and not (u >= self.a > v):
                    both = seen_v & self.observed(xs, z, u)
                    f[v, u] = (f[v, n] + self.family(ys, xs, z, w, v, u, both)
                               - self.family(ys, xs, z, w, v, None, both))
        return self.classes(ys, w), f


@functools.lru_cache(maxsize=64)
def allowed_structures(a, n, kind):
    enum = forests if kind == "forests" else trees
    out = [p for p in enum(n) if all(p[v] == ROOT or p[v] < a for v in range(a))]
    parents = np.array(out, dtype=np.int64)
    return np.where(parents == ROOT, n, parents)


def structure_scores(table, parents, features=None):
    """Each structure's sum of family scores; ``parents`` over ``features`` (all when None;
    index ``len(features)`` is the root)."""
    cls, f = table
    n = f.shape[0]
    if features is None:
        features = np.arange(n)
    mapped = np.append(features, n)[parents]
    return cls + f[features[None, :], mapped].sum(axis=1)


def make_stream(seed, k, r, d, rows, missing=0.0):
    """Records whose numeric values depend on the class, on a nominal feature and on each
    other, and whose nominal values depend on the class and on each other; each value
    missing (code -1, NaN) with probability ``missing``."""
    rng = np.random.default_rng(seed)
    ys = rng.integers(0, k, rows)
    a = len(r)
    xs = np.zeros((rows, a), dtype=np.int64)
    for i in range(rows):
        for u in range(a):
            if u and rng.random() < 0.6:
                xs[i, u] = xs[i, u - 1] % r[u]
            elif rng.random() < 0.5:
                xs[i, u] = ys[i] % r[u]
            else:
                xs[i, u] = rng.integers(0, r[u])
    z = rng.normal(0.0, 1.0, (rows, d))
    for j in range(d):
        z[:, j] += 0.8 * ys
        if a:
            z[:, j] += 0.7 * xs[:, j % a]
        if j:
            z[:, j] += 0.9 * z[:, j - 1]
    xs[rng.random(xs.shape) < missing] = -1
    z[rng.random(z.shape) < missing] = np.nan
    return ys, xs, z


def setting(k, r, d, seed, scale=1.0):
    """``MixedStatistics``' keyword arguments: an ``ess`` and a Normal–Wishart prior with a
    random mean and per-feature scales."""
    rng = np.random.default_rng(100 + seed)
    prior = NormalWishartPrior(d, k0=0.7, alpha_w=d + 1.5,
                               mean=rng.normal(0.0, PRIOR_MEAN_SHIFT, d),
                               scale=scale * rng.uniform(0.5, 2.0, d))
    return {"ess": 2.0, "numeric_prior": prior}


def reference(k, r, d, setup):
    p = setup["numeric_prior"]
    return Reference(k, r, d, setup["ess"], p.nu, np.diag(p.t), p.k0, p.alpha_w)


CASES = [  # (classes, nominal domains, numeric features, seed)
    (2, [2, 3], 2, 1),
    (3, [2], 3, 2),
    (2, [3, 2, 2], 2, 3),
    (3, [], 4, 4),
    (2, [2, 2], 3, 5),
    (3, [3, 2, 2, 2], 1, 6),
]


def run_learner(k, r, d, prior, stream, kind, edge_prior, decay, structure_decay):
    """Prequential log P(c, x | D) of every record from the module, and its ``l`` after
    each record with the recomputation from the statistics."""
    stats = MixedStatistics(k, r, d, decay=decay, **prior)
    lw = stats.log_weights()
    scores, weights = [], []
    for y, x, z in zip(*stream):
        seen, base, log_q = stats.record_terms(x, z)
        scores.append(log_joint_scores(lw[np.ix_(seen, seen)], base,
                                       log_q[:, seen[:, None], seen], math.log(edge_prior),
                                       kind))
        lw = learned_weights(lw, log_q[y], structure_decay)
        stats.learn(y, x, z)
        weights.append((lw, stats.log_weights()))
    return np.array(scores), weights


def run_reference(k, r, d, prior, stream, kind, edge_prior, decay, structure_decay):
    """The same scores by the brute force over every allowed structure."""
    ref = reference(k, r, d, prior)
    n = len(r) + d
    ys_all, xs_all, z_all = stream
    complete = (xs_all >= 0).all() and not np.isnan(z_all).any()
    assert complete or (decay == 1.0 and structure_decay == 1.0)
    parents = allowed_structures(len(r), n, kind)
    dma = np.zeros(len(parents))  # log weights of the dynamic model average
    out = []
    for t in range(len(ys_all)):
        # the structures of the record's observed features
        seen = np.flatnonzero(np.append(xs_all[t] >= 0, ~np.isnan(z_all[t])))
        parents = allowed_structures(int((seen < len(r)).sum()), len(seen), kind)
        log_prior = (np.sum(parents != len(seen), axis=1) * math.log(edge_prior)
                     if kind == "forests" else np.zeros(len(parents)))
        w = decay ** np.arange(t - 1, -1, -1, dtype=float)  # the records before t, forgotten
        ys, xs, z = ys_all[:t], xs_all[:t], z_all[:t]
        before = structure_scores(ref.table(ys, xs, z, w), parents, seen)
        # the record as each class, at weight 1 beside the decayed ones
        preds = []
        for c in range(k):
            after = structure_scores(ref.table(np.append(ys, c), np.vstack([xs, xs_all[t]]),
                                               np.vstack([z, z_all[t]]), np.append(w, 1.0)),
                                     parents, seen)
            preds.append(after - before)
        preds = np.array(preds)  # (K, structures): log P(c, x | G, D)
        if decay == 1.0 and structure_decay == 1.0:
            log_post = log_prior + before  # P(G | D) from the marginal likelihoods
        else:
            log_post = log_prior + dma
        top = log_post.max()
        norm = top + math.log(np.exp(log_post - top).sum())
        joint = log_post[None, :] - norm + preds
        m = joint.max(axis=1, keepdims=True)
        out.append((m + np.log(np.exp(joint - m).sum(axis=1, keepdims=True)))[:, 0])
        if complete:  # (with missing values only the case without forgetting is defined)
            dma = structure_decay * (dma + preds[ys_all[t]])
    return np.array(out)


def assert_log_close(got, want, rel=1e-9):
    got, want = np.asarray(got), np.asarray(want)
    assert np.all(np.abs(got - want) <= rel * np.maximum(1.0, np.abs(want))), (
        np.abs(got - want).max(), got, want)


@pytest.mark.parametrize("kind", ["forests", "trees"])
@pytest.mark.parametrize("case", CASES)
def test_average_equals_every_structure_without_forgetting(case, kind):
    k, r, d, seed = case
    prior = setting(k, r, d, seed)
    stream = make_stream(seed, k, r, d, 14)
    got, weights = run_learner(k, r, d, prior, stream, kind, 0.6, 1.0, 1.0)
    want = run_reference(k, r, d, prior, stream, kind, 0.6, 1.0, 1.0)
    assert_log_close(got, want)
    # the streaming update l += log Q_y(x) is the recomputation from the statistics
    for streamed, recomputed in weights:
        assert np.array_equal(np.isneginf(streamed), np.isneginf(recomputed))
        fin = np.isfinite(recomputed)
        assert_log_close(streamed[fin], recomputed[fin])


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["forests", "trees"])
def test_missing_values_have_the_stated_meaning(kind):
    # every pair scored on the records where both are observed; a record predicted by the
    # structures of its observed features (docs/tan.md, Missing values)
    for case in (CASES[0], CASES[2], CASES[4]):
        k, r, d, seed = case
        prior = setting(k, r, d, seed)
        stream = make_stream(seed + 20, k, r, d, 14, missing=0.25)
        assert (stream[1] < 0).any() and np.isnan(stream[2]).any()
        got, weights = run_learner(k, r, d, prior, stream, kind, 0.6, 1.0, 1.0)
        want = run_reference(k, r, d, prior, stream, kind, 0.6, 1.0, 1.0)
        assert_log_close(got, want)
        for streamed, recomputed in weights:
            fin = np.isfinite(recomputed)
            assert_log_close(streamed[fin], recomputed[fin])


@pytest.mark.slow
@pytest.mark.parametrize("decay, structure_decay", [(0.8, 1.0), (1.0, 0.7), (0.85, 0.9)])
@pytest.mark.parametrize("kind", ["forests", "trees"])
def test_forgetting_equals_the_dynamic_model_average_over_every_structure(
        kind, decay, structure_decay):
    for case in (CASES[0], CASES[1], CASES[5]):
        k, r, d, seed = case
        prior = setting(k, r, d, seed)
        stream = make_stream(seed + 10, k, r, d, 12)
        got, _ = run_learner(k, r, d, prior, stream, kind, 0.8, decay, structure_decay)
        want = run_reference(k, r, d, prior, stream, kind, 0.8, decay, structure_decay)
        assert_log_close(got, want)


@pytest.mark.parametrize("kind", ["forests", "trees"])
def test_edge_posteriors_equal_every_structure(kind):
    k, r, d, seed = CASES[0]
    prior = setting(k, r, d, seed)
    ys, xs, z = make_stream(seed, k, r, d, 40)
    stats = MixedStatistics(k, r, d, **prior)
    for y, x, v in zip(ys, xs, z):
        stats.learn(y, x, v)
    edges, roots = edge_posteriors(stats.log_weights(), math.log(0.6), kind)
    ref = reference(k, r, d, prior)
    n = len(r) + d
    parents = allowed_structures(len(r), n, kind)
    log_post = structure_scores(ref.table(ys, xs, z, np.ones(len(ys))), parents)
    if kind == "forests":
        log_post += np.sum(parents != n, axis=1) * math.log(0.6)
    post = np.exp(log_post - log_post.max())
    post /= post.sum()
    for v in range(n):
        np.testing.assert_allclose(roots[v], post[parents[:, v] == n].sum(), rtol=1e-9)
        for u in range(n):
            if u != v:
                want = post[parents[:, v] == u].sum()
                np.testing.assert_allclose(edges[u, v], want, rtol=1e-9, atol=1e-300)
    assert (edges[len(r):, :len(r)] == 0).all()  # a numeric parent of a nominal child


def test_members_stack_on_leading_axes():
    # three forgetting rates as members of one state read each record once: each member is
    # the statistics of its rate alone, and stacked forest sums are the separate ones
    k, r, d, seed = CASES[2]
    prior = setting(k, r, d, seed)
    ys, xs, z = make_stream(seed, k, r, d, 25, missing=0.15)
    rates = [1.0, 0.9, 0.7]
    stacked = MixedStatistics(k, r, d, decay=rates, **prior)
    alone = [MixedStatistics(k, r, d, decay=rate, **prior) for rate in rates]
    for y, x, v in zip(ys, xs, z):
        seen, base, log_q = stacked.record_terms(x, v)
        for m, s in enumerate(alone):
            seen_m, base_m, log_q_m = s.record_terms(x, v)
            assert np.array_equal(seen, seen_m)
            np.testing.assert_allclose(base[m], base_m, rtol=1e-12)
            np.testing.assert_allclose(log_q[m], log_q_m, rtol=1e-12, atol=1e-13)
        stacked.learn(y, x, v)
        for s in alone:
            s.learn(y, x, v)
    lw = stacked.log_weights()
    for m, s in enumerate(alone):
        fin = np.isfinite(lw[m])
        np.testing.assert_array_equal(fin, np.isfinite(s.log_weights()))
        np.testing.assert_allclose(lw[m][fin], s.log_weights()[fin], rtol=1e-12, atol=1e-12)
    seen, base, log_q = stacked.record_terms(xs[0], z[0] + 0.3)
    lw, log_q = lw[:, seen[:, None], seen], log_q[:, :, seen[:, None], seen]
    for kind in ("forests", "trees"):
        together = log_joint_scores(lw, base, log_q, -0.5, kind)
        for m in range(len(rates)):
            np.testing.assert_allclose(
                together[m], log_joint_scores(lw[m], base[m], log_q[m], -0.5, kind),
                rtol=1e-13)
        edges, roots = edge_posteriors(lw, -0.5, kind)
        for m in range(len(rates)):
            single = edge_posteriors(lw[m], -0.5, kind)
            np.testing.assert_allclose(edges[m], single[0], rtol=1e-12, atol=1e-300)
            np.testing.assert_allclose(roots[m], single[1], rtol=1e-12)


@pytest.mark.slow
def test_long_stream_with_strong_dependences_at_ten_thousand_nats():
    # 2,500 records, two numeric features close to equal and a nominal one driving a third:
    # forests whose weights span over 10,000 nats; the brute force sums every structure in
    # log space.
    # (Closer duplicates lose digits in both sides' scatter matrices, kept as sums: the
    # reference's own two directions then differ by 1e-8.)
    k, r, d = 2, [3, 2], 3
    rng = np.random.default_rng(7)
    rows = 2500
    ys = rng.integers(0, k, rows)
    xs = np.stack([(ys + rng.integers(0, 2, rows)) % 3, rng.integers(0, 2, rows)], axis=1)
    z = rng.normal(0.0, 1.0, (rows, d))
    z[:, 1] = z[:, 0] + 0.03 * rng.normal(size=rows)
    z[:, 2] = 2.0 * xs[:, 0] + 0.001 * z[:, 2]
    prior = setting(k, r, d, 9, scale=0.01)  # the prior's variance floor
    stats = MixedStatistics(k, r, d, **prior)
    lw = stats.log_weights()
    for y, x, v in zip(ys, xs, z):
        lw = learned_weights(lw, stats.record_terms(x, v)[2][y])
        stats.learn(y, x, v)
    fin = np.isfinite(lw)
    # two edges of ~8,800 nats: forests' log weights span over 17,000 nats
    assert np.sort(lw[fin])[-2:].sum() > 1.7e4
    assert_log_close(lw[fin], stats.log_weights()[fin])
    ref = reference(k, r, d, prior)
    n = len(r) + d
    w = np.ones(rows)
    for kind in ("forests", "trees"):
        parents = allowed_structures(len(r), n, kind)
        log_prior = np.sum(parents != n, axis=1) * math.log(0.6) if kind == "forests" else 0.0
        before = structure_scores(ref.table(ys, xs, z, w), parents) + log_prior
        for probe in ([0, 1], [2, 0]):
            x, v = np.array(probe), np.array([0.5, 0.52, 4.001])
            _, base, log_q = stats.record_terms(x, v)
            got = log_joint_scores(lw, base, log_q, math.log(0.6), kind)
            want = []
            for c in range(k):
                after = structure_scores(ref.table(np.append(ys, c), np.vstack([xs, x]),
                                                   np.vstack([z, v]), np.append(w, 1.0)),
                                         parents) + log_prior
                want.append(np.logaddexp.reduce(after) - np.logaddexp.reduce(before))
            assert_log_close(got, want)


def test_bad_records_are_refused_and_leave_the_statistics_unchanged():
    stats = MixedStatistics(2, [2, 3], 2)
    stats.learn(1, [1, 2], [0.5, -0.5])
    before = (stats.log_weights(), stats.record_terms([0, 1], [0.1, 0.2])[2])
    for nominal, numeric, match in (([0, 3], [0.1, 0.2], "domains"),
                                    ([0, 1], [0.1], "numeric"),
                                    ([0, 1], [0.1, np.inf], "numeric"),
                                    ([0, 1], [1e200, 0.2], "magnitude"),
                                    ([0, -2], [0.1, 0.2], "domains")):
        with pytest.raises(ValueError, match=match):
            stats.learn(0, nominal, numeric)
        with pytest.raises(ValueError, match=match):
            stats.record_terms(nominal, numeric)
    with pytest.raises(ValueError, match="class code"):
        stats.learn(2, [0, 1], [0.1, 0.2])
    after = (stats.log_weights(), stats.record_terms([0, 1], [0.1, 0.2])[2])
    np.testing.assert_array_equal(before[0], after[0])
    np.testing.assert_array_equal(before[1], after[1])
    with pytest.raises(ValueError, match="decay"):
        MixedStatistics(2, [2], 1, decay=[1.0, 1.5])
    with pytest.raises(ValueError, match="structures"):
        log_joint_scores(np.zeros((2, 2)), np.zeros(1), np.zeros((1, 2, 2)), 0.0, "dags")


@pytest.mark.parametrize("kind", ["forests", "trees"])
def test_nominal_features_alone_give_model_averaged_tan(kind):
    # symmetric weights: the directed sums must be today's learner exactly, once every value
    # and class has been seen (ModelAveragedTAN's Dirichlet margins follow the values seen)
    from onlinebma.tan import ModelAveragedTAN

    k, r = 3, [2, 3, 2, 3]
    ys, xs, _ = make_stream(31, k, r, 0, 60)
    learner = ModelAveragedTAN(structures=kind, ess=2.0, edge_prior=0.6, aode=False)
    stats = MixedStatistics(k, r, 0, ess=2.0)
    lw = stats.log_weights()
    names = [f"f{u}" for u in range(len(r))]
    first = None
    for t, (y, x) in enumerate(zip(ys, xs)):
        record = {f: f"v{b}" for f, b in zip(names, x)}
        seen, base, log_q = stats.record_terms(x, [])
        complete = all(len(set(xs[:t, u])) == r[u] for u in range(len(r)))
        if complete and len(set(ys[:t])) == k:
            first = t if first is None else first
            mine = log_joint_scores(lw, base, log_q, math.log(0.6), kind)
            mine = np.exp(mine - np.logaddexp.reduce(mine))
            theirs = learner.predict_proba_one(record)
            np.testing.assert_allclose([theirs[c] for c in range(k)], mine, rtol=1e-9)
        learner.learn_one(record, int(y))
        lw = learned_weights(lw, log_q[y])
        stats.learn(y, x, [])
    assert first is not None and first < 40
