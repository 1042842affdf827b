"""``python -m onlinebma demo``: progressive validation of the naive Bayes family on a stream.

Each learner predicts every record before learning it (River's progressive validation), over
the bundled ``adult`` census data by default (32,561 records, 14 features, 6 numeric). The
final table gives accuracy, log loss, expected calibration error and records per second
(learner time only: metrics and reading the file are not counted), beside the class prior,
the learner that ignores every feature: a log loss above the prior's means the probabilities
are overconfident.
"""

from __future__ import annotations

import argparse
import sys
import time


def demo(dataset: str = "adult", limit: int | None = None, progress_bar: bool = True) -> list[dict]:
    from river import metrics

    from .datasets import UCIDataset
    from .metrics import ExpectedCalibrationError
    from .naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
    from .progress import progress

    data = UCIDataset(dataset)
    records = list(data.take(limit) if limit else data)
    nominal = data.nominal_attributes
    learners = {
        "class prior": ClassPrior(),
        "NaiveBayes": NaiveBayes(nominal_attributes=nominal),
        "ModelAveragedNB": ModelAveragedNB(nominal_attributes=nominal),
        "BMANB": BMANB(nominal_attributes=nominal),
    }
    results = []
    for name, model in learners.items():
        accuracy, log_loss, seconds = metrics.Accuracy(), metrics.CrossEntropy(), 0.0
        calibration = ExpectedCalibrationError()
        for x, y in progress(records, desc=f"{name:>16}", enabled=progress_bar, leave=True):
            start = time.perf_counter()
            proba = model.predict_proba_one(x)
            model.learn_one(x, y)
            seconds += time.perf_counter() - start
            if proba:
                accuracy.update(y, max(proba, key=proba.get))
                log_loss.update(y, proba)
                calibration.update(y, proba)
        results.append({
            "learner": name,
            "accuracy": accuracy.get(),
            "log loss": log_loss.get(),
            "ECE": calibration.get(),
            "records/s": len(records) / seconds,
        })
        if hasattr(model, "feature_posteriors"):
            top = sorted(model.feature_posteriors().items(), key=lambda kv: -kv[1])
            results[-1]["features used (P > 0.5)"] = sum(p > 0.5 for _, p in top)
    return results


class ClassPrior:
    """The baseline that ignores every feature: P(y) = (n_y + 1) / (n + K) over labels seen."""

    def __init__(self):
        self.counts: dict = {}

    def predict_proba_one(self, x: dict) -> dict:
        n, k = sum(self.counts.values()), len(self.counts)
        return {y: (c + 1) / (n + k) for y, c in self.counts.items()}

    def learn_one(self, x: dict, y) -> None:
        self.counts[y] = self.counts.get(y, 0) + 1


def _print_table(rows: list[dict], dataset: str, n: int) -> None:
    print(f"\nProgressive validation on {dataset} ({n:,} records): "
          f"predict, then learn, each record.\n")
    cols = ["learner", "accuracy", "log loss", "ECE", "records/s", "features used (P > 0.5)"]
    print(f"{cols[0]:<16} {cols[1]:>9} {cols[2]:>9} {cols[3]:>7} {cols[4]:>10} {cols[5]:>24}")
    for r in rows:
        used = r.get(cols[5], "none" if r["learner"] == "class prior" else "all")
        print(f"{r['learner']:<16} {r['accuracy']:>9.4f} {r['log loss']:>9.4f} {r['ECE']:>7.4f} "
              f"{r['records/s']:>10,.0f} {used!s:>24}")
    print("\nLog loss: lower is better, and a learner above the class prior's is overconfident; "
          "ECE: how far\nthe predicted probabilities are from how often they come true "
          "(0 = calibrated).")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m onlinebma",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="progressive validation of the naive Bayes family")
    d.add_argument("--dataset", default="adult", help="a bundled dataset (default: adult)")
    d.add_argument("--limit", type=int, default=None, help="use only the first N records")
    d.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    rows = demo(args.dataset, args.limit, progress_bar=not args.no_progress)
    from .datasets import UCIDataset

    n = args.limit or UCIDataset(args.dataset).n_samples
    _print_table(rows, args.dataset, min(n, UCIDataset(args.dataset).n_samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
