"""Variables held on disk between runs (StoredValue): with a memory budget, a variable over a quarter
of it lives in a Zarr array in the session's scratch directory, is read and written chunk by chunk
by the runs, and is saved and restored by streaming: never resident as a whole."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import zarr

import dflow as tf
from dflow.errors import DataLossError, InvalidArgumentError
from dflow.storage.values import StoredValue

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHAPE = (3000, 500)  # 6 MB of float32: stored under a 16 MB budget, several 16 MiB... row chunks


def _graph(value):
    v = tf.Variable(value, name="big")
    delta = tf.placeholder(tf.float32, [SHAPE[1]])
    step = v.assign_add(v * 0.5 + delta).op
    return v, delta, step, tf.reduce_sum(v, 0)


@pytest.mark.parametrize("scheduler", ["sync", "threads", "processes"])
def test_a_stored_variable_updates_like_numpy(scheduler):
    rng = np.random.default_rng(0)
    init = rng.standard_normal(SHAPE).astype(np.float32)
    v, delta, step, colsum = _graph(init)
    with tf.Session(scheduler=scheduler, memory_budget="16MB") as s:
        s.run(v.initializer)
        assert isinstance(s.variables.values["big"], StoredValue)
        expect = init.copy()
        for _ in range(3):
            d = rng.standard_normal(SHAPE[1]).astype(np.float32)
            s.run(step, {delta: d})
            expect = expect + (expect * 0.5 + d)
        np.testing.assert_allclose(s.run(colsum), expect.sum(0), rtol=1e-4)
        np.testing.assert_allclose(s.run(v), expect, rtol=1e-5)
        store = s.variables.directory
        assert len(os.listdir(store)) == 1  # each commit deleted the value it replaced
    assert not os.path.exists(store)  # closing the session removes its scratch directory


def test_small_variables_and_unbudgeted_sessions_stay_in_memory():
    v, _, _, _ = _graph(np.zeros(SHAPE, np.float32))
    w = tf.Variable(np.zeros(10, np.float32))
    with tf.Session(scheduler="threads", small_plan_bytes=0) as s:
        s.run(tf.global_variables_initializer())
        assert isinstance(s.variables.values["big"], np.ndarray)
    with tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="16MB") as s:
        s.run(tf.global_variables_initializer())
        assert isinstance(s.variables.values[w.op.name], np.ndarray)
        assert isinstance(s.variables.values["big"], StoredValue)


def test_a_failed_run_keeps_the_old_value_and_leaves_no_array():
    init = np.ones(SHAPE, np.float32)
    v = tf.Variable(init, name="big")
    x = tf.placeholder(tf.float32, [SHAPE[1]])
    bad = v.assign(v + tf.debugging.check_numerics(tf.log(x), "log x")).op
    with tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="16MB") as s:
        s.run(v.initializer)
        with pytest.raises(InvalidArgumentError):
            s.run(bad, {x: -np.ones(SHAPE[1], np.float32)})
        assert len(os.listdir(s.variables.directory)) == 1
        np.testing.assert_array_equal(s.run(v), init)


def test_load_writes_a_large_value_to_disk():
    v = tf.Variable(np.zeros(SHAPE, np.float32), name="big")
    value = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE)
    with tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="16MB") as s:
        v.load(value, s)
        assert isinstance(s.variables.values["big"], StoredValue)
        np.testing.assert_array_equal(s.run(v), value)


@pytest.mark.parametrize("save_budget,restore_budget", [("16MB", "16MB"), ("16MB", None), (None, "16MB")])
def test_saver_streams_stored_variables(tmp_path, save_budget, restore_budget):
    init = np.random.default_rng(1).standard_normal(SHAPE).astype(np.float32)
    v = tf.Variable(init, name="big")
    b = tf.Variable(np.arange(3, dtype=np.float32), name="b")
    saver = tf.train.Saver()
    with tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget=save_budget) as s:
        s.run(tf.global_variables_initializer())
        s.run(v.assign(v * 2.0).op)
        prefix = saver.save(s, str(tmp_path / "model"), global_step=1)
    g = zarr.open_group(prefix, mode="r")  # plain Zarr: one array per variable
    np.testing.assert_array_equal(g["big"][...], init * 2)
    with tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget=restore_budget) as s:
        saver.restore(s, prefix)
        assert isinstance(s.variables.values["big"], StoredValue) == (restore_budget is not None)
        np.testing.assert_array_equal(s.run(v), init * 2)
        np.testing.assert_array_equal(s.run(b), np.arange(3))


def test_restoring_a_corrupted_stored_variable_changes_nothing(tmp_path):
    v = tf.Variable(np.ones(SHAPE, np.float32), name="big")
    saver = tf.train.Saver()
    with tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="16MB") as s:
        s.run(v.initializer)
        prefix = saver.save(s, str(tmp_path / "model"))
        s.run(v.assign(v * 3.0).op)
        arr = zarr.open_group(prefix, mode="r+")["big"]
        arr[7, 7] = 5.0  # valid Zarr data, wrong bytes: only the checksum can tell
        with pytest.raises(DataLossError, match="big"):
            saver.restore(s, prefix)
        np.testing.assert_array_equal(s.run(v)[:2, :2], 3.0)
        assert len(os.listdir(s.variables.directory)) == 1  # the partial restore was deleted


CHILD = textwrap.dedent("""
    import json, resource, sys, numpy as np
    import dflow as tf
    d, mb = sys.argv[1], int(sys.argv[2])
    rows = mb * (1 << 20) // 4000
    def peak():  # VmHWM: this process's own peak (ru_maxrss would include the forking parent's)
        try:
            with open("/proc/self/status") as f:
                return next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) // 1024
        except OSError:
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    v = tf.get_variable("big", [rows, 1000], initializer=tf.random_uniform_initializer(seed=3))
    total = tf.reduce_sum(v)
    saver = tf.train.Saver()
    with tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="64MB") as s:
        s.run(v.initializer)
        before = float(s.run(total))
        prefix = saver.save(s, d + "/model")
    with tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="64MB") as s:
        saver.restore(s, prefix)
        after = float(s.run(total))
    print(json.dumps({"peak_mb": peak(), "before": before, "after": after}))
""")


def test_save_and_restore_of_a_variable_larger_than_the_budget_stay_bounded(tmp_path):
    mb = 384  # the variable; the session's budget is 64 MB
    env = dict(os.environ, PYTHONPATH=REPO)
    res = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), str(mb)], capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["before"] == out["after"]
    assert out["peak_mb"] < 250, out  # far below the variable's 384 MiB: it was never resident
