"""FAN and FiniteMixture as stream learners: progressive validation with default parameters.

Per stream (house-votes-84, mushroom, River's Phishing): ms/record of predict-then-learn over the
windows 1-250, 250-1,000 and 1,000-end, the mean, the longest single step (the refit stall),
accuracy and log loss (probabilities clipped at 1e-15, as River's ``LogLoss``), beside River's
Hoeffding tree and ``FAN(max_components=1)`` on the same stream in the same run.

Usage (from the root of the checkout whose code is measured)::

    python experiments/scripts/fan_streams.py [--seeds 0 1 2] [--streams phishing ...]

Prints one markdown row per (stream, learner, seed).
"""

from __future__ import annotations

import argparse
import math
import sys
import time

sys.path.insert(0, ".")  # the checkout we are run from, before any installed onlinebma

WINDOWS = ((0, 250), (250, 1000), (1000, None))


def stream(name):
    from river import datasets

    from onlinebma.datasets import UCIDataset

    return datasets.Phishing() if name == "phishing" else UCIDataset(name)


def learners(seed):
    from river import tree

    from onlinebma.mixture import FAN, FiniteMixture

    return {
        "FAN": lambda: FAN(seed=seed),
        "FiniteMixture": lambda: FiniteMixture(seed=seed),
        "FAN(max_components=1)": lambda: FAN(max_components=1),
        "river HoeffdingTree": tree.HoeffdingTreeClassifier,
    }


def run(model, records) -> dict:
    spent = [0.0, 0.0, 0.0]
    counts = [0, 0, 0]
    loss = right = scored = 0
    stall = 0.0
    for i, (x, y) in enumerate(records):
        w = next(j for j, (lo, hi) in enumerate(WINDOWS) if i >= lo and (hi is None or i < hi))
        t = time.perf_counter()
        p = model.predict_proba_one(x)
        model.learn_one(x, y)
        dt = time.perf_counter() - t
        spent[w] += dt
        counts[w] += 1
        stall = max(stall, dt)
        if p:
            loss -= math.log(min(max(p.get(y, 0.0), 1e-15), 1.0))
            right += max(p, key=p.get) == y
            scored += 1
    n = sum(counts)
    return {
        "windows": [1000 * s / c if c else float("nan") for s, c in zip(spent, counts)],
        "mean": 1000 * sum(spent) / n, "stall": stall,
        "accuracy": right / scored, "log loss": loss / scored,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--streams", nargs="+", default=["house-votes-84", "mushroom", "phishing"])
    parser.add_argument("--learners", nargs="+", default=None)
    args = parser.parse_args()
    print("| stream | learner | seed | ms/rec 1-250 | 250-1000 | 1000-end | mean ms/rec "
          "| longest step (s) | accuracy | log loss |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.streams:
        records = list(stream(name))
        for seed in args.seeds:
            for label, make in learners(seed).items():
                if args.learners and label not in args.learners:
                    continue
                r = run(make(), records)
                w = " | ".join(f"{v:.2f}" for v in r["windows"])
                print(f"| {name} | {label} | {seed} | {w} | {r['mean']:.2f} | {r['stall']:.2f} "
                      f"| {r['accuracy']:.3f} | {r['log loss']:.3f} |", flush=True)


if __name__ == "__main__":
    main()
