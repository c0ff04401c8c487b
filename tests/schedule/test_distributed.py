"""The cluster path (issue 14) on a real LocalCluster of two worker processes on loopback:

- a training step is one graph submitted and one gather (scheduler calls counted on the client's
  own connection: its round trips and its one-way messages);
- a committed value is held by the cluster as data, cut from its lineage: it never recomputes from
  its inputs (a Zarr input changed after the commit does not change it);
- worker loss: a value the cluster lost is re-shipped from the session's host copy, or a read
  raises UnavailableError naming the variable and how to recover; a kill mid-run completes the
  run with correct values;
- closing a Session releases its values on the cluster; a run that cannot progress (every worker
  paused) ends with a ResourceExhaustedError instead of hanging.

The cluster is this module's own (its workers are killed here), started and closed by a fixture.
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import sys
import threading
import time

import dask
import numpy as np
import pytest

import dflow as tf
from dflow import errors
from dflow.storage import values as values_mod

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def cluster_client():
    from distributed import Client, LocalCluster

    # no memory pause: the stall test pauses workers by hand (their memory monitor would unpause
    # them); nothing here comes near a memory limit. A killed worker may take a while to restart on
    # a busy machine: the cluster must not give up on it (lost-worker-timeout, 15 s by default).
    with dask.config.set({"distributed.worker.memory.pause": False,
                          "distributed.deploy.lost-worker-timeout": "300s"}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=None, silence_logs=50)
        client = Client(cluster)
        try:
            yield client
        finally:
            client.close()
            cluster.close()


@pytest.fixture
def client(cluster_client):
    """The module's client, with both workers up (a killed worker is restarted by its nanny)."""
    cluster_client.wait_for_workers(2, timeout=60)
    yield cluster_client
    cluster_client.wait_for_workers(2, timeout=60)


def _kill(client, address):
    """Kills the worker process at `address` with SIGKILL (its nanny starts a new one, empty)."""
    pid = client.run(os.getpid, workers=[address])[address]
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while address in client.scheduler_info()["workers"] and time.monotonic() < deadline:
        time.sleep(0.05)


def _holders(client, value):
    """Worker addresses holding the chunks of a session's RemoteValue."""
    who = client.who_has(value.held())
    return sorted({w for ws in who.values() for w in ws})


class CallCounter:
    """Counts this client's calls to the scheduler as they happen: round trips (its rpc) and one-way
    messages on its stream (by op). Wraps the client's real connection objects; nothing is faked."""

    def __init__(self, client):
        self.client = client
        self.rpc = collections.Counter()
        self.stream = collections.Counter()

    def __enter__(self):
        client, counter = self.client, self
        self._rpc, self._send = client.scheduler, client.scheduler_comm.send

        class CountingRpc:
            def __getattr__(self, op):
                counter.rpc[op] += 1
                return getattr(counter._rpc, op)

        def send(msg):
            for m in msg if isinstance(msg, list) else [msg]:
                counter.stream[m.get("op")] += 1
            return counter._send(msg)

        client.scheduler = CountingRpc()
        client.scheduler_comm.send = send
        return self

    def __exit__(self, *exc):
        self.client.scheduler = self._rpc
        self.client.scheduler_comm.send = self._send


def _mlp():
    """A 2-layer MLP trained by Adam: (x, y, train, loss, variables)."""
    x = tf.placeholder(tf.float32, [None, 8])
    y = tf.placeholder(tf.float32, [None, 1])
    h = tf.layers.dense(x, 16, activation=tf.nn.relu)
    out = tf.layers.dense(h, 1)
    loss = tf.reduce_mean(tf.square(out - y))
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    return x, y, train, loss


def _batch(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((32, 8)).astype(np.float32), rng.standard_normal((32, 1)).astype(np.float32)


def _train(sess, x, y, train, loss, steps):
    X, Y = _batch()
    return [float(sess.run([train, loss], {x: X, y: Y})[1]) for _ in range(steps)]


# ---- one round trip per step -------------------------------------------------------------------
@pytest.mark.parametrize("one_task", [True, False])
def test_a_training_step_is_one_submission_and_one_gather(client, one_task, monkeypatch):
    from dflow.schedule import compiler

    if not one_task:  # the graph as a task per op/chunk: still one submission, one gather
        monkeypatch.setattr(compiler, "ONE_TASK_BYTES", 0)
    tf.set_random_seed(1)
    x, y, train, loss = _mlp()
    with tf.Session(scheduler=client) as s:
        s.run(tf.global_variables_initializer())
        _train(s, x, y, train, loss, 2)  # compiled, values on the cluster
        steps = 5
        with CallCounter(client) as calls:
            losses = _train(s, x, y, train, loss, steps)
    calls.rpc.pop("identity", None)  # the client's own timer refreshing its scheduler_info (every 2 s)
    assert dict(calls.rpc) == {"gather": steps}, calls.rpc  # the only round trips: one gather a step
    assert calls.stream["update-graph"] == steps, calls.stream  # one graph submitted a step
    assert not {"scatter", "who_has", "nthreads", "ncores"} & (set(calls.rpc) | set(calls.stream))
    assert losses[-1] < losses[0]


def test_cluster_training_matches_threads(client):
    tf.set_random_seed(3)
    x, y, train, loss = _mlp()
    init = tf.global_variables_initializer()
    results = []
    for kw in ({"scheduler": client}, {"scheduler": "threads"}):
        with tf.Session(**kw) as s:
            s.run(init)
            results.append((_train(s, x, y, train, loss, 4), s.run(tf.trainable_variables())))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# ---- committed values are data, not lineage ----------------------------------------------------
@pytest.mark.parametrize("host_copy", [True, False])
def test_a_committed_value_never_recomputes_from_a_changed_input(client, tmp_path, host_copy, monkeypatch):
    import zarr

    if not host_copy:
        monkeypatch.setattr(values_mod, "HOST_COPY_BYTES", 0)
    path = str(tmp_path / "x.zarr")
    zarr.create_array(path, shape=(10,), chunks=(5,), dtype="float32")[:] = np.full(10, 100.0, np.float32)
    x = tf.io.read_zarr(path)
    v = tf.Variable(np.zeros(10, np.float32), name="v")
    set_v = tf.assign(v, x)
    with tf.Session(scheduler=client, small_plan_bytes=0) as s:
        s.run(v.initializer)
        s.run(set_v)
        assert np.sum(s.run(v)) == 1000.0
        zarr.open_array(path, mode="r+")[:] = np.full(10, 500.0, np.float32)  # the input changes
        for address in _holders(client, s.variables.get("v")):
            _kill(client, address)
        client.wait_for_workers(2, timeout=60)
        if host_copy:
            assert np.sum(s.run(v)) == 1000.0  # the committed value, re-shipped from the session's copy
            assert np.sum(s.run(v + 1.0)) == 1010.0
        else:
            with pytest.raises(errors.UnavailableError) as info:
                s.run(v)
            assert "'v'" in str(info.value) and "checkpoint" in str(info.value)
            with pytest.raises(errors.UnavailableError):
                v.eval(s)
            s.run(v.initializer)  # the way back the message names: a new value
            assert np.sum(s.run(v)) == 0.0


def test_worker_loss_after_commit_keeps_the_value(client):
    v = tf.Variable(np.arange(6, dtype=np.float32), name="w")
    inc = tf.assign_add(v, np.ones(6, np.float32))
    with tf.Session(scheduler=client) as s:
        s.run(v.initializer)
        for _ in range(3):
            s.run(inc)
        _kill(client, _holders(client, s.variables.get("w"))[0])
        s.run(inc)  # reads the lost value: re-shipped from the copy, then updated
        np.testing.assert_array_equal(s.run(v), np.arange(6) + 4.0)


def _slow(a):
    time.sleep(1.0)
    return a


def test_a_kill_mid_run_completes_with_the_right_values(client):
    w = tf.Variable(np.zeros(4, np.float32), name="w")
    g = tf.py_func(_slow, [w + 1.0], tf.float32)
    g.set_shape([4])
    step = tf.assign(w, g)
    with tf.Session(scheduler=client) as s:
        s.run(w.initializer)
        s.run(step)
        holder = _holders(client, s.variables.get("w"))[0]
        timer = threading.Timer(0.4, _kill, (client, holder))  # during the next run's slow task
        timer.start()
        try:
            s.run(step)
        finally:
            timer.join()
        s.run(step)
        np.testing.assert_array_equal(s.run(w), np.full(4, 3.0))


# ---- closing releases, stalls end ----------------------------------------------------------------
def test_close_releases_the_values_on_the_cluster(client):
    tf.set_random_seed(2)
    x, y, train, loss = _mlp()
    s = tf.Session(scheduler=client)
    s.run(tf.global_variables_initializer())
    _train(s, x, y, train, loss, 2)
    held = {f.key for v in s.variables.values.values() for f in _flat_futures(v)}
    assert held

    def on_cluster():
        return held & set(client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.tasks)))

    assert on_cluster() == held
    s.close()
    deadline = time.monotonic() + 10
    while on_cluster() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not on_cluster()


def _flat_futures(value):
    return value.held()


def _set_paused(dask_worker, paused):
    from distributed.core import Status

    dask_worker.status = Status.paused if paused else Status.running


def test_a_stalled_run_is_an_error_not_a_hang(client, monkeypatch):
    from dflow.schedule.cluster_executor import DistributedExecutor

    monkeypatch.setattr(DistributedExecutor, "poll_interval", 0.2)
    monkeypatch.setattr(DistributedExecutor, "stall_timeout", 1.0)
    v = tf.Variable(np.zeros(3, np.float32), name="v")
    inc = tf.assign_add(v, 1.0)
    with tf.Session(scheduler=client) as s:
        s.run(v.initializer)
        client.run(_set_paused, paused=True)
        try:
            time.sleep(0.2)
            with pytest.raises(errors.ResourceExhaustedError) as info:
                s.run(inc)
            assert "paused" in str(info.value) and "nothing was committed" in str(info.value)
        finally:
            client.run(_set_paused, paused=False)
        s.run(inc)
        np.testing.assert_array_equal(s.run(v), np.ones(3))


@pytest.mark.parametrize("cut", [True, False])
def test_committed_values_are_held_without_lineage(client, monkeypatch, cut):
    """The scheduler holds a committed chunk with no dependencies. Without the cut (a scheduler that
    cannot take dflow's stream handler) the values are shipped back and forth instead."""
    from dflow.schedule import cluster_executor

    if not cut:
        monkeypatch.setattr(cluster_executor, "install_lineage_cut", lambda client: False)
    v = tf.Variable(np.zeros((4, 2), np.float32), name="v")
    inc = tf.assign_add(v, 1.0)
    with tf.Session(scheduler=client, chunks=2, small_plan_bytes=0) as s:
        assert s._executor.cuts_lineage == cut
        s.run(v.initializer)
        for _ in range(3):
            s.run(inc)
        value = s.variables.get("v")
        keys = [f.key for f in _flat_futures(value)]
        # the cut is a one-way message on the client's batched stream; this query is an RPC on
        # another connection that can overtake it, so it waits for the cut to land (a later graph,
        # sent on the same stream, always sees it)
        deadline = time.monotonic() + 10
        while not all(client.run_on_scheduler(_no_dependencies, keys=keys)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(client.run_on_scheduler(_no_dependencies, keys=keys))
        np.testing.assert_array_equal(s.run(v), np.full((4, 2), 3.0))


def _no_dependencies(dask_scheduler, keys):
    return [not dask_scheduler.tasks[k].dependencies for k in keys]


# ---- out of core on a memory-limited cluster ------------------------------------------------------
@pytest.mark.slow
def test_out_of_core_workload_on_workers_of_512MB(tmp_path):
    """Standardize a Zarr array to Zarr, then 3 GD steps of logistic regression, on 2 workers of
    512MB: completes with numpy's values, no worker paused or lost (the scheduler's events). The
    full-size run (2 GB) is benchmarks/bench_cluster.py's case c."""
    import zarr
    from distributed import Client, LocalCluster

    rng = np.random.default_rng(0)
    n, d = 40_000, 50
    X = (rng.standard_normal((n, d)) * 3 + 2).astype(np.float32)
    Y = (X[:, :1] > 2).astype(np.float32)
    for name, a in (("X", X), ("y", Y)):
        zarr.create_array(str(tmp_path / f"{name}.zarr"), shape=a.shape, chunks=(10_000, a.shape[1]),
                          dtype="float32")[:] = a
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, silence_logs=50, memory_limit="512MB")
    client = Client(cluster)
    try:
        with tf.Graph().as_default():
            x = tf.io.read_zarr(str(tmp_path / "X.zarr"))
            mean = tf.reduce_mean(x, 0)
            z = (x - mean) / tf.sqrt(tf.reduce_mean(tf.square(x - mean), 0))
            write = tf.io.write_zarr(z, str(tmp_path / "Z.zarr"), overwrite=True)
            with tf.Session(scheduler=client) as s:
                s.run(write)
        with tf.Graph().as_default():
            z = tf.io.read_zarr(str(tmp_path / "Z.zarr"))
            y = tf.io.read_zarr(str(tmp_path / "y.zarr"))
            w = tf.Variable(tf.zeros([d, 1]), name="w")
            loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=tf.matmul(z, w)))
            train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
            with tf.Session(scheduler=client) as s:
                s.run(w.initializer)
                for _ in range(3):
                    s.run(train)
                got = s.run(w)
        events = [m for evs in client.get_events().values() for _, m in evs if isinstance(m, dict)]
        assert not [m for m in events if m.get("status") == "paused"]
        assert not [m for m in events if m.get("action") == "remove-worker"]
    finally:
        client.close()
        cluster.close()
    Z = ((X - X.mean(0, dtype=np.float64)) / X.std(0, dtype=np.float64))
    want = np.zeros((d, 1))
    for _ in range(3):
        p = 1 / (1 + np.exp(-(Z @ want)))
        want -= 0.5 * Z.T @ (p - Y) / n
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)


def _append_line(path):
    def f():
        with open(path, "a") as out:
            out.write("called\n")
        return np.arange(4, dtype=np.float32)
    return f


def test_sources_run_inside_their_readers_but_a_py_func_runs_once(client, tmp_path, monkeypatch):
    """Source tasks read by two tasks run inside each (a worker then never holds a chunk between
    tasks); a py_func (a function with effects) still runs once a run."""
    import zarr

    from dflow.schedule import compiler

    monkeypatch.setattr(compiler, "ONE_TASK_BYTES", 0)  # a task per chunk, as large plans run
    path = str(tmp_path / "x.zarr")
    zarr.create_array(path, shape=(8,), chunks=(4,), dtype="float32")[:] = np.arange(8, dtype=np.float32)
    x = tf.io.read_zarr(path)
    calls = tmp_path / "calls.txt"
    p = tf.py_func(_append_line(str(calls)), [], tf.float32)
    p.set_shape([4])
    both = tf.reduce_sum(x * 2.0) + tf.reduce_max(x) + tf.reduce_sum(p) + tf.reduce_max(p)
    with tf.Session(scheduler=client, small_plan_bytes=0) as s:
        got = s.run(both)
    xs = np.arange(8, dtype=np.float32)
    np.testing.assert_allclose(got, 2 * xs.sum() + xs.max() + np.arange(4).sum() + 3, rtol=1e-6)
    assert calls.read_text().count("called") == 1


def test_workers_get_dflows_setup_and_keep_freed_memory(client):
    """A session registers its worker setup with the cluster; a nanny starts its workers with
    MALLOC_TRIM_THRESHOLD_ set, and the setup gives their allocator back its reuse of freed memory."""
    with tf.Session(scheduler=client):
        pass
    assert all(client.run(lambda dask_worker: "dflow-worker-setup" in dask_worker.plugins).values())
    set_up = client.run(lambda: (os.environ.get("MALLOC_TRIM_THRESHOLD_"),
                                 __import__("dflow.kernels.cores", fromlist=["_"]).keep_kernel_memory()))
    assert all(v == ("65536", sys.platform.startswith("linux")) for v in set_up.values()), set_up


@pytest.mark.parametrize("rows", [8, 40_000])  # a small plan runs as one task; a larger one task by task
def test_a_kernel_error_on_the_cluster_names_its_op(client, rows):
    idx = tf.placeholder(tf.int32, [None])
    params = tf.placeholder(tf.float32, [None, 4])
    total = tf.reduce_sum(tf.gather(params, idx, name="my_gather") * 2.0)
    bad = np.arange(rows, dtype=np.int32) % (rows // 2 + 3)  # past the params' rows // 2
    with tf.Session(scheduler=client, chunks=4096) as sess:
        with pytest.raises(errors.InvalidArgumentError, match=r"is not in \[0, \d+\)") as info:
            sess.run(total, {params: np.ones((rows // 2, 4), np.float32), idx: bad})
    assert "my_gather" in str(info.value)


def _raises_boom(a):
    raise ValueError("boom from the user's function")


@pytest.mark.parametrize("kind", ["reshape", "check_numerics", "py_func", "matmul"])
def test_every_kind_of_op_error_on_the_cluster_keeps_its_op_name(client, kind):
    """#29: an op's failure on a worker names the op and keeps its class and words, as at home."""
    x = tf.placeholder(tf.float32, [None], name="x")
    m = tf.placeholder(tf.float32, [None, None], name="m")
    feeds = {x: np.array([1.0, -1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], np.float32)}
    if kind == "reshape":
        out, words = tf.reshape(x, [3, -1], name="my_reshape"), "tensor with 10 values"
    elif kind == "check_numerics":
        out, words = tf.check_numerics(tf.log(x), "log of x", name="my_check_numerics"), "NaN"
    elif kind == "py_func":
        out, words = tf.py_func(_raises_boom, [x], tf.float32, name="my_py_func"), "boom from the user's function"
    else:
        out, words = tf.matmul(m, m, name="my_matmul"), "Dimensions must be equal"
        feeds = {m: np.ones((2, 3), np.float32)}
    with tf.Session(scheduler=client, chunks=4) as sess:
        with pytest.raises(errors.InvalidArgumentError, match=words) as info:
            sess.run(out, feeds)
        assert sess.run(tf.reduce_sum(x), {x: np.ones(4, np.float32)}) == 4.0
    assert f"my_{kind}" in str(info.value), str(info.value)
