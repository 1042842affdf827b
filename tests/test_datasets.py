"""The bundled datasets as a River user meets them: two-class labels are bools (as River's own
two-class datasets yield), so that River's binary metrics read them; readable feature names."""

import csv
import gzip
import io
import itertools
import math

import pytest
from river import metrics

from onlinebma import datasets
from onlinebma.isa import ISA
from onlinebma.naive_bayes import ModelAveragedNB, NaiveBayes

TWO_CLASS = sorted(n for n, info in datasets.catalog().items() if info["classes"] == 2)
MULTI_CLASS = sorted(n for n, info in datasets.catalog().items() if info["classes"] > 2)


def _raw(name):
    """The file's header and rows, read here without the loader."""
    with gzip.open(datasets.DATA / f"{name}.csv.gz", "rt", newline="") as f:
        rows = list(csv.reader(io.StringIO(f.read())))
    return rows[0], rows[1:]


@pytest.mark.parametrize("name", TWO_CLASS)
def test_two_class_labels_are_bools_true_for_the_documented_source_value(name):
    ds = datasets.UCIDataset(name)
    header, rows = _raw(name)
    target = header.index("class")
    raw = [r[target] for r in rows]
    assert ds.true in raw and len(set(raw)) == 2
    labels = [y for _, y in ds]
    assert all(type(y) is bool for y in labels)
    assert labels == [v == ds.true for v in raw]
    assert ds.true_means  # the documented meaning of True
    X, y = ds.to_frame()
    assert y.dtype == bool and y.tolist() == labels


@pytest.mark.parametrize("name", MULTI_CLASS)
def test_multi_class_labels_stay_the_source_strings(name):
    ds = datasets.UCIDataset(name)
    header, rows = _raw(name)
    target = header.index("class")
    assert [y for _, y in ds] == [r[target] for r in rows]
    assert ds.true is None


def test_elec2_is_true_when_the_price_went_up_as_in_river():
    ds = datasets.Elec2()
    assert ds.true == "1"
    assert sum(y for _, y in itertools.islice(ds, 2000)) > 0


@pytest.mark.parametrize("name", TWO_CLASS)
def test_river_binary_metrics_read_our_learners_on_every_two_class_dataset(name):
    """LogLoss, ROCAUC and F1 (which look for the label True) on progressive validation: the
    log loss equals the mean of -log P(y) computed here, and the learners rank and find the
    True class better than chance (on string labels River's metrics read 34.54, 0.0, 0.0)."""
    ds = datasets.UCIDataset(name)
    learners = [NaiveBayes(nominal_attributes=ds.nominal_attributes),
                ModelAveragedNB(nominal_attributes=ds.nominal_attributes)]
    if name == "electricity":  # ISA's per-record search is costly elsewhere
        learners.append(ISA())
    for model in learners:
        log_loss, losses = metrics.LogLoss(), []
        auc, f1 = metrics.ROCAUC(), metrics.F1()
        n = 200 if isinstance(model, ISA) else 600 if ds.n_samples > 1100 else None
        for x, y in itertools.islice(ds, n):  # tic-tac-toe is sorted by class: all of it
            proba = model.predict_proba_one(x)
            if proba:
                log_loss.update(y, proba.get(True, 0.0))
                p_true = min(max(proba.get(True, 0.0), 1e-15), 1 - 1e-15)
                losses.append(-math.log(p_true if y else 1.0 - p_true))
                auc.update(y, proba)
                f1.update(y, max(proba, key=proba.get))
            model.learn_one(x, y)
        assert math.isclose(log_loss.get(), sum(losses) / len(losses), rel_tol=1e-9), model
        assert log_loss.get() < 5.0, model
        assert auc.get() > 0.5, model
        assert f1.get() > 0.0, model


@pytest.mark.parametrize("name", sorted(n for n, i in datasets.catalog().items() if "names" in i))
def test_features_carry_the_names_the_source_documents(name):
    """The renamed columns (the files keep their ``a1``, ``a2``...) hold the file's values
    column for column, and ``numeric``/``nominal_attributes`` speak of the new names."""
    ds = datasets.UCIDataset(name)
    header, rows = _raw(name)
    renames = datasets.catalog()[name]["names"]
    X, _ = ds.to_frame()
    assert list(X.columns) == [renames.get(c, c) for c in header if c != "class"]
    x, _ = next(iter(ds))
    assert set(x) <= set(X.columns) and not set(x) & set(renames)
    assert set(ds.numeric) | set(ds.nominal_attributes) == set(X.columns)
    for old, new in renames.items():
        j = header.index(old)
        column = X[new].tolist()
        assert [str(v) if new not in ds.numeric else float(v) for v in column] == \
            [r[j] if new not in ds.numeric else float(r[j]) for r in rows]


def test_mushroom_speaks_of_odor_and_spore_print_colour():
    ds = datasets.UCIDataset("mushroom")
    x, y = next(iter(ds))
    assert x["odor"] in set("alcyfmnps") and "a5" not in x
    assert "spore-print-color" in ds.nominal_attributes
