"""benchmarks/workload.py on a tiny workload: dflow agrees with hand-written dask.array and numpy."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import bench_scale, bench_workload, workload

ROOT = Path(__file__).resolve().parents[1]
GB, D, CHUNK_ROWS = 0.0008, 40, 1500  # 5,000 rows in 4 chunks (the last one short)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("workload")
    meta = workload.generate(folder, GB, d=D, chunk_rows=CHUNK_ROWS)
    assert meta == {"n": 5000, "d": D, "chunk_rows": CHUNK_ROWS, "seed": 0}
    return folder


@pytest.fixture(scope="module")
def dask_result(data_dir):
    return workload.run_engine("dask", data_dir)


def test_generate_is_reused_and_deterministic(data_dir):
    import zarr

    x = zarr.open_array(str(data_dir / "X.zarr"))
    y = zarr.open_array(str(data_dir / "y.zarr"))
    assert x.shape == (5000, D) and x.chunks == (CHUNK_ROWS, D) and x.dtype == np.float32
    assert y.shape == (5000, 1) and set(np.unique(y[...])) == {0.0, 1.0}
    stamp = (data_dir / "X.zarr").stat().st_mtime_ns
    workload.generate(data_dir, GB, d=D, chunk_rows=CHUNK_ROWS)  # same parameters: not rewritten
    assert (data_dir / "X.zarr").stat().st_mtime_ns == stamp
    # column j has mean in [-5, 5] and std in [0.5, 3], so standardizing matters
    np.testing.assert_allclose(x[...].mean(axis=0)[[0, -1]], [-5, 5], atol=0.1)


@pytest.mark.parametrize("engine", ["dflow", "numpy", "cubed"])
def test_engine_matches_dask(engine, data_dir, dask_result):
    if engine == "cubed":
        pytest.importorskip("cubed")
    got = workload.run_engine(engine, data_dir)
    assert got["engine"] == engine and got["n"] == 5000 and got["d"] == D
    assert len(got["losses"]) == workload.STEPS and len(got["w"]) == D
    np.testing.assert_allclose(got["losses"], dask_result["losses"], atol=1e-5)
    np.testing.assert_allclose(got["w"] + [got["b"]], dask_result["w"] + [dask_result["b"]], atol=1e-3)
    assert got["losses"][0] == pytest.approx(np.log(2), abs=1e-6)  # w = 0, b = 0: every p is 1/2
    assert got["losses"][0] > got["losses"][1] > got["losses"][2]
    assert got["time_s"] == pytest.approx(got["standardize_s"] + got["train_s"])
    assert not list(data_dir.glob("out-*"))  # each run removes its Z


def test_dflow_matches_float64_numpy_reference(data_dir):
    from dflow.demo import numpy_reference

    got = workload.run_engine("dflow", data_dir)
    losses, w, b = numpy_reference(str(data_dir / "X.zarr"), str(data_dir / "y.zarr"))
    np.testing.assert_allclose(got["losses"], losses, atol=1e-5)
    np.testing.assert_allclose(got["w"], w.ravel(), atol=1e-4)
    assert got["b"] == pytest.approx(b, abs=1e-4)


def test_command_line_prints_one_json_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.workload", "--engine", "dflow", "--gb", str(GB), "--d", str(D),
         "--chunk-rows", str(CHUNK_ROWS), "--dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    assert figures["engine"] == "dflow" and figures["peak_rss_mb"] > 0
    assert len(figures["losses"]) == workload.STEPS and len(figures["w"]) == D


def test_bench_table_and_capped_run(tmp_path, capsys):
    bench_workload.main(["--gb", str(GB), "--d", str(D), "--chunk-rows", str(CHUNK_ROWS),
                         "--engines", "dflow,dask", "--dir", str(tmp_path), "--cap-gb", "0.05"])
    out = capsys.readouterr().out
    assert "| dflow (threads)" in out and "| dask.array (threads)" in out
    assert "target 0.0008 GB: dflow w equal to dask.array's to 0.001 (max diff" in out
    assert "w equal" in out and "MISSED" not in out.split("w equal")[1].splitlines()[0]
    # 50 MB of address space is too little for any Python with numpy: both fail, and say so
    capped = out.split("larger than the memory limit")[1]
    assert capped.count("| failed ") == 2, capped


@pytest.mark.timeout(600)
def test_bench_scale_table_floor_and_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    plot = tmp_path / "scale.png"
    bench_scale.main(["--gb", str(GB), "--d", str(D), "--chunk-rows", str(CHUNK_ROWS), "--dir", str(tmp_path / "data"),
                      "--plot", str(plot)])
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.startswith(f"| {GB:g} GB"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "5,000" and cells[3].endswith(" s") and cells[6].endswith(" s"), row  # time and floor
    assert cells[7].endswith("×") and float(cells[8]) > 0 and cells[-1] == "", row  # ÷ floor, peak RSS, no error
    assert "targets at ≥ 32 GB: not measured" in out
    assert plot.stat().st_size > 0
    assert sorted(p.name for p in (tmp_path / "data" / f"gb{GB:g}").iterdir()) == ["X.zarr", "workload.json", "y.zarr"]
