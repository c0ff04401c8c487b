"""Writes tests/fixtures/tf_keras_layers/extra_layers.npz: TF's outputs (tf_keras in v1 graph mode,
as TF 1.15's tf.keras) of Conv3DTranspose, Conv2DTranspose with output_padding/dilation,
LocallyConnected2D (channels_first), ConvLSTM2D and AdditiveAttention (causal, masks), with the
inputs and weights used; tests/keras/layers/test_tf_fixtures.py loads the weights into dflow's layers.

Run: TF_USE_LEGACY_KERAS=1 /tmp/tfenv/bin/python tools/make_tf_keras_layers_fixture.py
"""

import os
import sys

import numpy as np
import tensorflow.compat.v1 as tf
import tf_keras as keras

tf.disable_v2_behavior()
L = keras.layers
CASES = {
    "c3t": (lambda: L.Conv3DTranspose(3, 2, strides=2, padding="same", output_padding=1), (2, 4, 5, 3, 2)),
    "c3tv": (lambda: L.Conv3DTranspose(3, (3, 2, 2), strides=(3, 1, 2), padding="valid"), (1, 3, 4, 3, 2)),
    "c2td": (lambda: L.Conv2DTranspose(3, 3, dilation_rate=2, padding="same"), (2, 4, 5, 2)),
    "c2top": (lambda: L.Conv2DTranspose(3, 3, strides=(2, 3), output_padding=(1, 2)), (2, 4, 5, 2)),
    "lc2": (lambda: L.LocallyConnected2D(3, (2, 3), data_format="channels_first"), (2, 2, 5, 4)),
    "clstm": (lambda: L.ConvLSTM2D(3, (2, 3), padding="same", return_sequences=True, go_backwards=True),
              (2, 3, 5, 4, 2)),
}


def main():
    rng = np.random.RandomState(0)
    out = {}
    for name, (make, shape) in CASES.items():
        with tf.Graph().as_default(), tf.Session() as sess:
            x = rng.randn(*shape).astype(np.float32)
            layer = make()
            y = layer(tf.constant(x))
            sess.run(tf.global_variables_initializer())
            ws = [rng.randn(*w.shape.as_list()).astype(np.float32) * 0.5 for w in layer.weights]
            for v, w in zip(layer.weights, ws):
                v.load(w, sess)
            out[name + "_x"], out[name + "_y"] = x, sess.run(y)
            for i, w in enumerate(ws):
                out[f"{name}_w{i}"] = w
    with tf.Graph().as_default(), tf.Session() as sess:
        q, v = rng.randn(2, 3, 4).astype(np.float32), rng.randn(2, 3, 4).astype(np.float32)
        qm, vm = np.array([[1, 1, 0], [1, 0, 1]], bool), np.array([[1, 1, 0], [0, 1, 1]], bool)
        layer = L.AdditiveAttention(causal=True)
        y = layer([tf.constant(q), tf.constant(v)], mask=[tf.constant(qm), tf.constant(vm)])
        sess.run(tf.global_variables_initializer())
        w = rng.randn(4).astype(np.float32)
        layer.weights[0].load(w, sess)
        out.update(att_q=q, att_v=v, att_qm=qm, att_vm=vm, att_w0=w, att_y=sess.run(y))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "tf_keras_layers", "extra_layers.npz")
    tmp = path + ".tmp.npz"
    np.savez(tmp, **out)
    os.replace(tmp, path)
    print("wrote", path)


if __name__ == "__main__":
    main()
