"""Speed of the naive Bayes family against River's MultinomialNB and scikit-learn's CategoricalNB.

Two measurements, each run side by side in this one process on the same data:

1. **Streaming.** Records per second of ``predict_proba_one`` followed by ``learn_one`` (a
   progressive-validation step) over one 20,000-record categorical stream: 20 nominal
   features with 4 values each (5 of them informative), 3 classes. River's MultinomialNB gets
   the same records one-hot encoded (``{"f3=v2": 1}``), its natural input. Each learner runs
   the stream 3 times from scratch and keeps its fastest run, the others' runs interleaved.
2. **Batch.** Seconds for ``learn_many`` on 10^6 × 20 integer-coded records (a DataFrame,
   every column named in ``nominal_attributes``) against ``CategoricalNB.fit`` on the same
   numpy array, best of 3.

Targets (issue 2): ModelAveragedNB and BMANB at least 1.5 x River MultinomialNB's records per
second; ``learn_many`` within 2 x of CategoricalNB.
"""

from __future__ import annotations

import pathlib
import platform
import time

import numpy as np

from ._report import markdown_table, rng, write_results

NAME = "bench-nb"


def categorical_stream(n: int, n_features: int = 20, n_values: int = 4, seed: int = 0):
    """Integer-coded records with 5 informative features, and their labels (3 classes)."""
    g = rng(NAME, seed)
    y = g.integers(3, size=n)
    X = g.integers(n_values, size=(n, n_features))
    informative = g.random((n, 5)) < 0.6
    X[:, :5] = np.where(informative, (y[:, None] + np.arange(5)) % n_values, X[:, :5])
    return X, y


def _stream_rate(model, records, labels) -> float:
    start = time.perf_counter()
    for x, y in zip(records, labels):
        model.predict_proba_one(x)
        model.learn_one(x, y)
    return len(labels) / (time.perf_counter() - start)


def run(quick: bool = False, out: pathlib.Path = pathlib.Path("docs")) -> dict:
    import pandas as pd
    from river import naive_bayes as river_nb
    from sklearn.naive_bayes import CategoricalNB

    from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
    from onlinebma.progress import progress

    n_stream, n_batch, repeats = (2_000, 100_000, 2) if quick else (20_000, 1_000_000, 3)

    X, y = categorical_stream(n_stream)
    labels = [int(v) for v in y]
    named = [{f"f{j}": f"v{v}" for j, v in enumerate(row)} for row in X]
    onehot = [{f"f{j}=v{v}": 1 for j, v in enumerate(row)} for row in X]
    learners = {
        "River MultinomialNB (one-hot)": (lambda: river_nb.MultinomialNB(), onehot),
        "NaiveBayes": (NaiveBayes, named),
        "ModelAveragedNB": (ModelAveragedNB, named),
        "BMANB": (BMANB, named),
    }
    best = {name: 0.0 for name in learners}
    for _ in progress(range(repeats), desc="streaming runs"):
        for name, (make, records) in learners.items():
            best[name] = max(best[name], _stream_rate(make(), records, labels))
    base = best["River MultinomialNB (one-hot)"]
    streaming = pd.DataFrame({
        "learner": list(best),
        "records/s": [round(v) for v in best.values()],
        "x River MultinomialNB": [v / base for v in best.values()],
    })

    Xb, yb = categorical_stream(n_batch, seed=1)
    frame = pd.DataFrame(Xb, columns=[f"f{j}" for j in range(Xb.shape[1])])
    target = pd.Series(yb)
    nominal = list(frame.columns)
    batch_times = {"CategoricalNB.fit": [], "NaiveBayes.learn_many": [],
                   "ModelAveragedNB.learn_many": [], "BMANB.learn_many": []}
    for _ in progress(range(repeats), desc="batch runs"):
        start = time.perf_counter()
        CategoricalNB().fit(Xb, yb)
        batch_times["CategoricalNB.fit"].append(time.perf_counter() - start)
        for cls in (NaiveBayes, ModelAveragedNB, BMANB):
            model = cls(nominal_attributes=nominal)
            start = time.perf_counter()
            model.learn_many(frame, target)
            batch_times[f"{cls.__name__}.learn_many"].append(time.perf_counter() - start)
    sk = min(batch_times["CategoricalNB.fit"])
    batch = pd.DataFrame({
        "method": list(batch_times),
        "seconds (best)": [min(v) for v in batch_times.values()],
        "x CategoricalNB": [min(v) / sk for v in batch_times.values()],
    })

    text = f"""# Naive Bayes speed (`python -m experiments {NAME}`)

{__doc__.split(chr(10), 1)[1].strip()}

Machine: {platform.machine()}, Python {platform.python_version()}; {"quick run" if quick else "full run"}.

## Streaming: {n_stream:,} records, predict_proba_one + learn_one

{markdown_table(streaming, floatfmt=".2f")}

## Batch: learn_many on {n_batch:,} x {Xb.shape[1]} records

{markdown_table(batch, floatfmt=".3f")}
"""
    write_results(NAME, out, text)
    return {"tables": {"streaming": streaming, "batch": batch}}
