"""Per-record speed of the naive Bayes family against River as records widen (issue 17).

Progressive validation (``predict_proba_one`` then ``learn_one``) on synthetic streams, side by
side in this one process, records per second of CPU time (``time.process_time``), median of 3
interleaved rounds, each learner from scratch on the same records:

- **Nominal grid**: N nominal features × K classes, 10 values per feature (a feature's value
  follows the class with probability 0.3), against River's ``MultinomialNB`` on the same
  records one-hot encoded (``{"f3=v2": 1}``), its natural input.
- **Numeric grid**: N numeric features × K classes (class-dependent Gaussian means), against
  River's ``GaussianNB``.

The stream length shrinks with N so that every cell takes about the same time. The issue's
target is ModelAveragedNB and BMANB at least 1.5 x River in every cell. This benchmark covers a
reduced grid (the machine is shared by several developers: N in {5, 20, 100, 500}, K in {2, 10},
10 values), not the issue's full 4 x 3 x 3 grid.
"""

from __future__ import annotations

import pathlib
import statistics

import numpy as np

from ._report import markdown_table, pyplot, rng, save_figure, write_results
from .bench_nb import stream_rate

NAME = "wide"


def nominal_stream(n, n_features, n_classes, n_values=10, seed=0):
    g = rng(NAME, 1, n_features, n_classes, seed)
    y = g.integers(n_classes, size=n)
    X = g.integers(n_values, size=(n, n_features))
    follow = g.random((n, n_features)) < 0.3
    X = np.where(follow, (y[:, None] + np.arange(n_features)) % n_values, X)
    named = [{f"f{j}": f"v{v}" for j, v in enumerate(row)} for row in X.tolist()]
    onehot = [{f"f{j}=v{v}": 1 for j, v in enumerate(row)} for row in X.tolist()]
    return named, onehot, [int(v) for v in y]


def numeric_stream(n, n_features, n_classes, seed=0):
    g = rng(NAME, 2, n_features, n_classes, seed)
    y = g.integers(n_classes, size=n)
    shift = g.normal(size=(n_classes, n_features)) * 0.5
    X = g.normal(size=(n, n_features)) + shift[y]
    return [{f"z{j}": v for j, v in enumerate(row)} for row in X.tolist()], [int(v) for v in y]


def _cells(kind, widths, classes, budget):
    from river import naive_bayes as river_nb

    from onlinebma.naive_bayes import BMANB, ModelAveragedNB

    rows = []
    for n_features in widths:
        for n_classes in classes:
            n = max(200, budget // n_features)
            if kind == "nominal":
                named, onehot, labels = nominal_stream(n, n_features, n_classes)
                peer, make_peer, peer_records = ("River MultinomialNB (one-hot)",
                                                 river_nb.MultinomialNB, onehot)
            else:
                named, labels = numeric_stream(n, n_features, n_classes)
                peer, make_peer, peer_records = "River GaussianNB", river_nb.GaussianNB, named
            learners = {peer: (make_peer, peer_records),
                        "ModelAveragedNB": (ModelAveragedNB, named), "BMANB": (BMANB, named)}
            rates = {name: [] for name in learners}
            for _ in range(3):
                for name, (make, records) in learners.items():
                    rates[name].append(stream_rate(make(), records, labels))
            base = statistics.median(rates[peer])
            for name in ("ModelAveragedNB", "BMANB"):
                rows.append({"features": n_features, "classes": n_classes, "learner": name,
                             "records": n, "records/s": round(statistics.median(rates[name])),
                             f"x {peer}": statistics.median(rates[name]) / base})
    return rows


def run(quick: bool = False, out: pathlib.Path = pathlib.Path("docs")) -> dict:
    import pandas as pd

    from onlinebma.progress import progress

    widths = (5, 100) if quick else (5, 20, 100, 500)
    classes = (2,) if quick else (2, 10)
    budget = 20_000 if quick else 60_000
    tables = {}
    for kind in progress(("nominal", "numeric"), desc="grids"):
        tables[kind] = pd.DataFrame(_cells(kind, widths, classes, budget))

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, (kind, df) in zip(axes, tables.items()):
        ratio = [c for c in df.columns if c.startswith("x ")][0]
        for (name, k), part in df.groupby(["learner", "classes"]):
            ax.plot(part["features"], part[ratio], marker="o", label=f"{name}, K = {k}")
        ax.axhline(1.5, color="grey", ls="--", lw=1, label="target 1.5x")
        ax.axhline(1.0, color="black", lw=0.5)
        ax.set_xscale("log")
        ax.set_xlabel("features N")
        ax.set_title(f"{kind}: speed-up against {ratio[2:]}", fontsize=9)
    axes[0].set_ylabel("records/s ratio (CPU time)")
    axes[1].legend(fontsize=7)
    save_figure(fig, NAME, out, "speedup")

    text = f"""# Wide records (`python -m experiments {NAME}`)

{__doc__.split(chr(10), 1)[1].strip()}

Run: {"quick" if quick else "full"}; the machine was shared with other developers' jobs, so
absolute records/s are low and noisy; the ratios come from interleaved runs in one process.

![speed-up against N](../figures/{NAME}-speedup.png)

## Nominal features

{markdown_table(tables["nominal"], floatfmt=".2f")}

## Numeric features

{markdown_table(tables["numeric"], floatfmt=".2f")}
"""
    write_results(NAME, out, text)
    return {"tables": tables}
