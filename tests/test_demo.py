"""`python -m dflow.demo` at a tiny size: it runs, prints its figures and passes its numpy check."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_demo_runs_and_checks(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "dflow.demo", "--mb", "2", "--chunk-mb", "0.5", "--dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "in 4 row chunks" in out
    for line in ("mean (first 5 columns)", "std  (first 5 columns)", "standardized sum:", "time:"):
        assert line in out, out
    assert "check against numpy" in out and ": OK" in out, out
    assert "100% Completed" in out, out  # the progress bar ran
