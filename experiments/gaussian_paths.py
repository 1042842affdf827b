"""What a record costs the Gaussian members: each path of FullStatistics timed against the others.

Not an experiment of ``python -m experiments`` (no ``run``): a benchmark script, run as
``python -m experiments.gaussian_paths`` (about a minute), printing two markdown tables of
microseconds per call of :class:`onlinebma.stats.normal_wishart.FullStatistics`, the two
paths of each timed in turn in one process (the best of :data:`ROUNDS` interleaved rounds):

- ``log_predictive`` of a complete record with ``F`` factors of ``d`` features (the
  Student t of every class and rate), plain floats against the array path, by the work
  ``F (d^3 + 125)`` that ``NARROW_PREDICTIVE_WORK`` bounds;
- ``add`` of a record reaching ``F`` factors (one class per rate), LAPACK's
  triangle-plus-rows QR (``dtpqrt``) of each factor against numpy's QR of the stacked
  factors, by the number of features ``d`` that ``TRIANGLE_UPDATE_FEATURES`` bounds (from 18
  features the ``dtpqrt`` column can take milliseconds a call: a threaded step of scipy's
  OpenBLAS).

The thresholds are where the columns cross (docs/tan.md, *Speed*).
"""

from __future__ import annotations

import functools

import numpy as np

from experiments._paths import best_of, print_tables
from onlinebma.stats.normal_wishart import FullStatistics, NormalWishartPrior

#: Interleaved rounds of each path; the best mean is kept.
ROUNDS = 15
CALLS = 50
PREDICTIVE_SHAPES = [(2, 2), (2, 3), (4, 3), (10, 3), (2, 6), (5, 6), (10, 6), (2, 10),
                     (3, 20)]
# (1, 18): the millisecond cliff of dtpqrt (seconds for this row; wider ones take longer)
UPDATE_SHAPES = [(1, 1), (5, 2), (2, 4), (5, 6), (5, 7), (10, 6), (5, 10), (5, 16), (1, 17),
                 (1, 18)]


def _statistics(rng, factors: int, d: int) -> FullStatistics:
    """Two classes per rate, ``factors // 2`` rates (or one class of ``factors`` rates),
    after 100 records."""
    shape = (factors, 1) if factors % 2 else (factors // 2, 2)
    stats = FullStatistics(d, shape, np.linspace(0.9, 0.999, shape[0])[:, None])
    for x in rng.normal(size=(100, d)):
        w = np.zeros(shape)
        w[:, rng.integers(shape[1])] = 1.0
        stats.add(x, w)
    return stats


def predictive_table(rng) -> list:
    rows = ["| F | d | F (d³ + 125) | plain floats µs | numpy µs |", "|---:|---:|---:|---:|---:|"]
    for factors, d in PREDICTIVE_SHAPES:
        stats, prior, x = _statistics(rng, factors, d), NormalWishartPrior(d), rng.normal(size=d)
        call = functools.partial(stats.log_predictive, prior, x)
        t = best_of({p: ({"NARROW_PREDICTIVE_WORK": v}, call)
                      for p, v in (("python", 10**12), ("numpy", -1))}, ROUNDS, CALLS)
        rows.append(f"| {factors} | {d} | {factors * (d ** 3 + 125)} | {t['python']:.0f} | "
                    f"{t['numpy']:.0f} |")
    return rows


def update_table(rng) -> list:
    rows = ["| F | d | F d² | dtpqrt µs | numpy µs |", "|---:|---:|---:|---:|---:|"]
    paths = {"dtpqrt": {"TRIANGLE_UPDATE_FEATURES": 10**12},
             "numpy": {"TRIANGLE_UPDATE_FEATURES": -1}}
    for factors, d in UPDATE_SHAPES:
        stats = _statistics(rng, 2 * factors, d)  # two classes per rate
        w = np.zeros(stats.shape)
        w[:, 0] = 1.0  # the record reaches one class of every rate
        record = rng.normal(size=d)
        t = best_of({p: (v, functools.partial(stats.copy().add, record, w))
                     for p, v in paths.items()}, ROUNDS, CALLS)
        rows.append(f"| {factors} | {d} | {factors * d * d} | {t['dtpqrt']:.0f} | "
                    f"{t['numpy']:.0f} |")
    return rows


def main() -> None:
    rng = np.random.default_rng(0)
    print_tables([("log_predictive of a complete record (µs per call):", predictive_table(rng)),
                  ("add of a record reaching F factors (µs per call):", update_table(rng))])


if __name__ == "__main__":
    main()
