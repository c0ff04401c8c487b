"""grad_util.unbroadcast: gradients summed back to their input's shape, when shapes are static,
partly static, or known only at run time (the SumToShape op)."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes


@pytest.mark.parametrize("a_shape,b_shape", [((4, 3), (3,)), ((4, 3), (1, 3)), ((4, 3), (4, 1)), ((1, 3), (4, 1)),
                                             ((4, 3), ()), ((2, 4, 3), (4, 3))])
def test_gradients_of_broadcasting_ops_with_unknown_shapes(a_shape, b_shape):
    rng = np.random.default_rng(0)
    av, bv = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    a = tf.placeholder(tf.float64, [None] * len(a_shape))
    b = tf.placeholder(tf.float64, [None] * len(b_shape))
    out = tf.reduce_sum(tf.square(a * b - b))
    ga, gb = tf.gradients(out, [a, b])
    assert any(op.type == "SumToShape" for op in ga.graph.get_operations())
    got_a, got_b = run_modes([ga, gb], {a: av, b: bv})
    d = 2 * (av * bv - bv)
    np.testing.assert_allclose(got_a, _sum_to(d * bv, a_shape), rtol=1e-12)
    np.testing.assert_allclose(got_b, _sum_to(d * (av - 1), b_shape), rtol=1e-12)


def test_static_bias_needs_no_run_time_shape_ops():
    x = tf.placeholder(tf.float32, [None, 3])
    b = tf.Variable(np.zeros(3, np.float32))
    (gb,) = tf.gradients(tf.reduce_sum(x + b), [b])
    assert gb.shape.as_list() == [3]
    assert gb.op.type == "Sum"  # axis 0 summed, decided when the gradient was built
    with tf.Session() as s:
        s.run(b.initializer)
        np.testing.assert_allclose(s.run(gb, {x: np.ones((5, 3), np.float32)}), [5, 5, 5])


def test_second_order_through_sum_to_shape():
    a = tf.placeholder(tf.float64, [None, None])
    b = tf.placeholder(tf.float64, [None])
    (gb,) = tf.gradients(tf.reduce_sum(a * b * b), [b])  # sum_i a_ij * 2 b_j
    (ggb,) = tf.gradients(tf.reduce_sum(gb * gb), [b])  # 2 * gb * 2 * sum_i a_ij
    av, bv = np.arange(6.0).reshape(2, 3), np.array([1.0, -2.0, 0.5])
    got_gb, got_ggb = run_modes([gb, ggb], {a: av, b: bv})
    np.testing.assert_allclose(got_gb, 2 * bv * av.sum(0))
    np.testing.assert_allclose(got_ggb, 2 * got_gb * 2 * av.sum(0))


def _sum_to(g, shape):
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    axes = tuple(i for i, d in enumerate(shape) if d == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True).reshape(shape) if axes else g.reshape(shape)
