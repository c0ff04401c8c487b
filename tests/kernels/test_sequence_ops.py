"""reverse_sequence against a numpy loop, its gradient, its errors (TF 1.x's words)."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes


def _numpy_reverse(x, lengths, seq, batch):
    out = x.copy()
    for b, n in enumerate(lengths):
        src = [slice(None)] * x.ndim
        src[batch], src[seq] = b, slice(0, n)
        dst = list(src)
        out[tuple(dst)] = np.flip(x[tuple(src)], axis=seq - (batch < seq))
    return out


@pytest.mark.parametrize("shape,seq,batch", [((3, 5), 1, 0), ((5, 3, 2), 0, 1), ((2, 3, 6, 2), 2, 1),
                                             ((4, 2, 3), 2, 0)])
def test_reverse_sequence_against_numpy_on_the_schedulers(shape, seq, batch):
    rng = np.random.default_rng(len(shape) * 10 + seq)
    xv = rng.standard_normal(shape)
    lengths = rng.integers(0, shape[seq] + 1, size=shape[batch])
    x = tf.placeholder(tf.float64, shape)
    y = tf.reverse_sequence(x, tf.constant(lengths, tf.int64), seq_axis=seq, batch_axis=batch)
    np.testing.assert_array_equal(run_modes(y, {x: xv}), _numpy_reverse(xv, lengths, seq, batch))


def test_tf1_example_and_gradient():
    x = tf.constant(np.arange(24.0).reshape(2, 4, 3))
    y = tf.reverse_sequence(x, [3, 0], seq_axis=1, batch_axis=0)
    (g,) = tf.gradients(tf.reduce_sum(y * tf.constant(np.arange(24.0).reshape(2, 4, 3))), x)
    got = run_modes([y, g])
    np.testing.assert_array_equal(got[0][:, :, 0], [[6, 3, 0, 9], [12, 15, 18, 21]])  # TF 2.21 compat.v1
    np.testing.assert_array_equal(got[1][:, :, 0], [[6, 3, 0, 9], [12, 15, 18, 21]])
    p = tf.placeholder(tf.float64, [3, 4])
    z = tf.reverse_sequence(p * p, [4, 2, 1], seq_dim=1) * tf.constant(np.arange(12.0).reshape(3, 4))
    with tf.Session():
        assert tf.test.compute_gradient_error(p, [3, 4], z, [3, 4], delta=1e-6) < 1e-6


def test_errors():
    x = tf.constant(np.zeros((2, 4, 3)))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.reverse_sequence(x, [1, 1, 1], seq_axis=1)
    with pytest.raises(TypeError):
        tf.reverse_sequence(x, [1.0, 1.0], seq_axis=1)
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"seq_lens\(0\) > input.dims\(1\)"):
            s.run(tf.reverse_sequence(x, [5, 1], seq_axis=1))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"seq_lens\(0\) < 0"):
            s.run(tf.reverse_sequence(x, [-1, 1], seq_axis=1))
