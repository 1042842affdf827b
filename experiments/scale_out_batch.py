"""Scale-out of the batch learners on Dask: FAN's EM iterations and order MCMC's count tables.

Side by side in one run, records generated per partition inside the workers (so generation is
not timed and nothing big crosses the network), against the same records in one process:

- **FAN, distributed EM** (:mod:`onlinebma.mixture.distributed_em`): synthetic records of a
  3-component FAN (8 nominal features with 4 values, 4 numeric features, 3 classes). Timed: one
  EM iteration of a 3-component FAN (the E step on every partition, the expected statistics
  summed in a tree of fan-in 8, the M step on the sums), in one process (the EM engine over all
  records, as ``fit`` runs it) and on Dask with 1, 2, … workers: seconds per iteration against
  records. Checked: the iteration's objective equals the single process's to 1e-9.
- **OrderMCMC, count tables** (:mod:`onlinebma.order_mcmc.distributed_counts`): records
  sampled from the ALARM network (pgmpy forward sampling, one seed per partition), class
  CATECHOL. Timed:
  building the K2 count tables of every candidate family (``max_parents=2``) and scoring them,
  in one process (what ``fit`` does: the stream state's count tables of all records) and on
  Dask (the coding pass, per-partition counts, their tree sum, the scores from the sums) with
  1, 2, … workers. Checked: the tables are equal, cell by cell. Reported: the bytes of one
  partition's counts (what travels per partition).

Options: ``--workers N`` (largest number of workers tried), ``--records M`` (records of the
largest size of both parts).
"""

from __future__ import annotations

import math
import os
import pickle
import platform
import time

import numpy as np

from ._report import load_note, markdown_table, pyplot, save_figure, write_results
from .order_alarm import _alarm_network

NAME = "scale-out-batch"
ARGUMENTS = {
    "--workers": {"type": int, "default": None, "help": "largest number of Dask workers tried"},
    "--records": {"type": int, "default": None, "help": "records of the largest size"},
}
N_NOMINAL, N_VALUES, N_NUMERIC, N_CLASSES, K_TRUE = 8, 4, 4, 3, 3
ALARM_CLASS = "CATECHOL"
MAX_PARENTS = 2
REPEATS = 3


# ------------------------------------------------------------------ the data

def fan_partition(index: int, rows: int):
    """Partition ``index`` of the synthetic FAN records: ``n*`` nominal, ``x*`` numeric."""
    import pandas as pd

    g = np.random.default_rng([2012, 2, index])
    tables = np.random.default_rng(7).dirichlet(np.full(N_VALUES, 0.5),
                                                size=(N_CLASSES, K_TRUE, N_NOMINAL))
    means = np.random.default_rng(8).normal(0, 2, size=(N_CLASSES, K_TRUE, N_NUMERIC))
    y = g.integers(N_CLASSES, size=rows)
    h = g.integers(K_TRUE, size=rows)
    u = g.random((rows, N_NOMINAL, 1))
    cum = np.cumsum(tables[y, h], axis=2)  # (rows, features, values)
    nominal = (u > cum).sum(axis=2).clip(max=N_VALUES - 1)
    numeric = means[y, h] + g.normal(size=(rows, N_NUMERIC))
    frame = pd.DataFrame({f"n{j}": pd.Series(np.array(list("abcd"))[nominal[:, j]])
                          for j in range(N_NOMINAL)})
    for j in range(N_NUMERIC):
        frame[f"x{j}"] = numeric[:, j]
    frame["label"] = np.array(["c0", "c1", "c2"])[y]
    return frame


def alarm_partition(index: int, rows: int):
    """Partition ``index`` of the ALARM samples: one column per node (state names)."""
    import warnings

    import pandas as pd

    if rows == 0:
        net = _alarm_network()
        return pd.DataFrame({v: pd.Series(dtype=object) for v in sorted(net.nodes())})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.sampling import BayesianModelSampling

        df = BayesianModelSampling(_alarm_network()).forward_sample(
            size=rows, seed=12_000 + index, show_progress=False)
    return df[sorted(df.columns)].astype(object)


def _sizes(n: int, part_rows: int) -> list:
    return [part_rows] * (n // part_rows) + ([n % part_rows] if n % part_rows else [])


def _in_process(make, sizes):
    import pandas as pd

    return pd.concat([make(i, r) for i, r in enumerate(sizes)], ignore_index=True)


def _best(fn, repeats=REPEATS):
    """Smallest wall time of ``repeats`` calls of ``fn`` and its last result."""
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


# ------------------------------------------------------------------ FAN

def _fan_model():
    from onlinebma.mixture import FAN

    return FAN(max_components=K_TRUE, criterion="bic")


def _fan_start(s):
    """A 3-component start from the engine ``s`` itself (two split starts of the K=1 fit)."""
    from onlinebma.mixture.em import one_component

    p = one_component(s)
    for _ in range(K_TRUE - 1):
        p = s.m_step(s.split_start(p, False), 0.0, None)
    return p


def _fan_iteration(s, p):
    """One EM iteration from ``p``: the E step and the M step; returns the objective."""
    obj, tau = s.e_steps([p], False)[0]
    s.m_steps([tau], 0.0, None)
    return obj


def _fan_single(sizes):
    from onlinebma.mixture.em import EMEngine
    from onlinebma.mixture.layout import design
    from onlinebma.stats.numerics import VAR_SMOOTHING, single_blas_thread

    frame = _in_process(fan_partition, sizes)
    coder = _fan_model()
    coder.learn_many(frame.drop(columns="label"), frame["label"])
    table = coder.data_
    del frame, coder
    with single_blas_thread():
        s = EMEngine(design(table, table, table.y, len(table.classes)), True, 1.0,
                     VAR_SMOOTHING)
        p = _fan_start(s)
        seconds, obj = _best(lambda: _fan_iteration(s, p))
    return seconds, obj, p


def _fan_dask(sizes, workers, p_single):
    import dask.dataframe as dd

    from onlinebma.mixture.distributed_em import partitioned_engine

    with _cluster(workers) as client:
        meta = fan_partition(0, 0)
        ddf = dd.from_map(fan_partition, range(len(sizes)), sizes, meta=meta,
                          enforce_metadata=False)
        _, engine, _ = partitioned_engine(_fan_model(), ddf, "label", 8)
        seconds, obj = _best(lambda: _fan_iteration(engine, p_single))
        rss = max(client.run(_peak_rss_mb).values())
    return seconds, obj, rss


# ------------------------------------------------------------------ orders

def _order_model():
    from onlinebma.order_mcmc import OrderMCMC

    return OrderMCMC(max_parents=MAX_PARENTS, class_name="class")


def _orders_single(sizes):
    """The count tables ``fit`` builds on one machine (the stream state of all records)."""
    from onlinebma.order_mcmc.streaming import LiveState

    frame = _in_process(alarm_partition, sizes)
    model = _order_model()
    model.learn_many(frame.drop(columns=ALARM_CLASS), frame[ALARM_CLASS])
    del frame
    start = time.perf_counter()
    live = LiveState(model, (), restrict=False)
    return time.perf_counter() - start, live.scores


def _orders_dask(sizes, workers):
    import dask.dataframe as dd

    from onlinebma.order_mcmc.distributed_counts import count_tables

    with _cluster(workers) as client:
        client.run(_alarm_network)  # the network read in each worker before the clock starts
        meta = alarm_partition(0, 0)
        ddf = dd.from_map(alarm_partition, range(len(sizes)), sizes, meta=meta,
                          enforce_metadata=False).persist()  # sampled before the clock starts
        from distributed import wait

        wait(ddf)
        start = time.perf_counter()
        _, scores = count_tables(_order_model(), ddf, ALARM_CLASS, 8)
        seconds = time.perf_counter() - start
        rss = max(client.run(_peak_rss_mb).values())
    return seconds, scores, rss


def _same_counts(a, b) -> bool:
    """Whether two count tables hold the same counts, family by family."""
    if not np.array_equal(a.family_nodes, b.family_nodes):
        return False
    return all(np.array_equal(x, y)
               for f in range(len(a.family_nodes))
               for x, y in zip(a.dense_counts(f), b.dense_counts(f)))


# ------------------------------------------------------------------ shared

def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class _cluster:
    """A LocalCluster of ``workers`` single-threaded worker processes and its client."""

    def __init__(self, workers):
        self.workers = workers

    def __enter__(self):
        from distributed import Client, LocalCluster

        self.cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1,
                                    processes=True, dashboard_address=":0")
        self.client = Client(self.cluster)
        self.client.run(lambda: __import__("onlinebma.distributed"))
        return self.client

    def __exit__(self, *exc):
        self.client.close()
        self.cluster.close()


def run(quick: bool = False, out=None, workers=None, records=None) -> dict:
    import pandas as pd

    from onlinebma.progress import progress

    load = [os.getloadavg()[0]]
    max_workers = workers or (2 if quick else max(2, os.cpu_count() or 1))
    fan_sizes = [records] if records else ([20_000] if quick else [100_000, 1_000_000])
    alarm_sizes = [records] if records else ([2_000] if quick else [100_000, 300_000])
    fan_part, alarm_part = (5_000, 1_000) if quick else (100_000, 50_000)

    fan_rows, checks = [], []
    for n in progress(fan_sizes, desc="FAN EM"):
        sizes = _sizes(n, fan_part)
        seconds, obj, p = _fan_single(sizes)
        fan_rows.append({"records": n, "workers": "one process", "s / EM iteration": seconds,
                         "records/s": n / seconds, "peak MB per worker": math.nan})
        for w in range(1, max_workers + 1):
            s_dask, obj_dask, rss = _fan_dask(sizes, w, p)
            checks.append(abs(obj_dask - obj) / abs(obj))
            fan_rows.append({"records": n, "workers": w, "s / EM iteration": s_dask,
                             "records/s": n / s_dask, "peak MB per worker": rss})
    fan = pd.DataFrame(fan_rows)

    order_rows, equal, table_bytes = [], [], 0
    for n in progress(alarm_sizes, desc="order tables"):
        sizes = _sizes(n, alarm_part)
        seconds, single = _orders_single(sizes)
        order_rows.append({"records": n, "workers": "one process", "table seconds": seconds,
                           "records/s": n / seconds, "peak MB per worker": math.nan})
        for w in range(1, max_workers + 1):
            s_dask, scores, rss = _orders_dask(sizes, w)
            equal.append(_same_counts(scores, single))
            order_rows.append({"records": n, "workers": w, "table seconds": s_dask,
                               "records/s": n / s_dask, "peak MB per worker": rss})
        table_bytes = len(pickle.dumps(single))
        n_families, n_cells = len(single.family_nodes), single.n_cells
    orders = pd.DataFrame(order_rows)
    load.append(os.getloadavg()[0])

    def speedups(table, col):
        rows = []
        for n, grp in table.groupby("records", sort=False):
            one_proc = grp.loc[grp["workers"] == "one process", col].iloc[0]
            dask_rows = grp[grp["workers"] != "one process"]
            one = dask_rows.loc[dask_rows["workers"] == 1, col].iloc[0]
            for _, r in dask_rows.iterrows():
                rows.append({"records": n, "workers": r["workers"],
                             "speed-up vs 1 worker": one / r[col],
                             "1 worker / one process": one / one_proc})
        return pd.DataFrame(rows)

    fan_speed = speedups(fan, "s / EM iteration")
    order_speed = speedups(orders, "table seconds")

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, (title, table, col) in zip(axes, [("FAN: one EM iteration", fan, "s / EM iteration"),
                                              ("OrderMCMC: count tables", orders,
                                               "table seconds")]):
        for n, grp in table.groupby("records", sort=False):
            dask_rows = grp[grp["workers"] != "one process"]
            line = ax.plot(dask_rows["workers"], dask_rows[col], marker="o", label=f"{n:,}")
            single = grp.loc[grp["workers"] == "one process", col].iloc[0]
            ax.axhline(single, ls=":", color=line[0].get_color())
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("Dask workers (dotted: one process)")
        ax.set_ylabel("seconds")
        ax.set_yscale("log")
        ax.set_xticks(range(1, max_workers + 1))
        ax.legend(fontsize=7, title="records", title_fontsize=7)
    fig.tight_layout()
    save_figure(fig, NAME, out, "workers")

    two_fan = fan_speed[fan_speed["workers"] == 2]["speed-up vs 1 worker"]
    two_ord = order_speed[order_speed["workers"] == 2]["speed-up vs 1 worker"]
    reading = "\n".join([
        f"- Exact: every distributed EM iteration's objective equals the single process's "
        f"(largest relative difference {max(checks):.1e}); the count tables built on Dask equal "
        f"the single process's cell by cell in {sum(equal)} of {len(equal)} runs.",
        f"- FAN, 2 workers vs 1: {two_fan.min():.2f}–{two_fan.max():.2f}× faster per EM "
        f"iteration; one worker takes {fan_speed['1 worker / one process'].min():.2f}–"
        f"{fan_speed['1 worker / one process'].max():.2f}× the single process's time.",
        f"- OrderMCMC tables, 2 workers vs 1: {two_ord.min():.2f}–{two_ord.max():.2f}×; one "
        f"worker takes {order_speed['1 worker / one process'].min():.2f}–"
        f"{order_speed['1 worker / one process'].max():.2f}× the single process's time (the "
        f"Dask time includes the coding pass over the partitions).",
        f"- What travels per partition for the order tables: its counts, sparse (only the "
        f"cells and configurations that occur), so at most the whole table's: "
        f"{table_bytes / 1e6:.1f} MB pickled with its scores ({n_families:,} candidate "
        f"families, {n_cells:,} stored cells and configurations); a partition of "
        f"{alarm_part:,} ALARM records is {alarm_part * 37 / 1e6:.1f} MB as int8 codes.",
    ])
    text = f"""# Scale-out of the batch learners on Dask (`python -m experiments {NAME}`)

{__doc__.split(chr(10), 1)[1].strip()}

Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()};
{"quick run" if quick else "full run"}; FAN partitions of {fan_part:,} rows, ALARM partitions of
{alarm_part:,} rows; every time is the best of {REPEATS} (FAN) or one run (tables). Load
average (1 min) at the start and end of the run {load[0]:.1f} and {load[1]:.1f}, on
{os.cpu_count()} cores ({load_note(load, os.cpu_count() or 1)}); the ratios come from this
one run.

## FAN: seconds per EM iteration

{markdown_table(fan, floatfmt=".3f")}

{markdown_table(fan_speed, floatfmt=".2f")}

## OrderMCMC: building the count tables (ALARM, `max_parents={MAX_PARENTS}`)

{markdown_table(orders, floatfmt=".2f")}

{markdown_table(order_speed, floatfmt=".2f")}

![time against workers](../figures/{NAME}-workers.png)
"""
    write_results(NAME, out, text, reading=reading)
    return {"tables": {"fan": fan, "fan speed-up": fan_speed, "orders": orders,
                       "orders speed-up": order_speed}}
