"""space_to_depth, depth_to_space, space_to_batch(_nd), batch_to_space(_nd), extract_image_patches,
unravel_index against numpy references and TF 2.21's figures (tf.compat.v1, hard-coded below),
on the local schedulers; gradients against finite differences; TF's shape errors."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

X = np.arange(2 * 4 * 6 * 3, dtype=np.float32).reshape(2, 4, 6, 3)


def _np_space_to_depth(x, bs):
    n, h, w, c = x.shape
    return x.reshape(n, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5).reshape(n, h // bs, w // bs, -1)


def test_space_to_depth_and_back_on_the_schedulers():
    x = np.random.default_rng(0).standard_normal((2, 4, 6, 3))
    p = tf.placeholder(tf.float64, [2, 4, 6, 3])
    y = tf.space_to_depth(p, 2)
    assert y.shape.as_list() == [2, 2, 3, 12]
    got, back = run_modes([y, tf.depth_to_space(y, 2)], {p: x})
    np.testing.assert_array_equal(got, _np_space_to_depth(x, 2))
    np.testing.assert_array_equal(back, x)
    # TF 2.21: tf.space_to_depth(X, 2)[1, 1, 2]
    np.testing.assert_array_equal(run_modes(tf.nn.space_to_depth(X, 2))[1, 1, 2],
                                  [120, 121, 122, 123, 124, 125, 138, 139, 140, 141, 142, 143])


def test_nchw_is_nhwc_transposed():
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 6))  # NCHW
    got = run_modes(tf.space_to_depth(tf.constant(x), 2, data_format="NCHW"))
    want = _np_space_to_depth(x.transpose(0, 2, 3, 1), 2).transpose(0, 3, 1, 2)
    np.testing.assert_array_equal(got, want)
    back = run_modes(tf.depth_to_space(tf.constant(want), 2, data_format="NCHW"))
    np.testing.assert_array_equal(back, x)


def test_depth_errors_in_tf_words():
    x = tf.zeros([2, 4, 6, 3])
    with pytest.raises(ValueError, match="Dimension size must be evenly divisible by 4 but is 6"):
        tf.space_to_depth(x, 4)
    with pytest.raises(ValueError, match="Attr 'block_size' of 'SpaceToDepth' Op passed 1 less than minimum 2"):
        tf.space_to_depth(x, 1)
    with pytest.raises(ValueError, match="Dimension size must be evenly divisible by 4 but is 3"):
        tf.depth_to_space(x, 2)
    with pytest.raises(ValueError, match="Shape must be rank 4 but is rank 3"):
        tf.space_to_depth(tf.zeros([2, 3, 4]), 2)


def _np_space_to_batch_nd(x, block, pads):
    m = len(block)
    xp = np.pad(x, [(0, 0)] + list(map(tuple, pads)) + [(0, 0)] * (x.ndim - m - 1))
    out = []
    for offs in np.ndindex(*block):  # batch index = (offsets, original batch), offsets major
        sl = tuple(slice(o, None, b) for o, b in zip(offs, block))
        out.append(xp[(slice(None),) + sl])
    return np.concatenate(out, 0)


@pytest.mark.parametrize("shape,block,pads", [((2, 4, 6, 3), [2, 3], [[1, 1], [0, 0]]), ((2, 5, 3), [2], [[1, 0]]),
                                              ((1, 3, 2, 2, 1), [3, 2, 1], [[0, 0], [1, 1], [0, 2]])])
def test_space_to_batch_nd_against_numpy_and_back(shape, block, pads):
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    p = tf.placeholder(tf.float64, shape)
    y = tf.space_to_batch_nd(p, block, pads)
    got, back = run_modes([y, tf.batch_to_space_nd(y, block, pads)], {p: x})
    want = _np_space_to_batch_nd(x, block, pads)
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(back, x)


def test_tf1_4d_wrappers_and_figures():
    # TF 2.21: tf.space_to_batch_nd(X, [2, 3], [[1, 1], [0, 0]])[7, 1, 1]
    np.testing.assert_array_equal(run_modes(tf.space_to_batch_nd(X, [2, 3], [[1, 1], [0, 0]]))[7, 1, 1],
                                  [117, 118, 119])
    y = tf.space_to_batch(X, [[0, 0], [0, 0]], 2)
    assert y.op.type == "SpaceToBatchND" and y.shape.as_list() == [8, 2, 3, 3]  # as TF
    z = tf.batch_to_space(tf.zeros([8, 2, 3, 1]), [[0, 0], [0, 1]], 2)
    assert z.shape.as_list() == [2, 4, 5, 1]
    assert tf.nn.space_to_batch is tf.space_to_batch


def test_batch_errors_in_tf_words():
    with pytest.raises(ValueError, match="Dimension size must be evenly divisible by 2 but is 7"):
        tf.space_to_batch(tf.zeros([2, 4, 6, 3]), [[0, 0], [0, 1]], 2)
    with pytest.raises(ValueError, match="Dimension size must be evenly divisible by 2 but is 7"):
        tf.batch_to_space(tf.zeros([7, 2, 3, 1]), [[0, 0], [0, 1]], 2)
    p = tf.placeholder(tf.int32, [2])
    y = tf.space_to_batch_nd(tf.zeros([2, 5, 3]), p, [[0, 0], [0, 0]])
    with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError, match="not divisible by block_shape"):
        s.run(y, {p: [2, 2]})


def test_shuffle_gradients_against_finite_differences():
    x0 = np.random.default_rng(3).standard_normal((2, 4, 6, 2))
    p = tf.placeholder(tf.float64, x0.shape)
    w = tf.constant(np.random.default_rng(4).standard_normal(96))
    for y in [tf.space_to_depth(p, 2) * tf.reshape(w, [2, 2, 3, 8]),
              tf.depth_to_space(tf.space_to_depth(p * p, 2), 2),
              tf.space_to_batch_nd(p, [2, 2], [[0, 0], [0, 0]]) * tf.reshape(w, [8, 2, 3, 2]),
              tf.batch_to_space_nd(p * p, [1, 2], [[0, 1], [0, 0]])]:
        with tf.Session():
            err = tf.test.compute_gradient_error(p, list(x0.shape), y, y.shape.as_list(), x_init_value=x0)
        assert err < 1e-6


def _np_patches(x, k, s, r, padding):
    n, h, w, d = x.shape
    ekh, ekw = k[1] + (k[1] - 1) * (r[1] - 1), k[2] + (k[2] - 1) * (r[2] - 1)
    if padding == "VALID":
        oh, ow, pt, pl = (h - ekh) // s[1] + 1, (w - ekw) // s[2] + 1, 0, 0
    else:
        oh, ow = -(-h // s[1]), -(-w // s[2])
        pt, pl = max((oh - 1) * s[1] + ekh - h, 0) // 2, max((ow - 1) * s[2] + ekw - w, 0) // 2
    out = np.zeros((n, oh, ow, k[1], k[2], d), x.dtype)
    for i in range(oh):
        for j in range(ow):
            for a in range(k[1]):
                for b in range(k[2]):
                    row, col = i * s[1] - pt + a * r[1], j * s[2] - pl + b * r[2]
                    if 0 <= row < h and 0 <= col < w:
                        out[:, i, j, a, b] = x[:, row, col]
    return out.reshape(n, oh, ow, -1)


@pytest.mark.parametrize("k,s,r,padding", [([1, 3, 3, 1], [1, 2, 2, 1], [1, 2, 1, 1], "SAME"),
                                           ([1, 2, 2, 1], [1, 3, 2, 1], [1, 1, 2, 1], "VALID"),
                                           ([1, 2, 3, 1], [1, 1, 1, 1], [1, 1, 1, 1], "SAME")])
def test_extract_image_patches_against_numpy(k, s, r, padding):
    x = np.random.default_rng(5).standard_normal((2, 5, 6, 3))
    p = tf.placeholder(tf.float64, x.shape)
    y = tf.extract_image_patches(p, k, s, r, padding)
    got = run_modes(y, {p: x})
    want = _np_patches(x, k, s, r, padding)
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_array_equal(got, want)
    with tf.Session():
        w = tf.constant(np.random.default_rng(6).standard_normal(want.shape))
        err = tf.test.compute_gradient_error(p, list(x.shape), y * w, list(want.shape), x_init_value=x)
    assert err < 1e-6


def test_extract_image_patches_tf_figures_and_errors():
    img = np.arange(50, dtype=np.float32).reshape(1, 5, 5, 2)
    got = run_modes([tf.extract_image_patches(img, [1, 3, 3, 1], [1, 2, 2, 1], [1, 2, 1, 1], "SAME"),
                     tf.image.extract_patches(img, [1, 2, 2, 1], [1, 3, 2, 1], [1, 1, 2, 1], "VALID")])
    # TF 2.21 compat.v1
    np.testing.assert_array_equal(got[0][0, 1, 2], [6, 7, 8, 9, 0, 0, 26, 27, 28, 29, 0, 0, 46, 47, 48, 49, 0, 0])
    np.testing.assert_array_equal(got[1][0, :, :, 3], [[5, 9], [35, 39]])
    with pytest.raises(ValueError, match="Attr 'padding' of 'ExtractImagePatches' Op passed string 'FOO'"):
        tf.extract_image_patches(img, [1, 3, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1], "FOO")
    assert tf.image.extract_image_patches is tf.extract_image_patches


def test_unravel_index():
    got = run_modes([tf.unravel_index([22, 41, 37], [7, 6]), tf.unravel_index(5, [2, 3])])
    np.testing.assert_array_equal(got[0], [[3, 6, 6], [4, 5, 1]])  # TF's documented example
    np.testing.assert_array_equal(got[1], [1, 2])
    assert got[0].dtype == np.int32
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="index is out of bound as with dims"):
            s.run(tf.unravel_index([50], [7, 6]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Input dims cannot be negative"):
            s.run(tf.unravel_index([1], [7, -6]))
    with pytest.raises(TypeError):
        tf.unravel_index([1.0], [7, 6])
