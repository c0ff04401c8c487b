"""Shared fixtures: sessions over every execution mode and a real distributed LocalCluster.

`mode` is one of "eager" (the in-process path for small plans), "sync", "threads", "processes"
and "distributed" (a 2-worker LocalCluster on loopback, started once per test session).
Op tests use `run_modes` / the `sess_factory` fixture to compare every mode with numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf

LOCAL_MODES = ["eager", "sync", "threads"]
ALL_MODES = ["eager", "sync", "threads", "processes", "distributed"]


@pytest.fixture(scope="session")
def dask_client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=":0", silence_logs=40)
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def make_session(mode, graph=None, chunks="auto", client=None):
    """A Session running in `mode` (see module doc); dask modes never take the eager path."""
    if mode == "eager":
        return tf.Session(graph=graph, chunks=chunks, small_plan_bytes=1 << 30)
    if mode == "distributed":
        return tf.Session(graph=graph, scheduler=client, chunks=chunks)
    return tf.Session(graph=graph, scheduler=mode, chunks=chunks)


@pytest.fixture(autouse=True)
def _fresh_default_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


@pytest.fixture(params=LOCAL_MODES)
def mode(request):
    return request.param


@pytest.fixture(params=ALL_MODES)
def any_mode(request):
    return request.param


@pytest.fixture
def sess_factory(request):
    """sess_factory(mode, chunks=...) -> Session; distributed mode uses the shared LocalCluster."""
    opened = []

    def factory(mode, graph=None, chunks="auto"):
        client = request.getfixturevalue("dask_client") if mode == "distributed" else None
        s = make_session(mode, graph=graph, chunks=chunks, client=client)
        opened.append(s)
        return s

    yield factory
    for s in opened:
        s.close()


def run_modes(fetches, feed_dict=None, modes=LOCAL_MODES, chunks=2, graph=None):
    """Runs `fetches` in each local mode (dask modes with small `chunks`, so several chunks are
    exercised); asserts the modes agree and returns the first result."""
    results = []
    for m in modes:
        with make_session(m, graph=graph, chunks=chunks) as s:
            results.append(s.run(fetches, feed_dict))
    for m, r in zip(modes[1:], results[1:]):
        _assert_same(results[0], r, f"{modes[0]} vs {m}")
    return results[0]


def _assert_same(a, b, what):
    if isinstance(a, dict):
        for k in a:
            _assert_same(a[k], b[k], what)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), what
        for x, y in zip(a, b):
            _assert_same(x, y, what)
    elif a is None:
        assert b is None, what
    else:
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, f"{what}: shapes {a.shape} != {b.shape}"
        assert a.dtype == b.dtype, f"{what}: dtypes {a.dtype} != {b.dtype}"
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=what)
        else:
            np.testing.assert_array_equal(a, b, err_msg=what)
