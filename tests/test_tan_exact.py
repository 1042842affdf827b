"""ModelAveragedTAN against an independent brute force over every structure.

The brute force never touches the learner's counts: it keeps the raw records, enumerates every
spanning tree (Prüfer sequences) or every forest-augmented DAG (each feature with at most one
feature parent, no cycle) of the observed features, scores each DAG family by family with
lgamma under the consistent joint prior (a_c = ess/K, a_cu = ess/(K r_u), a_cuv = ess/(K r_u
r_v)), and averages each DAG's posterior-mean predictive.

Missing values have this stated meaning (docs/tan.md): an edge u -> v replaces v's root family
(scored and predicted on the records where v is observed) by the family v | u relative to v
alone, both on the records where u and v are observed. Without missing values this is the
ordinary marginal likelihood and predictive of the DAG.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from onlinebma.tan import ModelAveragedTAN
from tests.support.dma import WrittenOutWeights
from tests.support.trees import prufer_trees

lg = math.lgamma


# ----------------------------------------------------------------- brute force


class Brute:
    """Family scores and predictives of weighted raw records ``[(x, y, weight)]``."""

    def __init__(self, data, ess, classes, domains):
        self.data, self.ess = data, ess
        self.classes, self.domains = classes, domains
        self.k = len(classes)

    def _count(self, feats):
        out: dict = {}
        for x, y, w in self.data:
            if all(f in x for f in feats):
                key = (y, *[x[f] for f in feats])
                out[key] = out.get(key, 0.0) + w
        return out

    def _alone(self, v, on):
        """(score, {(c, x_v): θ}) of family v | C on the records where all of ``on`` are
        observed."""
        n = self._count(on if v in on else (*on, v))
        idx = (on if v in on else (*on, v)).index(v)
        a_c, a_cv = self.ess / self.k, self.ess / (self.k * len(self.domains[v]))
        score, theta = 0.0, {}
        for c in self.classes:
            ncv = {xv: sum(w for key, w in n.items() if key[0] == c and key[1 + idx] == xv)
                   for xv in self.domains[v]}
            nc = sum(ncv.values())
            score += lg(a_c) - lg(a_c + nc) + sum(lg(a_cv + m) - lg(a_cv) for m in ncv.values())
            for xv, m in ncv.items():
                theta[c, xv] = (a_cv + m) / (a_c + nc)
        return score, theta

    def _child(self, v, u):
        """(score, {(c, x_u, x_v): θ}) of family v | C, U on the records with u and v."""
        n = self._count((u, v))
        ru, rv = len(self.domains[u]), len(self.domains[v])
        a_cu, a_cuv = self.ess / (self.k * ru), self.ess / (self.k * ru * rv)
        score, theta = 0.0, {}
        for c in self.classes:
            for xu in self.domains[u]:
                row = {xv: n.get((c, xu, xv), 0.0) for xv in self.domains[v]}
                ncu = sum(row.values())
                score += lg(a_cu) - lg(a_cu + ncu) + sum(lg(a_cuv + m) - lg(a_cuv)
                                                        for m in row.values())
                for xv, m in row.items():
                    theta[c, xu, xv] = (a_cuv + m) / (a_cu + ncu)
        return score, theta

    def family(self, v, u):
        """(score, predictive(c, x)) of v with parent u (or None) under the stated meaning."""
        root_score, root = self._alone(v, (v,))
        if u is None:
            return root_score, lambda c, x: root[c, x[v]]
        child_score, child = self._child(v, u)
        pair_score, pair = self._alone(v, (u, v))
        return (root_score + child_score - pair_score,
                lambda c, x: root[c, x[v]] * child[c, x[u], x[v]] / pair[c, x[v]])

    def class_prior(self):
        n = {c: sum(w for _, y, w in self.data if y == c) for c in self.classes}
        total = sum(n.values())
        return {c: (self.ess / self.k + n[c]) / (self.ess + total) for c in self.classes}


def trees(features):
    """Every spanning tree as a parent map rooted at ``features[0]`` (Prüfer sequences)."""
    if len(features) == 1:
        yield {features[0]: None}
        return
    for edges in prufer_trees(len(features)):
        yield orient(features, edges, root=0)


def orient(features, edges, root):
    adj = {i: [] for i in range(len(features))}
    for a, b in edges:
        adj[a].append(b)
        adj[b].append(a)
    parent = {root: None}
    stack = [root]
    while stack:
        a = stack.pop()
        for b in adj[a]:
            if b not in parent:
                parent[b] = a
                stack.append(b)
    return {features[i]: (None if p is None else features[p]) for i, p in parent.items()}


def forests(features):
    """Every forest-augmented DAG as a parent map."""
    for parents in itertools.product([None, *features], repeat=len(features)):
        pa = dict(zip(features, parents))
        if any(p == f for f, p in pa.items()):
            continue
        ok = True
        for f in features:  # acyclic: following parents ends at a root
            seen, g = set(), f
            while g is not None and ok:
                if g in seen:
                    ok = False
                seen.add(g)
                g = pa[g]
        if ok:
            yield pa


def brute_predict(data, x, ess, kind, edge_prior=1.0, log_weights=None, families=None):
    """P(c | x) averaged over every structure of x's observed, known features (``families``:
    a dict to share the family scores and predictives of ``data`` between calls)."""
    classes = sorted({y for _, y, _ in data})
    domains: dict = {}
    for r, _, _ in data:
        for f, v in r.items():
            domains.setdefault(f, set()).add(v)
    x = {f: v for f, v in x.items() if v in domains.get(f, ())}
    b = Brute(data, ess, classes, {f: sorted(d) for f, d in domains.items()})
    feats = sorted(x)
    structures = list(trees(feats) if kind == "trees" else forests(feats)) if feats else [{}]
    families = {} if families is None else families
    prior = b.class_prior()
    logs = {c: [] for c in classes}
    for s, pa in enumerate(structures):
        edges = sum(p is not None for p in pa.values())
        lw = edges * math.log(edge_prior)
        if log_weights is None:
            lw += sum(family(families, b, v, p)[0] for v, p in pa.items())
        else:
            lw += log_weights[s]
        for c in classes:
            pred = math.prod(family(families, b, v, p)[1](c, x) for v, p in pa.items())
            logs[c].append(lw + math.log(prior[c] * pred))
    scores = {c: np.logaddexp.reduce(v) for c, v in logs.items()}
    top = max(scores.values())
    total = sum(math.exp(s - top) for s in scores.values())
    return {c: math.exp(s - top) / total for c, s in scores.items()}


def family(cache, b, v, p):
    if (v, p) not in cache:
        cache[v, p] = b.family(v, p)
    return cache[v, p]


def brute_edges(data, ess, kind, edge_prior=1.0):
    """Exact posterior probability of every undirected feature-feature edge."""
    classes = sorted({y for _, y, _ in data})
    domains: dict = {}
    for r, _, _ in data:
        for f, v in r.items():
            domains.setdefault(f, set()).add(v)
    b = Brute(data, ess, classes, {f: sorted(d) for f, d in domains.items()})
    feats = sorted(domains)
    cache: dict = {}
    lws, sets = [], []
    for pa in (trees(feats) if kind == "trees" else forests(feats)):
        edges = {frozenset((v, p)) for v, p in pa.items() if p is not None}
        lws.append(len(edges) * math.log(edge_prior)
                   + sum(family(cache, b, v, p)[0] for v, p in pa.items()))
        sets.append(edges)
    lws = np.array(lws)
    w = np.exp(lws - lws.max())
    w /= w.sum()
    return {e: float(sum(wi for wi, s in zip(w, sets) if e in s))
            for e in {frozenset(p) for p in itertools.combinations(feats, 2)}}


# ------------------------------------------------------------------- data


def make_data(seed, n, k, r, rows, dependent, missing=0.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, rows)
    X = np.zeros((rows, n), dtype=int)
    X[:, 0] = (y + rng.integers(0, 2, rows) * dependent) % r
    for f in range(1, n):
        if dependent:  # each feature a noisy copy of the previous one, shifted by the class
            noise = rng.random(rows) < 0.2
            X[:, f] = np.where(noise, rng.integers(0, r, rows), (X[:, f - 1] + y) % r)
        else:
            X[:, f] = rng.integers(0, r, rows)
    records = []
    for i in range(rows):
        records.append({f"f{f}": f"v{X[i, f]}" for f in range(n)
                        if rng.random() >= missing})
    return records, [f"c{v}" for v in y]


def as_data(records, labels, weights=None):
    weights = weights or [1.0] * len(records)
    return list(zip(records, labels, weights))


def probes(records, extra=()):
    return [*records[:4], {"f0": "v0"}, {}, {"f1": "v1", "f2": "never seen"}, *extra]


def assert_close(p, q, tol=1e-9):
    assert set(p) == set(q)
    for c in p:
        assert p[c] == pytest.approx(q[c], abs=tol), (p, q)


CASES = [  # (seed, n features, K, r values, rows, dependent)
    (0, 4, 2, 2, 40, True),
    (1, 5, 3, 3, 60, True),
    (2, 5, 2, 4, 50, False),
    (3, 3, 3, 4, 30, True),
]


@pytest.mark.parametrize("structures", ["trees", "forests"])
@pytest.mark.parametrize("case", CASES)
def test_learn_one_many_and_merge_equal_brute_force(case, structures):
    seed, n, k, r, rows, dependent = case
    records, labels = make_data(seed, n, k, r, rows, dependent)
    ess, edge_prior = (1.0 + seed, 0.5 + seed) if structures == "forests" else (2.0, 1.0)
    params = {"structures": structures, "ess": ess, "edge_prior": edge_prior}
    one = ModelAveragedTAN(aode=False, **params)
    for x, y in zip(records, labels):
        one.predict_proba_one(x)
        one.learn_one(x, y)
    many = ModelAveragedTAN(aode=False, **params)
    many.learn_many(pd.DataFrame(records), pd.Series(labels))
    half = rows // 3
    left, right = ModelAveragedTAN(aode=False, **params), ModelAveragedTAN(aode=False, **params)
    left.learn_many(pd.DataFrame(records[:half]), pd.Series(labels[:half]))
    for x, y in zip(records[half:], labels[half:]):
        right.learn_one(x, y)
    merged = left.merge(right)
    data = as_data(records, labels)
    xs = probes(records)
    batch = one.predict_proba_many(pd.DataFrame(xs))
    for i, x in enumerate(xs):
        expected = brute_predict(data, x, ess, structures, edge_prior)
        for model in (one, many, merged):
            assert_close(model.predict_proba_one(x), expected)
        assert_close(batch.iloc[i].to_dict(), expected)


@pytest.mark.parametrize("structures", ["trees", "forests"])
def test_missing_values_have_the_stated_meaning(structures):
    records, labels = make_data(5, 5, 3, 3, 70, True, missing=0.25)
    model = ModelAveragedTAN(aode=False, structures=structures, ess=1.5, edge_prior=2.0)
    model.learn_many(pd.DataFrame(records), pd.Series(labels))
    streamed = ModelAveragedTAN(aode=False, structures=structures, ess=1.5, edge_prior=2.0)
    for x, y in zip(records, labels):
        streamed.learn_one(x, y)
    data = as_data(records, labels)
    xs = probes(records, extra=[{"f1": "v0", "f3": "v2", "f4": "v1"}])
    batch = model.predict_proba_many(pd.DataFrame(xs))
    for i, x in enumerate(xs):
        expected = brute_predict(data, x, 1.5, structures, 2.0)
        assert_close(model.predict_proba_one(x), expected)
        assert_close(streamed.predict_proba_one(x), expected)
        assert_close(batch.iloc[i].to_dict(), expected)


def test_new_values_classes_and_features_mid_stream():
    records, labels = make_data(6, 4, 2, 2, 30, True)
    later, later_labels = make_data(7, 5, 3, 4, 25, True)  # more values, a class, a feature
    # records without features first: the class counts must survive the first features
    records, labels = [{}, {}, *records, *later], ["c1", "c0", *labels, *later_labels]
    model = ModelAveragedTAN(aode=False, structures="trees", ess=3.0)
    for t, (x, y) in enumerate(zip(records, labels)):
        model.predict_proba_one(x)
        model.learn_one(x, y)
        if t in (1, 2, 31, 33, 42, 56):
            data = as_data(records[:t + 1], labels[:t + 1])
            for probe in (records[t], {"f4": "v3", "f0": "v1"}):
                assert_close(model.predict_proba_one(probe),
                             brute_predict(data, probe, 3.0, "trees"))


def test_root_independence_of_the_brute_force_and_the_learner():
    """Every tree scored from every root gives the same weight and predictive."""
    records, labels = make_data(8, 4, 3, 3, 40, True)
    classes = sorted(set(labels))
    domains = {f: sorted({x[f] for x in records}) for f in records[0]}
    b = Brute(as_data(records, labels), 2.0, classes, domains)
    feats = sorted(domains)
    x = records[0]
    for pa in trees(feats):
        edges = [(feats.index(v), feats.index(p)) for v, p in pa.items() if p is not None]
        seen = set()
        for root in range(len(feats)):
            rooted = orient(feats, edges, root)
            score = sum(b.family(v, p)[0] for v, p in rooted.items())
            preds = tuple(math.prod(b.family(v, p)[1](c, x) for v, p in rooted.items())
                          for c in classes)
            seen.add((round(score, 9), tuple(round(q, 12) for q in preds)))
        assert len(seen) == 1


def test_edge_posteriors_equal_brute_force():
    for structures, edge_prior in (("trees", 1.0), ("forests", 0.3)):
        records, labels = make_data(9, 5, 2, 3, 40, True, missing=0.1)
        model = ModelAveragedTAN(aode=False, structures=structures, ess=1.0, edge_prior=edge_prior)
        model.learn_many(pd.DataFrame(records), pd.Series(labels))
        expected = brute_edges(as_data(records, labels), 1.0, structures, edge_prior)
        got = model.edge_posteriors()
        assert {frozenset(e) for e in got} == set(expected)
        for e, p in got.items():
            assert p == pytest.approx(expected[frozenset(e)], abs=1e-9)


@pytest.mark.parametrize("structures", ["trees", "forests"])
def test_small_edge_posteriors_have_full_relative_precision(structures):
    """Edges far from the data's chain have posteriors of 1e-26 to 1e-14: each equals the
    brute force (a sum of positive structure weights, exact relative to its size) to a
    relative 1e-9, far below the ~1e-16 |LT| a difference of two tree sums could resolve."""
    records, labels = make_data(13, 4, 2, 3, 300, True)
    model = ModelAveragedTAN(aode=False, structures=structures, ess=1.0, edge_prior=0.3)
    model.learn_many(pd.DataFrame(records), pd.Series(labels))
    expected = brute_edges(as_data(records, labels), 1.0, structures, 0.3)
    got = {frozenset(e): p for e, p in model.edge_posteriors().items()}
    small = [e for e, p in expected.items() if p < 1e-12]
    assert len(small) >= 3 and min(expected.values()) < 1e-20
    for e in small:
        assert got[e] == pytest.approx(expected[e], rel=1e-9, abs=0.0)


@pytest.mark.parametrize("decay,structure_decay,structures",
                         [(0.9, 0.8, "trees"), (1.0, 0.7, "trees"), (0.85, 1.0, "trees"),
                          (0.9, 0.8, "forests")])
def test_forgetting_equals_brute_force_dynamic_model_average(decay, structure_decay,
                                                             structures):
    """Each structure's weight times its own predictive probability of the record (counts
    and domains current before it, the record's new values included), flattened by α; counts
    decayed by λ after each record; the prior over structures applied outside."""
    records, labels = make_data(10, 4, 2, 3, 35, True)
    records += [{"f0": "v9", "f1": "v0", "f2": "v1", "f3": "v2"}]  # a new value mid-stream
    labels += ["c1"]
    records, labels = records + records[:10], labels + ["c2"] + labels[1:10]  # a new class
    edge_prior = 0.6 if structures == "forests" else 1.0
    model = ModelAveragedTAN(aode=False, structures=structures, ess=2.0, decay=decay,
                             structure_decay=structure_decay, edge_prior=edge_prior)
    feats = sorted(records[0])
    structures_ = list(trees(feats) if structures == "trees" else forests(feats))
    log_w = np.zeros(len(structures_))
    for t, (x, y) in enumerate(zip(records, labels)):
        if t % 2:
            model.predict_proba_one(x)  # progressive validation reuses the prediction
        model.learn_one(x, y)
        data = as_data(records[:t], labels[:t],
                       [decay ** (t - s) for s in range(t)])
        domains: dict = {}
        for r in records[:t + 1]:
            for f, v in r.items():
                domains.setdefault(f, set()).add(v)
        b = Brute(data, 2.0, sorted(set(labels[:t + 1])), {f: sorted(d) for f, d in
                                                           domains.items()})
        cache: dict = {}
        for s, pa in enumerate(structures_):
            log_w[s] = structure_decay * (log_w[s] + math.log(math.prod(
                family(cache, b, v, p)[1](y, x) for v, p in pa.items())))
    final = as_data(records, labels, [decay ** (len(records) - s) for s in
                                      range(len(records))])
    for probe in records[:5]:
        assert_close(model.predict_proba_one(probe),
                     brute_predict(final, probe, 2.0, structures, edge_prior, log_w))


@pytest.mark.slow
@pytest.mark.parametrize("structures", ["trees", "forests"])
def test_edge_weights_spanning_tens_of_thousands_of_nats(structures):
    """10^5 strongly dependent records: l spans > 10^4 nats, far beyond a float's exp range;
    the learner still equals the brute force (a log-sum-exp over every structure's exact log
    weight, on the distinct records weighted by their counts)."""
    rows = 100_000
    rng = np.random.default_rng(12)
    y = rng.integers(0, 2, rows)
    X = np.zeros((rows, 5), dtype=int)
    X[:, 0] = (y + (rng.random(rows) < 0.3)) % 3
    for f in range(1, 5):  # f1..f3 copies of their predecessor, f4 independent noise
        noisy = rng.random(rows) < (0.05 if f < 4 else 1.0)
        X[:, f] = np.where(noisy, rng.integers(0, 3, rows), X[:, f - 1])
    frame = pd.DataFrame({f"f{f}": pd.Categorical.from_codes(X[:, f], ["v0", "v1", "v2"])
                          for f in range(5)})
    model = ModelAveragedTAN(aode=False, structures=structures, ess=1.0)
    model.learn_many(frame, pd.Series([f"c{v}" for v in y]))
    assert np.ptp(model.edge_log_weights) > 1e4
    distinct, counts = np.unique(np.column_stack([X, y]), axis=0, return_counts=True)
    data = [({f"f{f}": f"v{row[f]}" for f in range(5)}, f"c{row[5]}", float(n))
            for row, n in zip(distinct, counts)]
    families: dict = {}
    for x, _, _ in data[::20]:
        assert_close(model.predict_proba_one(x),
                     brute_predict(data, x, 1.0, structures, families=families))


@pytest.mark.slow
def test_long_streams_stay_finite():
    """A long stream's counts reach the lgamma sums, the edge weights and the predictions
    finite, and a forgetting learner renormalises its scaled unit twice and stays finite.

    10^5 records, not 10^6 (a tenth of the time): the features are independent given the
    class, so the edge log weights grow like log n and no limit lies between the two sizes
    (a float's exp range is passed by neither, float32's and int32's exact counts by neither);
    the forgetting part, its own 4,000 records, is as before."""
    rng = np.random.default_rng(11)
    rows = 100_000
    y = rng.integers(0, 3, rows)
    codes = (y[:, None] + (rng.random((rows, 3)) < 0.3) * rng.integers(0, 4, (rows, 3))) % 4
    X = pd.DataFrame({f"f{i}": pd.Categorical.from_codes(codes[:, i], list("abcd"))
                      for i in range(3)})
    model = ModelAveragedTAN(aode=False)
    model.learn_many(X, pd.Series(y))
    p = model.predict_proba_many(X.head(1000)).to_numpy()
    assert np.isfinite(p).all() and np.allclose(p.sum(axis=1), 1.0)
    assert all(0.0 <= q <= 1.0 for q in model.edge_posteriors().values())
    forgetting = ModelAveragedTAN(aode=False, decay=0.95, structure_decay=0.999)
    for x, label in zip(X.head(4000).astype(str).to_dict("records"), y[:4000]):
        forgetting.learn_one(x, label)  # the scaled unit renormalises twice
    p = forgetting.predict_proba_one(X.iloc[0].astype(str).to_dict())
    assert all(math.isfinite(q) for q in p.values()) and sum(p.values()) == pytest.approx(1.0)


@pytest.mark.parametrize("structure_decay,structures",
                         [(1.0, "trees"), (1.0, "forests"), (0.9, "forests")])
def test_decay_auto_equals_brute_force_members_and_weights(structure_decay, structures):
    """``decay="auto"``, written out: one brute-force learner per rate of the grid (each
    structure's weight its prequential recursion at that rate, or, for a member that forgets
    nothing, the marginal likelihood of the data), the members' probabilities of each
    record's label updating the dynamic-model-averaging weights (tests/support/dma.py),
    and the prediction the weighted mean of the members'."""
    from onlinebma.forgetting import AUTO_GRID

    # two classes and both values of every feature within the first two records: from the
    # third on every record is fully known, so every member has a probability for it
    records, labels = make_data(11, 3, 2, 2, 40, True)
    records = [{"f0": "v0", "f1": "v0", "f2": "v0"}, {"f0": "v1", "f1": "v1", "f2": "v1"},
               *records]
    labels = ["c0", "c1", *labels]
    ess, edge_prior = 2.0, (0.6 if structures == "forests" else 1.0)
    model = ModelAveragedTAN(aode=False, structures=structures, ess=ess, edge_prior=edge_prior,
                             decay="auto", structure_decay=structure_decay)
    feats = sorted(records[0])
    structures_ = list(trees(feats) if structures == "trees" else forests(feats))
    recursive = [rate != 1 or structure_decay != 1 for rate in AUTO_GRID]
    log_w = np.zeros((len(AUTO_GRID), len(structures_)))
    weights = WrittenOutWeights(len(AUTO_GRID))

    def member_predict(r, t, x):
        data = as_data(records[:t], labels[:t],
                       [AUTO_GRID[r] ** (t - s) for s in range(t)])
        return brute_predict(data, x, ess, structures, edge_prior,
                             log_w[r] if recursive[r] else None)

    for t, (x, y) in enumerate(zip(records, labels)):
        if t >= 2:
            members = [member_predict(r, t, x) for r in range(len(AUTO_GRID))]
            pi = weights.weights()
            want = {c: sum(w * p[c] for w, p in zip(pi, members)) for c in members[0]}
            total = sum(want.values())
            assert_close(model.predict_proba_one(x), {c: p / total for c, p in want.items()})
        model.learn_one(x, y)
        weights.update([p[y] for p in members] if t >= 2 else None)
        domains: dict = {}
        for rec in records[:t + 1]:
            for f, v in rec.items():
                domains.setdefault(f, set()).add(v)
        for r, rate in enumerate(AUTO_GRID):
            data = as_data(records[:t], labels[:t], [rate ** (t - s) for s in range(t)])
            b = Brute(data, ess, sorted(set(labels[:t + 1])),
                      {f: sorted(d) for f, d in domains.items()})
            cache: dict = {}
            for s, pa in enumerate(structures_):
                log_w[r, s] = structure_decay * (log_w[r, s] + math.log(math.prod(
                    family(cache, b, v, p)[1](y, x) for v, p in pa.items())))
        got = model.decay_posterior()
        assert list(got) == list(AUTO_GRID)
        np.testing.assert_allclose(list(got.values()), weights.weights(), rtol=0, atol=1e-10)
    assert np.ptp(weights.weights()) > 0.005  # the weights moved apart: the check can fail
