"""The cores of a process (dflow/kernels/cores.py): a large convolution or pool split over the batch
gives the serial kernel's values, errors and silence; BLAS runs one thread per part and gives
pipeline threads their cores."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import dflow as tf
from dflow.kernels import conv_kernels, cores


@pytest.fixture
def split_small(monkeypatch):
    """Every kernel splits, however small (the threshold keeps real ones from splitting tiny work)."""
    monkeypatch.setattr(cores, "_MIN_PART_FLOPS", 1)
    monkeypatch.setattr(conv_kernels, "_EPILOGUE_MIN_BYTES", 0)  # the fused chain runs in the parts too


def _conv_graph(rng, fmt="NHWC", hw=9):
    x = tf.placeholder(tf.float32, [None, hw, hw, 3] if fmt == "NHWC" else [None, 3, hw, hw])
    w = tf.constant(rng.standard_normal((3, 3, 3, 4)).astype(np.float32))
    y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", data_format=fmt),
                                  tf.constant([0.1, -0.2, 0.3, 0.0]), data_format=fmt))
    p = tf.nn.max_pool(y, [1, 2, 2, 1] if fmt == "NHWC" else [1, 1, 2, 2],
                       [1, 2, 2, 1] if fmt == "NHWC" else [1, 1, 2, 2], "SAME", data_format=fmt)
    loss = tf.reduce_sum(p * p)
    return x, [y, p, loss] + tf.gradients(loss, [x, w])


@pytest.mark.parametrize("fmt,hw", [("NHWC", 9), ("NCHW", 9), ("NHWC", 8)])  # 8: the pools tile the input
def test_split_kernels_equal_serial(split_small, fmt, hw):
    rng = np.random.default_rng(0)
    shape = (7, hw, hw, 3) if fmt == "NHWC" else (7, 3, hw, hw)
    xv = rng.standard_normal(shape).astype(np.float32)
    xv[:, :2] = 0  # ties in the pools' windows (relu'd zeros)
    with tf.Graph().as_default():
        x, fetches = _conv_graph(rng, fmt, hw)
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)) as sess:
            serial = sess.run(fetches, {x: xv})
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=3)) as sess:
            split = sess.run(fetches, {x: xv})
    for a, b in zip(serial, split):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-3)  # float32 sums in another order


def test_parts_cover_the_batch_once():
    with cores.intra_op_threads(3):
        parts = cores.intra_op_parts(np, 10, 1e12)
    assert len(parts) == 3 and parts[0].start == 0 and parts[-1].stop == 10
    assert all(a.stop == b.start for a, b in zip(parts, parts[1:]))
    # outside an in-process run, for small work, or a batch of one: the whole axis
    assert cores.intra_op_parts(np, 10, 1e12) == [slice(0, 10)]
    with cores.intra_op_threads(3):
        assert cores.intra_op_parts(np, 10, 1.0) == [slice(0, 10)]
        assert cores.intra_op_parts(np, 1, 1e12) == [slice(0, 1)]


def test_a_failing_part_raises_its_error_and_the_others_finish():
    done = []

    def fn(part):
        if part.start == 0:
            raise ValueError("part zero")
        done.append(part)
        return part.stop

    with cores.intra_op_threads(2), pytest.raises(ValueError, match="part zero"):
        cores.run_parts(fn, cores.intra_op_parts(np, 4, 1e12))
    assert done == [slice(2, 4)]
    # a part never splits again
    with cores.intra_op_threads(2):
        inner = cores.run_parts(lambda p: cores.intra_op_parts(np, 4, 1e12), [slice(0, 2), slice(2, 4)])
    assert inner == [[slice(0, 4)], [slice(0, 4)]]


def test_split_epilogue_stays_silent(split_small):
    # log(0) in a chain fused into the convolution runs on the parts' threads: -inf, no RuntimeWarning
    xv = np.zeros((6, 8, 8, 2), np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder("float", [None, 8, 8, 2])
        y = tf.log(tf.nn.conv2d(x, tf.ones([3, 3, 2, 2]), [1, 1, 1, 1], "SAME"))
        with tf.Session() as sess, warnings.catch_warnings():
            warnings.simplefilter("error")
            out = sess.run(y, {x: xv})
    assert np.isneginf(out).all()


def test_blas_runs_one_thread_per_part_and_gets_its_count_back():
    own = cores.blas_threads()
    if own is None:
        pytest.skip("numpy's BLAS is not found by threadpoolctl")
    with cores.intra_op_threads(2):
        seen = cores.run_parts(lambda p: cores.blas_threads(), [slice(0, 1), slice(1, 2)])
    assert seen == [1, 1]
    assert cores.blas_threads() == own


def test_pipeline_threads_take_cores_from_blas_and_from_splits():
    own = cores.blas_threads()
    with cores.busy_thread():
        if own is not None:
            assert cores.blas_threads() == max(1, min(own, cores.cpu_count() - 1))
        with cores.intra_op_threads(0):
            assert len(cores.intra_op_parts(np, 100, 1e12)) == max(1, cores.cpu_count() - 1)
    assert cores.blas_threads() == own


def test_dask_task_threads_share_the_cores_with_blas():
    own = cores.blas_threads()
    if own is None:
        pytest.skip("numpy's BLAS is not found by threadpoolctl")
    with threadpool_limits(limits=4, user_api="blas"):
        with cores.task_threads(2):
            assert cores.blas_threads() == max(1, min(4, cores.cpu_count() // 2))
            with cores.busy_thread():
                assert cores.blas_threads() == max(1, min(4, (cores.cpu_count() - 1) // 2))
        assert cores.blas_threads() == 4
        with tf.Graph().as_default():
            seen = tf.py_func(lambda: np.int64(cores.blas_threads() or 0), [], tf.int64)
            with tf.Session(scheduler="threads", small_plan_bytes=0) as sess:  # a pool of one thread per core
                assert sess.run(seen) == 1
        assert cores.blas_threads() == 4
        cores.share_process_cores(2)  # as a worker process of two does when it starts
        assert cores.blas_threads() == max(1, min(4, cores.cpu_count() // 2))


def test_in_process_runs_hold_blas_at_one_thread_and_split_large_matmuls(split_small):
    own = cores.blas_threads()
    rng = np.random.default_rng(3)
    av, bv = rng.standard_normal((37, 11)), rng.standard_normal((23, 11))
    with tf.Graph().as_default():
        a, b = tf.constant(av), tf.constant(bv)
        seen = tf.py_func(lambda: np.int64(cores.blas_threads() or 0), [], tf.int64)
        prods = [tf.matmul(a, b, transpose_b=True), tf.matmul(b, a, transpose_b=True)]
        with tf.Session() as sess:
            got_seen, p1, p2 = sess.run([seen] + prods)
    if own is not None:
        assert got_seen == 1
        assert cores.blas_threads() == own  # given back after the run
    np.testing.assert_allclose(p1, av @ bv.T, rtol=1e-12)
    np.testing.assert_allclose(p2, (av @ bv.T).T, rtol=1e-12)


def test_convolutions_take_small_slabs_only_while_blas_is_held(monkeypatch):
    """An in-process run (BLAS held at one thread) cuts a convolution into small im2col slabs, a Dask
    task into large ones; both give the whole-batch result (each slab a few images here)."""
    monkeypatch.setattr(conv_kernels, "_HELD_SLAB_BYTES", 3 * 9 * 9 * 27 * 4)  # 3 images of columns
    monkeypatch.setattr(conv_kernels, "SLAB_BYTES", 5 * 9 * 9 * 27 * 4)
    seen = []
    slabs = conv_kernels._slabs
    monkeypatch.setattr(conv_kernels, "_slabs", lambda n, b: seen.append(slabs(n, b)) or seen[-1])
    rng = np.random.default_rng(4)
    xv = rng.standard_normal((8, 9, 9, 3)).astype(np.float32)
    # (BLAS at one thread of its own, on a machine of one core, would count as held too)
    monkeypatch.setattr(conv_kernels, "blas_held", lambda: bool(cores._runs or cores._splitting))
    with tf.Graph().as_default():
        x, fetches = _conv_graph(rng)
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)) as sess:
            held = sess.run(fetches, {x: xv})
        held_slabs, seen[:] = list(seen), []
        with tf.Session(scheduler="sync") as sess:
            whole = sess.run(fetches, {x: xv})
    assert held_slabs and all(s.stop - s.start <= 3 for slabs_ in held_slabs for s in slabs_)
    assert seen and any(s.stop - s.start > 3 for slabs_ in seen for s in slabs_)
    for a, b in zip(held, whole):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("env,want", [({"MALLOC_TRIM_THRESHOLD_": "65536"}, True), ({}, False),
                                      ({"MALLOC_TRIM_THRESHOLD_": "65536", "MALLOC_MMAP_THRESHOLD_": "131072"}, False)])
def test_the_allocator_is_set_only_where_a_trim_threshold_turned_its_own_off(env, want):
    code = "from dflow.kernels import cores; print(cores.keep_kernel_memory())"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run([sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == str(want and sys.platform.startswith("linux"))


@pytest.mark.parametrize("env,want", [({}, True), ({"MALLOC_MMAP_THRESHOLD_": "131072"}, False)])
def test_an_in_process_run_keeps_kernel_memory_unless_the_user_set_the_allocator(env, want):
    code = ("import numpy as np, dflow as tf\n"
            "from dflow.kernels import cores\n"
            "assert not cores._memory_kept\n"
            "with tf.Session() as s: s.run(tf.reduce_sum(tf.constant(np.ones(4))))\n"
            "print(cores._memory_kept, cores.keep_kernel_memory(in_process=True))\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run([sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", str(want and sys.platform.startswith("linux"))]
