"""tools/gpu_check.sh and benchmarks/bench_gpu.py on a machine without a GPU: the script that a GPU
machine runs in one go is itself tested here in its dry mode (GPU parts skipping or self-tested on
numpy), so a device session spends its minutes on the GPU, not on the script's bugs."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _has_gpu():
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - no cupy, no driver: no GPU
        return False


def test_gpu_check_dry_writes_every_log(tmp_path):
    out = tmp_path / "out"
    env = dict(os.environ, PYTHON=sys.executable, GPU_CHECK_BENCH_ARGS="--only chain",
               GPU_CHECK_SITE=str(tmp_path / "site"))
    proc = subprocess.run(["bash", str(ROOT / "tools" / "gpu_check.sh"), "--dry", str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    names = {p.name for p in out.iterdir()}
    assert {"summary.log", "env.log", "install.log", "pytest.log", "bench.log", "RESULTS_section.md"} <= names
    assert len(names) <= 8  # the device tool brings back at most 8 files
    summary = (out / "summary.log").read_text()
    assert "pytest" in summary and "bench_gpu.py: exit 0" in summary and "exit 0" in summary.splitlines()[-1]
    assert "dflow" in (out / "env.log").read_text()
    section = (out / "RESULTS_section.md").read_text()
    assert "## bench_gpu" in section and "a) 100 elementwise ops" in section
    if not _has_gpu():
        assert "self-test on numpy" in section and "dflow-cpu:chain" in section


def test_gpu_check_usage():
    proc = subprocess.run(["bash", str(ROOT / "tools" / "gpu_check.sh")], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "usage" in proc.stderr


def test_bench_gpu_without_gpu_says_so_in_one_line():
    if _has_gpu():
        pytest.skip("a GPU is here")
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_gpu.py")], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0
    assert proc.stdout.strip().count("\n") == 0 and "no GPU here" in proc.stdout


@pytest.mark.slow
def test_bench_gpu_quick_runs_every_section(tmp_path):
    results = tmp_path / "RESULTS.md"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_gpu.py"), "--quick", "--record",
                           "--results", str(results)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = results.read_text()
    for header in ("a) 100 elementwise ops", "b) 512×512 float32 matmul", "b) LeNet training step",
                   "c) out of core", "d) dflow on the CPU vs on the GPU"):
        assert header in text
    cpu_rows = [line for line in text.splitlines() if line.startswith("| dflow-cpu:")]
    assert len(cpu_rows) == 4 and not any("FAILED" in line for line in cpu_rows), cpu_rows
