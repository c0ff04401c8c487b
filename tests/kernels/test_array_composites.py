"""repeat, shape_n, parallel_stack, batch_gather, required_space_to_batch_paddings, div_no_nan,
saturate_cast, accumulate_n against numpy and TF 2.21's figures (tf.compat.v1, hard-coded), on
the local schedulers."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes


def test_repeat_against_numpy_and_its_gradient():
    x = np.random.default_rng(0).standard_normal((3, 4))
    p = tf.placeholder(tf.float64, [3, 4])
    r = tf.placeholder(tf.int32, [None])
    got = run_modes([tf.repeat(p, r, axis=1), tf.repeat(p, 2), tf.repeat(p, [1, 0, 2], axis=0)],
                    {p: x, r: [1, 0, 2, 3]})
    np.testing.assert_array_equal(got[0], np.repeat(x, [1, 0, 2, 3], axis=1))
    np.testing.assert_array_equal(got[1], np.repeat(x, 2))
    np.testing.assert_array_equal(got[2], np.repeat(x, [1, 0, 2], axis=0))
    (g,) = tf.gradients(tf.reduce_sum(tf.repeat(p, [1, 3, 0, 2], axis=1) * 2.0), p)
    np.testing.assert_array_equal(run_modes(g, {p: x}), np.tile([2.0, 6.0, 0.0, 4.0], (3, 1)))
    with pytest.raises(ValueError, match="Dimensions 2 and 3 are not compatible"):  # TF's words
        tf.repeat([[1, 2], [3, 4]], [1, 2, 3], axis=0)
    with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError, match="repeats"):
        s.run(tf.repeat(p, r, axis=1), {p: x, r: [1, 2]})


def test_batch_gather_as_tf():
    got = run_modes(tf.batch_gather(tf.reshape(tf.range(12), [2, 6]), [[0, 5], [1, 1]]))
    np.testing.assert_array_equal(got, [[0, 5], [7, 7]])  # TF 2.21 compat.v1
    params = np.random.default_rng(1).standard_normal((2, 3, 5, 4))
    idx = np.random.default_rng(2).integers(0, 5, (2, 3, 6))
    p = tf.placeholder(tf.float64, params.shape)
    y = tf.batch_gather(p, idx)
    np.testing.assert_array_equal(run_modes(y, {p: params}), np.take_along_axis(params, idx[..., None], 2))
    with tf.Session():
        w = tf.constant(np.random.default_rng(3).standard_normal((2, 3, 6, 4)))
        err = tf.test.compute_gradient_error(p, list(params.shape), y * w, [2, 3, 6, 4], x_init_value=params)
    assert err < 1e-6


def test_required_space_to_batch_paddings_as_tf():
    pads, crops = run_modes(list(tf.required_space_to_batch_paddings([5, 7], [2, 3], [[1, 0], [0, 2]])))
    np.testing.assert_array_equal(pads, [[1, 0], [0, 2]])  # TF 2.21 compat.v1
    np.testing.assert_array_equal(crops, [[0, 0], [0, 0]])
    shape = tf.placeholder(tf.int32, [2])
    pads, crops = tf.required_space_to_batch_paddings(shape, [2, 3])
    assert pads.op.name.endswith("paddings") and crops.op.name.endswith("crops")
    got = run_modes([pads, crops], {shape: [5, 7]})
    np.testing.assert_array_equal(got[0], [[0, 1], [0, 2]])
    np.testing.assert_array_equal(got[1], [[0, 1], [0, 2]])


def test_shape_n_and_parallel_stack():
    a, b = tf.zeros([4, 6]), tf.placeholder(tf.float32, [None])
    sa, sb = tf.shape_n([a, b])
    got = run_modes([sa, sb], {b: np.zeros(3, np.float32)})
    assert [v.tolist() for v in got] == [[4, 6], [3]]
    got = run_modes(tf.parallel_stack([tf.zeros([2]), tf.ones([2])]))
    np.testing.assert_array_equal(got, [[0, 0], [1, 1]])
    with pytest.raises(ValueError, match="shape attr must be fully defined"):
        tf.parallel_stack([b])


def test_div_no_nan_saturate_cast_accumulate_n():
    got = run_modes([tf.div_no_nan(tf.constant([1.0, 2.0]), tf.constant([0.0, 4.0])),
                     tf.saturate_cast([-300., 1.5, 300.], tf.uint8),
                     tf.accumulate_n([tf.ones([2]), tf.constant([2.0, 3.0])])])
    np.testing.assert_array_equal(got[0], [0.0, 0.5])
    np.testing.assert_array_equal(got[1], [0, 1, 255])  # TF 2.21 compat.v1
    np.testing.assert_array_equal(got[2], [3.0, 4.0])
    assert tf.math.divide_no_nan is tf.div_no_nan and tf.math.accumulate_n is tf.accumulate_n
    with pytest.raises(ValueError, match=r"Shapes \(2,\) and \(3,\) are not compatible"):
        tf.accumulate_n([tf.zeros([2]), tf.zeros([3])])
    with pytest.raises(ValueError, match="inputs must be a list of at least one Tensor"):
        tf.accumulate_n([])
