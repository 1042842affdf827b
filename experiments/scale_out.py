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

Reported: wall seconds (the fastest of ``--repeat`` runs; each cluster is started and warmed
up by a tiny fit before the clock starts), records/s, the speed-up over one worker and the
overhead of one Dask worker against the single process, the peak resident memory of each
worker during the timed fits (and how far it rose above the worker's memory before them: the
rows and temporaries it held), the number of tasks, the bytes that travel per merge
(a pickled partial learner: its count tables), the scheduler's time per task and the time of
one merge. The learner Dask builds is checked against the single-process one (predictions
equal to 1e-9) on every run.

Targets: on a 2-core machine, 2 workers train at ≥ 1.7× one worker's records/s; one
worker within 15% of the single process; no worker ever holds more than one partition's rows.
Options: ``--workers N`` (largest number of workers tried) and ``--records M [M ...]`` (total
records of each run), so the same command measures a bigger machine.
"""

from __future__ import annotations

import contextlib
import math
import os
import pathlib
import pickle
import platform
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


def _on_dask(cls, sizes, workers, tuned, repeat=1):
    """The fastest of ``repeat`` fits on a fresh cluster, after a warm-up fit (imports, first
    calls), with each worker's peak memory during the timed fits."""
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
        before = client.run(_reset_peak)
        ddf = dd.from_map(make_partition, range(len(sizes)), sizes, meta=meta,
                          enforce_metadata=False)
        seconds = math.inf
        for _ in range(repeat):
            start = time.perf_counter()
            model = distributed.fit(_learner(cls), ddf, target="label", split_every=SPLIT_EVERY)
            seconds = min(seconds, time.perf_counter() - start)
        state = client.run(_worker_state)
    peak = max(s[0] for s in state.values())
    growth = max(s[0] - before[w] for w, s in state.items())
    trims = sorted({str(s[1]) for s in state.values()})
    return model, seconds, peak, growth, ",".join(trims)


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


def _speedup_figure(summary, out):
    """Speed-up against workers (tuned workers); skipped when matplotlib is not installed."""
    try:
        from ._report import pyplot, save_figure

        plt = pyplot()
    except ImportError:
        return None
    tuned = summary[summary["config"] == "tuned"]
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for (n, name), grp in tuned.groupby(["records", "learner"], sort=False):
        ax.plot(grp["workers"], grp["speed-up vs 1 worker"], marker="o", label=f"{name}, {n:,}")
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
    rows, checks = [], []
    # A quick run (the test suite's smoke run) starts one cluster: one learner, tuned workers.
    learners = (NaiveBayes,) if quick else (NaiveBayes, ModelAveragedNB)
    plan = [(n, cls) for n in totals for cls in learners]
    probe = make_partition(10_000, 2_000).drop(columns="label")
    for n, cls in progress(plan, desc="scale-out"):
        sizes = [part_rows] * (n // part_rows) + ([n % part_rows] if n % part_rows else [])
        single, seconds = _single_process(cls, sizes, repeat)
        base = {"records": n, "learner": cls.__name__, "tasks": _n_tasks(len(sizes))}
        rows.append({**base, "workers": "one process", "config": "", "seconds": seconds,
                     "records/s": n / seconds})
        # Dask's default configuration at one worker, up to 10^7 records (to show its cost)
        configs = [] if quick or n > 10**7 else [(1, False)]
        configs += [(w, True) for w in range(1, max_workers + 1)]
        for w, tuned in configs:
            model, seconds, peak, growth, trim = _on_dask(cls, sizes, w, tuned, repeat)
            gap = float(np.abs(model.predict_proba_many(probe).to_numpy()
                               - single.predict_proba_many(probe).to_numpy()).max())
            checks.append(gap)
            rows.append({**base, "workers": w, "config": "tuned" if tuned else "default",
                         "seconds": seconds, "records/s": n / seconds,
                         "peak MB per worker": peak, "peak - before MB": growth,
                         f"worker {TRIM}": trim})
    table = pd.DataFrame(rows)
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
    figure = _speedup_figure(summary, out)

    tuned = summary[summary["config"] == "tuned"]
    two = tuned[tuned["workers"] == 2]["speed-up vs 1 worker"]
    over_tuned = tuned[tuned["workers"] == 1]["1 worker / one process"]
    over_default = summary[(summary["config"] == "default")
                           & (summary["workers"] == 1)]["1 worker / one process"]
    dask_rows = table[table["workers"] != "one process"]
    largest = max(totals)
    partition_mb = part_rows * (N_FEATURES + 8) / 1e6
    reading = "\n".join([
        f"- Every Dask fit equals the single-process learner: largest difference in predicted "
        f"probabilities {max(checks):.1e}.",
        f"- 2 tuned workers vs 1: speed-up {_span(two)}× (target ≥ 1.7×: "
        f"{_met(len(two) and two.min() >= 1.7)}).",
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

## What 100 workers would cost

{_cost_model(part_rows, merge_bytes, merge_s, task_ms, table)}
"""
    write_results(NAME, out, text, reading=reading, notes=NOTES)
    return {"tables": {"runs": table, "speed-up": summary}}


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
  tree) is the serial part of the cost model above.\
"""


def _fitted(cls, part):
    m = _learner(cls)
    m.learn_many(part.drop(columns="label"), part["label"])
    return m


def _span(values) -> str:
    return f"{min(values):.2f}–{max(values):.2f}" if len(values) else "n/a"


def _met(ok) -> str:
    return "met" if ok else "not met"


def _cost_model(part_rows, merge_bytes, merge_s, task_ms, table) -> str:
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
  per core), is 10^8 / (100 × rate) = {compute:.2f} s on 100 workers (if the records already
  lie where the workers are; reading them is not modelled).
- **Serial part**: the scheduler handles every task ({task_ms:.2f} ms per task measured
  here on one worker: {scheduler:.2f} s for {tasks:,} tasks if it cannot overlap them with
  computation), and the merge tree's critical path is {depth} merge nodes of
  {worst_merge * 1e3:.1f} ms each ({tree:.3f} s), plus the network's latency per level.
- **Serial fraction**: {serial:.2f} s of {serial + n / rate:.0f} s of work on one core, about
  {serial / (serial + n / rate):.1%}; by Amdahl's law 100 workers would then speed up by at most
  about {1 / (serial / (serial + n / rate) + (1 - serial / (serial + n / rate)) / 100):.0f}×
  ({serial + compute:.1f} s). The scheduler's per-task cost dominates the serial part, so larger
  partitions (fewer tasks) are what 100 workers need; the merges themselves are negligible."""
