"""The timing harness of the crossover scripts (``python -m experiments.gaussian_paths``,
``python -m experiments.independent_paths``): one call timed down each path of a
:mod:`onlinebma.tuning` threshold in turn, in one process."""

from __future__ import annotations

import time

import numpy as np

from onlinebma import tuning


def best_of(paths: dict, rounds: int, calls: int, clock=time.perf_counter) -> dict:
    """``{label: µs per call}`` of ``{label: (thresholds, call)}``: each ``call()`` timed
    ``calls`` times with its thresholds (``{name: value}`` of :mod:`onlinebma.tuning`) set,
    the labels taking turns for ``rounds`` rounds, the best mean of each kept (the
    thresholds restored after each turn)."""
    best = dict.fromkeys(paths, np.inf)
    for _ in range(rounds):
        for label, (thresholds, call) in paths.items():
            saved = {name: getattr(tuning, name) for name in thresholds}
            for name, value in thresholds.items():
                setattr(tuning, name, value)
            try:
                start = clock()
                for _ in range(calls):
                    call()
                best[label] = min(best[label], (clock() - start) / calls * 1e6)
            finally:
                for name, value in saved.items():
                    setattr(tuning, name, value)
    return best


def print_tables(sections) -> None:
    """Print ``(title, markdown rows)`` sections, a blank line between them."""
    print("\n\n".join(f"{title}\n\n" + "\n".join(rows) for title, rows in sections))
