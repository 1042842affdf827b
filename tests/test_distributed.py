"""Training on Dask gives exactly the learner one machine builds from the whole frame."""

import pickle

import dask
import dask.dataframe as dd
import distributed as dask_distributed
import numpy as np
import pandas as pd
import pytest

from onlinebma import distributed
from onlinebma.isa import ISA
from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
from onlinebma.tan import AODE, TAN, ModelAveragedTAN
from tests.support.learners import LEARNERS as REGISTRY

LEARNERS = [NaiveBayes, ModelAveragedNB, BMANB]
#: The batch learners of the registry, with parameters that keep a fit to a fraction of a
#: second (tests/support/learners.py).
BATCH = {learner.name: learner.make for learner in REGISTRY if learner.batch}


@pytest.fixture(scope="module")
def client():
    """The one small cluster of this module (threads, two workers)."""
    with dask_distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None) as cluster, \
            dask_distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def small(crx):
    """150 records, nominal and numeric features with missing values, for the batch learners."""
    X, y = crx
    rows = np.r_[0:75, 615:690]  # both classes, grouped
    return (X[["A1", "A2", "A4", "A9", "A14"]].iloc[rows].reset_index(drop=True),
            y.iloc[rows].reset_index(drop=True))


def _frame(X, y, npartitions):
    return dd.from_pandas(X.assign(label=y), npartitions=npartitions, sort=False)


def _assert_same(a, b, X):
    pa, pb = a.predict_proba_many(X), b.predict_proba_many(X)
    assert list(pa.columns) == list(pb.columns)
    np.testing.assert_allclose(pa.to_numpy(), pb.to_numpy(), rtol=0, atol=1e-9)
    if hasattr(a, "feature_posteriors"):
        fa, fb = a.feature_posteriors(), b.feature_posteriors()
        assert fa.keys() == fb.keys()
        for f in fa:
            assert fa[f] == pytest.approx(fb[f], abs=1e-9)


def _fit_and_predict_equal_one_machine(learner, X, y, npartitions, split_every, test_parts):
    """distributed.fit and predict_proba on the active scheduler equal learn_many on X, y."""
    one = learner()
    one.learn_many(X, y)
    model = distributed.fit(learner(), _frame(X, y, npartitions), target="label",
                            split_every=split_every)
    proba = distributed.predict_proba(model, dd.from_pandas(X, npartitions=test_parts)).compute()
    _assert_same(model, one, X)
    expected = one.predict_proba_many(X)
    assert list(proba.columns) == list(expected.columns)
    np.testing.assert_allclose(proba.to_numpy(), expected.to_numpy(), rtol=0, atol=1e-9)


@pytest.mark.parametrize("learner", LEARNERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("npartitions", [1, 3, 7])
@pytest.mark.parametrize("split_every", [2, 8])
def test_fit_equals_learn_many_on_the_whole_frame(crx, learner, npartitions, split_every):
    with dask.config.set(scheduler="synchronous"):
        _fit_and_predict_equal_one_machine(learner, *crx, npartitions, split_every, 3)


def test_fit_continues_from_what_the_model_learned(crx):
    X, y = crx
    start = ModelAveragedNB()
    start.learn_many(X[:100], y[:100])
    before = pickle.dumps(start)
    with dask.config.set(scheduler="synchronous"):
        model = distributed.fit(start, _frame(X[100:], y[100:], 4), target="label")
    assert pickle.dumps(start) == before  # the given learner is not modified
    one = pickle.loads(before)  # the learner continued serially (its cut points: its own)
    one.learn_many(X[100:], y[100:])
    _assert_same(model, one, X)


@pytest.mark.parametrize("learner", LEARNERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("npartitions", [1, 3, 7])
@pytest.mark.parametrize("split_every", [2, 8])
def test_on_a_local_cluster(crx, client, learner, npartitions, split_every):
    _fit_and_predict_equal_one_machine(learner, *crx, npartitions, split_every, 2)


def _batch_fit_equals_one_machine(name, X, y, npartitions, split_every):
    one = BATCH[name]()
    one.learn_many(X, y)
    model = distributed.fit(BATCH[name](), _frame(X, y, npartitions), target="label",
                            split_every=split_every)
    assert model.classes_ == one.classes_  # label order identical
    assert model.coding.n_learned == one.coding.n_learned == len(X)
    proba = distributed.predict_proba(model, dd.from_pandas(X, npartitions=3)).compute()
    expected = one.predict_proba_many(X)
    assert list(proba.columns) == list(expected.columns)
    np.testing.assert_allclose(proba.to_numpy(), expected.to_numpy(), rtol=0, atol=1e-9)
    _assert_same(model, one, X)


@pytest.mark.parametrize("name", BATCH)
@pytest.mark.parametrize("npartitions", [1, 3, 7])
@pytest.mark.parametrize("split_every", [2, 8])
def test_batch_learners_on_the_synchronous_scheduler(small, name, npartitions, split_every):
    X, y = small
    with dask.config.set(scheduler="synchronous"):
        _batch_fit_equals_one_machine(name, X, y, npartitions, split_every)


@pytest.mark.parametrize("name", BATCH)
@pytest.mark.parametrize("npartitions", [1, 3, 7])
@pytest.mark.parametrize("split_every", [2, 8])
def test_batch_learners_on_a_local_cluster(small, client, name, npartitions, split_every):
    X, y = small
    _batch_fit_equals_one_machine(name, X, y, npartitions, split_every)


def _learners_in(graph):
    """The learners stored in a task graph's values (nested in tasks and argument lists)."""
    found, stack = [], list(dict(graph).values())
    while stack:
        v = stack.pop()
        if isinstance(v, (ISA, NaiveBayes)):
            found.append(v)
        elif isinstance(v, (tuple, list)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif type(v).__module__.startswith("dask"):  # a task, an alias, a data node
            stack.extend(getattr(v, "args", ()))
            stack.extend(getattr(v, "kwargs", {}).values())
            stack.append(getattr(v, "value", None))
    return found


def test_isa_predictions_are_scattered_once_to_a_cluster(small, client, monkeypatch):
    X, y = small
    with dask.config.set(scheduler="synchronous"):
        model = distributed.fit(BATCH["ISA"](), _frame(X, y, 3), target="label")
    before = pickle.dumps(model)
    calls = []
    scatter = client.scatter
    monkeypatch.setattr(client, "scatter", lambda *a, **k: calls.append(k) or scatter(*a, **k))
    out = distributed.predict_proba(model, dd.from_pandas(X, npartitions=7))
    assert len(calls) == 1 and calls[0]["broadcast"]  # the stored records travel once
    assert _learners_in(out.__dask_graph__()) == []  # no task carries the learner itself
    proba = out.compute()
    assert pickle.dumps(model) == before  # predicting leaves the given learner as it was
    expected = model.predict_proba_many(X)
    assert list(proba.columns) == list(expected.columns)
    np.testing.assert_allclose(proba.to_numpy(), expected.to_numpy(), rtol=0, atol=1e-9)


def test_one_copy_of_the_learner_in_a_local_graph(small):
    X, y = small
    with dask.config.set(scheduler="synchronous"):
        model = distributed.fit(BATCH["ISA"](), _frame(X, y, 3), target="label")
        out = distributed.predict_proba(model, dd.from_pandas(X, npartitions=7))
        assert len(_learners_in(out.__dask_graph__())) == 1
        np.testing.assert_allclose(out.compute().to_numpy(),
                                   model.predict_proba_many(X).to_numpy(), rtol=0, atol=1e-9)


def test_empty_partitions_and_partitions_with_other_columns(crx):
    X, y = crx
    parts = [X[:50].assign(label=y[:50]), X[:0].assign(label=y[:0]),
             X[50:300].drop(columns=["A1", "A2"]).assign(label=y[50:300]),
             X[300:].assign(label=y[300:])]
    ddf = dd.concat([dd.from_pandas(p, npartitions=1) for p in parts])
    with dask.config.set(scheduler="synchronous"):
        model = distributed.fit(ModelAveragedNB(), ddf, target="label")
    one = ModelAveragedNB()  # the whole frame at once (a missing column: missing values)
    whole = pd.concat(parts)
    one.learn_many(whole.drop(columns="label"), whole["label"])
    _assert_same(model, one, X)


def test_bad_input_is_refused_clearly(crx):
    X, y = crx
    with pytest.raises(TypeError, match="dask DataFrame"):
        distributed.fit(NaiveBayes(), X.assign(label=y), target="label")
    with pytest.raises(ValueError, match="target column 'nope'"):
        distributed.fit(NaiveBayes(), _frame(X, y, 2), target="nope")
    with pytest.raises(ValueError, match="split_every"):
        distributed.fit(NaiveBayes(), _frame(X, y, 2), target="label", split_every=1)
    with pytest.raises(TypeError, match="dask DataFrame"):
        distributed.predict_proba(NaiveBayes(), X)

    class NoMerge:
        def learn_many(self, X, y):
            pass

    with pytest.raises(TypeError, match="no exact merge"):
        distributed.fit(NoMerge(), _frame(X, y, 2), target="label")
    bad = y.astype(object).copy()
    bad[400] = None
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError):
        distributed.fit(NaiveBayes(), _frame(X, bad, 3), target="label")


class _LabelCounts:
    """A toy learner that is not one of the library's: it joins Dask through
    ``distributed_plan`` alone (the counts of its labels, summed over the partitions)."""

    def __init__(self, counts=None):
        self.counts = dict(counts or {})

    def learn_many(self, X, y):
        for label in y:
            self.counts[label] = self.counts.get(label, 0) + 1

    def distributed_plan(self):
        return _LabelCountsPlan(self)


class _LabelCountsPlan(distributed.Plan):
    def __init__(self, model):
        self.model = model

    def learn_partition(self, X, y):
        learner = _LabelCounts()
        learner.learn_many(X, y)
        return [learner.counts]

    def combine(self, partials):
        return [counts for part in partials for counts in part]  # in partition order

    def finish(self, partial):
        out = _LabelCounts(self.model.counts)
        for counts in partial:
            for label, n in counts.items():
                out.counts[label] = out.counts.get(label, 0) + n
        return out


@pytest.mark.parametrize("split_every", [2, 3])
def test_a_learner_joins_dask_by_implementing_distributed_plan_alone(crx, split_every):
    X, y = crx
    start = _LabelCounts({"+": 5})
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(start, _frame(X, y, 7), target="label", split_every=split_every)
    one = _LabelCounts({"+": 5})
    one.learn_many(X, y)
    assert got.counts == one.counts and list(got.counts) == list(one.counts)
    assert start.counts == {"+": 5}  # the learner given is not modified


def _watched_frame(X, y, npartitions, learned):
    """A dask frame whose partitions append their number to ``learned`` when computed."""
    frame = X.assign(label=y)
    parts = np.array_split(np.arange(len(frame)), npartitions)

    def load(i):
        learned.append(i)
        return frame.iloc[parts[i]]

    return dd.from_map(load, list(range(npartitions)), meta=frame[:0])


@pytest.mark.parametrize("make, error, match", [
    (lambda: object(), TypeError, "no distributed_plan"),
    (lambda: NaiveBayes(decay=0.9), ValueError, "forget"),
    (lambda: NaiveBayes(decay="auto"), ValueError, "forget"),
    (lambda: ModelAveragedNB(structure_decay=0.9), ValueError, "forget"),
    (lambda: BMANB(decay=0.99), ValueError, "forget"),
], ids=["no plan", "decay", "auto", "structure_decay", "BMANB decay"])
def test_a_learner_that_cannot_join_is_refused_before_any_partition_is_learned(
        crx, make, error, match):
    X, y = crx
    learned = []
    ddf = _watched_frame(X, y, 3, learned)
    with dask.config.set(scheduler="synchronous"), pytest.raises(error, match=match):
        distributed.fit(make(), ddf, target="label")
    assert learned == []  # refused up front: no partition was even loaded
    with dask.config.set(scheduler="synchronous"):
        distributed.fit(NaiveBayes(), ddf, target="label")
    # the frame is read when a learner can join (twice: numbers read as intervals agree
    # their cut points in a first pass)
    assert sorted(set(learned)) == [0, 1, 2]


@pytest.mark.parametrize("name", ["ISA", "FAN", "OrderMCMC"])
def test_batch_learners_on_empty_partitions_and_partitions_with_other_columns(small, name):
    X, y = small
    parts = [X[:40].assign(label=y[:40]), X[:0].assign(label=y[:0]),
             X[40:100].drop(columns=["A1", "A14"]).assign(label=y[40:100]),
             X[100:].assign(label=y[100:])]
    ddf = dd.concat([dd.from_pandas(p, npartitions=1) for p in parts])
    with dask.config.set(scheduler="synchronous"):
        model = distributed.fit(BATCH[name](), ddf, target="label", split_every=2)
    one = BATCH[name]()
    one.learn_many(pd.concat(parts).drop(columns="label"), pd.concat(parts)["label"])
    assert model.classes_ == one.classes_
    _assert_same(model, one, X)


def _from_parts(parts, meta):
    """A dask DataFrame whose partitions are ``parts`` as they are (columns not aligned)."""
    return dd.from_map(lambda p: p, parts, meta=meta, enforce_metadata=False)


@pytest.mark.parametrize("make", [NaiveBayes, BATCH["ISA"]], ids=["NaiveBayes", "ISA"])
def test_refused_partitions_name_the_partition_and_leave_the_model_as_it_was(small, make):
    X, y = small
    model = make()
    model.learn_many(X[:10], y[:10])
    before = pickle.dumps(model)
    frame = X.assign(label=y)
    no_target = [frame[:50], frame[50:100].drop(columns="label"), frame[100:]]
    with dask.config.set(scheduler="synchronous"), \
            pytest.raises(ValueError, match="partition 1 has no target column 'label'"):
        distributed.fit(model, _from_parts(no_target, frame[:0]), target="label")
    bad = y.astype(object).copy()
    bad[120] = None
    with dask.config.set(scheduler="synchronous"), \
            pytest.raises(ValueError,
                          match=r"partition 2: the label y \(.label.\) is missing .*index 120\)"):
        distributed.fit(model, _frame(X, bad, 3), target="label")
    numbers = [frame[:50], frame[50:].assign(A1=1.5)]  # A1 numeric in one partition
    with dask.config.set(scheduler="synchronous"), pytest.raises(TypeError, match="'A1'"):
        distributed.fit(model, _from_parts(numbers, frame[:0]), target="label")
    assert pickle.dumps(model) == before  # nothing half-trained, the given learner untouched


def test_a_windowed_batch_learner_on_dask(small):
    """Partitions longer than the window drop records; the merge keeps their trace."""
    X, y = small
    one = ISA(phase1_models=5, max_models=10, window=30)
    one.learn_many(X, y)
    with dask.config.set(scheduler="synchronous"):
        model = distributed.fit(ISA(phase1_models=5, max_models=10, window=30),
                                _frame(X, y, 3), target="label", split_every=2)
    # ISA(window=30) stores the last 60 records: the window and the contexts of its sliding
    # score (docs/isa.md)
    assert model.data_.n == 60 and model.classes_ == one.classes_
    _assert_same(model, one, X)


def test_predict_proba_of_an_untrained_learner_has_no_columns(crx):
    X, _ = crx
    with dask.config.set(scheduler="synchronous"):
        out = distributed.predict_proba(NaiveBayes(), dd.from_pandas(X, npartitions=2))
        assert isinstance(out.compute(), pd.DataFrame)
        assert out.compute().shape == (len(X), 0)


@pytest.mark.experiments
def test_scale_out_benchmark_runs_and_checks_its_learners(tmp_path):
    """The benchmark's smallest run: one process against one tuned Dask worker (one cluster)."""
    from experiments import scale_out

    result = scale_out.run(quick=True, out=tmp_path, workers=1, records=20_000)
    runs = result["tables"]["runs"]
    assert list(runs["workers"]) == ["one process", 1]
    assert list(runs["config"]) == ["", "tuned"]
    assert list(runs["worker MALLOC_TRIM_THRESHOLD_"])[1] == "None"  # the setting was removed
    assert np.isfinite(runs["seconds"]).all() and (runs["seconds"] > 0).all()
    text = (tmp_path / "results" / "scale-out.md").read_text()
    assert "largest difference in predicted probabilities" in text
    gap = float(text.split("largest difference in predicted probabilities ")[1].split(".\n")[0])
    assert gap < 1e-9
    assert (tmp_path / "figures" / "scale-out-speedup.png").exists()


@pytest.mark.parametrize("make", [ModelAveragedTAN, TAN, AODE])
def test_tree_augmented_learners_join_dask_through_their_plan(votes, make):
    """The tan package joins Dask by implementing distributed_plan alone: fit on three
    partitions equals learn_many on the whole frame."""
    X, y = votes
    ddf = dd.from_pandas(X.assign(label=y), npartitions=3)
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(make(), ddf, target="label")
    one = make()
    one.learn_many(X, y)
    expected = one.predict_proba_many(X)
    proba = got.predict_proba_many(X).reindex(columns=expected.columns)
    np.testing.assert_allclose(proba.to_numpy(), expected.to_numpy(), atol=1e-9)


@pytest.mark.parametrize("learner", [pytest.param(x, id=x.name) for x in REGISTRY])
def test_fit_from_parquet_files_written_beforehand(small, tmp_path, learner):
    """Files in: a frame stored as Parquet files (one per partition), read back lazily with
    ``dask.dataframe.read_parquet`` (nominal columns then arrive as Arrow strings), trains
    every learner of the registry exactly as ``learn_many`` on the records in memory. The
    default ModelAveragedTAN reads the nominal columns: its representations of numbers are
    weighted in record order, which partitions cannot reproduce
    (tests/test_distributed_numbers.py; TAN and AODE agree their cut points in a first pass)."""
    X, y = small
    if learner.cls is ModelAveragedTAN:
        X = X[["A1", "A4", "A9"]]
    frame = X.assign(label=y)
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), 3)):
        frame.iloc[rows].to_parquet(tmp_path / f"part-{i}.parquet")
    ddf = dd.read_parquet(str(tmp_path))
    assert ddf.npartitions == 3
    with dask.config.set(scheduler="synchronous"):
        got = distributed.fit(learner.make(), ddf, target="label")
    one = learner.make()
    one.learn_many(X, y)
    expected = one.predict_proba_many(X)
    proba = got.predict_proba_many(X).reindex(columns=expected.columns)
    np.testing.assert_allclose(proba.to_numpy(), expected.to_numpy(), rtol=0, atol=1e-9)


@pytest.mark.parametrize("learner", [pytest.param(x, id=x.name) for x in REGISTRY])
def test_a_bad_value_or_label_is_named_with_its_partition_and_row(learner):
    """Issue 40's catalogue: an infinite value and a missing label are refused naming the
    partition, the feature or the label column, and the row's index, by every learner."""
    frame = pd.DataFrame({"a": [float(i % 7) for i in range(40)],
                          "c": ["xyz"[i % 3] for i in range(40)],
                          "label": [i % 2 == 0 for i in range(40)]})
    infinite = frame.copy()
    infinite.loc[25, "a"] = np.inf
    missing = frame.astype({"label": object})
    missing.loc[33, "label"] = None
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ValueError, match="partition 2: feature 'a' has an infinite value"):
            distributed.fit(learner.make(), dd.from_pandas(infinite, npartitions=4),
                            target="label")
        with pytest.raises(ValueError, match=r"partition 3: the label y \('label'\) is "
                                             r"missing .* row 3 \(index 33\)"):
            distributed.fit(learner.make(), dd.from_pandas(missing, npartitions=4),
                            target="label")
