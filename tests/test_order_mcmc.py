"""Tests of onlinebma.order_mcmc: exactness against brute force, the chain against the exact
order posterior, reproducibility, River's estimator checks and the experiments' smoke runs."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

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

    def counts(self, child, parents):
        out = {}
        for r in self.records:
            if r[child] is None:
                continue  # the documented rule: the child's missing records are skipped ...
            cfg = tuple("?" if r[p] is None else r[p] for p in parents)  # ... parents: a value
            out[(cfg, r[child])] = out.get((cfg, r[child]), 0) + 1
        return out

    def dags(self, order):
        choices = []
        for pos, v in enumerate(order):
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
        joint = {c: 0.0 for c in classes}
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
            h = sum(hash(str(r[p])) % 7 for p in parents)
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
