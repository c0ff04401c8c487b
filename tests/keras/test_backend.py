"""tf.keras.backend's functions beyond the core (convolutions, pools, padding, resizing, the rnn
loop, random variables, ...) against numpy, with channels_first transposes."""

import numpy as np
import pytest

import dflow as tf
from dflow import errors
from dflow.keras import backend as K

rng = np.random.RandomState(0)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def _run(x):
    return K.get_session().run(x)


def _conv2d_np(x, w, stride=1, pad=(0, 0)):
    x = np.pad(x, [(0, 0), (pad[0], pad[0]), (pad[1], pad[1]), (0, 0)])
    n, h, wd, c = x.shape
    kh, kw, _, o = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, oh, ow, o))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j] = np.tensordot(patch, w, axes=[[1, 2, 3], [0, 1, 2]])
    return out


def test_small_functions():
    assert K.backend() == "tensorflow"
    assert K.cast_to_floatx([1, 2]).dtype == np.float32
    x = rng.rand(3, 4).astype(np.float32)
    got = _run([K.arange(5), K.arange(1, 7, 2), K.arange(-3), K.cumsum(x, 1), K.cumprod(x, 0), K.sin(x), K.cos(x),
                K.identity(x), K.reverse(x, 1), K.reverse(x, (0, 1)), K.one_hot(np.array([0, 2]), 3),
                K.repeat_elements(x, 2, 1), K.in_top_k(x, np.array([0, 1, 2], np.int32), 2)])
    np.testing.assert_array_equal(got[0], np.arange(5))
    np.testing.assert_array_equal(got[1], [1, 3, 5])
    assert got[2].shape == (0,)
    np.testing.assert_allclose(got[3], np.cumsum(x, 1), rtol=1e-6)
    np.testing.assert_allclose(got[4], np.cumprod(x, 0), rtol=1e-6)
    np.testing.assert_allclose(got[5], np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(got[6], np.cos(x), rtol=1e-6)
    np.testing.assert_array_equal(got[7], x)
    np.testing.assert_array_equal(got[8], x[:, ::-1])
    np.testing.assert_array_equal(got[9], x[::-1, ::-1])
    np.testing.assert_array_equal(got[10], np.eye(3)[[0, 2]])
    np.testing.assert_array_equal(got[11], np.repeat(x, 2, 1))
    top2 = np.argsort(-x, 1)[:, :2]
    np.testing.assert_array_equal(got[12], [t in row for t, row in zip([0, 1, 2], top2)])


def test_functional_and_sparse():
    x = np.arange(1, 5, dtype=np.float32)
    got = _run([K.map_fn(lambda v: v * 2, x), K.foldl(lambda a, v: a - v, x), K.foldr(lambda a, v: a - v, x)])
    np.testing.assert_array_equal(got[0], x * 2)
    assert got[1] == 1 - 2 - 3 - 4 and got[2] == 4 - 3 - 2 - 1
    sp = tf.SparseTensor(indices=[[0, 1]], values=[3.0], dense_shape=[2, 2])
    assert K.is_sparse(sp) and not K.is_sparse(tf.constant(1.0))
    np.testing.assert_array_equal(_run(K.to_dense(sp)), [[0, 3], [0, 0]])


def test_random_and_print(capsys):
    b = K.random_binomial((2000,), p=0.3, seed=1)
    t = K.truncated_normal((2000,), stddev=2.0, seed=1)
    v = K.random_normal_variable((3, 4), 1.0, 0.5, seed=2, name="rn")
    u = K.random_uniform_variable((3, 4), -1.0, 2.0, seed=2)
    bv, tv, vv, uv = _run([b, t, v, u])
    assert set(np.unique(bv)) <= {0.0, 1.0} and 0.25 < bv.mean() < 0.35
    assert np.abs(tv).max() <= 4.0 + 1e-5
    assert vv.shape == (3, 4) and v.name == "rn:0" and uv.min() >= -1.0 and uv.max() < 2.0
    p = K.print_tensor(tf.constant([1.0, 2.0]), message="value: ")
    np.testing.assert_array_equal(_run(p), [1, 2])
    assert "value: " in capsys.readouterr().err


def test_paddings():
    x = rng.rand(2, 3, 4, 5).astype(np.float32)
    got = _run([K.temporal_padding(x[0], (1, 2)), K.spatial_2d_padding(x, ((1, 0), (0, 2))),
                K.spatial_2d_padding(x, ((1, 0), (0, 2)), data_format="channels_first"),
                K.spatial_3d_padding(x[..., None], ((1, 1), (0, 1), (2, 0)))])
    np.testing.assert_array_equal(got[0], np.pad(x[0], [(0, 0), (1, 2), (0, 0)]))
    np.testing.assert_array_equal(got[1], np.pad(x, [(0, 0), (1, 0), (0, 2), (0, 0)]))
    np.testing.assert_array_equal(got[2], np.pad(x, [(0, 0), (0, 0), (1, 0), (0, 2)]))
    np.testing.assert_array_equal(got[3], np.pad(x[..., None], [(0, 0), (1, 1), (0, 1), (2, 0), (0, 0)]))
    with pytest.raises(ValueError):
        K.spatial_2d_padding(x, ((1, 1),))


def test_bias_add():
    x = rng.rand(2, 3, 4, 5).astype(np.float32)
    b, b3 = rng.rand(5).astype(np.float32), rng.rand(3, 4, 5).astype(np.float32)
    got = _run([K.bias_add(x, b), K.bias_add(x, b[:3], data_format="channels_first"), K.bias_add(x, b3)])
    np.testing.assert_allclose(got[0], x + b, rtol=1e-6)
    np.testing.assert_allclose(got[1], x + b[:3, None, None], rtol=1e-6)
    np.testing.assert_allclose(got[2], x + b3, rtol=1e-6)
    with pytest.raises(ValueError, match="Unexpected bias dimensions"):
        K.bias_add(x, rng.rand(4, 5).astype(np.float32))


def test_conv1d_and_conv2d_both_formats():
    x = rng.rand(2, 6, 7, 3).astype(np.float32)
    w = rng.rand(3, 2, 3, 4).astype(np.float32)
    want = _conv2d_np(x, w)
    first = np.transpose(x, (0, 3, 1, 2))
    got = _run([K.conv2d(x, w), K.conv2d(first, w, data_format="channels_first"),
                K.conv2d(x, w, strides=(2, 2), padding="same")])
    np.testing.assert_allclose(got[0], want, rtol=1e-5)
    np.testing.assert_allclose(got[1], np.transpose(want, (0, 3, 1, 2)), rtol=1e-5)
    assert got[2].shape == (2, 3, 4, 4)
    x1, w1 = rng.rand(2, 6, 3).astype(np.float32), rng.rand(3, 3, 4).astype(np.float32)
    want1 = _conv2d_np(x1[:, None], w1[None])[:, 0]
    causal = _conv2d_np(np.pad(x1, [(0, 0), (2, 0), (0, 0)])[:, None], w1[None])[:, 0]
    got = _run([K.conv1d(x1, w1), K.conv1d(np.transpose(x1, (0, 2, 1)), w1, data_format="channels_first"),
                K.conv1d(x1, w1, padding="causal")])
    np.testing.assert_allclose(got[0], want1, rtol=1e-5)
    np.testing.assert_allclose(got[1], np.transpose(want1, (0, 2, 1)), rtol=1e-5)
    np.testing.assert_allclose(got[2], causal, rtol=1e-5)
    with pytest.raises(ValueError, match="Invalid padding"):
        K.conv2d(x, w, padding="full")


def test_conv2d_transpose_depthwise_separable():
    x = rng.rand(2, 3, 3, 2).astype(np.float32)
    w = rng.rand(2, 2, 4, 2).astype(np.float32)  # [kh, kw, out, in]
    got = _run(K.conv2d_transpose(x, w, (None, 4, 4, 4)))
    want = np.zeros((2, 4, 4, 4))
    for i in range(3):
        for j in range(3):
            want[:, i:i + 2, j:j + 2, :] += np.einsum("nc,hwoc->nhwo", x[:, i, j], w)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    got_first = _run(K.conv2d_transpose(np.transpose(x, (0, 3, 1, 2)), w, (2, 4, 4, 4), data_format="channels_first"))
    np.testing.assert_allclose(got_first, np.transpose(want, (0, 3, 1, 2)), rtol=1e-5)
    dw = rng.rand(2, 2, 2, 3).astype(np.float32)  # [kh, kw, in, multiplier]
    pw = rng.rand(1, 1, 6, 5).astype(np.float32)
    dw_want = np.concatenate([_conv2d_np(x[..., c:c + 1], dw[:, :, c:c + 1, :]) for c in range(2)], -1)
    got = _run([K.depthwise_conv2d(x, dw), K.separable_conv2d(x, dw, pw)])
    np.testing.assert_allclose(got[0], dw_want, rtol=1e-5)
    np.testing.assert_allclose(got[1], np.tensordot(dw_want, pw[0, 0], 1), rtol=1e-5)


def test_conv3d_and_pools():
    x = rng.rand(2, 4, 5, 5, 3).astype(np.float32)
    w = rng.rand(2, 3, 3, 3, 2).astype(np.float32)
    want = np.stack([sum(_conv2d_np(x[:, d + k], w[k]) for k in range(2)) for d in range(3)], 1)
    got = _run([K.conv3d(x, w), K.conv3d(np.transpose(x, (0, 4, 1, 2, 3)), w, data_format="channels_first"),
                K.conv3d(x, w, padding="same")])
    np.testing.assert_allclose(got[0], want, rtol=1e-5)
    np.testing.assert_allclose(got[1], np.transpose(want, (0, 4, 1, 2, 3)), rtol=1e-5)
    assert got[2].shape == (2, 4, 5, 5, 2)
    x2 = rng.rand(2, 4, 6, 3).astype(np.float32)
    blocks = x2.reshape(2, 2, 2, 3, 2, 3)
    got = _run([K.pool2d(x2, (2, 2), (2, 2)), K.pool2d(x2, (2, 2), (2, 2), pool_mode="avg"),
                K.pool2d(np.transpose(x2, (0, 3, 1, 2)), (2, 2), (2, 2), data_format="channels_first"),
                K.pool3d(x, (2, 1, 1), (2, 1, 1), pool_mode="avg")])
    np.testing.assert_allclose(got[0], blocks.max((2, 4)), rtol=1e-6)
    np.testing.assert_allclose(got[1], blocks.mean((2, 4)), rtol=1e-6)
    np.testing.assert_allclose(got[2], np.transpose(blocks.max((2, 4)), (0, 3, 1, 2)), rtol=1e-6)
    np.testing.assert_allclose(got[3], x.reshape(2, 2, 2, 5, 5, 3).mean(2), rtol=1e-6)
    with pytest.raises(ValueError, match="Invalid pooling mode"):
        K.pool2d(x2, (2, 2), (2, 2), pool_mode="min")


def test_local_convs():
    x = rng.rand(2, 5, 3).astype(np.float32)
    k = rng.rand(2, 2 * 3, 4).astype(np.float32)  # output length 2 (kernel 2, stride 2)
    want = np.stack([x[:, 2 * i:2 * i + 2].reshape(2, -1) @ k[i] for i in range(2)], 1)
    np.testing.assert_allclose(_run(K.local_conv1d(x, k, (2,), (2,))), want, rtol=1e-5)
    x2 = rng.rand(2, 4, 4, 3).astype(np.float32)
    k2 = rng.rand(4, 2 * 2 * 3, 5).astype(np.float32)
    want2 = np.zeros((2, 2, 2, 5))
    for i in range(2):
        for j in range(2):
            want2[:, i, j] = x2[:, 2 * i:2 * i + 2, 2 * j:2 * j + 2].reshape(2, -1) @ k2[2 * i + j]
    np.testing.assert_allclose(_run(K.local_conv2d(x2, k2, (2, 2), (2, 2), (2, 2))), want2, rtol=1e-5)
    got_first = _run(K.local_conv2d(np.transpose(x2, (0, 3, 1, 2)), k2, (2, 2), (2, 2), (2, 2),
                                    data_format="channels_first"))
    np.testing.assert_allclose(got_first, np.transpose(want2, (0, 3, 1, 2)), rtol=1e-5)


def test_resizes():
    x = rng.rand(2, 2, 3, 4).astype(np.float32)
    got = _run([K.resize_images(x, 2, 3, "channels_last"),
                K.resize_images(np.transpose(x, (0, 3, 1, 2)), 2, 1, "channels_first"),
                K.resize_volumes(x[..., None], 2, 1, 2, "channels_last")])
    np.testing.assert_allclose(got[0], np.repeat(np.repeat(x, 2, 1), 3, 2))
    np.testing.assert_allclose(got[1], np.transpose(np.repeat(x, 2, 1), (0, 3, 1, 2)))
    np.testing.assert_allclose(got[2], np.repeat(np.repeat(x[..., None], 2, 1), 2, 3))
    assert _run(K.resize_images(x, 2, 2, "channels_last", interpolation="bilinear")).shape == (2, 4, 6, 4)


def test_batch_norms():
    x = rng.rand(6, 3, 4).astype(np.float32)
    gamma, beta = rng.rand(4).astype(np.float32), rng.rand(4).astype(np.float32)
    normed, mean, var = _run(K.normalize_batch_in_training(x, gamma, beta, [0, 1]))
    np.testing.assert_allclose(mean, x.mean((0, 1)), rtol=1e-5)
    np.testing.assert_allclose(var, x.var((0, 1)), rtol=1e-4)
    want = (x - x.mean((0, 1))) / np.sqrt(x.var((0, 1)) + 1e-3) * gamma + beta
    np.testing.assert_allclose(normed, want, rtol=1e-4, atol=1e-5)
    normed, mean, _ = _run(K.normalize_batch_in_training(x, None, None, [0, 2]))
    np.testing.assert_allclose(mean, x.mean((0, 2)), rtol=1e-5)
    np.testing.assert_allclose(normed, (x - x.mean((0, 2))[:, None]) / np.sqrt(x.var((0, 2))[:, None] + 1e-3),
                               rtol=1e-4, atol=1e-5)
    m, v = rng.rand(4).astype(np.float32), rng.rand(4).astype(np.float32)
    np.testing.assert_allclose(_run(K.batch_normalization(x, m, v, beta, gamma, epsilon=0.01)),
                               (x - m) / np.sqrt(v + 0.01) * gamma + beta, rtol=1e-5)


def _rnn_np(x, w, mask=None, backwards=False):
    """Cumulative tanh RNN h = tanh(x_t @ w + h) with Keras's mask rules."""
    steps = list(range(x.shape[1]))[::-1] if backwards else list(range(x.shape[1]))
    h = np.zeros((x.shape[0], w.shape[1]))
    outs = []
    prev = np.zeros_like(h)
    for t in steps:
        new = np.tanh(x[:, t] @ w + h)
        if mask is not None:
            m = mask[:, t:t + 1]
            new_out, h = np.where(m, new, prev), np.where(m, new, h)
        else:
            new_out, h = new, new
        prev = new_out
        outs.append(new_out)
    return prev, np.stack(outs, 1), h


@pytest.mark.parametrize("unroll", [False, True])
@pytest.mark.parametrize("backwards", [False, True])
def test_rnn(unroll, backwards):
    x = rng.rand(3, 4, 2).astype(np.float32)
    w = rng.rand(2, 5).astype(np.float32)
    mask = np.array([[1, 1, 1, 0], [1, 0, 1, 1], [1, 1, 1, 1]], bool)
    scale = np.float32(1.0)

    def step(x_t, states):
        h, c = states
        out = K.tanh(K.dot(x_t, tf.constant(w)) + h) * c
        return out, [out]

    last, outs, states = K.rnn(step, tf.constant(x), [tf.zeros([3, 5])], go_backwards=backwards, mask=mask,
                               constants=[tf.constant(scale)], unroll=unroll)
    got = _run([last, outs, states[0]])
    want = _rnn_np(x, w, mask, backwards)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    # time-major, no mask
    def plain_step(x_t, states):
        out = K.tanh(K.dot(x_t, tf.constant(w)) + states[0])
        return out, [out]

    last, outs, _ = K.rnn(plain_step, tf.constant(np.transpose(x, (1, 0, 2))), [tf.zeros([3, 5])], time_major=True,
                          unroll=unroll)
    want = _rnn_np(x, w)
    got = _run([last, outs])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    np.testing.assert_allclose(got[1], np.transpose(want[1], (1, 0, 2)), rtol=1e-5)


def test_rnn_errors_and_ctc():
    with pytest.raises(ValueError, match="at least 3D"):
        K.rnn(lambda x, s: (x, s), tf.zeros([2, 3]), [])
    with pytest.raises(errors.UnimplementedError, match="CTC"):
        K.ctc_batch_cost(None, None, None, None)
    with pytest.raises(errors.UnimplementedError, match="ctc_greedy_decoder"):
        K.ctc_decode(None, None)
