"""ModelAveragedTAN(numeric="Gaussian forests") (onlinebma.tan.gaussian_forests in the stack of
onlinebma.tan.members) against a brute force over every structure.

The reference is tests/test_mixed_forests.py's: every allowed DAG in which each feature has at
most one feature parent (a numeric parent of a nominal child is not allowed), each scored by
its families' marginal likelihoods straight from the records (record ``i`` of ``1..t``
weighted ``decay^(t - i + 1)``: the counts' forgetting, times λ after each record), predicting

    P(c, x | D) = sum_G P(G) P(D + (x, c) | G) / sum_G P(G) P(D | G)

without forgetting, and with forgetting by the dynamic model average over the DAGs (each DAG's
log weight plus its predictive of the learned record, times structure_decay). The learner reads
dicts with string-valued nominal features and float numeric ones; the reference codes classes
and values in order of first appearance, with the domains the learner knows: a record is
predicted with the classes and values of the records before it (a value not seen before is
unknown, i.e. missing), and learned with its own classes and values added (the prior margins
of the new domain), as the stack does.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest

from onlinebma.stats.normal_wishart import NormalWishartPrior
from onlinebma.tan import ModelAveragedTAN
from onlinebma.tan.gaussian_forests import GAUSSIAN_FORESTS
from onlinebma.tan.members import Member, TreeMemberStack
from tests.support.dma import WrittenOutWeights
from tests.test_mixed_forests import Reference, allowed_structures, structure_scores
from tests.test_tan_representations import ExplicitRecursion, close, learn_beside
from tests.test_tan_representations import stream as mixed_stream

ESS = 2.0


def stream(seed, k, a, d, rows, new_value_at=None, new_class_at=None, missing=0.0):
    """Records ``(x dict, label)``: nominal features ``n0..`` (values ``"v0".."v2"``, all
    observed in the first record), numeric ``z0..`` that depend on the class, a nominal
    feature and each other. Before ``new_value_at`` the nominal features take only ``v0``,
    ``v1``; before ``new_class_at`` only the first ``k - 1`` classes occur."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(rows):
        top = k if new_class_at is None or i >= new_class_at else k - 1
        y = int(rng.integers(0, top)) if i else 0
        values = 3 if new_value_at is not None and i >= new_value_at else 2
        xs = [int((y + rng.integers(0, 2)) % values) if rng.random() < 0.6
              else int(rng.integers(0, values)) for _ in range(a)]
        z = rng.normal(0.0, 1.0, d) + 0.8 * y
        for j in range(d):
            if a:
                z[j] += 0.7 * xs[j % a]
            if j:
                z[j] += 0.9 * z[j - 1]
        x = {f"n{u}": f"v{v}" for u, v in enumerate(xs) if i == 0 or rng.random() >= missing}
        x.update({f"z{j}": float(v) for j, v in enumerate(z)
                  if i == 0 or rng.random() >= missing})
        out.append((x, f"c{y}"))
    return out


def coded(records, a, d, classes, values):
    """``(ys, xs, z)`` of records with these domains (-1, NaN: missing or unknown)."""
    ys = np.array([classes.index(y) for _, y in records], dtype=np.int64)
    xs = np.array([[values[u].index(x[f"n{u}"]) if x.get(f"n{u}") in values[u] else -1
                    for u in range(a)] for x, _ in records], dtype=np.int64)
    xs = xs.reshape(len(records), a)
    z = np.array([[x.get(f"z{j}", np.nan) for j in range(d)] for x, _ in records],
                 dtype=float).reshape(len(records), d)
    return ys, xs, z


def domains(records, a):
    """Classes and each nominal feature's values in order of first appearance."""
    classes = list(dict.fromkeys(y for _, y in records))
    values = [list(dict.fromkeys(x[f"n{u}"] for x, _ in records if f"n{u}" in x))
              for u in range(a)]
    return classes, values


def structure_predictions(records, weights, x, a, d, kind, classes=None, values=None):
    """``(log P(c, x | G, D))`` ``(K, structures)`` of a record over the structures of its
    observed features, with the domains of ``records`` (or those given), and those
    features' indices."""
    known_classes, known_values = domains(records, a)
    classes = classes or known_classes
    values = values or known_values
    prior = NormalWishartPrior(max(d, 1))  # (unused without numeric features)
    ref = Reference(len(classes), [len(v) for v in values], d, ESS, prior.nu,
                    np.diag(prior.t), prior.k0, prior.alpha_w)
    ys, xs, z = coded(records, a, d, classes, values)
    _, x_codes, x_z = coded([(x, classes[0])], a, d, classes, values)
    seen = np.flatnonzero(np.append(x_codes[0] >= 0, ~np.isnan(x_z[0])))
    parents = allowed_structures(int((seen < a).sum()), len(seen), kind)
    before = structure_scores(ref.table(ys, xs, z, weights), parents, seen)
    preds = [structure_scores(ref.table(np.append(ys, c), np.vstack([xs, x_codes]),
                                        np.vstack([z, x_z]), np.append(weights, 1.0)),
                              parents, seen) - before
             for c in range(len(classes))]
    return np.array(preds), before, parents, seen


def brute_force(records, a, d, kind, edge_prior, decay, structure_decay):
    """The reference's class probabilities of every record from the second on."""
    remembering = decay == 1.0 and structure_decay == 1.0
    out, dma = [], None
    for t in range(len(records)):
        past = records[:t]
        w = decay ** np.arange(t, 0, -1, dtype=float)  # the counts: times λ after each
        x, y = records[t]
        if t:
            preds, before, parents, seen = structure_predictions(past, w, x, a, d, kind)
            log_prior = (np.sum(parents != len(seen), axis=1) * math.log(edge_prior)
                         if kind == "forests" else np.zeros(len(parents)))
            if not remembering and len(seen) < a + d:  # not defined (the forgetting test)
                out.append(None)
            else:
                joint = log_prior + (before if remembering else dma)[None, :] + preds
                top = joint.max()
                scores = top + np.log(np.exp(joint - top).sum(axis=1))
                p = np.exp(scores - scores.max())
                out.append(p / p.sum())
        if not remembering:  # learned with the record's own classes and values added
            classes, values = domains(records[:t + 1], a)
            learned = structure_predictions(past, w, x, a, d, kind, classes, values)[0]
            dma = (0.0 if dma is None else dma) + learned[classes.index(y)]
            dma = structure_decay * dma
    return out


def learner_predictions(records, kind, edge_prior, decay, structure_decay):
    model = ModelAveragedTAN(aode=False, structures=kind, ess=ESS, edge_prior=edge_prior,
                             decay=decay,
                             structure_decay=structure_decay, numeric=GAUSSIAN_FORESTS)
    out = []
    for t, (x, y) in enumerate(records):
        if t:
            p = model.predict_proba_one(x)
            classes, _ = domains(records[:t], 0)
            out.append(np.array([p[c] for c in classes]))
        model.learn_one(x, y)
    return out, model


def assert_close(got, want, tol=1e-9):
    for t, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and np.abs(g - w).max() <= tol, (t, g, w)


CASES = [  # (classes, nominal features, numeric features, seed)
    (2, 2, 2, 1),
    (3, 1, 3, 2),
    (2, 0, 4, 3),
    (3, 2, 1, 4),
]


@pytest.mark.parametrize("kind", ["forests", "trees"])
@pytest.mark.parametrize("case", CASES)
def test_every_prediction_equals_every_structure(case, kind):
    k, a, d, seed = case
    records = stream(seed, k, a, d, 12, new_value_at=6, new_class_at=8)
    got, _ = learner_predictions(records, kind, 0.6, 1.0, 1.0)
    want = brute_force(records, a, d, kind, 0.6, 1.0, 1.0)
    assert_close(got, want)


@pytest.mark.parametrize("kind", ["forests", "trees"])
def test_missing_values_have_the_stated_meaning(kind):
    k, a, d, seed = CASES[0]
    records = stream(seed + 10, k, a, d, 12, new_value_at=5, missing=0.25)
    assert any(len(x) < a + d for x, _ in records)
    got, _ = learner_predictions(records, kind, 0.6, 1.0, 1.0)
    want = brute_force(records, a, d, kind, 0.6, 1.0, 1.0)
    assert_close(got, want)


@pytest.mark.parametrize("decay, structure_decay", [(0.8, 1.0), (1.0, 0.7), (0.85, 0.9)])
@pytest.mark.parametrize("kind", ["forests", "trees"])
def test_forgetting_equals_the_dynamic_model_average_over_every_structure(
        kind, decay, structure_decay):
    # complete records (the reference's DMA is over the structures of every feature), a
    # value and a class appearing mid-stream learned with the new domain's priors; a record
    # holding a value never seen before is predicted with it unknown (missing), which the
    # DMA reference does not define: those predictions are left out, the learning is not
    for case in (CASES[0], CASES[1], CASES[3]):
        k, a, d, seed = case
        records = stream(seed + 30, k, a, d, 11, new_value_at=5, new_class_at=7)
        got, _ = learner_predictions(records, kind, 0.8, decay, structure_decay)
        want = brute_force(records, a, d, kind, 0.8, decay, structure_decay)
        known = [all(x[f"n{u}"] in domains(records[:t], a)[1][u] for u in range(a))
                 for t, (x, _) in enumerate(records) if t]
        assert sum(known) >= 6
        assert_close([g for g, ok in zip(got, known) if ok],
                     [w for w, ok in zip(want, known) if ok])


class SeparateLearners(ExplicitRecursion):
    """One ModelAveragedTAN per (representation, rate) of ``keys``, weighed by the DMA
    recursion written out (tests/test_tan_representations.py)."""

    def __init__(self, keys, **params):
        self.keys = list(keys)
        self.learners = [ModelAveragedTAN(aode=False, numeric=rep, decay=rate, **params)
                         for rep, rate in self.keys]
        self.weights = WrittenOutWeights(len(self.keys))


@pytest.mark.parametrize("keys, params", [
    ([(GAUSSIAN_FORESTS, 1.0), ("Gaussian", 1.0)], {}),
    ([(GAUSSIAN_FORESTS, 0.97), ("8 intervals", 0.97)], {"structure_decay": 0.98}),
    ([(GAUSSIAN_FORESTS, 1.0), (GAUSSIAN_FORESTS, 0.9), ("MDL", 1.0)],
     {"structures": "trees", "ess": 4.0}),
], ids=repr)
def test_a_stack_with_gaussian_forests_equals_the_explicit_recursion(keys, params):
    # new classes and values mid-stream and missing values of every kind (mixed_stream)
    data = mixed_stream(120, seed=3)
    full = {"structures": "forests", "ess": 10.0, "edge_prior": 1.0, "structure_decay": 1.0,
            **params}
    shared = TreeMemberStack(full["structures"], full["ess"], full["edge_prior"],
                             full["structure_decay"], None, 20,
                             [Member(rate, rep) for rep, rate in keys])
    reference = SeparateLearners(keys, sample_size=20, **params)
    learn_beside(shared, reference, data, rates=False)
    X = pd.DataFrame([x for x, _ in data[-15:]])
    many = shared.predict_proba_many(X)
    for i, (x, _) in enumerate(data[-15:]):  # (the columns in classes_ order)
        one = shared.predict_proba_one(x)
        close(many.iloc[i].to_dict(), {c: one[c] for c in many.columns})


def test_pickled_learner_goes_on_as_the_original():
    data = mixed_stream(60, seed=4)
    model = ModelAveragedTAN(aode=False, numeric=GAUSSIAN_FORESTS, decay=0.95)
    for x, y in data[:30]:
        model.learn_one(x, y)
    copy = pickle.loads(pickle.dumps(model))
    for x, y in data[30:]:
        close(copy.predict_proba_one(x), model.predict_proba_one(x), tol=0)
        model.learn_one(x, y)
        copy.learn_one(x, y)


@pytest.mark.parametrize("params", [{}, {"decay": "auto", "structures": "trees"}], ids=repr)
def test_river_estimator_checks(params):
    from river import checks

    checks.check_estimator(ModelAveragedTAN(aode=False, numeric=GAUSSIAN_FORESTS, **params))


@pytest.mark.parametrize("params", [{}, {"structures": "trees", "ess": 3.0}], ids=repr)
def test_learn_many_stacks_gaussian_forests_as_the_folds_written_out(params, monkeypatch):
    # tests/test_tan_stacking.py's reference (one learner per member and fold, learn_one on
    # the rows outside the fold) with a Gaussian forest member; every nominal value is in
    # every fold's complement (the stack's fold states code every value of the table)
    from tests import test_tan_stacking as stacking

    monkeypatch.setattr(stacking, "REPRESENTATIONS", (GAUSSIAN_FORESTS, "MDL"))
    X, y = stacking.table(120, seed=2)
    X.loc[X["a"] == "late", "a"] = "a0"
    P, whole = stacking.written_out(X, y, **params)
    np.testing.assert_allclose(stacking.stack_probabilities(X, y, **params), P, rtol=0,
                               atol=1e-9)
    model = ModelAveragedTAN(aode=False, numeric=GAUSSIAN_FORESTS, **params)
    model.learn_many(X, y)  # one member: the statistics of learn_one on every row
    for x in stacking.records(X.iloc[:30]) + [{}, {"z": 1.0}]:
        stacking.assert_close_dicts(model.predict_proba_one(x), whole[0].predict_proba_one(x))
    batch = model.predict_proba_many(X.iloc[:20])
    for i, x in enumerate(stacking.records(X.iloc[:20])):
        stacking.assert_close_dicts(dict(batch.iloc[i]), model.predict_proba_one(x))


def test_merge_adds_the_statistics_or_names_the_problem():
    data = mixed_stream(80, seed=7)
    whole = ModelAveragedTAN(aode=False, numeric=GAUSSIAN_FORESTS)
    left = ModelAveragedTAN(aode=False, numeric=GAUSSIAN_FORESTS)
    for x, y in data:
        whole.learn_one(x, y)
    for x, y in data[:40]:
        left.learn_one(x, y)
    right = pickle.loads(pickle.dumps(left))  # the same codes, then other records
    for x, y in data[40:]:
        right.learn_one(x, y)
    first = ModelAveragedTAN(aode=False, numeric=GAUSSIAN_FORESTS)
    for x, y in data[:40]:
        first.learn_one(x, y)
    merged = left.merge(right)  # data[:40] twice and data[40:]
    for x, y in data[:40]:
        whole.learn_one(x, y)
    for x, _ in data[:25]:
        close(merged.predict_proba_one(x), whole.predict_proba_one(x), tol=1e-9)
    other = ModelAveragedTAN(aode=False, numeric=GAUSSIAN_FORESTS)
    for x, y in reversed(data):  # classes and values first seen in another order
        other.learn_one(x, y)
    with pytest.raises(ValueError, match="different orders"):
        first.merge(other)


def test_dask_refuses_gaussian_forests_that_forget_nothing_before_reading_a_partition():
    """The partitions' learners would lay out their statistics in their own orders of classes
    and values and not merge: distributed.fit refuses up front, naming what works instead,
    and the learner is unchanged."""
    import dask.dataframe as dd

    from onlinebma import distributed

    frame = pd.DataFrame({"a": ["u", "v", "w", "u"] * 5, "x": np.arange(20.0),
                          "class": ["p", "q"] * 10})
    model = ModelAveragedTAN(aode=False, numeric="Gaussian forests")
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="Gaussian forests.*learn_many on the whole frame"):
        distributed.fit(model, dd.from_pandas(frame, npartitions=2))
    assert pickle.dumps(model) == before


def test_dask_chains_gaussian_forests_that_forget_and_equals_learn_many():
    """With forgetting the partitions are learned one after the other by one learner (the
    chain), so the orders of classes and values are the whole frame's: the result equals
    learn_many on the whole frame."""
    import dask
    import dask.dataframe as dd

    from onlinebma import distributed

    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame({"a": rng.choice(["u", "v", "w"], n), "x": rng.normal(size=n),
                          "z": rng.normal(size=n), "class": rng.choice(["p", "q"], n)})
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(ModelAveragedTAN(aode=False, numeric="Gaussian forests", decay=0.9),
                              dd.from_pandas(frame, npartitions=3))
    want = ModelAveragedTAN(aode=False, numeric="Gaussian forests", decay=0.9)
    want.learn_many(frame.drop(columns="class"), frame["class"])
    rows = frame.drop(columns="class").head(40)
    assert np.abs(got.predict_proba_many(rows).to_numpy()
                  - want.predict_proba_many(rows).to_numpy()).max() < 1e-9
