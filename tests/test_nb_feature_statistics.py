"""ModelAveragedNB.feature_statistics after a table or a merge: the marginal likelihoods
recomputed from the counts equal the stream's, and are as of the records learned
(``"last"``; a stream's, without flattening, stay as of the feature's first record)."""

from __future__ import annotations

import pandas as pd
import pytest

from onlinebma.naive_bayes import ModelAveragedNB

X = pd.DataFrame({"c": ["a", "b", "a", "b", "a"], "z": [0.1, 1.2, 0.3, 1.1, 0.2]})
y = pd.Series([0, 1, 0, 1, 1])


@pytest.mark.parametrize("prior", ["K2", "BDeu"])
def test_a_table_and_a_merge_give_the_statistics_of_a_stream(prior):
    stream = ModelAveragedNB(prior=prior, numeric="Gaussian")
    for x, label in zip(X.to_dict("records"), y):
        stream.learn_one(x, label)
    table = ModelAveragedNB(prior=prior, numeric="Gaussian")
    table.learn_many(X, y)
    left, right = ModelAveragedNB(prior=prior, numeric="Gaussian"), \
        ModelAveragedNB(prior=prior, numeric="Gaussian")
    left.learn_many(X.iloc[:2], y.iloc[:2])
    right.learn_many(X.iloc[2:], y.iloc[2:])
    merged = left.merge(right)
    for f in ("c", "z"):
        want = stream.feature_statistics(f)
        for model in (table, merged):
            got = model.feature_statistics(f)
            assert got["last"] == len(X)
            assert got["log_ml"] == pytest.approx(want["log_ml"], rel=1e-12)
