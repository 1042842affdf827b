"""Where the CPU time of an ISA fold goes (docs/isa.md, Speed).

For the first folds of bench-isa's split (house-votes-84 and soybean), ISA with the paper's
settings is fitted on the training fold and predicts the test fold instance by instance, as
bench-isa times it. The script prints, per fold on average:

- the CPU time of the fold, and of its parts: ``fit``, the scoring passes of eq. 9, and the
  rest (search, phase 2, predictions);
- how many models were scored, in how many passes, and the (element, child) and
  (pair, child) counts those models need (element = record under a model; pair = element and
  a class its configuration already holds; child = a feature that is not an antecedent);
- the cost of one scoring pass of ``M`` models (depth-3 antecedent sets), to split a pass into
  a fixed part and a part per model;
- a floor for the arithmetic of those counts: numpy's time for the two steps no scorer of
  this design avoids (a running sum per (element, child); a gather, shift, mask, log-table
  gather and add per (pair, child)), on arrays of 16,384 elements and as many elements as
  the fold needs, with everything else left out.

Run: ``python -m experiments.scripts.isa_cost [FOLDS]`` (about a minute with the default 3).
"""

from __future__ import annotations

import itertools
import sys
import time

import numpy as np

from experiments import _report
from experiments._cv import cv_splits
from onlinebma.datasets import UCIDataset
from onlinebma.isa import ISA
from onlinebma.isa.blocks import Pairs
from onlinebma.isa.scorer import Scorer

CHUNK = 1 << 14


def fold_parts(ds, X, Y, train, test) -> dict:
    """CPU seconds of one fold and of its parts, and the models scored and passes."""
    passes, pass_seconds = [], [0.0]
    score = Scorer._log_scores

    def timed(self, models, *args):
        start = time.process_time()
        out = score(self, models, *args)
        pass_seconds[0] += time.process_time() - start
        passes.append(len(models))
        return out

    Scorer._log_scores = timed
    try:
        start = time.process_time()
        model = ISA(nominal_attributes=ds.nominal_attributes).fit(X.iloc[train], Y.iloc[train])
        fit = time.process_time() - start
        for x in X.iloc[test].to_dict("records"):
            model.predict_proba_one({f: v for f, v in x.items() if v is not None and v == v})
        total = time.process_time() - start
    finally:
        Scorer._log_scores = score
    return {"model": model, "total": total, "fit": fit, "scoring": pass_seconds[0],
            "passes": len(passes), "models": sum(passes)}


def counts(model) -> tuple[int, int]:
    """(element, child) and (pair, child) counts of the models in ``model``'s cache."""
    sc = model._scorer
    elem_child = pair_child = 0
    for A in model._cache.entries:
        children = sum(1 for j in sc.informative if j not in A)
        pairs = Pairs(sc._model_configurations([A], "full", [None]), sc.y, sc.K)
        elem_child += sc.n * children
        pair_child += pairs.elem.size * children
    return elem_child, pair_child


def pass_curve(model, sizes=(1, 2, 4, 8, 16, 32), reps: int = 30) -> dict:
    """CPU ms of one scoring pass of ``M`` depth-3 models, best of ``reps``."""
    sc = model._scorer
    triples = list(itertools.combinations(range(sc.p), 3))
    rng = np.random.default_rng(0)
    out = {}
    for M in sizes:
        models = [triples[i] for i in rng.choice(len(triples), M, replace=False)]
        best = np.inf
        for _ in range(reps):
            start = time.process_time()
            sc._log_scores(models, "full", [None] * M)
            best = min(best, time.process_time() - start)
        out[M] = 1e3 * best
    return out


def floor_ms(elem_child: int, pair_child: int, reps: int = 5) -> float:
    """Best of ``reps`` CPU ms of the two unavoidable steps over the fold's counts."""
    rng = np.random.default_rng(0)
    at = rng.integers(0, CHUNK, CHUNK)
    codes = rng.integers(0, 3, CHUNK)
    table = np.array([1, 1 << 9, 1 << 18], dtype=np.uint64)
    words = rng.integers(0, 1 << 60, CHUNK, dtype=np.uint64)
    shift = (rng.integers(0, 3, CHUNK) * 9).astype(np.uint64)
    mask, log_num = np.uint64(511), np.log(np.arange(512) + 1.0)
    total = np.zeros(CHUNK)
    best = np.inf
    for _ in range(reps):
        start = time.process_time()
        for _ in range(elem_child // CHUNK):  # running sums of a child's packed counts
            np.cumsum(table.take(codes.take(at)))
        for _ in range(pair_child // CHUNK):  # a pair's count and its log, added
            total += log_num.take(((words.take(at) >> shift) & mask).view(np.int64))
        best = min(best, time.process_time() - start)
    return 1e3 * best


def main(folds: int = 3):
    for name in ("house-votes-84", "soybean"):
        ds = UCIDataset(name)
        X, Y = ds.to_frame()
        splits = list(cv_splits(Y.to_numpy(), 10, _report.rng("bench-isa", len(name))))
        runs = [fold_parts(ds, X, Y, train, test) for train, test in splits[:folds]]
        mean = {k: float(np.mean([r[k] for r in runs]))
                for k in ("total", "fit", "scoring", "passes", "models")}
        elem_child, pair_child = counts(runs[0]["model"])
        curve = pass_curve(runs[0]["model"])
        print(f"{name}: {folds} folds, {runs[0]['model']._scorer.n} records in fold 1")
        rest = mean["total"] - mean["fit"] - mean["scoring"]
        print(f"  CPU per fold {mean['total']:.3f} s: fit {mean['fit']:.3f}, scoring passes "
              f"{mean['scoring']:.3f}, the rest {rest:.3f}")
        print(f"  {mean['models']:.0f} models in {mean['passes']:.0f} passes per fold; fold 1: "
              f"{elem_child:,} (element, child), {pair_child:,} (pair, child)")
        print("  one pass of M models, ms: " + ", ".join(
            f"M={M} {ms:.2f} ({ms / M:.3f}/model)" for M, ms in curve.items()))
        print(f"  floor of fold 1's arithmetic: {floor_ms(elem_child, pair_child):.1f} ms")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
