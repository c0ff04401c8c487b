"""Each test builds in a fresh graph; helpers to run tensors and read layer weights."""

import numpy as np
import pytest

import dflow as tf


@pytest.fixture(autouse=True)
def _fresh_graph(request):
    if "eager" in request.node.name:  # eager tests run outside any graph
        yield
        return
    with tf.Graph().as_default():
        yield


@pytest.fixture
def rng():
    return np.random.RandomState(0)


def run(fetches, feed=None):
    """Initializes the graph's variables and runs `fetches`; returns (values, session) open."""
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    return sess.run(fetches, feed), sess


def weights(layer, sess):
    with sess.as_default():
        return layer.get_weights()


def roundtrip(layer):
    """from_config(get_config()) gives the same config (the name aside)."""
    config = layer.get_config()
    clone = type(layer).from_config(config)
    a, b = dict(config), dict(clone.get_config())
    assert a == b
    return clone
