"""Per-record speed of the naive Bayes family against River as records widen.

Progressive validation (``predict_proba_one`` then ``learn_one``) on synthetic streams, side by
side in this one process, records per second of CPU time (``time.process_time``), median of 3
interleaved rounds, each learner from scratch on the same records:

- **Nominal grid**: N nominal features × K classes × M values per feature (a feature's value
  follows the class with probability 0.3), against River's ``MultinomialNB`` on the same
  records one-hot encoded (``{"f3=v2": 1}``), its natural input.
- **Numeric grid**: N numeric features × K classes (class-dependent Gaussian means), against
  River's ``GaussianNB``. The learners choose the array path of wide records
  (:mod:`onlinebma.naive_bayes.wide`, and :mod:`~onlinebma.naive_bayes.wide_nominal` for
  nominal features) by width; the **crossover** tables time both paths forced, side by
  side, on streams around the thresholds.

- **Bag of words** (``absent="zero"``): records of 20 tokens drawn from a known generating
  model (a Zipf vocabulary of V words, each of 2 classes boosting its own tenth of the words
  four-fold), V from 10^2 to 10^5, against River's ``MultinomialNB`` on the same dicts of
  counts: progressive accuracy (also that of the Bayes-optimal rule under the generating
  model), records/s and microseconds per present word. River's SMS spam dataset is not in its
  wheel (``river.datasets.SMSSpam`` downloads it), so this stream is synthetic only.
- **Pandas string columns**: ``learn_many`` and ``predict_proba_many`` on n x 20 string
  columns (10 values, 3 classes) against scikit-learn's ``OrdinalEncoder`` + ``CategoricalNB``
  (encoding included in both steps), CPU seconds, median of 3 interleaved rounds.

The stream length shrinks with N so that every cell takes about the same time. The issue's
targets: ModelAveragedNB and BMANB at least 1.5 x River in every cell of the grids; on bags
of words accuracy within 1 point of River and records/s at least 1.5 x, with a cost per
record independent of V; on string columns no slower than the peer at 10^6 x 20. The full
run covers the issue's whole grid: N in {5, 20, 100, 500}, K in {2, 10, 50} and, for nominal
features, M in {2, 10, 100} values.
"""

from __future__ import annotations

import contextlib
import math
import os
import pathlib
import statistics
import time

import numpy as np

from ._report import load_note, markdown_table, pyplot, rng, save_figure, write_results
from .bench_nb import stream_rate

NAME = "wide"


def nominal_stream(n, n_features, n_classes, n_values=10, seed=0):
    g = rng(NAME, 1, n_features, n_classes, seed)
    y = g.integers(n_classes, size=n)
    X = g.integers(n_values, size=(n, n_features))
    follow = g.random((n, n_features)) < 0.3
    X = np.where(follow, (y[:, None] + np.arange(n_features)) % n_values, X)
    named = [{f"f{j}": f"v{v}" for j, v in enumerate(row)} for row in X.tolist()]
    onehot = [{f"f{j}=v{v}": 1 for j, v in enumerate(row)} for row in X.tolist()]
    return named, onehot, [int(v) for v in y]


def numeric_stream(n, n_features, n_classes, seed=0):
    g = rng(NAME, 2, n_features, n_classes, seed)
    y = g.integers(n_classes, size=n)
    shift = g.normal(size=(n_classes, n_features)) * 0.5
    X = g.normal(size=(n, n_features)) + shift[y]
    return [{f"z{j}": v for j, v in enumerate(row)} for row in X.tolist()], [int(v) for v in y]


def bag_stream(n, vocabulary, words=20, n_classes=2, seed=0):
    """Bags of ``words`` tokens from the generating model of the module docstring, their
    labels, and the accuracy of the Bayes-optimal rule (true parameters) on them."""
    g = rng(NAME, 3, vocabulary, seed)
    base = 1.0 / np.arange(1, vocabulary + 1)
    log_theta, cums = [], []
    for _ in range(n_classes):
        boost = np.ones(vocabulary)
        boost[g.permutation(vocabulary)[: max(1, vocabulary // 10)]] = 4.0
        p = base * boost / (base * boost).sum()
        log_theta.append(np.log(p))
        cums.append(np.cumsum(p))
    y = g.integers(n_classes, size=n)
    records, hits = [], 0
    for label in y.tolist():
        tokens = np.minimum(np.searchsorted(cums[label], g.random(words)), vocabulary - 1)
        words_, counts = np.unique(tokens, return_counts=True)
        records.append({f"w{w}": int(c) for w, c in zip(words_.tolist(), counts.tolist())})
        best = max(range(n_classes), key=lambda k: float(counts @ log_theta[k][words_]))
        hits += best == label  # equal class priors: the likelihood decides
    return records, [int(v) for v in y], hits / n


def _accuracy_and_rate(model, records, labels):
    hits = 0
    start = time.process_time()
    for x, y in zip(records, labels):
        hits += model.predict_one(x) == y
        model.learn_one(x, y)
    return hits / len(labels), len(labels) / (time.process_time() - start)


def _bags(vocabularies, n, rounds=3):
    from river import naive_bayes as river_nb

    from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes

    learners = {
        "River MultinomialNB": river_nb.MultinomialNB,
        "River MultinomialNB alpha=0.1": lambda: river_nb.MultinomialNB(alpha=0.1),
        "NaiveBayes": lambda: NaiveBayes(absent="zero"),
        "ModelAveragedNB": lambda: ModelAveragedNB(absent="zero"),
        "ModelAveragedNB alpha=0.1": lambda: ModelAveragedNB(absent="zero", alpha=0.1),
        "BMANB": lambda: BMANB(absent="zero"),
    }
    rows = []
    for vocabulary in vocabularies:
        records, labels, optimal = bag_stream(n, vocabulary)
        present = sum(len(x) for x in records) / len(records)
        acc = dict.fromkeys(learners, 0.0)
        rates = {name: [] for name in learners}
        for _ in range(rounds):
            for name, make in learners.items():
                acc[name], rate = _accuracy_and_rate(make(), records, labels)
                rates[name].append(rate)
        river = "River MultinomialNB"
        base = statistics.median(rates[river])
        for name in learners:
            rate = statistics.median(rates[name])
            rows.append({"words V": vocabulary, "learner": name, "records": n,
                         "accuracy": acc[name], "- River": acc[name] - acc[river],
                         "Bayes-optimal": optimal, "records/s": round(rate),
                         "us/present word": 1e6 / rate / present,
                         "x River": rate / base})
    return rows


def string_frame(n, n_features=20, n_values=10, seed=0):
    """An n x ``n_features`` DataFrame of strings (5 features follow the class) and labels."""
    import pandas as pd

    g = rng(NAME, 4, n, seed)
    y = g.integers(3, size=n)
    codes = g.integers(n_values, size=(n, n_features))
    follow = g.random((n, 5)) < 0.6
    codes[:, :5] = np.where(follow, (y[:, None] + np.arange(5)) % n_values, codes[:, :5])
    names = np.array([f"v{i}" for i in range(n_values)], dtype=object)
    X = pd.DataFrame({f"f{j}": names[codes[:, j]] for j in range(n_features)})
    return X, pd.Series(np.array(["a", "b", "c"], dtype=object)[y])


def _cpu(f):
    start = time.process_time()
    out = f()
    return time.process_time() - start, out


def _strings(n, rounds=3):
    from sklearn.naive_bayes import CategoricalNB
    from sklearn.preprocessing import OrdinalEncoder

    from onlinebma.naive_bayes import ModelAveragedNB, NaiveBayes

    X, y = string_frame(n)

    def peer():
        enc, nb = OrdinalEncoder(), CategoricalNB()
        fit, _ = _cpu(lambda: nb.fit(enc.fit_transform(X), y))
        predict, _ = _cpu(lambda: nb.predict_proba(enc.transform(X)))
        return fit, predict

    def ours(make):
        def run():
            model = make()
            fit, _ = _cpu(lambda: model.learn_many(X, y))
            predict, _ = _cpu(lambda: model.predict_proba_many(X))
            return fit, predict
        return run

    runs = {"OrdinalEncoder + CategoricalNB": peer, "NaiveBayes": ours(NaiveBayes),
            "ModelAveragedNB": ours(ModelAveragedNB)}
    times = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            times[name].append(run())
    med = {name: [statistics.median(t[i] for t in ts) for i in (0, 1)]
           for name, ts in times.items()}
    peer_fit, peer_predict = med["OrdinalEncoder + CategoricalNB"]
    return [{"rows": n, "learner": name, "learn s": fit, "predict s": predict,
             "learn x peer": peer_fit / fit, "predict x peer": peer_predict / predict}
            for name, (fit, predict) in med.items()]


def _cells(kind, widths, classes, budget, values=(10,)):
    from river import naive_bayes as river_nb

    from onlinebma.naive_bayes import BMANB, ModelAveragedNB

    rows = []
    cells = [(n, k, m) for n in widths for k in classes
             for m in (values if kind == "nominal" else (None,))]
    for n_features, n_classes, n_values in cells:
        n = max(200, budget // n_features)
        if kind == "nominal":
            named, onehot, labels = nominal_stream(n, n_features, n_classes, n_values)
            peer, make_peer, peer_records = ("River MultinomialNB (one-hot)",
                                             river_nb.MultinomialNB, onehot)
        else:
            named, labels = numeric_stream(n, n_features, n_classes)
            peer, make_peer, peer_records = "River GaussianNB", river_nb.GaussianNB, named
        learners = {peer: (make_peer, peer_records),
                    "ModelAveragedNB": (ModelAveragedNB, named), "BMANB": (BMANB, named)}
        rates = {name: [] for name in learners}
        for _ in range(3):
            for name, (make, records) in learners.items():
                rates[name].append(stream_rate(make(), records, labels))
        base = statistics.median(rates[peer])
        for name in list(learners)[1:]:
            row = {"features": n_features, "classes": n_classes}
            if n_values is not None:
                row["values"] = n_values
            rows.append({**row, "learner": name, "records": n,
                         "records/s": round(statistics.median(rates[name])),
                         f"x {peer}": statistics.median(rates[name]) / base})
    return rows


# the array paths by kind of feature: the prefix of their thresholds in onlinebma.tuning
PATHS = {"numeric": "WIDE", "nominal": "NOMINAL"}


@contextlib.contextmanager
def forced_path(which, kind="numeric"):
    """Every record the ``"plain"`` way or, where it can, the ``"array"`` way (the thresholds
    of :mod:`onlinebma.naive_bayes.wide` and :mod:`~onlinebma.naive_bayes.wide_nominal` are
    constants of :mod:`onlinebma.tuning` read at each record); the crossover tables here and
    the tests of the array paths (``tests/test_nb_wide.py``) force the paths through it."""
    from onlinebma import tuning as module

    prefix = PATHS[kind]
    names = [name for name in vars(module)  # BMANB_NOMINAL_CELLS too
             if name == f"{prefix}_FEATURES" or name.endswith(f"{prefix}_CELLS")]
    kept = [getattr(module, name) for name in names]
    for name in names:
        array = 0 if name.endswith("_CELLS") else 1
        setattr(module, name, math.inf if which == "plain" else array)
    try:
        yield
    finally:
        for name, value in zip(names, kept):
            setattr(module, name, value)


def _crossover(cells, budget, kind="numeric"):
    """Records/s of the array path over the plain one, both forced, streams of N features
    (of ``kind``; nominal ones with 10 values) and K classes (the measurement behind the
    thresholds)."""
    from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes

    learners = {"NaiveBayes": NaiveBayes, "BMANB": BMANB, "ModelAveragedNB": ModelAveragedNB}
    rows = []
    for n_features, n_classes in cells:
        n = max(200, budget // n_features)
        if kind == "nominal":
            named, _, labels = nominal_stream(n, n_features, n_classes, seed=1)
        else:
            named, labels = numeric_stream(n, n_features, n_classes, seed=1)
        rates = {(name, which): [] for name in learners for which in ("plain", "array")}
        for _ in range(3):
            for (name, which), kept in rates.items():
                with forced_path(which, kind):
                    kept.append(stream_rate(learners[name](), named, labels))
        for name in learners:
            plain = statistics.median(rates[name, "plain"])
            array = statistics.median(rates[name, "array"])
            rows.append({"kind": kind, "features": n_features, "classes": n_classes,
                         "cells": n_features * (1 + n_classes), "learner": name,
                         "records": n, "plain records/s": round(plain),
                         "array records/s": round(array), "array x plain": array / plain})
    return rows


def run(quick: bool = False, out: pathlib.Path = pathlib.Path("docs"),
        string_rows: int | None = None) -> dict:
    import pandas as pd

    from onlinebma import tuning
    from onlinebma.progress import progress

    load_before = os.getloadavg()
    widths = (5, 100) if quick else (5, 20, 100, 500)
    classes = (2,) if quick else (2, 10, 50)
    values = (10,) if quick else (2, 10, 100)
    budget = 20_000 if quick else 60_000
    vocabularies = (100, 10_000) if quick else (100, 1_000, 10_000, 100_000)
    bag_records = 600 if quick else 3_000
    string_rows = string_rows or (10_000 if quick else 1_000_000)
    tables = {}
    crossover = ([(20, 2), (60, 2)] if quick else
                 [(n, 2) for n in (20, 30, 40, 50, 60)] + [(n, 10) for n in (5, 10, 16, 20)]
                 + [(n, 50) for n in (3, 5, 10, 16)])
    nominal_crossover = ([(40, 2), (160, 2)] if quick else
                         [(n, 2) for n in (40, 80, 160)] + [(n, 10) for n in (10, 20, 40)]
                         + [(n, 50) for n in (3, 5, 10)])
    for kind in progress(("nominal", "numeric", "crossover", "bags", "strings"), desc="parts"):
        if kind == "crossover":  # both kinds of features, a table each below
            tables[kind] = pd.DataFrame(_crossover(crossover, budget // 2)
                                        + _crossover(nominal_crossover, budget // 2, "nominal"))
        elif kind == "bags":
            tables[kind] = pd.DataFrame(_bags(vocabularies, bag_records))
        elif kind == "strings":
            tables[kind] = pd.DataFrame(_strings(string_rows))
        else:
            tables[kind] = pd.DataFrame(_cells(kind, widths, classes, budget, values))
    load_after = os.getloadavg()

    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4), sharey=True)
    for ax, kind in zip(axes, ("nominal", "numeric")):
        df = tables[kind]
        ratio = [c for c in df.columns if c.startswith("x ")][0]
        for (name, k), part in df.groupby(["learner", "classes"]):  # worst over the values
            worst = part.groupby("features")[ratio].min()
            ax.plot(worst.index, worst.to_numpy(), marker="o", label=f"{name}, K = {k}")
        ax.set_xlabel("features N")
        ax.set_title(f"{kind}: speed-up against {ratio[2:]}"
                     + (" (worst over M values)" if kind == "nominal" else ""), fontsize=9)
        ax.legend(fontsize=7)
    bags = tables["bags"]
    for name, part in bags[~bags["learner"].str.startswith("River")].groupby("learner"):
        axes[2].plot(part["words V"], part["x River"], marker="o", label=name)
    axes[2].set_xlabel("vocabulary V (20 tokens per record)")
    axes[2].set_title("bags of words: speed-up against River MultinomialNB", fontsize=9)
    axes[2].legend(fontsize=7)
    for ax in axes:
        ax.axhline(1.5, color="grey", ls="--", lw=1)
        ax.axhline(1.0, color="black", lw=0.5)
        ax.set_xscale("log")
    axes[0].set_ylabel("records/s ratio (CPU time); dashed: target 1.5x")
    save_figure(fig, NAME, out, "speedup")

    def crossover_table(kind):
        cross = tables["crossover"]
        return markdown_table(cross[cross["kind"] == kind].drop(columns="kind"), floatfmt=".2f")

    load = ", ".join(f"{v:.2f}" for v in load_before)
    load2 = ", ".join(f"{v:.2f}" for v in load_after)
    text = f"""# Wide records (`python -m experiments {NAME}`)

{__doc__.split(chr(10), 1)[1].strip()}

Run: {"quick" if quick else "full"}; load average 1/5/15 min: {load} at the start, {load2} at
the end ({load_note([load_before[0], load_after[0]], os.cpu_count() or 1)}); the ratios
come from interleaved runs in one process.

![speed-up against N and V](../figures/{NAME}-speedup.png)

## Nominal features

{markdown_table(tables["nominal"], floatfmt=".2f")}

## Numeric features

{markdown_table(tables["numeric"], floatfmt=".2f")}

## Crossover of the wide-record path

The learners take the array path of :mod:`onlinebma.naive_bayes.wide` for a record with at
least ``WIDE_FEATURES`` = {tuning.WIDE_FEATURES} numeric features and ``WIDE_CELLS`` =
{tuning.WIDE_CELLS} (feature, column) cells, features x (1 + classes); the grid above runs the
shipped learners, which choose by these thresholds. Here both paths are forced on the same
numeric streams (same protocol, {budget // 2:,} feature values per stream), the array path
at every width:

{crossover_table("numeric")}

## Crossover of the nominal path

The learners predict a record the array way of :mod:`onlinebma.naive_bayes.wide_nominal`
(ModelAveragedNB also learns it so) from ``NOMINAL_FEATURES`` = {tuning.NOMINAL_FEATURES}
nominal features and ``NOMINAL_CELLS`` = {tuning.NOMINAL_CELLS} cells, features x
(1 + classes); BMANB from ``BMANB_NOMINAL_CELLS`` = {tuning.BMANB_NOMINAL_CELLS} cells.
Both paths forced on the nominal grid's streams (10 values per feature, same
protocol, {budget // 2:,} feature values per stream):

{crossover_table("nominal")}

## Bags of words (`absent="zero"`, {bag_records} records of 20 tokens, 2 classes)

Accuracy is progressive (predict, then learn), from the last of the rounds (every round sees
the same records, so it is the same); "- River" is the difference to River's MultinomialNB
with its default alpha = 1 (and "x River" the speed ratio to it).

{markdown_table(tables["bags"], floatfmt=".3f")}

## Pandas string columns ({string_rows:,} rows x 20)

{markdown_table(tables["strings"], floatfmt=".3f")}
"""
    write_results(NAME, out, text, reading=_reading(tables))
    return {"tables": tables}


def _reading(tables) -> str:
    """The issue's targets, checked against the tables."""
    lines = []
    for kind in ("nominal", "numeric"):
        df = tables[kind]
        ratio = [c for c in df.columns if c.startswith("x ")][0]
        short = df[df[ratio] < 1.5]
        cells = ", ".join(
            f"{r.learner} N = {r.features} K = {r.classes}"
            + (f" M = {r['values']}" if "values" in df.columns else "") + f" ({r[ratio]:.2f} x)"
            for _, r in short.iterrows())
        lines.append(f"- {kind} grid, target >= 1.5 x {ratio[2:]}: {len(df) - len(short)} of "
                     f"{len(df)} cells met" + (f"; not met: {cells}." if cells else "."))
    from onlinebma import tuning

    cross = tables["crossover"]
    for kind, (features, cells) in {
            "numeric": (tuning.WIDE_FEATURES, tuning.WIDE_CELLS),
            "nominal": (tuning.NOMINAL_FEATURES, tuning.NOMINAL_CELLS)}.items():
        part = cross[cross["kind"] == kind]
        verdict = {c: "array" if r.min() > 1.0 else "plain" if r.max() < 1.0 else "mixed"
                   for c, r in part.groupby("cells")["array x plain"]}
        said = {k: sorted(c for c, v in verdict.items() if v == k) for k in ("array", "plain")}
        mixed = sorted(c for c, v in verdict.items() if v == "mixed")
        lines.append(f"- {kind} crossover (array x plain > 1 for all three learners): array "
                     "path faster "
                     f"at {said['array']} cells, plain path faster at {said['plain']}, mixed "
                     f"at {mixed}; the learners' threshold: {cells} cells and {features} "
                     "features" + (f" (BMANB's: {tuning.BMANB_NOMINAL_CELLS} cells)."
                                   if kind == "nominal" else "."))
    bags = tables["bags"]
    ours = bags[~bags["learner"].str.startswith("River")]
    for name, part in ours.groupby("learner", sort=False):
        peer = "River MultinomialNB" + (" alpha=0.1" if name.endswith("alpha=0.1") else "")
        ref = bags[bags["learner"] == peer].set_index("words V")["accuracy"]
        diff = part["accuracy"].to_numpy() - ref.loc[part["words V"]].to_numpy()
        acc = "yes" if (diff >= -0.01).all() else "no"
        lines.append(
            f"- bags, {name}: accuracy within 1 point of {peer} at every V: {acc} "
            f"({diff.min():+.3f} at worst); speed {part['x River'].min():.2f}-"
            f"{part['x River'].max():.2f} x River (target 1.5); "
            f"{part['us/present word'].min():.1f}-{part['us/present word'].max():.1f} us per "
            f"present word from V = {part['words V'].min():,} to {part['words V'].max():,}.")
    strings = tables["strings"]
    for _, r in strings[strings["learner"] != "OrdinalEncoder + CategoricalNB"].iterrows():
        lines.append(f"- strings, {r.learner} at {r.rows:,} rows: learn {r['learn x peer']:.2f} x, "
                     f"predict {r['predict x peer']:.2f} x the peer (target >= 1).")
    return "\n".join(lines)
