"""Numeric features: small tables, adult, drifting streams and speed, against sklearn and River.

The benchmark of the numbers work (``python -m experiments numbers [--quick]``), four parts
run side by side in one process, every learner at its defaults unless said:

- **Small tables**: the shared UCI data sets whose features are mostly numeric
  (:data:`TABLES`), :data:`FOLDS` stratified folds (:func:`experiments._cv.cv_splits`), each
  learner given the raw training fold with ``learn_many`` (or ``fit``) and asked
  ``predict_proba_many`` (``predict_proba``) of the test fold, no preprocessing but the one a
  row names: ``MDL | ModelAveragedTAN`` is :class:`onlinebma.preprocessing.MDLDiscretizer`
  fitted on the training fold in front of ``ModelAveragedTAN``; ``LogisticRegression`` is
  scikit-learn's with standardised numbers and one-hot nominal values (missing values:
  the training mean, an own category). Log loss ``-log p(true label)`` clamped at 1e-15
  over the test records whose class occurs in their training fold; the class prior (the
  training fold's class frequencies, add-one) is the floor every learner must beat.
- **adult**: the bundled adult table shuffled with seed 0, ``learn_many`` on the first
  :data:`ADULT_TRAIN` rows, ``predict_proba_many`` on the rest, with scikit-learn's
  logistic regression and histogram gradient boosting beside ours.
- **Streams**: the drift benchmark's six streams (:mod:`experiments.drift`) at
  :data:`STREAM_N` records each (Elec2: all of it), progressive validation side by side:
  ``ModelAveragedTAN(decay="auto")`` against River's ARF and Hoeffding adaptive tree.
- **Speed**: records/s of predict + learn of each learner *alone* over the same records
  (:func:`stream_speed`; a fresh model each pass, best of :data:`SPEED_PASSES`): ours with
  ``decay="auto"`` and at a fixed rate against ARF on the first :data:`SPEED_N` records of
  every stream and of a 20-feature, 10-class RandomRBF stream; and
  ``ModelAveragedTAN`` alone on 20 numeric features, 3 classes.
"""

from __future__ import annotations

import itertools
import os
import pathlib
import time

import numpy as np

from experiments import _report, drift, tan
from experiments._cv import cv_splits
from onlinebma.progress import progress

NAME = "numbers"
FOLDS = 5
EPS = 1e-15
#: The shared data sets with numeric features the numbers issue names (breast-w's features
#: are integer codes 1-10).
TABLES = ("iris", "wine", "glass", "pima", "ionosphere", "sonar", "segment", "vowel", "bupa",
          "haberman", "breast-w")
QUICK_TABLES = ("iris", "haberman")
ADULT_TRAIN = 20_000
QUICK_ADULT = (2_000, 1_000)
STREAM_N = 20_000
QUICK_STREAM_N = 300
SPEED_N = 5_000
QUICK_SPEED_N = 200
SPEED_PASSES = 3
#: The fixed rate timed beside ``decay="auto"`` (the tan benchmark's choice on its separate
#: draw: docs/results/tan.md).
FIXED_DECAY = 0.99
PEERS = ["river HoeffdingAdaptiveTree", "river ARF"]
TARGET = "ModelAveragedTAN"


# ------------------------------------------------------------------------------ learners


def ours(nominal) -> dict:
    """Our learners at their defaults, by label (``nominal``: the table's nominal columns)."""
    from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
    from onlinebma.tan import AODE, TAN, ModelAveragedTAN

    nominal = list(nominal)
    return {cls.__name__: (lambda c=cls: c(nominal_attributes=nominal))
            for cls in (ModelAveragedTAN, TAN, AODE, NaiveBayes, ModelAveragedNB, BMANB)}


class Discretized:
    """``MDLDiscretizer`` fitted on the training table in front of a learner (every column
    nominal after it)."""

    def __init__(self, make):
        self.make = make

    def learn_many(self, X, y):
        from onlinebma.preprocessing import MDLDiscretizer

        self.disc = MDLDiscretizer().fit(X, y)
        self.model = self.make(list(X.columns))
        self.model.learn_many(self.disc.transform_many(X), y)

    def predict_proba_many(self, X):
        return self.model.predict_proba_many(self.disc.transform_many(X))


class SkLearn:
    """A scikit-learn classifier on a mixed table: numbers standardised (missing: the mean),
    nominal values one-hot (missing: a value of its own); ``trees`` reads nominal values as
    ordinal codes natively (histogram gradient boosting)."""

    def __init__(self, kind: str, nominal):
        self.kind, self.nominal = kind, list(nominal)

    def _pipeline(self, X):
        from sklearn.compose import ColumnTransformer
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.impute import SimpleImputer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

        numeric = [c for c in X.columns if c not in self.nominal]
        nominal = [c for c in X.columns if c in self.nominal]
        if self.kind == "trees":
            code = make_pipeline(SimpleImputer(strategy="constant", fill_value="?"),
                                 OrdinalEncoder(handle_unknown="use_encoded_value",
                                                unknown_value=-1))
            cols = ColumnTransformer([("nominal", code, nominal), ("numeric", "passthrough",
                                                                  numeric)])
            model = HistGradientBoostingClassifier(
                categorical_features=list(range(len(nominal))), random_state=0)
            return make_pipeline(cols, model)
        cols = ColumnTransformer([
            ("numeric", make_pipeline(SimpleImputer(), StandardScaler()), numeric),
            ("nominal", make_pipeline(SimpleImputer(strategy="constant", fill_value="?"),
                                      OneHotEncoder(handle_unknown="ignore")), nominal)])
        return make_pipeline(cols, LogisticRegression(max_iter=2000))

    def learn_many(self, X, y):
        X = self._typed(X)
        self.model = self._pipeline(X).fit(X, y)

    def _typed(self, X):
        X = X.copy()
        for c in X.columns:
            X[c] = X[c].astype(object if c in self.nominal else float)
        return X

    def predict_proba_many(self, X):
        import pandas as pd

        p = self.model.predict_proba(self._typed(X))
        return pd.DataFrame(p, columns=list(self.model.classes_), index=X.index)


class ClassPrior:
    """The training labels' frequencies (add-one): the floor every learner must beat."""

    def learn_many(self, X, y):
        counts = y.value_counts()
        self.p = (counts + 1) / (counts.sum() + len(counts))

    def predict_proba_many(self, X):
        import pandas as pd

        return pd.DataFrame([self.p.to_numpy()] * len(X), columns=list(self.p.index),
                            index=X.index)


#: ``ModelAveragedTAN`` with other members, run beside its default on the tables and adult
#: to choose what it averages: single numeric representations, the previous default's pair
#: (MDL + Gaussian) and the default without its AODE members, by label: parameters.
CANDIDATES = {"8 intervals": {"numeric": "8 intervals"}, "MDL": {"numeric": "MDL"},
              "Gaussian": {"numeric": "Gaussian"},
              "MDL + Gaussian": {"numeric": ("MDL", "Gaussian")},
              "aode=False": {"aode": False}}


def candidates(nominal) -> dict:
    """``ModelAveragedTAN`` with each of :data:`CANDIDATES`, by label."""
    from onlinebma.tan import ModelAveragedTAN

    return {f"{TARGET} {label}": (lambda p=params: ModelAveragedTAN(
        nominal_attributes=list(nominal), **p)) for label, params in CANDIDATES.items()}


def table_learners(nominal) -> dict:
    """Every learner of the table parts, by label: factories of fresh models."""
    from onlinebma.tan import ModelAveragedTAN

    return {**ours(nominal), **candidates(nominal),
            f"MDL | {TARGET}": lambda: Discretized(
                lambda cols: ModelAveragedTAN(nominal_attributes=cols)),
            "LogisticRegression": lambda: SkLearn("linear", nominal),
            "class prior": ClassPrior}


def _log_loss(proba, truth, seen) -> np.ndarray:
    """``-log p(truth)`` per record (clamped), NaN where the truth is not a training class."""
    p = proba.to_numpy(dtype=float)
    col = {c: j for j, c in enumerate(proba.columns)}
    p_true = np.array([p[i, col[t]] if t in col else 0.0 for i, t in enumerate(truth)])
    out = -np.log(np.clip(p_true, EPS, 1.0))
    out[~seen] = np.nan
    return out


def _accuracy(proba, truth) -> np.ndarray:
    guess = np.asarray(proba.columns, dtype=object)[np.argmax(proba.to_numpy(float), axis=1)]
    return guess == truth


def evaluate_table(name: str, seed_key: int, show: bool) -> dict:
    """Every learner on the same folds of data set ``name``: mean log loss and accuracy."""
    from onlinebma.datasets import UCIDataset

    ds = UCIDataset(name)
    X, Y = ds.to_frame()
    Y = Y.astype(str)
    nominal = [c for c in X.columns if c not in set(ds.numeric)]
    makers = table_learners(nominal)
    loss = {k: [] for k in makers}
    acc = {k: [] for k in makers}
    for train, test in cv_splits(Y.to_numpy(), FOLDS, _report.rng(NAME, seed_key)):
        truth = Y.iloc[test].to_numpy(dtype=object)
        seen = np.isin(truth, Y.iloc[train].unique())
        for label, make in makers.items():
            model = make()
            model.learn_many(X.iloc[train], Y.iloc[train])
            proba = model.predict_proba_many(X.iloc[test])
            loss[label].append(_log_loss(proba, truth, seen))
            acc[label].append(_accuracy(proba, truth))
    return {"dataset": name, "rows": len(Y), "numeric": len(ds.numeric),
            "classes": Y.nunique(),
            "log loss": {k: float(np.nanmean(np.concatenate(v))) for k, v in loss.items()},
            "accuracy": {k: float(np.concatenate(v).mean()) for k, v in acc.items()}}


def tables(quick: bool, show: bool):
    """(log loss table, accuracy table) over the small tables."""
    import pandas as pd

    names = QUICK_TABLES if quick else TABLES
    runs = [evaluate_table(n, i, show)
            for i, n in enumerate(progress(names, desc=f"{NAME} tables", enabled=show))]
    out = []
    for metric in ("log loss", "accuracy"):
        rows = [{"dataset": r["dataset"], "rows": r["rows"], "numeric": r["numeric"],
                 "classes": r["classes"], **r[metric]} for r in runs]
        df = pd.DataFrame(rows)
        mean = {"dataset": "**mean**", **df[df.columns[4:]].mean().to_dict()}
        out.append(pd.concat([df.astype(object), pd.DataFrame([mean])], ignore_index=True))
    return out[0], out[1]


def adult(quick: bool, show: bool):
    """Train on the first rows of shuffled adult, score the rest: one row per learner."""
    import pandas as pd

    from onlinebma.datasets import UCIDataset

    ds = UCIDataset("adult")
    X, Y = ds.to_frame()
    Y = Y.astype(str)
    order = np.random.default_rng(0).permutation(len(Y))
    n_train, n_test = QUICK_ADULT if quick else (ADULT_TRAIN, len(Y) - ADULT_TRAIN)
    train, test = order[:n_train], order[n_train:n_train + n_test]
    nominal = [c for c in X.columns if c not in set(ds.numeric)]
    makers = {**table_learners(nominal),
              "HistGradientBoosting": lambda: SkLearn("trees", nominal)}
    truth = Y.iloc[test].to_numpy(dtype=object)
    seen = np.isin(truth, Y.iloc[train].unique())
    rows = []
    for label, make in progress(makers.items(), desc=f"{NAME} adult", enabled=show):
        model = make()
        start = time.perf_counter()
        model.learn_many(X.iloc[train], Y.iloc[train])
        proba = model.predict_proba_many(X.iloc[test])
        seconds = time.perf_counter() - start
        rows.append({"model": label, "log loss": float(np.nanmean(_log_loss(proba, truth, seen))),
                     "accuracy": float(_accuracy(proba, truth).mean()), "seconds": seconds})
    return pd.DataFrame(rows), (n_train, n_test)


# ------------------------------------------------------------------------------- streams


def _stream_learners(stream) -> dict:
    from onlinebma.tan import ModelAveragedTAN

    out = {name: drift.make_learner(name, stream) for name in PEERS}
    out[f"{TARGET} auto"] = ModelAveragedTAN(nominal_attributes=list(stream.nominal),
                                             decay="auto")
    out[f"{TARGET} auto, aode=False"] = ModelAveragedTAN(
        nominal_attributes=list(stream.nominal), decay="auto", aode=False)
    out[f"{TARGET} λ={FIXED_DECAY:g}"] = ModelAveragedTAN(
        nominal_attributes=list(stream.nominal), decay=FIXED_DECAY)
    return out


def all_streams(n: int) -> dict:
    """Elec2 (all of it, or the first ``n`` in a quick run) and the five synthetic streams."""
    from onlinebma.datasets import Elec2

    elec = list(Elec2()) if n >= STREAM_N else list(itertools.islice(Elec2(), n))
    return {"Elec2": drift.Stream("Elec2", elec, [], [], "unknown (real)"),
            **drift.synthetic(n)}


def wide_rbf(n: int):
    """River's RandomRBF with 20 numeric features and 10 classes, as a stream."""
    from river.datasets import synth

    seed = int(_report.rng(NAME, 20).integers(2**31))
    gen = synth.RandomRBF(seed_model=seed, seed_sample=seed + 1, n_classes=10, n_features=20,
                          n_centroids=50)
    return drift.Stream("RandomRBF 20×10", list(itertools.islice(gen, n)), [], [], "none")


def streams(quick: bool, show: bool):
    """Progressive validation of ours (auto, fixed) against ARF and HAT on every stream."""
    import pandas as pd

    data = all_streams(QUICK_STREAM_N if quick else STREAM_N)
    runs = {}
    for name, stream in progress(data.items(), desc=f"{NAME} streams", enabled=show):
        runs[name] = drift.evaluate(stream, _stream_learners(stream), every=len(stream.data),
                                    show=show)
    return pd.concat([r.table() for r in runs.values()], ignore_index=True), runs


def stream_speed(data: dict, quick: bool, show: bool):
    """records/s of predict + learn, each learner alone over the same first records of each
    stream (a fresh model each pass, the learners taking turns, best pass kept)."""
    import pandas as pd

    n = QUICK_SPEED_N if quick else SPEED_N
    passes = 1 if quick else SPEED_PASSES
    rows = []
    for name, stream in progress(data.items(), desc=f"{NAME} speed", enabled=show):
        records = stream.data[:n]
        learners = {k: v for k, v in _stream_learners(stream).items() if k != PEERS[0]}
        best = dict.fromkeys(learners, 0.0)
        for _ in range(passes):
            for label, proto in learners.items():
                model = proto.clone()
                start = time.perf_counter()
                for x, y in records:
                    model.predict_proba_one(x)
                    model.learn_one(x, y)
                best[label] = max(best[label], len(records) / (time.perf_counter() - start))
        arf = best["river ARF"]
        rows += [{"stream": name, "model": label, "records/s alone": rate,
                  "× ARF": rate / arf} for label, rate in best.items()]
    return pd.DataFrame(rows)


def numeric_speed(quick: bool):
    """ModelAveragedTAN() on 20 numeric features, 3 classes: predict + learn records/s."""
    import pandas as pd

    from onlinebma.tan import ModelAveragedTAN

    n = QUICK_SPEED_N if quick else SPEED_N
    rng = _report.rng(NAME, 3)
    y = rng.integers(3, size=n)
    centres = rng.normal(size=(3, 20))
    X = centres[y] + rng.normal(size=(n, 20))
    records = [{f"x{j}": v for j, v in enumerate(row)} for row in X.tolist()]
    rows = []
    for decay in (1.0, "auto"):
        model = ModelAveragedTAN(decay=decay)
        start = time.perf_counter()
        for x, c in zip(records, y.tolist()):
            model.predict_proba_one(x)
            model.learn_one(x, c)
        rows.append({"model": f"{TARGET}(decay={decay!r})", "features": 20, "classes": 3,
                     "records": n, "predict+learn records/s": n / (time.perf_counter() - start)})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------- targets


def targets(loss, adult_df, stream_df, speed_df, numeric_df):
    """The numbers issue's targets, measured."""
    import pandas as pd

    yes = {True: "yes", False: "**no**"}
    rows = []
    per_set = loss[loss["dataset"] != "**mean**"]
    mean = loss[loss["dataset"] == "**mean**"].iloc[0]
    for other in (f"MDL | {TARGET}", "LogisticRegression"):
        rows.append((f"tables: mean log loss below {other}",
                     f"{mean[TARGET]:.4f} vs {mean[other]:.4f}", mean[TARGET] < mean[other]))
    above = [r["dataset"] for _, r in per_set.iterrows() if r[TARGET] > r["class prior"]]
    rows.append(("tables: on no set above the class prior", ", ".join(above) or "none",
                 not above))
    a = adult_df.set_index("model")
    rows.append(("adult: log loss ≤ 0.300", f"{a.loc[TARGET, 'log loss']:.4f}",
                 a.loc[TARGET, "log loss"] <= 0.300))
    rows.append(("adult: accuracy ≥ 0.860", f"{a.loc[TARGET, 'accuracy']:.4f}",
                 a.loc[TARGET, "accuracy"] >= 0.860))
    worse = [m for m in ("NaiveBayes", "ModelAveragedNB", "BMANB")
             if a.loc[m, "log loss"] > a.loc["class prior", "log loss"]]
    rows.append(("adult: no naive Bayes learner above the class prior",
                 ", ".join(worse) or "none", not worse))
    g = stream_df.set_index(["stream", "model"])
    names = list(dict.fromkeys(stream_df["stream"]))
    auto = f"{TARGET} auto"
    n_ll = sum(g.loc[(s, auto), "log loss"] < g.loc[(s, "river ARF"), "log loss"] for s in names)
    n_acc = sum(g.loc[(s, auto), "accuracy"] > g.loc[(s, PEERS[0]), "accuracy"] for s in names)
    rows.append(("streams: log loss below ARF on ≥ 5 of 6", f"{n_ll} of {len(names)}",
                 n_ll >= 5))
    rows.append(("streams: accuracy above HAT on all 6", f"{n_acc} of {len(names)}",
                 n_acc == len(names)))
    if "Elec2" in names:
        e = g.loc[("Elec2", auto), "accuracy"]
        rows.append(("streams: Elec2 accuracy ≥ 0.90", f"{e:.4f}", e >= 0.90))
    rows += speed_targets(speed_df, numeric_df)
    return pd.DataFrame([{"target": t, "measured": m, "met": yes[bool(ok)]}
                         for t, m, ok in rows])


def speed_targets(speed_df, numeric_df) -> list:
    """The speed targets, measured: ``(target, measured, met)`` rows."""
    rows = []
    s = speed_df.set_index(["stream", "model"])
    for model, need in ((f"{TARGET} auto", 1.5), (f"{TARGET} λ={FIXED_DECAY:g}", 4.0)):
        lowest = min(s.loc[(st, model), "× ARF"] for st in dict.fromkeys(speed_df["stream"]))
        rows.append((f"speed: {model} ≥ {need:g}× ARF on every stream", f"lowest {lowest:.2f}×",
                     lowest >= need))
    r = numeric_df["predict+learn records/s"].min()
    rows.append(("speed: 20 numeric features, 3 classes ≥ 1,000 records/s", f"{r:.0f}",
                 r >= 1000))
    return rows


def speed_data(quick: bool) -> dict:
    """The speed part's streams, as :func:`run` times them: the streams part's six (of which
    :func:`stream_speed` takes the first records) and RandomRBF 20×10."""
    data = all_streams(QUICK_STREAM_N if quick else STREAM_N)
    data["RandomRBF 20×10"] = wide_rbf(QUICK_SPEED_N if quick else SPEED_N)
    return data


def run(quick: bool = False, out: pathlib.Path = pathlib.Path("docs"), show: bool = True) -> dict:
    """The four parts; writes ``out/results/numbers.md``."""
    out = pathlib.Path(out)
    load = [os.getloadavg()[0]]
    start = time.perf_counter()
    loss, acc = tables(quick, show)
    adult_df, (n_train, n_test) = adult(quick, show)
    stream_df, runs = streams(quick, show)
    data = {name: r.stream for name, r in runs.items()}  # speed_data's, already drawn
    data["RandomRBF 20×10"] = wide_rbf(QUICK_SPEED_N if quick else SPEED_N)
    speed_df = stream_speed(data, quick, show)
    numeric_df = numeric_speed(quick)
    load.append(os.getloadavg()[0])
    elapsed = time.perf_counter() - start
    target_tab = targets(loss, adult_df, stream_df, speed_df, numeric_df)
    figure = tan.rolling_figure(runs, out, 50 if quick else 500, name=NAME)
    order = list(dict.fromkeys(stream_df["model"]))
    wide = {m: stream_df.pivot(index="model", columns="stream", values=m)
            .reindex(index=order, columns=list(runs)).reset_index()
            for m in ("accuracy", "log loss")}
    speed_wide = speed_df.pivot(index="model", columns="stream", values="× ARF").reset_index()
    n_stream = QUICK_STREAM_N if quick else STREAM_N
    text = [
        f"# {NAME}: numeric features against scikit-learn and River",
        "",
        ("**Quick smoke-test run (two small tables, short streams), not a result.** "
         if quick else "")
        + f"Command: `python -m experiments {NAME}{' --quick' if quick else ''}` "
        f"({elapsed / 60:.1f} min; load average {load[0]:.1f} at the start, {load[1]:.1f} at "
        "the end, on a 2-core machine: compare ratios within this run).",
        "",
        "## Targets", "", _report.markdown_table(target_tab), "",
        "## Small tables: log loss (nats per record)", "",
        f"{FOLDS} stratified folds, the same for every learner; `learn_many` on the raw "
        "training fold, `predict_proba_many` on the test fold; defaults, no preprocessing "
        f"but `MDL | {TARGET}`'s (the MDL discretiser fitted on the training fold). "
        "LogisticRegression: scikit-learn's, numbers standardised, nominal values one-hot.",
        "", _report.markdown_table(loss, floatfmt=".4f"), "",
        "## Small tables: accuracy", "", _report.markdown_table(acc, floatfmt=".4f"), "",
        "## adult", "",
        f"Shuffled with seed 0; `learn_many` on the first {n_train:,} rows, "
        f"`predict_proba_many` on the next {n_test:,}.", "",
        _report.markdown_table(adult_df, floatfmt=".4f"), "",
        "## Streams", "",
        f"The drift benchmark's streams at {n_stream:,} records each (Elec2: "
        f"{'all of it' if not quick else f'the first {n_stream}'}), progressive validation "
        "side by side; River's learners at the drift benchmark's settings.", "",
        "### accuracy", "", _report.markdown_table(wide["accuracy"], floatfmt=".4f"), "",
        "### log loss", "", _report.markdown_table(wide["log loss"], floatfmt=".4f"), "",
        f"![{NAME} rolling](../figures/{figure.name})", "",
        "## Speed", "",
        f"records/s of predict + learn, each learner alone over the first "
        f"{QUICK_SPEED_N if quick else SPEED_N:,} records of each stream (a fresh model each "
        f"pass, best of {1 if quick else SPEED_PASSES}), as multiples of ARF's:", "",
        _report.markdown_table(speed_wide, floatfmt=".2f"), "",
        "records/s of ARF alone:", "",
        _report.markdown_table(speed_df[speed_df["model"] == "river ARF"]
                               [["stream", "records/s alone"]], floatfmt=".0f"), "",
        "20 numeric features (three Gaussian classes), predict + learn from an empty model:", "",
        _report.markdown_table(numeric_df, floatfmt=".0f"), "",
    ]
    _report.write_results(NAME, out, "\n".join(text))
    tabs = {"tables log loss": loss, "tables accuracy": acc, "adult": adult_df,
            "streams": stream_df, "speed": speed_df, "numeric speed": numeric_df,
            "targets": target_tab}
    return {"tables": tabs, "figures": [figure], "seconds": elapsed}
