"""The tree-augmented learners on Dask frames with numeric columns (issue 38 items 1 and 5).

A first pass over the partitions draws each numeric column's sample as ``learn_many`` on the
whole frame draws it (onlinebma.distributed.first_pass), the cut points are fixed from it, and
the partitions are counted with them: ``distributed.fit`` equals ``learn_many`` on the whole
frame. The default ``ModelAveragedTAN()`` (two representations weighed by stacking) counts
its partitions' fold states in parallel, then their cross-validated probabilities
(onlinebma.tan.merging.StackingPlan): its predictions and weights equal ``learn_many``'s.
The frame here has numbers with a point mass and missing values, a numeric column
missing from the first records (so a Gaussian learner's features come from the first record
alone), a nominal column with missing values, and a class first seen in a later partition;
the bound on the sample is lowered so that the draw leaves values out.
"""

from __future__ import annotations

import dask
import dask.dataframe as dd
import distributed as dask_distributed
import numpy as np
import pandas as pd
import pytest

from onlinebma import distributed
from onlinebma.numeric.sample import ColumnSample
from onlinebma.preprocessing import MDLDiscretizer
from onlinebma.tan import AODE, TAN, ModelAveragedTAN, coding, merging

BOUND = 60  # below the rows of the frame: the sample is a draw

LEARNERS = {
    "TAN": TAN,
    "AODE": AODE,
    "MDL": lambda: ModelAveragedTAN(numeric="MDL"),
    "8 intervals": lambda: ModelAveragedTAN(numeric="8 intervals"),
    "Gaussian": lambda: ModelAveragedTAN(numeric="Gaussian"),
    "independent Gaussians": lambda: ModelAveragedTAN(numeric="independent Gaussians"),
    "auto": ModelAveragedTAN,  # two representations weighed by stacking: StackingPlan
    # several interval grids and a Gaussian (a GridStack), weighed by stacking: StackingPlan
    "grids": lambda: ModelAveragedTAN(numeric=("3 intervals", "16 intervals", "MDL",
                                               "Gaussian")),
}


@pytest.fixture(autouse=True)
def small_bound(monkeypatch):
    monkeypatch.setattr(coding, "TABLE_SAMPLE_SIZE", BOUND)
    monkeypatch.setattr(merging, "TABLE_SAMPLE_SIZE", BOUND)


def table(n=240, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) < n // 2, rng.integers(0, 2, n), rng.integers(0, 3, n))
    z = np.where(rng.random(n) < 0.3, 0.0, rng.normal(y, 1.0))
    z[rng.random(n) < 0.1] = np.nan
    w = rng.normal(-y, 2.0)
    w[:5] = np.nan  # the first record with a number has z only
    w[rng.random(n) < 0.1] = np.nan
    a = np.array([f"a{(c + rng.integers(0, 2)) % 3}" for c in y], dtype=object)
    a[rng.random(n) < 0.1] = None
    z[0] = 0.5
    X = pd.DataFrame({"a": a, "z": z, "w": w})
    return X, pd.Series([f"y{c}" for c in y])


def fit(make, X, y, npartitions, split_every=2):
    ddf = dd.from_pandas(X.assign(label=y), npartitions=npartitions, sort=False)
    with dask.config.set(scheduler="synchronous"):
        return distributed.fit(make(), ddf, target="label", split_every=split_every)


def assert_same_predictions(got, want, X):
    """The same predictions of ``X`` (and, for ModelAveragedTAN, the same weights of the
    representations)."""
    expected = want.predict_proba_many(X)
    proba = got.predict_proba_many(X)
    assert list(proba.columns) == list(expected.columns)
    np.testing.assert_allclose(proba.to_numpy(), expected.to_numpy(), rtol=0, atol=1e-9)
    if isinstance(want, ModelAveragedTAN):
        mine, theirs = got.representation_posterior(), want.representation_posterior()
        assert list(mine) == list(theirs)
        np.testing.assert_allclose(list(mine.values()), list(theirs.values()), rtol=0,
                                   atol=1e-9)


@pytest.mark.parametrize("name", LEARNERS)
@pytest.mark.parametrize("npartitions", [1, 3, 7])
def test_fit_equals_learn_many_on_the_whole_frame(name, npartitions):
    X, y = table()
    one = LEARNERS[name]()
    one.learn_many(X, y)
    got = fit(LEARNERS[name], X, y, npartitions)
    assert got.numeric_readings == one.numeric_readings
    assert_same_predictions(got, one, X)
    if "Gaussian" not in name:  # the cut points come from a draw, not the first values
        z = X["z"].to_numpy()
        end = np.flatnonzero(~np.isnan(z))[BOUND - 1] + 1
        codes, names = pd.factorize(y)
        first = LEARNERS[name]()
        first.fix_numeric({"z": ColumnSample.of_column(z[:end], codes[:end], tuple(names),
                                                       BOUND)})
        assert first.numeric_readings["z"] != one.numeric_readings["z"]


def test_the_gaussian_features_are_those_of_the_first_record_with_a_number():
    """Partition 2's first record has both numbers: counted alone it would model both, and
    the merge would be refused; agreed from the whole frame, it models z alone, as
    learn_many on the whole frame does."""
    X, y = table()
    got = fit(LEARNERS["Gaussian"], X, y, 4)
    one = LEARNERS["Gaussian"]()
    one.learn_many(X, y)
    assert_same_predictions(got, one, X)
    only_z = ModelAveragedTAN(numeric="Gaussian")
    only_z.learn_many(X.drop(columns="w"), y)
    assert_same_predictions(got, only_z, X)


@pytest.mark.parametrize("name", ["TAN", "MDL", "auto"])
def test_fit_continues_from_a_learner_holding_kept_records(name):
    """A learner that kept records of learn_one (its numeric samples incomplete) continues on
    Dask as learn_many continues: the kept values first in the sample, then replayed."""
    X, y = table(seed=1)
    start = LEARNERS[name]()
    for x, label in zip(X[:20].to_dict("records"), y[:20]):
        start.learn_one({f: v for f, v in x.items() if v is not None and v == v}, label)
    assert start.numeric_readings == {}
    ddf = dd.from_pandas(X[20:].assign(label=y[20:]), npartitions=3, sort=False)
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(start, ddf, target="label")
    assert start.numeric_readings == {}  # not modified
    start.learn_many(X[20:], y[20:])
    assert got.numeric_readings == start.numeric_readings
    assert_same_predictions(got, start, X)


def test_merge_of_learners_given_the_same_cut_points():
    """Learners of parts of a frame, given the cut points of the whole frame's samples, merge
    into the learner of the whole frame."""
    X, y = table(seed=2)
    whole = TAN()
    whole.learn_many(X, y)
    parts = []
    for rows in (slice(0, 100), slice(100, 240)):
        part = TAN()
        part.fix_numeric(whole.numeric_readings)
        part.learn_many(X[rows], y[rows])
        parts.append(part)
    assert_same_predictions(parts[0].merge(parts[1]), whole, X)


@pytest.mark.parametrize("name", ["MDL", "auto"])
def test_on_a_local_cluster(name):
    X, y = table(seed=3)
    one = LEARNERS[name]()
    one.learn_many(X, y)
    with dask_distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None) as cluster, \
            dask_distributed.Client(cluster):
        ddf = dd.from_pandas(X.assign(label=y), npartitions=5, sort=False)
        got = distributed.fit(LEARNERS[name](), ddf, target="label")
    assert_same_predictions(got, one, X)


def test_a_gaussian_learner_that_has_learned_is_refused_naming_the_fix():
    X, y = table()
    start = ModelAveragedTAN(numeric="Gaussian")
    start.learn_many(X[:30], y[:30])
    ddf = dd.from_pandas(X[30:].assign(label=y[30:]), npartitions=3, sort=False)
    with dask.config.set(scheduler="synchronous"), \
            pytest.raises(ValueError, match="fit a fresh one on the whole frame"):
        distributed.fit(start, ddf, target="label")


def test_the_default_learner_still_trains_on_nominal_frames():
    X, y = table()
    X = X[["a"]]
    one = ModelAveragedTAN()
    one.learn_many(X, y)
    assert_same_predictions(fit(ModelAveragedTAN, X, y, 3), one, X)


def test_a_discretiser_pipeline_is_refused_naming_a_fix_that_works():
    """The pipeline has no plan; the error names two fixes, and both train on Dask."""
    X, y = table()
    with pytest.raises(TypeError, match=r"numeric='MDL'.*transform_many"):
        fit(lambda: MDLDiscretizer() | ModelAveragedTAN(), X, y, 3)
    fit(lambda: ModelAveragedTAN(numeric="MDL"), X, y, 3)
    disc = MDLDiscretizer()
    disc.learn_many(X, y)
    ddf = dd.from_pandas(X.assign(label=y), npartitions=3, sort=False)
    cut = ddf.drop(columns="label").map_partitions(disc.transform_many).assign(label=ddf.label)
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(ModelAveragedTAN(), cut, target="label")
    one = ModelAveragedTAN()
    one.learn_many(disc.transform_many(X), y)
    assert_same_predictions(got, one, disc.transform_many(X))


@pytest.mark.parametrize("make", [LEARNERS["TAN"], LEARNERS["Gaussian"], LEARNERS["auto"],
                                  lambda: AODE(decay=0.9)],
                         ids=["TAN", "Gaussian", "auto", "AODE decay=0.9"])
def test_empty_partitions_and_partitions_without_a_column(make):
    """An empty partition and one without the column w (missing there): the offsets and the
    samples still follow the rows of the whole frame (for a learner that forgets, the chain
    of partitions of tests/test_distributed_chain.py)."""
    X, y = table(seed=4)
    frame = X.assign(label=y)
    parts = [frame[:40], frame[:0], frame[40:100].drop(columns=["w"]), frame[100:]]
    ddf = dd.from_delayed([dask.delayed(p) for p in parts], meta=frame.iloc[:0],
                          verify_meta=False)
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(make(), ddf, target="label")
    whole = pd.concat(parts).reset_index(drop=True)
    one = make()
    one.learn_many(whole.drop(columns="label"), whole["label"])
    assert_same_predictions(got, one, X)
