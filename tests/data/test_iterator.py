"""Iterator protocols on every scheduler: one-shot, initializable (placeholders through feed_dict),
reinitializable; OutOfRangeError; iterator state held per session and transactional."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf

pytestmark = pytest.mark.program


def drain(sess, fetch, feed_dict=None):
    out = []
    while True:
        try:
            out.append(sess.run(fetch, feed_dict))
        except tf.errors.OutOfRangeError:
            return out


def test_tutorial_range_one_shot():
    dataset = tf.data.Dataset.range(100)
    iterator = dataset.make_one_shot_iterator()
    next_element = iterator.get_next()
    with tf.Session() as sess:
        for i in range(100):
            value = sess.run(next_element)
            assert i == value
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(next_element)
        with pytest.raises(tf.errors.OutOfRangeError):  # stays at the end
            sess.run(next_element)


def test_tutorial_map_square_shuffle_batch():
    ds = tf.data.Dataset.from_tensor_slices([1, 2, 3, 4, 5, 6]).map(tf.square).shuffle(2).batch(2)
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    with tf.Session() as sess:
        batches = drain(sess, nxt)
    assert [len(b) for b in batches] == [2, 2, 2]
    assert sorted(int(v) for b in batches for v in b) == [1, 4, 9, 16, 25, 36]
    assert batches[0].dtype == np.int32


def test_compat_v1_make_one_shot_iterator():
    import dflow.compat.v1 as tf1

    nxt = tf1.data.make_one_shot_iterator(tf1.data.Dataset.range(3)).get_next()
    with tf.Session() as sess:
        assert [int(v) for v in drain(sess, nxt)] == [0, 1, 2]
    assert tf1.data.AUTOTUNE == tf1.data.experimental.AUTOTUNE == -1


def test_get_next_feeds_a_training_step():
    X = np.random.RandomState(0).rand(40, 3).astype(np.float32)
    y = X @ np.array([1.0, -2.0, 0.5], np.float32)
    xb, yb = tf.data.Dataset.from_tensor_slices((X, y)).batch(8).make_one_shot_iterator().get_next()
    w = tf.Variable(tf.zeros([3]))
    loss = tf.reduce_mean(tf.square(tf.reduce_sum(xb * w, axis=1) - yb))
    step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w0 = np.zeros(3, np.float32)
        n = 0
        while True:
            try:
                sess.run(step)
            except tf.errors.OutOfRangeError:
                break
            # the reference: the same step on the same batch in numpy
            bx, by = X[8 * n:8 * n + 8], y[8 * n:8 * n + 8]
            w0 = w0 - 0.5 * (2.0 / len(bx)) * bx.T @ (bx @ w0 - by)
            n += 1
        assert n == 5
        np.testing.assert_allclose(sess.run(w), w0, rtol=1e-5)


def test_initializable_iterator_takes_placeholders():
    max_value = tf.placeholder(tf.int64, shape=[])
    iterator = tf.data.Dataset.from_tensor_slices(tf.range(max_value)).make_initializable_iterator()
    nxt = iterator.get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
            sess.run(nxt)
        sess.run(iterator.initializer, feed_dict={max_value: 10})
        assert [int(v) for v in drain(sess, nxt)] == list(range(10))
        sess.run(iterator.initializer, feed_dict={max_value: 3})
        assert [int(v) for v in drain(sess, nxt)] == [0, 1, 2]
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed"):
            sess.run(iterator.initializer)


def test_reinitializable_iterator_from_structure():
    training = tf.data.Dataset.range(10).map(lambda x: x * 2)
    validation = tf.data.Dataset.range(3)
    iterator = tf.data.Iterator.from_structure(training.output_types, training.output_shapes)
    nxt = iterator.get_next()
    init_train = iterator.make_initializer(training)
    init_val = iterator.make_initializer(validation)
    with pytest.raises(TypeError, match="output types"):
        iterator.make_initializer(tf.data.Dataset.from_tensor_slices([1.0]))
    with tf.Session() as sess:
        sess.run(init_train)
        assert [int(sess.run(nxt)) for _ in range(3)] == [0, 2, 4]
        sess.run(init_val)
        assert [int(v) for v in drain(sess, nxt)] == [0, 1, 2]
        sess.run(init_train)
        assert int(sess.run(nxt)) == 0


def test_a_failed_run_does_not_advance_the_iterator():
    nxt = tf.data.Dataset.range(5).make_one_shot_iterator().get_next()
    p = tf.placeholder(tf.float32)
    fail = tf.py_func(lambda v: np.float32(1.0 / 0.0) if v == 1 else np.float32(v), [nxt], tf.float32)
    checked = tf.debugging.check_numerics(fail, "inf")
    with tf.Session() as sess:
        assert sess.run(nxt) == 0
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run([nxt, p])  # p unfed: refused after the element was pulled
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(checked)  # fails while running
        assert sess.run(nxt) == 1  # still the element the failed runs pulled
        assert sess.run(nxt) == 2


def test_each_session_has_its_own_position():
    nxt = tf.data.Dataset.range(4).make_one_shot_iterator().get_next()
    a, b = tf.Session(), tf.Session()
    try:
        assert [a.run(nxt), a.run(nxt)] == [0, 1]
        assert b.run(nxt) == 0
        assert a.run(nxt) == 2
    finally:
        a.close()
        b.close()


def test_one_element_per_run_and_per_get_next_op():
    it = tf.data.Dataset.range(10).make_one_shot_iterator()
    x = it.get_next()
    y = it.get_next()
    both = x + 100
    with tf.Session() as sess:
        a, b = sess.run([x, both])  # one op in one run: one element
        assert b == a + 100
        u, v = sess.run([x, y])  # two get_next ops: two elements
        assert sorted([int(u), int(v)]) == [1, 2]


def test_get_next_inside_cond_and_dict_elements():
    ds = tf.data.Dataset.from_tensor_slices({"a": [1, 2, 3], "b": [10.0, 20.0, 30.0]})
    e = ds.make_one_shot_iterator().get_next()
    out = tf.cond(e["a"] > 1, lambda: e["b"] * 2.0, lambda: e["b"])
    with tf.Session() as sess:
        assert [float(v) for v in drain(sess, out)] == [10.0, 40.0, 60.0]


def test_same_seed_same_batches():
    """The pipeline runs on the host: every scheduler sees the same batches for one seed."""
    ds = tf.data.Dataset.range(40).map(lambda x: x * 3).shuffle(10, seed=11).repeat(2).batch(7)
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        got = [b.tolist() for b in drain(sess, nxt)]
    # the same pipeline iterated directly, with no graph run at all
    from dflow.data.node import IterContext

    ref = [np.asarray(e[0]).tolist() for e in ds._node.iterate(IterContext({}, 0))]
    assert got == ref
    assert sorted(v for b in got for v in b) == sorted([3 * i for i in range(40)] * 2)


def test_feedable_iterator_switches_by_string_handle():
    training = tf.data.Dataset.range(100).map(lambda x: x * 10).repeat()
    validation = tf.data.Dataset.range(3)
    handle = tf.placeholder(tf.string, shape=[])
    iterator = tf.data.Iterator.from_string_handle(handle, training.output_types, training.output_shapes)
    nxt = iterator.get_next()
    train_it = training.make_one_shot_iterator()
    val_it = validation.make_initializable_iterator()
    train_h_t, val_h_t = train_it.string_handle(), val_it.string_handle()
    with tf.Session() as sess:
        train_h, val_h = sess.run([train_h_t, val_h_t])
        assert [int(sess.run(nxt, {handle: train_h})) for _ in range(3)] == [0, 10, 20]
        sess.run(val_it.initializer)
        assert [int(v) for v in drain(sess, nxt, {handle: val_h})] == [0, 1, 2]
        assert int(sess.run(nxt, {handle: train_h})) == 30  # the training iterator kept its place
        with pytest.raises(tf.errors.InvalidArgumentError, match="not the string handle"):
            sess.run(nxt, {handle: b"nonsense"})
    with pytest.raises(TypeError, match="string tensor"):
        tf.data.Iterator.from_string_handle(tf.constant(1), training.output_types)


def test_memory_budget_refuses_pipelines_whose_buffers_cannot_fit():
    rows = np.zeros((2000, 256), np.float32)  # 1 KiB rows
    big = tf.data.Dataset.from_tensor_slices(rows).shuffle(1500, seed=1).batch(100).prefetch(2)
    nxt = big.make_one_shot_iterator().get_next()
    with tf.Session(memory_budget="1MB") as sess:
        with pytest.raises(tf.errors.ResourceExhaustedError, match="shuffle buffer of 1500 elements"):
            sess.run(nxt)
    small = tf.data.Dataset.from_tensor_slices(rows).shuffle(300, seed=1).batch(100).prefetch(2)
    it = small.make_initializable_iterator()
    with tf.Session(memory_budget="1MB") as sess:
        sess.run(it.initializer)
        assert sess.run(it.get_next()).shape == (100, 256)
