"""Accuracy of ``ModelAveragedTAN(numeric="Gaussian forests")`` beside ``"Gaussian"``, the
default and the default's members with Gaussian forests added (docs/tan.md, *Numeric
representations*): progressive validation on the first records of three of the drift
benchmark's streams, and ``learn_many`` + ``predict_proba_many`` on 5 stratified folds of
three tables (``experiments/numbers.py``'s protocol). Prints one markdown table of log loss /
accuracy; no timing (the members' speed is the numbers benchmark's).

Run: ``python -m experiments.gaussian_forests [records]`` (default 5,000 records a stream).
"""

from __future__ import annotations

import sys

from experiments import drift, guide, numbers
from onlinebma.tan import ModelAveragedTAN
from onlinebma.tan.model_averaged import auto_representations

STREAMS = ("Hyperplane", "SEA", "RandomRBFDrift")
TABLES = ("iris", "wine", "pima")


def choices(nominal) -> dict:
    """``{label: a fresh learner}`` makers of the compared learners."""
    default = auto_representations(1.0)
    return {
        "Gaussian forests": lambda: ModelAveragedTAN(nominal_attributes=nominal,
                                                     numeric="Gaussian forests"),
        "Gaussian": lambda: ModelAveragedTAN(nominal_attributes=nominal, numeric="Gaussian"),
        "default": lambda: ModelAveragedTAN(nominal_attributes=nominal),
        "default + Gaussian forests": lambda: ModelAveragedTAN(
            nominal_attributes=nominal, numeric=(*default, "Gaussian forests")),
    }


def run(n_records: int = 5000) -> str:
    rows = {}
    data = drift.synthetic(n_records)
    for name in STREAMS:
        stream = data[name]
        records, labels = zip(*stream.data)
        for label, make in choices(list(stream.nominal)).items():
            trace = guide.evaluate(make(), records, labels)  # predict, then learn
            rows.setdefault(name, {})[label] = (-trace["logp"].mean(), trace["correct"].mean())
    original = numbers.table_learners
    try:
        for name in TABLES:
            numbers.table_learners = lambda nominal: choices(nominal)
            result = numbers.evaluate_table(name, numbers.TABLES.index(name), False)
            rows[name] = {label: (result["log loss"][label], result["accuracy"][label])
                          for label in choices([])}
    finally:
        numbers.table_learners = original
    labels = list(choices([]))
    lines = ["| data | " + " | ".join(f"`{label}`" for label in labels) + " |",
             "|---|" + "---|" * len(labels)]
    for name, scores in rows.items():
        lines.append(f"| {name} | " + " | ".join(f"{scores[label][0]:.3f} / "
                                                  f"{scores[label][1]:.3f}"
                                                  for label in labels) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(run(int(sys.argv[1]) if len(sys.argv) > 1 else 5000))
