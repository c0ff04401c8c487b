"""A small CNN (tf.nn.conv2d, max_pool, dense) trained on an image set stored in Zarr, chunked along
the batch axis: the whole set is fed as a dask array each step, so the convolutions run one task per
chunk and the filter gradients are summed over the chunks. The loss equals the in-memory one.

The images are separable: a bright 4x4 square in the left half (label 1) or the right half
(label 0), on noise. The model reaches > 95 % accuracy in 15 Adam steps.
"""

import os
import tempfile

import dask.array as da
import numpy as np
import zarr

import dflow as tf

N, SIZE, CHUNK = 256, 12, 64


def write_images(path):
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, N)
    images = rng.random((N, SIZE, SIZE, 1), dtype=np.float32)
    for i, label in enumerate(labels):
        r, c = rng.integers(0, SIZE - 4), rng.integers(0, SIZE // 2 - 4) + (0 if label else SIZE // 2)
        images[i, r:r + 4, c:c + 4] += 1
    zarr.create_array(os.path.join(path, "X.zarr"), data=images, chunks=(CHUNK, SIZE, SIZE, 1))
    zarr.create_array(os.path.join(path, "y.zarr"), data=labels.astype(np.int64), chunks=(CHUNK,))


with tempfile.TemporaryDirectory() as tmp:
    write_images(tmp)
    X, Y = da.from_zarr(os.path.join(tmp, "X.zarr")), da.from_zarr(os.path.join(tmp, "y.zarr"))

    x = tf.placeholder(tf.float32, [None, SIZE, SIZE, 1], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    w1 = tf.Variable(tf.truncated_normal([3, 3, 1, 8], stddev=0.3, seed=1), name="w1")
    b1 = tf.Variable(tf.zeros([8]), name="b1")
    w2 = tf.Variable(tf.truncated_normal([6 * 6 * 8, 2], stddev=0.1, seed=2), name="w2")
    b2 = tf.Variable(tf.zeros([2]), name="b2")
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w1, strides=[1, 1, 1, 1], padding="SAME"), b1))
    h = tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    logits = tf.matmul(tf.reshape(h, [-1, 6 * 6 * 8]), w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    train = tf.train.AdamOptimizer(0.02).minimize(loss)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(15):
            _, value = sess.run([train, loss], {x: X, y: Y})  # 4 chunks of 64 images
        chunked_loss, acc = sess.run([loss, accuracy], {x: X, y: Y})
        in_memory_loss = sess.run(loss, {x: X.compute(), y: Y.compute()})

print(f"loss after 15 steps: {chunked_loss:.4f} (in memory: {in_memory_loss:.4f}), accuracy {acc:.3f}")
assert acc > 0.95, acc
assert np.isclose(chunked_loss, in_memory_loss, rtol=1e-5, atol=1e-6), (chunked_loss, in_memory_loss)
