"""A TF1 slim program, unchanged but for the import: an MLP classifier written with
`tf.contrib.slim` (arg_scope, fully_connected with batch_norm and an L2 regularizer, dropout with
a fed is_training flag, slim.losses, optimize_loss), trained on three Gaussian blobs, saved, and
restored by its TF1 checkpoint names (`fc1/weights`, `fc1/BatchNorm/moving_mean`, ...) into a
freshly built graph for inference.

    python examples/slim_classifier.py
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

import dflow as tf

slim = tf.contrib.slim


def data(n, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 3, n)
    centers = np.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]], np.float32)
    return (centers[labels] + 0.6 * rng.randn(n, 2)).astype(np.float32), labels


def model(inputs, is_training):
    with slim.arg_scope([slim.fully_connected], normalizer_fn=slim.batch_norm,
                        normalizer_params={"is_training": is_training, "decay": 0.9},
                        weights_regularizer=slim.l2_regularizer(1e-4)):
        net = slim.stack(inputs, slim.fully_connected, [16, 16], scope="fc")
        net = slim.dropout(net, keep_prob=0.9, is_training=is_training)
        return slim.fully_connected(net, 3, activation_fn=None, normalizer_fn=None, scope="logits")


def train(path):
    tf.set_random_seed(0)
    x_train, y_train = data(512, 0)
    images = tf.placeholder(tf.float32, [None, 2])
    labels = tf.placeholder(tf.int64, [None])
    is_training = tf.placeholder(tf.bool, [])
    logits = model(images, is_training)
    slim.losses.softmax_cross_entropy(logits, tf.one_hot(labels, 3))
    total_loss = slim.losses.get_total_loss()
    train_op = slim.optimize_loss(total_loss, tf.train.get_or_create_global_step(), learning_rate=0.05,
                                  optimizer="Adam")
    saver = tf.train.Saver(slim.get_model_variables())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(12):
            batch = slice((step % 8) * 64, (step % 8 + 1) * 64)
            loss = sess.run(train_op, {images: x_train[batch], labels: y_train[batch], is_training: True})
        saver.save(sess, path)
    names = sorted(v.op.name for v in slim.get_model_variables())
    assert "fc/fc_1/weights" in names and "fc/fc_1/BatchNorm/moving_mean" in names, names
    return loss


def evaluate(path):
    tf.reset_default_graph()
    x_test, y_test = data(256, 1)
    images = tf.placeholder(tf.float32, [None, 2])
    predictions = tf.argmax(model(images, is_training=False), 1)
    with tf.Session() as sess:
        tf.train.Saver(slim.get_model_variables()).restore(sess, path)
        return float(np.mean(sess.run(predictions, {images: x_test}) == y_test))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        final_loss = train(os.path.join(tmp, "model"))
        accuracy = evaluate(os.path.join(tmp, "model"))
    print(f"final training loss {final_loss:.3f}, test accuracy {accuracy:.3f}")
    assert accuracy > 0.9, accuracy
