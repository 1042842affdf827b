"""What a record costs the independent Gaussians: plain Python floats against numpy.

Not an experiment of ``python -m experiments`` (no ``run``): a benchmark script, run as
``python -m experiments.independent_paths`` (about a minute), printing two markdown tables
of microseconds per call, the two paths of each timed in turn in one process (the best of
:data:`ROUNDS` interleaved rounds, process time):

- the Student t's of a record under the independent rows of
  :class:`onlinebma.tan.gaussian.GaussianStatistics` (``R`` rates, ``K`` classes, ``d``
  features), by the cells ``R K d`` that ``NARROW_INDEPENDENT_CELLS`` bounds;
- :meth:`onlinebma.stats.normal_wishart.MomentStatistics.add` of a record of one class per
  rate, by the cells that ``NARROW_MOMENT_UPDATE_CELLS`` bounds.

The thresholds are where the columns cross.
"""

from __future__ import annotations

import functools
import time

import numpy as np

from experiments._paths import best_of, print_tables
from onlinebma.stats.normal_wishart import MomentStatistics
from onlinebma.tan.gaussian import INDEPENDENT_GAUSSIANS, GaussianStatistics

#: Interleaved rounds of each path; the best mean is kept.
ROUNDS = 7
CALLS = 200
#: ``(rates, classes, features)``.
SHAPES = [(1, 2, 3), (1, 2, 10), (5, 2, 3), (2, 3, 8), (3, 3, 6), (5, 2, 6), (5, 2, 8),
          (5, 2, 10), (5, 3, 20)]


def _plain_and_numpy(name: str, call) -> dict:
    """``{"plain": µs, "numpy": µs}`` per call of ``call()``, the threshold ``name`` set to
    take each path in turn (process time)."""
    return best_of({"plain": ({name: 10**9}, call), "numpy": ({name: -1}, call)}, ROUNDS,
                   CALLS, clock=time.process_time)


def predictive_table(rng) -> list:
    rows = ["| R | K | d | cells | plain floats µs | numpy µs |",
            "|---:|---:|---:|---:|---:|---:|"]
    for r, k, d in SHAPES:
        g = GaussianStatistics(np.linspace(0.95, 1.0, r), [INDEPENDENT_GAUSSIANS] * r)
        for x in rng.normal(size=(100, d)):
            g.learn([(f"f{j}", float(v)) for j, v in enumerate(x)], int(rng.integers(k)), k)
        x = g.vector([(f"f{j}", float(v)) for j, v in enumerate(rng.normal(size=d))])
        t = _plain_and_numpy("NARROW_INDEPENDENT_CELLS", functools.partial(g.log_densities, x, k))
        rows.append(f"| {r} | {k} | {d} | {r * k * d} | {t['plain']:.0f} | "
                    f"{t['numpy']:.0f} |")
    return rows


def _add_to_copy(stats: MomentStatistics, x, w) -> None:
    stats.copy().add(x, w)


def update_table(rng) -> list:
    rows = ["| R | K | d | cells | plain floats µs | numpy µs |",
            "|---:|---:|---:|---:|---:|---:|"]
    for r, k, d in SHAPES:
        stats = MomentStatistics(d, (r, k), np.linspace(0.95, 1.0, r)[:, None])
        for x in rng.normal(size=(50, d)):
            w = np.zeros((r, k))
            w[:, rng.integers(k)] = 1.0
            stats.add(x, w)
        x, w = rng.normal(size=d), np.zeros((r, k))
        w[:, -1] = 1.0
        t = _plain_and_numpy("NARROW_MOMENT_UPDATE_CELLS",
                             functools.partial(_add_to_copy, stats, x, w))
        rows.append(f"| {r} | {k} | {d} | {r * k * d} | {t['plain']:.0f} | "
                    f"{t['numpy']:.0f} |")
    return rows


def main() -> None:
    rng = np.random.default_rng(0)
    print_tables([("Student t's of a record (GaussianStatistics, independent rows)",
                   predictive_table(rng)),
                  ("MomentStatistics.add of a record", update_table(rng))])


if __name__ == "__main__":
    main()
