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
