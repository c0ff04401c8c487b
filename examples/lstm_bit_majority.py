"""A TF1 recurrent-network program (the shape of TF's `recurrent_network.py` example), unchanged but
for the import: `tf.contrib.rnn.static_rnn` over a BasicLSTMCell reads a sequence of bits one step
at a time and classifies whether ones are the majority. The trained weights are saved by their TF1
names (`rnn/basic_lstm_cell/kernel`, ...) and restored into a `tf.nn.dynamic_rnn` graph, which
gives the same predictions.

    python examples/lstm_bit_majority.py
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

import dflow as tf
from dflow.contrib import rnn

TIMESTEPS, HIDDEN, CLASSES = 7, 16, 2


def data(n, seed):
    rng = np.random.RandomState(seed)
    bits = rng.randint(0, 2, (n, TIMESTEPS, 1)).astype(np.float32)
    return bits, (bits.sum((1, 2)) > TIMESTEPS / 2).astype(np.int64)


def weights():
    return (tf.get_variable("out_w", [HIDDEN, CLASSES], initializer=tf.random_normal_initializer(stddev=0.1)),
            tf.get_variable("out_b", [CLASSES], initializer=tf.zeros_initializer()))


def train(path):
    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [None, TIMESTEPS, 1])
    y = tf.placeholder(tf.int64, [None])
    steps = tf.unstack(x, TIMESTEPS, 1)
    lstm_cell = rnn.BasicLSTMCell(HIDDEN, forget_bias=1.0)
    outputs, _ = rnn.static_rnn(lstm_cell, steps, dtype=tf.float32)
    w, b = weights()
    logits = tf.matmul(outputs[-1], w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    test_x, test_y = data(256, 99)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(30):
            bx, by = data(64, step)
            sess.run(train_op, {x: bx, y: by})
        acc, predicted = sess.run([accuracy, tf.argmax(logits, 1)], {x: test_x, y: test_y})
        tf.train.Saver(tf.trainable_variables()).save(sess, path)
    print(f"static_rnn LSTM: test accuracy {acc:.3f}")
    assert acc > 0.9, acc
    return predicted


def restore_into_dynamic_rnn(path):
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, TIMESTEPS, 1])
    _, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(HIDDEN), x, dtype=tf.float32)
    w, b = weights()
    predicted = tf.argmax(tf.matmul(state.h, w) + b, 1)
    names = sorted(v.op.name for v in tf.trainable_variables())
    assert names == ["out_b", "out_w", "rnn/basic_lstm_cell/bias", "rnn/basic_lstm_cell/kernel"], names
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, path)
        return sess.run(predicted, {x: data(256, 99)[0]})


def main():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "lstm")
        static = train(path)
        dynamic = restore_into_dynamic_rnn(path)
    print(f"dynamic_rnn with the restored weights agrees on {np.mean(static == dynamic):.3f} of the predictions")
    assert np.array_equal(static, dynamic)


if __name__ == "__main__":
    main()
