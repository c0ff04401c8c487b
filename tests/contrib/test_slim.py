"""tf.contrib.slim / contrib.framework: arg_scope nesting, repeat/stack scope names (TF 1.15's
slim README: `slim.stack(x, slim.fully_connected, [32, 64, 128], scope='fc')` makes fc/fc_1 ...),
variable helpers, slim.losses, and the errors for contrib modules dflow does not provide."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf

slim = tf.contrib.slim


def test_arg_scope_nesting_explicit_arguments_and_reuse_of_a_scope():
    seen = []

    @slim.add_arg_scope
    def f(x, a=1, b=2, c=3):
        seen.append((x, a, b, c))

    with slim.arg_scope([f], a=10, b=20) as outer:
        f(0)
        with slim.arg_scope([f], b=200, c=300):
            f(1)
            f(2, c=3000)
        f(3)
    f(4)
    with slim.arg_scope(outer):
        f(5)
    assert seen == [(0, 10, 20, 3), (1, 10, 200, 300), (2, 10, 200, 3000), (3, 10, 20, 3), (4, 1, 2, 3),
                    (5, 10, 20, 3)]
    assert slim.has_arg_scope(f) and slim.arg_scoped_arguments(f) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="not decorated with @add_arg_scope"):
        with slim.arg_scope([lambda x: x], a=1):
            pass
    with pytest.raises(ValueError, match="kwargs must be empty"):
        with slim.arg_scope(outer, a=1):
            pass
    with pytest.raises(TypeError, match="list/tuple"):
        with slim.arg_scope(f, a=1):
            pass


def test_arg_scope_over_slim_layers():
    x = tf.placeholder(tf.float32, [None, 8, 8, 3])
    with slim.arg_scope([slim.conv2d, slim.fully_connected], activation_fn=None,
                        weights_regularizer=slim.l2_regularizer(0.01)):
        with slim.arg_scope([slim.conv2d], padding="VALID", stride=2):
            net = slim.conv2d(x, 4, [3, 3], scope="conv1")
            net = slim.conv2d(net, 4, [3, 3], padding="SAME", scope="conv2")
        net = slim.fully_connected(slim.flatten(net), 5, scope="fc")
    assert net.shape.as_list() == [None, 5] and net.name == "fc/BiasAdd:0"  # no activation
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 3
    assert [v.shape.as_list() for v in slim.get_variables_by_name("weights")] == [[3, 3, 3, 4], [3, 3, 4, 4], [16, 5]]


def test_repeat_and_stack_scope_names():
    x = tf.placeholder(tf.float32, [None, 6, 6, 2])
    net = slim.repeat(x, 2, slim.conv2d, 3, [3, 3], scope="conv1")
    net = slim.stack(slim.flatten(net), slim.fully_connected, [8, 4], scope="fc")
    slim.stack(net, slim.fully_connected, [(3, None)])  # default scope: Stack/<layer name>_i
    slim.repeat(net, 1, slim.fully_connected, 2)
    # TF 1.15: repeat/stack open `scope` and name the i-th call `scope_i`; without a scope,
    # `Repeat`/`Stack` and the layer's __name__
    assert [v.op.name for v in slim.get_model_variables()] == [
        "conv1/conv1_1/weights", "conv1/conv1_1/biases", "conv1/conv1_2/weights", "conv1/conv1_2/biases",
        "fc/fc_1/weights", "fc/fc_1/biases", "fc/fc_2/weights", "fc/fc_2/biases",
        "Stack/fully_connected_1/weights", "Stack/fully_connected_1/biases",
        "Repeat/fully_connected_1/weights", "Repeat/fully_connected_1/biases"]
    assert slim.conv2d.__name__ == "convolution2d"
    with pytest.raises(ValueError, match="stack_args need to be a list or tuple"):
        slim.stack(x, slim.conv2d, 3)


def test_variable_helpers():
    with tf.variable_scope("a"):
        w = slim.model_variable("weights", shape=[2, 3], initializer=tf.zeros_initializer())
        v = slim.variable("v", shape=[2], trainable=False)
    with tf.variable_scope("b"):
        w2 = slim.model_variable("weights", shape=[1])
    assert slim.get_model_variables() == [w, w2] and tf.model_variables() == [w, w2]
    assert slim.get_variables("a") == [w, v] and slim.get_variables_by_name("weights") == [w, w2]
    assert slim.get_variables_by_name("weights", scope="b") == [w2]
    assert slim.get_variables(suffix="v") == [v] and slim.get_trainable_variables() == [w, w2]
    assert slim.get_variables_to_restore(exclude=["b"]) == [w, v]
    assert slim.get_variables_to_restore(include=["b"]) == [w2]
    assert slim.get_unique_variable("a/v") is v
    with pytest.raises(ValueError, match="Couldn't find variable"):
        slim.get_unique_variable("c/v")
    assert tf.contrib.framework.get_variables_by_name("v") == [v]
    assert tf.contrib.framework.arg_scope is slim.arg_scope
    assert tf.contrib.framework.get_or_create_global_step() is tf.contrib.framework.get_global_step()


def test_slim_losses_take_logits_first_and_match_numpy():
    rng = np.random.RandomState(0)
    logits = rng.randn(5, 3).astype(np.float32)
    labels = np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]]
    loss = slim.losses.softmax_cross_entropy(tf.constant(logits), tf.constant(labels))
    sparse = slim.losses.sparse_softmax_cross_entropy(tf.constant(logits), tf.constant([0, 2, 1, 1, 0]))
    mse = slim.losses.mean_squared_error(tf.constant(logits), tf.constant(labels))
    hinge = slim.losses.hinge_loss(tf.constant(logits), tf.constant(labels))
    total = slim.losses.get_total_loss()
    with tf.Session() as s:
        lv, sv, mv, hv, tv = s.run([loss, sparse, mse, hinge, total])
    log_p = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    ref = -(labels * log_p).sum(1).mean()
    np.testing.assert_allclose([lv, sv], ref, rtol=1e-5)
    np.testing.assert_allclose(mv, ((logits - labels) ** 2).mean(), rtol=1e-5)
    np.testing.assert_allclose(hv, np.maximum(0, 1 - (2 * labels - 1) * logits), rtol=1e-6)  # unreduced
    np.testing.assert_allclose(tv, 2 * ref + mv, rtol=1e-5)  # the three reduced losses are in LOSSES


def test_contrib_modules_dflow_lacks_say_so():
    for name in ("keras", "crf", "bayesflow"):
        with pytest.raises(AttributeError, match=f"dflow does not provide tf.contrib.{name}, a TF1 name.*"
                                                  "dflow coverage tf.contrib"):
            getattr(tf.contrib, name)
    with pytest.raises(AttributeError, match="tf.contrib.foo is not a TF1 name either"):
        tf.contrib.foo  # noqa: B018
    with pytest.raises(ImportError, match="tf.contrib.foo is not a TF1 name either"):
        import dflow.contrib.foo  # noqa: F401
    assert tf.contrib.rnn.BasicLSTMCell is tf.nn.rnn_cell.BasicLSTMCell  # contrib.rnn is provided (dflow.rnn)
    with pytest.raises(ImportError, match="dflow does not provide tf.contrib.bayesflow"):
        import dflow.contrib.bayesflow  # noqa: F401
    with pytest.raises(ImportError, match="dflow does not provide tf.contrib.keras"):
        from dflow.contrib import keras  # noqa: F401
    with pytest.raises(AttributeError, match="dflow does not provide tf.contrib.layers.maxout"):
        tf.contrib.layers.maxout  # noqa: B018
    import dflow.contrib.slim as imported

    assert imported is slim and tf.compat.v1.contrib is tf.contrib
