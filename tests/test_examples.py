"""Every examples/*.py runs to completion in a fresh interpreter (each example asserts its own
results), so the examples stay true to the library; in every `program` mode (tests/conftest.py),
the mode passed on to the interpreter."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import program_mode_command

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def test_there_are_examples():
    names = {p.name for p in EXAMPLES}
    assert {"custom_op_softmax_xent.py", "make_parallel.py"} <= names


# word2vec (300 runs) and the LSTM example (30 runs of a 7-step static_rnn, then a dynamic_rnn)
# cost 20-35 s on dask-processes, where every run ships its task graph to the pool: those two run
# there with -m slow (their sync and threads runs stay in the default suite)
@pytest.mark.program(slow={"word2vec-dask-processes": "300 runs on the process pool",
                           "lstm_bit_majority-dask-processes": "an LSTM's graph shipped 30 times"})
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(path, program_mode):
    # PYTHONPATH: the examples import this checkout's dflow, whatever the interpreter has installed
    env = dict(os.environ, PYTHONWARNINGS="ignore",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run(program_mode_command(program_mode, path), cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, f"{path.name} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    assert proc.stdout.strip(), f"{path.name} printed nothing"
