"""``python -m experiments``: the names it offers are the experiments, never helper modules."""

import importlib
import re

import pytest

from experiments import __main__ as cli


def _runnable() -> set[str]:
    """The modules that import with a callable ``run``: the experiments, found by importing."""
    names = set()
    for mod_name in cli.module_names():
        mod = importlib.import_module(f"experiments.{mod_name}")
        if callable(getattr(mod, "run", None)):
            names.add(mod_name.replace("_", "-"))
    return names


def test_the_experiments_read_from_source_are_those_that_import_with_a_run():
    assert set(cli.experiments()) == _runnable()
    assert {"peers", "scripts", "random-networks", "tan-paths"}.isdisjoint(cli.experiments())


def test_an_unknown_name_lists_only_the_experiments(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["no-such-experiment"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    listed = re.search(r"the experiments: (.*) \(python -m experiments --list\)", err).group(1)
    assert listed.split(", ") == sorted(_runnable())


def test_a_helper_module_is_named_as_one():
    with pytest.raises(ValueError, match="experiments.peers is a helper module"):
        cli.load("peers")
    assert cli.load("tan").__name__ == "experiments.tan"
