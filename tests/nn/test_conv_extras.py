"""tf.nn's TF1 spellings of convolution pieces (nn/conv_extras.py) against numpy and dflow's own ops."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

RNG = np.random.RandomState(1)


def test_depthwise_backprops_are_the_gradients_of_the_conv():
    x = tf.constant(RNG.randn(2, 6, 5, 3).astype(np.float32))
    w = tf.constant(RNG.randn(3, 3, 3, 2).astype(np.float32))
    y = tf.nn.depthwise_conv2d_native(x, w, [1, 2, 2, 1], "SAME")
    dy = tf.constant(RNG.randn(2, 3, 3, 6).astype(np.float32))
    gx, gw = tf.gradients(y, [x, w], grad_ys=dy)
    bx = tf.nn.depthwise_conv2d_native_backprop_input([2, 6, 5, 3], w, dy, [1, 2, 2, 1], "SAME")
    bw = tf.nn.depthwise_conv2d_backprop_filter(x, [3, 3, 3, 2], dy, [1, 2, 2, 1], "SAME")
    bx2 = tf.nn.depthwise_conv2d_backprop_input([2, 6, 5, 3], w, dy, [1, 2, 2, 1], "SAME")
    bw2 = tf.nn.depthwise_conv2d_native_backprop_filter(x, [3, 3, 3, 2], dy, [1, 2, 2, 1], "SAME")
    gx, gw, bx, bw, bx2, bw2 = run_modes([gx, gw, bx, bw, bx2, bw2])
    np.testing.assert_allclose(bx, gx, rtol=1e-5)
    np.testing.assert_allclose(bw, gw, rtol=1e-5)
    np.testing.assert_allclose(bx2, gx, rtol=1e-5)
    np.testing.assert_allclose(bw2, gw, rtol=1e-5)


def test_conv3d_backprop_filter_matches_numpy():
    xv = RNG.randn(1, 4, 4, 4, 2).astype(np.float32)
    dyv = RNG.randn(1, 3, 3, 3, 3).astype(np.float32)
    got = run_modes(tf.nn.conv3d_backprop_filter(tf.constant(xv), [2, 2, 2, 2, 3], tf.constant(dyv),
                                                 [1, 1, 1, 1, 1], "VALID"))
    want = np.zeros((2, 2, 2, 2, 3), np.float32)
    for a in range(2):
        for b in range(2):
            for c in range(2):
                want[a, b, c] = np.einsum("ndhwi,ndhwo->io", xv[:, a:a + 3, b:b + 3, c:c + 3], dyv)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert tf.nn.conv3d_backprop_filter_v2 is tf.nn.conv3d_backprop_filter
    with pytest.raises(ValueError, match="filter_sizes"):
        tf.nn.conv3d_backprop_filter(tf.constant(xv), [2, 2, 2], tf.constant(dyv), [1] * 5, "VALID")


def test_atrous_conv2d_transpose_is_the_gradient_of_atrous_conv2d():
    x = tf.constant(RNG.randn(2, 7, 7, 3).astype(np.float32))
    w = tf.constant(RNG.randn(3, 3, 3, 4).astype(np.float32))
    dy = tf.constant(RNG.randn(2, 7, 7, 4).astype(np.float32))
    gx = tf.gradients(tf.nn.atrous_conv2d(x, w, 2, "SAME"), x, grad_ys=dy)[0]
    got = tf.nn.atrous_conv2d_transpose(dy, w, [2, 7, 7, 3], 2, "SAME")
    gx, got = run_modes([gx, got])
    np.testing.assert_allclose(got, gx, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="rate"):
        tf.nn.atrous_conv2d_transpose(dy, w, [2, 7, 7, 3], 0, "SAME")


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_with_space_to_batch_gives_the_dilated_conv(padding):
    x = tf.constant(RNG.randn(2, 9, 8, 3).astype(np.float32))
    w = tf.constant(RNG.randn(3, 3, 3, 2).astype(np.float32))
    got = tf.nn.with_space_to_batch(x, [2, 2], padding, lambda inp, n, p: tf.nn.conv2d(inp, w, [1, 1, 1, 1], p),
                                    filter_shape=[3, 3])
    want = tf.nn.conv2d(x, w, [1, 1, 1, 1], padding, dilations=[1, 2, 2, 1])
    got, want = run_modes([got, want])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="filter_shape"):
        tf.nn.with_space_to_batch(x, [2, 2], "SAME", lambda inp, n, p: inp)


def test_safe_embedding_lookup_sparse_drops_bad_ids_and_fills_empty_rows():
    params = RNG.randn(5, 3).astype(np.float32)
    # [2, 2, k] batch: row (0,0) ids 1, 3; (0,1) only an invalid id; (1,0) id 2 with weight 0 and 4; (1,1) empty
    ids = tf.SparseTensor([[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 0, 1]],
                          np.array([1, 3, -1, 2, 4], np.int64), [2, 2, 2])
    w = tf.SparseTensor(ids.indices, np.array([1.0, 3.0, 1.0, 0.0, 2.0], np.float32), [2, 2, 2])
    out = tf.nn.safe_embedding_lookup_sparse(tf.constant(params), ids, w)
    filled = tf.nn.safe_embedding_lookup_sparse(tf.constant(params), ids, None, combiner="sum", default_id=0)
    got, got_filled = run_modes([out, filled])
    want = np.zeros((2, 2, 3), np.float32)
    want[0, 0] = (params[1] + 3 * params[3]) / 4
    want[1, 0] = params[4]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_filled, [[params[1] + params[3], params[0]], [params[2] + params[4], params[0]]],
                               rtol=1e-5)
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.nn.safe_embedding_lookup_sparse(tf.constant(params), [[1]])
