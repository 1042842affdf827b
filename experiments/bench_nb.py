"""Speed of the naive Bayes family against River's MultinomialNB and scikit-learn's CategoricalNB.

Two measurements, each run side by side in this one process on the same data:

1. **Streaming.** Records per second of ``predict_proba_one`` followed by ``learn_one`` (a
   progressive-validation step) over one 20,000-record categorical stream: 20 nominal
   features with 4 values each (5 of them informative), 3 classes. River's MultinomialNB gets
   the same records one-hot encoded (``{"f3=v2": 1}``), its natural input. Each learner runs
   the stream 3 times from scratch and keeps its fastest run, the others' runs interleaved.
   All speeds and times are CPU time (``time.process_time``).
2. **Batch.** Seconds for ``learn_many`` on 10^6 × 20 integer-coded records (a DataFrame,
   every column named in ``nominal_attributes``) against ``CategoricalNB.fit`` on the same
   numpy array, best of 3.

3. **Forgetting and wide vocabularies**. Records per second of the same
   progressive-validation step when each record observes 20 nominal features (4 values, 3
   classes) drawn from a vocabulary of 20 or of 10,000 feature names, without forgetting
   (``decay=1``) and with ``decay=0.99`` (ModelAveragedNB also ``structure_decay=0.99``),
   best of 3 interleaved runs, each on a copy of a learner already warmed by one stream
   of the same length (so the times are the steady-state cost per record; the table also
   gives the cold ratio, a stream from scratch, where most features and values are new).
   At 0.99 the statistics renormalise every ~8,800 records, so the O(all statistics)
   renormalisation is inside the timing.
4. **Feature posteriors on a drifting stream**: ModelAveragedNB without forgetting, with
   ``decay=structure_decay=0.99`` and with ``decay="auto"`` on a stream whose informative
   feature changes halfway (figure ``bench-nb-forgetting.png``).

5. **BDeu with an ID-like feature**: CPU seconds for ``learn_one`` on
   streams whose feature ``id`` takes a new value in every record (plus one binary feature, 3
   classes), ModelAveragedNB with K2 and with BDeu.

Targets: ModelAveragedNB and BMANB at least 1.5 x River MultinomialNB's records per
second; ``learn_many`` within 2 x of CategoricalNB. Forgetting: records/s with the 10,000-name
vocabulary within 20% of the 20-name one (ratio >= 0.80), and ``decay<1`` within 25% of
``decay=1`` (ratio >= 0.75).
"""

from __future__ import annotations

import os
import pathlib
import platform
import time

import numpy as np

from ._report import load_note, markdown_table, rng, write_results

NAME = "bench-nb"


def categorical_stream(n: int, n_features: int = 20, n_values: int = 4, seed: int = 0):
    """Integer-coded records with 5 informative features, and their labels (3 classes)."""
    g = rng(NAME, seed)
    y = g.integers(3, size=n)
    X = g.integers(n_values, size=(n, n_features))
    informative = g.random((n, 5)) < 0.6
    X[:, :5] = np.where(informative, (y[:, None] + np.arange(5)) % n_values, X[:, :5])
    return X, y


def stream_rate(model, records, labels) -> float:
    """Records per second of CPU time (robust to other processes on a shared machine)."""
    start = time.process_time()
    for x, y in zip(records, labels):
        model.predict_proba_one(x)
        model.learn_one(x, y)
    return len(labels) / (time.process_time() - start)


def wide_stream(n: int, vocabulary: int, observed: int = 20, seed: int = 0):
    """Records observing ``observed`` of ``vocabulary`` nominal features (4 values, 3 classes;
    a feature's value follows the class with probability 0.5), and their labels."""
    g = rng(NAME, 2, vocabulary, seed)
    y = g.integers(3, size=n)
    rows = []
    for i in range(n):
        names = g.choice(vocabulary, size=observed, replace=False) if vocabulary > observed \
            else np.arange(vocabulary)
        follow = g.random(observed) < 0.5
        values = np.where(follow, (y[i] + names) % 4, g.integers(4, size=observed))
        rows.append({f"w{j}": f"v{v}" for j, v in zip(names.tolist(), values.tolist())})
    return rows, [int(v) for v in y]


def forgetting_speed(n: int, repeats: int):
    """Section 3: records/s by learner, vocabulary and decay, with the issue's two ratios.

    Each learner first runs one stream of ``n`` records from scratch ("cold": most features
    and values are new), then ``repeats`` copies of that warm learner run a second stream
    from the same distribution ("warm": the steady-state cost per record), interleaved."""
    import copy

    import pandas as pd

    from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
    from onlinebma.progress import progress

    streams = {v: (wide_stream(n, v), wide_stream(n, v, seed=1)) for v in (20, 10_000, 50_000)}
    makers = {
        ("NaiveBayes", 1.0): NaiveBayes,
        ("NaiveBayes", 0.99): lambda: NaiveBayes(decay=0.99),
        ("ModelAveragedNB", 1.0): ModelAveragedNB,
        ("ModelAveragedNB", 0.99): lambda: ModelAveragedNB(decay=0.99, structure_decay=0.99),
        ("BMANB", 1.0): BMANB,
        ("BMANB", 0.99): lambda: BMANB(decay=0.99),
    }
    cold, warm, models = {}, {}, {}
    for (name, lam), make in progress(makers.items(), desc="forgetting, cold runs"):
        for v, ((records, labels), _) in streams.items():
            models[name, lam, v] = model = make()
            cold[name, lam, v] = stream_rate(model, records, labels)
    for _ in progress(range(repeats), desc="forgetting, warm runs"):
        for key, model in models.items():
            records, labels = streams[key[2]][1]
            warm[key] = max(warm.get(key, 0.0), stream_rate(copy.deepcopy(model), records,
                                                             labels))
    rows = []
    for name, lam in makers:
        w20, w10k = warm[name, lam, 20], warm[name, lam, 10_000]
        rows.append({"learner": name, "decay": lam,
                     "warm records/s, 20 names": round(w20),
                     "warm records/s, 10,000 names": round(w10k),
                     "warm 10,000 / 20 (target >= 0.80)": w10k / w20,
                     "cold 10,000 / 20": cold[name, lam, 10_000] / cold[name, lam, 20],
                     "warm 50,000 / 10,000": warm[name, lam, 50_000] / w10k,
                     "warm decay / no decay, 20 names (target >= 0.75)": w20 / warm[name, 1.0, 20],
                     "warm decay / no decay, 10,000 names (target >= 0.75)":
                         w10k / warm[name, 1.0, 10_000]})
    return pd.DataFrame(rows)


def drifting_stream(n: int, seed: int = 0):
    """Feature ``a`` follows the class in the first half, ``b`` in the second; ``z`` is
    numeric and its class means swap sides at the drift; ``noise`` never matters."""
    g = rng(NAME, 3, seed)
    rows = []
    for i in range(n):
        y = int(g.integers(2))
        late = i >= n // 2
        follow = g.random(2) < 0.85
        a = y if (follow[0] and not late) else int(g.integers(2))
        b = y if (follow[1] and late) else int(g.integers(2))
        z = float(g.normal((1 - 2 * y) if late else (2 * y - 1), 1.5))
        rows.append(({"a": f"a{a}", "b": f"b{b}", "z": z, "noise": f"n{int(g.integers(3))}"}, y))
    return rows


def forgetting_figure(n: int, out):
    """Section 4: feature posteriors over time, and the posterior over rates of "auto"."""
    import pandas as pd

    from onlinebma.naive_bayes import ModelAveragedNB

    from ._report import pyplot, save_figure

    rows = drifting_stream(n)
    learners = {"no forgetting": ModelAveragedNB(),
                "decay = structure_decay = 0.99": ModelAveragedNB(decay=0.99,
                                                                  structure_decay=0.99),
                'decay="auto"': ModelAveragedNB(decay="auto")}
    step = max(n // 300, 1)
    trace = {name: [] for name in learners}
    rates, correct = [], dict.fromkeys(learners, 0)
    for i, (x, y) in enumerate(rows):
        for name, model in learners.items():
            p = model.predict_proba_one(x)
            correct[name] += bool(p) and max(p, key=p.get) == y
            model.learn_one(x, y)
            if i % step == 0:
                trace[name].append((i, model.feature_posteriors()))
        if i % step == 0:
            rates.append((i, learners['decay="auto"'].decay_posterior()))
    plt = pyplot()
    fig, axes = plt.subplots(len(learners) + 1, 1, figsize=(8, 9), sharex=True)
    for ax, (name, points) in zip(axes, trace.items()):
        t = [i for i, _ in points]
        for f in ("a", "b", "z", "noise"):
            ax.plot(t, [post.get(f, 0.5) for _, post in points], label=f)
        ax.axvline(n // 2, color="grey", ls="--", lw=1)
        ax.set_ylabel("P(arc | data)")
        ax.set_title(f"ModelAveragedNB, {name}", fontsize=10)
    axes[0].legend(loc="center right", fontsize=8)
    t = [i for i, _ in rates]
    grid = list(rates[-1][1])
    axes[-1].stackplot(t, *[[r[rate] for _, r in rates] for rate in grid],
                       labels=[f"λ = {rate:g}" for rate in grid])
    axes[-1].axvline(n // 2, color="grey", ls="--", lw=1)
    axes[-1].set_ylabel('decay="auto":\nP(rate)')
    axes[-1].set_xlabel("records learned (drift at the dashed line)")
    axes[-1].legend(loc="center left", fontsize=7, ncol=5)
    save_figure(fig, NAME, out, "forgetting")
    return pd.DataFrame({"learner": list(correct),
                         "progressive accuracy": [c / n for c in correct.values()]})


def bdeu_scaling(sizes):
    """Section 5: learn_one CPU seconds against the number of distinct values of one feature."""
    import pandas as pd

    from onlinebma.naive_bayes import ModelAveragedNB

    rows = []
    for n in sizes:
        records = [({"id": f"u{i}", "c": "ab"[i % 2]}, i % 3) for i in range(n)]
        for prior in ("K2", "BDeu"):
            model = ModelAveragedNB(prior=prior)
            start = time.process_time()
            for x, y in records:
                model.learn_one(x, y)
            seconds = time.process_time() - start
            rows.append({"distinct values": n, "prior": prior, "seconds": seconds,
                         "µs per record": 1e6 * seconds / n})
    return pd.DataFrame(rows)


def run(quick: bool = False, out: pathlib.Path = pathlib.Path("docs")) -> dict:
    import pandas as pd
    from river import naive_bayes as river_nb
    from sklearn.naive_bayes import CategoricalNB

    from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
    from onlinebma.progress import progress

    n_stream, n_batch, repeats = (2_000, 100_000, 2) if quick else (20_000, 1_000_000, 3)
    load = [os.getloadavg()[0]]  # the 1-minute load average at the start and at the end

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
    best = dict.fromkeys(learners, 0.0)
    for _ in progress(range(repeats), desc="streaming runs"):
        for name, (make, records) in learners.items():
            best[name] = max(best[name], stream_rate(make(), records, labels))
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
        start = time.process_time()
        CategoricalNB().fit(Xb, yb)
        batch_times["CategoricalNB.fit"].append(time.process_time() - start)
        for cls in (NaiveBayes, ModelAveragedNB, BMANB):
            model = cls(nominal_attributes=nominal)
            start = time.process_time()
            model.learn_many(frame, target)
            batch_times[f"{cls.__name__}.learn_many"].append(time.process_time() - start)
    sk = min(batch_times["CategoricalNB.fit"])
    batch = pd.DataFrame({
        "method": list(batch_times),
        "seconds (best)": [min(v) for v in batch_times.values()],
        "x CategoricalNB": [min(v) / sk for v in batch_times.values()],
    })

    run_kind = "quick run" if quick else "full run"
    n_wide = 2_000 if quick else 10_000
    wide = forgetting_speed(n_wide, repeats)
    drift = forgetting_figure(1_500 if quick else 6_000, out)
    bdeu = bdeu_scaling((2_500, 5_000) if quick else (2_500, 5_000, 10_000, 20_000, 100_000))

    load.append(os.getloadavg()[0])
    text = f"""# Naive Bayes speed (`python -m experiments {NAME}`)

{__doc__.split(chr(10), 1)[1].strip()}

Machine: {platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} cores;
{run_kind}. 1-minute load average {load[0]:.1f} at the start and {load[1]:.1f} at the end
({load_note(load, os.cpu_count() or 1)}); every ratio compares runs side by side in this one
process, so read the ratios, not the absolute speeds.

## Streaming: {n_stream:,} records, predict_proba_one + learn_one

{markdown_table(streaming, floatfmt=".2f")}

## Batch: learn_many on {n_batch:,} x {Xb.shape[1]} records

{markdown_table(batch, floatfmt=".3f")}

## Forgetting and wide vocabularies: {n_wide:,} records, 20 observed features each

{markdown_table(wide, floatfmt=".2f")}

## Feature posteriors on a drifting stream

![feature posteriors over time](../figures/{NAME}-forgetting.png)

{markdown_table(drift, floatfmt=".3f")}

## BDeu with an ID-like feature: learn_one, one new value per record

{markdown_table(bdeu, floatfmt=".3f")}
"""
    write_results(NAME, out, text)
    return {"tables": {"streaming": streaming, "batch": batch, "forgetting": wide,
                       "drift": drift, "bdeu": bdeu}}
