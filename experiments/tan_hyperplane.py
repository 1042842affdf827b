"""Why ``ModelAveragedTAN(decay="auto")`` trails the Hoeffding adaptive tree on Hyperplane
(docs/tan.md, *Numeric features*): its settings, cut points known in advance, and averages
over shifted cut points, side by side with River's tree and Gaussian naive Bayes.

Not an experiment of ``python -m experiments`` (no ``run``): a benchmark script, run as
``python -m experiments.tan_hyperplane`` (about a minute), printing one markdown table.

The stream is the tan experiment's: the drift benchmark's Hyperplane (10 numeric features
uniform on [0, 1], a rotating linear boundary), its first ``RECORDS`` records, progressive
validation (predict, then learn, every record). Accuracy over all records and over three
stretches: the numeric warm-up (records 0–200, where the learner's features are still
missing), 200–2,500 and 2,500–5,000; and µs per record (predict + learn).

Besides the learner's settings, three rows cut the features at known points instead of
learning them: the quantiles of the uniform distribution, ``k / 5`` (nominal features for the
learner, so no warm-up): what the best possible five cut points give. "Shifted per member"
gives each of the five rate members of ``decay="auto"`` its own cut points, member ``r``
shifted by ``r / 5`` of an interval, and averages them with ``decay="auto"``'s own dynamic
model averaging (:class:`~onlinebma.forgetting.RateWeights`): the members' step
functions then interleave. The members hold counts of their own anyway, so inside the
learner's shared state this would add little arithmetic per record; here they are five
separate learners, whose µs say nothing about that. "3 shifted learners" averages three
``decay="auto"`` learners with equal weights, cut at ``(k + g / 3) / 5``: three times the
work of one.
"""

from __future__ import annotations

import bisect
import math
import os
import time

from experiments import drift
from onlinebma.forgetting import AUTO_GRID, RateWeights
from onlinebma.tan import ModelAveragedTAN

RECORDS = 5000
STRETCHES = ((0, 200), (200, 2500), (2500, RECORDS))
N_BINS = 5


def uniform_cuts(shift: float) -> list:
    """Cut points of ``N_BINS`` intervals of [0, 1], moved right by ``shift`` of one."""
    return [(k + shift) / N_BINS for k in range(1, N_BINS)] + ([1.0] if shift else [])


def cut(x: dict, cuts: list) -> dict:
    return {f: bisect.bisect_right(cuts, v) for f, v in x.items()}


class CutLearner:
    """A learner on records cut at fixed points (nominal interval codes)."""

    def __init__(self, model, cuts):
        self.model, self.cuts = model, cuts

    def predict_proba_one(self, x):
        return self.model.predict_proba_one(cut(x, self.cuts))

    def learn_one(self, x, y):
        self.model.learn_one(cut(x, self.cuts), y)


class EqualAverage:
    """The mean of the members' probabilities."""

    def __init__(self, members):
        self.members = members

    def predict_proba_one(self, x):
        out: dict = {}
        for m in self.members:
            for label, p in m.predict_proba_one(x).items():
                out[label] = out.get(label, 0.0) + p / len(self.members)
        return out

    def learn_one(self, x, y):
        for m in self.members:
            m.learn_one(x, y)


class RateAverage(RateWeights):
    """``decay="auto"``'s dynamic model average (:class:`RateWeights`) over members at the
    rates ``AUTO_GRID``."""

    def __init__(self, members):
        self.members = members
        self.log_weights = [-math.log(len(members))] * len(members)
        self._last = None

    def predict_proba_one(self, x):
        probas = [m.predict_proba_one(x) for m in self.members]
        self._last = probas
        out: dict = {}
        for proba, lw in zip(probas, self.log_weights):
            for label, p in proba.items():
                out[label] = out.get(label, 0.0) + math.exp(lw) * p
        return out

    def learn_one(self, x, y):
        probas = self._last
        self._reweigh([p[y] for p in probas] if probas and y in probas[0] else None)
        for m in self.members:
            m.learn_one(x, y)


def learners(stream) -> dict:
    from river import naive_bayes

    features = list(stream.data[0][0])

    def nominal(**kw):
        return ModelAveragedTAN(nominal_attributes=features, **kw)

    return {
        "river HoeffdingAdaptiveTree": lambda: drift.make_learner(
            "river HoeffdingAdaptiveTree", stream),
        "river GaussianNB": naive_bayes.GaussianNB,
        'ModelAveragedTAN(decay="auto")': lambda: ModelAveragedTAN(decay="auto"),
        "… 3 intervals": lambda: ModelAveragedTAN(decay="auto", numeric="3 intervals"),
        "… 8 intervals": lambda: ModelAveragedTAN(decay="auto", numeric="8 intervals"),
        "… sample_size=30": lambda: ModelAveragedTAN(decay="auto", sample_size=30),
        "… ess=1": lambda: ModelAveragedTAN(decay="auto", ess=1.0),
        "… ess=30": lambda: ModelAveragedTAN(decay="auto", ess=30.0),
        "… edge_prior=0.01": lambda: ModelAveragedTAN(decay="auto", edge_prior=0.01),
        "known cut points k/5, auto": lambda: CutLearner(nominal(decay="auto"),
                                                         uniform_cuts(0.0)),
        "known cut points, shifted per member": lambda: RateAverage(
            [CutLearner(nominal(decay=rate), uniform_cuts(r / N_BINS))
             for r, rate in enumerate(AUTO_GRID)]),
        "known cut points, 3 shifted learners": lambda: EqualAverage(
            [CutLearner(nominal(decay="auto"), uniform_cuts(g / 3)) for g in range(3)]),
    }


def progressive(model, data) -> tuple[list, float]:
    correct = []
    start = time.perf_counter()
    for x, y in data:
        p = model.predict_proba_one(x)
        correct.append(bool(p) and max(p, key=p.get) == y)
        model.learn_one(x, y)
    return correct, (time.perf_counter() - start) / len(data) * 1e6


def main() -> None:
    stream = drift.synthetic(RECORDS)["Hyperplane"]
    load = os.getloadavg()[0]
    print(f"Hyperplane, first {RECORDS} records; load average {load:.1f} before\n")
    heads = [f"{a}–{b}" for a, b in STRETCHES]
    print("| learner | accuracy | " + " | ".join(heads) + " | µs / record |")
    print("|:---|---:|" + "---:|" * len(heads) + "---:|")
    for name, make in learners(stream).items():
        correct, us = progressive(make(), stream.data)
        parts = [sum(correct[a:b]) / (b - a) for a, b in STRETCHES]
        print(f"| {name} | "
              f"{sum(correct) / len(correct):.3f} | "
              + " | ".join(f"{p:.3f}" for p in parts) + f" | {us:.0f} |", flush=True)
    print(f"\nload average {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
