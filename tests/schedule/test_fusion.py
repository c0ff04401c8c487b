"""Epilogue fusion: an elementwise chain that only reads a Conv2D's output (bias_add, relu) runs
inside the convolution, on each slab of its rows, and is written back into its buffer. On the
in-process path the plan fuses the steps (schedule/fusion.py `epilogue_producers`; the traced step
labels show it); on the Dask path the conv's lowering offers its tasks to the chain
(compiler `LowerContext.offer_epilogue`; a spy on the conv's fused task function shows it). Each
case compares the two paths with each other and with numpy."""

from __future__ import annotations

import numpy as np
import pytest
import zarr

import dflow as tf
from dflow.kernels import conv_kernels, conv_ops
from tests.conftest import make_session


@pytest.fixture(autouse=True, params=["slabs", "image slabs", "whole"])
def epilogue_path(request, monkeypatch):
    """Every case three times: the chain on blocks of a few output rows inside the conv (as for
    outputs of 4 MiB and more), so again with im2col slabs of one image each (blocks of rows then
    span several slabs), and on the whole output after it (as for smaller ones)."""
    if request.param != "whole":
        monkeypatch.setattr(conv_kernels, "_EPILOGUE_MIN_BYTES", 0)
        monkeypatch.setattr(conv_kernels, "_EPILOGUE_BYTES", 2048)
    if request.param == "image slabs":
        monkeypatch.setattr(conv_kernels, "_HELD_SLAB_BYTES", 1)
        monkeypatch.setattr(conv_kernels, "SLAB_BYTES", 1)
    return request.param


def conv_ref(x, w, b):
    """relu(conv2d(x, w, SAME, stride 1) + b) in NHWC, by loops over the taps (float64)."""
    kh, kw = w.shape[:2]
    xp = np.pad(x.astype(np.float64), [(0, 0), ((kh - 1) // 2, kh // 2), ((kw - 1) // 2, kw // 2), (0, 0)])
    out = np.zeros(x.shape[:3] + (w.shape[3],))
    for i in range(kh):
        for j in range(kw):
            out += xp[:, i:i + x.shape[1], j:j + x.shape[2], :] @ w[i, j].astype(np.float64)
    return np.maximum(out + b, 0)


def traced(sess, fetches, feed):
    """(values, the labels of the run's steps)."""
    md = tf.RunMetadata()
    out = sess.run(fetches, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
    return out, [n.timeline_label for d in md.step_stats.dev_stats for n in d.node_stats]


def data(n=5, h=9, w=7, c=3, o=4, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, h, w, c)).astype(dtype), rng.standard_normal((3, 3, c, o)).astype(dtype),
            rng.standard_normal(o).astype(dtype))


def both_paths(fetches, feed):
    """(in-process values, their step labels, the Dask path's values)."""
    with make_session("eager") as s:
        got, labels = traced(s, fetches, feed)
    with make_session("sync", chunks=2) as s:
        want = s.run(fetches, feed)
    return got, labels, want


def test_conv_bias_relu_runs_as_one_step_with_the_unfused_answer():
    x0, w0, b0 = data()
    x = tf.placeholder(tf.float32, [None, 9, 7, 3])
    y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w0, [1, 1, 1, 1], "SAME"), b0))
    got, labels, want = both_paths(y, {x: x0})
    assert "fused: Conv2D, BiasAdd, Relu" in labels
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, conv_ref(x0, w0, b0), rtol=1e-4, atol=1e-4)


def test_one_channel_input_and_nchw():
    # one input channel: the tap-major im2col path; NCHW: the chain sees its rows transposed
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((12, 1, 28, 28)).astype(np.float32)
    w0 = rng.standard_normal((5, 5, 1, 8)).astype(np.float32)
    b0 = rng.standard_normal(8).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 1, 28, 28])
    y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w0, [1, 1, 1, 1], "SAME", data_format="NCHW"), b0,
                                  data_format="NCHW"))
    got, labels, want = both_paths(y, {x: x0})
    assert any(lab.startswith("fused: Conv2D,") for lab in labels)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    ref = conv_ref(x0.transpose(0, 2, 3, 1), w0, b0).transpose(0, 3, 1, 2)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_float16_chain_sees_float16_values():
    x0, w0, b0 = data(dtype=np.float16)
    x = tf.placeholder(tf.float16, [None, 9, 7, 3])
    y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w0, [1, 1, 1, 1], "SAME"), b0))
    got, labels, want = both_paths(y, {x: x0})
    assert "fused: Conv2D, BiasAdd, Relu" in labels and got.dtype == np.float16
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", ["conv fetched", "row-spanning leaf", "dtype changes", "grows the output"])
def test_chains_that_cannot_run_inside_the_conv_are_left_alone(case, dask_epilogues):
    x0, w0, b0 = data(o=1)
    x = tf.placeholder(tf.float32, [None, 9, 7, 3])
    conv = tf.nn.conv2d(x, w0, [1, 1, 1, 1], "SAME")
    if case == "conv fetched":
        fetches = [tf.nn.relu(conv + b0), conv]
    elif case == "row-spanning leaf":  # its rows would have to be sliced with the conv's slabs
        fetches = tf.nn.relu(conv + x[:, :, :, :1])
    elif case == "dtype changes":
        fetches = tf.cast(tf.nn.relu(conv), tf.float64) * 2.0
    else:  # [n, 9, 7, 1] + [4]: the chain's result is wider than the conv's buffer
        fetches = tf.nn.relu(conv + np.arange(4, dtype=np.float32))
    got, labels, want = both_paths(fetches, {x: x0})
    assert not any(lab.startswith("fused: Conv2D") for lab in labels), labels
    assert not dask_epilogues
    for g, w in zip(got if isinstance(got, list) else [got], want if isinstance(want, list) else [want]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_training_through_the_fused_chain_matches_the_dask_path():
    # bias_add's gradient reads the shape of the conv's output (Shape, rerouted to the chain's
    # result); Relu's gradient reads the chain's result
    x0, w0, b0 = data(n=6)
    t0 = np.random.default_rng(2).standard_normal((6, 9, 7, 4)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 9, 7, 3])
    w, b = tf.Variable(w0), tf.Variable(b0)
    y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b))
    loss = tf.reduce_mean(tf.square(y - t0))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    results = []
    for mode in ("eager", "sync"):
        with make_session(mode, chunks=3) as s:
            s.run(tf.global_variables_initializer())
            _, labels = traced(s, train, {x: x0})
            losses = [s.run([train, loss], {x: x0})[1] for _ in range(3)]
            results.append((labels, losses, s.run([w, b])))
    assert "fused: Conv2D, BiasAdd, Relu" in results[0][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5)
    for a, b_ in zip(results[0][2], results[1][2]):
        np.testing.assert_allclose(a, b_, rtol=1e-5, atol=1e-6)


def test_shape_of_the_conv_output_read_by_the_user():
    x0, w0, b0 = data()
    x = tf.placeholder(tf.float32, [None, 9, 7, 3])
    conv = tf.nn.conv2d(x, w0, [1, 1, 1, 1], "SAME")
    y = tf.nn.relu(conv + b0)
    got, _, want = both_paths([y, tf.shape(conv), tf.zeros_like(conv)], {x: x0})
    np.testing.assert_array_equal(got[1], [5, 9, 7, 4])
    np.testing.assert_array_equal(got[2], np.zeros((5, 9, 7, 4), np.float32))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)


# ---- the Dask path ------------------------------------------------------------------------------


@pytest.fixture
def dask_epilogues(monkeypatch):
    """The chunks (their batch sizes) that ran a Conv2D with its chain inside, on the sync scheduler."""
    seen, run = [], conv_ops.run_with_epilogue

    def spy(eager, n, kernel, slot, xp, x, *rest, **attrs):
        seen.append(x.shape[0])
        return run(eager, n, kernel, slot, xp, x, *rest, **attrs)

    monkeypatch.setattr(conv_ops, "run_with_epilogue", spy)
    return seen


def test_dask_tasks_run_the_chain_inside_the_conv(dask_epilogues):
    x0, w0, b0 = data(n=7)
    x = tf.placeholder(tf.float32, [None, 9, 7, 3])
    b = tf.placeholder_with_default(b0, [4])  # a leaf that is a dask array, whole in every task
    y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w0, [1, 1, 1, 1], "SAME"), b))
    pooled = tf.nn.max_pool(y, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    with make_session("sync", chunks=(3, -1, -1, -1)) as s:
        got, got_pooled = s.run([y, pooled], {x: x0})
    assert sorted(dask_epilogues) == [1, 3, 3]  # one task per chunk of the batch
    np.testing.assert_allclose(got, conv_ref(x0, w0, b0), rtol=1e-4, atol=1e-4)
    want_pooled = np.pad(got, [(0, 0), (0, 1), (0, 1), (0, 0)], constant_values=-np.inf)
    want_pooled = want_pooled.reshape(7, 5, 2, 4, 2, 4).max(axis=(2, 4))
    np.testing.assert_array_equal(got_pooled, want_pooled)


@pytest.mark.parametrize("scheduler", ["threads", "processes"])
def test_dask_epilogue_on_pools_of_workers(scheduler):
    rng = np.random.default_rng(5)
    x0 = rng.standard_normal((6, 12, 12, 1)).astype(np.float32)
    w0 = rng.standard_normal((5, 5, 1, 8)).astype(np.float32)
    b0 = rng.standard_normal(8).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 12, 12, 1])
    y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w0, [1, 1, 1, 1], "SAME"), b0)) * 0.5
    with make_session(scheduler, chunks=(2, -1, -1, -1)) as s:
        got = s.run(y, {x: x0})
    np.testing.assert_allclose(got, conv_ref(x0, w0, b0) * 0.5, rtol=1e-4, atol=1e-4)


def test_a_zarr_sink_writes_the_fused_conv(tmp_path, dask_epilogues):
    x0, w0, b0 = data(n=4)
    x = tf.placeholder(tf.float32, [None, 9, 7, 3])
    y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w0, [1, 1, 1, 1], "SAME"), b0))
    write = tf.io.write_zarr(y, str(tmp_path / "y.zarr"))
    with make_session("sync", chunks=(2, -1, -1, -1)) as s:
        s.run(write, {x: x0})
    assert sorted(dask_epilogues) == [2, 2]
    np.testing.assert_allclose(zarr.open_array(str(tmp_path / "y.zarr"))[...], conv_ref(x0, w0, b0),
                               rtol=1e-4, atol=1e-4)


@pytest.fixture
def dask_tails(monkeypatch):
    """The row blocks (their sizes) a pool took inside a Conv2D's tasks, on the sync scheduler."""
    seen, apply = [], conv_ops._apply

    def spy(fn, xp, attrs, value):
        seen.append(value.shape[0])
        return apply(fn, xp, attrs, value)

    monkeypatch.setattr(conv_ops, "_apply", spy)
    return seen


def pool_ref(y, k=2, how="max", fmt="NHWC"):
    """A k x k, stride k, VALID pool of `y` by reshapes."""
    if fmt == "NCHW":
        return pool_ref(y.transpose(0, 2, 3, 1), k, how).transpose(0, 3, 1, 2)
    n, h, w, c = y.shape
    y = y[:, :h // k * k, :w // k * k, :].reshape(n, h // k, k, w // k, k, c)
    return y.max(axis=(2, 4)) if how == "max" else y.mean(axis=(2, 4))


@pytest.mark.parametrize("how,fmt,chain", [("max", "NHWC", True), ("avg", "NHWC", True), ("max", "NCHW", True),
                                           ("max", "NHWC", False)])
def test_a_pool_of_the_conv_alone_runs_inside_its_tasks(how, fmt, chain, dask_tails, dask_epilogues, monkeypatch,
                                                        epilogue_path):
    monkeypatch.setattr(conv_kernels, "_TAIL_BYTES", 2 * 8 * 10 * 4 * 4)  # blocks of 2 images
    rng = np.random.default_rng(6)
    x0 = rng.standard_normal((7, 8, 10, 3)).astype(np.float32)
    w0, b0 = rng.standard_normal((3, 3, 3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 8, 10, 3])
    xin = tf.transpose(x, [0, 3, 1, 2]) if fmt == "NCHW" else x
    y = tf.nn.conv2d(xin, w0, [1, 1, 1, 1], "SAME", data_format=fmt)
    if chain:
        y = tf.nn.relu(tf.nn.bias_add(y, b0, data_format=fmt))
    pool = tf.nn.max_pool if how == "max" else tf.nn.avg_pool
    ksize = [1, 1, 2, 2] if fmt == "NCHW" else [1, 2, 2, 1]
    p = pool(y, ksize, ksize, "VALID", data_format=fmt)
    with make_session("sync", chunks=(3, -1, -1, -1)) as s:
        got = s.run(p, {x: x0})
    y_ref = conv_ref(x0, w0, b0 if chain else np.zeros(4, np.float32))
    if not chain:  # conv_ref applies relu
        y_ref = conv_ref(x0, w0, np.zeros(4, np.float32)) - conv_ref(x0, -w0, np.zeros(4, np.float32))
    y_ref = y_ref.transpose(0, 3, 1, 2) if fmt == "NCHW" else y_ref
    np.testing.assert_allclose(got, pool_ref(y_ref, 2, how, fmt), rtol=1e-4, atol=1e-4)
    # chunks of 3, 3, 1 by blocks of 2; small outputs ("whole") are pooled whole after the conv
    assert sorted(dask_tails) == ([1, 3, 3] if epilogue_path == "whole" else [1, 1, 1, 2, 2]), dask_tails
    # bias_add + relu is non-decreasing and its bias the same across a window: after a max pool it
    # runs on the pooled rows; before an average pool, inside the conv
    assert len(dask_epilogues) == (3 if chain and how == "avg" else 0)


@pytest.mark.parametrize("case", ["pre-pool fetched", "conv read twice", "pool of the whole batch"])
def test_pools_that_cannot_run_inside_the_conv_are_left_alone(case, dask_tails):
    x0, w0, b0 = data(n=6)
    x = tf.placeholder(tf.float32, [None, 9, 7, 3])
    conv = tf.nn.conv2d(x, w0, [1, 1, 1, 1], "SAME")
    y = tf.nn.relu(conv + b0)
    p = tf.nn.max_pool(y, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    fetches = {"pre-pool fetched": [p, y], "conv read twice": [p, tf.reduce_sum(conv)],
               "pool of the whole batch": [p]}[case]
    with make_session("sync", chunks=(4 if case != "pool of the whole batch" else 6, -1, -1, -1)) as s:
        got = s.run(fetches, {x: x0})
    want = np.pad(conv_ref(x0, w0, b0), [(0, 0), (0, 1), (0, 1), (0, 0)], constant_values=-np.inf)
    np.testing.assert_allclose(got[0], want.reshape(6, 5, 2, 4, 2, 4).max(axis=(2, 4)), rtol=1e-4, atol=1e-4)
    assert bool(dask_tails) == (case == "pool of the whole batch")


@pytest.fixture
def chains_after_pools(monkeypatch):
    """The pooled blocks (their sizes) a chain ran on after a max pool inside a conv's tasks (sync)."""
    seen, apply = [], conv_ops.chain_on

    def spy(kernel, slot, xp, others, value):
        seen.append(value.shape[0])
        return apply(kernel, slot, xp, others, value)

    monkeypatch.setattr(conv_ops, "chain_on", spy)
    return seen


@pytest.mark.parametrize("case", ["bias and relu", "infinite bias", "infinite scalar", "not monotone",
                                  "varies across a window", "integer chain"])
def test_a_chain_runs_after_the_max_pool_only_where_that_gives_the_same_values(case, dask_epilogues,
                                                                                chains_after_pools):
    rng = np.random.default_rng(7)
    x0 = rng.standard_normal((5, 6, 6, 2)).astype(np.float32)
    w0 = rng.standard_normal((3, 3, 2, 3)).astype(np.float32)
    b0 = np.array([0.5, -np.inf, 1.0] if case == "infinite bias" else [0.5, -0.25, 1.0], np.float32)
    x = tf.placeholder(tf.float32, [None, 6, 6, 2])
    conv = tf.nn.conv2d(x, w0, [1, 1, 1, 1], "SAME")
    if case == "not monotone":
        y = tf.nn.relu(b0 - conv)
        f = lambda c: np.maximum(b0 - c, 0)  # noqa: E731
    elif case == "varies across a window":
        v = np.arange(6, dtype=np.float32).reshape(6, 1) * 0.3  # along W: differs within a window
        y = tf.nn.relu(conv + v)
        f = lambda c: np.maximum(c + v, 0)  # noqa: E731
    elif case == "infinite scalar":  # inlined in the chain's kernel, not a leaf: checked when lowering
        y = tf.nn.relu(conv + np.float32(np.inf))
        f = lambda c: np.maximum(c + np.float32(np.inf), 0)  # noqa: E731
    elif case == "integer chain":
        y = tf.cast(tf.nn.relu(tf.cast(conv * 4.0, tf.int32) + 1), tf.float32)
        f = lambda c: np.maximum((c * 4.0).astype(np.int32) + 1, 0).astype(np.float32)  # noqa: E731
    else:
        y = tf.nn.relu(tf.nn.bias_add(conv, b0))
        f = lambda c: np.maximum(c + b0, 0)  # noqa: E731
    p = tf.nn.max_pool(y, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    with make_session("sync", chunks=(2, -1, -1, -1)) as s:
        got = s.run(p, {x: x0})
    with make_session("eager") as s:
        c = s.run(conv, {x: x0})
    want = f(c).reshape(5, 3, 2, 3, 2, 3).max(axis=(2, 4))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert bool(chains_after_pools) == (case == "bias and relu"), (chains_after_pools, dask_epilogues)
    if case in ("infinite bias", "infinite scalar", "not monotone", "varies across a window"):
        assert dask_epilogues  # inside the conv, before the pool
