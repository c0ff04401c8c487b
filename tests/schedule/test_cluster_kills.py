"""Worker kills during each stage of the out-of-core workload on a LocalCluster (issue 29).

The workload of benchmarks/workload.py, small: standardize a Zarr array X (its moments, then Z
written to Zarr), then 3 gradient steps of logistic regression on Z read back. A worker is
SIGKILLed (by a scheduler plugin, as the n-th task of a run finishes) during the moments stage,
the write stage and each gradient step; and both workers at once. Each run must end either
complete, with numpy's values, or with a dflow error; never with a partial or wrong Z.zarr, a
temporary left beside it, or a variable changed by a failed step.
"""

from __future__ import annotations

import os
import signal
import threading

import dask
import numpy as np
import pytest
from distributed.diagnostics.plugin import SchedulerPlugin

import dflow as tf
from dflow import errors

pytestmark = pytest.mark.timeout(300)

N, D, ROWS = 24_000, 40, 2_000  # 12 chunks a pass: a kill lands while most tasks are still to run
LR = 0.5


class _Killer(SchedulerPlugin):
    """A scheduler plugin: once armed, SIGKILLs the worker(s) that ran the `after`-th task (counted
    from arming) whose key contains `match` as that task finishes."""

    name = "dflow-test-killer"

    def __init__(self):
        self.lock = threading.Lock()
        self.armed = None
        self.killed = []

    def arm(self, match="", after=3, both=False):
        with self.lock:
            self.armed = {"match": match, "after": after, "both": both, "seen": 0}

    def transition(self, key, start, finish, *args, **kwargs):
        if finish != "memory" or start != "processing":
            return
        with self.lock:
            a = self.armed
            if a is None or a["match"] not in str(key):
                return
            a["seen"] += 1
            if a["seen"] < a["after"]:
                return
            self.armed = None
        ts = self.scheduler.tasks.get(key)
        holders = list(ts.who_has or ()) if ts is not None else []
        workers = list(self.scheduler.workers.values()) if a["both"] else holders[:1]
        for ws in workers:
            if ws is not None and ws.pid:
                self.killed.append(ws.address)
                os.kill(ws.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    # a killed worker may take a while to come back on a busy machine: the cluster waits for it
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "300s",
                          "distributed.scheduler.allowed-failures": 10}):
        c = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                         dashboard_address=None, silence_logs=50, memory_limit="512MB")
        client = Client(c)
        killer = _Killer()
        killer.scheduler = c.scheduler
        c.scheduler.add_plugin(killer, name=_Killer.name)
        try:
            yield client, killer
        finally:
            client.close()
            c.close()


@pytest.fixture
def client(cluster):
    client, killer = cluster
    client.wait_for_workers(2, timeout=120)
    killer.armed, killer.killed = None, []
    yield client, killer
    killer.armed = None
    client.wait_for_workers(2, timeout=120)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    import zarr

    root = tmp_path_factory.mktemp("kills")
    rng = np.random.default_rng(0)
    X = (rng.standard_normal((N, D)) * np.linspace(0.5, 3, D) + np.linspace(-5, 5, D)).astype(np.float32)
    Y = ((X - X.mean(0)) @ rng.standard_normal((D, 1)) > 0).astype(np.float32)
    for name, a in (("X", X), ("y", Y)):
        zarr.create_array(str(root / f"{name}.zarr"), shape=a.shape, chunks=(ROWS, a.shape[1]),
                          dtype="float32")[:] = a
    Z = ((X - X.mean(0, dtype=np.float64)) / X.std(0, dtype=np.float64)).astype(np.float32)
    ws, w = [], np.zeros((D, 1))
    for _ in range(3):
        p = 1 / (1 + np.exp(-(Z @ w)))
        w = w - LR * Z.T @ (p - Y) / N
        ws.append(w.copy())
    return root, Z, ws


def _session(client):
    return tf.Session(scheduler=client, small_plan_bytes=0)  # task by task, as large plans run


def _standardize(client, root, out):
    with tf.Graph().as_default():
        x = tf.io.read_zarr(str(root / "X.zarr"))
        mean = tf.reduce_mean(x, 0)
        z = (x - mean) / tf.sqrt(tf.reduce_mean(tf.square(x - mean), 0))
        write = tf.io.write_zarr(z, str(out), overwrite=True)
        with _session(client) as s:
            return s.run(write)


def _leftovers(folder):
    return sorted(p for p in os.listdir(folder) if "dflow-tmp" in p or p.startswith(".") and p != ".zgroup")


def _check_z(out, Z):
    import zarr

    got = zarr.open_array(str(out), mode="r")[:]
    np.testing.assert_allclose(got, Z, rtol=1e-4, atol=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["moments", "write", "both-workers"])
def test_a_kill_while_standardizing_completes_or_leaves_no_output(client, data, tmp_path, stage):
    client, killer = client
    root, Z, _ = data
    out = tmp_path / "Z.zarr"
    killer.arm(match="write" if stage == "write" else "", after=3, both=stage == "both-workers")
    try:
        summary = _standardize(client, root, out)
    except errors.OpError as e:  # a clean dflow error: nothing published, nothing left behind
        assert not out.exists(), e
        assert _leftovers(tmp_path) == []
        return
    finally:
        killer.armed = None
    assert killer.killed, "the kill did not happen during the run"
    assert summary["shape"] == (N, D)
    _check_z(out, Z)
    assert _leftovers(tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize("step", [0, 1, 2])
def test_a_kill_during_a_gradient_step_completes_or_changes_nothing(client, data, step):
    client, killer = client
    root, Z, ws = data
    import zarr

    zarr_path = root / "Zs.zarr"
    if not zarr_path.exists():
        zarr.create_array(str(zarr_path), shape=Z.shape, chunks=(ROWS, D), dtype="float32")[:] = Z
    with tf.Graph().as_default():
        z = tf.io.read_zarr(str(zarr_path))
        y = tf.io.read_zarr(str(root / "y.zarr"))
        w = tf.Variable(tf.zeros([D, 1]), name="w")
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=tf.matmul(z, w)))
        train = tf.train.GradientDescentOptimizer(LR).minimize(loss)
        with _session(client) as s:
            s.run(w.initializer)
            done = 0
            for i in range(3):
                if i == step:
                    before = s.run(w)
                    killer.arm(after=3)
                    try:
                        s.run(train)
                    except errors.OpError:  # a clean dflow error: the step changed nothing
                        np.testing.assert_array_equal(s.run(w), before)
                        s.run(train)  # and the session goes on
                    finally:
                        killer.armed = None
                    assert killer.killed, "the kill did not happen during the step"
                else:
                    s.run(train)
                done += 1
                np.testing.assert_allclose(s.run(w), ws[i], rtol=1e-3, atol=1e-5)
