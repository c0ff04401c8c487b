"""dflow's new Keras layers against TF's own outputs (tools/make_tf_keras_layers_fixture.py: tf_keras
in v1 graph mode, TF's weights loaded into dflow's layers)."""

from pathlib import Path

import numpy as np
import pytest

import dflow as tf
from dflow.keras import layers as L

FIXTURE = np.load(Path(__file__).resolve().parents[2] / "fixtures" / "tf_keras_layers" / "extra_layers.npz")

CASES = {
    "c3t": lambda: L.Conv3DTranspose(3, 2, strides=2, padding="same", output_padding=1),
    "c3tv": lambda: L.Conv3DTranspose(3, (3, 2, 2), strides=(3, 1, 2), padding="valid"),
    "c2td": lambda: L.Conv2DTranspose(3, 3, dilation_rate=2, padding="same"),
    "c2top": lambda: L.Conv2DTranspose(3, 3, strides=(2, 3), output_padding=(1, 2)),
    "lc2": lambda: L.LocallyConnected2D(3, (2, 3), data_format="channels_first"),
    "clstm": lambda: L.ConvLSTM2D(3, (2, 3), padding="same", return_sequences=True, go_backwards=True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tf(name):
    d = FIXTURE
    layer = CASES[name]()
    y = layer(tf.constant(d[name + "_x"]))
    with tf.Session() as sess, sess.as_default():
        sess.run(tf.global_variables_initializer())
        layer.set_weights([d[f"{name}_w{i}"] for i in range(len(layer.weights))])
        got = sess.run(y)
    np.testing.assert_allclose(got, d[name + "_y"], rtol=1e-5, atol=1e-5)


def test_additive_attention_causal_masks_match_tf():
    d = FIXTURE
    layer = L.AdditiveAttention(causal=True)
    y = layer([tf.constant(d["att_q"]), tf.constant(d["att_v"])], mask=[tf.constant(d["att_qm"]),
                                                                      tf.constant(d["att_vm"])])
    with tf.Session() as sess, sess.as_default():
        sess.run(tf.global_variables_initializer())
        layer.set_weights([d["att_w0"]])
        np.testing.assert_allclose(sess.run(y), d["att_y"], rtol=1e-5, atol=1e-6)
