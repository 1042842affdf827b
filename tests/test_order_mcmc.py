"""Tests of onlinebma.order_mcmc: exactness against brute force, the chain against the exact
order posterior, reproducibility, River's estimator checks and the experiments' smoke runs."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from onlinebma import tuning
from onlinebma.order_mcmc import FixedOrderBMA, OrderChain, OrderMCMC, OrderModel

CLASS = "class"


# --------------------------------------------------------------------------- brute force
# Plain Python, sharing nothing with the package: every DAG consistent with an order is
# enumerated and weighted by prior x K2 marginal likelihood.


def _lgamma_k2(counts: dict, values: list, alpha: float) -> float:
    """K2 log marginal of one node: counts {(config, value): N} over its configurations."""
    r = len(values)
    configs = {cfg for cfg, _ in counts}
    out = 0.0
    for cfg in configs:
        n_j = sum(counts.get((cfg, v), 0) for v in values)
        out += math.lgamma(r * alpha) - math.lgamma(r * alpha + n_j)
        for v in values:
            out += math.lgamma(alpha + counts.get((cfg, v), 0)) - math.lgamma(alpha)
    return out


class BruteForce:
    """Exact averaging by enumerating every DAG (records: dicts node -> value or None)."""

    def __init__(self, records, nodes, max_parents, alpha=1.0):
        self.records, self.nodes, self.k, self.alpha = records, list(nodes), max_parents, alpha
        self.values = {v: sorted({r[v] for r in records if r[v] is not None}) for v in nodes}
        self._counts = {}

    def counts(self, child, parents):
        key = (child, tuple(parents))
        if key not in self._counts:
            self._counts[key] = self._count(child, parents)
        return self._counts[key]

    def _count(self, child, parents):
        out = {}
        for r in self.records:
            if r[child] is None:
                continue  # the documented rule: the child's missing records are skipped ...
            cfg = tuple("?" if r[p] is None else r[p] for p in parents)  # ... parents: a value
            out[(cfg, r[child])] = out.get((cfg, r[child]), 0) + 1
        return out

    def dags(self, order):
        choices = []
        for pos, _v in enumerate(order):
            pred = order[:pos]
            choices.append([c for s in range(min(self.k, len(pred)) + 1)
                            for c in itertools.combinations(pred, s)])
        for combo in itertools.product(*choices):
            yield dict(zip(order, combo))

    def log_score(self, dag):
        n = len(self.nodes)
        out = 0.0
        for v, parents in dag.items():
            out += -math.log(n) - math.log(math.comb(n, len(parents)))  # eq. 13 as documented
            out += _lgamma_k2(self.counts(v, parents), self.values[v], self.alpha)
        return out

    def joint(self, dag, u):
        p = 1.0
        for v, parents in dag.items():
            c = self.counts(v, parents)
            cfg = tuple(u[q] for q in parents)
            n_j = sum(c.get((cfg, x), 0) for x in self.values[v])
            p *= (self.alpha + c.get((cfg, u[v]), 0)) / (len(self.values[v]) * self.alpha + n_j)
        return p

    def order_terms(self, order, instantiations):
        """(log P(D | order), [P(u | D, order) for u]) by explicit enumeration of the DAGs."""
        logs, dags = [], list(self.dags(order))
        for dag in dags:
            logs.append(self.log_score(dag))
        top = max(logs)
        w = [math.exp(s - top) for s in logs]
        z = sum(w)
        joints = [sum(wi * self.joint(d, u) for wi, d in zip(w, dags)) / z for u in instantiations]
        return top + math.log(z), joints

    def class_proba(self, orders, x, order_weights=None):
        """P(class | x) averaging the joint over orders (eq. 11), missing features summed."""
        missing = [v for v in self.nodes if v != CLASS and x.get(v) is None]
        classes = self.values[CLASS]
        insts, index = [], []
        for c in classes:
            for fill in itertools.product(*[self.values[v] for v in missing]):
                u = {v: x.get(v) for v in self.nodes}
                u.update(dict(zip(missing, fill)))
                u[CLASS] = c
                insts.append(u)
                index.append(c)
        joint = dict.fromkeys(classes, 0.0)
        weights = order_weights or [1.0] * len(orders)
        for o, w in zip(orders, weights):
            _, js = self.order_terms(o, insts)
            for c, j in zip(index, js):
                joint[c] += w * j
        z = sum(joint.values())
        return {c: joint[c] / z for c in classes}


def _sample_records(seed, n_records, n_features=4, p_missing=0.0):
    """A small random Bayesian network over nominal features and a class, sampled."""
    rng = np.random.default_rng(seed)
    nodes = [f"f{j}" for j in range(n_features)] + [CLASS]
    rng.shuffle(nodes)
    cards = {v: int(rng.integers(2, 4)) for v in nodes}
    records = []
    for _ in range(n_records):
        r = {}
        for pos, v in enumerate(nodes):
            parents = nodes[max(0, pos - 2):pos]
            h = sum(sum(map(ord, r[p])) for p in parents)  # deterministic (no str hash)
            probs = np.full(cards[v], 0.15)
            probs[h % cards[v]] += 0.7
            r[v] = f"{v}={rng.choice(cards[v], p=probs / probs.sum())}"
        records.append(r)
    features = [v for v in nodes if v != CLASS]
    for r in records:
        for v in features:
            if rng.random() < p_missing:
                r[v] = None
    return records, sorted(features)


def _frame(records, features):
    X = pd.DataFrame([{f: r[f] for f in features} for r in records], columns=features)
    y = pd.Series([r[CLASS] for r in records])
    return X, y


def _queries(records, features, seed, n=4, p_missing=0.0):
    rng = np.random.default_rng(seed)
    out = []
    for r in rng.choice(len(records), n, replace=False):
        x = {f: records[r][f] for f in features}
        for f in features:
            if rng.random() < p_missing:
                x[f] = None
        out.append(x)
    return out


# ------------------------------------------------------------------ fixed-order exactness


@pytest.mark.parametrize("seed,class_pos,max_parents", [(0, 0, 3), (1, 2, 2), (2, 4, 3), (3, 1, 1)])
def test_fixed_order_equals_brute_force(seed, class_pos, max_parents):
    records, features = _sample_records(seed, 40)
    rng = np.random.default_rng(seed + 100)
    order = list(rng.permutation(features))
    order.insert(class_pos, CLASS)
    X, y = _frame(records, features)
    model = FixedOrderBMA(order=tuple(order), max_parents=max_parents).fit(X, y)
    brute = BruteForce(records, features + [CLASS], max_parents)
    assert model.orders_ == [tuple(order)]
    assert model.log_evidence_ == pytest.approx(brute.order_terms(order, [])[0], abs=1e-9)
    for x in _queries(records, features, seed, p_missing=0.3):
        expected = brute.class_proba([order], x)
        got = model.predict_proba_one({f: v for f, v in x.items() if v is not None})
        assert set(got) >= set(expected)
        for c, p in expected.items():
            assert got[c] == pytest.approx(p, abs=1e-9)


def test_k2_table_scores_match_the_shared_dirichlet_marginal():
    from onlinebma.order_mcmc.scores import ScoreTables
    from onlinebma.stats.dirichlet import log_dirichlet_marginal_np

    codes = np.random.default_rng(0).integers(-1, 3, (60, 4))
    codes[:, 2] = np.maximum(codes[:, 2], 0)
    t = ScoreTables(np.where(codes < 0, -1, codes), np.array([3, 3, 3, 3]), 2, alpha=0.7,
                    prune_tol=0)
    for i in range(4):
        for par, score in zip(t.parents[i], t.log_score[i]):
            counts, _ = t.family_counts(i, par[None])
            k = int((par < 4).sum())
            prior = -math.log(4) - math.log(math.comb(4, k))
            expected = log_dirichlet_marginal_np(counts.reshape(-1, 3), 0.7).sum() + prior
            assert score == pytest.approx(expected, abs=1e-9)


def test_missing_training_values_follow_the_documented_rule():
    """Child-missing records skipped, a missing parent counted as a value: vs brute force."""
    records, features = _sample_records(7, 35, p_missing=0.2)
    order = [features[1], CLASS, features[0], features[3], features[2]]
    X, y = _frame(records, features)
    model = FixedOrderBMA(order=tuple(order), max_parents=2).fit(X, y)
    brute = BruteForce(records, features + [CLASS], 2)
    assert model.log_evidence_ == pytest.approx(brute.order_terms(order, [])[0], abs=1e-9)
    for x in _queries(records, features, 8):
        expected = brute.class_proba([order], dict(x.items()))
        got = model.predict_proba_one({f: v for f, v in x.items() if v is not None})
        for c, p in expected.items():
            assert got[c] == pytest.approx(p, abs=1e-9)


def _node_codes(records, nodes, rows=None):
    """Integer codes (values sorted as in ``records``; None/absent -> -1) of ``rows``."""
    rows = records if rows is None else rows
    out = np.full((len(rows), len(nodes)), -1, dtype=np.int64)
    for j, v in enumerate(nodes):
        values = sorted({r[v] for r in records if r[v] is not None})
        for t, r in enumerate(rows):
            if r.get(v) is not None:
                out[t, j] = values.index(r[v])
    return out


def test_several_orders_average_the_joint_then_condition():
    """Eq. 11 over three orders equals brute force averaging of the joints."""
    records, features = _sample_records(11, 30)
    nodes = features + [CLASS]
    model = OrderModel(_node_codes(records, nodes), max_parents=2)
    orders = [[4, 0, 1, 2, 3], [0, 1, 2, 3, 4], [2, 4, 3, 1, 0]]
    weights = [model.log_weights(o) for o in orders]
    brute = BruteForce(records, nodes, 2)
    queries = _queries(records, features, 12, p_missing=0.4)
    rows = _node_codes(records, nodes, queries)
    rows[:, -1] = -1
    got = np.exp(model.class_log_proba(rows, weights, class_node=4))
    for t, x in enumerate(queries):
        expected = brute.class_proba([[nodes[v] for v in o] for o in orders], x)
        assert got[t] == pytest.approx([expected[c] for c in sorted(expected)], abs=1e-9)


def test_beyond_the_enumeration_bound_missing_nodes_lose_their_children():
    """max_missing_configs=1: the documented approximation, and exact for barren nodes."""
    records, features = _sample_records(5, 30)
    nodes = features + [CLASS]
    model = OrderModel(_node_codes(records, nodes), max_parents=2)
    order = [0, 4, 1, 2, 3]  # f-node 0 first, the class second, node 3 last
    lw = [model.log_weights(order)]
    rows = _node_codes(records, nodes)[:3].copy()
    rows[:, -1] = -1
    # Node 3 is last: barren, so the approximation is exact.
    last = rows.copy()
    last[:, 3] = -1
    exact = model.class_log_proba(last, lw, 4, max_missing_configs=64)
    approx = model.class_log_proba(last, lw, 4, max_missing_configs=1)
    assert approx == pytest.approx(exact, abs=1e-12)
    # Node 0 is first: the approximation averages only the DAGs where it has no children.
    first = rows.copy()
    first[:, 0] = -1
    approx = np.exp(model.class_log_proba(first, lw, 4, max_missing_configs=1))
    brute = BruteForce(records, nodes, 2)
    names = [nodes[v] for v in order]
    childless = [d for d in brute.dags(names) if all(nodes[0] not in p for p in d.values())]
    classes = brute.values[CLASS]
    for t in range(3):
        joint = []
        for c in classes:
            u = {v: records[t][v] for v in nodes}
            u[CLASS] = c
            num = den = 0.0
            for d in childless:
                w = math.exp(brute.log_score(d))
                sub = {v: p for v, p in d.items() if v != nodes[0]}  # barren node summed out
                num += w * brute.joint(sub, u)
                den += w
            joint.append(num / den)
        assert approx[t] == pytest.approx(np.array(joint) / sum(joint), abs=1e-9)


def test_rows_dropping_different_nodes_match_one_row_at_a_time():
    """The batched per-row renormalisation equals each row computed alone (log space)."""
    records, features = _sample_records(9, 40)
    nodes = features + [CLASS]
    model = OrderModel(_node_codes(records, nodes), max_parents=3)
    weights = [model.log_weights(o) for o in ([3, 4, 0, 1, 2], [4, 2, 1, 0, 3])]
    rows = _node_codes(records, nodes)[:8].copy()
    rows[:, 4] = -1
    for t in range(8):
        rows[t, [t % 4, (t + 1) % 4][: 1 + t % 2]] = -1
    batch = model.class_log_proba(rows, weights, 4, max_missing_configs=1)
    for t in range(8):
        alone = model.class_log_proba(rows[t:t + 1], weights, 4, max_missing_configs=1)
        assert batch[t] == pytest.approx(alone[0], abs=1e-10)


# --------------------------------------------------------------------- the order sampler


def test_swap_sampler_visits_orders_in_proportion_to_their_posterior():
    records, features = _sample_records(22, 60)
    model = OrderModel(_node_codes(records, features + [CLASS]), max_parents=2)
    orders = list(itertools.permutations(range(model.n)))
    log_ev = np.array([model.log_evidence(o) for o in orders])
    post = np.exp(log_ev - log_ev.max())
    post /= post.sum()
    assert 0.5 * np.abs(post - 1 / len(orders)).sum() > 0.5  # far from uniform: a real test
    chain = OrderChain(model, seed=3)
    visits = dict.fromkeys(orders, 0)
    n_iter = 60000
    block = 1000
    chain.run(2000, 0, 1)  # burn-in
    for _ in range(n_iter // block):
        _, kept = chain.run(block, 0, block)
        for o in kept:
            visits[tuple(int(v) for v in o)] += 1
    freq = np.array([visits[o] for o in orders]) / n_iter
    tv = 0.5 * np.abs(freq - post).sum()
    assert tv < 0.05, tv
    assert 0.0 < chain.acceptance_rate < 1.0


def _five_node_problem():
    records, features = _sample_records(31, 25)
    X, y = _frame(records, features)
    return records, features, X, y


def test_order_mcmc_approaches_the_exact_average_over_all_120_orders():
    _, _, X, y = _five_node_problem()
    mcmc = OrderMCMC(max_parents=2, n_orders=400, burn_in=2000, n_iter=42000, seed=5).fit(X, y)
    model = mcmc._model  # the fitted order model: internal, no public view
    # The exact answer: every order weighted by P(D | order); joints averaged, then conditioned.
    orders = list(itertools.permutations(range(model.n)))
    log_ev = np.array([model.log_evidence(o) for o in orders])
    queries = X.iloc[:6]
    got = mcmc.predict_proba(queries)
    rows = np.hstack([mcmc.data_.codes[:6], np.full((6, 1), -1)])  # the table's codes
    per_order = np.stack([
        model.log_joint_classes(rows, [model.log_weights(o)], model.n - 1)[:, :, 0] for o in orders
    ])
    log_joint = per_order + (log_ev - log_ev.max())[:, None, None]  # (orders, rows, classes)
    top = log_joint.max(axis=0)
    avg = np.log(np.exp(log_joint - top).sum(axis=0)) + top
    exact = np.exp(avg - avg.max(axis=1, keepdims=True))
    exact /= exact.sum(axis=1, keepdims=True)
    labels = list(mcmc.data_.classes)
    for k, label in enumerate(labels):
        assert np.abs(got[label].to_numpy() - exact[:, k]).max() < 0.02
    # the probabilities moved away from uniform, so the comparison is not vacuous
    assert np.abs(exact - 1.0 / exact.shape[1]).max() > 0.1


def test_continued_chain_follows_the_exact_order_posterior_on_a_stationary_stream(monkeypatch):
    """Issue 14: in a stream the chain is continued (iterations_per_record per new record) on
    incrementally updated scores; the orders it visits over the last records are distributed
    as the exact posterior over all 120 orders of the records learned (total variation)."""
    records, features = _sample_records(31, 200)
    visited = []
    step = OrderChain.step

    def recording_step(self, a, b, log_u):
        accepted = step(self, a, b, log_u)
        visited.append(tuple(self.order))
        return accepted

    monkeypatch.setattr(OrderChain, "step", recording_step)
    mcmc = OrderMCMC(max_parents=2, iterations_per_record=300, refit_every=1, seed=3)
    for t, r in enumerate(records):
        if t == len(records) - 60:
            start = len(visited)
        mcmc.learn_one({f: r[f] for f in features}, r[CLASS])
        mcmc.predict_proba_one({})  # the refit: the chain continues
    assert mcmc.n_fits_ == len(records) and len(visited) - start == 60 * 300
    # the node order of the stream state (no public view): the exact model's must match it
    model = OrderModel(_node_codes(records, list(mcmc._live.names)), max_parents=2)
    orders = list(itertools.permutations(range(model.n)))
    log_ev = np.array([model.log_evidence(o) for o in orders])
    post = np.exp(log_ev - log_ev.max())
    post /= post.sum()
    assert 0.5 * np.abs(post - 1 / len(orders)).sum() > 0.5  # far from uniform: a real test
    index = {o: k for k, o in enumerate(orders)}
    freq = np.bincount([index[o] for o in visited[start:]], minlength=len(orders))
    tv = 0.5 * np.abs(freq / freq.sum() - post).sum()
    assert tv < 0.05, tv


@pytest.mark.parametrize("cls, params", [(FixedOrderBMA, {}),
                                         (OrderMCMC, {"refit_every": 1000, "seed": 0})])
def test_a_class_seen_since_the_last_fit_is_predicted_at_once(cls, params):
    records, features = _sample_records(4, 30)
    model = cls(max_parents=2, **params)
    for r in records:
        model.learn_one({f: r[f] for f in features}, r[CLASS])
    model.predict_proba_one({})
    fits = model.n_fits_
    model.learn_one({features[0]: records[0][features[0]]}, "new class")
    p = model.predict_proba_one({features[0]: records[0][features[0]]})
    assert model.n_fits_ == fits  # no refit: the counts already hold the new class
    assert set(p) == set(model.classes_) and "new class" in p
    assert sum(p.values()) == pytest.approx(1.0, abs=1e-12) and p["new class"] > 0


def test_same_seed_same_result_and_other_seeds_agree_within_monte_carlo_error():
    _, _, X, y = _five_node_problem()
    params = {"max_parents": 2, "n_orders": 50, "burn_in": 500, "n_iter": 10500}
    a = OrderMCMC(seed=1, **params).fit(X, y)
    b = OrderMCMC(seed=1, **params).fit(X, y)
    assert a.orders_ == b.orders_
    np.testing.assert_array_equal(a.log_evidence_trace_, b.log_evidence_trace_)
    pa, pb = a.predict_proba(X.iloc[:8]), b.predict_proba(X.iloc[:8])
    np.testing.assert_array_equal(pa.to_numpy(), pb.to_numpy())
    c = OrderMCMC(seed=2, **params).fit(X, y)
    assert c.orders_ != a.orders_
    assert np.abs(c.predict_proba(X.iloc[:8]).to_numpy() - pa.to_numpy()).max() < 0.05


def test_diagnostics():
    _, features, X, y = _five_node_problem()
    m = OrderMCMC(max_parents=2, n_orders=5, burn_in=100, n_iter=600, seed=0).fit(X, y)
    assert len(m.orders_) == 5
    assert all(sorted(o) == sorted(features + [CLASS]) for o in m.orders_)
    assert m.log_evidence_trace_.shape == (600,)
    # the trace is log P(D | order) of the chain's state
    assert m.log_evidence_trace_[-1] == pytest.approx(
        # the fitted order model is internal (no public view)
        m._model.log_evidence([(features + [CLASS]).index(v) for v in m.orders_[-1]]), abs=1e-9)
    assert 0 < m.acceptance_rate_ < 1
    for probs in (m.class_parent_proba_, m.class_child_proba_, m.markov_blanket_proba_):
        assert set(probs) == set(features)
        assert all(0.0 <= p <= 1.0 for p in probs.values())
    # an edge into the class needs the feature before the class, and vice versa
    f = FixedOrderBMA(order=(CLASS, *features), max_parents=2).fit(X, y)
    assert all(p == 0.0 for p in f.class_parent_proba_.values())
    assert any(p > 0.0 for p in f.class_child_proba_.values())


def test_edge_and_markov_blanket_probabilities_equal_brute_force():
    records, features = _sample_records(13, 30)
    order = [features[2], features[0], CLASS, features[3], features[1]]
    X, y = _frame(records, features)
    model = FixedOrderBMA(order=tuple(order), max_parents=2).fit(X, y)
    brute = BruteForce(records, features + [CLASS], 2)
    dags = list(brute.dags(order))
    w = np.array([brute.log_score(d) for d in dags])
    w = np.exp(w - w.max())
    w /= w.sum()
    for f in features:
        parent = sum(wi for wi, d in zip(w, dags) if f in d[CLASS])
        child = sum(wi for wi, d in zip(w, dags) if CLASS in d[f])
        spouse = [any(CLASS in p and f in p for p in d.values()) for d in dags]
        mb = sum(wi for wi, d, sp in zip(w, dags, spouse)
                 if f in d[CLASS] or CLASS in d[f] or sp)
        assert model.class_parent_proba_[f] == pytest.approx(parent, abs=1e-9)
        assert model.class_child_proba_[f] == pytest.approx(child, abs=1e-9)
        assert model.markov_blanket_proba_[f] == pytest.approx(mb, abs=1e-9)


def test_bad_input_is_refused_clearly():
    with pytest.raises(ValueError, match="n_iter"):
        OrderMCMC(burn_in=100, n_iter=100)
    with pytest.raises(ValueError, match="max_parents"):
        OrderMCMC(max_parents=-1)
    with pytest.raises(ValueError, match="alpha"):
        FixedOrderBMA(order=(), alpha=0)
    with pytest.raises(ValueError, match="twice"):
        FixedOrderBMA(order=("a", "a"))
    _, features, X, y = _five_node_problem()
    with pytest.raises(ValueError, match="neither"):
        FixedOrderBMA(order=("nope",)).fit(X, y)
    with pytest.raises(ValueError, match="class_name"):
        OrderMCMC(class_name=features[0], n_iter=20, burn_in=0).fit(X, y)
    # a feature named like the class node is refused at learn time (issue 13, item 4):
    # tests/test_order_streaming.py checks that the learner is left as it was
    m = FixedOrderBMA(order=(CLASS,), refit_every=1).fit(X, y)
    with pytest.raises(ValueError, match="class_name"):
        m.learn_one({"class": "x"}, y.iloc[0])



@pytest.mark.slow
@pytest.mark.parametrize("cls", [OrderMCMC, FixedOrderBMA])
def test_river_estimator_checks_on_default_parameters(cls):
    """Issue 14: River's checks pass on the learners' defaults too (streams: no refits of
    60,000-iteration chains, so the defaults are affordable)."""
    from river import checks

    checks.check_estimator(cls())


# ------------------------------------------------------------------ experiments (smoke)


@pytest.mark.slow
@pytest.mark.experiments
@pytest.mark.parametrize("name", ["order_alarm", "bench_order", "order_wide"])
def test_experiment_quick_runs(name, tmp_path):
    import importlib

    mod = importlib.import_module(f"experiments.{name}")
    result = mod.run(quick=True, out=tmp_path)
    assert (tmp_path / "results" / f"{mod.NAME}.md").exists()
    for table in result["tables"].values():
        assert len(table) > 0
        numbers = table.select_dtypes("number").to_numpy(dtype=float)
        assert np.isfinite(numbers[~np.isnan(numbers)]).all()
    if name == "order_alarm":
        complete = result["tables"]["complete"]
        assert set(complete.dataset) == {"alarm", "breast-w", "mushroom"}
        raw = result["tables"]["raw"]
        assert raw[["acc_1", "acc_10"]].stack().between(0, 1).all()
        assert (tmp_path / "figures" / "order-alarm-accuracy.png").exists()


@pytest.mark.parametrize("cls", [FixedOrderBMA, OrderMCMC])
def test_a_record_of_too_many_features_is_refused_at_once_unchanged(cls):
    """Issue 40's catalogue: FixedOrderBMA did not finish predicting after a record of 5,000
    numeric features. More than MAX_FEATURES features are refused up front (well within a
    second), the learner unchanged, by learn_one and learn_many; predicting such a record
    (its features unknown, so skipped) answers at once."""
    import pickle
    import time

    from onlinebma.tuning import MAX_FEATURES

    model = cls(max_parents=1)
    for i in range(20):
        model.learn_one({"a": float(i % 7), "c": "xyz"[i % 3]}, i % 2 == 0)
    model.predict_proba_one({"a": 1.0})
    before = pickle.dumps(model)
    wide = {f"f{j}": float(j % 11) for j in range(5_000)}
    start = time.perf_counter()
    with pytest.raises(ValueError, match=f"5,002 features in all.*at most {MAX_FEATURES:,}"):
        model.learn_one(wide, True)
    with pytest.raises(ValueError, match="5,002 features in all"):
        model.learn_many(pd.DataFrame([wide, wide]), pd.Series([True, False]))
    assert time.perf_counter() - start < 1.0
    assert pickle.dumps(model) == before
    start = time.perf_counter()
    assert set(model.predict_proba_one(wide)) == {True, False}
    assert time.perf_counter() - start < 1.0


def test_the_feature_cap_counts_the_features_already_known(monkeypatch):
    """At the cap a record is learned; one more feature, over all records, is refused."""

    monkeypatch.setattr(tuning, "MAX_FEATURES", 3)
    model = FixedOrderBMA(max_parents=1)
    model.learn_one({"a": 1.0, "b": "x"}, True)
    model.learn_one({"a": 2.0, "c": "y"}, False)  # three features in all
    with pytest.raises(ValueError, match="4 features in all.* FixedOrderBMA takes"):
        model.learn_one({"d": 1.0}, True)
    assert model.coding.n_learned == 2
