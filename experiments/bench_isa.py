"""ISA vs Weka 3.6.14's LBR: median time per classified instance, side by side on the same folds.

Both classify the test folds of the same stratified 10-fold split of house-votes-84 and soybean,
one instance at a time: ISA through River's ``predict_proba_one`` after ``fit`` on the training
fold, timed with ``time.perf_counter`` around each call; LBR inside Weka's ``FilteredClassifier``
with the supervised ``Discretize`` filter, timed by a small Java helper with ``System.nanoTime``
around each ``distributionForInstance`` call in one JVM (so JVM start-up and file reading are
not counted). We report the median per instance (the issue's measure) and the mean including
the fit and, for ISA, the first instance of a fold, which builds the caches that later
instances reuse.

Also home of the small Weka interop (ARFF writing, running Weka) that the ISA reproduction and
the discretization tests share.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess

import numpy as np

__all__ = [
    "WEKA_JAR", "cv_splits", "lbr_available", "run", "single_threaded_blas", "stratified_folds",
    "weka_available", "weka_cut_points", "weka_lbr", "write_arff",
]

NAME = "bench-isa"

#: Debian's ``weka`` package installs Weka 3.6.14 here; override with $WEKA_JAR.
WEKA_JAR = os.environ.get("WEKA_JAR", "/usr/share/java/weka.jar")


def single_threaded_blas():
    """Context limiting numpy's BLAS to one thread (threadpoolctl, when installed).

    ISA's predictions are many small matrix products; on a busy machine OpenBLAS's threads make
    them up to 100 times slower. Weka's LBR runs on one thread too, so the comparison is fair.
    """
    import contextlib

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def weka_available() -> bool:
    """Java on PATH and the Weka jar present."""
    return shutil.which("java") is not None and pathlib.Path(WEKA_JAR).exists()


def _arff_value(v) -> str:
    s = str(v).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{s}'"


def write_arff(X, y, path, numeric=(), relation: str = "data", classes=None, domain=None):
    """Write a pandas frame ``X`` and labels ``y`` as ARFF (class last, ``?`` for missing).

    Columns named in ``numeric`` are numeric; the others are nominal with their values sorted
    as strings, taken from the frame ``domain`` (default ``X``; pass the whole dataset so that
    training and test files share one header); columns without any value in ``domain`` are
    left out. ``classes`` fixes the order of the class values (sorted by default).
    """
    import pandas as pd

    path = pathlib.Path(path)
    numeric = set(numeric)
    domain = X if domain is None else domain
    lines = [f"@relation {_arff_value(relation)}"]
    # A column with no observed value carries no information, and Weka's LBR fails on an empty
    # nominal attribute: such columns are left out.
    columns = [c for c in X.columns if domain[c].notna().any()]
    for col in columns:
        if col in numeric:
            lines.append(f"@attribute {_arff_value(col)} numeric")
        else:
            values = sorted({str(v) for v in domain[col] if not pd.isna(v)})
            lines.append(f"@attribute {_arff_value(col)} {{{','.join(map(_arff_value, values))}}}")
    classes = sorted({str(v) for v in y}) if classes is None else [str(c) for c in classes]
    lines.append(f"@attribute class {{{','.join(map(_arff_value, classes))}}}")
    lines.append("@data")
    cols = [X[c].tolist() for c in columns]
    for i, label in enumerate(list(y)):
        cells = []
        for col_name, col in zip(columns, cols):
            v = col[i]
            if v is None or (isinstance(v, float) and v != v):
                cells.append("?")
            elif col_name in numeric:
                cells.append(repr(float(v)))
            else:
                cells.append(_arff_value(v))
        cells.append(_arff_value(label))
        lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n")
    return path


def lbr_available() -> bool:
    """Weka available and ``javac`` too (the LBR timing helper is compiled on first use)."""
    return weka_available() and shutil.which("javac") is not None


def _java(*args, timeout=3600) -> str:
    done = subprocess.run(
        ["java", "-Xmx2g", "-cp", WEKA_JAR, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(f"Weka failed ({' '.join(args[:1])}): {done.stderr.strip()[-2000:]}")
    return done.stdout


_NUM = r"-?[0-9.]+(?:E-?[0-9]+)?"
_INTERVAL = re.compile(rf"^\((-inf|{_NUM})-(inf|{_NUM})[\])]$")


def weka_cut_points(arff) -> dict[str, np.ndarray]:
    """Cut points of every numeric attribute by Weka's supervised ``Discretize`` (defaults).

    Read from the labels of the filtered header, so they carry Weka's 6 printed decimals.
    """
    out = _java("weka.filters.supervised.attribute.Discretize", "-i", str(arff), "-c", "last")
    cuts = {}
    for line in out.splitlines():
        if line.lower().startswith("@data"):
            break
        m = re.match(r"@attribute\s+('(?:[^'\\]|\\.)*'|\S+)\s+\{(.*)\}\s*$", line)
        if not m:
            continue
        name = m.group(1)
        if name.startswith("'"):
            name = name[1:-1].replace("\\'", "'").replace("\\\\", "\\")
        labels = re.findall(r"'((?:[^'\\]|\\.)*)'", m.group(2))
        labels = [lab.replace("\\'", "") for lab in labels]
        if labels == ["All"]:
            cuts[name] = np.array([])
        elif labels and labels[0].startswith("(-inf-"):
            uppers = [_INTERVAL.match(lab).group(2) for lab in labels[:-1]]
            cuts[name] = np.array([float(u) for u in uppers])
    return cuts


# One JVM for all folds: it times Weka's own distributionForInstance call per test instance
# with System.nanoTime, so JVM start-up and file reading are not counted as classification time.
_JAVA_SOURCE = """
import weka.classifiers.lazy.LBR;
import weka.classifiers.meta.FilteredClassifier;
import weka.core.Instances;
import weka.core.Utils;
import weka.core.converters.ConverterUtils.DataSource;
import weka.filters.supervised.attribute.Discretize;

public class TimedLBR {
  public static void main(String[] args) throws Exception {
    for (int f = 0; f + 1 < args.length; f += 2) {
      Instances train = DataSource.read(args[f]);
      train.setClassIndex(train.numAttributes() - 1);
      Instances test = DataSource.read(args[f + 1]);
      test.setClassIndex(test.numAttributes() - 1);
      FilteredClassifier model = new FilteredClassifier();
      model.setFilter(new Discretize());
      model.setClassifier(new LBR());
      long start = System.nanoTime();
      model.buildClassifier(train);
      System.out.println("fit " + (f / 2) + " " + (System.nanoTime() - start));
      for (int i = 0; i < test.numInstances(); i++) {
        start = System.nanoTime();
        double[] dist = model.distributionForInstance(test.instance(i));
        long took = System.nanoTime() - start;
        System.out.println("pred " + (f / 2) + " " + i + " " + Utils.maxIndex(dist) + " " + took);
      }
    }
  }
}
"""


def _compiled_helper() -> pathlib.Path:
    """Compile the timing helper once per session (needs javac, which ships with the JDK)."""
    import tempfile

    folder = pathlib.Path(tempfile.gettempdir()) / "onlinebma-weka-helper"
    if not (folder / "TimedLBR.class").exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "TimedLBR.java").write_text(_JAVA_SOURCE)
        done = subprocess.run(
            ["javac", "-cp", WEKA_JAR, "-d", str(folder), str(folder / "TimedLBR.java")],
            capture_output=True, text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"cannot compile the Weka timing helper: {done.stderr[-2000:]}")
    return folder


def weka_lbr(pairs) -> list[dict]:
    """Run Weka 3.6.14's LBR behind its supervised Discretize on ``[(train.arff, test.arff)]``.

    Returns one dict per pair: ``fit_seconds``, ``predicted`` (class indices in header order)
    and ``seconds`` (Weka's time for each test instance).
    """
    folder = _compiled_helper()
    args = [str(p) for pair in pairs for p in pair]
    out = subprocess.run(
        ["java", "-Xmx2g", "-cp", f"{WEKA_JAR}{os.pathsep}{folder}", "TimedLBR", *args],
        capture_output=True, text=True,
    )
    if out.returncode != 0:
        raise RuntimeError(f"Weka LBR failed: {out.stderr.strip()[-2000:]}")
    results = [{"fit_seconds": 0.0, "predicted": [], "seconds": []} for _ in pairs]
    for line in out.stdout.splitlines():
        parts = line.split()
        if parts[0] == "fit":
            results[int(parts[1])]["fit_seconds"] = int(parts[2]) / 1e9
        elif parts[0] == "pred":
            r = results[int(parts[1])]
            r["predicted"].append(int(parts[3]))
            r["seconds"].append(int(parts[4]) / 1e9)
    return results


def stratified_folds(y, k: int, rng) -> np.ndarray:
    """Fold number of every record: each class dealt evenly over ``k`` folds in random order."""
    y = np.asarray(y)
    folds = np.empty(len(y), dtype=int)
    offset = 0
    for label in sorted(set(y.tolist()), key=str):
        idx = rng.permutation(np.flatnonzero(y == label))
        folds[idx] = (offset + np.arange(idx.size)) % k
        offset += idx.size
    return folds


def cv_splits(y, k: int, rng):
    """``(training rows, test rows)`` of each fold of a stratified ``k``-fold cross-validation.

    The training rows come in random order, as Weka's ``Instances.trainCV`` shuffles them (the
    paper ran Weka's cross-validation): ISA's eq. 9 score depends on the order of the records,
    and several UCI files (promoters, lung-cancer, primary-tumor, iris, tic-tac-toe) are sorted
    by class.
    """
    folds = stratified_folds(y, k, rng)
    for f in range(k):
        yield rng.permutation(np.flatnonzero(folds != f)), np.flatnonzero(folds == f)


def _time_isa(X, Y, train, test, nominal) -> tuple[list, float, int]:
    import time

    from onlinebma.isa import ISA

    start = time.perf_counter()
    model = ISA(nominal_attributes=nominal).fit(X.iloc[train], Y.iloc[train])
    fit = time.perf_counter() - start
    seconds, errors = [], 0
    records = X.iloc[test].to_dict("records")
    for x, y in zip(records, Y.iloc[test]):
        x = {f: v for f, v in x.items() if v is not None and v == v}
        start = time.perf_counter()
        proba = model.predict_proba_one(x)
        seconds.append(time.perf_counter() - start)
        errors += max(proba, key=proba.get) != y
    return seconds, fit, errors


def stream_timing(quick: bool = False):
    """Progressive validation of ISA on streams: seconds per record (predict, then learn).

    house-votes-84 is nominal: cached scores are extended as records arrive. pima is numeric: with
    the default refit policy the cut points (and so the codes of stored records) change only when
    the store has grown by 10%; ``refit_every=1`` refits them before every prediction, which
    drops the cached scores whenever a cut point moves.
    """
    import time

    import pandas as pd
    from river import evaluate, metrics

    from onlinebma.datasets import UCIDataset
    from onlinebma.isa import ISA

    n = 60 if quick else 300
    rows = []
    for name, refit_every in (("house-votes-84", None), ("pima", None), ("pima", 1)):
        model, metric = ISA(refit_every=refit_every), metrics.Accuracy()
        with single_threaded_blas():
            start = time.perf_counter()
            evaluate.progressive_val_score(UCIDataset(name).take(n), model, metric)
            seconds = time.perf_counter() - start
        rows.append({
            "dataset": name,
            "refit_every": "None (10% growth)" if refit_every is None else refit_every,
            "records": n,
            "cut-point refits": model.n_fits_ if UCIDataset(name).numeric else "n/a",
            "ms per record": 1000 * seconds / n,
            "accuracy %": 100 * metric.get(),
        })
    return pd.DataFrame(rows)


def run(quick: bool = False, out: pathlib.Path = pathlib.Path("docs")) -> dict:
    import tempfile
    import time

    import pandas as pd

    from onlinebma.datasets import UCIDataset
    from onlinebma.progress import progress

    from . import _report

    if not lbr_available():
        raise RuntimeError(
            "bench-isa compares with Weka: it needs java, javac (a JDK) and Weka 3.6.14's jar"
        )
    plan = {"house-votes-84": 2} if quick else {"house-votes-84": 10, "soybean": 2}
    rows, started = [], time.perf_counter()
    folder = tempfile.TemporaryDirectory(prefix="bench-isa-")  # Weka's folds; removed below
    tmp = pathlib.Path(folder.name)
    for name, n_folds in plan.items():
        ds = UCIDataset(name)
        X, Y = ds.to_frame()
        classes = sorted(Y.unique(), key=str)
        splits = list(cv_splits(Y.to_numpy(), 10, _report.rng(NAME, len(name))))[:n_folds]
        isa_s, isa_fit, isa_err, pairs, truth = [], 0.0, 0, [], []
        for f, (train, test) in enumerate(progress(splits, desc=f"{NAME} {name}")):
            with single_threaded_blas():
                seconds, fit, errors = _time_isa(X, Y, train, test, ds.nominal_attributes)
            isa_s += seconds
            isa_fit += fit
            isa_err += errors
            pair = (tmp / f"{name}-train{f}.arff", tmp / f"{name}-test{f}.arff")
            write_arff(X.iloc[train], Y.iloc[train], pair[0], numeric=ds.numeric, classes=classes, domain=X)
            write_arff(X.iloc[test], Y.iloc[test], pair[1], numeric=ds.numeric, classes=classes, domain=X)
            pairs.append(pair)
            truth += list(Y.iloc[test])
        weka = weka_lbr(pairs)
        lbr_s = [s for r in weka for s in r["seconds"]]
        lbr_fit = sum(r["fit_seconds"] for r in weka)
        lbr_pred = [classes[i] for r in weka for i in r["predicted"]]
        lbr_err = sum(p != t for p, t in zip(lbr_pred, truth))
        m = len(isa_s)
        rows.append({
            "dataset": name,
            "folds": n_folds,
            "test instances": m,
            "ISA median ms": 1000 * float(np.median(isa_s)),
            "LBR median ms": 1000 * float(np.median(lbr_s)),
            "LBR/ISA (median)": float(np.median(lbr_s) / np.median(isa_s)),
            "ISA mean ms (with fit)": 1000 * (sum(isa_s) + isa_fit) / m,
            "LBR mean ms (with fit)": 1000 * (sum(lbr_s) + lbr_fit) / m,
            "LBR/ISA (mean)": float((sum(lbr_s) + lbr_fit) / (sum(isa_s) + isa_fit)),
            "ISA error %": 100 * isa_err / m,
            "LBR error %": 100 * lbr_err / m,
        })
    folder.cleanup()
    table = pd.DataFrame(rows)
    streams = stream_timing(quick)
    elapsed = time.perf_counter() - started
    text = f"""# ISA vs Weka LBR: time per classified instance

Command: `python -m experiments {NAME}{" --quick" if quick else ""}` ({elapsed / 60:.1f} min, one run,
both learners on the same folds of one stratified 10-fold split; {", ".join(f"{k}: first {v} folds" for k, v in plan.items())}).

ISA: `onlinebma.isa.ISA()` (paper settings), `fit` on the training fold, then
`predict_proba_one` per test instance, each call timed with `time.perf_counter`, numpy's BLAS
limited to one thread (threadpoolctl; Weka's LBR is single-threaded too). LBR: Weka 3.6.14
`FilteredClassifier` + supervised `Discretize` + `weka.classifiers.lazy.LBR` (defaults), each
`distributionForInstance` call timed with `System.nanoTime` inside one JVM (start-up and file
reading excluded). "Median" is the median time per test instance (the issue's measure). "Mean
(with fit)" adds the fit time and, for ISA, includes each fold's first instance, which builds
the score and phase-1 caches that the fold's other instances reuse: it is the honest cost of
a whole fold. Ratios above 1 mean ISA is faster.

{_report.markdown_table(table, floatfmt=".2f")}

## Streams

`river.evaluate.progressive_val_score` over the first {streams["records"].iloc[0]} records of each
dataset in file order (predict, then learn, every record), ISA with the paper's settings, one
BLAS thread. No peer: LBR is not a streaming learner.

{_report.markdown_table(streams, floatfmt=".1f")}
"""
    _report.write_results(NAME, out, text)
    return {"tables": {"timing": table, "streams": streams}, "seconds": elapsed}
