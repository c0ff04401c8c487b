"""GradientTape and the tfe gradient functions: the graph-mode gradient rules, run at once."""

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe

rng = np.random.default_rng(1)
A = rng.standard_normal((3, 4)).astype(np.float64)
B = rng.standard_normal((4, 2)).astype(np.float64)

FUNCS = {
    "matmul_square": lambda a, b: tf.reduce_sum(tf.matmul(a, b) ** 2),
    "tanh_exp": lambda a, b: tf.reduce_mean(tf.tanh(a) * tf.exp(tf.reduce_sum(b))),
    "softmax_xent": lambda a, b: tf.reduce_sum(tf.nn.softmax_cross_entropy_with_logits_v2(
        labels=tf.nn.softmax(tf.matmul(a, b)), logits=tf.matmul(a, b) * 2.0)),
    "broadcast": lambda a, b: tf.reduce_sum(a * tf.reduce_sum(b, 1)[None, :] + tf.transpose(b)[:1]),
    "slices_concat": lambda a, b: tf.reduce_sum(tf.concat([a[:, :2], tf.transpose(b)[:, :2] * 3.0], 0) ** 3),
    "max_where": lambda a, b: tf.reduce_sum(tf.maximum(a, 0.1) * tf.where(a > 0, a, -a)) + tf.reduce_max(b),
    "sigmoid_log": lambda a, b: tf.reduce_sum(tf.log(tf.sigmoid(a) + 1.0)) * tf.reduce_sum(tf.sqrt(b * b + 1.0)),
}


def _graph_grads(fn):
    g = tf.Graph()
    with g.as_default():
        a, b = tf.constant(A), tf.constant(B)
        y = fn(a, b)
        with tf.Session() as sess:
            return sess.run(tf.gradients(y, [a, b]))


def _central(fn, i, eps=1e-6):
    args = [A.copy(), B.copy()]
    out = np.zeros_like(args[i])
    for idx in np.ndindex(out.shape):
        plus = [x.copy() for x in args]
        minus = [x.copy() for x in args]
        plus[i][idx] += eps
        minus[i][idx] -= eps
        out[idx] = (fn(*[tf.constant(x) for x in plus]).numpy() - fn(*[tf.constant(x) for x in minus]).numpy()) / (2 * eps)
    return out


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_tape_gradients_equal_graph_gradients_and_central_differences(name):
    fn = FUNCS[name]
    expected = _graph_grads(fn)
    with tfe.eager_mode():
        a, b = tf.constant(A), tf.constant(B)
        with tf.GradientTape() as tape:
            tape.watch([a, b])
            y = fn(a, b)
        ga, gb = tape.gradient(y, [a, b])
        np.testing.assert_allclose(ga.numpy(), expected[0], rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(gb.numpy(), expected[1], rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(ga.numpy(), _central(fn, 0), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(gb.numpy(), _central(fn, 1), rtol=1e-4, atol=1e-6)


def test_persistent_tape_nested_structures_and_unconnected(eager):
    x = tf.constant(2.0)
    y = tf.constant(5.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch({"x": x, "y": [y]})
        z = x * x
        w = z * y
    grads = tape.gradient(w, {"x": x, "y": [y]})
    assert grads["x"].numpy() == 20.0 and grads["y"][0].numpy() == 4.0
    assert tape.gradient(z, x).numpy() == 4.0  # persistent: a second gradient
    assert tape.gradient(z, y) is None
    assert tape.gradient(z, y, unconnected_gradients="zero").numpy() == 0.0
    with tf.GradientTape() as t2:
        t2.watch(x)
        q = x * 3.0
    t2.gradient(q, x)
    with pytest.raises(RuntimeError, match="only be called once"):
        t2.gradient(q, x)


def test_output_gradients_and_stop_recording(eager):
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        with tape.stop_recording():
            z = y * 10.0  # not recorded
        out = y + tf.stop_gradient(z)
    np.testing.assert_array_equal(tape.gradient(out, x, output_gradients=tf.constant([1.0, 3.0])).numpy(), [2, 12])


def test_variables_are_watched_when_read(eager):
    v = tfe.Variable(3.0)
    frozen = tfe.Variable(4.0, trainable=False)
    with tf.GradientTape() as tape:
        y = v * v * frozen
    assert tape.watched_variables() == (v,)
    assert tape.gradient(y, v).numpy() == 24.0
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        y = v * v
    assert tape.gradient(y, v) is None and tape.watched_variables() == ()
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(frozen)
        y = v * frozen * frozen
    assert tape.gradient(y, frozen).numpy() == 24.0


def test_a_variable_read_keeps_its_value_for_the_gradient(eager):
    v = tfe.Variable(3.0)
    with tf.GradientTape() as tape:
        y = v * v
        v.assign(100.0)  # after the read: the rule sees the value read
    assert tape.gradient(y, v).numpy() == 6.0


def test_higher_order_by_nesting_tapes(eager):
    x = tf.constant(3.0)
    with tf.GradientTape() as t1:
        t1.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            y = x * x * x
        dy = t2.gradient(y, x)
    assert dy.numpy() == 27.0 and t1.gradient(dy, x).numpy() == 18.0


def test_the_seeds_gradient_functions(eager):
    def f(x):
        return tf.multiply(x, x)

    assert 9 == f(3.).numpy()
    df = tfe.gradients_function(f)
    assert 6 == df(3.)[0].numpy()
    d2f = tfe.gradients_function(lambda x: df(x)[0])
    assert 2 == d2f(3.)[0].numpy()
    d3f = tfe.gradients_function(lambda x: d2f(x)[0])
    assert d3f(3.) == [None]  # TF 2.21 (tf.compat.v1 eager, backprop.gradients_function): [None]
    assert tfe.gradients_function(lambda x, y: x * 2.0)(1.0, 2.0)[1] is None
    assert tfe.value_and_gradients_function(lambda x: tf.constant(1.0))(3.0)[1] == [None]

    @tfe.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return tf.log(1 + e), grad

    grad_log1pexp = tfe.gradients_function(log1pexp)
    assert grad_log1pexp(0.)[0].numpy() == 0.5
    assert grad_log1pexp(100.)[0].numpy() == 1.0  # the custom rule: no inf/inf


def test_value_and_gradients_params_and_implicit(eager):
    def f(x, y):
        return x * x * y

    val, (gx,) = tfe.value_and_gradients_function(f, params=["x"])(2.0, 5.0)
    assert val.numpy() == 20.0 and gx.numpy() == 20.0
    assert [g.numpy() for g in tfe.gradients_function(f, params=[1])(2.0, 5.0)] == [4.0]
    w = tfe.Variable([1.0, 2.0])
    b = tfe.Variable(0.5)

    def loss():
        return tf.reduce_sum(w * w) + b

    value, gv = tfe.implicit_value_and_gradients(loss)()
    assert value.numpy() == 5.5 and [v for _, v in gv] == [w, b]
    np.testing.assert_array_equal(gv[0][0].numpy(), [2.0, 4.0])
    assert [v for _, v in tfe.implicit_gradients(loss)()] == [w, b]


def test_register_gradient_override_applies(eager):
    @tf.RegisterGradient("EagerTestDoubleSquare")
    def _double(op, g):
        return [g * 4.0 * op.inputs[0]]

    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.get_default_graph().gradient_override_map({"Square": "EagerTestDoubleSquare"}):
            y = tf.square(x)
    assert tape.gradient(y, x).numpy() == 12.0


def test_custom_gradient_rules_of_eager_calls_are_released(eager):
    import gc

    from dflow.graph import registry

    @tfe.custom_gradient
    def double(x):
        return x * 2.0, lambda dy: dy * 2.0

    gc.collect()
    before = set(registry._GRADIENTS)
    for _ in range(5):
        double(tf.constant(1.0))  # no tape: nothing needs the rule
    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = double(x)
    assert tape.gradient(y, x).numpy() == 2.0
    del tape, y
    gc.collect()
    assert set(registry._GRADIENTS) <= before


def test_tape_takes_the_options_of_the_one_walk(eager):
    # the tape runs tf.gradients' walk: its UnconnectedGradients enum and its checks
    x, y = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = x * x
    assert tape.gradient(z, y, unconnected_gradients=tf.UnconnectedGradients.ZERO).numpy() == 0.0
    assert tape.gradient(z, [x, y], unconnected_gradients=tf.UnconnectedGradients.NONE)[1] is None
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'zeros'"):
        tape.gradient(z, x, unconnected_gradients="zeros")
    with pytest.raises(TypeError, match="GradientTape.gradient: grad_ys\\[0\\] has dtype float64"):
        tape.gradient(z, x, output_gradients=tf.constant(1.0, tf.float64))
    assert tape.gradient(z, x, output_gradients=[0.5]).numpy() == 2.0


def test_tape_sums_the_sparse_gradients_of_a_variable_densely(eager):
    # two gathers of one variable: IndexedSlices summed along the walk, a dense tensor at the end
    v = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.gather(v, [0, 2])) + tf.reduce_sum(tf.gather(v, [2, 2]) * 3.0)
    g = tape.gradient(loss, v)
    np.testing.assert_array_equal(g.numpy(), [[1, 1], [0, 0], [7, 7]])
