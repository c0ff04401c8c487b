"""Lazy out-of-core eager tensors: a Zarr array stays a plan until its value is asked for."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import zarr

import dflow as tf
import dflow.contrib.eager as tfe

ROOT = Path(__file__).resolve().parents[2]


def _zarr(path, a, chunks):
    z = zarr.open_array(str(path), mode="w", shape=a.shape, chunks=chunks, dtype=a.dtype)
    z[:] = a
    return str(path)


def test_ops_on_a_zarr_array_build_a_plan_until_the_value_is_needed(eager, tmp_path):
    a = np.random.default_rng(0).random((600, 5)).astype(np.float32)
    x = tf.io.read_zarr(_zarr(tmp_path / "x.zarr", a, (100, 5)))
    assert isinstance(x, tfe.LazyTensor) and x.shape == (600, 5) and x.dtype == tf.float32
    m = tf.reduce_mean(x, 0)
    centered = (x - m) * tf.constant(2.0)
    assert m.is_lazy and centered.is_lazy
    np.testing.assert_allclose(m.numpy(), a.mean(0), rtol=1e-5)
    assert not m.is_lazy
    np.testing.assert_allclose(tf.reduce_sum(centered ** 2, 0).numpy(), 4 * ((a - a.mean(0)) ** 2).sum(0), rtol=1e-4)
    assert "shape=(5,)" in str(m)
    if float(tf.reduce_max(x)) > 0.5:  # a Python branch materializes
        pass
    v = tfe.Variable(tf.zeros([5]))
    v.assign(m)  # an assign takes the value whole
    np.testing.assert_allclose(v.numpy(), a.mean(0), rtol=1e-5)


def test_a_lazy_value_written_to_zarr_in_eager_mode(eager, tmp_path):
    a = np.arange(40, dtype=np.float64).reshape(8, 5)
    x = tf.io.read_zarr(_zarr(tmp_path / "x.zarr", a, (2, 5)))
    tf.io.write_zarr(x * 2.0, str(tmp_path / "y.zarr"))
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "y.zarr"))[:], a * 2)


CHILD = """
import resource, sys
import numpy as np
import dflow as tf
import dflow.contrib.eager as tfe
import dflow.config
dflow.config.set_default_session_settings(memory_budget="32MB")
tfe.enable_eager_execution()
x = tf.io.read_zarr(sys.argv[1])
m = tf.reduce_mean(x, 0)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
value = m.numpy()
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
np.save(sys.argv[2], value)
print(after - before)
"""


@pytest.mark.slow
def test_a_lazy_reduction_over_a_zarr_array_keeps_rss_bounded(tmp_path):
    rows, cols, chunk = 8000, 2500, 400  # 80 MB of float32, in 4 MB chunks; budget 32 MB
    z = zarr.open_array(str(tmp_path / "big.zarr"), mode="w", shape=(rows, cols), chunks=(chunk, cols),
                        dtype="float32")
    rng = np.random.default_rng(0)
    total = np.zeros(cols)
    for i in range(0, rows, chunk):
        block = rng.random((chunk, cols), dtype=np.float32)
        z[i:i + chunk] = block
        total += block.sum(0, dtype=np.float64)
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(CHILD))
    out = tmp_path / "mean.npy"
    r = subprocess.run([sys.executable, str(script), str(tmp_path / "big.zarr"), str(out)], capture_output=True,
                       text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=300)
    assert r.returncode == 0, r.stderr
    grown_mb = float(r.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(np.load(out), total / rows, rtol=1e-4)
    assert grown_mb < 48, f"peak RSS grew by {grown_mb:.0f} MB for an 80 MB array under a 32 MB budget"


def test_a_dask_array_stays_lazy_in_eager_mode(eager):
    import dask.array as da

    a = np.arange(24, dtype=np.float64).reshape(6, 4)
    x = tf.convert_to_tensor(da.from_array(a, chunks=(2, 4)))
    assert isinstance(x, tfe.LazyTensor) and x.shape == (6, 4) and x.dtype == tf.float64
    s = tf.reduce_sum(x * 2.0, 1)
    assert s.is_lazy
    np.testing.assert_array_equal(s.numpy(), (a * 2).sum(1))
    y = tf.convert_to_tensor(da.from_array(a, chunks=3), dtype=tf.float32)
    assert y.dtype == tf.float32 and tf.reduce_max(y).numpy() == 23.0
