"""The experiments harness: dispatcher, shared statistics, and --quick smoke runs of the
naive Bayes reproductions (shape and finiteness of their tables, files written)."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from experiments import __main__ as cli
from experiments import _report
from experiments.dash_cooper_random import roc_gains
from experiments.random_networks import RandomNetwork

MINE = ["dash-cooper-random", "dash-cooper-networks", "bma-nb-uci", "streams"]


# ------------------------------------------------------------------ dispatcher


def test_list_shows_every_experiment(capsys):
    assert cli.main(["--list"]) == 0
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert set(MINE) <= listed
    assert "random-networks" not in listed  # a helper module without run()


def test_unknown_name_is_a_clear_error(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["no-such-experiment"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unknown experiment 'no-such-experiment'" in err and "dash-cooper-random" in err


def test_quick_runs_never_write_the_committed_results(monkeypatch, tmp_path):
    """A ``--quick`` run goes to build/quick/ of the checkout, a full run to its docs/,
    whatever the working directory; ``--out`` overrides both."""
    seen = []

    class Fake:
        @staticmethod
        def run(quick, out):
            seen.append((quick, out))

    monkeypatch.setattr(cli, "load", lambda name: Fake)
    monkeypatch.chdir(tmp_path)
    cli.main(["x", "--quick"])
    cli.main(["x"])
    cli.main(["x", "--quick", "--out", str(tmp_path)])
    assert seen == [(True, cli.REPO / "build" / "quick"), (False, cli.REPO / "docs"),
                    (True, tmp_path)]
    assert (cli.REPO / "docs" / "results").is_dir()


def test_helper_module_is_not_runnable():
    with pytest.raises(ValueError, match="helper module"):
        cli.load("random-networks")
    with pytest.raises(ValueError, match="unknown experiment"):
        cli.load("_report")


# ------------------------------------------------------------ shared statistics


def test_mean_ci_matches_scipy_intervals():
    x = np.random.default_rng(0).normal(size=37)
    for level in (0.95, 0.99):
        m, h = _report.mean_ci(x, level)
        lo, hi = stats.t.interval(level, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
        assert math.isclose(m - h, lo, rel_tol=1e-12) and math.isclose(m + h, hi, rel_tol=1e-12)
        m, h = _report.mean_ci(x, level, dist="normal")
        lo, hi = stats.norm.interval(level, loc=x.mean(), scale=stats.sem(x))
        assert math.isclose(m + h, hi, rel_tol=1e-12)
    assert math.isnan(_report.mean_ci([1.0])[1])
    with pytest.raises(ValueError):
        _report.mean_ci(x, dist="cauchy")


def test_paired_t_matches_scipy():
    g = np.random.default_rng(1)
    a, b = g.normal(size=20), g.normal(size=20)
    t, p = _report.paired_t_test(a, b)
    ref = stats.ttest_rel(a, b)
    assert math.isclose(t, ref.statistic, rel_tol=1e-12) and math.isclose(p, ref.pvalue)


def test_mcnemar_exact_and_chi2():
    a = np.array([1] * 10 + [0] * 2 + [1] * 5 + [0] * 3, dtype=bool)
    b = np.array([0] * 10 + [1] * 2 + [1] * 5 + [0] * 3, dtype=bool)
    n10, n01, p = _report.mcnemar(a, b)
    assert (n10, n01) == (10, 2)
    assert math.isclose(p, 2 * stats.binom.cdf(2, 12, 0.5))
    _, _, p_chi = _report.mcnemar(a, b, exact=False)
    assert math.isclose(p_chi, stats.chi2.sf((10 - 2 - 1) ** 2 / 12, 1))


def test_roc_auc_matches_sklearn():
    from sklearn.metrics import roc_auc_score

    g = np.random.default_rng(2)
    y = g.random(200) < 0.3
    s = np.round(g.random(200) + 0.3 * y, 1)  # rounded: many ties
    assert math.isclose(_report.roc_auc(y, s), roc_auc_score(y, s), rel_tol=1e-12)
    assert math.isnan(_report.roc_auc([1, 1], [0.2, 0.3]))


def test_roc_gains_follow_procedure_2():
    y = np.array([0, 0, 1, 1])
    r, r_hat, big, small = roc_gains(y, [0.1, 0.4, 0.35, 0.8], [0.1, 0.2, 0.35, 0.8], 1)
    assert (r, r_hat) == (0.75, 1.0)
    assert math.isclose(big, 0.25 / 0.75) and math.isclose(small, 1.0)
    assert roc_gains(y, [0, 0, 1, 1], [0, 1, 0, 1], 1)[3] == 0.0  # R = T: delta_ROC = 0


def test_markdown_table_and_writers(tmp_path):
    df = pd.DataFrame({"name": ["a|b", "c"], "x": [1.23456, math.nan], "n": [1, 2]})
    md = _report.markdown_table(df, floatfmt=".2f").splitlines()
    assert md[0] == "| name | x | n |" and md[1] == "|:---|---:|---:|"
    assert md[2] == "| a\\|b | 1.23 | 1 |" and md[3] == "| c |  | 2 |"
    path = _report.write_results("demo", tmp_path, "# hi")
    assert path == tmp_path / "results" / "demo.md" and path.read_text() == "# hi\n"
    path = _report.write_results("demo", tmp_path, "# hi\n", reading="- r", notes="- n")
    assert path.read_text() == (
        "# hi\n\n## Reading (computed from the tables above)\n\n- r\n\n## Notes\n\n- n\n"
    )
    plt = _report.pyplot()
    fig, _ = plt.subplots()
    assert _report.save_figure(fig, "demo", tmp_path, "x").exists()


def test_seeded_streams_are_reproducible_and_distinct():
    a = _report.rng("x", 1, 2).random(3)
    assert np.array_equal(a, _report.rng("x", 1, 2).random(3))
    assert not np.array_equal(a, _report.rng("y", 1, 2).random(3))
    assert not np.array_equal(a, _report.rng("x", 2, 1).random(3))


# --------------------------------------------------------- random networks


def test_random_network_follows_procedure_1():
    g = np.random.default_rng(3)
    for n, k in [(10, 0), (30, 3), (50, 50)]:
        net = RandomNetwork(n, k, g)
        assert len(net.parents) == n + 1
        for i, pa in enumerate(net.parents):
            assert len(pa) <= min(i, k) and len(set(pa)) == len(pa) and all(p < i for p in pa)
    with pytest.raises(ValueError):
        RandomNetwork(0, 1, g)


def test_lazy_cpts_sample_the_drawn_parameters():
    g = np.random.default_rng(4)
    net = RandomNetwork(3, 1, g)
    data = net.sample(40_000, g)
    # Node 0 is a root: its frequency of 1 estimates its single lazily drawn parameter.
    (p,) = net.cpts[0].values()
    assert abs(data[:, 0].mean() - p) < 4 * math.sqrt(p * (1 - p) / 40_000) + 1e-9
    # Only the columns some record needed were drawn, and they are reused later.
    before = [dict(c) for c in net.cpts]
    net.sample(100, g)
    for old, new in zip(before, net.cpts):
        assert all(new[key] == val for key, val in old.items())
    # A child's frequency per parent value matches its column.
    i = next(i for i, pa in enumerate(net.parents) if len(pa) == 1)
    pa = net.parents[i][0]
    for key, q in net.cpts[i].items():
        rows = data[:, pa] == np.unpackbits(np.frombuffer(key, np.uint8))[0]
        if rows.sum() > 1000:
            f = data[rows, i].mean()
            assert abs(f - q) < 4 * math.sqrt(q * (1 - q) / rows.sum()) + 1e-9


# ------------------------------------------------------------ quick smoke runs


def _finite_numbers(df: pd.DataFrame):
    num = df.select_dtypes(include=[np.number])
    assert num.shape[1] > 0
    assert np.isfinite(num.to_numpy(dtype=float)).all(), num


#: The tests sharing :func:`quick_runs` run in one pytest-xdist worker (``--dist loadgroup``),
#: so that the four runs are made once, not once in each worker.
QUICK_RUNS = pytest.mark.xdist_group("experiments-quick-runs")


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs")
    return out, {name: cli.load(name).run(quick=True, out=out, show=False) for name in MINE}


@pytest.mark.slow
@pytest.mark.experiments
@QUICK_RUNS
@pytest.mark.parametrize("name", MINE)
def test_quick_run_writes_results_and_figures(quick_runs, name):
    out, results = quick_runs
    text = (out / "results" / f"{name}.md").read_text()
    assert text.startswith(f"# {name}") and "Quick smoke-test run" in text
    figures = list((out / "figures").glob(f"{name}-*.png"))
    assert figures and all(f.stat().st_size > 1000 for f in figures)
    for fig in results[name]["figures"]:
        assert fig.name in text


@pytest.mark.slow
@pytest.mark.experiments
@QUICK_RUNS
def test_quick_dash_cooper_random(quick_runs):
    from experiments.dash_cooper_random import QUICK_TESTS

    tables = quick_runs[1]["dash-cooper-random"]["tables"]
    assert list(tables) == list(QUICK_TESTS)
    for test, df in tables.items():
        assert len(df) == len(QUICK_TESTS[test]["values"])
        assert (df["trials"] == QUICK_TESTS[test]["trials"]).all()
        _finite_numbers(df)
        assert df[["R_MAP", "R_MA"]].stack().between(0, 1).all()


@pytest.mark.slow
@pytest.mark.experiments
@QUICK_RUNS
def test_quick_dash_cooper_networks(quick_runs):
    from experiments.dash_cooper_networks import PAPER_TARGETS, QUICK_RECORDS

    tables = quick_runs[1]["dash-cooper-networks"]["tables"]
    assert list(tables) == [f"{n.upper()} {t}" for n, t, *_ in PAPER_TARGETS]
    for df in tables.values():
        assert list(df["value"]) == QUICK_RECORDS
        _finite_numbers(df)


@pytest.mark.slow
@pytest.mark.experiments
@QUICK_RUNS
def test_quick_bma_nb_uci(quick_runs):
    from experiments.bma_nb_uci import METHODS, PAPER_TABLE2, QUICK

    tables = quick_runs[1]["bma-nb-uci"]["tables"]
    errors = tables["errors"]
    assert list(errors["dataset"]) == QUICK["datasets"]
    for m in METHODS:
        assert errors[f"{m} err"].between(0, 1).all()
    _finite_numbers(errors)
    assert len(tables["paper"]) == len(PAPER_TABLE2)


def test_bma_nb_uci_finds_the_bundled_table2_datasets():
    from experiments.bma_nb_uci import table2_datasets

    names = table2_datasets()
    assert "house-votes-84" in names and "mushroom" in names and "sick" not in names
    assert len(names) == 16


@pytest.mark.slow
@pytest.mark.experiments
@QUICK_RUNS
def test_quick_streams(quick_runs):
    from experiments.streams import OURS, PEERS, POSTERIOR_MODELS, streams

    tables = quick_runs[1]["streams"]["tables"]
    df = tables["results"]
    assert set(df["model"]) == set(OURS + PEERS)
    # MultinomialNB only where every feature is nominal.
    n_nominal_only = sum(not spec[2] for spec in streams(10).values())
    assert len(df) == len(streams(10)) * (len(OURS) + len(PEERS) - 1) + n_nominal_only
    _finite_numbers(df)
    assert df["accuracy"].between(0, 1).all()
    post = tables["posteriors"]
    assert set(post["model"]) == set(POSTERIOR_MODELS)
    assert len(post) == 2 * len(POSTERIOR_MODELS)  # relevant and irrelevant features
    _finite_numbers(post)
