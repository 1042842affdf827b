"""ModelAveragedTAN(numeric="independent Gaussians"): one Gaussian per numeric feature and
class, each feature's prior as wide as its class-pooled spread (onlinebma.tan.gaussian).

Checked against the definition written out from the records themselves: every record's
weight ``λ^age``, each feature's weighted mean and scatter per class over the records where it
is observed, the spread over every class, the univariate Normal–Wishart margin's Student t
(Kuipers et al. 2014) from scipy, and the forest average over the nominal features from a
learner of those alone. The shared state of ``decay="auto"`` (which averages these members
beside the others) is checked against separate learners in tests/test_tan_representations.py.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from onlinebma.tan import ModelAveragedTAN
from onlinebma.tan.gaussian import GAUSSIAN, INDEPENDENT_GAUSSIANS, GaussianStatistics
from onlinebma.tan.model_averaged import auto_representations
from tests.test_tan_representations import close, stream

K0 = 0.01  # the default prior's k0; alpha of one feature 3, T = k0 / (k0 + 1) scale^2


def reference_log_t(records, rate, feature, c, value) -> float:
    """``log t_c(value)`` of ``feature`` after ``records`` (``(x, class)`` pairs in order),
    written out: weights ``rate^age``, the class's weighted moments where the feature is
    observed, the prior's scale the spread over every class (1 while there is none)."""
    n = len(records)
    rows = [(rate ** (n - 1 - i), x[feature], y) for i, (x, y) in enumerate(records)
            if x.get(feature) is not None and not math.isnan(x[feature])]
    w = np.array([r[0] for r in rows])
    v = np.array([r[1] for r in rows])
    mine = np.array([r[2] == c for r in rows], dtype=bool)
    total = w.sum()
    spread = 1.0
    if total > 0:
        var = (w * (v - (w * v).sum() / total) ** 2).sum() / total
        spread = math.sqrt(var) if var > 0 else 1.0
    t_prior = K0 / (K0 + 1.0) * spread ** 2
    nc = w[mine].sum()
    mean = (w[mine] * v[mine]).sum() / nc if nc > 0 else 0.0
    scatter = (w[mine] * (v[mine] - mean) ** 2).sum()
    kappa = K0 + nc
    r = t_prior + scatter + K0 * nc / kappa * mean ** 2
    df = 3.0 + nc
    loc = nc * mean / kappa
    shape = r * (kappa + 1.0) / (kappa * df)
    return float(sps.t.logpdf(value, df, loc=loc, scale=math.sqrt(shape)))


@pytest.mark.parametrize("rate", [1.0, 0.9])
def test_independent_rows_equal_their_definition(rate):
    """After every record (a third class mid-stream, missing values, a feature constant for
    a while): each class's density of the next record is the product of the features' Student
    t's from their definition, to 1e-10; a full row beside them is unchanged by them."""
    rng = np.random.default_rng(11)
    both = GaussianStatistics((rate, rate), kinds=(INDEPENDENT_GAUSSIANS, GAUSSIAN))
    full = GaussianStatistics((rate,))
    records, classes = [], []
    for t in range(90):
        y = int(rng.integers(0, 3 if t > 40 else 2))
        x = {"z": float(rng.normal(y, 1.0 + y)), "w": 0.5 if t < 30 else float(rng.normal(-y))}
        if rng.random() < 0.15:
            x["z"] = math.nan
        if t and rng.random() < 0.1:
            x.pop("w")
        if records:
            vector = both.vector(list(x.items()))
            got = both.log_densities(vector, len(classes))
            want = [sum(reference_log_t(records, rate, f, c, x[f]) for f in ("z", "w")
                        if f in x and not math.isnan(x[f])) for c in range(len(classes))]
            np.testing.assert_allclose(got[0], want, rtol=1e-10, atol=1e-10)
            np.testing.assert_array_equal(got[1], full.log_densities(vector, len(classes))[0])
        classes += [y] if y not in classes else []
        pairs = [(f, v) for f, v in sorted(x.items(), key=lambda kv: kv[0] != "z")]
        both.learn(pairs, classes.index(y), len(classes))
        full.learn(pairs, classes.index(y), len(classes))
        records.append((x, classes.index(y)))


def test_the_member_is_a_nominal_forest_times_independent_student_ts():
    """P(c | x) ∝ P_forest(c, x_nominal) prod_u t_c(x_u), the forest from a learner of the
    nominal features alone, each t from its definition."""
    data = stream(120, seed=2)
    data[0][0]["w"] = 1.0  # the Gaussians model the numeric features of the first record
    model = ModelAveragedTAN(aode=False, numeric=INDEPENDENT_GAUSSIANS)
    nominal = ModelAveragedTAN(aode=False)
    records, labels = [], []
    for x, y in data:
        model.learn_one(x, y)
        nominal.learn_one({f: v for f, v in x.items() if f in ("a", "b")}, y)
        labels += [y] if y not in labels else []
        records.append(({f: x.get(f) for f in ("z", "w")}, labels.index(y)))
    for x, _ in data[:15]:
        forest = nominal.joint_log_likelihood({f: v for f, v in x.items() if f in ("a", "b")})
        jll = {c: forest[c] + sum(reference_log_t(records, 1.0, f, labels.index(c), x[f])
                                  for f in ("z", "w") if x.get(f) is not None
                                  and not math.isnan(x[f])) for c in labels}
        top = max(jll.values())
        want = {c: math.exp(s - top) for c, s in jll.items()}
        total = sum(want.values())
        close(model.predict_proba_one(x), {c: want[c] / total for c in labels}, 1e-9)


def test_auto_averages_them_when_forgetting_only():
    assert INDEPENDENT_GAUSSIANS in auto_representations("auto")
    assert INDEPENDENT_GAUSSIANS in auto_representations(0.99)
    assert INDEPENDENT_GAUSSIANS not in auto_representations(1.0)


def test_narrow_features_follow_the_data_not_the_prior():
    """Features whose values spread by 0.01: with the prior's scale 1 a member at a fast rate
    holds a few dozen records and is mostly prior; scaled to the data it separates the
    classes (the Elec2 case of the module docstring)."""
    rng = np.random.default_rng(5)
    model = ModelAveragedTAN(aode=False, numeric=INDEPENDENT_GAUSSIANS, decay=0.9)
    full = ModelAveragedTAN(aode=False, numeric=GAUSSIAN, decay=0.9)
    losses = {INDEPENDENT_GAUSSIANS: 0.0, GAUSSIAN: 0.0}
    for _ in range(400):
        y = int(rng.integers(0, 2))
        x = {"p": float(rng.normal(0.05 + 0.01 * y, 0.01)),
             "q": float(rng.normal(0.50 - 0.01 * y, 0.01))}
        for name, m in ((INDEPENDENT_GAUSSIANS, model), (GAUSSIAN, full)):
            p = m.predict_proba_one(x)
            losses[name] -= math.log(p.get(y, 0.5)) if p else math.log(0.5)
            m.learn_one(x, y)
    assert losses[INDEPENDENT_GAUSSIANS] < 0.9 * losses[GAUSSIAN]


def test_merge_and_a_table_equal_one_learner():
    """Without forgetting the statistics add: two halves merged and the table learned at once
    give the stream's predictions."""
    data = stream(200, seed=4)
    whole = ModelAveragedTAN(aode=False, numeric=INDEPENDENT_GAUSSIANS)
    parts = [ModelAveragedTAN(aode=False, numeric=INDEPENDENT_GAUSSIANS) for _ in range(2)]
    table = ModelAveragedTAN(aode=False, numeric=INDEPENDENT_GAUSSIANS)
    for i, (x, y) in enumerate(data):
        whole.learn_one(x, y)
        parts[i // 100].learn_one(x, y)
    table.learn_many(pd.DataFrame([x for x, _ in data]), pd.Series([y for _, y in data]))
    merged = parts[0].merge(parts[1])
    for x, _ in data[:30]:
        close(merged.predict_proba_one(x), whole.predict_proba_one(x), 1e-9)
        close(table.predict_proba_one(x), whole.predict_proba_one(x), 1e-9)


def test_bad_kinds_are_refused():
    with pytest.raises(ValueError, match="kinds"):
        GaussianStatistics((1.0, 0.9), kinds=(GAUSSIAN,))
    with pytest.raises(ValueError, match="kinds"):
        GaussianStatistics((1.0,), kinds=("diagonal",))
