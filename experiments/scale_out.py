"""Scale-out of the naive Bayes family on Dask: records/s, memory and bytes moved against workers.

Synthetic nominal records (20 features, 4 values, 3 classes, 5 informative features) are
generated per partition inside the workers, so nothing big crosses the network and generation
is done where the learning is. Side by side in one run:

- **one process**: the same partitions generated and learned one after another with
  ``learn_many`` in this process (the learner one machine builds);
- **Dask** with 1, 2, … workers (``distributed.LocalCluster``, one thread per worker process):
  :func:`onlinebma.distributed.fit`, i.e. ``learn_many`` per partition and an ordered merge tree.
  Two worker configurations: Dask's **default**, and **tuned**: without the
  ``MALLOC_TRIM_THRESHOLD_=65536`` that Dask's nanny puts in every worker's environment
  (``distributed.nanny.pre-spawn-environ``) and without the workers' statistical profiler
  (``distributed.worker.profile.enabled``). The default configuration is run with one worker
  only, up to 10^7 records, to show the cost of those two settings.
- **Files in**, as a user with more records than memory trains: the same records written
  beforehand as Parquet files, one per partition, in a temporary directory (the writing timed
  and reported apart, not counted in any fit), then ``dd.read_parquet(directory)`` →
  ``distributed.fit`` on the tuned clusters above (the same cluster, right after the generated
  frame's fits), reading counted; and in one process, each file read with
  ``pandas.read_parquet`` then learned with ``learn_many``, reading and learning timed apart
  (the per-record constants of the cost models below). Reads are cold: before every timed
  pass the files' pages are dropped from the operating system's page cache (``fsync``, then
  ``posix_fadvise(POSIX_FADV_DONTNEED)``, Linux), so each file comes from the disk. Arrow
  decodes with one thread in a Dask worker (the nanny's ``OMP_NUM_THREADS=1``, which Arrow's
  thread pool follows) and in the single process (set so), so records/s per worker are
  records/s per core.

Reported: wall seconds (the fastest of ``--repeat`` runs; each cluster is started and warmed
up by a tiny fit before the clock starts), records/s, the speed-up over one worker and the
overhead of one Dask worker against the single process, the peak resident memory of each
worker during the timed fits (and how far it rose above the worker's memory before them: the
rows and temporaries it held), the number of tasks, the bytes that travel per merge
(a pickled partial learner: its count tables), the scheduler's time per task and the time of
one merge; for files in, the records/s per worker (per core), the files' size on disk and
the seconds of writing them. Every learner Dask builds, from the generated frame or from the
files, is checked against the single-process one (predictions equal to 1e-9) on every run.

Targets: on a 2-core machine, 2 workers train at ≥ 1.7× one worker's records/s; one
worker within 15% of the single process; no worker ever holds more than one partition's rows.
Options: ``--workers N`` (largest number of workers tried) and ``--records M [M ...]`` (total
records of each run), so the same command measures a bigger machine. The cost models at the
end (100 workers, and per worker for 16 workers reading files) are models, not measurements:
their constants are this run's.
"""

from __future__ import annotations

import contextlib
import math
import os
import pathlib
import pickle
import platform
import tempfile
import time

import numpy as np

from ._report import load_note, markdown_table, write_results

NAME = "scale-out"
N_FEATURES, N_VALUES, N_CLASSES = 20, 4, 3
PARTITION_ROWS = 250_000
SPLIT_EVERY = 8
TRIM = "MALLOC_TRIM_THRESHOLD_"
NO_FIGURE = "(no figure: matplotlib is not installed)"
#: Options of this experiment on the command line (``python -m experiments scale-out ...``).
ARGUMENTS = {
    "--workers": {"type": int, "default": None, "help": "largest number of Dask workers tried"},
    "--records": {"type": int, "nargs": "+", "default": None,
                  "help": "records in all (one or more totals, one run each)"},
    "--repeat": {"type": int, "default": 1,
                 "help": "time every configuration this many times, keep the fastest"},
}


def make_partition(index: int, rows: int):
    """Partition ``index`` of the synthetic stream: a DataFrame of int8 codes and ``label``."""
    import pandas as pd

    g = np.random.default_rng([2002, 12, index])
    y = g.integers(N_CLASSES, size=rows)
    X = g.integers(N_VALUES, size=(rows, N_FEATURES), dtype=np.int8)
    informative = g.random((rows, 5)) < 0.6
    X[:, :5] = np.where(informative, (y[:, None] + np.arange(5)) % N_VALUES, X[:, :5])
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(N_FEATURES)])
    frame["label"] = y
    return frame


def _learner(cls):
    return cls(nominal_attributes=[f"f{j}" for j in range(N_FEATURES)])


def _single_process(cls, sizes, repeat=1):
    """The fastest of ``repeat`` runs: every partition generated and learned in this process."""
    seconds = math.inf
    for _ in range(repeat):
        model = _learner(cls)
        start = time.perf_counter()
        for i, rows in enumerate(sizes):
            part = make_partition(i, rows)
            model.learn_many(part.drop(columns="label"), part["label"])
        seconds = min(seconds, time.perf_counter() - start)
    return model, seconds


def _write_files(sizes, directory: pathlib.Path) -> dict:
    """The partitions of :func:`_single_process` written as Parquet files, one per partition
    (``part-00000.parquet``, … : name order is partition order); the seconds of writing only
    (generation not counted) and the bytes on disk."""
    seconds = 0.0
    for i, rows in enumerate(sizes):
        part = make_partition(i, rows)
        start = time.perf_counter()
        part.to_parquet(directory / f"part-{i:05d}.parquet", index=False)
        seconds += time.perf_counter() - start
    size = sum(f.stat().st_size for f in _files(directory))
    return {"files": len(sizes), "MB on disk": size / 1e6, "bytes per record": size / sum(sizes),
            "seconds writing": seconds}


def _files(directory: pathlib.Path) -> list:
    return sorted(directory.glob("part-*.parquet"))


def _drop_from_cache(directory: pathlib.Path) -> None:
    """Drop the files' pages from the page cache, so that the next read comes from the disk
    (``posix_fadvise`` where the system has it; elsewhere the reads may be warm)."""
    if not hasattr(os, "posix_fadvise"):
        return
    for path in _files(directory):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _single_process_files(cls, directory: pathlib.Path, repeat=1):
    """The fastest of ``repeat`` runs: every file read (cold) and learned in this process;
    with the seconds of reading and of learning in that run. Arrow decodes with one thread,
    as in a Dask worker (whose ``OMP_NUM_THREADS=1`` Arrow's thread pool follows), so that
    the time is one core's."""
    import pandas as pd
    import pyarrow

    threads = pyarrow.cpu_count()
    pyarrow.set_cpu_count(1)
    try:
        best = (math.inf, 0.0, 0.0)
        for _ in range(repeat):
            _drop_from_cache(directory)
            model, reading, learning = _learner(cls), 0.0, 0.0
            for path in _files(directory):
                start = time.perf_counter()
                part = pd.read_parquet(path)
                middle = time.perf_counter()
                model.learn_many(part.drop(columns="label"), part["label"])
                reading += middle - start
                learning += time.perf_counter() - middle
            best = min(best, (reading + learning, reading, learning))
    finally:
        pyarrow.set_cpu_count(threads)
    return model, *best


def _reset_peak() -> float:
    """Start a new peak-memory count in this process (Linux ``clear_refs``); its memory now, MB."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:  # not Linux, or not allowed: the peak then counts from the start
        pass
    return _status_mb("VmRSS")


def _status_mb(field: str) -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _worker_state():
    """What a worker ran with: its peak memory since :func:`_reset_peak` and the malloc
    setting it was given."""
    return _status_mb("VmHWM"), os.environ.get(TRIM)


@contextlib.contextmanager
def _worker_config(tuned: bool):
    """Dask's default worker configuration, or the tuned one (module docstring). The nanny
    writes its pre-spawn environment into this process's ``os.environ`` too, from where later
    workers would inherit it, so the variable is restored afterwards."""
    import dask

    saved = os.environ.get(TRIM)
    config = {}
    if tuned:
        env = dict(dask.config.get("distributed.nanny.pre-spawn-environ"))
        env.pop(TRIM, None)
        os.environ.pop(TRIM, None)
        config = {"distributed.nanny.pre-spawn-environ": env,
                  "distributed.worker.profile.enabled": False}
    try:
        with dask.config.set(config):
            yield
    finally:
        os.environ.pop(TRIM, None)
        if saved is not None:
            os.environ[TRIM] = saved


def _n_tasks(n_parts: int) -> int:
    """Tasks of one fit: generate and learn each partition, then the merges of the tree."""
    merges, level = 0, n_parts
    while level > 1:
        level = math.ceil(level / SPLIT_EVERY)
        merges += level
    return 2 * n_parts + merges


def _on_dask(cls, sizes, workers, tuned, repeat=1, directory=None):
    """The fastest of ``repeat`` fits on a fresh cluster, after a warm-up fit (imports, first
    calls), with each worker's peak memory during the timed fits: of the frame generated in
    the workers, then (given the ``directory`` of :func:`_write_files`) of
    ``dd.read_parquet(directory)``, its files dropped from the page cache before each fit.
    One result (see :func:`_timed_fits`) per frame."""
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from onlinebma import distributed

    meta = make_partition(0, 0)
    with _worker_config(tuned), LocalCluster(n_workers=workers, threads_per_worker=1,
                                             processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        warm = dd.from_map(make_partition, [10**6] * workers, [1_000] * workers, meta=meta,
                           enforce_metadata=False)
        distributed.fit(_learner(cls), warm, target="label")  # workers warm before the clock
        ddf = dd.from_map(make_partition, range(len(sizes)), sizes, meta=meta,
                          enforce_metadata=False)
        results = [_timed_fits(client, cls, ddf, repeat)]
        if directory is not None:
            files = dd.read_parquet(str(directory))
            # the readers' imports and first calls before the clock, as for generation
            distributed.fit(_learner(cls), files.partitions[:workers], target="label")
            results.append(_timed_fits(client, cls, files, repeat,
                                       before_each=lambda: _drop_from_cache(directory)))
    return results


def _timed_fits(client, cls, ddf, repeat, before_each=None):
    """``(model, seconds, peak MB, peak - before MB, the workers' malloc setting, tasks)`` of
    the fastest of ``repeat`` fits of ``ddf``, ``before_each()`` called before each (not
    timed)."""
    from onlinebma import distributed

    before = client.run(_reset_peak)
    seconds = math.inf
    for _ in range(repeat):
        if before_each is not None:
            before_each()
        start = time.perf_counter()
        model = distributed.fit(_learner(cls), ddf, target="label", split_every=SPLIT_EVERY)
        seconds = min(seconds, time.perf_counter() - start)
    state = client.run(_worker_state)
    peak = max(s[0] for s in state.values())
    growth = max(s[0] - before[w] for w, s in state.items())
    trims = sorted({str(s[1]) for s in state.values()})
    return model, seconds, peak, growth, ",".join(trims), _n_tasks(len(ddf.to_delayed()))


def _task_overhead_ms(n: int = 2000) -> float:
    """Milliseconds per task of the scheduler and one tuned worker, from ``n`` empty tasks."""
    from distributed import Client, LocalCluster

    with _worker_config(True), LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                            dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.gather(client.map(int, range(50)))  # warm up
        start = time.perf_counter()
        client.gather(client.map(int, range(n)))
        return (time.perf_counter() - start) / n * 1e3


def _merge_seconds(cls, rows: int) -> float:
    """Seconds of one merge node of the tree: ``SPLIT_EVERY`` partial learners combined."""
    parts = []
    for i in range(SPLIT_EVERY):
        part = make_partition(i, rows)
        m = _learner(cls)
        m.learn_many(part.drop(columns="label"), part["label"])
        parts.append(m)
    start = time.perf_counter()
    out = parts[0]
    for other in parts[1:]:
        out = out.merge(other)
    return time.perf_counter() - start


def _speedup_figure(summary, files_table, out):
    """Speed-up against workers (tuned workers; files in dashed); skipped when matplotlib is
    not installed."""
    try:
        from ._report import pyplot, save_figure

        plt = pyplot()
    except ImportError:
        return None
    tuned = summary[summary["config"] == "tuned"]
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for (n, name), grp in tuned.groupby(["records", "learner"], sort=False):
        ax.plot(grp["workers"], grp["speed-up vs 1 worker"], marker="o", label=f"{name}, {n:,}")
    files = files_table[files_table["workers"] != "one process"]
    for (n, name), grp in files.groupby(["records", "learner"], sort=False):
        ax.plot(grp["workers"].astype(int), grp["speed-up vs 1 worker"], marker="s", ls="--",
                label=f"{name}, {n:,}, files in")
    ws = sorted(tuned["workers"].unique())
    ax.plot(ws, ws, ls=":", color="grey", label="ideal")
    ax.set_xlabel("Dask workers (tuned)")
    ax.set_ylabel("speed-up over 1 worker")
    ax.legend(fontsize=7)
    return save_figure(fig, NAME, out, "speedup")


def run(quick: bool = False, out: pathlib.Path = pathlib.Path("docs"), workers=None,
        records=None, repeat: int = 1) -> dict:
    import pandas as pd

    from onlinebma.naive_bayes import ModelAveragedNB, NaiveBayes
    from onlinebma.progress import progress

    load = [os.getloadavg()[0]]
    max_workers = workers or (2 if quick else max(2, os.cpu_count() or 1))
    if isinstance(records, int):
        records = [records]
    totals = list(records) if records else ([200_000] if quick else [1_000_000, 10_000_000])
    part_rows = 50_000 if quick else PARTITION_ROWS
    rows, file_rows, writing, checks = [], [], [], []
    # A quick run (the test suite's smoke run) starts one cluster: one learner, tuned workers.
    learners = (NaiveBayes,) if quick else (NaiveBayes, ModelAveragedNB)
    probe = make_partition(10_000, 2_000).drop(columns="label")

    def gap(model, single) -> float:
        gap = float(np.abs(model.predict_proba_many(probe).to_numpy()
                           - single.predict_proba_many(probe).to_numpy()).max())
        checks.append(gap)
        return gap

    plan = [(n, cls) for n in totals for cls in learners]
    with tempfile.TemporaryDirectory(prefix="scale-out-") as root:
        for n, cls in progress(plan, desc="scale-out"):
            sizes = [part_rows] * (n // part_rows) + ([n % part_rows] if n % part_rows else [])
            directory = pathlib.Path(root) / str(n)
            if not directory.exists():  # written once per total, read by every learner
                directory.mkdir()
                writing.append({"records": n, **_write_files(sizes, directory)})
            single, seconds = _single_process(cls, sizes, repeat)
            base = {"records": n, "learner": cls.__name__, "tasks": _n_tasks(len(sizes))}
            rows.append({**base, "workers": "one process", "config": "",
                         "seconds": seconds, "records/s": n / seconds})
            model, seconds, reading, learning = _single_process_files(cls, directory, repeat)
            file_rows.append({**base, "workers": "one process", "seconds": seconds,
                              "records/s": n / seconds, "records/s per core": n / seconds,
                              "of which reading s": reading, "learning s": learning,
                              "gap": gap(model, single)})
            # Dask's default configuration at one worker, up to 10^7 records (its cost)
            configs = [] if quick or n > 10**7 else [(1, False)]
            configs += [(w, True) for w in range(1, max_workers + 1)]
            for w, tuned in configs:
                results = _on_dask(cls, sizes, w, tuned, repeat,
                                   directory if tuned else None)
                model, seconds, peak, growth, trim, _ = results[0]
                gap(model, single)
                rows.append({**base, "workers": w, "config": "tuned" if tuned else "default",
                             "seconds": seconds, "records/s": n / seconds,
                             "peak MB per worker": peak, "peak - before MB": growth,
                             f"worker {TRIM}": trim})
                if not tuned:
                    continue
                model, files_s, peak, growth, _, tasks = results[1]
                file_rows.append({**base, "tasks": tasks, "workers": w, "seconds": files_s,
                                  "records/s": n / files_s,
                                  "records/s per core": n / files_s / w,
                                  "vs generated": files_s / seconds,
                                  "peak MB per worker": peak, "peak - before MB": growth,
                                  "gap": gap(model, single)})
    table = pd.DataFrame(rows)
    files_table = _with_speedup(pd.DataFrame(file_rows))
    writing = pd.DataFrame(writing)
    first = make_partition(0, part_rows)
    merge_bytes = {cls.__name__: len(pickle.dumps(_fitted(cls, first))) for cls in learners}
    merge_s = {cls.__name__: _merge_seconds(cls, 2_000) for cls in learners}
    task_ms = math.nan if quick else _task_overhead_ms()
    load.append(os.getloadavg()[0])

    # speed-ups against one Dask worker of the same configuration, and the overhead of one
    # worker against one process
    summary = []
    for (n, name), grp in table.groupby(["records", "learner"], sort=False):
        one_proc = grp.loc[grp["workers"] == "one process", "seconds"].iloc[0]
        for config in ("default", "tuned"):
            dask_rows = grp[grp["config"] == config]
            if dask_rows.empty:
                continue
            one_worker = dask_rows.loc[dask_rows["workers"] == 1, "seconds"].iloc[0]
            for _, r in dask_rows.iterrows():
                summary.append({"records": n, "learner": name, "config": config,
                                "workers": r["workers"],
                                "speed-up vs 1 worker": one_worker / r["seconds"],
                                "1 worker / one process": one_worker / one_proc})
    summary = pd.DataFrame(summary)
    figure = _speedup_figure(summary, files_table, out)

    tuned = summary[summary["config"] == "tuned"]
    two = tuned[tuned["workers"] == 2]["speed-up vs 1 worker"]
    over_tuned = tuned[tuned["workers"] == 1]["1 worker / one process"]
    over_default = summary[(summary["config"] == "default")
                           & (summary["workers"] == 1)]["1 worker / one process"]
    dask_rows = pd.concat([table, files_table])
    dask_rows = dask_rows[dask_rows["workers"] != "one process"]
    largest = max(totals)
    files_dask = files_table[files_table["workers"] != "one process"]
    files_one = files_dask[files_dask["workers"] == 1]
    files_two = files_dask[files_dask["workers"] == 2]
    partition_mb = part_rows * (N_FEATURES + 8) / 1e6
    reading = "\n".join([
        f"- Every Dask fit equals the single-process learner: largest difference in predicted "
        f"probabilities {max(checks):.1e}.",
        f"- 2 tuned workers vs 1: speed-up {_span(two)}× (target ≥ 1.7×: "
        f"{_met(len(two) and two.min() >= 1.7)}).",
        f"- Files in (reading counted, cold files): one worker learns "
        f"{_span(files_one['records/s per core'], ',.0f')} records/s per core, "
        f"{_span(files_one['vs generated'])}× the time of the frame generated in the worker; "
        f"two workers {_span(files_two['records/s per core'], ',.0f')} records/s per core "
        f"(speed-up {_span(files_two['speed-up vs 1 worker'])}× over one). In one process, "
        f"reading is {_span(_reading_share(files_table), '.0%')} of the time. Writing the "
        f"files beforehand (not counted): {_span(writing['seconds writing'])} s per run, "
        f"{_span(writing['bytes per record'])} bytes per record on disk.",
        f"- One worker vs one process: default configuration {_span(over_default)}× the time, "
        f"tuned {_span(over_tuned)}× (target ≤ 1.15×: default "
        f"{_met(over_default.max() <= 1.15)}, tuned {_met(over_tuned.max() <= 1.15)}).",
        f"- Bytes per merge: {', '.join(f'{k} {v:,}' for k, v in merge_bytes.items())} (a "
        f"pickled learner of one partition; it grows with features × values × classes, not "
        f"with records). One merge node ({SPLIT_EVERY} learners): "
        f"{', '.join(f'{k} {v * 1e3:.1f} ms' for k, v in merge_s.items())}. Scheduler and "
        f"worker: {task_ms:.2f} ms per task.",
        f"- Memory: a partition is {part_rows:,} rows × {N_FEATURES} int8 codes ≈ "
        f"{partition_mb:.0f} MB with its labels; a worker's peak memory during the fits rose at "
        f"most {dask_rows['peak - before MB'].max():.0f} MB above its memory before them "
        f"(largest run: "
        f"{largest:,} records, {largest * (N_FEATURES + 8) / 1e6:,.0f} MB of rows in all).",
    ])
    text = f"""# Scale-out on Dask (`python -m experiments {NAME}`)

{__doc__.split(chr(10), 1)[1].strip()}

Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()};
{"quick run" if quick else "full run"}; partitions of {part_rows:,} rows; fastest of {repeat}
run(s). Load average (1 min) at the start and end of the run: {load[0]:.1f} and
{load[1]:.1f} ({load_note(load, os.cpu_count() or 1)}); the ratios come from this
one run.

## Wall time and memory

{markdown_table(table, floatfmt=".2f")}

## Speed-up

{markdown_table(summary, floatfmt=".2f")}

{f"![speed-up](../figures/{NAME}-speedup.png)" if figure else NO_FIGURE}

## Files in: Parquet files written beforehand, read by the workers

Writing the files (one per partition; generation not counted, nor is the writing in any fit):

{markdown_table(writing, floatfmt=".2f")}

Training from them, reading counted (``gap``: the largest difference in predicted
probabilities from the single-process learner of the generated records; ``vs generated``: the
seconds of the same workers on the frame generated in the workers):

{markdown_table(files_table, floatfmt=".2f")}

## What 100 workers would cost

{_cost_model(part_rows, merge_bytes, merge_s, task_ms, table, files_table)}

## What 16 workers reading files would do, per worker

{_files_model(part_rows, merge_s, task_ms, files_table, writing)}
"""
    write_results(NAME, out, text, reading=reading, notes=NOTES)
    return {"tables": {"runs": table, "speed-up": summary, "files-in": files_table,
                       "writing": writing}}


def _files_model(part_rows, merge_s, task_ms, files_table, writing) -> str:
    """The written per-worker model of 16 workers training from Parquet files, with this
    run's measured constants."""
    workers = 16
    share = int(files_table["records"].max())  # each worker's share: this run's largest
    n = workers * share
    parts = math.ceil(n / part_rows)
    depth = math.ceil(math.log(parts, SPLIT_EVERY))
    tasks = _n_tasks(parts)
    one = files_table[(files_table["workers"] == 1) & (files_table["records"] == share)]
    rate = float(one["records/s per core"].min())  # one worker, reading counted, slower learner
    two = files_table[(files_table["workers"] == 2) & (files_table["records"] == share)]
    read, learn = _per_record_constants(files_table)
    size = float(writing["bytes per record"].max())
    compute = share / rate
    serial = tasks * task_ms / 1e3 + depth * max(merge_s.values())
    total = compute + serial
    bandwidth = workers * rate * size / 1e6
    two_note = (f"; with 2 workers on this machine it measured "
                f"{_span(two['records/s per core'], ',.0f')} records/s per core"
                if len(two) else "")
    return f"""A model, not a measurement; its constants are this run's. Each of {workers} workers
has its own core and reads its share of the files, {share:,} records (this run's largest), so
the frame is {n:,} records in P = {parts:,} files of {part_rows:,} rows; the fit has {tasks:,}
tasks (read and learn each file, {tasks - 2 * parts} merges in a tree of depth {depth}).

- **Per worker**: one Dask worker reading cold files learned {rate:,.0f} records/s per core
  here (reading counted, the slower learner{two_note}). In one process a record costs
  {read * 1e6:.2f} µs of reading and {learn * 1e6:.2f} µs of learning: reading is
  {read / (read + learn):.0%} of a worker's work.
- **Parallel part**: {share:,} / {rate:,.0f} = {compute:.2f} s on every worker at once.
- **Serial part**: as for 100 workers, the scheduler's {task_ms:.2f} ms per task for
  {tasks:,} tasks and {depth} merge nodes of {max(merge_s.values()) * 1e3:.1f} ms: {serial:.2f} s
  (no overlap with the learning assumed).
- **Altogether**: about {total:.1f} s, i.e. {n / total:,.0f} records/s, {n / total / workers:,.0f}
  per worker, a speed-up of about {workers * compute / total:.1f}× over one worker reading all
  {n:,} records ({n / rate:.0f} s).
- **Storage**: the Parquet files hold {size:.2f} bytes per record, so the {workers} workers
  together read {bandwidth:.1f} MB/s from wherever the files lie (a shared disk or an object
  store must deliver that, or it, not the workers, sets the pace); the files were written at
  {_span(writing['records'] / writing['seconds writing'], ',.0f')} records/s on one core
  beforehand."""


#: Remarks written after reading full runs (no numbers here: they are computed above).
NOTES = """\
- The one-worker overhead of this benchmark's earlier runs had two parts. The larger was
  Dask's worker environment: with ``MALLOC_TRIM_THRESHOLD_`` set, glibc no longer adapts its
  mmap threshold, so each large numpy temporary of ``learn_many`` is mapped and unmapped
  afresh (page faults every time); the same loop in a plain Python process started with that
  variable slows down likewise, and a worker without it learns a partition as fast as the
  single process. The statistical profiler of the workers costs a few percent more. The
  smaller part was measuring cold workers: the first tasks imported the generator's module
  and made the first calls; the clock now starts after a warm-up fit. Serialization is not a
  cost here: partitions are generated where they are learned, and a partial learner is a few
  kilobytes. Task count and the merge tree are small beside the learning (see the per-task
  and per-merge times). BLAS plays no part (the naive Bayes learners make no matrix
  products; Dask's workers also run with one BLAS thread).
- The speed-up of 2 workers over 1 needs two idle cores: the scheduler, the client and the
  two workers share this 2-core machine with other developers' jobs, and under a load
  average above 2 the second worker mostly waits for a core. Read the speed-up only from a
  run whose load average stayed below 1.
- What stays on the critical path (the scheduler's time per task, one merge per level of the
  tree) is the serial part of the cost model above.
- Files in: the files lie on this machine's disk and are dropped from the page cache before
  every timed read, so reading is the disk's and Arrow's decoding on one core. On a cluster
  they would lie on shared storage or an object store, whose bandwidth the 16-worker model
  states as a requirement rather than measures. Parquet stores the 4-valued codes dictionary-
  and run-length encoded, a few bytes per record on disk against 28 in memory (20 int8 codes
  and an int64 label), and reads them back as int8 columns, the generated frame's types: the
  learners see the same records, and ``dd.read_parquet`` makes one partition per file (the
  same number of tasks as the generated frame).\
"""


def _fitted(cls, part):
    m = _learner(cls)
    m.learn_many(part.drop(columns="label"), part["label"])
    return m


def _span(values, fmt: str = ".2f") -> str:
    """``low–high`` of ``values``, one number when they are equal, ``n/a`` when there are none."""
    if not len(values):
        return "n/a"
    low, high = f"{min(values):{fmt}}", f"{max(values):{fmt}}"
    return low if low == high else f"{low}–{high}"


def _with_speedup(files_table):
    """The files-in rows with each Dask row's speed-up over one worker of its run."""
    out = files_table.copy()
    dask = out["workers"] != "one process"
    one = out[out["workers"] == 1].set_index(["records", "learner"])["seconds"]
    keys = list(zip(out["records"], out["learner"]))
    out.loc[dask, "speed-up vs 1 worker"] = [one[k] for k, d in zip(keys, dask) if d] \
        / out.loc[dask, "seconds"]
    return out


def _reading_share(files_table):
    """Of the one-process files-in runs, the part of the time spent reading the files."""
    one = files_table[files_table["workers"] == "one process"]
    return one["of which reading s"] / one["seconds"]


def _met(ok) -> str:
    return "met" if ok else "not met"


def _per_record_constants(files_table) -> tuple[float, float]:
    """Seconds per record of reading the files and of learning, in one process, at the largest
    number of records (the slower learner: the model errs on the slow side)."""
    one = files_table[(files_table["workers"] == "one process")
                      & (files_table["records"] == files_table["records"].max())]
    return (float((one["of which reading s"] / one["records"]).max()),
            float((one["learning s"] / one["records"]).max()))


def _cost_model(part_rows, merge_bytes, merge_s, task_ms, table, files_table) -> str:
    """The written model of 100 workers, with this run's measured constants."""
    n = 10**8
    parts = n // part_rows
    depth = math.ceil(math.log(parts, SPLIT_EVERY))
    tasks = _n_tasks(parts)
    one = table[table["workers"] == "one process"]
    rate = float((one["records"] / one["seconds"]).max())  # records/s of one core
    worst_bytes = max(merge_bytes.values())
    worst_merge = max(merge_s.values())
    compute = n / (100 * rate)
    read, learn = _per_record_constants(files_table)
    scheduler = tasks * task_ms / 1e3
    tree = depth * worst_merge
    serial = scheduler + tree
    return f"""A model, not a measurement; its constants are this run's. 10^8 records in partitions
of {part_rows:,} rows are P = {parts:,} partitions; the fit has {tasks:,} tasks (generate and learn
each partition, {tasks - 2 * parts} merges in a tree of fan-in {SPLIT_EVERY} and depth
⌈log_{SPLIT_EVERY} P⌉ = {depth}).

- **Bytes per merge**: a partial learner of these records pickles to at most
  {worst_bytes:,} bytes whatever the number of records (count tables: 20 features × 4 values ×
  3 classes); all {parts:,} partial learners together move {parts * worst_bytes / 1e6:.1f} MB,
  each once. Records never move.
- **Parallel part**: learning, at the single process's best rate here ({rate:,.0f} records/s
  per core, generation included), is 10^8 / (100 × rate) = {compute:.2f} s on 100 workers, if
  the records are generated where the workers are. Read from Parquet files instead, a record
  costs {read * 1e6:.2f} µs of reading and {learn * 1e6:.2f} µs of learning (measured here in
  one process, cold files, the slower learner), and the parallel part is
  10^8 × {(read + learn) * 1e6:.2f} µs / 100 = {n * (read + learn) / 100:.2f} s (next section:
  what the storage must deliver).
- **Serial part**: the scheduler handles every task ({task_ms:.2f} ms per task measured
  here on one worker: {scheduler:.2f} s for {tasks:,} tasks if it cannot overlap them with
  computation), and the merge tree's critical path is {depth} merge nodes of
  {worst_merge * 1e3:.1f} ms each ({tree:.3f} s), plus the network's latency per level.
- **Serial fraction**: {serial:.2f} s of {serial + n / rate:.0f} s of work on one core, about
  {serial / (serial + n / rate):.1%}; by Amdahl's law 100 workers would then speed up by at most
  about {1 / (serial / (serial + n / rate) + (1 - serial / (serial + n / rate)) / 100):.0f}×
  ({serial + compute:.1f} s). The scheduler's per-task cost dominates the serial part, so larger
  partitions (fewer tasks) are what 100 workers need; the merges themselves are negligible."""
