"""The README's demo and the example scripts run and say something sensible."""

import doctest
import itertools
import math
import os
import pathlib
import subprocess
import sys

import pytest

import onlinebma.__main__
from onlinebma.__main__ import PreviousLabel, demo, demo_records
from onlinebma.datasets import Elec2, UCIDataset

ROOT = pathlib.Path(__file__).parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
# Scripts run from elsewhere import this checkout's package, whatever else is installed.
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                                  os.environ.get("PYTHONPATH")]))}
LEARNERS = ["class prior", "previous label", "NaiveBayes", "ModelAveragedNB", "BMANB",
            "NaiveBayes auto", "BMANB auto"]


def _demo(*args, cwd=None):
    command = [sys.executable, "-m", "onlinebma", "demo", *args]
    return subprocess.run(command, capture_output=True, text=True, env=ENV, cwd=cwd, timeout=300)


def test_demo_reports_finite_metrics_for_the_learners_beside_the_two_baselines():
    rows = demo("adult", limit=800, progress_bar=False)
    assert [r["learner"] for r in rows] == LEARNERS
    for r in rows:
        assert 0.6 < r["accuracy"] <= 1.0
        assert math.isfinite(r["log loss"]) and r["log loss"] > 0
        assert 0.0 <= r["ECE"] <= 1.0
        assert r["records/s"] > 0


def test_the_default_stream_shows_averaging_beat_both_baselines():
    """Elec2 by default (on adult every learner loses to the class prior in log loss unless
    numeric features are discretized): the learner averaging over forgetting rates and models
    beats the class prior and the previous label in accuracy and log loss on the first 3,000
    records."""
    rows = {r["learner"]: r for r in demo(limit=3000, progress_bar=False)}
    best = rows["BMANB auto"]
    for baseline in ("class prior", "previous label"):
        assert best["accuracy"] > rows[baseline]["accuracy"]
        assert best["log loss"] < rows[baseline]["log loss"]


def test_a_static_table_is_shuffled_with_the_seed_and_the_table_says_so():
    """iris's file is sorted by class: in file order the previous label is right 147 times
    in 149. Shuffled, every seed gives the same records in another order."""
    def ordered(records):
        return sorted(repr(sorted(x.items())) + repr(y) for x, y in records)

    file_order = list(UCIDataset("iris"))
    first, second = demo_records("iris", seed=0), demo_records("iris", seed=1)
    assert first != second and first != file_order
    assert ordered(first) == ordered(second) == ordered(file_order)
    assert demo_records("iris", 20, seed=1) == second[:20]
    rows = {r["learner"]: r for r in demo("iris", progress_bar=False)}
    assert rows["previous label"]["accuracy"] < 0.6 < rows["NaiveBayes"]["accuracy"]
    out = _demo("--dataset", "iris", "--seed", "3", "--no-progress")
    assert out.returncode == 0, out.stderr
    assert "iris (150 records, a static table, shuffled with seed 3)" in out.stdout


def test_elec2_keeps_its_time_order():
    assert demo_records("electricity", 200) == list(itertools.islice(Elec2(), 200))
    out = _demo("--limit", "100", "--seed", "5", "--no-progress")
    assert "electricity (100 records, in time order)" in out.stdout


def test_on_adult_the_demo_names_the_way_to_beat_the_class_prior_and_that_way_works():
    out = _demo("--dataset", "adult", "--limit", "2000", "--no-progress")
    assert out.returncode == 0, out.stderr
    assert "No learner beats the class prior's log loss here" in out.stdout
    assert "python -m onlinebma demo --dataset adult --discretize" in out.stdout
    rows = demo("adult", limit=2000, progress_bar=False, discretize=True)
    prior = rows[0]["log loss"]
    assert rows[0]["learner"] == "class prior"
    assert all(r["log loss"] < prior for r in rows[2:]), rows
    out = _demo("--dataset", "adult", "--limit", "300", "--discretize", "--no-progress")
    assert "MDLDiscretizer() in front of each learner" in out.stdout


def test_the_demo_modules_doctests_pass():
    # pytest's --doctest-modules never collects a __main__.py: run them here
    result = doctest.testmod(onlinebma.__main__)
    assert result.attempted >= 5 and result.failed == 0


def test_previous_label_baseline_is_right_when_the_label_repeats():
    data = list(itertools.islice(Elec2(), 2000))
    model, hits, predicted = PreviousLabel(), 0, 0
    for x, y in data:
        proba = model.predict_proba_one(x)
        if proba:
            assert math.isclose(sum(proba.values()), 1.0)
            hits += max(proba, key=proba.get) == y
            predicted += 1
        model.learn_one(x, y)
    repeats = sum(a == b for (_, a), (_, b) in itertools.pairwise(data))
    assert (predicted, hits) == (len(data) - 1, repeats)
    assert model.predict_proba_one({})[data[-1][1]] == (repeats + 1) / (len(data) - 1 + 2)


def test_demo_command_line_prints_the_table_and_the_comparison_with_both_baselines():
    out = _demo("--limit", "300", "--no-progress")
    assert out.returncode == 0, out.stderr
    for name in LEARNERS:
        assert name in out.stdout
    assert "records/s" in out.stdout and "ECE" in out.stdout and "overconfident" in out.stdout
    assert "electricity (300 records, in time order)" in out.stdout
    assert "against the class prior" in out.stdout and "against the previous label" in out.stdout


@pytest.mark.parametrize("name", ["elec2", "Elec2", "electricity", "ELECTRICITY"])
def test_demo_accepts_every_spelling_of_elec2(name):
    out = _demo("--dataset", name, "--limit", "50", "--no-progress")
    assert out.returncode == 0, out.stderr
    assert "electricity (50 records, in time order)" in out.stdout


@pytest.mark.parametrize("args, message", [
    (["--dataset", "nope"], "unknown dataset 'nope'; one of: adult, "),
    (["--limit", "0"], "must be a positive whole number of records, got '0'"),
    (["--limit", "-5"], "must be a positive whole number of records, got '-5'"),
    (["--limit", "ten"], "must be a positive whole number of records, got 'ten'"),
])
def test_demo_refuses_bad_arguments_in_one_line_without_a_traceback(args, message):
    out = _demo(*args, "--no-progress")
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    errors = [line for line in out.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and message in errors[0]
    if "dataset" in message:
        assert "electricity (or elec2)" in errors[0] and "mushroom" in errors[0]


def test_demo_help_is_plain_text():
    out = _demo("--help")
    assert out.returncode == 0
    assert "``" not in out.stdout and ":class:" not in out.stdout and "elec2" in out.stdout
    assert "--limit N" in out.stdout


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(script, tmp_path):
    result = subprocess.run([sys.executable, str(script), "400"], cwd=tmp_path, env=ENV,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def test_readme_python_blocks_run():
    readme = (pathlib.Path(__file__).parents[1] / "README.md").read_text()
    blocks = [b.split("```", 1)[0] for b in readme.split("```python\n")[1:]]
    assert len(blocks) >= 2
    namespace = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
    assert set(namespace["model"].feature_posteriors()) == set(namespace["X"].columns)


def test_the_readme_names_exactly_the_learners_with_fit_and_predict_proba():
    import onlinebma.isa
    import onlinebma.mixture
    import onlinebma.naive_bayes
    import onlinebma.order_mcmc
    import onlinebma.tan

    readme = " ".join((ROOT / "README.md").read_text().split())
    sentence = readme.split("the batch-fitted learners, ", 1)[1].split(", also have", 1)[0]
    named = set(sentence.split(", "))
    learners = {name: getattr(module, name)
                for module in (onlinebma.naive_bayes, onlinebma.tan, onlinebma.isa,
                               onlinebma.mixture, onlinebma.order_mcmc)
                for name in module.__all__ if not name.startswith("Base")}
    learners = {n: c for n, c in learners.items() if hasattr(c, "predict_proba_one")}
    assert named == {n for n, c in learners.items()
                     if hasattr(c, "fit") and hasattr(c, "predict_proba")}
    assert "the naive Bayes and tree-augmented ones do not" in readme
