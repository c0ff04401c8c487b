import numpy as np

import dflow as tf
from tests.conftest import run_modes


def test_fused_chain_matches_numpy():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.tanh(x * 2.0 + 1.0) - x
    xv = np.random.default_rng(0).random((5, 3), dtype=np.float32)
    got = run_modes(y, {x: xv})
    np.testing.assert_allclose(got, np.tanh(xv * 2 + 1) - xv, rtol=1e-6)


def test_any_mode(any_mode, sess_factory):
    x = tf.placeholder(tf.float64, [4], name="x")
    s = sess_factory(any_mode, chunks=2)
    np.testing.assert_allclose(s.run(tf.exp(x) + 1, {x: np.arange(4.0)}), np.exp(np.arange(4.0)) + 1)
