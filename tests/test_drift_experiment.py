"""The drift benchmark (experiment ``drift``): its metrics against River's, its streams, the
no-change baseline, and a ``--quick`` smoke run (tables' shape and finiteness, files written)."""

import itertools
import math

import numpy as np
import pytest
from river import evaluate, metrics, naive_bayes, tree

from experiments import drift
from onlinebma.datasets import Elec2


def test_elec2_is_bundled_in_time_order():
    ds = Elec2()
    data = list(ds)
    assert len(data) == ds.n_samples == 45_312
    assert all(len(x) == 6 and all(0.0 <= v <= 1.0 for v in x.values()) for x, _ in data)
    assert {y for _, y in data} == {False, True}  # River's Elec2 too: True when the price went UP
    # Time order: the half-hour ``period`` climbs through each day and wraps at midnight.
    periods = [x["period"] for x, _ in data[:96]]
    assert periods[0] == 0.0 and periods[:48] == sorted(periods[:48]) and periods[48] == 0.0
    # The figure for the no-change baseline on this copy.
    same = sum(a == b for (_, a), (_, b) in itertools.pairwise(data))
    assert round(same / (len(data) - 1), 4) == 0.8533


def test_decayed_naive_bayes_on_elec2_equals_a_hand_written_one():
    """The headline guard: NaiveBayes(decay=0.95)'s probabilities on Elec2 equal those of an
    independent decayed Gaussian naive Bayes written here (weighted Welford moments, every
    statistic times λ after each record, the variance floor 1e-9 × the marginal variance), so
    its progressive accuracy owes nothing to the harness."""
    from onlinebma.naive_bayes import NaiveBayes

    lam, data = 0.95, list(itertools.islice(Elec2(), 3000))

    class Moments:
        def __init__(self):
            self.n = self.mean = self.m2 = 0.0

        def add(self, v):
            self.n += 1.0
            d = v - self.mean
            self.mean += d / self.n
            self.m2 += d * (v - self.mean)

    counts, stats, marginal = {}, {}, {}
    ours, worst = NaiveBayes(decay=lam, numeric="Gaussian"), 0.0  # the Gaussian written here
    for x, y in data:
        proba = ours.predict_proba_one(x)
        if len(counts) == 2:
            total = sum(counts.values())
            logp = {}
            for c in counts:
                lp = math.log((counts[c] + 1.0) / (total + 2.0))
                for f, v in x.items():
                    floor = 1e-9 * marginal[f].m2 / marginal[f].n
                    if floor > 0:  # a feature constant so far carries nothing
                        m = stats[c][f]
                        var = m.m2 / m.n + floor
                        lp -= 0.5 * (math.log(2 * math.pi * var) + (v - m.mean) ** 2 / var)
                logp[c] = lp
            top = max(logp.values())
            z = sum(math.exp(v - top) for v in logp.values())
            worst = max(worst, *(abs(math.exp(logp[c] - top) / z - proba[c]) for c in logp))
        ours.learn_one(x, y)
        counts[y] = counts.get(y, 0.0) + 1.0
        for f, v in x.items():
            stats.setdefault(y, {}).setdefault(f, Moments()).add(v)
            marginal.setdefault(f, Moments()).add(v)
        counts = {c: n * lam for c, n in counts.items()}
        for m in [*marginal.values(), *(m for s in stats.values() for m in s.values())]:
            m.n, m.m2 = m.n * lam, m.m2 * lam
    assert worst < 1e-9


def test_metrics_equal_rivers_progressive_validation():
    """Accuracy and log loss of one side-by-side pass equal River's progressive_val_score
    run on each learner alone."""
    stream = drift.synthetic(300)["Agrawal"]
    names = ["river GaussianNB", "river HoeffdingTree", "NaiveBayes", drift.BASELINE]
    run = drift.evaluate(stream, {n: drift.make_learner(n, stream) for n in names}, show=False)
    table = run.table().set_index("model")
    for name in names:
        metric = metrics.Accuracy() + metrics.CrossEntropy()
        evaluate.progressive_val_score(stream.data, drift.make_learner(name, stream), metric)
        acc, ce = (m.get() for m in metric)
        assert math.isclose(table.loc[name, "accuracy"], acc, abs_tol=1e-12), name
        assert math.isclose(table.loc[name, "log loss"], ce, rel_tol=1e-9), name


def test_ece_and_rolling_by_hand():
    conf = np.array([0.95, 0.55, 0.55, 0.05, 1.0])
    corr = np.array([1, 0, 1, 0, 1])
    # bins: 0.9-1.0 holds 0.95 and 1.0 (2 right), 0.5-0.6 holds two 0.55 (1 right), 0.0-0.1
    expected = (abs(2 - 1.95) + abs(1 - 1.1) + abs(0 - 0.05)) / 5
    assert math.isclose(drift.ece(conf, corr), expected, rel_tol=1e-12)
    assert np.allclose(drift.rolling([1, 0, 1, 1], 2), [0.5, 0.5, 1.0])


def test_no_change_baseline():
    m = drift.NoChange()
    assert m.predict_proba_one({}) == {} and m.predict_one({}) is None
    m.learn_one({}, 0)
    assert m.predict_proba_one({}) == {0: 1.0}
    for y in [0, 1, 1, 1]:
        m.learn_one({}, y)
    # pairs (0,0), (0,1), (1,1), (1,1): 3 repeats of 4, Laplace (3 + 1) / (4 + 2)
    assert m.predict_proba_one({}) == pytest.approx({1: 4 / 6, 0: 2 / 6})
    assert m.predict_one({}) == 1


def test_synthetic_streams_are_seeded_and_drift_where_recorded():
    a, b = drift.synthetic(400), drift.synthetic(400)
    other = drift.synthetic(400, draw=1)
    for name, s in a.items():
        assert len(s.data) == 400
        assert s.data == b[name].data and s.data != other[name].data, name
        assert s.drifts == ([100, 200, 300] if s.drift == "abrupt" else []), name
    # STAGGER's concepts are exact rules (River's encoding): 0 = small and red, 1 = green or
    # circle, 2 = medium or large, then 0 again, each between its recorded drift points.
    rules = [lambda x: x["size"] == 0 and x["color"] == 0,
             lambda x: x["color"] == 2 or x["shape"] == 0,
             lambda x: x["size"] in (1, 2)]
    st = a["STAGGER"].data
    for start, rule in zip([0, 100, 200, 300], [*rules, rules[0]]):
        assert all(int(rule(x)) == y for x, y in st[start + 5:start + 95]), start


def test_river_peers_are_the_models_named():
    stream = drift.synthetic(50)["STAGGER"]
    assert isinstance(drift.make_learner("river GaussianNB", drift.streams(True)["Elec2"]),
                      naive_bayes.GaussianNB)
    ht = drift.make_learner("river HoeffdingAdaptiveTree", stream)
    assert isinstance(ht, tree.HoeffdingAdaptiveTreeClassifier)
    assert ht.nominal_attributes == ["size", "color", "shape"]
    with pytest.raises(ValueError, match="unknown learner"):
        drift.make_learner("ModelAveragedNB sometimes", stream)


#: The tests sharing :func:`quick` run in one pytest-xdist worker (``--dist loadgroup``), so
#: that the quick run is made once, not once in each worker.
QUICK_RUN = pytest.mark.xdist_group("drift-quick-run")


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs")
    return out, drift.run(quick=True, out=out, show=False)


@pytest.mark.slow
@pytest.mark.experiments
@QUICK_RUN
def test_quick_run_tables_are_complete_and_finite(quick):
    _, result = quick
    df = result["tables"]["results"]
    streams = ["Elec2", "SEA", "Agrawal", "STAGGER", "Hyperplane", "RandomRBFDrift"]
    assert list(dict.fromkeys(df["stream"])) == streams
    fixed = float(result["tables"]["selection"].set_index("λ")["mean"].idxmin())
    assert fixed in drift.DECAY_GRID
    assert list(dict.fromkeys(df["model"])) == drift.learner_names(fixed)
    assert len(df) == len(streams) * len(drift.learner_names(fixed))
    assert len(result["tables"]["targets"]) == 4
    by_learner = result["tables"]["targets by learner"]
    assert list(by_learner["model"]) == drift.learner_names(fixed)[5:]
    assert set(by_learner.filter(like="≥").stack()) <= {"yes", "no"}
    post = result["tables"]["posteriors"]
    assert len(post) == len(streams) * len(drift.OURS_AUTO)
    for part in ("mean", "end"):
        cols = [f"{part} {r:g}" for r in drift.DECAY_GRID]
        assert np.allclose(post[cols].sum(axis=1), 1.0), part
    num = df[["accuracy", "log loss", "ECE", "records/s"]].to_numpy(float)
    assert np.isfinite(num).all() and (num >= 0).all()
    assert ((df["accuracy"] <= 1) & (df["ECE"] <= 1)).all()
    assert (df.loc[df["stream"] == "Elec2", "records"] == drift.QUICK_ELEC2).all()


@pytest.mark.slow
@pytest.mark.experiments
@QUICK_RUN
def test_quick_run_writes_results_and_figures(quick):
    out, result = quick
    text = (out / "results" / "drift.md").read_text()
    assert text.startswith("# drift") and "Quick smoke-test run" in text
    assert "## Targets on Elec2" in text
    figures = result["figures"]
    assert len([f for f in figures if "rolling" in f.name]) == 6
    for fig in figures:
        assert fig.exists() and fig.stat().st_size > 1000 and fig.name in text


def test_auto_speed_checks_the_targets_on_the_streams_named():
    table = drift.auto_speed(n=300, names=("STAGGER",))
    assert table["stream"].tolist() == ["STAGGER"] * len(drift.AUTO_SPEED)
    assert table["model"].tolist() == [f"{m} auto" for m in drift.AUTO_SPEED]
    for column in ("× ARF records/s", "cost vs λ=0.99"):
        assert np.isfinite(table[column]).all() and (table[column] > 0).all()
