"""Every code block of the user guide runs, as a user would paste it."""

import pathlib
import re

import pytest

GUIDE = pathlib.Path(__file__).parents[1] / "docs" / "guide.md"
BLOCKS = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)


def test_the_guide_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_guide_code_block_runs(block):
    exec(compile(block, str(GUIDE), "exec"), {})


@pytest.mark.slow
@pytest.mark.experiments
def test_guide_experiment_quick_run(tmp_path):
    """The command behind the guide's numbers runs and fills its table for every learner."""
    from experiments import guide

    table = guide.run(quick=True, out=tmp_path, show=False)["tables"]["guide"]
    assert len(table) == 3 * len(guide.LEARNERS)
    assert table.drop(columns=["stream", "learner"]).notna().all().all()
    assert ((table["accuracy"] >= 0) & (table["accuracy"] <= 1)).all()
    text = (tmp_path / "results" / "guide.md").read_text()
    assert "[start:table]" in text and "[end:table]" in text
