"""static_rnn and static_bidirectional_rnn (dflow/rnn/static.py) against the numpy cells, with ragged
sequence lengths, and their gradients against central differences."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from dflow.test import compute_gradient_error

from . import reference as ref

rnn_cell = tf.nn.rnn_cell


def _lstm_run(sess, cell, xs, lengths, reverse=False):
    kernel, bias = sess.run(cell.weights)
    b, n = xs.shape[0], kernel.shape[1] // 4
    zero = (np.zeros((b, n)), np.zeros((b, n)))
    return ref.run(lambda x, s: ref.basic_lstm(x, s, kernel, bias), xs, zero, lengths)


def test_static_rnn_with_ragged_lengths_matches_numpy():
    rng = np.random.RandomState(0)
    x = tf.placeholder(tf.float64, [3, 4, 2])
    lengths = tf.placeholder(tf.int32, [3])
    cell = rnn_cell.BasicLSTMCell(5)
    outs, state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), sequence_length=lengths, dtype=tf.float64)
    assert len(outs) == 4 and outs[0].shape.as_list() == [3, 5]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv, lv = rng.randn(3, 4, 2), np.array([4, 1, 2])
        o, s = sess.run([outs, state], {x: xv, lengths: lv})
        want_o, want_s = _lstm_run(sess, cell, xv, lv)
    np.testing.assert_allclose(np.stack(o, 1), want_o, rtol=1e-10)
    np.testing.assert_allclose(s.c, want_s[0], rtol=1e-10)
    np.testing.assert_allclose(s.h, want_s[1], rtol=1e-10)
    assert np.all(np.stack(o, 1)[1, 1:] == 0)  # past its length a row's outputs are zeros


def test_static_rnn_gradients_against_central_differences():
    rng = np.random.RandomState(1)
    x = tf.placeholder(tf.float64, [2, 3, 2])
    cell = rnn_cell.GRUCell(3)
    outs, state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), sequence_length=[3, 2], dtype=tf.float64)
    y = tf.concat(outs + [state], 1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with sess.as_default():
            assert compute_gradient_error(x, [2, 3, 2], y, [2, 12], x_init_value=rng.randn(2, 3, 2)) < 1e-6
            # the kernels' gradients: one variable per step's reuse, summed over the steps
            loss = tf.reduce_sum(y * rng.randn(2, 12))
            kernel = cell.weights[0]
            (g,) = sess.run(tf.gradients(loss, [kernel]), {x: rng.randn(2, 3, 2)})
            assert g.shape == (5, 6) and np.abs(g).sum() > 0


def test_static_bidirectional_rnn_matches_numpy():
    rng = np.random.RandomState(2)
    x = tf.placeholder(tf.float64, [2, 4, 3])
    fw, bw = rnn_cell.BasicLSTMCell(2), rnn_cell.BasicLSTMCell(3)
    outs, sf, sb = tf.nn.static_bidirectional_rnn(fw, bw, tf.unstack(x, axis=1), sequence_length=[4, 2],
                                                  dtype=tf.float64)
    assert [v.name for v in tf.global_variables()][:2] == ["bidirectional_rnn/fw/basic_lstm_cell/kernel:0",
                                                           "bidirectional_rnn/fw/basic_lstm_cell/bias:0"]
    assert outs[0].shape.as_list() == [2, 5]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv, lv = rng.randn(2, 4, 3), np.array([4, 2])
        o, vf, vb = sess.run([outs, sf, sb], {x: xv})
        want_f, want_sf = _lstm_run(sess, fw, xv, lv)
        rev = np.stack([np.concatenate([xv[i, :n][::-1], xv[i, n:]]) for i, n in enumerate(lv)])
        want_b, want_sb = _lstm_run(sess, bw, rev, lv)
    want_b = np.stack([np.concatenate([want_b[i, :n][::-1], want_b[i, n:]]) for i, n in enumerate(lv)])
    np.testing.assert_allclose(np.stack(o, 1), np.concatenate([want_f, want_b], 2), rtol=1e-10)
    np.testing.assert_allclose(vb.h, want_sb[1], rtol=1e-10)
    np.testing.assert_allclose(vf.c, want_sf[0], rtol=1e-10)


def test_static_rnn_bad_arguments():
    cell = rnn_cell.GRUCell(2)
    with pytest.raises(TypeError, match="inputs must be a sequence"):
        tf.nn.static_rnn(cell, tf.zeros([2, 3, 1]), dtype=tf.float32)
    with pytest.raises(ValueError, match="inputs must not be empty"):
        tf.nn.static_rnn(cell, [], dtype=tf.float32)
    with pytest.raises(ValueError, match="dtype must be specified"):
        tf.nn.static_rnn(cell, [tf.zeros([2, 1])])
    with pytest.raises(ValueError, match="must be accessible via shape inference"):
        tf.nn.static_rnn(cell, [tf.placeholder(tf.float32, [2, None])], dtype=tf.float32)
