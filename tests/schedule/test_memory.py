"""Memory projection, budgets, explain(), and bounded memory over data larger than the budget."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import zarr

import dflow as tf

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def data(tmp_path):
    X = np.random.default_rng(0).random((4000, 50)).astype("f4")
    z = zarr.create_array(str(tmp_path / "x.zarr"), shape=X.shape, chunks=(500, 50), dtype="f4")
    z[:] = X
    return X, str(tmp_path / "x.zarr")


def _standardize(path):
    x = tf.io.read_zarr(path)
    m = tf.reduce_mean(x, 0)
    sd = tf.sqrt(tf.reduce_mean(tf.square(x - m), 0))
    return x, m, sd, (x - m) / sd


def test_projection_matches_measured_chunks(data):
    X, path = data
    _, _, _, z = _standardize(path)
    out = tf.reduce_sum(z * 2.0, axis=1)
    s = tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="64MB")
    plan, _ = s._plan_for(out, None)
    sizes = []

    from dask.callbacks import Callback

    class Record(Callback):
        def _posttask(self, key, result, dsk, state, id):
            if isinstance(result, np.ndarray):
                sizes.append(result.nbytes)

    with Record():
        got = s.run(out)
    np.testing.assert_allclose(got, ((X - X.mean(0)) / X.std(0) * 2).sum(1), rtol=1e-4, atol=1e-4)
    chunk = 500 * 50 * 4
    fused = [t for t in plan.memory.tasks if t.op_type == "fused"]
    assert fused and max(t.output for t in fused) == chunk
    assert max(t.inputs for t in fused) >= chunk
    # no task produced a result larger than the largest projected output
    assert max(sizes) <= max(t.output for t in plan.memory.tasks)


def test_budget_refuses_a_plan_whose_task_cannot_fit(data):
    _, path = data
    _, _, _, z = _standardize(path)
    with pytest.raises(tf.errors.ResourceExhaustedError, match=r"op '.*' needs a projected .* budget .* chunks about"):
        tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="100kB").run(tf.reduce_sum(z))


def test_budget_caps_concurrency_instead_of_refusing(data):
    X, path = data
    _, _, _, z = _standardize(path)
    s = tf.Session(scheduler="threads", small_plan_bytes=0, num_workers=2, memory_budget=int(1.5 * 3 * 500 * 50 * 4))
    plan, _ = s._plan_for(tf.reduce_sum(z), None)
    assert plan.num_workers == 1
    assert s.run(tf.reduce_sum(z)) == pytest.approx(0.0, abs=1e-2)


def test_explain_reports_stages_and_peak(data):
    _, path = data
    _, m, sd, z = _standardize(path)
    s = tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="2MB")
    text = s.explain(tf.io.write_zarr(z, os.path.join(os.path.dirname(path), "out.zarr")))
    assert "stage 0: computes Mean:0" in text and "projected peak" in text and "budget: 1.9 MiB" in text
    assert "mode: in-process" in tf.Session().explain(tf.constant(1.0) + 1.0)


def test_count_tasks_is_what_the_scheduler_runs(data):
    """count_tasks (what a progress bar is sized by) equals the tasks dask's local scheduler runs:
    placeholders filled per run are data, not tasks."""
    from dask.callbacks import Callback

    _, path = data
    _, m, sd, z = _standardize(path)
    s = tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="1MB")
    fetch = tf.reduce_sum(z)
    ran = []
    with Callback(posttask=lambda *a: ran.append(1)):
        s.run(fetch)
    assert s.count_tasks(fetch) == len(ran) > 0
    assert tf.Session().count_tasks(tf.constant(1.0) + 1.0) == 0  # in process: no tasks


def test_staged_plan_equals_unbounded_and_numpy(data, any_mode, sess_factory):
    X, path = data
    _, m, sd, z = _standardize(path)
    fetches = [m, sd, tf.reduce_sum(z, axis=0)]
    staged = tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="1MB")
    plan, _ = staged._plan_for(fetches, None)
    # one stage computes the mean and the std's partial moments (one read of X), the final one Z
    assert len(plan.stages) == 1 and len(plan.stages[0].slots) == 2
    a = staged.run(fetches)
    b = sess_factory(any_mode).run(fetches)
    for u, v in zip(a, b):  # float32 sums of 4000 values near zero: absolute tolerance
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=5e-2)
    np.testing.assert_allclose(a[0], X.mean(0), rtol=1e-5)
    np.testing.assert_allclose(a[1], X.std(0), rtol=1e-4)


CHILD = textwrap.dedent("""
    import json, resource, sys, numpy as np
    import dflow as tf
    path, out, budget, run = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "run"
    x = tf.io.read_zarr(path)
    m = tf.reduce_mean(x, 0)
    sd = tf.sqrt(tf.reduce_mean(tf.square(x - m), 0))
    w = tf.io.write_zarr((x - m) / sd, out, overwrite=True)
    s = tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget=budget)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    summary = s.run(w) if run else None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"base_kb": base, "peak_kb": peak, "bytes": summary and summary["bytes"]}))
""")


def _child(path, out, budget, run):
    env = dict(os.environ, PYTHONPATH=REPO)
    res = subprocess.run([sys.executable, "-c", CHILD, path, out, budget, "run" if run else "build"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_standardize_larger_than_budget_has_bounded_rss(tmp_path):
    """A 160 MB dataset standardized and written with a 32 MB budget: RSS grows by a small
    fraction of the data (the statistics and transform passes re-read X instead of holding it)."""
    n, d = 200_000, 200
    path = str(tmp_path / "big.zarr")
    z = zarr.create_array(path, shape=(n, d), chunks=(10_000, d), dtype="f4")
    rng = np.random.default_rng(1)
    for i in range(0, n, 10_000):
        z[i:i + 10_000] = rng.standard_normal((10_000, d), dtype=np.float32) * 3 + 1
    data_mb = n * d * 4 / 2**20
    out = str(tmp_path / "z.zarr")
    res = _child(path, out, "32MB", True)
    growth_mb = (res["peak_kb"] - res["base_kb"]) / 1024
    assert res["bytes"] == n * d * 4
    assert growth_mb < 0.35 * data_mb, f"RSS grew {growth_mb:.0f} MB for a {data_mb:.0f} MB dataset"
    zz = zarr.open_array(out)[:20_000]
    assert abs(float(zz.mean())) < 0.05 and abs(float(zz.std()) - 1) < 0.05
