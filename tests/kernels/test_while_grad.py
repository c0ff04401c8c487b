"""Gradients through while loops that read variables and TensorArrays: a hand-written RNN trains."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

T, B, D, H = 5, 3, 4, 6


def _weights(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((D, H)) * 0.4, rng.standard_normal((H, H)) * 0.4, rng.standard_normal(H) * 0.1,
            rng.standard_normal((T, B, D)))


def _numpy_loss(W, U, b, x):
    h = np.zeros((B, H))
    outs = []
    for t in range(T):
        h = np.tanh(x[t] @ W + h @ U + b)
        outs.append(h)
    y = np.stack(outs)
    return float((y * y).sum() + h.sum())


def _rnn_loss(x, W, U, b, unrolled=False):
    """The loss of a tanh RNN over x [T, B, D]: a while loop over TensorArrays, or a Python loop."""
    if unrolled:
        h, outs = tf.zeros([B, H], tf.float64), []
        for t in range(T):
            h = tf.tanh(tf.matmul(x[t], W) + tf.matmul(h, U) + b)
            outs.append(h)
        y, hT = tf.stack(outs), h
    else:
        inputs = tf.TensorArray(tf.float64, T).unstack(x)

        def body(t, h, outs):
            h = tf.tanh(tf.matmul(inputs.read(t), W) + tf.matmul(h, U) + b)
            return t + 1, h, outs.write(t, h)

        _, hT, outs = tf.while_loop(lambda t, h, o: t < T, body,
                                    [tf.constant(0), tf.zeros([B, H], tf.float64), tf.TensorArray(tf.float64, T)])
        y = outs.stack()
    return tf.reduce_sum(y * y) + tf.reduce_sum(hT)


def _central(f, args, k, eps=1e-6):
    a = [np.array(v, dtype=np.float64) for v in args]
    out = np.zeros_like(a[k])
    for i in np.ndindex(a[k].shape):
        plus, minus = [v.copy() for v in a], [v.copy() for v in a]
        plus[k][i] += eps
        minus[k][i] -= eps
        out[i] = (f(*plus) - f(*minus)) / (2 * eps)
    return out


def test_rnn_in_a_while_loop_matches_central_differences_and_the_unrolled_loop():
    Wv, Uv, bv, xv = _weights()
    W, U, b = (tf.Variable(v, name=n) for v, n in ((Wv, "W"), (Uv, "U"), (bv, "b")))
    x = tf.placeholder(tf.float64, [T, B, D])
    grads = tf.gradients(_rnn_loss(x, W, U, b), [W, U, b, x])
    unrolled = tf.gradients(_rnn_loss(x, W, U, b, unrolled=True), [W, U, b, x])
    init = tf.global_variables_initializer()
    for mode in ("eager", "sync", "threads"):
        from tests.conftest import make_session

        with make_session(mode, chunks=2) as s:
            s.run(init)
            got, want = s.run([grads, unrolled], {x: xv})
        for g, u in zip(got, want):
            np.testing.assert_allclose(g, u, rtol=1e-10, atol=1e-12)
    for k in range(4):
        np.testing.assert_allclose(got[k], _central(_numpy_loss, [Wv, Uv, bv, xv], k), rtol=1e-6, atol=1e-7)


@pytest.mark.program
def test_rnn_in_a_while_loop_trains_with_gradient_descent():
    Wv, Uv, bv, xv = _weights(1)
    W, U, b = (tf.Variable(v, name=n) for v, n in ((Wv, "W"), (Uv, "U"), (bv, "b")))
    x = tf.placeholder(tf.float64, [T, B, D])
    loss = _rnn_loss(x, W, U, b)
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        first = s.run(loss, {x: xv})
        for _ in range(10):
            s.run(train, {x: xv})
        last = s.run(loss, {x: xv})
        W1, U1, b1 = s.run([W, U, b])
    # the same ten steps in numpy, with central-difference gradients
    w = [Wv, Uv, bv]
    for _ in range(10):
        g = [_central(_numpy_loss, w + [xv], k) for k in range(3)]
        w = [v - 0.01 * gv for v, gv in zip(w, g)]
    assert last < first
    np.testing.assert_allclose(last, _numpy_loss(*w, xv), rtol=1e-6)
    for got, want in zip((W1, U1, b1), w):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_nested_while_loops_and_a_dynamic_size_array():
    x = tf.placeholder(tf.float64, [3])

    def outer(i, acc, ta):
        _, inner = tf.while_loop(lambda j, v: j < 2, lambda j, v: (j + 1, v * x), [0, acc])
        return i + 1, inner, ta.write(i, tf.reduce_sum(inner))

    _, acc, ta = tf.while_loop(lambda i, a, t: i < 3, outer,
                               [0, tf.ones([3], tf.float64), tf.TensorArray(tf.float64, 0, dynamic_size=True)])
    y = tf.reduce_sum(ta.stack()) + tf.reduce_sum(acc)
    (g,) = tf.gradients(y, x)
    xv = np.array([0.9, 1.1, -0.7])

    def f(v):
        return sum((v ** (2 * k)).sum() for k in (1, 2, 3)) + (v ** 6).sum()

    np.testing.assert_allclose(run_modes(g, {x: xv}), _central(f, [xv], 0), rtol=1e-6)


def test_assign_inside_a_loop_says_what_to_write_instead():
    v = tf.Variable(1.0)
    with pytest.raises(tf.errors.UnimplementedError, match=r"Carry the variable's value as a loop variable"):
        tf.while_loop(lambda i: i < 3, lambda i: i + tf.cast(tf.assign_add(v, 1.0), tf.int32), [tf.constant(0)])
    # what the message suggests: the value carried through the loop, assigned once after it
    _, new = tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x + 1.0), [0, v.read_value()])
    step = tf.assign(v, new)
    with tf.Session() as s:
        s.run(v.initializer)
        assert s.run(step) == 4.0 and s.run(v) == 4.0


def test_variables_created_inside_the_body_get_gradients():
    T_, B_, D_, H_ = 4, 3, 2, 5
    x = tf.placeholder(tf.float64, [T_, B_, D_])
    inputs = tf.TensorArray(tf.float64, T_).unstack(x)

    def body(t, h, o):  # a layer called in the body creates its variables there (TF1's dynamic_rnn does)
        h = tf.layers.dense(tf.concat([inputs.read(t), h], 1), H_, activation=tf.tanh, name="cell")
        return t + 1, h, o.write(t, h)

    _, _, o = tf.while_loop(lambda t, h, o: t < T_, body,
                            [0, tf.zeros([B_, H_], tf.float64), tf.TensorArray(tf.float64, T_)])
    loss = tf.reduce_sum(tf.square(o.stack() - 0.5))
    assert [v.name for v in tf.trainable_variables()] == ["cell/kernel:0", "cell/bias:0"]
    h, outs = tf.zeros([B_, H_], tf.float64), []
    for t in range(T_):  # the same cell unrolled, its variables reused
        h = tf.layers.dense(tf.concat([x[t], h], 1), H_, activation=tf.tanh, name="cell", reuse=True)
        outs.append(h)
    unrolled = tf.reduce_sum(tf.square(tf.stack(outs) - 0.5))
    var_list = tf.trainable_variables()
    xv = np.random.default_rng(5).standard_normal((T_, B_, D_))
    with tf.Session(scheduler="threads", small_plan_bytes=0, chunks=2) as s:
        s.run(tf.global_variables_initializer())
        got, want = s.run([tf.gradients(loss, var_list), tf.gradients(unrolled, var_list)], {x: xv})
    for g, u in zip(got, want):
        np.testing.assert_allclose(g, u, rtol=1e-10)


def test_the_forward_pass_records_what_varies_and_each_steps_random_draw():
    """The reverse pass reads each step's own values of what varies from step to step (functions
    of the loop vars, a random draw made in the body) and computes the body's invariants itself (a
    variable a cell creates on its first call, a constant): those are not recorded per step."""
    x = tf.placeholder(tf.float64, [3])

    def body(t, h):
        w = tf.get_variable("w", [3], tf.float64, initializer=tf.constant_initializer([0.5, -1.0, 2.0]))
        r = tf.random_uniform([], 0.5, 1.5, dtype=tf.float64, seed=3)  # a new draw every step
        return t + 1, h * r * w * tf.constant(2.0, tf.float64)

    _, h = tf.while_loop(lambda t, h: t < 4, body, [0, x])
    (g,) = tf.gradients(tf.reduce_sum(h), [x])
    (grad_op,) = [op for op in tf.get_default_graph().get_operations() if op.type == "WhileGrad"]
    saved = [t.op.type for t in grad_op.get_attr("saved")]
    assert saved and not {"VariableV2", "Const"} & set(saved), saved
    x0 = np.array([0.3, -0.7, 1.1])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        hv, gv = s.run([h, g], {x: x0})
    # h_4 = x * prod(r_t) * (2 w)^4, so d sum(h_4) / dx = h_4 / x with the forward pass's own draws
    # (a reverse pass drawing r again would give other factors)
    np.testing.assert_allclose(gv, hv / x0, rtol=1e-12)
    draws = hv / (x0 * (2 * np.array([0.5, -1.0, 2.0])) ** 4)
    assert np.allclose(draws, draws[0]) and 0.5 ** 4 <= draws[0] <= 1.5 ** 4


def test_an_assign_nothing_in_the_loop_reads_never_runs_as_tf1():
    v = tf.Variable(0.0)

    def body(i):
        tf.assign_add(v, 1.0)  # not connected to the loop's outputs: TF1 never runs it either
        return i + 1

    r = tf.while_loop(lambda i: i < 3, body, [0])
    with tf.Session() as s:
        s.run(v.initializer)
        assert s.run(r) == 3 and s.run(v) == 0.0


@pytest.mark.slow
def test_rnn_gradients_on_a_distributed_cluster(sess_factory):
    Wv, Uv, bv, xv = _weights(2)
    W, U, b = (tf.Variable(v, name=n) for v, n in ((Wv, "W"), (Uv, "U"), (bv, "b")))
    x = tf.placeholder(tf.float64, [T, B, D])
    grads = tf.gradients(_rnn_loss(x, W, U, b), [W, x])  # gradient arrays pickled to and from workers
    s = sess_factory("distributed", chunks=2)
    s.run(tf.global_variables_initializer())
    got = s.run(grads, {x: xv})
    np.testing.assert_allclose(got[0], _central(_numpy_loss, [Wv, Uv, bv, xv], 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got[1], _central(_numpy_loss, [Wv, Uv, bv, xv], 3), rtol=1e-6, atol=1e-7)
