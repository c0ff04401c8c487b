"""Small TF1 programs, written as TF1 code with `import dflow as tf`, checked against numpy.

Each program is a `program` test (tests/conftest.py): it runs on the default Session in process
and forced through Dask on the sync, threads and processes schedulers; most also run chunked on
Dask (`chunked-sync`, `chunked-threads`: several chunks), fed from numpy and dask arrays, the way a
TF1 user would write it.
"""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest

import dflow as tf

RNG = np.random.default_rng(2024)


def needs(*names):
    """Skips the test when dflow does not (yet) have these public names."""
    missing = [n for n in names if not hasattr(tf, n)]
    if missing:
        pytest.skip(f"dflow has no {', '.join(missing)} yet")


def needs_grad(*op_types):
    """Skips the test when these op types have no gradient rule (yet)."""
    from dflow.graph import registry

    missing = [t for t in op_types if not registry.is_registered(t) or registry.get_opdef(t).grad is None]
    if missing:
        pytest.skip(f"no gradient for {', '.join(missing)} yet")


# every PROGRAM_MODES run, plus explicit chunked sessions (the test's `session_kwargs`)
chunked = pytest.mark.program(extra={"chunked-sync": dict(scheduler="sync", chunks=3),
                                     "chunked-threads": dict(scheduler="threads", small_plan_bytes=0, chunks=3)})


# ---- programs using the core ops ----------------------------------------------------------------

@chunked
def test_horner_polynomial_with_name_scopes_and_collections(session_kwargs):
    coefs = [0.5, -1.0, 2.0, 0.25]
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float64, shape=[None], name="x")
        with tf.name_scope("poly"):
            cs = [tf.placeholder(tf.float64, shape=[], name="c%d" % i) for i in range(len(coefs))]
            for c in cs:
                tf.add_to_collection("coefficients", c)
            y = cs[-1]
            for c in reversed(cs[:-1]):
                y = y * x + c
            y = tf.identity(y, name="value")
        tf.add_to_collection("outputs", y)
    assert [c.name for c in g.get_collection("coefficients")] == ["poly/c0:0", "poly/c1:0", "poly/c2:0",
                                                                  "poly/c3:0"]
    assert y.name == "poly/value:0"

    xv = np.linspace(-2, 2, 10)
    with tf.Session(graph=g, **session_kwargs) as sess:
        feed = {"x:0": xv}
        feed.update({"poly/c%d:0" % i: c for i, c in enumerate(coefs)})
        (out,) = sess.run(g.get_collection("outputs"), feed_dict=feed)
        same = sess.run("poly/value:0", feed_dict=feed)
    np.testing.assert_allclose(out, np.polyval(coefs[::-1], xv), rtol=1e-12)
    np.testing.assert_array_equal(out, same)


@chunked
def test_image_batch_flatten_and_restore(session_kwargs):
    images = tf.placeholder(tf.float32, [None, 4, 4], name="images")
    flat = tf.reshape(images, [-1, 16])
    brightened = tf.clip_by_value(flat * 1.5 + 0.1, 0.0, 1.0)
    restored = tf.reshape(brightened, tf.shape(images))
    channels = tf.stack([images, restored, tf.cast(images > 0.5, tf.float32)], axis=-1)
    batch = RNG.random((6, 4, 4), dtype=np.float32)
    want = np.clip(batch.reshape(-1, 16) * np.float32(1.5) + np.float32(0.1), 0, 1).reshape(batch.shape)
    with tf.Session(**session_kwargs) as sess:
        r, c, shape = sess.run([restored, channels, tf.shape(channels)], feed_dict={images: batch})
    np.testing.assert_allclose(r, want, rtol=1e-6)
    assert c.shape == (6, 4, 4, 3) and c.dtype == np.float32
    np.testing.assert_array_equal(c[..., 2], (batch > 0.5).astype(np.float32))
    assert shape.tolist() == [6, 4, 4, 3]


def test_batches_fed_in_a_loop_reuse_one_plan():
    x = tf.placeholder(tf.float32, [None, 8], name="x")
    y = tf.where(x > 0.0, tf.sqrt(tf.abs(x)), -tf.square(x))
    with tf.Session(scheduler="sync", chunks=4) as sess:
        for _ in range(5):
            batch = RNG.standard_normal((12, 8)).astype(np.float32)
            out = sess.run(y, feed_dict={x: da.from_array(batch, chunks=(4, 8))})
            np.testing.assert_allclose(out, np.where(batch > 0, np.sqrt(np.abs(batch)), -batch ** 2),
                                       rtol=1e-6)
        assert len(sess._plans) == 1


@pytest.mark.program
def test_interactive_session_style():
    sess = tf.InteractiveSession()
    try:
        a = tf.placeholder(tf.int32, [3], name="a")
        b = a * 2 + 1
        assert b.eval(feed_dict={a: [1, 2, 3]}).tolist() == [3, 5, 7]
        assert tf.shape(b).eval(feed_dict={a: [0, 0, 0]}).tolist() == [3]
    finally:
        sess.close()


# ---- programs using reductions, matmul and friends (when present) -------------------------------

@chunked
def test_standardize_features(session_kwargs):
    needs("reduce_mean", "reduce_sum")
    x = tf.placeholder(tf.float64, [None, 5], name="features")
    with tf.name_scope("standardize"):
        mean = tf.reduce_mean(x, axis=0, keepdims=True)
        var = tf.reduce_mean(tf.square(x - mean), axis=0, keepdims=True)
        z = (x - mean) / tf.sqrt(var + 1e-12)
    total = tf.reduce_sum(z)
    xv = RNG.standard_normal((11, 5)) * 3 + 2
    want = (xv - xv.mean(0)) / np.sqrt(xv.var(0) + 1e-12)
    with tf.Session(**session_kwargs) as sess:
        for feed in [xv, da.from_array(xv, chunks=(4, 5))]:
            got, t = sess.run([z, total], {x: feed})
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
            assert abs(t) < 1e-9 and np.ndim(t) == 0


@chunked
def test_two_layer_classifier_forward_pass(session_kwargs):
    needs("matmul", "reduce_max", "reduce_sum", "argmax")
    w1v, b1v = RNG.standard_normal((6, 8)).astype(np.float32), RNG.standard_normal(8).astype(np.float32)
    w2v, b2v = RNG.standard_normal((8, 3)).astype(np.float32), RNG.standard_normal(3).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    with tf.name_scope("hidden"):
        h = tf.maximum(tf.matmul(x, tf.constant(w1v)) + tf.constant(b1v), 0.0)
    with tf.name_scope("logits"):
        logits = tf.matmul(h, tf.constant(w2v)) + b2v
    shifted = logits - tf.reduce_max(logits, axis=1, keepdims=True)
    probs = tf.exp(shifted) / tf.reduce_sum(tf.exp(shifted), axis=1, keepdims=True)
    pred = tf.argmax(probs, axis=1)
    correct = tf.equal(pred, labels)
    accuracy = tf.reduce_sum(tf.cast(correct, tf.float32)) / tf.cast(tf.size(labels), tf.float32)

    xv = RNG.standard_normal((10, 6)).astype(np.float32)
    lv = RNG.integers(0, 3, 10).astype(np.int64)
    hv = np.maximum(xv @ w1v + b1v, 0)
    lg = hv @ w2v + b2v
    e = np.exp(lg - lg.max(1, keepdims=True))
    pv = e / e.sum(1, keepdims=True)
    with tf.Session(**session_kwargs) as sess:
        p, k, acc = sess.run([probs, pred, accuracy], {x: xv, labels: lv})
    np.testing.assert_allclose(p, pv, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(p.sum(1), np.ones(10), rtol=1e-5)
    assert k.dtype == np.int64 and k.tolist() == pv.argmax(1).tolist()
    n_correct = float((pv.argmax(1) == lv).sum())
    assert acc == pytest.approx(n_correct / 10)


@chunked
def test_concat_and_split_features(session_kwargs):
    needs("concat", "reduce_sum")
    a = tf.placeholder(tf.float32, [None, 2], name="a")
    b = tf.placeholder(tf.float32, [None, 3], name="b")
    both = tf.concat([a, b * 10.0], axis=1)
    row_sums = tf.reduce_sum(both, axis=1)
    av, bv = RNG.random((7, 2), dtype=np.float32), RNG.random((7, 3), dtype=np.float32)
    with tf.Session(**session_kwargs) as sess:
        got, sums = sess.run([both, row_sums], {a: av, b: bv})
    want = np.concatenate([av, bv * np.float32(10)], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(sums, want.sum(1), rtol=1e-5)


@chunked
def test_linear_regression_by_gradient_descent(session_kwargs):
    needs("Variable", "global_variables_initializer", "gradients", "assign", "reduce_mean", "matmul")
    needs_grad("Mean", "MatMul")
    true_w = np.array([[2.0], [-3.0]])
    xv = RNG.standard_normal((32, 2))
    yv = xv @ true_w + 0.5

    x = tf.placeholder(tf.float64, [None, 2], name="x")
    y = tf.placeholder(tf.float64, [None, 1], name="y")
    w = tf.Variable(np.zeros((2, 1)), name="w")
    b = tf.Variable(0.0, dtype=tf.float64, name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    gw, gb = tf.gradients(loss, [w, b])
    lr = 0.1
    train = [tf.assign(w, w - lr * gw), tf.assign(b, b - lr * gb)]
    init = tf.global_variables_initializer()

    with tf.Session(**session_kwargs) as sess:
        sess.run(init)
        first = sess.run(loss, {x: xv, y: yv})
        for _ in range(200):
            sess.run(train, {x: xv, y: yv})
        last, wv, bv = sess.run([loss, w, b], {x: xv, y: yv})
    assert last < first * 1e-3
    np.testing.assert_allclose(wv, true_w, atol=1e-3)
    assert bv == pytest.approx(0.5, abs=1e-3)


@chunked
def test_scalar_regression_with_elementwise_gradients(session_kwargs):
    needs("Variable", "global_variables_initializer", "gradients", "assign")
    xv = np.linspace(-1, 1, 20)
    yv = 3.0 * xv - 1.0
    x = tf.placeholder(tf.float64, [None], name="x")
    y = tf.placeholder(tf.float64, [None], name="y")
    w = tf.Variable(0.0, dtype=tf.float64, name="w")
    b = tf.Variable(0.0, dtype=tf.float64, name="b")
    errors = tf.square(w * x + b - y)  # tf.gradients sums a non-scalar target
    gw, gb = tf.gradients(errors, [w, b])
    lr = 0.5 / len(xv)
    train = [tf.assign(w, w - lr * gw), tf.assign(b, b - lr * gb)]  # both read the start-of-run values
    with tf.Session(**session_kwargs) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(100):
            sess.run(train, {x: xv, y: yv})
        wv, bv = sess.run([w, b])
    assert wv == pytest.approx(3.0, abs=1e-4) and bv == pytest.approx(-1.0, abs=1e-4)


@chunked
def test_program_modes_reach_the_session(program_mode, session_kwargs):
    from tests.conftest import PROGRAM_MODES

    with tf.Session(**session_kwargs) as sess:
        want = session_kwargs.get("scheduler") or PROGRAM_MODES[program_mode] or "threads"
        assert sess._executor.name == want
        assert (sess._options.small_plan_bytes == 0) == (program_mode != "inprocess")


# ---- tutorial-style programs on every path (numpy references computed here) ---------------------

def _softmax_xent_np(logits, labels):
    z = logits - logits.max(1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    return -(labels * np.log(p)).sum(1), p


def _mlp_reference_step(params, xv, yv, lr):
    """One gradient-descent step of the 3-layer MLP below (keep_prob 1) in numpy: (loss, new params)."""
    w1, b1, w2, b2, w3, b3 = params
    z1 = xv @ w1 + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ w2 + b2
    h2 = np.maximum(z2, 0)
    logits = h2 @ w3 + b3
    xent, p = _softmax_xent_np(logits, yv)
    n = len(xv)
    d_logits = (p - yv) / n
    d_z2 = (d_logits @ w3.T) * (z2 > 0)
    d_z1 = (d_z2 @ w2.T) * (z1 > 0)
    grads = [xv.T @ d_z1, d_z1.sum(0), h1.T @ d_z2, d_z2.sum(0), h2.T @ d_logits, d_logits.sum(0)]
    return xent.mean(), [p_ - lr * g for p_, g in zip(params, grads)]


def _three_class_data(n=30, seed=5):
    rng = np.random.default_rng(seed)
    centers = np.array([[2.0, 0.0, 0.0, 1.0], [0.0, 2.0, 0.0, -1.0], [0.0, 0.0, 2.0, 0.0]], np.float32)
    labels = rng.integers(0, 3, n)
    xv = (centers[labels] + 0.5 * rng.standard_normal((n, 4))).astype(np.float32)
    return xv, np.eye(3, dtype=np.float32)[labels]


# keep_prob fed as a plain placeholder("float") has an unknown shape: the gradient's shapes then
# come from the run (tf.shape of the dropout result), which the Dask path folds or decides first
@pytest.mark.program
def test_mlp_classifier_with_dropout_and_softmax_cross_entropy(capsys):
    rng = np.random.default_rng(11)
    sizes = [4, 8, 6, 3]
    init = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        init += [(rng.standard_normal((fan_in, fan_out)) * 0.5).astype(np.float32),
                 np.full(fan_out, 0.1, np.float32)]
    xv, yv = _three_class_data()

    x = tf.placeholder("float", [None, 4])
    y_ = tf.placeholder("float", [None, 3])
    keep_prob = tf.placeholder("float")
    weights = [tf.Variable(v) for v in init]
    with tf.name_scope("hidden1"):
        h1 = tf.nn.relu(tf.matmul(x, weights[0]) + weights[1])
        h1_drop = tf.nn.dropout(h1, keep_prob)
    with tf.name_scope("hidden2"):
        h2 = tf.nn.relu(tf.matmul(h1_drop, weights[2]) + weights[3])
        h2_drop = tf.nn.dropout(h2, keep_prob)
    with tf.name_scope("softmax"):
        logits = tf.matmul(h2_drop, weights[4]) + weights[5]
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=logits))
    lr = 0.5
    train_step = tf.train.GradientDescentOptimizer(lr).minimize(loss)
    correct = tf.equal(tf.argmax(logits, 1), tf.argmax(y_, 1))
    accuracy = tf.reduce_mean(tf.cast(correct, "float"))

    print(h1)  # a TF1 user's first debugging step: the symbolic tensor, not its value
    printed = capsys.readouterr().out
    assert "hidden1/Relu:0" in printed and "(?, 8)" in printed and "float32" in printed, printed

    full = {x: xv, y_: yv, keep_prob: 1.0}
    tf.set_random_seed(3)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        # keep_prob 1: every step is numpy's
        params = [v.astype(np.float64) for v in init]
        for _ in range(5):
            want, params = _mlp_reference_step(params, xv.astype(np.float64), yv, lr)
            got = sess.run(loss, feed_dict=full)
            sess.run(train_step, feed_dict=full)
            assert got == pytest.approx(want, rel=1e-4)
        for var, want in zip(weights, params):
            np.testing.assert_allclose(sess.run(var), want, rtol=1e-3, atol=1e-5)

        # keep_prob 0.5, from the initial values again: units are dropped or scaled by 2, and
        # training still lowers the loss of the whole network
        sess.run(tf.global_variables_initializer())
        before = sess.run(loss, feed_dict=full)
        half = {x: xv, y_: yv, keep_prob: 0.5}
        kept, dropped = sess.run([h1, h1_drop], feed_dict=half)
        assert dropped.shape == kept.shape == (30, 8)
        np.testing.assert_allclose(np.where(dropped == 0, 0, kept * 2), dropped, rtol=1e-6)
        losses = []
        for _ in range(20):
            _, l = sess.run([train_step, loss], feed_dict=half)
            losses.append(l)
        assert np.all(np.isfinite(losses))
        after, acc = sess.run([loss, accuracy], feed_dict=full)
    assert after < before
    assert 0.0 <= acc <= 1.0


def test_dropout_keeps_the_static_shape_of_its_input():
    # TF1's dropout sets its result's shape to x's, whatever keep_prob's static shape
    x = tf.placeholder("float", [None, 8])
    for keep_prob in [tf.placeholder("float", []), tf.placeholder("float")]:
        shape = tf.nn.dropout(x, keep_prob).shape
        assert shape.ndims == 2 and shape.as_list() == [None, 8], shape


@pytest.mark.program
def test_py_func_without_set_shape_in_a_program():
    def cube_plus_one(a):
        return (a ** 3 + 1).astype(np.float32)

    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.py_func(cube_plus_one, [x], tf.float32)
    assert y.shape.ndims is None  # TF1: a py_func's outputs have unknown shapes
    total = tf.reduce_sum(y)
    # py_func is not differentiable (TF1's NotDifferentiable("PyFunc")): only the direct path of x
    # contributes to d/dx sum(y * x), treating y as a constant
    assert tf.gradients(y, x) == [None]
    (gx,) = tf.gradients(tf.reduce_sum(y * x), x)
    xv = np.linspace(-1.5, 2.0, 6).astype(np.float32)
    with tf.Session() as sess:
        t, g = sess.run([total, gx], feed_dict={x: xv})
    np.testing.assert_allclose(t, (xv ** 3 + 1).sum(), rtol=1e-5)
    np.testing.assert_allclose(g, xv ** 3 + 1, rtol=1e-6)


@pytest.mark.program
def test_model_with_shapes_computed_at_run_time():
    rng = np.random.default_rng(21)
    xv = rng.standard_normal((10, 2, 3)).astype(np.float32)
    yv = rng.standard_normal((10, 1)).astype(np.float32)
    w0 = (rng.standard_normal((6, 4)) * 0.5).astype(np.float32)
    b0 = np.full(4, 0.1, np.float32)
    v0 = (rng.standard_normal((5, 1)) * 0.5).astype(np.float32)

    x = tf.placeholder(tf.float32, [None, 2, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w, b, v = tf.Variable(w0), tf.Variable(b0), tf.Variable(v0)
    flat = tf.reshape(x, [tf.shape(x)[0], -1])
    batch = tf.shape(flat)[0]
    z = tf.matmul(flat, w) + tf.tile(tf.expand_dims(b, 0), [batch, 1])
    h = tf.maximum(z, tf.zeros(tf.shape(z)))
    h = tf.reshape(tf.reshape(h, [tf.shape(h)[0], 2, 2]), [tf.shape(h)[0], -1])
    feats = tf.concat([h, tf.fill([tf.shape(h)[0], 1], 1.0)], axis=1)
    pred = tf.matmul(feats, v)
    loss = tf.reduce_mean(tf.square(pred - y))
    lr = 0.1
    train = tf.train.GradientDescentOptimizer(lr).minimize(loss)

    def reference_step(w, b, v):
        f = xv.reshape(10, -1).astype(np.float64)
        z = f @ w + b
        feats = np.concatenate([np.maximum(z, 0), np.ones((10, 1))], axis=1)
        p = feats @ v
        d_p = 2 * (p - yv) / len(yv)
        d_z = (d_p @ v.T)[:, :4] * (z > 0)
        return ((p - yv) ** 2).mean(), w - lr * f.T @ d_z, b - lr * d_z.sum(0), v - lr * feats.T @ d_p

    feed = {x: xv, y: yv}
    params = (w0.astype(np.float64), b0.astype(np.float64), v0.astype(np.float64))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        shapes = sess.run([tf.shape(flat), tf.shape(feats), batch], feed_dict=feed)
        assert [s.tolist() for s in shapes] == [[10, 6], [10, 5], 10]
        for _ in range(5):
            want, *params = reference_step(*params)
            got, _ = sess.run([loss, train], feed_dict=feed)
            assert got == pytest.approx(want, rel=1e-4)
        for var, want in zip([w, b, v], params):
            np.testing.assert_allclose(sess.run(var), want, rtol=1e-4, atol=1e-5)
        # another batch size through the same graph
        p3 = sess.run(pred, feed_dict={x: xv[:3]})
    assert p3.shape == (3, 1)


@pytest.mark.program
def test_deep_regression_built_in_a_loop_with_l2_collection():
    # "Tensorflow 实战Google深度学习框架" style: points inside/outside a unit circle, a network built
    # layer by layer in a loop, each weight's l2 penalty added to the 'losses' collection
    # (tanh instead of the book's elu, which has no gradient in dflow yet)
    np.random.seed(0)
    data, label = [], []
    for _ in range(150):
        x1, x2 = np.random.uniform(-1, 1), np.random.uniform(0, 2)
        data.append([np.random.normal(x1, 0.1), np.random.normal(x2, 0.1)])
        label.append(0 if x1 ** 2 + x2 ** 2 <= 1 else 1)
    data = np.hstack(data).reshape(-1, 2)
    label = np.hstack(label).reshape(-1, 1)

    def get_weight(shape, lambda1):
        var = tf.Variable(tf.random_normal(shape), dtype=tf.float32)
        tf.add_to_collection("losses", tf.regularizers.l2_regularizer(lambda1)(var))
        return var

    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, shape=(None, 2))
    y_ = tf.placeholder(tf.float32, shape=(None, 1))
    layer_dimension = [2, 10, 5, 3, 1]
    cur_layer, variables = x, []
    for i in range(1, len(layer_dimension)):
        weight = get_weight([layer_dimension[i - 1], layer_dimension[i]], 0.003)
        bias = tf.Variable(tf.constant(0.1, shape=[layer_dimension[i]]))
        variables += [weight, bias]
        cur_layer = tf.nn.tanh(tf.matmul(cur_layer, weight) + bias)
    y = cur_layer
    mse_loss = tf.reduce_sum(tf.pow(y_ - y, 2)) / len(data)
    tf.add_to_collection("losses", mse_loss)
    loss = tf.add_n(tf.get_collection("losses"))
    assert len(tf.get_collection("losses")) == 5
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss)

    def forward(values, points):
        out = points
        for wv, bv in zip(values[::2], values[1::2]):
            out = np.tanh(out @ wv + bv)
        return out

    feed = {x: data, y_: label}
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        values = sess.run(variables)
        first_mse, first_loss = sess.run([mse_loss, loss], feed_dict=feed)
        want_mse = ((label - forward(values, data)) ** 2).sum() / len(data)
        want_l2 = sum(0.003 * (wv.astype(np.float64) ** 2).sum() / 2 for wv in values[::2])
        assert first_mse == pytest.approx(want_mse, rel=1e-5)
        assert first_loss == pytest.approx(want_mse + want_l2, rel=1e-5)
        for _ in range(100):
            sess.run(train_op, feed_dict=feed)
        last_mse = sess.run(mse_loss, feed_dict=feed)
        # the decision surface over a grid, as the book plots it
        xx, yy = np.mgrid[-1.2:1.2:.01, -0.2:2.2:.01]
        grid = np.c_[xx.ravel(), yy.ravel()]
        probs = sess.run(y, feed_dict={x: grid})
        values = sess.run(variables)
    assert last_mse < first_mse
    assert probs.shape == (grid.shape[0], 1)
    np.testing.assert_allclose(probs, forward(values, grid.astype(np.float32)), rtol=1e-4, atol=1e-5)


@pytest.mark.program
def test_learning_rate_examples_on_a_square():
    # y = x² minimized from x = 5: with learning rate 1 gradient descent jumps between 5 and -5;
    # with exponential_decay(0.1, global_step, 1, 0.96, staircase=True) it converges
    x = tf.Variable(tf.constant(5, dtype=tf.float32), name="x")
    y = tf.square(x)
    jumping = tf.train.GradientDescentOptimizer(1).minimize(y)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        seen = []
        for _ in range(4):
            sess.run(jumping)
            seen.append(sess.run(x))
    assert seen == [-5.0, 5.0, -5.0, 5.0]

    global_step = tf.Variable(0)
    learning_rate = tf.train.exponential_decay(0.1, global_step, 1, 0.96, staircase=True)
    decaying = tf.train.GradientDescentOptimizer(learning_rate).minimize(y, global_step=global_step)
    want_x, want_lr, got = 5.0, [], []
    for i in range(30):
        lr_i = 0.1 * 0.96 ** i
        want_x *= 1 - 2 * lr_i
        want_lr.append(0.1 * 0.96 ** (i + 1))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(30):
            sess.run(decaying)
            got.append(sess.run([x, learning_rate, global_step]))
    assert got[-1][2] == 30
    np.testing.assert_allclose([g[1] for g in got], want_lr, rtol=1e-5)
    assert got[-1][0] == pytest.approx(want_x, rel=1e-4)
