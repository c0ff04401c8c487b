"""Tutorial-style TF1 programs: an LSTM learns the sum of a bit sequence from its last state, with
static_rnn and with dynamic_rnn (ragged lengths), in process and forced through Dask on sync and
threads; on processes as slow tests."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf

STEPS = 5


def _batch(rng, n=32):
    bits = rng.randint(0, 2, (n, STEPS, 1)).astype(np.float32)
    lengths = rng.randint(1, STEPS + 1, n).astype(np.int32)
    mask = np.arange(STEPS)[None, :] < lengths[:, None]
    return bits, lengths, (bits[:, :, 0] * mask).sum(1)


def _train(dynamic, steps):
    tf.set_random_seed(3)
    rng = np.random.RandomState(0)
    bits = tf.placeholder(tf.float32, [None, STEPS, 1], name="bits")
    lengths = tf.placeholder(tf.int32, [None], name="lengths")
    target = tf.placeholder(tf.float32, [None], name="target")
    cell = tf.nn.rnn_cell.BasicLSTMCell(16)
    if dynamic:
        _, state = tf.nn.dynamic_rnn(cell, bits, sequence_length=lengths, dtype=tf.float32)
    else:
        _, state = tf.contrib.rnn.static_rnn(cell, tf.unstack(bits, axis=1), sequence_length=lengths,
                                             dtype=tf.float32)
    prediction = tf.squeeze(tf.layers.dense(state.h, 1), 1)
    loss = tf.reduce_mean(tf.square(prediction - target))
    train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
    assert [v.name for v in tf.trainable_variables()] == [
        "rnn/basic_lstm_cell/kernel:0", "rnn/basic_lstm_cell/bias:0", "dense/kernel:0", "dense/bias:0"]
    test_x, test_len, test_y = _batch(np.random.RandomState(99), 64)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(loss, {bits: test_x, lengths: test_len, target: test_y})
        for _ in range(steps):
            x, n, y = _batch(rng)
            sess.run(train_op, {bits: x, lengths: n, target: y})
        after = sess.run(loss, {bits: test_x, lengths: test_len, target: test_y})
    return before, after


# dask-processes ships every run's task graph to a process pool (and the dynamic loop runs a plan per
# time step, forward and backward): ~25 s each on a loaded 2-core machine, so those runs are slow
FAST_MODES = ["inprocess", "dask-sync", "dask-threads"]


@pytest.mark.program(modes=FAST_MODES)
def test_static_lstm_learns_to_count_bits():
    before, after = _train(dynamic=False, steps=20)
    assert before > 1.0 and after < 0.3, (before, after)


@pytest.mark.program(modes=FAST_MODES)
def test_dynamic_lstm_learns_to_count_bits():
    before, after = _train(dynamic=True, steps=20)
    assert before > 1.0 and after < 0.3, (before, after)


@pytest.mark.slow
@pytest.mark.program(modes=["dask-processes"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_lstm_learns_to_count_bits_on_processes(dynamic):
    before, after = _train(dynamic=dynamic, steps=20)
    assert before > 1.0 and after < 0.3, (before, after)
