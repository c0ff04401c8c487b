"""Every ```python block of README.md runs, each on a fresh default graph."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(), flags=re.S | re.M)


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.program
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index):
    code = compile(BLOCKS[index], f"README.md[python block {index}]", "exec")
    exec(code, {"__name__": f"readme_block_{index}"})


def test_every_name_the_coverage_list_gives_exists():
    # the README's "What dflow covers" list stays true: each `tf.name` it gives is there
    import dflow as tf

    text = README.read_text()
    section = text[text.index("## What dflow covers"):text.index("\nNot yet:")]
    names = re.findall(r"`(tf\.[A-Za-z_.]+)`", section)
    assert len(names) > 50
    missing = []
    for name in names:
        obj = tf
        for part in name.split(".")[1:]:
            obj = getattr(obj, part, None)
        if obj is None:
            missing.append(name)
    assert not missing, f"README lists names dflow lacks: {missing}"
