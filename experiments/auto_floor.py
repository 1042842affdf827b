"""How fast ``NaiveBayes(decay="auto")`` could be in plain floats: the floor under its speed
targets on a narrow nominal stream (docs/results/drift.md, *The plain-float floor*).

Not an experiment of ``python -m experiments`` (no ``run``): a benchmark script, run as
``python -m experiments.auto_floor`` (about 20 s), printing one markdown table.

:func:`bare_auto` is the five-member dynamic model average of ``decay="auto"`` written as
bare arithmetic on plain floats and dicts: per record, every member's class scores, the
mixture, the members' weights and every member's counts, in the scaled unit the learners
use, and nothing else (no validation, no record reading, no River plumbing, no pickling
state). Its predictions are checked equal to ``NaiveBayes(decay="auto")``'s to 1e-9 before
anything is timed, so it computes what the learner computes. It is then timed side by side
with ``NaiveBayes(decay="auto")``, ``NaiveBayes(decay=0.99)`` and River's ARF (predict then
learn, every record, the same process, alternating, best of ``REPEATS``) on the first
``RECORDS`` records of the drift benchmark's STAGGER stream (3 nominal features, 2 classes):
the stream on which the shared-rate state costs most against one rate.
"""

from __future__ import annotations

import math
import os
import time

from experiments import drift
from onlinebma.forgetting import AUTO_FORGETTINGS, AUTO_GRID, BETA_FORGETTING, MIN_PROBABILITY
from onlinebma.naive_bayes import NaiveBayes

# the one-state engine of decay="auto" (SharedRates) is the Gaussian reading's; the records
# here are nominal, so the reading changes no prediction, only the engine timed
from onlinebma.naive_bayes.numbers import GAUSSIAN

RECORDS = 3000
REPEATS = 3


def bare_auto(data, alpha: float = 1.0, rates=AUTO_GRID):
    """The predictions (``{label: p}`` before each record is learned, ``None`` before the
    first) of ``NaiveBayes(decay="auto")`` on nominal records, in bare plain floats."""
    log, exp = math.log, math.exp
    n_members = len(rates)
    units = [1.0] * n_members  # a record's weight in each member's scaled unit
    joint = [{} for _ in rates]  # (feature, value, class) -> count
    by_class = [{} for _ in rates]  # (feature, class) -> count
    class_counts = [{} for _ in rates]
    totals = [0.0] * n_members
    n_values, seen, classes = {}, set(), []
    log_weights = [-log(n_members)] * n_members
    beta_log_weights = [list(log_weights) for _ in AUTO_FORGETTINGS]
    log_beta = [-log(len(AUTO_FORGETTINGS))] * len(AUTO_FORGETTINGS)
    out = []
    for x, y in data:
        k = len(classes)
        probas = None
        if k:
            known = [(f, v) for f, v in x.items() if (f, v) in seen]  # unseen values skipped
            probas = []
            for m in range(n_members):
                a = alpha * units[m]
                cj, cf, cc = joint[m], by_class[m], class_counts[m]
                prior = log(totals[m] + k * a)
                scores = []
                for c in classes:
                    s = log(cc.get(c, 0.0) + a) - prior
                    for f, v in known:
                        s += log((cj.get((f, v, c), 0.0) + a) / (cf.get((f, c), 0.0)
                                                                 + n_values[f] * a))
                    scores.append(s)
                top = max(scores)
                e = [exp(s - top) for s in scores]
                z = sum(e)
                probas.append([q / z for q in e])
            weights = [exp(w) for w in log_weights]
            mix = [sum(weights[m] * probas[m][i] for m in range(n_members)) for i in range(k)]
            z = sum(mix)
            out.append({c: q / z for c, q in zip(classes, mix)})
        else:
            out.append(None)
        # the members' weights, one set per β, and the β's (forgetting.RateWeights)
        log_p = None
        if probas is not None and y in classes:
            i = classes.index(y)
            log_p = [log(max(p[i], MIN_PROBABILITY)) for p in probas]
        for b, beta in enumerate(AUTO_FORGETTINGS):
            lw = beta_log_weights[b]
            if log_p is not None:
                lw = [w + q for w, q in zip(lw, log_p)]
                top = max(lw)
                log_beta[b] += top + log(sum(exp(w - top) for w in lw))
            lw = [beta * w for w in lw]
            top = max(lw)
            norm = top + log(sum(exp(w - top) for w in lw))
            beta_log_weights[b] = [w - norm for w in lw]
        top = max(log_beta)
        norm = log(sum(exp(BETA_FORGETTING * (w - top)) for w in log_beta))
        log_beta = [BETA_FORGETTING * (w - top) - norm for w in log_beta]
        log_weights = []
        for m in range(n_members):
            terms = [lb + lw[m] for lb, lw in zip(log_beta, beta_log_weights)]
            top = max(terms)
            log_weights.append(top + log(sum(exp(t - top) for t in terms)))
        if y not in classes:
            classes.append(y)
        for f, v in x.items():
            if (f, v) not in seen:
                seen.add((f, v))
                n_values[f] = n_values.get(f, 0) + 1
        for m in range(n_members):
            u, cj, cf, cc = units[m], joint[m], by_class[m], class_counts[m]
            for f, v in x.items():
                cj[f, v, y] = cj.get((f, v, y), 0.0) + u
                cf[f, y] = cf.get((f, y), 0.0) + u
            cc[y] = cc.get(y, 0.0) + u
            totals[m] += u
            units[m] = u / rates[m]
    return out


def _learner_run(make, data):
    model = make()
    out = []
    for x, y in data:
        out.append(model.predict_proba_one(x) or None)
        model.learn_one(x, y)
    return out


def check_equal(data, nominal) -> float:
    """Largest difference between :func:`bare_auto`'s and the learner's predictions."""
    ours = bare_auto(data)
    theirs = _learner_run(lambda: NaiveBayes(nominal_attributes=nominal, decay="auto",
                                             numeric=GAUSSIAN), data)
    worst = 0.0
    for p, q in zip(ours, theirs):
        assert (p is None) == (q is None) and (p is None or p.keys() == q.keys())
        if p is not None:
            worst = max([worst] + [abs(p[c] - q[c]) for c in p])
    assert worst <= 1e-9, worst
    return worst


def main() -> None:
    stream = drift.synthetic(RECORDS)["STAGGER"]
    data, nominal = stream.data, list(stream.nominal)
    worst = check_equal(data, nominal)
    runs = {
        'NaiveBayes(decay="auto")': lambda: _learner_run(
            lambda: NaiveBayes(nominal_attributes=nominal, decay="auto", numeric=GAUSSIAN),
            data),
        "NaiveBayes(decay=0.99)": lambda: _learner_run(
            lambda: NaiveBayes(nominal_attributes=nominal, decay=0.99), data),
        '"auto" as bare plain floats': lambda: bare_auto(data),
        "river ARF": lambda: _learner_run(lambda: drift.make_learner("river ARF", stream), data),
    }
    best = dict.fromkeys(runs, math.inf)
    load = os.getloadavg()[0]
    for _ in range(REPEATS):
        for name, fn in runs.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    fixed, arf = best["NaiveBayes(decay=0.99)"], best["river ARF"]
    print(f"STAGGER, first {RECORDS} records; bare_auto equals the learner to {worst:.1e}; "
          f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end\n")
    print("| run | µs per record | × the cost of decay=0.99 | × ARF's records/s |")
    print("|:---|---:|---:|---:|")
    for name, seconds in best.items():
        print(f"| {name} | {1e6 * seconds / RECORDS:.1f} | {seconds / fixed:.2f} | "
              f"{arf / seconds:.2f} |")


if __name__ == "__main__":
    main()
