"""Training from a Zarr dataset with tf.data: shuffled minibatches streamed chunk by chunk.

A TF1 input pipeline, unchanged but for the import and the source: `Dataset.from_zarr((X, y))`
reads one row chunk at a time (dflow's chunk reader), `shuffle` reads the chunks in a random order
into its buffer, `batch` and `prefetch` overlap reading with the training step. The iterator's
`get_next()` feeds logistic regression until `OutOfRangeError` ends the epoch.

    python examples/zarr_input_pipeline.py
"""

from __future__ import annotations

import tempfile

import numpy as np
import zarr

import dflow as tf

n, d, chunk = 20_000, 20, 2_000
rng = np.random.default_rng(0)
w_true = rng.standard_normal(d).astype(np.float32)
folder = tempfile.mkdtemp()
X = zarr.create_array(f"{folder}/X.zarr", shape=(n, d), chunks=(chunk, d), dtype="float32")
y = zarr.create_array(f"{folder}/y.zarr", shape=(n,), chunks=(chunk,), dtype="float32")
for i in range(0, n, chunk):
    xs = rng.standard_normal((chunk, d)).astype(np.float32)
    X[i:i + chunk], y[i:i + chunk] = xs, (xs @ w_true > 0).astype(np.float32)

dataset = (tf.data.Dataset.from_zarr((f"{folder}/X.zarr", f"{folder}/y.zarr"))
           .shuffle(buffer_size=5_000, seed=1)
           .batch(256)
           .prefetch(tf.data.experimental.AUTOTUNE))
xb, yb = dataset.make_one_shot_iterator().get_next()

w = tf.Variable(tf.zeros([d]))
b = tf.Variable(0.0)
logits = tf.reduce_sum(xb * w, axis=1) + b
loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=yb, logits=logits))
train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    steps = 0
    while True:
        try:
            _, last = sess.run([train, loss])
        except tf.errors.OutOfRangeError:
            break
        steps += 1
    w_fit, b_fit = sess.run([w, b])

accuracy = np.mean(((X[...] @ w_fit + b_fit) > 0) == (y[...] > 0.5))
print(f"one epoch: {steps} steps, last loss {last:.3f}, accuracy {accuracy:.3f}")
assert steps == -(-n // 256)
assert accuracy > 0.9
