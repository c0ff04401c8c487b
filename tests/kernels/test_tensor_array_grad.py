"""Gradients through TensorArray: write, read, stack, unstack, gather, scatter, concat, split."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

RNG = np.random.default_rng(7)


def test_write_write_stack_gives_tf1s_gradient():
    x = tf.constant(1.5)
    ta = tf.TensorArray(tf.float32, 2)
    ta = ta.write(0, x * 2).write(1, x)
    (g,) = tf.gradients(tf.reduce_sum(ta.stack()), x)
    assert run_modes(g) == pytest.approx(3.0)  # TF 1.x gives 3.0


def test_read_twice_sums_the_gradient_arrays():
    x = tf.placeholder(tf.float64, [3])
    ta = tf.TensorArray(tf.float64, 3).unstack(x * x)
    y = ta.read(0) * 3.0 + ta.read(0) + ta.read(2) * ta.read(1)
    (g,) = tf.gradients(y, x)
    xv = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(run_modes(g, {x: xv}), [4 * 2 * xv[0], 2 * xv[1] * xv[2] ** 2, 2 * xv[2] * xv[1] ** 2])


def test_unread_and_unwritten_elements_get_zero_gradients():
    x = tf.placeholder(tf.float32, [4, 2])
    ta = tf.TensorArray(tf.float32, 4).unstack(x)
    (g,) = tf.gradients(tf.reduce_sum(ta.read(1) * 2.0), x)
    out = run_modes(g, {x: np.ones((4, 2), np.float32)})
    np.testing.assert_array_equal(out, [[0, 0], [2, 2], [0, 0], [0, 0]])


def test_an_element_written_twice_is_tf1s_error():
    """TF1's TensorArray takes one write per element (TF 2.21's compat.v1 with v1 control flow:
    'Could not write to TensorArray index 1 because it has already been written to.'), by
    write and by scatter."""
    x = tf.placeholder(tf.float32, [])
    ta = tf.TensorArray(tf.float32, 2, element_shape=[]).write(0, x).write(1, x * x)
    for again in (ta.write(1, x), ta.scatter([1], tf.reshape(x * 5.0, [1]))):
        for mode in ("eager", "sync"):
            with pytest.raises(tf.errors.InvalidArgumentError, match="Could not write to TensorArray index 1 because "
                                                                     "it has already been written to"):
                run_modes(again.stack(), {x: 3.0}, modes=[mode])


def _check(make, x_shape, y_shape, seed=0):
    x = tf.placeholder(tf.float64, x_shape)
    y = make(x)
    xv = np.random.default_rng(seed).standard_normal(x_shape)
    with tf.Session():
        err = tf.test.compute_gradient_error(x, x_shape, y, y_shape, x_init_value=xv, delta=1e-6)
    assert err < 1e-6


def test_gather_and_scatter_central_differences():
    def make(x):
        ta = tf.TensorArray(tf.float64, 5).scatter([4, 0, 2, 1, 3], tf.sin(x))
        return ta.gather([2, 2, 0, 4]) * [[1.0], [2.0], [3.0], [4.0]]

    _check(make, [5, 3], [4, 3])


def test_concat_and_split_central_differences():
    def make(x):
        ta = tf.TensorArray(tf.float64, 3).split(x * x, [2, 0, 4])
        return ta.concat() * tf.constant(np.arange(1.0, 7.0).reshape(6, 1)) + ta.read(0)[0]

    _check(make, [6, 2], [6, 2])


def test_stack_of_reads_central_differences():
    def make(x):
        ta = tf.TensorArray(tf.float64, 3).unstack(x)
        ta2 = tf.TensorArray(tf.float64, 3)
        ta2 = ta2.write(2, ta.read(0) * ta.read(1)).write(0, tf.exp(ta.read(2))).write(1, ta.read(1))
        return ta2.stack()

    _check(make, [3, 4], [3, 4])


def test_tensor_array_gradients_on_the_schedulers():
    _split_matmul_concat(["eager", "sync", "threads"])


@pytest.mark.slow
def test_tensor_array_gradients_cross_process_workers():
    _split_matmul_concat(["processes"])


def _split_matmul_concat(modes):
    x = tf.placeholder(tf.float32, [6, 4])
    w = tf.placeholder(tf.float32, [4, 4])
    ta = tf.TensorArray(tf.float32, 3).split(x, [2, 2, 2])
    out = tf.TensorArray(tf.float32, 3)
    for i in range(3):
        out = out.write(i, tf.matmul(ta.read(i), w))
    loss = tf.reduce_sum(tf.square(out.concat()))
    gx, gw = tf.gradients(loss, [x, w])
    xv, wv = RNG.standard_normal((6, 4)).astype(np.float32), RNG.standard_normal((4, 4)).astype(np.float32)
    got = run_modes([gx, gw], {x: xv, w: wv}, modes=modes)
    y = xv @ wv
    np.testing.assert_allclose(got[0], 2 * y @ wv.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], 2 * xv.T @ y, rtol=1e-5, atol=1e-5)


def test_size_and_flow_dtype():
    ta = tf.TensorArray(tf.float32, 2)
    assert ta.flow.dtype == tf.variant
    x = tf.constant([1.0, 2.0])
    ta = ta.unstack(x)
    assert tf.gradients(tf.cast(ta.size(), tf.float32), x) == [None]
    with pytest.raises(TypeError):
        tf.add_n([x, ta.flow])


def test_graph_with_tensor_array_gradients_round_trips(tmp_path):
    x = tf.placeholder(tf.float32, [2], name="x")
    ta = tf.TensorArray(tf.float32, 2).unstack(x)
    (g,) = tf.gradients(ta.read(1) * 3.0, x)
    tf.train.export_meta_graph(str(tmp_path / "m.meta"))
    tf.reset_default_graph()
    tf.train.import_meta_graph(str(tmp_path / "m.meta"))
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(g.name, {"x:0": [1.0, 2.0]}), [0.0, 3.0])


def test_gradients_through_cond_stop_gradient_and_a_growing_array():
    x = tf.placeholder(tf.float64, [3, 2])
    p = tf.placeholder(tf.bool, [])
    ta = tf.TensorArray(tf.float64, 3).unstack(x)
    part = tf.TensorArray(tf.float64, 3).write(0, x[0]).write(2, x[2])  # index 1 written in the cond
    ta2 = tf.cond(p, lambda: part.write(1, part.read(0) * 5.0),  # TensorArrays, as TF1
                  lambda: part.write(1, tf.zeros([2], tf.float64)))
    (g,) = tf.gradients(tf.reduce_sum(ta2.stack() * [[1.0], [2.0], [3.0]]), x)
    (g2,) = tf.gradients(tf.reduce_sum(tf.stop_gradient(ta.read(0)) * ta.read(1)), x)

    def body(i, t):
        return i + 1, t.write(i, tf.reduce_sum(x[i % 3]) * tf.cast(i, tf.float64))

    _, t = tf.while_loop(lambda i, t: i < 5, body, [0, tf.TensorArray(tf.float64, 0, dynamic_size=True)])
    (g3,) = tf.gradients(tf.reduce_sum(t.stack()), x)
    xv = np.arange(6.0).reshape(3, 2)
    assert run_modes(g, {x: xv, p: True}).tolist() == [[11, 11], [0, 0], [3, 3]]
    assert run_modes(g, {x: xv, p: False}).tolist() == [[1, 1], [0, 0], [3, 3]]
    assert run_modes(g2, {x: xv}).tolist() == [[0, 0], [0, 1], [0, 0]]
    assert run_modes(g3, {x: xv}).tolist() == [[3, 3], [5, 5], [2, 2]]


def test_stack_keeps_the_static_length_it_knows():
    """TF (2.21's compat.v1, as TF 1.15) gives stack() the shape (3, 2) for a TensorArray of
    constant size 3 and (?, 2) when its size is dynamic."""
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=3)
        ta = ta.write(0, [1.0, 2.0]).write(1, [1.0, 2.0]).write(2, [3.0, 4.0])
        assert ta.stack().shape.as_list() == [3, 2]
        assert tf.TensorArray(tf.float32, size=3).unstack(tf.zeros([3, 2])).stack().shape.as_list() == [3, 2]
        dyn = tf.TensorArray(tf.float32, size=3, dynamic_size=True).unstack(tf.zeros([3, 2]))
        assert dyn.stack().shape.as_list() == [None, 2]
        n = tf.placeholder(tf.int32, [])
        assert tf.TensorArray(tf.float32, size=n).unstack(tf.zeros([3, 2])).stack().shape.as_list() == [None, 2]
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(ta.stack()), [[1, 2], [1, 2], [3, 4]])
