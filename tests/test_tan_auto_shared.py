"""``ModelAveragedTAN(numeric=INTERVALS, decay="auto")``, one stack of five members
(:class:`~onlinebma.tan.members.TreeMemberStack`), against a
:class:`~onlinebma.forgetting.RateMixture` of separate learners, one per rate (each a
stack of one member, predicting and learning alone), run side by side on the same stream:
what sharing the coding, the layout, the gathers and the tree sums along the member axis
must not change. (The recursion itself, at a fixed rate and over the grid with its weights,
is checked against the brute force over every structure in ``tests/test_tan_exact.py``.)

Streams with nominal and numeric features, missing values (absent, ``None``, NaN), a class,
values and a feature that first appear mid-stream, records learned with and without their
prediction just before, renormalisations of the fast members' counts; both ``structures``,
with and without ``structure_decay``. Predictions and the posterior over rates agree to
1e-10 after every record (the tree sums are certified to 1e-10 nats), and so do the edge
posteriors, ``predict_proba_many``, pickles and ``learn_many``; the readers show every
member.
"""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pandas as pd
import pytest
from pandas.api.types import is_numeric_dtype
from river import checks

import onlinebma.tan.members as members
from onlinebma.forgetting import RateMixture
from onlinebma.numeric.sample import TABLE_SAMPLE_SIZE, ColumnSample
from onlinebma.tan import ModelAveragedTAN

# the rate axis over one interval representation (the representation axis:
# tests/test_tan_representations.py)
INTERVALS = "5 intervals"


def mixed_stream(n, seed=0):
    """Nominal chains whose dependence flips halfway, two numeric features, missing values
    of every kind, a third class after n/3, new values after n/4 and a feature after n/2."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(n):
        y = int(rng.integers(0, 3 if t > n // 3 else 2))
        prev, x = y, {}
        for j in range(4 + (t > n // 2)):
            keep = rng.random() < (0.85 if t < n // 2 else 0.25)
            prev = prev if keep else int(rng.integers(0, 3 if t > n // 4 else 2))
            x[f"f{j}"] = f"v{prev}"
        x["z"] = float(rng.normal(y, 1.0))
        x["w"] = float(rng.normal(prev, 2.0))
        for f in list(x):
            u = rng.random()
            if u < 0.04:
                del x[f]
            elif u < 0.06:
                x[f] = None
            elif u < 0.08 and f in ("z", "w"):
                x[f] = math.nan
        out.append((x, f"y{y}"))
    return out


def reference_edges(mixture):
    out: dict = {}
    for member, lw in zip(mixture.members, mixture.log_weights):
        for e, p in member.edge_posteriors().items():
            out[e] = out.get(e, 0.0) + math.exp(lw) * p
    return out


def close(got: dict, want: dict, tol=1e-10):
    assert list(got) == list(want)
    np.testing.assert_allclose(list(got.values()), list(want.values()), rtol=0, atol=tol)


PARAMS = [
    {"structures": "forests"},
    {"structures": "trees"},
    {"structures": "forests", "edge_prior": 0.3, "structure_decay": 0.98, "ess": 4.0},
    {"structures": "trees", "structure_decay": 0.99},
]


@pytest.mark.parametrize("params", PARAMS, ids=repr)
def test_shared_state_equals_a_mixture_of_separate_learners(params, monkeypatch):
    # renormalise every ~270 records at λ = 0.95 and ~1,400 at 0.99 (both clocks)
    monkeypatch.setattr(members, "RENORMALISE_ABOVE", 1e6)
    data = mixed_stream(700, seed=3)
    shared = ModelAveragedTAN(aode=False, numeric=INTERVALS, decay="auto", sample_size=15, **params)
    reference = RateMixture(ModelAveragedTAN(aode=False, numeric=INTERVALS, decay="auto",
                                             sample_size=15,
                                             **params))
    learned_alone = 0
    for t, (x, y) in enumerate(data):
        if t % 9 == 4:  # learned without a prediction of this very dict
            shared.learn_one(dict(x), y)
            reference.learn_one(dict(x), y)
            learned_alone += 1
            continue
        close(shared.predict_proba_one(x), reference.predict_proba_one(x))
        shared.learn_one(x, y)
        reference.learn_one(x, y)
        close(shared.decay_posterior(), reference.posterior())
    assert learned_alone > 50
    assert {len(m.counts.classes_) for m in reference.members} == {3}
    # the fast member's counts were renormalised, the slow ones' not
    assert 0 < reference.members[-1]._state._k[0] < 300  # private: the scaled unit's clock
    close(shared.edge_posteriors(), reference_edges(reference))
    X = pd.DataFrame([x for x, _ in data[-60:]])
    many = shared.predict_proba_many(X)
    want = reference.predict_proba_many(X)
    np.testing.assert_allclose(many.to_numpy(), want[many.columns].to_numpy(), rtol=0,
                               atol=1e-10)


def test_pickles_copies_and_batches_continue_alike():
    data = mixed_stream(300, seed=5)
    model = ModelAveragedTAN(aode=False, numeric=INTERVALS, decay="auto", sample_size=15)
    for x, y in data[:200]:
        model.predict_proba_one(x)
        model.learn_one(x, y)
    restored = pickle.loads(pickle.dumps(model))
    deep = copy.deepcopy(model)
    for x, y in data[200:]:
        p = model.predict_proba_one(x)
        # what is cached for the next record is not pickled: recomputed, it may be summed
        # on another path (equal to rounding)
        close(restored.predict_proba_one(x), p, 1e-12)
        close(deep.predict_proba_one(x), p, 1e-12)
        for m in (model, restored, deep):
            m.learn_one(x, y)
    close(restored.decay_posterior(), model.decay_posterior(), 1e-12)
    close(restored.edge_posteriors(), model.edge_posteriors(), 1e-12)
    assert model.clone().predict_proba_one(data[0][0]) == {}
    # learn_many learns the rows in order, as learn_one, after reading the table's numbers
    # from the table (fix_numeric of each numeric column's sample, the classes in order)
    frame = pd.DataFrame([x for x, _ in data[:120]])
    labels = pd.Series([y for _, y in data[:120]])
    batch = ModelAveragedTAN(aode=False, numeric=INTERVALS, decay="auto", sample_size=15)
    batch.learn_many(frame, labels)
    one = ModelAveragedTAN(aode=False, numeric=INTERVALS, decay="auto", sample_size=15)
    codes, classes = pd.factorize(labels)
    one.fix_numeric({f: ColumnSample.of_column(frame[f].to_numpy(dtype=float), codes,
                                               tuple(classes), TABLE_SAMPLE_SIZE)
                     for f in frame.columns if is_numeric_dtype(frame[f])})
    assert one.numeric_readings == batch.numeric_readings
    for x, y in data[:120]:
        one.learn_one(x, y)
    close(batch.decay_posterior(), one.decay_posterior(), 1e-12)
    close(batch.predict_proba_one(data[150][0]), one.predict_proba_one(data[150][0]), 1e-12)


def test_merge_is_refused():
    left = ModelAveragedTAN(aode=False, numeric=INTERVALS, decay="auto")
    right = ModelAveragedTAN(aode=False, numeric=INTERVALS, decay="auto")
    for x, y in mixed_stream(30, seed=6):
        left.learn_one(x, y)
        right.learn_one(x, y)
    with pytest.raises(ValueError, match="forget"):
        left.merge(right)


@pytest.mark.slow
def test_river_checks_with_decay_auto():
    checks.check_estimator(ModelAveragedTAN(aode=False, numeric=INTERVALS, decay="auto"))



def test_readers_show_every_member_under_decay_auto():
    """counts, edge_log_weights and decay_posterior read the stack's members: member r's
    tables and l equal those of a learner at rate r alone (same records, same clocks)."""
    from onlinebma.forgetting import AUTO_GRID

    data = mixed_stream(250, seed=8)
    shared = ModelAveragedTAN(aode=False, numeric=INTERVALS, decay="auto", sample_size=15)
    alone = [ModelAveragedTAN(aode=False, numeric=INTERVALS, decay=rate, sample_size=15)
             for rate in AUTO_GRID]
    for x, y in data:
        for m in (shared, *alone):
            m.predict_proba_one(x)
            m.learn_one(x, y)
    counts = shared.counts
    assert counts.n_members == len(AUTO_GRID) and counts.classes_ == alone[0].counts.classes_
    l_all = shared.edge_log_weights
    assert l_all.shape == (len(AUTO_GRID), counts.n_pairs)
    for r, member in enumerate(alone):
        mine = member.counts
        assert mine.n_members == 1
        np.testing.assert_allclose(counts.class_counts(r), mine.class_counts(), rtol=1e-12)
        for u in range(counts.n_features):
            for got, want in zip(counts.single(u, r), mine.single(u)):
                np.testing.assert_allclose(got, want, rtol=1e-12)
        for got, want in zip(counts.pair(0, 3, r), mine.pair(0, 3)):
            np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(l_all[r], member.edge_log_weights[0], rtol=1e-9, atol=1e-9)
        assert member.decay_posterior() == {AUTO_GRID[r]: 1.0}
    assert not np.allclose(l_all[0], l_all[-1])  # the members really differ


def test_plugin_readers_show_the_most_probable_rate():
    """TAN and AODE with decay="auto" run one clone per rate; tree() and counts show the
    clone of the most probable rate (not an empty learner)."""
    from onlinebma.forgetting import RateMixture
    from onlinebma.tan import AODE, TAN

    data = mixed_stream(200, seed=9)
    for make in (TAN, AODE):
        model = make(decay="auto", sample_size=15)
        reference = RateMixture(make(decay="auto", sample_size=15))
        for x, y in data:
            model.learn_one(x, y)
            reference.learn_one(x, y)
        posterior = model.decay_posterior()
        best = max(posterior, key=posterior.get)
        member = reference.members[list(posterior).index(best)]
        assert member.decay == best
        np.testing.assert_array_equal(model.counts.counts_, member.counts.counts_)
        assert model.counts.n_classes == 3
        if make is TAN:
            tree = model.tree()
            assert tree == member.tree() and len(tree) == 5 + 2  # every feature
