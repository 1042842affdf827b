"""How the order of the training records changes ISA on promoters (docs/isa.md, Table 1 notes).

promoters.csv is sorted by class. For 4 test instances of each of 5 folds of a stratified 10-fold
split, ISA (paper settings) is fitted on the training fold in file order and shuffled, and we
print the weight naive Bayes (A = {}) gets in eq. 8, the share of weight by antecedent size and
how many predictions stay below 0.6 for either class; then the error of one full 10-fold CV in
both orders (``--indicator`` adds ISA with ``antecedent="indicator"``, in file order: slow).

Run: ``python -m experiments.scripts.isa_record_order [--indicator]`` (a minute without the flag).
"""

import collections
import sys

import numpy as np

from experiments._cv import cv_splits
from onlinebma.datasets import UCIDataset
from onlinebma.isa import ISA
from onlinebma.naive_bayes import NaiveBayes


def splits(order, y):
    for train, test in cv_splits(y, 10, np.random.default_rng(5)):
        yield (np.sort(train) if order == "file" else train), test


def main():
    X, Y = UCIDataset("promoters").to_frame()
    y = Y.to_numpy()
    for order in ("file", "shuffled"):
        by_size, nb_weight, flat = collections.Counter(), [], 0
        for f, (train, test) in enumerate(splits(order, y)):
            if f == 5:
                break
            model = ISA().fit(X.iloc[train], Y.iloc[train])
            for i in test[:4]:
                x = {k: v for k, v in X.iloc[i].items() if v == v}
                models = model.explain_one(x)
                for m in models:
                    by_size[len(m["antecedent"])] += m["weight"]
                nb_weight.append(sum(m["weight"] for m in models if not m["antecedent"]))
                flat += max(model.predict_proba_one(x).values()) < 0.6
        total = sum(by_size.values())
        shares = {k: round(v / total, 3) for k, v in sorted(by_size.items())}
        print(f"{order}: naive Bayes weight median {np.median(nb_weight):.2g}; "
              f"predictions below 0.6: {flat}/{len(nb_weight)}; weight by |A|: {shares}")
    learners = [("NB", NaiveBayes, {}), ("ISA", ISA, {})]
    if "--indicator" in sys.argv:
        learners.append(("ISA indicator", ISA, {"antecedent": "indicator"}))
    for order in ("file", "shuffled"):
        for name, cls, kw in learners:
            if kw and order == "shuffled":
                continue
            errors = []
            for train, test in splits(order, y):
                model = cls(**kw)
                model.learn_many(X.iloc[train], Y.iloc[train])
                predicted = model.predict_proba_many(X.iloc[test]).idxmax(axis=1).to_numpy()
                errors.append(np.mean(predicted != y[test]))
            print(f"{order}: {name} error {100 * np.mean(errors):.1f}% (one 10-fold CV)")


if __name__ == "__main__":
    main()
