"""Which learner when: the eleven learners with their default parameters on the same streams.

Progressive validation (predict each record, then learn it) of every learner of the library,
side by side in one run, on three bundled streams:

- ``house-votes-84``: 435 records, 16 nominal features with missing values, 2 classes
  (shuffled once with a fixed seed: the file is not in time order);
- ``mushroom``: the first 1,000 records of a fixed shuffle, 22 nominal features, 2 classes;
- ``Phishing``: River's bundled phishing stream, 1,250 records, 9 numeric features, 2 classes.

For each learner and stream: accuracy; log loss (natural log, the true label's probability
floored at 1e-15); the log loss of the online class prior ((n_k + 1) / (n + K): what a learner
that ignores the features scores, so a learner above it does worse than ignoring them); the
expected calibration error (ECE: 10 equal-width bins of the top-label probability); mean and
longest time of one predict-then-learn step; the pickled size of the learner at the end. A
record whose label has not been seen before cannot be predicted by any learner: it counts as an
error in accuracy and is left out of every log loss, the prior's included (River's
``CrossEntropy`` scores it 0 instead). Figures: cumulative accuracy and log loss against records
seen, per stream, and a reliability diagram of each learner over all three streams.
"""

from __future__ import annotations

import math
import pathlib
import pickle
import time

import numpy as np

from experiments import _report
from onlinebma.progress import progress

NAME = "guide"
LEARNERS = ["NaiveBayes", "ModelAveragedNB", "BMANB", "ModelAveragedTAN", "TAN", "AODE",
            "ISA", "FAN", "FiniteMixture", "FixedOrderBMA", "OrderMCMC"]
FLOOR = 1e-15


def make(name: str, nominal):
    """A learner of the library with its default parameters (``nominal_attributes`` given)."""
    from onlinebma import isa, mixture, naive_bayes, order_mcmc, tan

    for module in (naive_bayes, tan, isa, mixture, order_mcmc):
        if hasattr(module, name):
            return getattr(module, name)(nominal_attributes=list(nominal) or None)
    raise ValueError(f"unknown learner {name!r}")


def streams(quick: bool) -> dict:
    """``{name: (records, labels, nominal feature names)}`` as lists, in stream order."""
    from river import datasets

    from onlinebma.datasets import UCIDataset

    out = {}
    for name, n in (("house-votes-84", 435), ("mushroom", 1000)):
        ds = UCIDataset(name)
        rows = list(ds)
        order = _report.rng(NAME, len(out)).permutation(len(rows))[:n]
        out[name] = ([rows[i][0] for i in order], [rows[i][1] for i in order],
                     ds.nominal_attributes)
    phishing = list(datasets.Phishing())
    out["Phishing"] = ([x for x, _ in phishing], [y for _, y in phishing], [])
    if quick:
        out = {k: (X[:60], y[:60], nom) for k, (X, y, nom) in out.items()}
    return out


def ece(conf: np.ndarray, correct: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error of top-label probabilities ``conf`` (equal-width bins)."""
    idx = np.minimum((conf * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        sel = idx == b
        if sel.any():
            total += sel.mean() * abs(conf[sel].mean() - correct[sel].mean())
    return float(total)


def _seen_before(labels) -> np.ndarray:
    """Whether each record's label occurred earlier in the stream (only those are scored)."""
    seen, out = set(), []
    for y in labels:
        out.append(y in seen)
        seen.add(y)
    return np.array(out)


def _prior_log_loss(labels) -> float:
    """Log loss of the online class prior (n_k + 1) / (n + K) on the records it can score."""
    counts, losses = {}, []
    for n, y in enumerate(labels):
        if y in counts:
            losses.append(-math.log((counts[y] + 1) / (n + len(counts))))
        counts[y] = counts.get(y, 0) + 1
    return float(np.mean(losses))


def evaluate(model, records, labels) -> dict:
    """Progressive validation of one learner: per-record traces and end-of-stream measures."""
    logp, correct, conf, steps = [], [], [], []
    for x, y in zip(records, labels):
        start = time.perf_counter()
        proba = model.predict_proba_one(x)
        model.learn_one(x, y)
        steps.append(time.perf_counter() - start)
        p = proba.get(y, 0.0)
        logp.append(math.log(max(p, FLOOR)))
        if proba:
            top = max(proba, key=proba.get)
            correct.append(top == y)
            conf.append(proba[top])
        else:  # nothing learned yet: no prediction
            correct.append(False)
            conf.append(0.0)
    return {"logp": np.array(logp), "correct": np.array(correct, dtype=float),
            "conf": np.array(conf), "steps": np.array(steps),
            "bytes": len(pickle.dumps(model))}


def run(quick: bool = False, out: pathlib.Path = pathlib.Path("docs"), show: bool = True) -> dict:
    import pandas as pd

    data = streams(quick)
    plan = [(s, name) for s in data for name in LEARNERS]
    traces, rows = {}, []
    for stream, name in progress(plan, desc=NAME, enabled=show):
        X, y, nominal = data[stream]
        t = evaluate(make(name, nominal), X, y)
        traces[stream, name] = t
        rows.append({
            "stream": stream, "learner": name, "accuracy": t["correct"].mean(),
            "log loss": -t["logp"][_seen_before(y)].mean(), "prior log loss": _prior_log_loss(y),
            "ECE": ece(t["conf"], t["correct"]), "ms/record": 1e3 * t["steps"].mean(),
            "longest step (s)": t["steps"].max(), "pickled kB": t["bytes"] / 1e3,
        })
    table = pd.DataFrame(rows)
    _figures(traces, data, out)

    best = []
    for stream, grp in table.groupby("stream", sort=False):
        acc = grp.loc[grp["accuracy"].idxmax()]
        ll = grp.loc[grp["log loss"].idxmin()]
        beats = grp.loc[grp["log loss"] < grp["prior log loss"], "learner"].tolist()
        best.append(f"- {stream}: best accuracy {acc['learner']} ({acc['accuracy']:.3f}), best "
                    f"log loss {ll['learner']} ({ll['log loss']:.3f}); better than the class "
                    f"prior in log loss: {', '.join(beats) if beats else 'none'}.")
    text = f"""# Which learner when (`python -m experiments {NAME}`)

{__doc__.split(chr(10), 1)[1].strip()}

{"Quick run (first 60 records of each stream)." if quick else "Full run."} The machine has 2
cores and was shared with other work, so times are indicative; they come from one run.

<!-- --8<-- [start:table] -->
{_report.markdown_table(table, floatfmt=".3f")}
<!-- --8<-- [end:table] -->

![accuracy and log loss against records](../figures/{NAME}-curves.png)

![reliability](../figures/{NAME}-reliability.png)
"""
    _report.write_results(NAME, out, text, reading="\n".join(best))
    return {"tables": {"guide": table}}


def _figures(traces, data, out):
    plt = _report.pyplot()
    fig, axes = plt.subplots(2, len(data), figsize=(4 * len(data), 6), squeeze=False)
    for j, stream in enumerate(data):
        for i, name in enumerate(LEARNERS):
            t = traces[stream, name]
            n = np.arange(1, len(t["logp"]) + 1)
            style = {"color": f"C{i % 10}", "lw": 1.2, "ls": ("-", "--", ":")[i // 4]}
            axes[0, j].plot(n, np.cumsum(t["correct"]) / n, label=name, **style)
            scored = _seen_before(data[stream][1])
            axes[1, j].plot(n, -np.cumsum(np.where(scored, t["logp"], 0)) / np.cumsum(scored)
                            .clip(1), **style)
        axes[0, j].set_title(stream)
        axes[1, j].set_xlabel("records seen")
        axes[1, j].set_ylim(0, 1.5)
    axes[0, 0].set_ylabel("accuracy so far")
    axes[1, 0].set_ylabel("log loss so far")
    axes[0, 0].legend(fontsize=7)
    _report.save_figure(fig, NAME, out, "curves")

    rows = -(-len(LEARNERS) // 4)
    fig, axes = plt.subplots(rows, 4, figsize=(12, 3 * rows), sharex=True, sharey=True,
                             layout="constrained")
    edges = np.linspace(0, 1, 11)
    for ax, name in zip(axes.flat, LEARNERS):
        conf = np.concatenate([traces[s, name]["conf"] for s in data])
        corr = np.concatenate([traces[s, name]["correct"] for s in data])
        idx = np.minimum((conf * 10).astype(int), 9)
        centres = [conf[idx == b].mean() for b in range(10) if (idx == b).any()]
        rates = [corr[idx == b].mean() for b in range(10) if (idx == b).any()]
        ax.plot([0, 1], [0, 1], ":", color="grey")
        ax.plot(centres, rates, "o-", ms=3)
        ax.set_title(f"{name} (ECE {ece(conf, corr):.3f})", fontsize=9)
        ax.set_xticks(edges[::2])
    for ax in axes.flat[len(LEARNERS):]:
        ax.set_visible(False)
    fig.supxlabel("predicted probability of the top label")
    fig.supylabel("observed frequency")
    _report.save_figure(fig, NAME, out, "reliability")
