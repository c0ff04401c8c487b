"""scatter_nd, tensor_scatter_nd_* and the variable scatter_nd_* against TF 1.x figures and numpy.

The expected arrays were obtained by running the same calls with TensorFlow 2.21's
`tensorflow.compat.v1` (graph mode) and copying its output.
"""

import numpy as np
import pytest

import dflow as tf
from dflow.errors import InvalidArgumentError
from tests.conftest import run_modes


def test_scatter_nd_adds_repeated_rows_on_the_schedulers():
    out = tf.scatter_nd(tf.constant([[0], [2], [0]]), tf.constant([[1., 2], [3, 4], [5, 6]]), [4, 2])
    assert out.op.type == "ScatterNd" and out.op.name == "ScatterNd" and out.shape.as_list() == [4, 2]
    got = run_modes(out)
    np.testing.assert_array_equal(got, [[6., 8], [0, 0], [3, 4], [0, 0]])  # TF figures


def test_scatter_nd_full_depth_rows_and_runtime_shape():
    shape = tf.placeholder(tf.int32, [2])
    out = tf.scatter_nd([[0, 1], [2, 0]], [5., 7.], shape)
    got = run_modes(out, {shape: [3, 2]})
    np.testing.assert_array_equal(got, [[0, 5], [0, 0], [7, 0]])


def test_tensor_scatter_family_against_tf():
    t = tf.constant(np.arange(8.).reshape(4, 2))
    idx, upd = [[1], [3]], [[10., 20], [30, 40]]
    ops = [tf.tensor_scatter_update(t, idx, upd), tf.tensor_scatter_add(t, idx, upd),
           tf.tensor_scatter_sub(t, idx, upd), tf.tensor_scatter_nd_max(t, idx, [[-1., 50], [0, 0]]),
           tf.tensor_scatter_nd_min(t, idx, [[-1., 50], [0, 0]])]
    assert [o.op.type for o in ops] == ["TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub",
                                        "TensorScatterMax", "TensorScatterMin"]
    assert tf.tensor_scatter_nd_update is tf.tensor_scatter_update
    got = run_modes(ops)
    np.testing.assert_array_equal(got[0], [[0, 1], [10, 20], [4, 5], [30, 40]])
    np.testing.assert_array_equal(got[1], [[0, 1], [12, 23], [4, 5], [36, 47]])
    np.testing.assert_array_equal(got[2], [[0, 1], [-8, -17], [4, 5], [-24, -33]])
    np.testing.assert_array_equal(got[3], [[0, 1], [2, 50], [4, 5], [6, 7]])
    np.testing.assert_array_equal(got[4], [[0, 1], [-1, 3], [4, 5], [0, 0]])


def test_gradients_against_finite_differences():
    idx = [[1], [3], [1]]
    u = tf.placeholder(tf.float64, [3, 2])
    t = tf.placeholder(tf.float64, [4, 2])
    w = tf.constant(np.arange(1., 9.).reshape(4, 2))
    ys = [tf.scatter_nd(idx, u, [4, 2]) * w, tf.tensor_scatter_add(t, idx, u) * w,
          tf.tensor_scatter_sub(t, idx, u) * w, tf.tensor_scatter_update(t, [[0], [2]], u[:2]) * w]
    u0, t0 = np.linspace(0.1, 0.9, 6).reshape(3, 2), np.linspace(-1, 1, 8).reshape(4, 2)
    with tf.Session():
        for y in ys:
            for x, x0 in ((u, u0), (t, t0)):
                if x is t and y is ys[0]:
                    continue
                err = tf.test.compute_gradient_error(x, list(x0.shape), y, [4, 2], x_init_value=x0,
                                                     extra_feed_dict={u: u0, t: t0})
                assert err < 1e-8


def test_variable_scatter_nd_ops_commit():
    v = tf.Variable(np.arange(6.).reshape(3, 2))
    add = tf.scatter_nd_add(v, [[0, 1], [2, 0]], [5., 7.])
    assert add.op.type == "ScatterNdAdd" and add.op.name == "ScatterNdAdd"
    with tf.Session() as s:
        s.run(v.initializer)
        np.testing.assert_array_equal(s.run(add), [[0, 6], [2, 3], [11, 5]])  # TF figures
        s.run(tf.scatter_nd_sub(v, [[1]], [[1., 1.]]))
        s.run(tf.scatter_nd_update(v, [[2, 1]], [-3.]))
        np.testing.assert_array_equal(s.run(v), [[0, 6], [1, 2], [11, -3]])


@pytest.mark.parametrize("mode", ["sync", "threads"])
def test_variable_scatter_nd_on_dask(mode):
    from tests.conftest import make_session

    v = tf.Variable(np.zeros((4, 3)))
    op = tf.scatter_nd_add(v, [[1], [3], [1]], np.ones((3, 3)))
    with make_session(mode, chunks=2) as s:
        s.run(v.initializer)
        s.run(op)
        np.testing.assert_array_equal(s.run(v), [[0] * 3, [2] * 3, [0] * 3, [1] * 3])


def test_bad_input():
    with pytest.raises(ValueError, match="updates must have shape"):
        tf.scatter_nd([[0], [1]], [1., 2, 3], [4])
    with pytest.raises(TypeError, match="indices"):
        tf.scatter_nd([[0.5]], [1.], [4])
    with pytest.raises(TypeError, match="must be a variable"):
        tf.scatter_nd_add(tf.constant([1., 2]), [[0]], [1.])
    with tf.Session() as s:
        with pytest.raises(InvalidArgumentError, match=r"indices\[0\] = \[5\] does not index into shape \[4\]"):
            s.run(tf.scatter_nd(tf.constant([[5]]), tf.constant([1.]), [4]))
        with pytest.raises(InvalidArgumentError, match="does not index into shape"):
            s.run(tf.tensor_scatter_update(tf.zeros([4]), tf.constant([[-1]]), tf.constant([1.])))
