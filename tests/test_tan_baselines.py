"""TAN and AODE (onlinebma.tan): the tree against a brute force over every spanning tree
(Prüfer sequences, from test_tan_exact), the predictions against direct formulas computed
from raw records (their own counting, nothing from onlinebma.stats), merge and Dask plans,
River's checks, Weka 3.6.14, and the experiment's smoke run."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from onlinebma.distributed.protocol import MergePlan
from onlinebma.tan.aode import AODE
from onlinebma.tan.tan import TAN, maximum_spanning_tree
from tests.support.weka import needs_javac
from tests.test_tan_exact import trees

# --------------------------------------------------------------------------- data


def dependent_records(n, n_features, n_classes, seed, missing=0.0):
    """Records with 2-4 values per feature, each feature copying a random earlier one (or
    the class) with probability 0.5, and ``missing`` of the values left out."""
    g = np.random.default_rng(seed)
    r = g.integers(2, 5, size=n_features)
    source = [int(g.integers(-1, j)) if j else -1 for j in range(n_features)]
    rows = []
    for _ in range(n):
        y = int(g.integers(n_classes))
        vals = []
        for j in range(n_features):
            base = y if source[j] < 0 else vals[source[j]]
            vals.append(int(base % r[j]) if g.random() < 0.5 else int(g.integers(r[j])))
        x = {f"f{j}": f"v{v}" for j, v in enumerate(vals) if g.random() >= missing}
        rows.append((x, f"c{y}"))
    return rows


def weights_of(n, decay):
    return [decay ** (n - i) for i in range(n)]  # decayed after each record, the last too


def count(rows, w, label=None, eq=(), has=()):
    """Weighted count of the records of class ``label`` (any if None) with the ``(feature,
    value)`` pairs ``eq`` and the features ``has`` observed."""
    return sum(wi for (x, y), wi in zip(rows, w)
               if (label is None or y == label) and all(x.get(f) == v for f, v in eq)
               and all(f in x for f in has))


# ----------------------------------------------------------- direct formulas (test's own)


def direct_cmi(rows, u, v):
    """I(X_u; X_v | C) of the empirical distribution of the records with both observed."""
    both = [(x[u], x[v], y) for x, y in rows if u in x and v in x]
    n = len(both)
    if not n:
        return 0.0
    cuv = {}
    for t in both:
        cuv[t] = cuv.get(t, 0) + 1
    cu, cv, c = {}, {}, {}
    for (a, b, y), k in cuv.items():
        cu[a, y] = cu.get((a, y), 0) + k
        cv[b, y] = cv.get((b, y), 0) + k
        c[y] = c.get(y, 0) + k
    return sum(k / n * math.log(k * c[y] / (cu[a, y] * cv[b, y])) for (a, b, y), k in cuv.items())


def values_of(rows, f):
    out = []
    for x, _ in rows:
        if f in x and x[f] not in out:
            out.append(x[f])
    return out


def direct_tan(rows, x, parents, alpha, decay=1.0):
    """P(c | x) of a TAN with the given parents, posterior means with ``alpha`` per cell."""
    w = weights_of(len(rows), decay)
    classes = list(dict.fromkeys(y for _, y in rows))
    feats = list(parents)
    r = {f: len(values_of(rows, f)) for f in feats}
    total = sum(w)
    logp = {}
    for c in classes:
        nc = count(rows, w, c)
        s = math.log((nc + alpha) / (total + alpha * len(classes)))
        for f in feats:
            if f not in x or x[f] not in values_of(rows, f):
                continue
            u = parents[f]
            if u is not None and u in x and x[u] in values_of(rows, u):
                num = count(rows, w, c, [(u, x[u]), (f, x[f])])
                den = count(rows, w, c, [(u, x[u])], [f])
            else:
                num = count(rows, w, c, [(f, x[f])])
                den = count(rows, w, c, has=[f])
            s += math.log((num + alpha) / (den + alpha * r[f]))
        logp[c] = s
    top = max(logp.values())
    z = sum(math.exp(v - top) for v in logp.values())
    return {c: math.exp(v - top) / z for c, v in logp.items()}


def direct_aode(rows, x, limit=1, m=None, decay=1.0):
    """Weka 3.6's AODE estimate of P(c | x) from raw records (module docstring of aode)."""
    w = weights_of(len(rows), decay)
    classes = list(dict.fromkeys(y for _, y in rows))
    k = len(classes)
    feats = [f for f in x if x[f] in values_of(rows, f)]
    r = {f: len(values_of(rows, f)) for f in feats}
    parents = [p for p in feats if count(rows, w, eq=[(p, x[p])]) >= limit]
    probs = {}
    for c in classes:
        if not parents:
            nc = count(rows, w, c)
            e, f_ = (1.0, k) if m is None else (m / k, m)
            p = (nc + e) / (sum(w) + f_)
            for v in feats:
                a, d = (1.0, r[v]) if m is None else (m / r[v], m)
                p *= ((count(rows, w, c, [(v, x[v])]) + a)
                      / (count(rows, w, c, has=[v]) + d))
            probs[c] = p
            continue
        total = 0.0
        for p in parents:
            n_p = count(rows, w, has=[p])
            ncp = count(rows, w, c, [(p, x[p])])
            e, f_ = (1.0, k * r[p]) if m is None else (m / (k * r[p]), m)
            s = (ncp + e) / (n_p + f_)
            for v in feats:
                if v == p:
                    continue
                a, d = (1.0, r[v]) if m is None else (m / r[v], m)
                num = count(rows, w, c, [(p, x[p]), (v, x[v])])
                den = count(rows, w, c, [(p, x[p])], [v])
                s *= (num + a) / (den + d)
            total += s
        probs[c] = total / len(parents)
    z = sum(probs.values())
    return {c: p / z for c, p in probs.items()}


def assert_close(got, want, tol=1e-9):
    assert set(got) == set(want)
    for c in want:
        assert got[c] == pytest.approx(want[c], abs=tol), (c, got, want)


# ------------------------------------------------------------------------ the tree


@pytest.mark.parametrize("n_features,n_classes,missing,seed",
                         [(4, 2, 0.0, 0), (5, 3, 0.0, 1), (6, 2, 0.0, 2), (5, 2, 0.2, 3),
                          (6, 3, 0.15, 4)])
def test_tree_is_the_brute_force_maximum_spanning_tree_over_cmi(n_features, n_classes,
                                                                missing, seed):
    rows = dependent_records(300, n_features, n_classes, seed, missing)
    model = TAN()
    for x, y in rows:
        model.learn_one(x, y)
    feats = list(model.counts.features_)
    cmi = {(a, b): direct_cmi(rows, feats[a], feats[b])
           for a, b in itertools.combinations(range(len(feats)), 2)}
    edge_sets = (frozenset(tuple(sorted((feats.index(f), feats.index(p))))
                           for f, p in t.items() if p is not None) for t in trees(feats))
    scored = sorted(((sum(cmi[e] for e in t), t) for t in edge_sets), key=lambda s: -s[0])
    best_weight, best = scored[0]
    assert best_weight - scored[1][0] > 1e-9  # a unique optimum: the test can tell
    tree = model.tree()
    edges = frozenset(tuple(sorted((feats.index(f), feats.index(p))))
                      for f, p in tree.items() if p is not None)
    assert edges == best
    assert sum(p is None for p in tree.values()) == 1


def test_prim_ties_and_single_nodes():
    assert maximum_spanning_tree(np.zeros((1, 1))).tolist() == [-1]
    assert maximum_spanning_tree(np.zeros((3, 3))).tolist() == [-1, 0, 0]


# ----------------------------------------------------------------- the predictions


@pytest.mark.parametrize("missing,decay,seed", [(0.0, 1.0, 5), (0.2, 1.0, 6), (0.1, 0.95, 7)])
def test_tan_predictions_equal_the_direct_formula(missing, decay, seed):
    rows = dependent_records(120, 5, 3, seed, missing)
    model = TAN(alpha=0.7, decay=decay)
    for i, (x, y) in enumerate(rows):
        model.learn_one(x, y)
        if i in (10, 57, 119):
            parents = model.tree()
            for xt, _ in dependent_records(8, 5, 3, seed + 100, 0.3):
                assert_close(model.predict_proba_one(xt),
                             direct_tan(rows[:i + 1], xt, parents, 0.7, decay))


@pytest.mark.parametrize("limit,m,decay,seed", [(1, None, 1.0, 8), (3, None, 1.0, 9),
                                                (1, 2.0, 1.0, 10), (1, None, 0.9, 11)])
def test_aode_predictions_equal_the_direct_formula(limit, m, decay, seed):
    rows = dependent_records(80, 5, 3, seed, 0.15)
    model = AODE(frequency_limit=limit, m_estimate=m, decay=decay)
    tests = dependent_records(8, 5, 3, seed + 100, 0.3) + [({}, None)]
    for i, (x, y) in enumerate(rows):
        model.learn_one(x, y)
        if i in (3, 40, 79):
            batch = model.predict_proba_many(pd.DataFrame([xt for xt, _ in tests]))
            for (xt, _), row in zip(tests, batch.to_dict("records")):
                want = direct_aode(rows[:i + 1], xt, limit, m, decay)
                assert_close(model.predict_proba_one(xt), want)
                assert_close(row, want)


@pytest.mark.parametrize("make", [lambda: TAN(), lambda: AODE()])
def test_learn_many_predict_many_and_merge_equal_learning_one_by_one(make):
    rows = dependent_records(200, 6, 3, 12, 0.1)
    X = pd.DataFrame([x for x, _ in rows])
    y = pd.Series([c for _, c in rows])
    one = make()
    for x, c in rows:
        one.learn_one(x, c)
    many = make()
    many.learn_many(X, y)
    left, right = make(), make()
    left.learn_many(X.iloc[:70], y.iloc[:70])
    right.learn_many(X.iloc[70:], y.iloc[70:])
    merged = left.merge(right)
    plan = make().distributed_plan()  # from an empty learner
    assert isinstance(plan, MergePlan)
    planned = plan.finish(plan.combine([plan.learn_partition(X.iloc[:90], y.iloc[:90]),
                                        plan.learn_partition(X.iloc[90:], y.iloc[90:])]))
    tests = dependent_records(20, 6, 3, 13, 0.3)
    Xt = pd.DataFrame([x for x, _ in tests])
    expected = [one.predict_proba_one(x) for x, _ in tests]
    for other in (many, merged, planned):
        for x_t, want in zip((x for x, _ in tests), expected):
            assert_close(other.predict_proba_one(x_t), want, 1e-12)
    batch = one.predict_proba_many(Xt)
    for row, want in zip(batch.to_dict("records"), expected):
        assert_close(row, want, 1e-12)


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="alpha"):
        TAN(alpha=0)
    with pytest.raises(ValueError, match="frequency_limit"):
        AODE(frequency_limit=-1)
    with pytest.raises(ValueError, match="m_estimate"):
        AODE(m_estimate=0.0)


@pytest.mark.parametrize("make", [TAN, AODE])
def test_river_checks_the_defaults(make):
    """River's checks on the defaults run in tests/test_learners.py, over every parameter
    set of ``_unit_test_params`` (River's hook): the defaults must stay one of them (running
    the checks here as well ran the same code twice)."""
    assert {} in list(make._unit_test_params())


# --------------------------------------------------------------------------- Weka


def _weka_fold(name, n_train, seed=0):
    from onlinebma.datasets import UCIDataset

    X, y = UCIDataset(name).to_frame()
    y = y.astype(str)
    order = np.random.default_rng(seed).permutation(len(y))
    tr, te = order[:n_train], order[n_train:]
    seen = np.ones(len(te), dtype=bool)
    for c in X.columns:  # test rows with a value never seen in training: not comparable
        seen &= X[c].iloc[te].isin(set(X[c].iloc[tr])).to_numpy()
    return X.iloc[tr], y.iloc[tr], X.iloc[te[seen]], y.iloc[te[seen]]


def _run_weka(tmp_path, Xtr, ytr, Xte, yte, spec):
    from experiments.peers.weka import write_arff
    from experiments.peers.weka_tan import run_weka

    classes = sorted(set(ytr))
    write_arff(Xtr, ytr, tmp_path / "tr.arff", classes=classes, domain=Xtr)
    write_arff(Xte, yte, tmp_path / "te.arff", classes=classes, domain=Xtr)
    res = run_weka([(tmp_path / "tr.arff", tmp_path / "te.arff", spec)])[0]
    return classes, np.array(res["proba"]), res["parents"]


@needs_javac
@pytest.mark.slow
@pytest.mark.parametrize("name,n_train", [("lymphography", 110), ("solar-flare", 700)])
def test_tan_tree_and_estimates_match_weka(tmp_path, name, n_train):
    from experiments.peers.weka_tan import TAN_ENTROPY

    Xtr, ytr, Xte, yte = _weka_fold(name, n_train)
    classes, proba, parents = _run_weka(tmp_path, Xtr, ytr, Xte, yte, TAN_ENTROPY)
    model = TAN(alpha=0.5, nominal_attributes=list(Xtr.columns))
    model.learn_many(Xtr, ytr)
    cols = list(Xtr.columns)
    # Weka's parents: the class (last attribute) and at most one feature
    weka_parent = {cols[a]: next((cols[p] for p in ps if p < len(cols)), None)
                   for a, ps in parents.items()}
    ours = model.tree()
    undirected = {frozenset((f, p)) for f, p in ours.items() if p is not None}
    assert undirected == {frozenset((f, p)) for f, p in weka_parent.items() if p is not None}
    # Weka's directions in our estimator equal Weka's distributions (its SimpleEstimator)
    got = np.array([[direct_tan(list(zip(Xtr.to_dict("records"), ytr)), x, weka_parent, 0.5)[c]
                     for c in classes] for x in Xte.to_dict("records")[:8]])
    np.testing.assert_allclose(got, proba[:8], atol=1e-9)
    # ours, rooted elsewhere, differs only by the direction of the smoothing
    mine = model.predict_proba_many(Xte)[classes].to_numpy()
    assert np.abs(mine - proba).mean() < 0.01
    assert (mine.argmax(axis=1) == proba.argmax(axis=1)).mean() >= 0.99


@needs_javac
@pytest.mark.parametrize("name,n_train,options", [("lymphography", 110, "-F 1"),
                                                  ("house-votes-84", 300, "-F 1"),
                                                  ("solar-flare", 700, "-M -W 2 -F 5")])
def test_aode_matches_weka(tmp_path, name, n_train, options):
    Xtr, ytr, Xte, yte = _weka_fold(name, n_train)
    spec = ("weka.classifiers.bayes.AODE", options)
    classes, proba, _ = _run_weka(tmp_path, Xtr, ytr, Xte, yte, spec)
    m = 2.0 if "-M" in options else None
    limit = int(options.split("-F ")[1])
    model = AODE(frequency_limit=limit, m_estimate=m, nominal_attributes=list(Xtr.columns))
    model.learn_many(Xtr, ytr)
    mine = model.predict_proba_many(Xte)[classes].to_numpy()
    np.testing.assert_allclose(mine, proba, atol=1e-9)


# --------------------------------------------------------------------- experiment


@pytest.mark.slow
@pytest.mark.experiments
def test_quick_experiment_writes_its_page(tmp_path):
    from experiments import tan

    result = tan.run(quick=True, out=tmp_path, show=False)
    text = (tmp_path / "results" / "tan.md").read_text()
    assert text.startswith("# tan") and "Quick smoke-test run" in text
    for fig in result["figures"]:
        assert fig.exists() and fig.stat().st_size > 1000
    err = result["tables"]["error"]
    assert {"TAN", "AODE", "NaiveBayes"} <= set(err.columns)
    assert np.isfinite(err[["TAN", "AODE"]].to_numpy(dtype=float)).all()
