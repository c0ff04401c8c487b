"""`tfe.defun`: a function traced once per signature and run through a Session's cached plan."""

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe


def test_defun_traces_once_per_signature_and_matches_eager(eager):
    traces = []

    @tfe.defun
    def f(x, scale=2.0):
        traces.append(1)
        return tf.reduce_sum(tf.matmul(x, x, transpose_b=True)) * scale

    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert f(x).numpy() == 2.0 * np.sum(x.numpy() @ x.numpy().T)
    f(x + 1.0)
    assert len(traces) == 1
    f(tf.ones([3, 3]))
    f(x, scale=3.0)
    assert len(traces) == 3


def test_defun_reads_and_updates_eager_variables(eager):
    w = tfe.Variable(np.ones((3, 1), np.float32))
    a = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))

    def step(a):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.matmul(a, w) ** 2)
        g = tape.gradient(loss, w)
        w.assign_sub(0.01 * g)
        return loss

    fast = tfe.defun(step)
    w0 = w.numpy().copy()
    l1 = fast(a)
    l2 = fast(a)
    w.assign(w0)
    e1 = step(a)
    e2 = step(a)
    np.testing.assert_allclose([l1.numpy(), l2.numpy()], [e1.numpy(), e2.numpy()], rtol=1e-6)
    assert l2.numpy() < l1.numpy()


def test_defun_captures_eager_tensors(eager):
    c = tf.constant([1.0, 2.0])
    f = tfe.defun(lambda x: x * c)
    np.testing.assert_array_equal(f(tf.constant([3.0, 4.0])).numpy(), [3, 8])


def test_defun_in_graph_mode_is_the_python_function():
    f = tfe.defun(lambda x: x + 1)
    out = f(tf.constant(1.0))
    with tf.Session() as sess:
        assert sess.run(out) == 2.0


# ---- tf.function (TF 1.15) -----------------------------------------------------------------------


def test_tf_function_traces_once_per_signature_with_tf_control_dependencies(eager):
    traces = []
    v = tfe.Variable(1.0)

    @tf.function
    def f(x):
        traces.append(1)
        v.assign_add(1.0)
        return tf.reduce_sum(x * x) + v.read_value()  # the read after the assign, as TF orders them

    assert f(tf.constant([1.0, 2.0])).numpy() == 5.0 + 2.0
    assert f(tf.constant([3.0, 4.0])).numpy() == 25.0 + 3.0
    assert len(traces) == 1 and v.numpy() == 3.0


def test_tf_function_branching_on_a_tensor_gives_autographs_values_and_tapes_see_through(eager):
    @tf.function
    def absolute(x):
        if tf.reduce_sum(x) > 0:  # autograph's tf.cond in TF: here the function runs op by op
            return x
        return -x

    np.testing.assert_array_equal(absolute(tf.constant([1.0, 2.0])).numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(absolute(tf.constant([-1.0, -2.0])).numpy(), [1.0, 2.0])

    @tf.function
    def square(x):
        return x * x

    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = square(x)
    assert tape.gradient(y, x).numpy() == 6.0


def test_tf_function_input_signature_converts_and_refuses_as_tf(eager):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def sq(x):
        return x * x

    assert sq.input_signature == (tf.TensorSpec([None], tf.float32),)
    np.testing.assert_array_equal(sq([1, 2, 3]).numpy(), [1.0, 4.0, 9.0])  # ints converted to the spec
    with pytest.raises(ValueError, match="Python inputs incompatible with input_signature"):
        sq(tf.constant([[1.0]]))
    with pytest.raises(ValueError, match="incompatible with input_signature"):
        sq(tf.constant([1], tf.int32))
    with pytest.raises(TypeError, match="input_signature"):
        sq([1.0], [2.0])
    assert sq.get_concrete_function()(tf.constant([2.0])).numpy() == 4.0


def test_tf_function_on_a_method_and_in_graph_mode():
    class Scale:
        def __init__(self, w):
            self.w = w

        @tf.function
        def __call__(self, x):
            return x * self.w

    with tf.Graph().as_default():
        a = tf.constant(np.ones((2, 3), np.float32))

        @tf.function
        def f(x, y):
            return tf.matmul(x, y) + 1.0

        out = f(a, tf.transpose(a))
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(out), np.full((2, 2), 4.0))
            assert sess.run(Scale(3.0)(tf.constant(2.0))) == 6.0
