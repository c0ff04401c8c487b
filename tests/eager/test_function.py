"""`tfe.defun`: a function traced once per signature and run through a Session's cached plan."""

import numpy as np

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
