"""ISA vs Weka 3.6.14's LBR, side by side on the same folds, and ISA's cost on a long stream.

Folds: both learners classify the test folds of the same stratified 10-fold split of
house-votes-84 and soybean, one instance at a time: ISA through River's ``predict_proba_one``
after ``fit`` on the training fold, timed with ``time.perf_counter`` around each call; LBR inside
Weka's ``FilteredClassifier`` with the supervised ``Discretize`` filter, timed by a small Java
helper with ``System.nanoTime`` around each ``distributionForInstance`` call (JVM start-up and
file reading are not counted), fold by fold right after ISA, so that on a shared machine both
meet about the same load. We report the median per instance and the whole
fold (fit plus every test instance; for ISA that includes building the caches that later
instances reuse), and ISA's whole fold through its batch ``predict_proba`` too.

Stream: progressive validation (predict, then learn, every record) with ``window=None`` on a
16-feature nominal stream of 20,000 records (:func:`nominal_stream`), the time of each record
and the memory of ISA's index at checkpoints. LBR is not a streaming learner: no peer.

Window: ``ISA()`` and ``ISA(window=w)`` side by side on the same records (River's Phishing and
the nominal stream, as far as the windowed learner gets in :data:`WINDOW_BUDGET` seconds), time
per record under progressive validation (:func:`window_timing`).
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import tempfile

import numpy as np

from experiments.peers.weka import WEKA_JAR, compiled_java, javac_available, write_arff

from ._cv import cv_splits

__all__ = [
    "nominal_stream", "run", "single_threaded_blas", "stream_curve", "weka_lbr",
    "window_steps", "window_timing",
]

NAME = "bench-isa"
#: Stored records at which the stream's cost is reported (mean over the preceding ``WINDOW``).
CHECKPOINTS = (1000, 2000, 5000, 10000, 20000)
QUICK_CHECKPOINTS = (250, 500, 1000)
WINDOW = 250
#: ``window`` of the memory check (a stream learned with a window keeps bounded memory) and of
#: the windowed run on the nominal stream.
WINDOWED = 2000
QUICK_WINDOWED = 250
#: ``window`` of the windowed run on Phishing (1,250 records).
PHISHING_WINDOW = 300
#: ``window`` of the timed windowed run on the nominal stream.
TIMED_WINDOW = 500
#: Seconds the windowed learner may stream in a full run of :func:`window_timing` (it costs
#: hundreds of ms per record on the nominal stream: all 20,000 records would take hours);
#: ``ISA()`` is then timed on the same records.
WINDOW_BUDGET = 300.0


def single_threaded_blas():
    """Context limiting numpy's BLAS to one thread (threadpoolctl, when installed); Weka's LBR
    runs on one thread too, so the comparison is fair."""
    import contextlib

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


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


def weka_lbr(pairs) -> list[dict]:
    """Run Weka 3.6.14's LBR behind its supervised Discretize on ``[(train.arff, test.arff)]``.

    Returns one dict per pair: ``fit_seconds``, ``predicted`` (class indices in header order)
    and ``seconds`` (Weka's time for each test instance).
    """
    folder = compiled_java("TimedLBR", _JAVA_SOURCE)
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


def _time_isa_batch(X, Y, train, test, nominal) -> float:
    """Seconds of ``fit`` on the training fold plus one ``predict_proba`` of the test fold (the
    batch path: the rows searched one after the other, sharing one cache of scores)."""
    import time

    from onlinebma.isa import ISA

    start = time.perf_counter()
    ISA(nominal_attributes=nominal).fit(X.iloc[train], Y.iloc[train]).predict_proba(X.iloc[test])
    return time.perf_counter() - start


def nominal_stream(n: int, p: int = 16, missing: float = 0.05, seed: int = 0):
    """``n`` records ``(x, y)`` of a synthetic nominal stream: ``p`` features of 2-4 values and
    two classes; each feature depends on the class and on one earlier feature (so some
    antecedent sets beat naive Bayes), and each value is missing with probability ``missing``.
    """
    rng = np.random.default_rng(seed)
    cards = rng.integers(2, 5, size=p)
    parents = [0] + [int(rng.integers(0, j)) for j in range(1, p)]
    tables = [rng.dirichlet(np.full(card, 0.7), size=(2, 4)) for card in cards]
    for _ in range(n):
        y = int(rng.random() < 0.4)
        values, x = [], {}
        for j in range(p):
            parent = values[parents[j]] if j else 0
            v = int(rng.choice(cards[j], p=tables[j][y, parent]))
            values.append(v)
            if rng.random() >= missing:
                x[f"a{j:02d}"] = f"v{v}"
        yield x, "yes" if y else "no"


def stream_curve(checkpoints=CHECKPOINTS, window: int = WINDOW, progress=None):
    """Progressive validation of ``ISA()`` (``window=None``) on :func:`nominal_stream`.

    Returns ``(seconds per record, rows)``: each row is a checkpoint (stored records), the mean,
    median and maximum ms per record over the ``window`` records before it, ISA's memory (coded
    records, index, scoring tables and cached scores, :attr:`ISA.nbytes_`), the bitset index's
    share of it and the accuracy so far.
    """
    import time

    from onlinebma.isa import ISA

    model = ISA()
    seconds, rows, correct = [], [], 0
    todo = list(checkpoints)
    stream = nominal_stream(max(checkpoints))
    if progress is not None:
        stream = progress(stream, total=max(checkpoints), desc=f"{NAME} stream")
    with single_threaded_blas():
        for i, (x, y) in enumerate(stream):
            start = time.perf_counter()
            proba = model.predict_proba_one(x)
            model.learn_one(x, y)
            seconds.append(time.perf_counter() - start)
            correct += bool(proba) and max(proba, key=proba.get) == y
            if i + 1 == todo[0]:
                last = 1000 * np.array(seconds[-window:])
                rows.append({
                    "stored records": i + 1,
                    "mean ms per record": float(last.mean()),
                    "median ms": float(np.median(last)),
                    "max ms": float(last.max()),
                    "ISA memory MB": model.nbytes_ / 2**20,
                    "index KB": model._scorer.index.nbytes / 2**10,
                    "accuracy so far %": 100 * correct / (i + 1),
                })
                todo.pop(0)
    return np.array(seconds), rows


def window_memory(window: int, checkpoints=CHECKPOINTS):
    """Memory of ``ISA(window=window)`` on :func:`nominal_stream`: at each checkpoint (records
    learned) one prediction builds the index and scores; returns rows of the records learned,
    the records stored, ISA's memory and the index's. (Only the checkpoints predict: the time
    per record with a window is :func:`window_timing`'s.)"""
    from onlinebma.isa import ISA

    model = ISA(window=window)
    rows, todo = [], list(checkpoints)
    with single_threaded_blas():
        for i, (x, y) in enumerate(nominal_stream(max(checkpoints))):
            model.learn_one(x, y)
            if i + 1 == todo[0]:
                model.predict_proba_one(x)
                rows.append({
                    "window": window,
                    "records learned": i + 1,
                    "records stored": model.coding.n_stored,
                    "ISA memory MB": model.nbytes_ / 2**20,
                    "index KB": model._scorer.index.nbytes / 2**10,
                })
                todo.pop(0)
    return rows


def _seconds_per_record(model, data, budget: float | None = None, clock=None) -> np.ndarray:
    """Seconds of each predict-then-learn step of ``model`` over ``data``: all of them, or
    those it reached within ``budget`` seconds; ``clock``: ``time.perf_counter`` unless
    given (``time.process_time``: CPU time, less sensitive to other jobs)."""
    import time

    clock = clock or time.perf_counter
    seconds = []
    with single_threaded_blas():
        start = clock()
        for x, y in data:
            step = clock()
            model.predict_proba_one(x)
            model.learn_one(x, y)
            seconds.append(clock() - step)
            if budget is not None and clock() - start > budget:
                break
    return np.array(seconds)


def window_steps(records: int = 1300, rounds: int = 2) -> list[dict]:
    """The quick side-by-side of :func:`window_timing`, for tuning: CPU ms per record
    (predict, then learn) of ``ISA(window=w)`` and ``ISA()`` once the window is full, and of
    ``ISA()`` over the first ``w`` records, on the first ``records`` records of Phishing and of
    the nominal stream, ``rounds`` times, alternating, with the 1-minute load average.
    ``python -m experiments.bench_isa``."""
    import time

    from river import datasets

    from onlinebma.isa import ISA

    cases = [("Phishing", list(datasets.Phishing())[:records], PHISHING_WINDOW),
             ("nominal_stream", list(nominal_stream(records)), TIMED_WINDOW)]
    rows = []
    for name, data, window in cases:
        for _ in range(rounds):
            row = {"stream": name, "records": len(data), "window": window}
            for label, model in (("ISA(window) ms", ISA(window=window)), ("ISA() ms", ISA())):
                seconds = _seconds_per_record(model, data, clock=time.process_time)
                row[label] = 1000 * seconds[window:].mean()
            # ISA() while it held at most w records: the windowed learner's search, no eviction
            row["ISA() first w ms"] = 1000 * seconds[:window].mean()
            row["ratio"] = row["ISA(window) ms"] / row["ISA() ms"]
            row["load"] = os.getloadavg()[0]
            rows.append(row)
    return rows


def window_timing(quick: bool = False):
    """``ISA(window=w)`` and then ``ISA()`` on the same records, progressive validation: ms
    per record of each, their ratio, the same once the window is full (the records after the
    first ``w``: every record then evicts one) and the 1-minute load average after each. In a
    full run the windowed learner streams for at most :data:`WINDOW_BUDGET` seconds, and
    ``ISA()`` is timed on the records it reached.
    """
    import pandas as pd
    from river import datasets

    from onlinebma.isa import ISA

    phishing = list(datasets.Phishing())
    n = max(QUICK_CHECKPOINTS if quick else CHECKPOINTS)
    cases = [("Phishing", phishing[:250] if quick else phishing,
              100 if quick else PHISHING_WINDOW),
             ("nominal_stream", list(nominal_stream(n)),
              QUICK_WINDOWED if quick else TIMED_WINDOW)]
    budget = None if quick else WINDOW_BUDGET
    rows = []
    for name, data, window in cases:
        windowed = _seconds_per_record(ISA(window=window), data, budget)
        load_windowed = os.getloadavg()[0]
        plain = _seconds_per_record(ISA(), data[: windowed.size])
        full = slice(window, None)  # empty when the windowed learner stopped before
        rows.append({
            "stream": name, "records": windowed.size, "window": window,
            "ISA() ms per record": 1000 * plain.mean(),
            "ISA(window) ms per record": 1000 * windowed.mean(),
            "window / no window": windowed.mean() / plain.mean(),
            "window full: ISA() ms": 1000 * plain[full].mean() if plain[full].size else np.nan,
            "window full: ISA(window) ms":
                1000 * windowed[full].mean() if windowed[full].size else np.nan,
            "window full: ratio":
                windowed[full].mean() / plain[full].mean() if plain[full].size else np.nan,
            "load after ISA(window)": load_windowed, "load after ISA()": os.getloadavg()[0],
        })
    return pd.DataFrame(rows)


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


def _figure(seconds, rows, out, window: int):
    from . import _report

    plt = _report.pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ms = 1000 * seconds
    rolling = np.convolve(ms, np.ones(window) / window, mode="valid")
    ax.plot(np.arange(window, ms.size + 1), rolling, lw=1, label=f"mean of the last {window}")
    ax.plot([r["stored records"] for r in rows], [r["mean ms per record"] for r in rows], "o",
            label="checkpoints")
    ax.axhline(50, color="grey", ls="--", lw=0.8, label="target at 20,000: 50 ms")
    ax.set_xlabel("stored records")
    ax.set_ylabel("ms per record (predict + learn)")
    ax.set_yscale("log")
    ax.set_title("ISA, progressive validation, 16 nominal features, window=None")
    ax.legend(fontsize=8)
    return _report.save_figure(fig, NAME, out, "stream")


def _folds(plan, tmp, progress, _report):
    from onlinebma.datasets import UCIDataset

    rows = []
    for name, n_folds in plan.items():
        ds = UCIDataset(name)
        X, Y = ds.to_frame()
        classes = sorted(Y.unique(), key=str)
        splits = list(cv_splits(Y.to_numpy(), 10, _report.rng(NAME, len(name))))[:n_folds]
        isa_s, isa_fit, isa_err, lbr_s, lbr_fit, lbr_err = [], 0.0, 0, [], 0.0, 0
        isa_batch = 0.0
        for f, (train, test) in enumerate(progress(splits, desc=f"{NAME} {name}")):
            with single_threaded_blas():
                seconds, fit, errors = _time_isa(X, Y, train, test, ds.nominal_attributes)
                isa_batch += _time_isa_batch(X, Y, train, test, ds.nominal_attributes)
            isa_s += seconds
            isa_fit += fit
            isa_err += errors
            pair = (tmp / f"{name}-train{f}.arff", tmp / f"{name}-test{f}.arff")
            for rows_, path in ((train, pair[0]), (test, pair[1])):
                write_arff(X.iloc[rows_], Y.iloc[rows_], path, numeric=ds.numeric,
                           classes=classes, domain=X)
            # LBR on the same fold right after ISA, so both meet about the same load; the fold
            # runs twice in its JVM and the second (JIT-compiled) run is timed.
            weka = weka_lbr([pair, pair])[1]
            lbr_s += weka["seconds"]
            lbr_fit += weka["fit_seconds"]
            lbr_err += sum(classes[i] != t for i, t in zip(weka["predicted"], Y.iloc[test]))
        m = len(isa_s)
        isa_fold, lbr_fold = (sum(isa_s) + isa_fit) / n_folds, (sum(lbr_s) + lbr_fit) / n_folds
        rows.append({
            "dataset": name,
            "folds": n_folds,
            "test instances": m,
            "ISA median ms": 1000 * float(np.median(isa_s)),
            "LBR median ms": 1000 * float(np.median(lbr_s)),
            "ISA/LBR median": float(np.median(isa_s) / np.median(lbr_s)),
            "ISA s per fold": isa_fold,
            "LBR s per fold": lbr_fold,
            "ISA/LBR fold": isa_fold / lbr_fold,
            "ISA batch s per fold": isa_batch / n_folds,
            "ISA batch/LBR fold": isa_batch / n_folds / lbr_fold,
            "ISA error %": 100 * isa_err / m,
            "LBR error %": 100 * lbr_err / m,
        })
    return rows


def _reading(table, curve, windowed, windows) -> str:
    lines = []
    for _, r in table.iterrows():
        lines.append(
            f"- {r['dataset']}: per-instance median {r['ISA/LBR median']:.2f}x LBR's (target "
            f"<= 0.5: {'met' if r['ISA/LBR median'] <= 0.5 else 'NOT met'}); whole fold "
            f"{r['ISA/LBR fold']:.2f}x LBR's instance by instance, "
            f"{r['ISA batch/LBR fold']:.2f}x through the batch `predict_proba` (target <= 1: "
            f"{'met' if r['ISA/LBR fold'] <= 1 else 'NOT met'} instance by instance, "
            f"{'met' if r['ISA batch/LBR fold'] <= 1 else 'NOT met'} in batch; LBR classifies "
            "instance by instance in both).")
    by_n = {r["stored records"]: r for r in curve}
    last = by_n[max(by_n)]
    lines.append(
        f"- Stream: {last['mean ms per record']:.1f} ms per record at {max(by_n):,} stored "
        f"records (median {last['median ms']:.1f} ms; target: mean <= 50 ms at 20,000: "
        f"{'met' if max(by_n) == 20000 and last['mean ms per record'] <= 50 else 'NOT met'}).")
    if 5000 in by_n and 20000 in by_n:
        growth = by_n[20000]["mean ms per record"] / by_n[5000]["mean ms per record"]
        lines.append(
            f"- Growth from 5,000 to 20,000 stored records: {growth:.2f}x for 4x the records "
            f"(target: at most linear: {'met' if growth <= 4 else 'NOT met'}).")
    lines.append(f"- ISA's memory at {max(by_n):,} records: {last['ISA memory MB']:.1f} MB "
                 f"(bitset index {last['index KB']:.1f} KB).")
    full = [r for r in windowed if r["records stored"] < r["records learned"]]  # window full
    if full:
        grows = max(r["index KB"] for r in full) > full[0]["index KB"]
        lines.append(
            f"- With window={full[0]['window']:,}: index {full[0]['index KB']:.1f} KB "
            f"once the window is full, {full[-1]['index KB']:.1f} KB after "
            f"{full[-1]['records learned']:,} records; ISA's memory {full[-1]['ISA memory MB']:.2f}"
            f" MB ({'NOT bounded' if grows else 'bounded'}).")
    for _, r in windows.iterrows():
        ratio = r["window / no window"]
        lines.append(
            f"- {r['stream']}, {r['records']:,} records: `ISA(window={r['window']})` "
            f"{r['ISA(window) ms per record']:.1f} ms per record, `ISA()` "
            f"{r['ISA() ms per record']:.1f} ms: {ratio:.2f}x (target: no slower per record: "
            f"{'met' if ratio <= 1 else 'NOT met'})"
            + ("." if np.isnan(r["window full: ratio"]) else
               f"; once the window is full {r['window full: ISA(window) ms']:.1f} against "
               f"{r['window full: ISA() ms']:.1f} ms: {r['window full: ratio']:.2f}x."))
    return "\n".join(lines)


def run(quick: bool = False, out: pathlib.Path = pathlib.Path("docs")) -> dict:
    import time

    import pandas as pd

    from onlinebma.progress import progress

    from . import _report

    if not javac_available():
        raise RuntimeError(
            "bench-isa compares with Weka: it needs java, javac (a JDK) and Weka 3.6.14's jar"
        )
    plan = {"house-votes-84": 2} if quick else {"house-votes-84": 10, "soybean": 2}
    started = time.perf_counter()
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-isa-") as folder:  # Weka's folds
        table = pd.DataFrame(_folds(plan, pathlib.Path(folder), progress, _report))
    checkpoints = QUICK_CHECKPOINTS if quick else CHECKPOINTS
    window = 100 if quick else WINDOW
    seconds, curve = stream_curve(checkpoints, window, progress)
    figure = _figure(seconds, curve, out, window)
    windowed = window_memory(QUICK_WINDOWED if quick else WINDOWED, checkpoints)
    windows = window_timing(quick)
    streams = stream_timing(quick)
    elapsed = time.perf_counter() - started
    load = "; ".join(", ".join(f"{a:.1f}" for a in avg) for avg in (load_start, os.getloadavg()))
    folds = ", ".join(f"{k}: {v} folds" for k, v in plan.items())
    text = f"""# ISA vs Weka LBR: time per classified instance and per fold; ISA on a long stream

Command: `python -m experiments {NAME}{" --quick" if quick else ""}` ({elapsed / 60:.1f} min, one
run; compare ratios, not absolute times: the machine may be shared, see the load average).
Load average (1, 5 and 15 min) at the start of the run; at its end: {load}.

## Folds, side by side with LBR

Both learners on the same folds of one stratified 10-fold split ({folds}). ISA:
`onlinebma.isa.ISA()` (paper settings; `margin=40`), `fit` on the training fold, then
`predict_proba_one` per test instance, each call timed with `time.perf_counter`, numpy's BLAS
limited to one thread (Weka's LBR is single-threaded too). LBR: Weka 3.6.14
`FilteredClassifier` + supervised `Discretize` + `weka.classifiers.lazy.LBR` (defaults), each
`distributionForInstance` call timed with `System.nanoTime` (JVM start-up and file reading
excluded), run on each fold right after ISA so both meet about the same load (each fold twice in its
JVM, the second, JIT-warm run timed). "Median": time
per test instance. "s per fold": the fit plus every test
instance of a fold, averaged over the folds; for ISA it includes the first instances, which
score the models that later instances reuse. "ISA batch s per fold": `fit` plus one
`predict_proba` of the whole test fold, timed once per fold (its rows searched one after
the other on one cache of scores, as instance by instance); LBR's time is the same, instance by
instance, in both ratios (Weka's LBR has no batch path). Ratios below 1: ISA faster.

{_report.markdown_table(table, floatfmt=".3f")}

## A long stream: progressive validation, `window=None`

`ISA()` on `nominal_stream` (in this module: 16 nominal features of 2-4 values, two classes,
each feature depending on the class and one earlier feature, 5% of values missing), predict
then learn every record, from the first record on; one BLAS thread. Each row: the {window}
records before a checkpoint.

{_report.markdown_table(pd.DataFrame(curve), floatfmt=".2f")}

Memory with a window: `ISA(window={windowed[0]["window"]})` learning the same stream (it
stores the last `2 window` records: the window and the contexts of its terms' sliding score,
docs/isa.md), one prediction at each checkpoint (it builds the index and scores the models).

{_report.markdown_table(pd.DataFrame(windowed), floatfmt=".3f")}

![ms per record against stored records]({os.path.relpath(figure, pathlib.Path(out) / "results")})

## With and without a window, same stream

Progressive validation of `ISA(window=w)` and then `ISA()` on the same records: River's
Phishing (9 numeric features, discretized; the cut points are refitted as the adapter's
policy says: once the store has grown by 10%, so every `2w / 10` records with a window, whose
store holds the last `2w` records) and the
nominal stream above, each as far as the windowed learner got in
{"the whole stream" if quick else f"{WINDOW_BUDGET:.0f} s"} (`records`). "window full": the
records after the first `w`, where every record evicts one (before, both learners do the same
work). One BLAS thread; the 1-minute load average after each run.

{_report.markdown_table(windows, floatfmt=".2f")}

## Short streams of bundled data

`river.evaluate.progressive_val_score` over the first {streams["records"].iloc[0]} records of
each dataset in file order, ISA with the paper's settings, one BLAS thread.

{_report.markdown_table(streams, floatfmt=".1f")}
"""
    _report.write_results(NAME, out, text, reading=_reading(table, curve, windowed, windows))
    return {"tables": {"timing": table, "stream": pd.DataFrame(curve), "streams": streams,
                       "windowed": pd.DataFrame(windowed), "windows": windows},
            "seconds": elapsed}


if __name__ == "__main__":
    for row in window_steps():
        print("  ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                        for k, v in row.items()))
