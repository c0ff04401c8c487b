"""Writes tests/fixtures/tf_object_checkpoint/: a TF 1.x `tf.train.Checkpoint(model=, optimizer=,
v=, step=)` saved after one Adam step in graph mode (`ck-1`, TensorFlow's object-based V2
checkpoint with its object graph), and `expected.npz`: every saved value by checkpoint key, for
dflow's `tf.train.Checkpoint.restore` of a TF-written file.

    TF_USE_LEGACY_KERAS=1 /tmp/tfenv/bin/python tools/make_tf_object_checkpoint_fixture.py
"""

import os

import numpy as np
import tensorflow.compat.v1 as tf
import tf_keras as keras
from tensorflow.python.training import py_checkpoint_reader

tf.disable_v2_behavior()
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "tf_object_checkpoint")


def main():
    os.makedirs(OUT, exist_ok=True)
    v = tf.Variable([1.0, 2.0], name="v")
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,), kernel_initializer="ones",
                                                 bias_initializer="zeros")])
    opt = tf.train.AdamOptimizer(0.1)
    loss = tf.reduce_sum(model(tf.ones([1, 3]))) + tf.reduce_sum(v * v)
    train = opt.minimize(loss, var_list=model.trainable_variables + [v])
    step = tf.train.get_or_create_global_step()
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt, v=v, step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        path = ckpt.save(os.path.join(OUT, "ck"), session=sess)
    reader = py_checkpoint_reader.NewCheckpointReader(path)
    values = {k: reader.get_tensor(k) for k in reader.get_variable_to_shape_map()
              if k != "_CHECKPOINTABLE_OBJECT_GRAPH"}
    np.savez(os.path.join(OUT, "expected.npz"), **values)


if __name__ == "__main__":
    main()
