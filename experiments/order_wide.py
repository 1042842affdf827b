"""OrderMCMC and FixedOrderBMA on wide data: time, memory and error at 35-69 features.

The targets of the wide-data work: at 60+ nominal features and ~2,500 training records
(records sampled with pgmpy from the HEPAR2 network, 70 nodes, class ``Cirrhosis`` with 3
values; all 69 features and a seeded 60-feature subset; 3,190 records, one 80/20 split),
fit + predict of the split within 60 s CPU for each learner, peak memory growth within 1 GB,
test error within 1 point of naive Bayes or better; soybean (35 features, 19 classes, one
shuffled 80/20 split) within 5 s each; ALARM (1,000 sampled training records, 500 test
records, class CATECHOL, the chain of ``order-alarm``) no worse than the full space of parent
sets; the pickle of OrderMCMC after mushroom within 10 MB.

Every (data, learner) cell runs in its own fresh process under a 4 GB address-space cap
(``RLIMIT_AS``), so one cell's memory never counts in another's and a cell that would need more
fails with ``MemoryError`` instead of taking the machine. CPU time is ``time.process_time`` of
``fit`` + ``predict_proba_many``; memory is the growth of the process's peak RSS over the RSS after
the data were loaded. Learners run with their defaults (``max_parents=3``, OrderMCMC:
60,000 iterations, 10,000 burn-in, 10 orders, ``seed=0``) unless the table says otherwise;
``max_candidates=None`` is the full space of parent sets (the tables before candidate parents).
"""

from __future__ import annotations

import math
import multiprocessing
import os
import pathlib
import resource
import time

import numpy as np

from . import _report

NAME = "order-wide"

#: Address-space cap of every cell's process.
CAP_BYTES = 4 * 2**30
FULL = {"hepar_records": 3190, "hepar_features": (60, 69), "alarm_train": 1000,
        "alarm_test": 500, "alarm_iter": 20000, "alarm_burn": 5000, "mcmc": {},
        "mushroom": None, "soybean": True}
QUICK = {"hepar_records": 300, "hepar_features": (20,), "alarm_train": 100, "alarm_test": 40,
         "alarm_iter": 300, "alarm_burn": 100,
         "mcmc": {"n_iter": 300, "burn_in": 100, "n_orders": 3}, "mushroom": 400,
         "soybean": False}
TARGETS = {"hepar_seconds": 60.0, "hepar_memory_mb": 1024.0, "hepar_error_gap": 1.0,
           "soybean_seconds": 5.0, "mushroom_pickle_mb": 10.0}


def _hepar(n_records: int, n_features: int):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.sampling import BayesianModelSampling

        from onlinebma.datasets import load_network

        df = BayesianModelSampling(load_network("hepar2")).forward_sample(
            size=n_records, seed=_report.SEED, show_progress=False)
    df = df.astype(str)
    y = df.pop("Cirrhosis")
    names = sorted(df.columns)
    if n_features < len(names):
        names = sorted(_report.rng(NAME, n_features).choice(names, n_features, replace=False))
    return df[names], y


def _alarm(n_records: int):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.sampling import BayesianModelSampling

        from onlinebma.datasets import load_network

        df = BayesianModelSampling(load_network("alarm")).forward_sample(
            size=n_records, seed=_report.SEED, show_progress=False)
    df = df.astype(str)
    return df.drop(columns="CATECHOL"), df["CATECHOL"]


def _uci(name: str, limit: int | None):
    from onlinebma.datasets import UCIDataset

    X, y = UCIDataset(name).to_frame()
    order = _report.rng(NAME, len(X)).permutation(len(X))[:limit]
    return X.iloc[order].reset_index(drop=True), y.iloc[order].reset_index(drop=True)


def _data(job):
    """``(X_train, y_train, X_test, y_test)`` of a cell."""
    kind = job["data"]
    if kind.startswith("hepar2"):
        X, y = _hepar(job["records"], job["features"])
        n = int(0.8 * len(X))
    elif kind == "alarm":
        X, y = _alarm(job["train"] + job["test"])
        n = job["train"]
    else:
        X, y = _uci(kind, job.get("limit"))
        n = int(0.8 * len(X)) if job.get("split", True) else len(X)
    return X.iloc[:n], y.iloc[:n], X.iloc[n:], y.iloc[n:]


def _learner(name: str, params: dict):
    from onlinebma.naive_bayes import NaiveBayes
    from onlinebma.order_mcmc import FixedOrderBMA, OrderMCMC

    cls = {"NaiveBayes": NaiveBayes, "FixedOrderBMA": FixedOrderBMA, "OrderMCMC": OrderMCMC}
    return cls[name](**params)


def _cell(job, queue):
    """One (data, learner) cell in a fresh process under the address-space cap."""
    import pickle

    resource.setrlimit(resource.RLIMIT_AS, (CAP_BYTES, CAP_BYTES))
    out = {k: job[k] for k in ("data", "learner", "setting")}
    try:
        Xtr, ytr, Xte, yte = _data(job)
        out.update(features=Xtr.shape[1], train=len(Xtr), test=len(Xte))
        base = _rss_mb()
        model = _learner(job["learner"], job["params"])
        t0 = time.process_time()
        if hasattr(model, "fit"):
            model.fit(Xtr, ytr)
        else:
            model.learn_many(Xtr, ytr)
        if len(Xte):
            proba = model.predict_proba_many(Xte)
            out["error %"] = 100 * float(np.mean(proba.idxmax(axis=1).to_numpy()
                                                 != yte.to_numpy()))
        else:
            model.predict_proba_many(Xtr.iloc[:1])
        out["cpu s"] = time.process_time() - t0
        out["peak growth MB"] = _peak_mb() - base
        if job.get("pickle"):
            out["pickle MB"] = len(pickle.dumps(model)) / 2**20
    except MemoryError:
        out["failed"] = "MemoryError under the 4 GB cap"
    except Exception as exc:  # reported in the table, never a hung parent
        out["failed"] = f"{type(exc).__name__}: {exc}"
    queue.put(out)


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run_cell(job) -> dict:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_cell, args=(job, queue))
    proc.start()
    try:
        return queue.get(timeout=3600)
    finally:
        proc.join()


def _jobs(cfg) -> list:
    mcmc = {"seed": 0, **cfg["mcmc"]}
    jobs = []
    for f in cfg["hepar_features"]:
        data = {"data": f"hepar2-{f}", "records": cfg["hepar_records"], "features": f}
        jobs += [{**data, "learner": "NaiveBayes", "setting": "defaults", "params": {}},
                 {**data, "learner": "FixedOrderBMA", "setting": "defaults", "params": {}},
                 {**data, "learner": "OrderMCMC", "setting": "defaults", "params": mcmc}]
    if cfg["soybean"]:
        soy = {"data": "soybean"}
        jobs += [{**soy, "learner": "NaiveBayes", "setting": "defaults", "params": {}},
                 {**soy, "learner": "FixedOrderBMA", "setting": "defaults", "params": {}},
                 {**soy, "learner": "OrderMCMC", "setting": "defaults", "params": mcmc},
                 {**soy, "learner": "FixedOrderBMA", "setting": "max_candidates=None",
                  "params": {"max_candidates": None}}]
    alarm = {"data": "alarm", "train": cfg["alarm_train"], "test": cfg["alarm_test"]}
    chain = {**mcmc, "n_iter": cfg["alarm_iter"], "burn_in": cfg["alarm_burn"]}
    jobs += [{**alarm, "learner": "NaiveBayes", "setting": "defaults", "params": {}},
             {**alarm, "learner": "OrderMCMC", "setting": "order-alarm chain", "params": chain},
             {**alarm, "learner": "OrderMCMC", "setting": "order-alarm chain, "
              "max_candidates=None", "params": {**chain, "max_candidates": None}}]
    jobs.append({"data": "mushroom", "limit": cfg["mushroom"], "split": False,
                 "learner": "OrderMCMC", "setting": "all records, pickled", "params": mcmc,
                 "pickle": True})
    return jobs


def run(quick: bool = False, out: pathlib.Path = pathlib.Path("docs"), show: bool = True) -> dict:
    import pandas as pd

    from onlinebma.progress import progress

    cfg = QUICK if quick else FULL
    load0 = os.getloadavg()
    rows = [_run_cell(job) for job in progress(_jobs(cfg), desc=NAME, enabled=show)]
    load1 = os.getloadavg()
    table = pd.DataFrame(rows)
    for col in ("error %", "cpu s", "peak growth MB", "pickle MB", "failed"):
        if col not in table:
            table[col] = np.nan
    streams = pd.DataFrame(_stream_stalls(quick, show))
    checks = pd.DataFrame(_verdicts(table) + _stall_verdicts(streams),
                          columns=["target", "measured", "met"])
    text = f"""# {NAME}: order learners on wide data

Command: `python -m experiments {NAME}{' --quick' if quick else ''}`
{'(Quick smoke-test run: small samples and short chains; the numbers mean nothing.)' if quick
 else ''}

Protocol: see the module docstring of `experiments/order_wide.py`. Load average (1, 5, 15
min) at the start {', '.join(f'{v:.2f}' for v in load0)}, at the end
{', '.join(f'{v:.2f}' for v in load1)}, on {os.cpu_count()} cores
({_report.load_note([load0[0], load1[0]], os.cpu_count() or 1)}); CPU times are the process's own.

{_report.markdown_table(table, floatfmt=".3g")}

## Streams: the longest record

Progressive validation with default parameters (`predict_proba_one`, then `learn_one`, per
record, wall time of the pair) of the order learners on house-votes-84 and mushroom in file
order, each in its own subprocess, through `experiments.batch_streams.measure` (the
batch-streams experiment's harness, this checkout only); a run stops after
{STREAM_BUDGET["quick" if quick else "full"]:.0f} s (`records` says how far it got). The longest
record includes every rebuild a new candidate parent or value causes.

{_report.markdown_table(streams, floatfmt=".3g")}

## Targets

{_report.markdown_table(checks)}
"""
    _report.write_results(NAME, out, text)
    return {"tables": {"cells": table, "streams": streams, "targets": checks}}


def _verdicts(table) -> list:
    """``(target, measured, met)`` rows computed from the cells."""
    out = []

    def cell(data, learner, setting="defaults"):
        hit = table[(table.data == data) & (table.learner == learner) & (table.setting == setting)]
        return hit.iloc[0] if len(hit) else None

    for data in sorted({d for d in table.data if d.startswith("hepar2")}):
        nb = cell(data, "NaiveBayes")
        for learner in ("FixedOrderBMA", "OrderMCMC"):
            c = cell(data, learner)
            if c is None or isinstance(c["failed"], str):
                out.append((f"{data} {learner} runs", "failed", "NO"))
                continue
            out.append((f"{data} {learner}: fit + predict ≤ 60 s CPU", f"{c['cpu s']:.1f} s",
                        _yes(c["cpu s"] <= TARGETS["hepar_seconds"])))
            out.append((f"{data} {learner}: peak growth ≤ 1 GB",
                        f"{c['peak growth MB']:.0f} MB",
                        _yes(c["peak growth MB"] <= TARGETS["hepar_memory_mb"])))
            gap = c["error %"] - nb["error %"]
            out.append((f"{data} {learner}: error ≤ naive Bayes + 1 point",
                        f"{c['error %']:.2f} vs {nb['error %']:.2f}",
                        _yes(gap <= TARGETS["hepar_error_gap"])))
    for learner in ("FixedOrderBMA", "OrderMCMC"):
        c = cell("soybean", learner)
        if c is not None:
            out.append((f"soybean {learner}: fit + predict ≤ 5 s CPU", f"{c['cpu s']:.2f} s",
                        _yes(c["cpu s"] <= TARGETS["soybean_seconds"])))
    new, full = cell("alarm", "OrderMCMC", "order-alarm chain"), \
        cell("alarm", "OrderMCMC", "order-alarm chain, max_candidates=None")
    if new is not None and full is not None and not isinstance(full["failed"], str):
        out.append(("ALARM: error no worse than the full space",
                    f"{new['error %']:.2f} vs {full['error %']:.2f}",
                    _yes(new["error %"] <= full["error %"])))
        out.append(("ALARM: CPU no more than the full space",
                    f"{new['cpu s']:.1f} s vs {full['cpu s']:.1f} s",
                    _yes(new["cpu s"] <= full["cpu s"])))
    c = cell("mushroom", "OrderMCMC", "all records, pickled")
    if c is not None and not math.isnan(c["pickle MB"]):
        out.append(("mushroom: OrderMCMC pickle ≤ 10 MB", f"{c['pickle MB']:.2f} MB",
                    _yes(c["pickle MB"] <= TARGETS["mushroom_pickle_mb"])))
    return out


#: Seconds one stream run may take.
STREAM_BUDGET = {"full": 300.0, "quick": 20.0}
#: Longest record allowed in a stream (seconds).
STALL_TARGET = 1.0


def _stream_stalls(quick: bool, show: bool) -> list[dict]:
    """The order learners' stream runs of the batch-streams harness, this checkout only."""
    from . import batch_streams

    learners = [lr for lr in batch_streams.LEARNERS if lr.name in ("FixedOrderBMA", "OrderMCMC")]
    return batch_streams.measure(
        learners, ("house-votes-84", "mushroom"), ("after",),
        batch_streams.QUICK_N if quick else None, STREAM_BUDGET["quick" if quick else "full"],
        show=show)


def _stall_verdicts(streams) -> list:
    return [(f"{r.learner} on {r.stream}: no record over {STALL_TARGET:.0f} s",
             f"{r['longest stall (s)']:.2f} s", _yes(r["longest stall (s)"] <= STALL_TARGET))
            for _, r in streams.iterrows()]


def _yes(ok) -> str:
    return "yes" if bool(ok) else "NO"
