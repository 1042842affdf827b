"""The README's demo and the example scripts run and say something sensible."""

import math
import pathlib
import subprocess
import sys

import pytest

from onlinebma.__main__ import demo

EXAMPLES = sorted((pathlib.Path(__file__).parents[1] / "examples").glob("*.py"))


def test_demo_reports_finite_metrics_for_the_three_learners_beside_the_class_prior():
    rows = demo("adult", limit=800, progress_bar=False)
    assert [r["learner"] for r in rows] == ["class prior", "NaiveBayes", "ModelAveragedNB",
                                            "BMANB"]
    for r in rows:
        assert 0.6 < r["accuracy"] <= 1.0
        assert math.isfinite(r["log loss"]) and r["log loss"] > 0
        assert 0.0 <= r["ECE"] <= 1.0
        assert r["records/s"] > 0


def test_demo_command_line_prints_the_table():
    command = [sys.executable, "-m", "onlinebma", "demo", "--limit", "300", "--no-progress"]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert "ModelAveragedNB" in out and "records/s" in out
    assert "class prior" in out and "ECE" in out and "overconfident" in out


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(script, tmp_path):
    result = subprocess.run([sys.executable, str(script), "400"], cwd=tmp_path,
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
