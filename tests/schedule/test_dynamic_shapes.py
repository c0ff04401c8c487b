"""Shapes known only when the graph runs: the same answers in process and through Dask.

A Dask plan needs some values on the host when it is built: a reshape's target shape, the dims of
`fill`, the chunks of a value. When they come from data computed in the same run (`tf.shape` of a
py_func output without a static shape, of a `boolean_mask` result, a gradient's Shape ops), the
session computes them first and builds the plan for those values (schedule/host.py). These tests
compare every mode with numpy references written here.
"""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf

MODES = ["eager", "sync", "threads", "processes", "distributed"]


def double(a):  # module level: ships to other processes by reference
    return (a * 2).astype(np.float32)


@pytest.fixture
def xv():
    return np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)


def _run(sess_factory, mode, fetches, feed):
    return sess_factory(mode, chunks=2).run(fetches, feed)


@pytest.mark.parametrize("mode", MODES)
def test_shapes_of_a_py_func_output_without_a_static_shape(mode, sess_factory, xv):
    x = tf.placeholder(tf.float32, [None, 4])
    h = tf.py_func(double, [x], tf.float32)  # no set_shape, as TF1 examples write it
    assert h.shape.ndims is None
    fetches = {
        "reshape": tf.reshape(h, [tf.shape(h)[0], -1]),
        "zeros": tf.zeros(tf.shape(h)) + 1,
        "fill": tf.fill(tf.shape(h), 2.0),
        "tile": tf.tile(h, [tf.shape(h)[0] // 3, 1]),
        "slice": tf.slice(h, [0, 0], [tf.shape(h)[0] - 1, -1]),
        "broadcast_to": tf.broadcast_to(tf.constant([1., 2., 3., 4.]), tf.shape(h)),
        "sum": tf.reduce_sum(h, axis=1),
        "range": tf.range(tf.shape(h)[0]),
    }
    out = _run(sess_factory, mode, fetches, {x: xv})
    hv = xv * 2
    np.testing.assert_allclose(out["reshape"], hv)
    np.testing.assert_array_equal(out["zeros"], np.ones_like(hv))
    np.testing.assert_array_equal(out["fill"], np.full_like(hv, 2.0))
    np.testing.assert_allclose(out["tile"], np.tile(hv, [2, 1]))
    np.testing.assert_allclose(out["slice"], hv[:-1])
    np.testing.assert_array_equal(out["broadcast_to"], np.broadcast_to([1., 2., 3., 4.], hv.shape))
    np.testing.assert_allclose(out["sum"], hv.sum(1), rtol=1e-6)
    np.testing.assert_array_equal(out["range"], np.arange(6))


@pytest.mark.parametrize("mode", MODES)
def test_gradients_through_a_py_func_and_run_time_reshapes(mode, sess_factory, xv):
    # py_func is not differentiable (TF1): the gradient flows through x * h only via x
    x = tf.placeholder(tf.float32, [None, 4])
    h = tf.py_func(double, [x], tf.float32)
    flat = tf.reshape(x * h, [-1, tf.shape(h)[0] * 2])
    (g,) = tf.gradients(tf.reduce_sum(tf.square(flat)), x)
    (g_py,) = tf.gradients(tf.reduce_sum(h), x)
    assert g_py is None
    out = _run(sess_factory, mode, g, {x: xv})
    hv = xv * 2
    np.testing.assert_allclose(out, 2 * (xv * hv) * hv, rtol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_data_dependent_sizes(mode, sess_factory, xv):
    x = tf.placeholder(tf.float32, [None, 4])
    m = tf.boolean_mask(x, x[:, 0] > 0)
    fetches = {
        "flat": tf.reshape(m, [-1]),
        "pairs": tf.reshape(m, [-1, 2]),
        "zeros": tf.zeros(tf.shape(m)),
        "plus_ones": m + tf.ones_like(m),
        "scaled": m * tf.constant([1., 2., 3., 4.]),
        "total": tf.reduce_sum(m) + tf.reduce_sum(x),
        "n": tf.shape(m)[0],
        "computed_reshape": tf.reshape(m * 2, [tf.shape(m)[0] * 2, -1]),
        "known_plus_data": tf.zeros(tf.shape(m * 3)) + m,  # a decided shape meets a data-dependent one
    }
    out = _run(sess_factory, mode, fetches, {x: xv})
    mv = xv[xv[:, 0] > 0]
    np.testing.assert_allclose(out["flat"], mv.reshape(-1))
    np.testing.assert_allclose(out["pairs"], mv.reshape(-1, 2))
    np.testing.assert_array_equal(out["zeros"], np.zeros_like(mv))
    np.testing.assert_allclose(out["plus_ones"], mv + 1)
    np.testing.assert_allclose(out["scaled"], mv * [1., 2., 3., 4.])
    np.testing.assert_allclose(out["total"], mv.sum() + xv.sum(), rtol=1e-5)
    assert out["n"] == len(mv)
    np.testing.assert_allclose(out["computed_reshape"], (mv * 2).reshape(len(mv) * 2, -1))
    np.testing.assert_allclose(out["known_plus_data"], mv)


def test_run_time_shapes_are_recomputed_every_run(sess_factory):
    # the plan is cached per decided value: a new batch size gives a new, correct plan
    x = tf.placeholder(tf.float32, [None, 3])
    h = tf.py_func(double, [x], tf.float32)
    y = tf.reshape(h, [tf.shape(h)[0] * 3])
    s = sess_factory("sync")
    for n in (2, 5, 2):
        v = np.arange(3 * n, dtype=np.float32).reshape(n, 3)
        np.testing.assert_allclose(s.run(y, {x: v}), (v * 2).reshape(-1))


def test_slice_matches_numpy_and_checks_bounds(sess_factory):
    x = tf.placeholder(tf.float32, [4, 5])
    y = tf.slice(x, [1, 2], [2, -1])
    assert y.shape.as_list() == [2, 3]  # TF1's static shape
    (g,) = tf.gradients(tf.reduce_sum(y * y), x)
    xv = np.arange(20, dtype=np.float32).reshape(4, 5)
    want_g = np.zeros_like(xv)
    want_g[1:3, 2:] = 2 * xv[1:3, 2:]
    for mode in ("eager", "sync"):
        yv, gv = sess_factory(mode, chunks=2).run([y, g], {x: xv})
        np.testing.assert_array_equal(yv, xv[1:3, 2:])
        np.testing.assert_array_equal(gv, want_g)
    bad = tf.slice(x, [3, 0], [2, 1])
    for mode in ("eager", "sync"):
        with pytest.raises(tf.errors.InvalidArgumentError, match="Slice"):
            sess_factory(mode).run(bad, {x: xv})


def test_broadcast_to_and_its_gradient(sess_factory):
    v = tf.placeholder(tf.float32, [1, 3])
    y = tf.broadcast_to(v, [4, 3])
    assert y.shape.as_list() == [4, 3]
    (g,) = tf.gradients(tf.reduce_sum(y * 2.0), v)
    vv = np.array([[1., 2., 3.]], np.float32)
    for mode in ("eager", "sync"):
        yv, gv = sess_factory(mode, chunks=2).run([y, g], {v: vv})
        np.testing.assert_array_equal(yv, np.broadcast_to(vv, (4, 3)))
        np.testing.assert_array_equal(gv, np.full((1, 3), 8.0, np.float32))
    with pytest.raises(ValueError):
        tf.broadcast_to(v, [4, 2])


@pytest.mark.parametrize("mode", ["eager", "sync", "threads"])
def test_a_shape_fed_through_a_placeholder(mode, sess_factory):
    x = tf.placeholder(tf.float32, [None, 4])
    shape = tf.placeholder(tf.int32, [2])
    y = tf.reshape(x, shape) * 2
    s = sess_factory(mode, chunks=2)
    xv = np.arange(12, dtype=np.float32).reshape(3, 4)
    for target in ([2, 6], [6, 2], [-1, 3]):
        np.testing.assert_array_equal(s.run(y, {x: xv, shape: target}), xv.reshape(target) * 2)


@pytest.mark.parametrize("mode", ["eager", "sync", "threads"])
def test_run_time_shapes_inside_while_and_cond(mode, sess_factory, xv):
    x = tf.placeholder(tf.float32, [None, 4])

    def body(i, v):
        h = tf.py_func(double, [v], tf.float32)
        return i + 1, tf.reshape(h, tf.shape(v))

    _, out = tf.while_loop(lambda i, v: i < 3, body, [tf.constant(0), x])
    p = tf.placeholder(tf.bool, [])
    h = tf.py_func(double, [x], tf.float32)
    c = tf.cond(p, lambda: tf.reduce_sum(tf.reshape(h, [-1])), lambda: tf.reduce_sum(x))
    s = sess_factory(mode, chunks=2)
    np.testing.assert_allclose(s.run(out, {x: xv}), xv * 8)
    np.testing.assert_allclose(s.run(c, {x: xv, p: True}), 2 * xv.sum(), rtol=1e-5)
    np.testing.assert_allclose(s.run(c, {x: xv, p: False}), xv.sum(), rtol=1e-5)


def test_explain_names_the_value_a_plan_waits_for(sess_factory, xv):
    x = tf.placeholder(tf.float32, [None, 4])
    h = tf.py_func(double, [x], tf.float32, name="f")
    y = tf.reshape(h, [tf.shape(h)[0], -1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="'f:0'.*decided when the graph runs"):
        sess_factory("sync").explain(y, {x: xv})
