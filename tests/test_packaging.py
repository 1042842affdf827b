"""What a plain (non-editable) install ships and declares.

CI (``.ci/run``) also builds the wheel, installs it into a fresh virtual environment and runs
``python -m onlinebma demo`` from outside the checkout; these tests catch the same mistakes in
seconds, without building anything.
"""

from __future__ import annotations

import fnmatch
import pathlib
import re
import tomllib

ROOT = pathlib.Path(__file__).parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_bundled_data_file_is_package_data():
    """catalog.json was left out of the wheel: no bundled dataset loaded after ``pip install .``."""
    data = ROOT / "onlinebma" / "datasets" / "data"
    globs = PYPROJECT["tool"]["setuptools"]["package-data"]["onlinebma.datasets"]
    files = [p.relative_to(data.parent).as_posix() for p in data.rglob("*") if p.is_file()]
    assert "data/catalog.json" in files
    missing = [f for f in files if not any(fnmatch.fnmatch(f, g) for g in globs)]
    assert missing == []


def test_pandas_is_a_declared_runtime_dependency():
    """learn_many, predict_proba_many, fit, predict_proba and to_frame import pandas."""
    names = [re.match(r"[A-Za-z0-9_.-]+", d).group() for d in PYPROJECT["project"]["dependencies"]]
    assert "pandas" in names


def test_the_python_requirement_is_river_s():
    """river 0.26 needs Python 3.11; pyproject and README say the same."""
    assert PYPROJECT["project"]["requires-python"] == ">=3.11"
    readme = (ROOT / "README.md").read_text()
    assert "Python ≥ 3.11" in readme and "3.10" not in readme
