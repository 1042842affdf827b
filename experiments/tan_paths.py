"""Which elimination path a tree sum takes, and what each costs (docs/results/spanning-cost.md).

Not an experiment of ``python -m experiments`` (no ``run``): a benchmark script, run as
``python -m experiments.tan_paths`` (about a minute), printing markdown tables of the
microseconds per :func:`onlinebma.stats.spanning.log_tree_sum` call on stacks of ``B``
graphs of ``m`` nodes, side by side in one process:

- the crossover between the plain-Python log path and numpy (per-record stacks);
- the row-scaled float64 and extended-precision paths against the log path, on graphs like
  the classifier's after many records (a strong pair per row, weak edges, roots at 0);
- the spanning-tree basis (:mod:`onlinebma.stats.tree_basis`) against the plain-Python and
  the numpy eliminations on a record's stacks of chain-like forest graphs (the crossovers of
  :mod:`onlinebma.tan.record_sums`), and on stacks of several learners' graphs one tree for
  all against a tree per learner in one call;
- the drift streams (``--auto``, docs/tan.md *Defaults and why*): records/s of
  ``ModelAveragedTAN(decay="auto")`` and ``decay=0.99``, predict then learn, on the first
  ``STREAM_RECORDS`` records of each stream of ``python -m experiments drift``, each learner
  in a process of its own (``--auto Elec2 Agrawal`` for some streams only);
- narrow records (``--narrow``, docs/tan.md *Speed*): ``ModelAveragedTAN``'s plain-Python
  terms against the array path by gathered cells (``tuning.NARROW_CELLS``), the closed sums
  of 2–3 features graph by graph against numpy over a stack
  (``tuning.TINY_ARRAY_GRAPHS``), and ``log_tree_sums_python``'s shifted-float branch
  against its log branch.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from onlinebma import tuning
from onlinebma.stats import elimination, tree_basis
from onlinebma.stats.spanning import log_tree_sum, scaled_path_is_safe


def per_call_us(fn, budget: float = 0.05) -> float:
    """Best of 3 means over ~``budget`` seconds of calls."""
    start = time.perf_counter()
    fn()
    calls = max(1, int(budget / max(time.perf_counter() - start, 1e-7)))
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def symmetric(rng, b, m, scale):
    a = rng.normal(0.0, scale, (b, m, m))
    return (a + a.transpose(0, 2, 1)) / 2


def classifier_like(rng, b, m, strong):
    """Forest graphs: node 0 the root (weight 1 to every feature), feature pairs at -200
    nats but one strong pair per feature at ``strong`` nats."""
    a = rng.uniform(-220.0, -180.0, (b, m, m))
    for i in range(1, m, 2):
        j = min(i + 1, m - 1)
        a[:, i, j] = strong + rng.normal(0, 5, b)
    a = np.triu(a, 1)
    a = a + a.transpose(0, 2, 1)
    a[:, 0, :] = a[:, :, 0] = 0.0
    return a


def crossover_table(rng) -> str:
    rows = ["| B | m | B m³ | Python log path µs | numpy row-scaled µs | auto takes |",
            "|---:|---:|---:|---:|---:|:---|"]
    for b in (2, 4, 15):
        for m in (4, 6, 8, 11, 14, 22):
            a = symmetric(rng, b, m, 20.0)
            py = per_call_us(lambda a=a: elimination.log_tree_sums_python(a.copy()))
            num = per_call_us(lambda a=a: log_tree_sum(a, path="scaled"))
            small = b * m ** 3 <= tuning.SMALL_WORK + tuning.SMALL_WORK_PER_NODE * m
            rows.append(f"| {b} | {m} | {b * m ** 3} | {py:.0f} | {num:.0f} | "
                        f"{'Python' if small else 'numpy'} |")
    return "\n".join(rows)


def paths_table(rng) -> str:
    rows = ["| B | m | strong pair (nats) | float64 safe | extended safe | log µs | "
            "row-scaled µs | log / row-scaled |", "|---:|---:|---:|:---|:---|---:|---:|---:|"]
    for b in (4, 3000):
        for m in (21, 61):
            if b * m * m > 4e6:
                continue
            for strong in (400.0, 2000.0):
                a = classifier_like(rng, b, m, strong)
                f64 = bool(scaled_path_is_safe(a).all())
                ext = bool(scaled_path_is_safe(a, np.longdouble).all())
                t_log = per_call_us(lambda a=a: log_tree_sum(a, path="log"), 0.2)
                t_row = per_call_us(lambda a=a: log_tree_sum(a, path="scaled"), 0.2)
                rows.append(f"| {b} | {m} | {strong:.0f} | {f64} | {ext} | {t_log:.0f} | "
                            f"{t_row:.0f} | {t_log / t_row:.1f} |")
    return "\n".join(rows)


def basis_table(rng) -> str:
    """µs per stack of ``B`` forest graphs of ``g`` nodes (:func:`classifier_like`: strong
    pairs at 300 nats, weak ones at -200, roots at 0; a few nats of per-graph noise on the
    feature pairs like a record's log Q):
    the tree basis (from the noiseless graph's maximum spanning tree, entries below e^-60
    left out) against the plain-Python and the numpy row-scaled eliminations."""
    rows = ["| B | g | B g³ | Python µs | numpy row-scaled µs | tree basis µs | certified |",
            "|---:|---:|---:|---:|---:|---:|:---|"]
    for b in (2, 3, 4):
        for g in (5, 7, 9, 11, 15, 21, 25):
            w = classifier_like(rng, 1, g, 300.0)[0]
            i, j = np.triu_indices(g, 1)
            noise = rng.normal(0.0, 2.0, (b, len(i))) * (i > 0)
            ev = w[i, j] + noise
            basis = tree_basis.TreeBasis(tree_basis.maximum_spanning_tree(w), i, j, w[i, j])
            graphs = np.zeros((b, g, g))
            graphs[:, i, j] = ev
            graphs = graphs + graphs.transpose(0, 2, 1)
            py = per_call_us(lambda a=graphs: elimination.log_tree_sums_python(a.copy()))
            num = per_call_us(lambda a=graphs: log_tree_sum(a, path="scaled"))
            tb = per_call_us(lambda e=ev, t=basis: tree_basis.tree_basis_sums(t, e))
            ok = bool(tree_basis.tree_basis_sums(basis, ev)[1].all())
            rows.append(f"| {b} | {g} | {b * g ** 3} | {py:.0f} | {num:.0f} | {tb:.0f} | "
                        f"{ok} |")
    return "\n".join(rows)


def members_table(rng) -> str:
    """µs per stack of ``R`` learners' ``K`` forest graphs of ``g`` nodes, learners whose
    strong pairs differ (``decay="auto"``'s members forget at different rates): the tree
    basis of the first learner's maximum spanning tree for every graph, against one tree
    per learner in the same call (:class:`onlinebma.stats.tree_basis.TreeBases`), and the
    numpy elimination; "certified" counts the graphs that passed the bound."""
    rows = ["| R × K | g | one tree: µs | certified | a tree per learner: µs | certified | "
            "numpy row-scaled µs |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r, k in ((5, 2), (5, 3)):
        for g in (9, 11, 15):
            i, j = np.triu_indices(g, 1)
            ws = []
            for _ in range(r):  # each learner: its own chain of strong pairs
                w = classifier_like(rng, 1, g, 300.0)[0]
                perm = np.r_[0, 1 + rng.permutation(g - 1)]
                ws.append(w[np.ix_(perm, perm)])
            tree = np.repeat(np.arange(r), k)
            ev = np.stack([ws[t][i, j] for t in tree]) + rng.normal(0.0, 2.0, (r * k, len(i))) * (
                i > 0)
            bases = [tree_basis.TreeBasis(tree_basis.maximum_spanning_tree(w), i, j, w[i, j])
                     for w in ws]
            stack = tree_basis.TreeBases(bases)
            graphs = np.zeros((r * k, g, g))
            graphs[:, i, j] = ev
            graphs = graphs + graphs.transpose(0, 2, 1)
            one = per_call_us(lambda e=ev, t=bases[0]: tree_basis.tree_basis_sums(t, e))
            each = per_call_us(lambda e=ev, t=stack, c=tree: tree_basis.tree_basis_sums(t, e, c))
            num = per_call_us(lambda a=graphs: log_tree_sum(a, path="scaled"))
            ok_one = int(tree_basis.tree_basis_sums(bases[0], ev)[1].sum())
            ok_each = int(tree_basis.tree_basis_sums(stack, ev, tree)[1].sum())
            rows.append(f"| {r} × {k} | {g} | {one:.0f} | {ok_one} / {r * k} | {each:.0f} | "
                        f"{ok_each} / {r * k} | {num:.0f} |")
    return "\n".join(rows)


def narrow_records(rng, n, p, k):
    """``n`` records of ``p`` nominal features of 3 values (the first two equal 70 % of the
    time) and ``k`` classes."""
    out = []
    for _ in range(n):
        x = {f"f{j}": f"v{int(rng.integers(3))}" for j in range(p)}
        if rng.random() < 0.7:
            x["f1"] = x["f0"]
        out.append((x, int(rng.integers(k))))
    return out


def narrow_table(rng) -> str:
    """µs per predict + learn of ``ModelAveragedTAN`` (1,000 records after 200 of warm-up)
    with the plain-Python terms of :mod:`onlinebma.tan.narrow` always or never taken."""
    from onlinebma.tan import ModelAveragedTAN

    rows = ["| features | classes | decay | gathered cells | array µs | plain Python µs |",
            "|---:|---:|:---|---:|---:|---:|"]
    keep = tuning.NARROW_CELLS
    for p, k, decay in [(3, 2, 0.99), (4, 2, 0.99), (5, 2, 0.99), (7, 2, 0.99), (3, 5, 0.99),
                        (3, 2, "auto"), (4, 2, "auto")]:
        data = narrow_records(rng, 1200, p, k)
        us = []
        for cells in (-1, 10 ** 9):
            tuning.NARROW_CELLS = cells  # one member or decay="auto"'s stack
            model = ModelAveragedTAN(decay=decay)
            for x, y in data[:200]:
                model.predict_proba_one(x)
                model.learn_one(x, y)
            start = time.perf_counter()
            for x, y in data[200:]:
                model.predict_proba_one(x)
                model.learn_one(x, y)
            us.append((time.perf_counter() - start) / 1000 * 1e6)
        members = 5 if decay == "auto" else 1
        cells = members * k * (1 + 2 * p + 2 * p * (p - 1))
        rows.append(f"| {p} | {k} | {decay} | {cells} | {us[0]:.0f} | {us[1]:.0f} |")
    tuning.NARROW_CELLS = keep
    return "\n".join(rows)


def tiny_table(rng) -> str:
    """µs per stack of ``B`` graphs of 3 features (forests): the closed sums graph by graph
    in Python against numpy over the stack, and the Python elimination's shifted-float
    branch against its log branch per graph of ``g`` nodes."""
    from onlinebma.tan import record_sums

    rows = ["| B | closed sums, Python µs | closed sums, numpy µs |", "|---:|---:|---:|"]
    sums = record_sums.RecordTreeSums(True, 0.0)
    keep = tuning.TINY_ARRAY_GRAPHS
    for b in (2, 4, 6, 10, 15):
        lw, q = rng.normal(0, 30, 3), rng.normal(0, 1, (b, 3))
        us = []
        for graphs in (10 ** 9, 0):
            tuning.TINY_ARRAY_GRAPHS = graphs
            us.append(per_call_us(lambda lw=lw, q=q: sums(b"tiny", 3, lw, q, 0)))
        rows.append(f"| {b} | {us[0]:.1f} | {us[1]:.1f} |")
    tuning.TINY_ARRAY_GRAPHS = keep
    rows += ["", "| g | shifted floats µs / graph | log branch µs / graph |", "|---:|---:|---:|"]
    limit = elimination.python_float_nats
    for g in (4, 7, 9, 11):
        a = symmetric(rng, 10, g, 30.0)
        us = []
        for nats in (limit, lambda m: -np.inf):
            elimination.python_float_nats = nats
            us.append(per_call_us(lambda a=a: elimination.log_tree_sums_python(a)) / 10)
        rows.append(f"| {g} | {us[0]:.1f} | {us[1]:.1f} |")
    elimination.python_float_nats = limit
    return "\n".join(rows)


STREAM_RECORDS = 3000
STREAM_DECAYS = ("auto", 0.99)


def stream_records(name: str, n: int = STREAM_RECORDS):
    """The first ``n`` records ``[(x, y)]`` of the drift stream ``name`` and its nominal
    attributes."""
    import itertools

    from experiments import drift
    from onlinebma.datasets import Elec2

    if name == "Elec2":
        return list(itertools.islice(Elec2(), n)), []
    stream = drift.synthetic(n)[name]
    return stream.data, stream.nominal


def stream_speed(name: str, decay) -> float:
    """Records/s of ``ModelAveragedTAN(decay=decay)`` predicting then learning the first
    :data:`STREAM_RECORDS` records of ``name`` (reading the stream not timed)."""
    from onlinebma.tan import ModelAveragedTAN

    data, nominal = stream_records(name)
    model = ModelAveragedTAN(nominal_attributes=nominal, decay=decay)
    start = time.perf_counter()
    for x, y in data:
        model.predict_proba_one(x)
        model.learn_one(x, y)
    return len(data) / (time.perf_counter() - start)


def streams_table(names) -> str:
    """Records/s of each decay on each stream, every run in a fresh process (one learner's
    caches and allocations do not warm the next)."""
    import subprocess

    rows = ["| stream | " + " | ".join(f"decay={d} records/s" for d in STREAM_DECAYS)
            + " |", "|:---|" + "---:|" * len(STREAM_DECAYS)]
    for name in names:
        speeds = []
        for decay in STREAM_DECAYS:
            code = ("from experiments.tan_paths import stream_speed; "
                    f"print(stream_speed({name!r}, {decay!r}))")
            out = subprocess.run([sys.executable, "-c", code], check=True,
                                 capture_output=True, text=True).stdout
            speeds.append(float(out.split()[-1]))
        rows.append(f"| {name} | " + " | ".join(f"{v:,.0f}" for v in speeds) + " |")
    return "\n".join(rows)


def main() -> None:
    rng = np.random.default_rng(0)
    load = os.getloadavg()[0]
    if "--auto" in sys.argv:
        names = sys.argv[sys.argv.index("--auto") + 1:] or [
            "Elec2", "SEA", "STAGGER", "Agrawal", "Hyperplane", "RandomRBFDrift"]
        table = streams_table(names)
        print(f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after; "
              f"{STREAM_RECORDS} records, predict + learn\n")
        print(table)
        return
    if "--narrow" in sys.argv:
        narrow, tiny = narrow_table(rng), tiny_table(rng)
        print(f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after\n")
        print(narrow, "\n")
        print(tiny)
        return
    cross = crossover_table(rng)
    paths = paths_table(rng)
    basis = basis_table(rng)
    members = members_table(rng)
    print(f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after\n")
    print(cross, "\n")
    print(paths, "\n")
    print(basis, "\n")
    print(members)


if __name__ == "__main__":
    main()
