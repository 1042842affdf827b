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

import pickle

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from onlinebma import distributed
from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes, batches
from tests.test_distributed_numbers import assert_same_predictions, table

BOUND = 60  # below the rows of the frame: the sample is a draw

LEARNERS = {
    "NaiveBayes": NaiveBayes,
    "ModelAveragedNB": ModelAveragedNB,
    "BMANB": BMANB,
    "MDL": lambda: ModelAveragedNB(numeric="MDL"),
    "Gaussian": lambda: NaiveBayes(numeric="Gaussian"),
}


@pytest.fixture(autouse=True)
def small_bound(monkeypatch):
    monkeypatch.setattr(batches, "TABLE_SAMPLE_SIZE", BOUND)


def assert_fit_equals_learn_many(start, parts):
    """``distributed.fit`` of ``start`` (not modified) on a Dask frame whose partitions are
    ``parts`` (frames with a ``label`` column, possibly empty or without a column) equals
    ``learn_many`` of a copy of ``start`` on their concatenation: the same readings, the same
    predictions to 1e-9. Returns the fitted learner."""
    before = pickle.dumps(start)
    meta = max(parts, key=lambda p: p.shape[1]).iloc[:0]
    ddf = dd.from_delayed([dask.delayed(p) for p in parts], meta=meta, verify_meta=False)
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(start, ddf, target="label", split_every=2)
    assert pickle.dumps(start) == before
    whole = pd.concat(parts).reset_index(drop=True)
    serial = pickle.loads(before)
    serial.learn_many(whole.drop(columns="label"), whole["label"])
    assert got.numeric_readings == serial.numeric_readings
    assert_same_predictions(got, serial, whole.drop(columns="label"))
    return got


def cut(frame, npartitions):
    """``frame`` cut into ``npartitions`` consecutive partitions of near-equal sizes."""
    bounds = np.linspace(0, len(frame), npartitions + 1).astype(int)
    return [frame.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


@pytest.mark.parametrize("name", LEARNERS)
@pytest.mark.parametrize("npartitions", [1, 3, 7])
def test_fit_equals_learn_many_on_the_whole_frame(name, npartitions):
    """The frame's class y2 first comes in its second half, so in later partitions."""
    X, y = table()
    got = assert_fit_equals_learn_many(LEARNERS[name](), cut(X.assign(label=y), npartitions))
    if name != "Gaussian":  # the cut points come from a draw, not from the first values
        observed = X["z"].notna().to_numpy()
        first_values = LEARNERS[name]().numeric_readings_from(
            {"z": (X["z"][observed][:BOUND].to_numpy(), y[observed][:BOUND].to_numpy())})
        assert first_values["z"] != got.numeric_readings["z"]


@pytest.mark.parametrize("name", ["NaiveBayes", "MDL"])
def test_empty_partitions_and_partitions_without_a_column(name):
    """An empty partition and one without the column w (missing there): the offsets and the
    samples still follow the rows of the whole frame."""
    X, y = table(seed=4)
    frame = X.assign(label=y)
    assert_fit_equals_learn_many(LEARNERS[name](), [
        frame[:40], frame[:0], frame[40:100].drop(columns=["w"]), frame[100:]])


@pytest.mark.parametrize("name", ["BMANB", "MDL"])
def test_fit_continues_from_a_learner_holding_kept_records(name):
    """A learner that kept records of learn_one (its numeric samples incomplete) continues on
    Dask as learn_many continues: the kept values first in the sample, then replayed."""
    frame = table(seed=1)[0].assign(label=table(seed=1)[1])
    start = LEARNERS[name]()
    for row in frame[:20].to_dict("records"):  # missing values left out of the records
        start.learn_one({f: v for f, v in row.items() if f != "label" and pd.notna(v)},
                        row["label"])
    assert not start.numeric_readings  # every sample incomplete: the values kept
    assert_fit_equals_learn_many(start, cut(frame[20:], 3))
