"""learn_many codes integer columns by subtraction (frames.SMALL_RANGE): it learns what
learn_one learns row by row, whatever the integers (negative, with gaps, a wide range,
pandas' nullable Int64 with missing values)."""

import numpy as np
import pandas as pd
import pytest

from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
from onlinebma.reading import SMALL_RANGE


def _frame(seed=0, n=300):
    g = np.random.default_rng(seed)
    y = g.integers(3, size=n)
    X = pd.DataFrame({
        "small": g.integers(4, size=n) + y,  # follows the class
        "negative": g.choice([-7, -3, 0, 2], size=n),  # gaps and negative values
        "wide": g.choice([0, SMALL_RANGE * 3], size=n),  # a range too wide to subtract
        "unsigned": g.integers(5, size=n).astype(np.uint8),
        "nullable": pd.array(np.where(g.random(n) < 0.2, None, g.integers(3, size=n)),
                             dtype="Int64"),
    })
    return X, pd.Series(y)


@pytest.mark.parametrize("learner", [NaiveBayes, BMANB, ModelAveragedNB])
def test_integer_columns_learn_many_equals_learn_one(learner):
    X, y = _frame()
    names = list(X.columns)
    batch, rows = learner(nominal_attributes=names), learner(nominal_attributes=names)
    batch.learn_many(X.iloc[:200], y.iloc[:200])
    batch.learn_many(X.iloc[200:], y.iloc[200:])  # new values in a second batch
    for x, label in zip(X.to_dict("records"), y.tolist()):
        rows.learn_one({f: (None if pd.isna(v) else int(v)) for f, v in x.items()}, label)
    queries = X.head(20).to_dict("records") + [{"small": 99, "negative": -3}]
    for q in queries:
        q = {f: (None if pd.isna(v) else int(v)) for f, v in q.items()}
        p, r = batch.predict_proba_one(q), rows.predict_proba_one(q)
        assert p.keys() == r.keys()
        for c in p:
            assert p[c] == pytest.approx(r[c], rel=1e-12, abs=1e-12)
    if learner is not NaiveBayes:
        a, b = batch.feature_posteriors(), rows.feature_posteriors()
        assert a.keys() == b.keys()
        for f in a:
            assert a[f] == pytest.approx(b[f], rel=1e-9, abs=1e-12)
