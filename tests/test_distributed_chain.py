"""The tree-augmented learners whose state depends on record order, on Dask (issue 38 item 5).

Learners that forget (``decay``, ``structure_decay``) have no exact merge:
``distributed.fit`` learns their partitions one after the other with one learner
(onlinebma.distributed.chain), after the first pass has fixed the cut points from the whole
frame's samples, and equals ``learn_many`` on the whole frame. The frame
(tests/test_distributed_numbers.py) has numbers with a point mass and missing values, a numeric
column missing from the first records, a nominal column with missing values, and a class first
seen in a later partition; the sample bound is lowered so that the sample is a draw.
"""

from __future__ import annotations

import pickle

import dask
import dask.dataframe as dd
import distributed as dask_distributed
import numpy as np
import pandas as pd
import pytest

from onlinebma import distributed
from onlinebma.distributed.chain import ChainPlan
from onlinebma.distributed.first_pass import SampledMergePlan
from onlinebma.numeric.sample import ColumnSample
from onlinebma.tan import AODE, TAN, ModelAveragedTAN
from onlinebma.tan.merging import StackingPlan
from tests.test_distributed_numbers import (
    BOUND,
    assert_same_predictions,
    small_bound,  # noqa: F401 (autouse fixture)
    table,
)

PLUGIN = {
    "TAN decay=0.9": lambda: TAN(decay=0.9),
    "AODE decay=0.9": lambda: AODE(decay=0.9),
    "TAN decay=auto": lambda: TAN(decay="auto"),
}

AVERAGED = {
    "MATAN decay=0.99": lambda: ModelAveragedTAN(decay=0.99),
    "MATAN decay=auto": lambda: ModelAveragedTAN(decay="auto"),
    "MATAN structure_decay=0.9 MDL": lambda: ModelAveragedTAN(structure_decay=0.9,
                                                              numeric="MDL"),
    "MATAN decay=0.99 grids": lambda: ModelAveragedTAN(
        decay=0.99, numeric=("3 intervals", "16 intervals", "Gaussian")),
}


def dask_fit(start, X, y, npartitions):
    ddf = dd.from_pandas(X.assign(label=y), npartitions=npartitions, sort=False)
    with dask.config.set(scheduler="synchronous"):
        return distributed.fit(start, ddf, target="label")


def assert_same_learners(got, want, X):
    """The same cut points, predictions of ``X`` and posteriors."""
    assert got.numeric_readings == want.numeric_readings
    assert_same_predictions(got, want, X)
    assert_same_posteriors(got, want)


def assert_same_posteriors(got, want):
    """The rate posterior (and, for ModelAveragedTAN, the representation posterior): the
    weights of a recursion over the records in order."""
    readers = ["decay_posterior"] + (["representation_posterior"]
                                     if isinstance(want, ModelAveragedTAN) else [])
    for reader in readers:
        mine, theirs = getattr(got, reader)(), getattr(want, reader)()
        assert list(mine) == list(theirs)
        np.testing.assert_allclose(list(mine.values()), list(theirs.values()), rtol=0,
                                   atol=1e-9)


def whole_column_samples(X, y, columns) -> dict:
    """Each column's sample as learn_many on the whole frame draws it, written out."""
    codes, names = pd.factorize(y)
    return {f: ColumnSample.of_column(X[f].to_numpy(float), codes, tuple(names), BOUND)
            for f in columns}


def test_a_class_comes_first_in_a_later_partition():
    """What the tests below rely on: in 7 partitions, y2 first appears after partition 0."""
    X, y = table()
    first = dd.from_pandas(X.assign(label=y), npartitions=7, sort=False).partitions[0]
    assert "y2" not in set(first.compute()["label"]) and "y2" in set(y)
    assert np.isnan(X["w"][0]) and not np.isnan(X["z"][0])  # the first record has z alone


@pytest.mark.parametrize("decay", [0.9, "auto"])
def test_learn_many_that_forgets_takes_the_cut_points_from_the_whole_table(decay):
    """What the chain relies on: learn_many row by row fixes every numeric column's cut
    points from the whole table's sample before its first row (as the vectorised path
    does), so a table learned in parts, given those cut points first, is learned at once."""
    X, y = table()
    one, parts = TAN(decay=decay), TAN(decay=decay)
    one.learn_many(X, y)
    written_out = TAN(numeric=one.numeric)
    written_out.fix_numeric(whole_column_samples(X, y, ["z", "w"]))
    assert one.numeric_readings == written_out.numeric_readings
    parts.fix_numeric(whole_column_samples(X, y, ["z", "w"]))
    for rows in (slice(0, 50), slice(50, 170), slice(170, 240)):
        parts.learn_many(X[rows], y[rows])
    assert_same_learners(parts, one, X)


@pytest.mark.parametrize("name", PLUGIN)
@pytest.mark.parametrize("npartitions", [1, 3, 7])
def test_plugin_learners_that_forget_equal_learn_many_on_the_whole_frame(name, npartitions):
    X, y = table()
    got, one = dask_fit(PLUGIN[name](), X, y, npartitions), PLUGIN[name]()
    one.learn_many(X, y)
    assert_same_learners(got, one, X)


def cut_then_learned(make, X, y):
    """The learner given the whole frame's cut points, then ``learn_many`` on the whole
    frame: z first, the numeric feature of the first record with a number (the Gaussian
    member models it alone, as learning row by row chooses), then w."""
    one = make()
    one.fix_numeric(whole_column_samples(X, y, ["z"]))
    one.fix_numeric(whole_column_samples(X, y, ["z", "w"]))
    one.learn_many(X, y)
    return one


@pytest.mark.parametrize("name", AVERAGED)
@pytest.mark.parametrize("npartitions", [1, 4, 7])
def test_averaged_learners_equal_the_whole_frame_learned_with_its_cut_points(
        name, npartitions):
    X, y = table()
    got = dask_fit(AVERAGED[name](), X, y, npartitions)
    assert_same_learners(got, cut_then_learned(AVERAGED[name], X, y), X)


@pytest.mark.parametrize("name", list(AVERAGED)[:3])
def test_averaged_learners_equal_learn_many_on_the_whole_frame(name):
    X, y = table()
    one = AVERAGED[name]()
    one.learn_many(X, y)
    assert_same_learners(dask_fit(AVERAGED[name](), X, y, 4), one, X)


def test_a_gaussian_learner_that_forgets_chains_without_a_first_pass():
    """It cuts no numbers: nothing to agree, and the features its Gaussian models are those
    of the frame's first record with a number, learning row by row in order either way."""
    X, y = table()
    make = lambda: ModelAveragedTAN(numeric="Gaussian", decay=0.99)  # noqa: E731
    plan = distributed.plan_of(make())
    assert isinstance(plan, ChainPlan) and plan.agree is None
    one = make()
    one.learn_many(X, y)
    assert_same_learners(dask_fit(make(), X, y, 5), one, X)


@pytest.mark.parametrize("make, plan", [
    (TAN, SampledMergePlan),
    (AODE, SampledMergePlan),
    (lambda: ModelAveragedTAN(numeric="MDL", aode=False), SampledMergePlan),
    (lambda: ModelAveragedTAN(numeric="Gaussian"), SampledMergePlan),
    (lambda: TAN(decay=0.9), ChainPlan),
    (lambda: AODE(decay="auto"), ChainPlan),
    (ModelAveragedTAN, StackingPlan),
    (lambda: ModelAveragedTAN(numeric="MDL", structure_decay=0.9), ChainPlan),
], ids=["TAN", "AODE", "MDL", "Gaussian", "TAN decay", "AODE auto", "numeric auto",
        "structure_decay"])
def test_learners_whose_counts_add_keep_the_parallel_merge_plan(make, plan):
    assert type(distributed.plan_of(make())) is plan


def test_fit_continues_from_a_learner_that_has_learned():
    """A forgetting learner that has learned records (its numeric samples incomplete, values
    kept) continues on Dask as learn_many continues; the learner given is not modified."""
    X, y = table(seed=1)
    start = TAN(decay=0.9)
    for x, label in zip(X[:20].to_dict("records"), y[:20]):
        start.learn_one({f: v for f, v in x.items() if v is not None and v == v}, label)
    before = pickle.dumps(start)
    got = dask_fit(start, X[20:], y[20:], 3)
    assert pickle.dumps(start) == before
    start.learn_many(X[20:], y[20:])
    assert_same_learners(got, start, X)


@pytest.mark.parametrize("make", [
    lambda: TAN(decay=0.9, numeric_attributes=["w"]),
    lambda: ModelAveragedTAN(numeric="Gaussian", decay=0.99, numeric_attributes=["w"]),
], ids=["first pass", "chain"])
def test_a_refused_partition_is_named_and_nothing_is_returned(make):
    """A text value in the numeric column w in partition 2: refused, naming the partition,
    by the first pass (TAN) or by the chain's third task (Gaussian: no first pass); the
    learner given is unchanged."""
    X, y = table()
    frame = X.assign(label=y)
    bad = frame[120:180].astype({"w": object})
    bad.loc[130, "w"] = "?"
    parts = [frame[:60], frame[60:120], bad, frame[180:]]
    ddf = dd.from_delayed([dask.delayed(p) for p in parts], meta=frame.iloc[:0],
                          verify_meta=False)
    start = make()
    before = pickle.dumps(start)
    refused = r"partition 2: feature 'w' is numeric but got '\?'"
    with dask.config.set(scheduler="synchronous"), pytest.raises(TypeError, match=refused):
        distributed.fit(start, ddf, target="label")
    assert pickle.dumps(start) == before


def test_on_a_local_cluster():
    """The chain's tasks run on the workers, the learner passing from one to the next."""
    X, y = table(seed=3)
    with dask_distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None) as cluster, \
            dask_distributed.Client(cluster):
        ddf = dd.from_pandas(X.assign(label=y), npartitions=5, sort=False)
        tan = distributed.fit(TAN(decay=0.9), ddf, target="label")
        averaged = distributed.fit(ModelAveragedTAN(decay="auto"), ddf, target="label")
    one = TAN(decay=0.9)
    one.learn_many(X, y)
    assert_same_predictions(tan, one, X)
    reference = cut_then_learned(lambda: ModelAveragedTAN(decay="auto"), X, y)
    assert_same_learners(averaged, reference, X)
