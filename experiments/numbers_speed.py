"""The numbers benchmark's speed part alone: ModelAveragedTAN against River's ARF.

``python -m experiments numbers-speed [--quick]`` times what the speed part of
``python -m experiments numbers`` times (:func:`experiments.numbers.stream_speed` and
:func:`~experiments.numbers.numeric_speed`, on :func:`~experiments.numbers.speed_data`), in a
few minutes instead of twenty, so that speed work can be judged on a quiet machine without
rerunning the accuracy parts; it writes ``docs/results/numbers-speed.md`` with the speed
targets.
"""

from __future__ import annotations

import os
import pathlib
import time

from experiments import _report, numbers

NAME = "numbers-speed"


def run(quick: bool = False, out: pathlib.Path = pathlib.Path("docs"), show: bool = True) -> dict:
    """Time the streams and the 20-feature stream; writes ``out/results/numbers-speed.md``."""
    import pandas as pd

    load = [os.getloadavg()[0]]
    start = time.perf_counter()
    speed_df = numbers.stream_speed(numbers.speed_data(quick), quick, show)
    numeric_df = numbers.numeric_speed(quick)
    load.append(os.getloadavg()[0])
    elapsed = time.perf_counter() - start
    yes = {True: "yes", False: "**no**"}
    target_tab = pd.DataFrame([{"target": t, "measured": m, "met": yes[bool(ok)]}
                               for t, m, ok in numbers.speed_targets(speed_df, numeric_df)])
    wide = speed_df.pivot(index="model", columns="stream", values="× ARF").reset_index()
    n = numbers.QUICK_SPEED_N if quick else numbers.SPEED_N
    text = [
        f"# {NAME}: ModelAveragedTAN's records/s against River's ARF",
        "",
        ("**Quick smoke-test run, not a result.** " if quick else "")
        + f"Command: `python -m experiments {NAME}{' --quick' if quick else ''}` "
        f"({elapsed / 60:.1f} min; load average {load[0]:.1f} at the start, {load[1]:.1f} at "
        "the end, on a 2-core machine: compare ratios within this run). The speed part of "
        "`python -m experiments numbers`, alone.",
        "",
        "## Targets", "", _report.markdown_table(target_tab), "",
        "## Streams", "",
        f"records/s of predict + learn, each learner alone over the first {n:,} records of "
        f"each stream (a fresh model each pass, best of "
        f"{1 if quick else numbers.SPEED_PASSES}), as multiples of ARF's:", "",
        _report.markdown_table(wide, floatfmt=".2f"), "",
        "records/s alone:", "",
        _report.markdown_table(speed_df[["stream", "model", "records/s alone"]],
                               floatfmt=".0f"), "",
        "## 20 numeric features", "",
        "Three Gaussian classes, predict + learn from an empty model:", "",
        _report.markdown_table(numeric_df, floatfmt=".0f"), "",
    ]
    _report.write_results(NAME, out, "\n".join(text))
    return {"tables": {"speed": speed_df, "numeric speed": numeric_df, "targets": target_tab},
            "figures": [], "seconds": elapsed}
