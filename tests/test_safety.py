"""Small safety items: bundled networks by name only, a separate reader
for a user's own file, and the README's word on thread safety."""

from __future__ import annotations

import gzip
import pathlib

import pytest

from onlinebma import datasets


@pytest.fixture(scope="module")
def asia():
    pytest.importorskip("pgmpy")  # reading networks needs the optional dependency pgmpy
    return datasets.load_network("asia")


@pytest.mark.parametrize("name", [
    "../data/asia",  # a bundled file reached through a relative path
    str(datasets.DATA / "asia"),  # an absolute path
    "../../../../../../etc/hostname",
    "asia.bif.gz",
    "",
    None,
    ["asia"],
])
def test_load_network_accepts_bundled_names_only(name):
    """``../..`` and absolute paths were joined to the data folder and read if they existed."""
    with pytest.raises((TypeError, ValueError), match="network"):
        datasets.load_network(name)


@pytest.mark.slow  # pgmpy takes seconds to import and to parse even ASIA
def test_bundled_networks_load_by_name(asia):
    assert datasets.networks() == ("alarm", "asia", "hepar2")
    assert len(asia.nodes()) == 8


@pytest.mark.slow
@pytest.mark.parametrize("compressed", [False, True])
def test_read_network_reads_a_users_own_bif_file(tmp_path, compressed, asia):
    text = gzip.open(datasets.DATA / "asia.bif.gz").read()
    path = tmp_path / ("mine.bif.gz" if compressed else "mine.bif")
    path.write_bytes(gzip.compress(text) if compressed else text)
    mine = datasets.read_network(str(path) if compressed else path)  # a str or a Path
    assert sorted(mine.nodes()) == sorted(asia.nodes())
    assert sorted(mine.edges()) == sorted(asia.edges())


def test_read_network_names_a_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing.bif"):
        datasets.read_network(tmp_path / "nothing.bif")


def test_readme_says_which_objects_are_not_thread_safe():
    readme = (pathlib.Path(__file__).parents[1] / "README.md").read_text()
    assert "## Thread safety" in readme
    section = readme.split("## Thread safety", 1)[1].split("\n## ", 1)[0]
    assert "not thread-safe" in section and "MDLDiscretizer" in section and "lock" in section
