"""Writes tests/fixtures/keras/: tf.keras HDF5 files and TF's predictions for dflow's load tests.

Run with TensorFlow's legacy Keras (TF 1.x's tf.keras layout, v1 graph mode):
    TF_USE_LEGACY_KERAS=1 /tmp/tfenv/bin/python tools/make_keras_h5_fixture.py
Files: mlp.h5 (model.save of a Sequential), mlp_weights.h5 (its save_weights), two_input.h5 and
two_input_weights.h5 (a functional model of two inputs), predictions.npz (the inputs and TF's
outputs: x, mlp, a, b, two_input_a, two_input_b).
"""

import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
keras = tf.keras

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "keras")


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.RandomState(0)
    tf.set_random_seed(0)
    mlp = keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                            keras.layers.Dense(3, activation="softmax")])
    mlp.compile(optimizer=keras.optimizers.SGD(0.1), loss="categorical_crossentropy", metrics=["accuracy"])
    x = rng.randn(6, 4).astype(np.float32)
    mlp.save(os.path.join(OUT, "mlp.h5"))
    mlp.save_weights(os.path.join(OUT, "mlp_weights.h5"))

    a_in = keras.Input(shape=(3,), name="a")
    b_in = keras.Input(shape=(2,), name="b")
    h = keras.layers.Dense(5, activation="tanh", name="ha")(a_in)
    g = keras.layers.Dense(5, activation="sigmoid", name="hb")(b_in)
    out_a = keras.layers.Dense(2, name="out_a")(h)
    out_b = keras.layers.Dense(1, name="out_b")(keras.layers.Activation("relu", name="act")(g))
    two = keras.Model([a_in, b_in], [out_a, out_b], name="two_input")  # no merge layer: dflow has none yet
    two.compile(optimizer="adam", loss="mse")
    a = rng.randn(5, 3).astype(np.float32)
    b = rng.randn(5, 2).astype(np.float32)
    two.save(os.path.join(OUT, "two_input.h5"))
    two.save_weights(os.path.join(OUT, "two_input_weights.h5"))

    pred = two.predict([a, b])
    np.savez(os.path.join(OUT, "predictions.npz"), x=x, mlp=mlp.predict(x), a=a, b=b, two_input_a=pred[0], two_input_b=pred[1])


if __name__ == "__main__":
    main()
