"""Writes tests/fixtures/keras/tf_format/: tf.keras `save_weights` in TensorFlow's checkpoint
format (an object-based V2 checkpoint: `layer_with_weights-N/kernel/.ATTRIBUTES/VARIABLE_VALUE`)
and TF's predictions, for dflow's `load_weights` of TF-written weights.

    TF_USE_LEGACY_KERAS=1 /tmp/tfenv/bin/python tools/make_keras_tf_ckpt_fixture.py
"""

import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "keras", "tf_format")


def main():
    os.makedirs(OUT, exist_ok=True)
    tf.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, activation="relu", input_shape=(4,)),
                                 tf.keras.layers.Dense(2)])
    model.save_weights(os.path.join(OUT, "weights"))  # no .h5: TensorFlow's checkpoint format
    x = np.arange(8, dtype=np.float32).reshape(2, 4) / 8
    np.savez(os.path.join(OUT, "predictions.npz"), x=x, y=model.predict(x))


if __name__ == "__main__":
    main()
