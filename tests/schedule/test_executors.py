"""Executors: a session-owned LocalCluster (scheduler="distributed") gets its memory limits from the
session's budget and is closed with the session; the processes scheduler's pool is shared by the
process's Sessions and replaced when a worker dies."""

import os
import signal
import time

import numpy as np
import pytest

import dflow as tf
from dflow.errors import AbortedError, CancelledError, FailedPreconditionError


def test_owned_local_cluster_limits_workers_to_the_budget():
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.reduce_sum(x * 2.0, 0)
    s = tf.Session(scheduler="distributed", memory_budget="1GB", num_workers=2)
    try:
        ex = s._executor
        limits = [w["memory_limit"] for w in ex.client.scheduler_info()["workers"].values()]
        assert limits == [500_000_000, 500_000_000]
        value = np.arange(40, dtype=np.float32).reshape(10, 4)
        np.testing.assert_allclose(s.run(y, {x: value}), value.sum(0) * 2)
    finally:
        s.close()
    assert ex.cluster is None and ex.client.status == "closed"


def _pool_of(sess):
    (pool,) = sess._executor._pools.values()
    return pool


def test_sessions_share_one_process_pool_and_a_dead_worker_is_replaced():
    x = tf.placeholder(tf.float32, [6])
    y = tf.reduce_sum(x * 2.0)
    v = np.arange(6, dtype=np.float32)
    with tf.Session(scheduler="processes", small_plan_bytes=0, num_workers=2) as s1:
        assert s1.run(y, {x: v}) == 30.0
        pool = _pool_of(s1)
        pids = set(pool._processes)
    with pytest.raises(FailedPreconditionError, match="closed Session"):
        s1.run(y, {x: v})
    t0 = time.perf_counter()
    with tf.Session(scheduler="processes", small_plan_bytes=0, num_workers=2) as s2:
        assert s2.run(y, {x: v}) == 30.0  # no new workers to spawn: the closed session's pool
        assert _pool_of(s2) is pool and set(pool._processes) == pids
        assert time.perf_counter() - t0 < 30  # (a sanity bound, not a timing test)
        os.kill(next(iter(pids)), signal.SIGKILL)
        deadline = time.monotonic() + 30
        while not pool._broken and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pool._broken
        try:  # the run that meets the broken pool may fail; the session itself stays usable
            s2.run(y, {x: v})
        except AbortedError as e:
            assert "worker process of the processes scheduler died" in str(e)
        assert s2.run(y, {x: v}) == 30.0
        fresh = _pool_of(s2)
        assert fresh is not pool and not set(fresh._processes) & pids
    with tf.Session(scheduler="processes", small_plan_bytes=0, num_workers=2) as s3:
        assert s3.run(y, {x: v}) == 30.0 and _pool_of(s3) is fresh


def test_closing_a_session_cancels_only_its_own_runs_on_the_shared_pool():
    x = tf.placeholder(tf.float32, [6])
    y = tf.reduce_sum(x * 2.0)
    v = np.arange(6, dtype=np.float32)
    other = tf.Session(scheduler="processes", small_plan_bytes=0, num_workers=2)
    s = tf.Session(scheduler="processes", small_plan_bytes=0, num_workers=2)
    try:
        assert s.run(y, {x: v}) == 30.0 and other.run(y, {x: v}) == 30.0
        ex = s._executor
        s.close()
        with pytest.raises(CancelledError, match="closed"):  # a run that reaches the closed executor
            ex.get({"k": 1}, ["k"])
        assert other.run(y, {x: v}) == 30.0
    finally:
        other.close()


def test_a_new_stderr_gets_new_workers_whose_prints_land_there(tmp_path):
    """Workers inherit the parent's stdout and stderr when spawned: a Session started after stderr
    changed does not reuse the pool spawned before (a tf.Print in a task writes to the new file),
    and the old pool, used by nobody, is shut down."""
    x = tf.placeholder(tf.float32, [3])
    y = tf.reduce_sum(tf.Print(x, [x], "sum of: "))
    v = np.array([1, 2, 3], np.float32)
    with tf.Session(scheduler="processes", small_plan_bytes=0, num_workers=2) as s1:
        assert s1.run(y, {x: v}) == 6.0
        old = _pool_of(s1)
    log = tmp_path / "stderr.txt"
    saved = os.dup(2)
    try:
        with open(log, "w") as f:
            os.dup2(f.fileno(), 2)
        with tf.Session(scheduler="processes", small_plan_bytes=0, num_workers=2) as s2:
            assert s2.run(y, {x: v}) == 6.0
            new = _pool_of(s2)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    assert new is not old and old._shutdown_thread
    assert "sum of: [1 2 3]" in log.read_text()


def test_the_processes_scheduler_runs_a_chunks_tasks_together(tmp_path):
    """Every task's result goes back to the session's process on the processes scheduler: a chunk's
    chain (read, conv, pool, sum) runs as one task there, as on a cluster, not one per op."""
    import zarr
    from dask.callbacks import Callback

    class Count(Callback):
        def __init__(self):
            super().__init__()
            self.n = 0

        def _posttask(self, key, result, dsk, state, worker_id):
            self.n += 1

    rng = np.random.default_rng(0)
    xv = rng.standard_normal((8, 12, 12, 2)).astype(np.float32)
    z = zarr.create_array(str(tmp_path / "x.zarr"), shape=xv.shape, chunks=(2, 12, 12, 2), dtype="float32")
    z[:] = xv
    w = rng.standard_normal((3, 3, 2, 4)).astype(np.float32)
    x = tf.io.read_zarr(str(tmp_path / "x.zarr"))
    y = tf.nn.max_pool(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    total = tf.reduce_sum(tf.square(y), axis=[1, 2, 3])
    got = {}
    for sched in ("threads", "processes"):
        with tf.Session(scheduler=sched, small_plan_bytes=0) as s, Count() as count:
            got[sched] = (s.run(total), count.n)
    np.testing.assert_allclose(got["processes"][0], got["threads"][0], rtol=1e-6)
    assert got["processes"][1] < got["threads"][1], got
    assert got["processes"][1] <= 4 + 3, got  # a task per chunk, and a few to put the result together
