"""`python -m dflow.demo` at a tiny size: it runs, prints its figures, plots and passes its check."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_demo_runs_and_checks(tmp_path):
    out_dir = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "dflow.demo", "--gb", "0.004", "--d", "50", "--chunk-rows", "5000",
         "--dir", str(tmp_path), "--out", str(out_dir), "--memory-budget", "64MB", "--progress"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "20,000 × 50 float32" in out and "in 4 row chunks of 5,000 rows" in out, out
    for step in (1, 2, 3):
        assert f"step {step}/3: loss" in out, out
    for line in ("time:", "peak RSS:", "memory budget: 64MB"):
        assert line in out, out
    assert "check against numpy" in out and ": OK" in out, out
    assert "100%" in out, out  # the progress bars ran to the end
    for bar in ("standardize:", "train:"):  # each bar is sized up front: it never falls back
        shown = [int(line.split("%")[0].split()[-1]) for line in re.split(r"[\r\n]", out)
                 if line.strip().startswith(bar) and "%" in line]
        assert shown and shown == sorted(shown) and shown[-1] == 100, (bar, shown)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "plot: skipped" in out
    else:
        png = out_dir / "loss.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(tmp_path.glob("tmp*")), "the data folder is removed"
    # the training's summaries, read back by TensorBoard's own reader
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    runs = list((out_dir / "logs").iterdir())
    assert len(runs) == 1 and f"tensorboard --logdir {out_dir / 'logs'}" in out, out
    acc = EventAccumulator(str(runs[0]), size_guidance={"histograms": 0})  # 0: keep every step
    acc.Reload()
    assert [e.step for e in acc.Scalars("loss")] == [0, 1, 2]
    assert [e.step for e in acc.Histograms("weights")] == [0, 1, 2] and acc.Tags()["graph"]


def test_demo_without_budget_or_progress(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "dflow.demo", "--gb", "0.001", "--d", "20", "--chunk-rows", "4000",
         "--dir", str(tmp_path), "--out", str(tmp_path), "--memory-budget", "none", "--no-progress"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "memory budget: none" in proc.stdout and "task/s" not in proc.stdout


def test_no_progress_bar_when_the_output_is_not_a_terminal(tmp_path):
    proc = subprocess.run(  # stdout is a pipe here: no bar unless asked
        [sys.executable, "-m", "dflow.demo", "--gb", "0.001", "--d", "20", "--chunk-rows", "4000",
         "--dir", str(tmp_path), "--out", str(tmp_path), "--no-check"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "task/s" not in proc.stdout and "%|" not in proc.stdout and "step 3/3: loss" in proc.stdout


def test_demo_refuses_a_budget_below_one_task(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "dflow.demo", "--gb", "0.001", "--d", "20", "--chunk-rows", "4000",
         "--dir", str(tmp_path), "--out", str(tmp_path), "--memory-budget", "100KB", "--no-progress"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "refused:" in proc.stdout and "memory budget" in proc.stdout, proc.stdout
    assert not (tmp_path / "loss.png").exists()
