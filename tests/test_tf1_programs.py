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
                                     "chunked-threads": dict(scheduler="threads", chunks=3)})


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
