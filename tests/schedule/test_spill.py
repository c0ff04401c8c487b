"""Spilling at stage boundaries: a large value that two stages read and that is costly to recompute
(a matmul, a py_func) is written to local disk by the first stage and read back by the next,
instead of being recomputed; cheap ones (a Zarr read and elementwise ops) are re-read."""

import os

import numpy as np
import pytest
import zarr

import dflow as tf
from dflow.schedule.plan import Spill


def _data(tmp_path, rows=4000, cols=50):
    X = np.random.default_rng(0).standard_normal((rows, cols)).astype("f4")
    zarr.create_array(str(tmp_path / "x.zarr"), data=X, chunks=(500, cols))
    return X, tf.io.read_zarr(str(tmp_path / "x.zarr"))


def _spills(plan):
    return [slot for st in plan.stages for slot in st.slots if isinstance(slot.tensor, Spill)]


@pytest.mark.parametrize("scheduler", ["sync", "threads", "processes"])
def test_a_costly_value_is_computed_once_and_spilled(tmp_path, scheduler):
    from dask.callbacks import Callback

    X, x = _data(tmp_path)
    W = np.random.default_rng(1).standard_normal((50, 40)).astype("f4")
    h = tf.matmul(x, W, name="costly")
    centered = h - tf.reduce_mean(h, 0)
    out = tf.reduce_sum(tf.square(centered), 0) + tf.reduce_max(centered, 0)
    ran = []

    class Count(Callback):  # local schedulers report each task they start
        def _pretask(self, key, dsk, state):
            if isinstance(key, tuple) and "costly" in str(key[0]) and len(key) == 3:
                ran.append(key)

    with tf.Session(scheduler=scheduler, memory_budget="1MB") as s:
        plan, _ = s._plan_for(out, None)
        assert len(_spills(plan)) == 1
        with Count():
            got = s.run(out)
        H = X @ W
        C = H - H.mean(0)
        np.testing.assert_allclose(got, (C ** 2).sum(0) + C.max(0), rtol=1e-3, atol=1e-3)
        assert os.listdir(s.variables.directory) == []  # the spill is deleted after the run
    if scheduler != "processes":  # (a process pool runs tasks out of this process's sight)
        assert len(ran) == len(set(ran)) == 8  # each of the 8 row chunks once: no recomputation


def test_a_matmul_result_is_spilled_and_a_zarr_read_is_not(tmp_path):
    X, x = _data(tmp_path)
    W = np.random.default_rng(1).standard_normal((50, 40)).astype("f4")
    h = tf.matmul(x, W)
    out_h = tf.reduce_sum(h - tf.reduce_mean(h, 0), 0)
    out_x = tf.reduce_sum(x * 2.0 - tf.reduce_mean(x * 2.0, 0), 0)
    with tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="1MB") as s:
        plan_h, _ = s._plan_for(out_h, None)
        plan_x, _ = s._plan_for(out_x, None)
        assert [slot.tensor.tensor for slot in _spills(plan_h)] == [h]
        assert _spills(plan_x) == []
        H = X @ W
        np.testing.assert_allclose(s.run(out_h), (H - H.mean(0)).sum(0), atol=2e-2)  # float32 sums near 0
        np.testing.assert_allclose(s.run(out_x), (X * 2 - (X * 2).mean(0)).sum(0), atol=2e-2)
        assert "spilled to disk" in s.explain(out_h)


def test_a_failed_run_deletes_its_spill(tmp_path):
    X, x = _data(tmp_path)
    W = np.ones((50, 40), np.float32)
    h = tf.matmul(x, W)
    p = tf.placeholder(tf.float32, [40])
    out = tf.reduce_sum(tf.debugging.check_numerics(tf.log(h - tf.reduce_mean(h, 0) + p), "log"), 0)
    with tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="1MB") as s:
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run(out, {p: np.full(40, -1e9, np.float32)})
        assert os.listdir(s.variables.directory) == []
