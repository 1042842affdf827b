"""The naive Bayes family on Dask frames with numeric columns read as intervals (issue 38).

``learn_many`` fixes every numeric column's cut points from the column's whole-table sample
(:class:`~onlinebma.numeric.sample.ColumnSample`), and ``distributed.fit`` draws the same sample
from the partitions at their offsets (:mod:`onlinebma.distributed.first_pass`), so it equals
``learn_many`` on the whole frame. The frame (tests/test_distributed_numbers.py's) has a
point mass and missing values, a numeric column missing from the first records, a nominal
column with missing values and a class first seen in the second half; the bound on the sample
is lowered so that the draw leaves values out.
"""

from __future__ import annotations

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from onlinebma import distributed
from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes, batches
from onlinebma.numeric.sample import ColumnSample
from tests.test_distributed_numbers import assert_same_predictions, table

BOUND = 60  # below the rows of the frame: the sample is a draw

LEARNERS = {
    "NaiveBayes": NaiveBayes,
    "ModelAveragedNB": ModelAveragedNB,
    "BMANB": BMANB,
    "MDL": lambda: ModelAveragedNB(numeric="MDL"),
    "Gaussian": lambda: NaiveBayes(numeric="gaussian"),
}


@pytest.fixture(autouse=True)
def small_bound(monkeypatch):
    monkeypatch.setattr(batches, "TABLE_SAMPLE_SIZE", BOUND)


def fit(make, X, y, npartitions):
    ddf = dd.from_pandas(X.assign(label=y), npartitions=npartitions, sort=False)
    with dask.config.set(scheduler="synchronous"):
        return distributed.fit(make(), ddf, target="label", split_every=2)


@pytest.mark.parametrize("name", LEARNERS)
@pytest.mark.parametrize("npartitions", [1, 3, 7])
def test_fit_equals_learn_many_on_the_whole_frame(name, npartitions):
    X, y = table()
    one = LEARNERS[name]()
    one.learn_many(X, y)
    got = fit(LEARNERS[name], X, y, npartitions)
    assert got.numeric_readings == one.numeric_readings
    assert_same_predictions(got, one, X)
    if name != "Gaussian":  # the cut points come from a draw, not from the first values
        z = X["z"].to_numpy()
        end = np.flatnonzero(~np.isnan(z))[BOUND - 1] + 1
        codes, names = pd.factorize(y)
        first = LEARNERS[name]()
        first.fix_numeric({"z": ColumnSample.of_column(z[:end], codes[:end], tuple(names),
                                                       BOUND)})
        assert first.numeric_readings["z"] != one.numeric_readings["z"]


@pytest.mark.parametrize("name", ["NaiveBayes", "MDL"])
def test_empty_partitions_and_partitions_without_a_column(name):
    """An empty partition and one without the column w (missing there): the offsets and the
    samples still follow the rows of the whole frame."""
    X, y = table(seed=4)
    frame = X.assign(label=y)
    parts = [frame[:40], frame[:0], frame[40:100].drop(columns=["w"]), frame[100:]]
    ddf = dd.from_delayed([dask.delayed(p) for p in parts], meta=frame.iloc[:0],
                          verify_meta=False)
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(LEARNERS[name](), ddf, target="label")
    whole = pd.concat(parts).reset_index(drop=True)
    one = LEARNERS[name]()
    one.learn_many(whole.drop(columns="label"), whole["label"])
    assert got.numeric_readings == one.numeric_readings
    assert_same_predictions(got, one, whole.drop(columns="label"))


@pytest.mark.parametrize("name", ["BMANB", "MDL"])
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
