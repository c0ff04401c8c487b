"""read_zarr / write_zarr: every store form, lazy chunk reads, errors, the streaming sink's
summary, chunks and overwrite, clean-up after failed and killed runs, shared reads, schedulers."""

from __future__ import annotations

import collections
import functools
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import zarr
from zarr.storage import LocalStore, MemoryStore, WrapperStore

import dflow as tf
from dflow.io import zarr_io

from ..conftest import run_modes

REPO = Path(__file__).resolve().parents[2]


class CountingStore(WrapperStore):
    """A store that counts the keys read through it (chunk keys contain '/c/')."""

    reads = collections.Counter()

    async def get(self, key, prototype, byte_range=None):
        CountingStore.reads[key] += 1
        return await self._store.get(key, prototype, byte_range)

    @classmethod
    def chunk_reads(cls):
        return {k: n for k, n in cls.reads.items() if "/c/" in k}


def _data(shape=(8, 10), dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _make(root, path, x, chunks=(2, 5)):
    """Writes x as a Zarr array at `root` (+ `path`) with plain zarr; returns the zarr.Array."""
    if isinstance(root, (str, os.PathLike)) and path:  # inside a group rooted at `root`
        return _fill(zarr.open_group(str(root), mode="a").create_array(path, shape=x.shape, dtype=x.dtype,
                                                                        chunks=chunks), x)
    return _fill(zarr.create_array(root, name=path, shape=x.shape, dtype=x.dtype, chunks=chunks), x)


def _fill(z, x):
    z[...] = x
    return z


def _tmp_entries(d):
    return [n for _, dirs, files in os.walk(d) for n in dirs + files if "dflow-tmp" in n]


# ---- read_zarr -------------------------------------------------------------------------------

STORE_FORMS = ["path", "dir+path", "array", "group+path", "local_store", "memory_store", "wrapped_store"]


def _source(form, d, x):
    """(store, path) of the array x in `form`."""
    if form == "memory_store":
        m = MemoryStore()
        _make(m, "g/a", x)
        return m, "g/a"
    _make(str(d), "g/a", x)
    return {
        "path": (os.path.join(d, "g", "a"), None),
        "dir+path": (str(d), "g/a"),
        "array": (zarr.open_array(os.path.join(d, "g", "a"), mode="r"), None),
        "group+path": (zarr.open_group(str(d), mode="r")["g"], "a"),
        "local_store": (LocalStore(str(d)), "g/a"),
        "wrapped_store": (CountingStore(LocalStore(str(d))), "g/a"),
    }[form]


@pytest.mark.parametrize("form", STORE_FORMS)
def test_read_zarr_every_store_form(form, tmp_path):
    x = _data()
    store, path = _source(form, tmp_path, x)
    t = tf.io.read_zarr(store, path)
    assert t.shape.as_list() == [8, 10] and t.dtype == tf.float32
    assert t.op.name == "read_zarr"
    np.testing.assert_array_equal(run_modes(t), x)
    np.testing.assert_allclose(run_modes(tf.reduce_sum(t * 2.0, axis=0)), (x * 2).sum(0), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32, np.int64, np.uint8, np.bool_])
def test_read_zarr_dtypes(dtype, tmp_path):
    x = (_data(seed=1) * 10).astype(dtype)
    _make(str(tmp_path), "a", x)
    t = tf.io.read_zarr(str(tmp_path), "a", name="src")
    assert t.dtype.np_dtype == np.dtype(dtype) and t.op.name == "src"
    out = run_modes(t)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, x)


def test_read_zarr_scalar_and_1d(tmp_path):
    _make(str(tmp_path), "s", np.array(2.5, np.float64), chunks=())
    _make(str(tmp_path), "v", np.arange(7, dtype=np.int32), chunks=(3,))
    s = tf.io.read_zarr(str(tmp_path), "s")
    v = tf.io.read_zarr(str(tmp_path), "v")
    assert s.shape.as_list() == [] and v.shape.as_list() == [7]
    assert run_modes(s) == 2.5
    np.testing.assert_array_equal(run_modes(v[2:5]), [2, 3, 4])


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_slicing_reads_only_the_chunks_touched(scheduler, tmp_path):
    x = _data()
    _make(str(tmp_path), "a", x)  # chunks (2, 5): a 4 x 2 grid
    t = tf.io.read_zarr(CountingStore(LocalStore(str(tmp_path))), "a")
    with tf.Session(scheduler=scheduler, small_plan_bytes=0) as s:
        CountingStore.reads.clear()
        np.testing.assert_array_equal(s.run(t[2:4, 5:]), x[2:4, 5:])
        assert CountingStore.chunk_reads() == {"a/c/1/1": 1}
        CountingStore.reads.clear()
        np.testing.assert_allclose(s.run(tf.reduce_sum(t[:3], axis=0)), x[:3].sum(0), rtol=1e-5)
        assert CountingStore.chunk_reads() == {f"a/c/{i}/{j}": 1 for i in (0, 1) for j in (0, 1)}
        CountingStore.reads.clear()
        np.testing.assert_array_equal(s.run(t), x)
        assert CountingStore.chunk_reads() == {f"a/c/{i}/{j}": 1 for i in range(4) for j in range(2)}


def test_building_reads_no_chunk(tmp_path):
    _make(str(tmp_path), "a", _data())
    CountingStore.reads.clear()
    t = tf.io.read_zarr(CountingStore(LocalStore(str(tmp_path))), "a")
    tf.reduce_mean(t * 3.0)
    assert CountingStore.chunk_reads() == {}


def test_large_array_default_session_reads_only_touched_chunks(tmp_path):
    # above the 1 MiB small-plan limit, the default Session goes through Dask and stays lazy
    x = _data((512, 1024), seed=2)  # 2 MiB, chunks of 64 rows: 8 chunks
    _make(str(tmp_path), "big", x, chunks=(64, 1024))
    t = tf.io.read_zarr(CountingStore(LocalStore(str(tmp_path))), "big")
    with tf.Session() as s:
        CountingStore.reads.clear()
        np.testing.assert_array_equal(s.run(t[130:140]), x[130:140])
        assert CountingStore.chunk_reads() == {"big/c/2/0": 1}


def test_feeding_a_zarr_array_is_the_same(tmp_path):
    x = _data()
    _make(str(tmp_path), "a", x)
    p = tf.placeholder(tf.float32, [None, 10])
    z = zarr.open_array(CountingStore(LocalStore(str(tmp_path))), path="a", mode="r")
    for scheduler in ("sync", "threads"):
        with tf.Session(scheduler=scheduler) as s:
            CountingStore.reads.clear()
            np.testing.assert_array_equal(s.run(p[2:4, 5:], {p: z}), x[2:4, 5:])
            assert CountingStore.chunk_reads() == {"a/c/1/1": 1}
            np.testing.assert_allclose(s.run(tf.reduce_sum(p, 0), {p: z}), x.sum(0), rtol=1e-5)


def test_missing_array_is_not_found_naming_store_and_path(tmp_path):
    _make(str(tmp_path), "g/a", _data())
    cases = [
        (os.path.join(tmp_path, "nothing"), None, ["nothing", str(tmp_path)]),
        (str(tmp_path), "g/missing", ["g/missing", str(tmp_path)]),
        (zarr.open_group(str(tmp_path), mode="r")["g"], "missing", ["g/missing", str(tmp_path)]),
        (LocalStore(str(tmp_path)), "nope/x", ["nope/x", str(tmp_path)]),
        (MemoryStore(), "m/x", ["MemoryStore", "m/x"]),
        (str(tmp_path), "g", ["g"]),  # a group, not an array
    ]
    for store, path, words in cases:
        with pytest.raises(tf.errors.NotFoundError) as e:
            tf.io.read_zarr(store, path)
        for w in words:
            assert w in str(e.value), (w, str(e.value))


def test_incomplete_arrays_are_refused(tmp_path):
    m = MemoryStore()
    z = _make(m, "half", _data())
    z.attrs[zarr_io.COMPLETE_ATTR] = False
    with pytest.raises(tf.errors.NotFoundError, match="incomplete"):
        tf.io.read_zarr(m, "half")
    with pytest.raises(tf.errors.NotFoundError, match="incomplete"):
        tf.io.read_zarr(z)
    z2 = _make(str(tmp_path), "half", _data())
    z2.attrs[zarr_io.COMPLETE_ATTR] = False
    with pytest.raises(tf.errors.NotFoundError, match="incomplete"):
        tf.io.read_zarr(str(tmp_path), "half")
    z.attrs[zarr_io.COMPLETE_ATTR] = True
    np.testing.assert_array_equal(run_modes(tf.io.read_zarr(m, "half")), z[...])


# ---- write_zarr ------------------------------------------------------------------------------


def test_write_summary_values_and_default_chunks(tmp_path):
    x = _data()
    _make(str(tmp_path), "a", x)
    w = tf.io.write_zarr(tf.io.read_zarr(str(tmp_path), "a") * 2.0, str(tmp_path), "out")
    assert w.op.name == "write_zarr" and w.dtype == tf.string and w.shape.as_list() == []
    with tf.Session(scheduler="threads", small_plan_bytes=0) as s:
        summary = s.run(w)
    assert summary == {"path": os.path.join(tmp_path, "out"), "shape": (8, 10), "dtype": "float32",
                       "bytes": x.nbytes}
    out = zarr.open_array(os.path.join(tmp_path, "out"), mode="r")
    np.testing.assert_array_equal(out[...], x * 2)
    assert out.chunks == (2, 5)  # the source's Zarr chunks flow through
    assert _tmp_entries(tmp_path) == []


@pytest.mark.parametrize("chunks,scheduler", [((3, 4), "sync"), ((8, 1), "threads"), ((5, 10), "threads")])
def test_write_chunks_argument(chunks, scheduler, tmp_path):
    x = _data()
    p = tf.placeholder(tf.float32, [8, 10])
    w = tf.io.write_zarr(p, str(tmp_path), "out", chunks=chunks, name="w")
    assert w.op.name == "w"
    with tf.Session(scheduler=scheduler, chunks=(2, 5)) as s:
        assert s.run(w, {p: x})["bytes"] == x.nbytes
    out = zarr.open_array(os.path.join(tmp_path, "out"), mode="r")
    assert out.chunks == chunks
    np.testing.assert_array_equal(out[...], x)


def test_write_scalar_and_eager_session(tmp_path):
    with tf.Session(small_plan_bytes=1 << 30) as s:  # would run in memory, but a sink goes to Dask
        summary = s.run(tf.io.write_zarr(tf.constant(3.5, tf.float64), str(tmp_path), "s"))
        s.run(tf.io.write_zarr(tf.constant(np.arange(6, dtype=np.int64)), str(tmp_path), "v"))
    assert summary["shape"] == () and summary["bytes"] == 8 and summary["dtype"] == "float64"
    assert zarr.open_array(os.path.join(tmp_path, "s"), mode="r")[...] == 3.5
    np.testing.assert_array_equal(zarr.open_array(os.path.join(tmp_path, "v"), mode="r")[...], np.arange(6))


def test_write_without_path_makes_the_directory_the_array(tmp_path):
    x = _data()
    target = os.path.join(tmp_path, "direct")
    with tf.Session(scheduler="sync") as s:
        s.run(tf.io.write_zarr(tf.constant(x), target, chunks=(4, 5)))
        np.testing.assert_array_equal(s.run(tf.io.read_zarr(target)), x)
    assert zarr.open_array(target, mode="r").chunks == (4, 5)


def test_existing_target_without_overwrite_is_failed_precondition(tmp_path):
    old = _data(seed=3)
    _make(str(tmp_path), "out", old)
    p = tf.placeholder(tf.float32, [8, 10])
    w = tf.io.write_zarr(p, str(tmp_path), "out")
    with tf.Session(scheduler="threads", small_plan_bytes=0) as s:
        with pytest.raises(tf.errors.FailedPreconditionError, match="out.*overwrite=True"):
            s.run(w, {p: _data()})
    np.testing.assert_array_equal(zarr.open_array(os.path.join(tmp_path, "out"))[...], old)
    assert _tmp_entries(tmp_path) == []


def test_overwrite_replaces_and_the_op_reruns(tmp_path):
    x = _data()
    _make(str(tmp_path), "out", _data(seed=4), chunks=(4, 4))
    p = tf.placeholder(tf.float32, [8, 10])
    w = tf.io.write_zarr(p, str(tmp_path), "out", overwrite=True)
    once = tf.io.write_zarr(p, str(tmp_path), "once")
    with tf.Session(scheduler="threads", small_plan_bytes=0, chunks=(2, 5)) as s:
        s.run(w, {p: x})
        np.testing.assert_array_equal(zarr.open_array(os.path.join(tmp_path, "out"))[...], x)
        s.run(w, {p: x + 1})
        np.testing.assert_array_equal(zarr.open_array(os.path.join(tmp_path, "out"))[...], x + 1)
        s.run(once, {p: x})
        with pytest.raises(tf.errors.FailedPreconditionError):  # the op's own earlier output exists now
            s.run(once, {p: x + 1})
    assert zarr.open_array(os.path.join(tmp_path, "out")).chunks == (2, 5)
    np.testing.assert_array_equal(zarr.open_array(os.path.join(tmp_path, "once"))[...], x)
    assert sorted(os.listdir(tmp_path)) == ["once", "out", "zarr.json"]


def test_update_in_place_reads_then_replaces(tmp_path):
    x = _data()
    _make(str(tmp_path), "a", x)
    w = tf.io.write_zarr(tf.io.read_zarr(str(tmp_path), "a") + 1.0, str(tmp_path), "a", overwrite=True)
    with tf.Session(scheduler="threads", small_plan_bytes=0) as s:
        s.run(w)
    np.testing.assert_array_equal(zarr.open_array(os.path.join(tmp_path, "a"))[...], x + 1)
    assert sorted(os.listdir(tmp_path)) == ["a", "zarr.json"]


def _failing_write(store, path, **kw):
    """(write op, feed dict) whose run fails at run time in one chunk: a gather with an index
    out of range in its last chunk only (the other chunks compute and are written first)."""
    params = tf.constant(np.arange(10, dtype=np.float32))
    idx = tf.placeholder(tf.int32, [None])
    w = tf.io.write_zarr(tf.gather(params, idx), store, path, chunks=(2,), **kw)
    return w, idx


_BAD = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 99], np.int32)


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_failed_run_leaves_no_array(scheduler, tmp_path, monkeypatch):
    written = []
    real = zarr_io._write_block

    def counting(block, path, target=None, block_info=None):
        written.append(block_info[0]["array-location"])
        return real(block, path, target=target, block_info=block_info)

    monkeypatch.setattr(zarr_io, "_write_block", counting)
    w, idx = _failing_write(str(tmp_path), "grp/out")
    with tf.Session(scheduler=scheduler, chunks=2) as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="99"):
            s.run(w, {idx: _BAD})
        if scheduler == "sync":
            assert written, "the failing chunk should come after others were written"
            assert _tmp_entries(tmp_path) == []
        assert not os.path.exists(os.path.join(tmp_path, "grp", "out"))
        with pytest.raises(tf.errors.NotFoundError):
            tf.io.read_zarr(str(tmp_path), "grp/out")
        # the same op then succeeds with good indices
        assert s.run(w, {idx: _BAD[:-1]})["shape"] == (9,)
    np.testing.assert_array_equal(zarr.open_array(os.path.join(tmp_path, "grp", "out"))[...], np.arange(9))


def test_failed_run_on_threads_leaves_no_temporary(tmp_path, monkeypatch):
    real = zarr_io._write_block

    def flaky(block, path, target=None, block_info=None):
        start = block_info[0]["array-location"][0][0]
        if start == 8:
            raise ValueError("the disk is full")
        if start == 0:  # a slow write: the array is open, its chunk still being encoded when the run fails
            z = target.open("r+", path=str(path))
            time.sleep(0.5)
            z[0:2] = block
        return real(block, path, target=target, block_info=block_info)

    monkeypatch.setattr(zarr_io, "_write_block", flaky)
    w = tf.io.write_zarr(tf.constant(np.arange(10, dtype=np.float32)), str(tmp_path), "out", chunks=(2,))
    with tf.Session(scheduler="threads", chunks=2, small_plan_bytes=0) as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="disk is full"):
            s.run(w)
    time.sleep(1.0)  # let the straggling write finish
    assert not os.path.exists(os.path.join(tmp_path, "out"))
    assert _tmp_entries(tmp_path) == []


@pytest.mark.parametrize("fused", [False, True])
def test_the_array_creation_run_again_keeps_the_chunks_written(tmp_path, monkeypatch, fused):
    """A cluster runs the task creating the output array again when the worker holding its result
    died, after other workers wrote chunks into it: the chunks stay (created afresh, the run would
    publish chunks of fill value). Simulated here: the creation runs again after every chunk write."""
    made = []
    real_create, real_block, real_fused = zarr_io._create_array, zarr_io._write_block, zarr_io._write_fused

    def create(*args):
        made.append(args)
        return real_create(*args)

    def again(write):
        @functools.wraps(write)  # its signature: dask passes block_info to the functions taking it
        def run(*args, **kwargs):
            out = write(*args, **kwargs)
            real_create(*made[-1])
            return out
        return run

    monkeypatch.setattr(zarr_io, "_create_array", create)
    monkeypatch.setattr(zarr_io, "_write_block", again(real_block))
    monkeypatch.setattr(zarr_io, "_write_fused", again(real_fused))
    src = tmp_path / "x.zarr"
    zarr.create_array(str(src), shape=(10, 3), chunks=(2, 3), dtype="float32")[:] = np.arange(30).reshape(10, 3)
    x = tf.io.read_zarr(str(src))
    w = tf.io.write_zarr(x * 2.0 if fused else x, str(tmp_path / "out.zarr"))
    with tf.Session(scheduler="sync", small_plan_bytes=0) as s:
        s.run(w)
    assert len(made) == 1
    out = zarr.open_array(str(tmp_path / "out.zarr"))
    np.testing.assert_array_equal(out[:], np.arange(30).reshape(10, 3) * (2.0 if fused else 1.0))
    assert dict(out.attrs) == {zarr_io.COMPLETE_ATTR: True}  # the run's mark is gone once published
    assert _tmp_entries(tmp_path) == []


def test_failed_overwrite_keeps_the_old_array(tmp_path):
    old = np.full(10, 7.0, np.float32)
    _make(str(tmp_path), "out", old, chunks=(2,))
    w, idx = _failing_write(str(tmp_path), "out", overwrite=True)
    with tf.Session(scheduler="sync", chunks=2) as s:
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run(w, {idx: _BAD})
    np.testing.assert_array_equal(zarr.open_array(os.path.join(tmp_path, "out"))[...], old)
    assert _tmp_entries(tmp_path) == []


def test_failed_write_to_a_store_object_stays_incomplete():
    m = MemoryStore()
    w, idx = _failing_write(m, "g/out")
    with tf.Session(scheduler="sync", chunks=2) as s:
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run(w, {idx: _BAD})
    with pytest.raises(tf.errors.NotFoundError, match="incomplete"):
        tf.io.read_zarr(m, "g/out")


def test_retry_after_a_failed_write_to_a_store_object():
    m = MemoryStore()
    w, idx = _failing_write(m, "g/out")
    with tf.Session(scheduler="sync", chunks=2) as s:
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run(w, {idx: _BAD})
        assert s.run(w, {idx: _BAD[:-1]})["shape"] == (9,)
    np.testing.assert_array_equal(zarr.open_array(m, path="g/out")[...], np.arange(9))


def test_write_to_memory_store_and_group_paths(tmp_path):
    x = _data()
    m = MemoryStore()
    with tf.Session(scheduler="threads", small_plan_bytes=0, chunks=(4, 5)) as s:
        summary = s.run(tf.io.write_zarr(tf.constant(x), m, "g/h/out"))
        s.run(tf.io.write_zarr(tf.constant(x), str(tmp_path), "a/b"))
        s.run(tf.io.write_zarr(tf.constant(x), zarr.open_group(str(tmp_path), mode="a")["a"], "c"))
        np.testing.assert_array_equal(s.run(tf.io.read_zarr(m, "g/h/out")), x)
    assert summary["path"] == "MemoryStore:g/h/out" and summary["bytes"] == x.nbytes
    z = zarr.open_array(m, path="g/h/out", mode="r")
    assert z.attrs[zarr_io.COMPLETE_ATTR] is True and z.chunks == (4, 5)
    g = zarr.open_group(str(tmp_path), mode="r")
    assert isinstance(g["a"], zarr.Group) and sorted(g["a"].array_keys()) == ["b", "c"]
    np.testing.assert_array_equal(g["a"]["b"][...], x)
    np.testing.assert_array_equal(g["a/c"][...], x)


def test_write_to_an_existing_array_object_is_refused(tmp_path):
    z = _make(str(tmp_path), "a", _data())
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.io.write_zarr(tf.constant(1.0), z)


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_two_writes_in_one_run_share_their_reads(scheduler, tmp_path):
    x = _data()
    _make(str(tmp_path), "a", x)
    t = tf.io.read_zarr(CountingStore(LocalStore(str(tmp_path))), "a")
    w1 = tf.io.write_zarr(t * 2.0, str(tmp_path), "o1")
    w2 = tf.io.write_zarr(t - tf.reduce_mean(t, axis=0), str(tmp_path), "o2")
    with tf.Session(scheduler=scheduler) as s:
        CountingStore.reads.clear()
        r1, r2 = s.run([w1, w2])
    assert CountingStore.chunk_reads() == {f"a/c/{i}/{j}": 1 for i in range(4) for j in range(2)}
    assert r1["bytes"] == r2["bytes"] == x.nbytes
    np.testing.assert_array_equal(zarr.open_array(os.path.join(tmp_path, "o1"))[...], x * 2)
    np.testing.assert_allclose(zarr.open_array(os.path.join(tmp_path, "o2"))[...], x - x.mean(0), atol=1e-6)


def test_write_and_fetch_values_in_one_run(tmp_path):
    x = _data()
    p = tf.placeholder(tf.float32, [8, 10])
    y = p * 3.0
    with tf.Session(scheduler="threads", small_plan_bytes=0, chunks=(2, 5)) as s:
        summary, total = s.run([tf.io.write_zarr(y, str(tmp_path), "y"), tf.reduce_sum(y)], {p: x})
    assert summary["bytes"] == x.nbytes
    np.testing.assert_allclose(total, (x * 3).sum(), rtol=1e-5)
    np.testing.assert_array_equal(zarr.open_array(os.path.join(tmp_path, "y"))[...], x * 3)


def test_read_reduce_write_on_every_scheduler(any_mode, sess_factory, tmp_path):
    x = _data((12, 6), seed=5)
    _make(str(tmp_path), "src", x, chunks=(3, 6))
    t = tf.io.read_zarr(str(tmp_path), "src")
    w = tf.io.write_zarr(t - tf.reduce_mean(t, axis=0), str(tmp_path), f"out-{any_mode}")
    with sess_factory(any_mode, chunks=3) as s:
        summary = s.run(w)
        back = s.run(tf.io.read_zarr(str(tmp_path), f"out-{any_mode}"))
    assert summary["shape"] == (12, 6) and summary["bytes"] == x.nbytes
    np.testing.assert_allclose(back, x - x.mean(0), atol=1e-6)
    assert zarr.open_array(os.path.join(tmp_path, f"out-{any_mode}")).chunks == (3, 6)
    assert _tmp_entries(tmp_path) == []


@pytest.mark.xfail(strict=True, reason="write_zarr to a MemoryStore on the processes scheduler: each worker "
                   "writes into its own pickled copy of the store; the run fails with 'TypeError: "
                   "ValueError.__new__(ArrayNotFoundError) is not safe' instead of writing or naming the cause")
def test_memory_store_write_on_processes_writes_or_says_why(sess_factory):
    m = MemoryStore()
    x = _data()
    with sess_factory("processes", chunks=(4, 5)) as s:
        try:
            s.run(tf.io.write_zarr(tf.constant(x), m, "out"))
        except tf.errors.OpError as e:
            msg = str(e)
            assert "MemoryStore" in msg and ("process" in msg or "scheduler" in msg), msg
            return
    np.testing.assert_array_equal(zarr.open_array(m, path="out")[...], x)


# ---- a run killed with SIGKILL ---------------------------------------------------------------

_KILLED_CHILD = textwrap.dedent("""
    import sys, time
    import numpy as np
    import dflow as tf
    from dflow.io import zarr_io
    real = zarr_io._write_block
    def slow(block, path, target=None, block_info=None):
        out = real(block, path, target=target, block_info=block_info)
        print("written", flush=True)
        time.sleep(0.02)  # a slow computation: the parent kills the run part way
        return out
    zarr_io._write_block = slow
    x = np.ones((400, 100), np.float32)
    with tf.Session(scheduler="sync", chunks=(4, 100)) as s:
        s.run(tf.io.write_zarr(tf.constant(x) * 2.0, sys.argv[1], "grp/out"))
    print("done", flush=True)
""")


@pytest.fixture(scope="module")
def killed_write_dir(tmp_path_factory):
    """A directory where a child's write_zarr run was SIGKILLed after some chunks were written."""
    d = tmp_path_factory.mktemp("killed")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_CHILD, str(d)], stdout=subprocess.PIPE, text=True,
                            env=env)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "written", line
        time.sleep(random.uniform(0.05, 0.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    return d


def test_killed_run_leaves_no_array_under_the_final_name(killed_write_dir):
    d = killed_write_dir
    assert not os.path.exists(os.path.join(d, "grp", "out"))
    with pytest.raises(tf.errors.NotFoundError):
        tf.io.read_zarr(str(d), "grp/out")
    assert "out" not in zarr.open_group(str(d), mode="r")["grp"]
    assert _tmp_entries(d), "the killed run's temporary array should be there (nothing could remove it)"


def test_killed_run_leftovers_are_refused(killed_write_dir):
    d = killed_write_dir
    leftovers = [n for n in zarr.open_group(str(d), mode="r")["grp"].keys() if "dflow-tmp" in n]
    assert leftovers
    for name in leftovers:
        with pytest.raises(tf.errors.NotFoundError):
            tf.io.read_zarr(str(d), f"grp/{name}")


@pytest.mark.parametrize("sched", [None, "sync", "threads"])
def test_a_zarr_array_deleted_after_building_is_an_error_not_fill_values(tmp_path, sched):
    """#29: an array removed between building the graph and running it (or while a Dataset reads
    it) read as zeros before; now NotFoundError naming it. A chunk never written (the array
    still there) is still the fill value, as zarr reads it."""
    import shutil

    path = str(tmp_path / "a.zarr")
    z = zarr.create_array(path, shape=(40, 3), chunks=(10, 3), dtype="float32", fill_value=7.0)
    z[:20] = 1.0  # chunks 2 and 3 never written: fill value
    total = tf.reduce_sum(tf.io.read_zarr(path))
    with tf.Session(scheduler=sched) as s:
        assert s.run(total) == 20 * 3 * 1.0 + 20 * 3 * 7.0
        shutil.rmtree(path)
        with pytest.raises(tf.errors.NotFoundError, match="a.zarr' is gone"):
            s.run(total)


@pytest.mark.parametrize("sched", [None, "sync", "threads"])
@pytest.mark.parametrize("change", ["shape", "dtype", "chunks"])
def test_a_zarr_array_replaced_after_building_is_an_error_naming_it(tmp_path, sched, change):
    """#29: an array rewritten at its path with another layout between building and running was
    read with the old one (a shorter array's missing chunks as fill values, a wider dtype as
    "damaged" chunks); now FailedPreconditionError saying what changed. An attribute written
    since (the metadata file rewritten, the layout the same) is no change."""
    import shutil

    path = str(tmp_path / "a.zarr")
    z = zarr.create_array(path, shape=(40,), chunks=(10,), dtype="float32")
    z[:] = 1.0
    total = tf.reduce_sum(tf.io.read_zarr(path))
    with tf.Session(scheduler=sched) as s:
        assert s.run(total) == 40.0
        z.attrs["note"] = "kept"
        assert s.run(total) == 40.0
        shutil.rmtree(path)
        shape, dtype, chunks = {"shape": ((20,), "float32", (10,)), "dtype": ((40,), "float64", (10,)),
                                "chunks": ((40,), "float32", (20,))}[change]
        zarr.create_array(path, shape=shape, chunks=chunks, dtype=dtype)[:] = 2.0
        with pytest.raises(tf.errors.FailedPreconditionError, match="a.zarr' changed since the graph read it"):
            s.run(total)
    assert tf.Session().run(tf.reduce_sum(tf.io.read_zarr(path))) == 2.0 * shape[0]  # built again: read
