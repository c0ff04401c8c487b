"""One program, every scheduler: eager, sync, threads, processes and a distributed LocalCluster give
the same answers, fed from numpy, dask and zarr."""

from __future__ import annotations

import collections

import dask.array as da
import numpy as np
import pytest

import dflow as tf
from dflow import errors
from tests.conftest import ALL_MODES

Stats = collections.namedtuple("Stats", ["scaled", "shape"])
SOURCES = ["numpy", "dask", "zarr"]
XV = np.random.default_rng(42).standard_normal((12, 6)).astype(np.float64)


def feed_value(source, value, tmp_path, chunks=(4, 6)):
    """`value` as the given kind of feed: a numpy array, a chunked dask array or a zarr v3 array."""
    if source == "numpy":
        return value
    if source == "dask":
        return da.from_array(value, chunks=chunks)
    zarr = pytest.importorskip("zarr")
    z = zarr.open_array(store=str(tmp_path / f"feed-{value.dtype}.zarr"), mode="w", shape=value.shape,
                        chunks=chunks, dtype=value.dtype)
    z[...] = value
    return z


def run_all_modes(sess_factory, fetches, make_feed):
    """{mode: result} over every mode; in-memory feeds are chunked by 4 rows on the dask modes
    (row chunks keep the task graph small: distributed and processes pay per task)."""
    out = {}
    for m in ALL_MODES:
        s = sess_factory(m, chunks={0: 4, 1: -1})
        out[m] = s.run(fetches, make_feed())
    return out


def assert_identical(results, reference, rtol=1e-12,
                     exact_modes=("sync", "threads", "processes", "distributed")):
    """Dask modes agree bit for bit (same chunks, same kernels); all modes match numpy closely."""
    base = results["sync"]
    for m, r in results.items():
        _walk(r, reference, lambda a, b, m=m: _close(a, b, f"{m} vs numpy", rtol))
        if m in exact_modes:
            _walk(r, base, lambda a, b, m=m: _exact(a, b, f"{m} vs sync"))


def _walk(a, b, check):
    if isinstance(a, dict):
        assert set(a) == set(b)
        for k in a:
            _walk(a[k], b[k], check)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _walk(x, y, check)
    elif a is None or b is None:
        assert a is None and b is None
    else:
        check(a, b)


def _close(a, b, what, rtol):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (what, a.dtype, b.dtype, a.shape, b.shape)
    if a.dtype.kind == "f":
        np.testing.assert_allclose(a, b, rtol=rtol, atol=0, err_msg=what)
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


def _exact(a, b, what):
    assert type(a) is type(b), (what, type(a), type(b))
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=what)


# ---- the same graphs on every mode -------------------------------------------------------------

IV = np.arange(72, dtype=np.int64).reshape(12, 6) - 20


def elementwise_chain(x):
    """A 20-op chain (one fused kernel), a where and a cast; returns (fetches, numpy answers)."""
    y = x
    for k in range(20):
        y = tf.tanh(y * 1.5 + x) - 0.1 if k % 2 else tf.sigmoid(tf.maximum(y, x)) * 2.0
    mask = tf.greater(y, 0.0)
    ref = XV
    for k in range(20):
        ref = np.tanh(ref * 1.5 + XV) - 0.1 if k % 2 else 2.0 / (1 + np.exp(-np.maximum(ref, XV)))
    return [y, tf.where(mask, y, -y), tf.cast(mask, tf.int32)], [ref, np.abs(ref), (ref > 0).astype(np.int32)]


def shapes_and_stacks(x):
    flat = tf.reshape(x, [-1])
    back = tf.reshape(flat * 2.0, tf.shape(x))
    grid = tf.reshape(x, [2, -1, 2, 3])  # splits each dim
    pair = tf.stack([x, back], axis=1)
    fetches = {"flat": flat, "back": back, "grid": grid, "pair": pair, "shape": tf.shape(x),
               "size": tf.size(x), "rank": tf.rank(pair), "pair_shape": tf.shape(pair)}
    want = {"flat": XV.reshape(-1), "back": XV * 2, "grid": XV.reshape(2, -1, 2, 3),
            "pair": np.stack([XV, XV * 2], axis=1), "shape": np.array([12, 6], np.int32),
            "size": np.int32(72), "rank": np.int32(3), "pair_shape": np.array([12, 2, 6], np.int32)}
    return fetches, want


def structures(x, i):
    scaled = tf.multiply(x, 3.0, name="scaled")
    total = tf.add(tf.cast(i, tf.float64), scaled, name="total")
    fetches = {"stats": Stats(scaled=scaled, shape=tf.shape(i)), "pair": (total, [total.op, "scaled:0"]),
               "same": [scaled, scaled]}
    want = {"stats": Stats(scaled=XV * 3, shape=np.array([12, 6], np.int32)),
            "pair": (IV + XV * 3, [None, XV * 3]), "same": [XV * 3, XV * 3]}
    return fetches, want


def test_same_program_every_mode(sess_factory, tmp_path):
    """Elementwise chains, shape/reshape/stack, integer scalars and nested fetches, fed from numpy,
    dask and zarr, all in one run per mode (the process scheduler starts a pool per run)."""
    fetches, want, feeds = {}, {}, {}
    for source in SOURCES:
        with tf.name_scope(source):
            x = tf.placeholder(tf.float64, [None, 6], name="x")
            i = tf.placeholder(tf.int64, [12, 6], name="i")
        chain, chain_want = elementwise_chain(x)
        shapes, shapes_want = shapes_and_stacks(x)
        structs, structs_want = structures(x, i)
        fetches[source] = {"chain": chain, "shapes": shapes, "structs": structs}
        want[source] = {"chain": chain_want, "shapes": shapes_want, "structs": structs_want}
        feeds[source] = (x, i)
    a = tf.placeholder(tf.int32, [], name="a")
    b = tf.placeholder(tf.int32, [None], name="b")
    bv = np.arange(-4, 5, dtype=np.int32)
    fetches["ints"] = [a * a, b // a, b % a, tf.equal(b, a)]
    want["ints"] = [np.int32(9), bv // 3, bv % 3, bv == 3]

    def feed():
        out = {a: np.int32(3), b: bv}
        for source, (x, i) in feeds.items():
            out[x] = feed_value(source, XV, tmp_path)
            out[i] = feed_value(source, IV, tmp_path, chunks=(6, 6))  # unlike x's chunks
        return out

    results = run_all_modes(sess_factory, fetches, feed)
    for source in SOURCES:
        for part, rtol in [("chain", 1e-10), ("shapes", 1e-12), ("structs", 1e-12)]:
            assert_identical({m: r[source][part] for m, r in results.items()}, want[source][part], rtol=rtol)
    assert_identical({m: r["ints"] for m, r in results.items()}, want["ints"])
    for r in results.values():
        for source in SOURCES:
            shapes, structs = r[source]["shapes"], r[source]["structs"]
            assert isinstance(shapes["size"], np.int32) and isinstance(shapes["rank"], np.int32)
            assert isinstance(structs["stats"], Stats) and isinstance(structs["pair"], tuple)
        assert isinstance(r["ints"][0], np.int32)


@pytest.mark.parametrize("target", [[9, 8], [4, -1, 3]])
def test_reshape_that_regroups_dims_on_dask(sess_factory, target):
    x = tf.placeholder(tf.float64, [None, 6], name="x")
    s = sess_factory("sync", chunks=3)
    r = s.run(tf.reshape(x, target), {x: XV})
    np.testing.assert_array_equal(r, XV.reshape(target))


def test_errors_are_the_same_on_every_mode(any_mode, sess_factory):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.placeholder(tf.float32, [2], name="y")
    s = sess_factory(any_mode, chunks=1)
    with pytest.raises(errors.InvalidArgumentError, match="y"):
        s.run(x + y, {x: np.zeros((3, 2), np.float32)})
    with pytest.raises(errors.InvalidArgumentError, match="x:0"):
        s.run(x + y, {x: np.zeros((3, 3), np.float32), y: np.zeros(2, np.float32)})
    with pytest.raises(errors.InvalidArgumentError, match="y:0"):
        s.run(x + y, {x: np.zeros((3, 2), np.float32), y: np.array(["a", "b"])})
    with pytest.warns(np.exceptions.ComplexWarning):  # TF1 converts as numpy does: the real part
        got = s.run(x + y, {x: np.zeros((3, 2), np.float32), y: np.array([1 + 2j, 3], np.complex64)})
    assert got.tolist() == [[1.0, 3.0]] * 3


@pytest.mark.parametrize("mode", ["eager", "sync", "threads", "distributed"])  # processes: a pool per run
def test_plan_is_reused_with_new_data(mode, sess_factory):
    x = tf.placeholder(tf.float64, [None], name="x")
    y = tf.exp(x) - 1.0
    s = sess_factory(mode, chunks=3)
    got = [s.run(y, {x: np.linspace(-1, 1, 7) * (k + 1)}) for k in range(6)]  # back to back
    for k, r in enumerate(got):
        np.testing.assert_allclose(r, np.expm1(np.linspace(-1, 1, 7) * (k + 1)), rtol=1e-9, atol=1e-15,
                                   err_msg=f"run {k}")
    assert len(s._plans) == 1


# ---- scheduler arguments -----------------------------------------------------------------------

def test_scheduler_address_string(dask_client):
    address = dask_client.scheduler.address
    assert address.startswith("tcp://127.0.0.1:")
    x = tf.placeholder(tf.float64, [None, 6], name="x")
    y = tf.sqrt(tf.abs(x)) + x
    want = np.sqrt(np.abs(XV)) + XV
    with tf.Session(scheduler=address, chunks=(3, 3)) as s:
        assert s.scheduler == "distributed"
        np.testing.assert_allclose(s.run(y, {x: XV}), want, rtol=1e-12)
        np.testing.assert_allclose(s.run(y, {x: da.from_array(XV, chunks=2)}), want, rtol=1e-12)
    with tf.Session(address) as s:  # TF1's positional `target`
        assert s.sess_str == address and s.scheduler == "distributed"
        np.testing.assert_allclose(s.run(y, {x: XV}), want, rtol=1e-12)
    # the shared client is untouched by sessions that owned their own
    assert dask_client.submit(lambda v: v + 1, 1).result() == 2


@pytest.mark.parametrize("name,scheduler", [("sync", "sync"), ("sync", "synchronous"), ("sync", "single-threaded"),
                                            ("threads", "threads"), ("threads", "threading"),
                                            ("processes", "processes"), ("processes", "multiprocessing"),
                                            ("threads", None)])
def test_scheduler_names(name, scheduler):
    x = tf.placeholder(tf.float32, [4], name="x")
    with tf.Session(scheduler=scheduler, **({} if scheduler is None else {"small_plan_bytes": 0})) as s:
        assert s.scheduler == name
        if name == "processes":
            return  # runs on every mode are tested above; a process pool costs a second per run
        np.testing.assert_array_equal(s.run(x * 2.0, {x: np.arange(4, dtype=np.float32)}), [0, 2, 4, 6])


@pytest.mark.parametrize("bad", ["bogus", "gpu", 3, "THREADS"])
def test_unknown_scheduler(bad):
    with pytest.raises(errors.InvalidArgumentError, match="scheduler"):
        tf.Session(scheduler=bad)
