"""What ModelAveragedTAN learned: the posterior dependency graph of the house votes, drawn.

``python -m experiments dependencies``: ``ModelAveragedTAN()`` learns the bundled
``house-votes-84`` table (435 records, 16 nominal votes, 2 parties) with ``learn_many``, and
:meth:`~onlinebma.tan.ModelAveragedTAN.draw` renders the posterior graph (edges of posterior
above 0.5) with Graphviz's ``dot`` to ``docs/figures/dependencies-house-votes.png``; the page
lists the strongest edges.
"""

from __future__ import annotations

import pathlib
import time

from experiments import _report

NAME = "dependencies"
THRESHOLD = 0.5


def run(quick: bool = False, out: pathlib.Path = pathlib.Path("docs"), show: bool = True) -> dict:
    import pandas as pd

    from onlinebma.datasets import UCIDataset
    from onlinebma.tan import ModelAveragedTAN

    start = time.perf_counter()
    X, y = UCIDataset("house-votes-84").to_frame()
    if quick:
        X, y = X[:100], y[:100]
    model = ModelAveragedTAN()
    model.learn_many(X, y)
    graph = model.draw(threshold=THRESHOLD)
    graph.attr(dpi="160")  # as _report.save_figure saves every figure
    figures = pathlib.Path(out) / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    stem = figures / f"{NAME}-house-votes"
    graph.render(stem, format="png", cleanup=True)
    png = stem.with_suffix(".png")
    from PIL import Image  # matplotlib's dependency: record the resolution dot leaves out

    with Image.open(png) as image:
        image.load()
    image.save(png, dpi=(160, 160))
    edges = sorted(model.edge_posteriors().items(), key=lambda kv: -kv[1])
    table = pd.DataFrame([{"edge": f"{u} – {v}", "posterior": p} for (u, v), p in edges[:10]])
    text = "\n".join([
        f"# {NAME}: the posterior dependency graph of the house votes",
        "",
        ("**Quick run (the first 100 records), not a result.** " if quick else "")
        + f"Command: `python -m experiments {NAME}{' --quick' if quick else ''}` "
        f"({time.perf_counter() - start:.1f} s). `ModelAveragedTAN()` learned "
        f"{len(y)} records of house-votes-84; `draw(threshold={THRESHOLD})` keeps the edges of "
        "posterior probability above it, as wide as their posterior.",
        "",
        f"![house votes]({'../figures/' + png.name})",
        "",
        "The ten most probable edges:",
        "",
        _report.markdown_table(table, floatfmt=".3f"),
    ])
    _report.write_results(NAME, out, text)
    return {"tables": {"edges": table}, "figures": [png]}
