"""What a sum over spanning trees costs (docs/results/spanning-cost.md).

Times :func:`onlinebma.stats.spanning.log_tree_sum` in microseconds per call on stacks of
``R x K`` graphs of ``n`` nodes (random complete graphs, log weights N(0, 1), so both paths
apply): the log path (``path="log"``, any spread), the float path (``path="float"``, spreads
within :func:`~onlinebma.stats.spanning.float_path_is_safe`) and ``"auto"`` (the safety check
plus the float path). ``R = 1`` is the per-record caller (one record, one graph per class),
``R = 1000`` the batch caller. Best of several repetitions, each at least ~20 ms of calls.
Also times :func:`~onlinebma.stats.spanning.edge_probabilities` per graph.

Run: ``python -m experiments.scripts.spanning_cost`` (about a minute).
"""

from __future__ import annotations

import os
import time

import numpy as np

from onlinebma.stats.spanning import edge_probabilities, log_tree_sum

NS = (5, 10, 20, 21, 40, 60)
KS = (2, 3, 10)
RS = (1, 1000)
PATHS = ("log", "float", "auto")


def per_call_us(fn, budget: float = 0.02, repeats: int = 3) -> float:
    """Best over ``repeats`` of the mean time of ``fn()`` over ~``budget`` seconds."""
    start = time.perf_counter()
    fn()
    once = time.perf_counter() - start
    calls = max(1, int(budget / max(once, 1e-7)))
    best = once
    for _ in range(repeats if once < 1.0 else 0):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def graphs(rng, shape, n):
    lw = rng.normal(0.0, 1.0, (*shape, n, n))
    return (lw + np.swapaxes(lw, -1, -2)) / 2


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"load average before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f}")
    print("| R | K | n | log µs | float µs | auto µs | log/auto |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in RS:
        for k in KS:
            if r > 1 and k > 3:
                continue  # R x K = 10,000 graphs of 60 nodes: seconds per call
            for n in NS:
                a = graphs(rng, (r, k), n)
                t = {p: per_call_us(lambda p=p, a=a: log_tree_sum(a, path=p)) for p in PATHS}
                print(f"| {r} | {k} | {n} | {t['log']:.0f} | {t['float']:.0f} | "
                      f"{t['auto']:.0f} | {t['log'] / t['auto']:.1f} |", flush=True)
    print()
    print("| n | edge_probabilities µs (one graph) | log_tree_sum µs (one graph) |")
    print("|---:|---:|---:|")
    for n in NS:
        a = graphs(rng, (), n)
        print(f"| {n} | {per_call_us(lambda a=a: edge_probabilities(a)):.0f} | "
              f"{per_call_us(lambda a=a: log_tree_sum(a)):.0f} |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
