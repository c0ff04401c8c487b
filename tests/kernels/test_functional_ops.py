"""map_fn, scan, foldl, foldr: values against Python loops, gradients against central differences."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

RNG = np.random.default_rng(3)
XV = RNG.standard_normal((5, 3))


def test_map_fn_values_on_the_schedulers():
    x = tf.placeholder(tf.float64, [5, 3])
    rowsum = tf.map_fn(lambda r: tf.reduce_sum(r * r), x)  # not elementwise: the loop
    pair = tf.map_fn(lambda p: (p[0] * p[1], tf.cast(p[0] > 0, tf.int32)), (x, -x), dtype=(tf.float64, tf.int32))
    nested = tf.map_fn(lambda d: d["a"] + tf.reduce_max(d["b"]), {"a": x, "b": x * 2}, dtype=tf.float64)
    assert rowsum.shape.as_list() == [5] and pair[1].shape.as_list() == [5, 3]
    got = run_modes([rowsum, pair, nested], {x: XV})
    np.testing.assert_allclose(got[0], [(r * r).sum() for r in XV])
    np.testing.assert_allclose(got[1][0], -XV * XV)
    np.testing.assert_array_equal(got[1][1], (XV > 0).astype(np.int32))
    np.testing.assert_allclose(got[2], np.stack([r + (2 * r).max() for r in XV]))


def test_map_fn_of_an_elementwise_fn_runs_vectorized_chunk_by_chunk():
    x = tf.placeholder(tf.float32, [None, 4])
    w = tf.constant([1.0, 2.0, 3.0, 4.0])
    y = tf.map_fn(lambda r: tf.nn.relu(r * w) + 1.0, x)
    assert "TensorArray" not in y.op.type  # one elementwise chain over the whole input, no loop
    z = tf.map_fn(lambda r: tf.nn.relu(r * w) + tf.reduce_mean(r), x)
    assert z.op.type == "TensorArrayStack"  # a reduction over the element: the loop
    xv = RNG.standard_normal((10, 4)).astype(np.float32)
    got = run_modes([y, z], {x: xv}, chunks=3)
    np.testing.assert_allclose(got[0], np.maximum(xv * [1, 2, 3, 4], 0) + 1, rtol=1e-6)
    np.testing.assert_allclose(got[1], np.maximum(xv * [1, 2, 3, 4], 0) + xv.mean(1, keepdims=True), rtol=1e-6)
    with tf.Session(scheduler="threads", small_plan_bytes=0, chunks=(2, 4)) as s:
        import dask.array as da

        np.testing.assert_allclose(s.run(y, {x: da.from_array(xv, chunks=(2, 4))}),
                                   np.maximum(xv * [1, 2, 3, 4], 0) + 1, rtol=1e-6)


def test_scan_foldl_foldr_against_python_loops():
    x = tf.placeholder(tf.float64, [5, 3])
    outs = [tf.scan(lambda a, r: a + r, x),
            tf.scan(lambda a, r: a * r + 1.0, x, initializer=tf.ones([3], tf.float64), reverse=True),
            tf.scan(lambda a, r: (a[0] + r, a[1] * 2.0), x, initializer=(tf.zeros([3], tf.float64),
                                                                           tf.constant(1.0, tf.float64))),
            tf.foldl(lambda a, r: a * 0.5 + r, x),
            tf.foldr(lambda a, r: a * 0.5 + r, x, initializer=tf.zeros([3], tf.float64)),
            tf.foldl(lambda a, p: a + tf.reduce_sum(p[0] * p[1]), (x, x * 3), initializer=tf.constant(0.0, tf.float64))]
    got = run_modes(outs, {x: XV})
    np.testing.assert_allclose(got[0], np.cumsum(XV, 0))
    acc, want = np.ones(3), [None] * 5
    for i in reversed(range(5)):
        acc = acc * XV[i] + 1
        want[i] = acc
    np.testing.assert_allclose(got[1], want)
    np.testing.assert_allclose(got[2][0], np.cumsum(XV, 0))
    np.testing.assert_allclose(got[2][1], 2.0 ** np.arange(1, 6))
    acc = XV[0]
    for r in XV[1:]:
        acc = acc * 0.5 + r
    np.testing.assert_allclose(got[3], acc)
    acc = np.zeros(3)
    for r in XV[::-1]:
        acc = acc * 0.5 + r
    np.testing.assert_allclose(got[4], acc)
    np.testing.assert_allclose(got[5], (3 * XV * XV).sum())


@pytest.mark.parametrize("make", [
    lambda x: tf.map_fn(lambda r: tf.sin(r) * r, x),                       # vectorized
    lambda x: tf.map_fn(lambda r: r * tf.reduce_sum(r * r), x),            # the loop
    lambda x: tf.scan(lambda a, r: tf.tanh(a * r + r), x),
    lambda x: tf.scan(lambda a, r: a * r, x, initializer=tf.ones([3], tf.float64), reverse=True),
    lambda x: tf.foldl(lambda a, r: a * tf.cos(r), x),
    lambda x: tf.foldr(lambda a, r: a * a * 0.3 + r, x, initializer=tf.constant([0.5, 1.0, -1.0], tf.float64)),
], ids=["map_fn-vectorized", "map_fn-loop", "scan", "scan-reverse", "foldl", "foldr"])
def test_gradients_match_central_differences(make):
    x = tf.placeholder(tf.float64, [5, 3])
    y = make(x)
    with tf.Session():
        err = tf.test.compute_gradient_error(x, [5, 3], y, y.shape.as_list(), x_init_value=XV, delta=1e-6)
    assert err < 1e-6


def test_back_prop_false_stops_gradients_and_bad_input_is_refused():
    x = tf.placeholder(tf.float32, [4, 2])
    assert tf.gradients(tf.reduce_sum(tf.map_fn(lambda r: tf.reduce_sum(r), x, back_prop=False)), x) == [None]
    with pytest.raises(ValueError, match="scalars"):
        tf.map_fn(lambda r: r, tf.constant(1.0))
    with pytest.raises(TypeError, match="dtype says int32"):
        tf.map_fn(lambda r: r * 2.0, x, dtype=tf.int32)
    with pytest.raises(ValueError, match="same leading dimension"):
        tf.map_fn(lambda p: p[0], (x, tf.zeros([3, 2])))


def test_map_fn_with_a_variable_inside_trains():
    w = tf.Variable([1.0, -1.0])
    x = tf.constant(RNG.standard_normal((6, 2)).astype(np.float32))
    loss = tf.reduce_sum(tf.square(tf.map_fn(lambda r: tf.reduce_sum(r * w), x) - 1.0))
    step = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
    with tf.Session() as s:
        s.run(w.initializer)
        first = s.run(loss)
        for _ in range(20):
            s.run(step)
        assert s.run(loss) < 0.5 * first


def test_tf1_results_for_reverse_nested_and_tuple_outputs():
    x = tf.constant(np.arange(1.0, 6.0))
    got = run_modes([tf.scan(lambda a, v: a * 2 + v, x, reverse=True),
                     tf.foldr(lambda a, v: a * 2 + v, x),
                     tf.scan(lambda a, v: (a[0] + v[0], a[1] * v[1]), (x, x * 2)),
                     tf.map_fn(lambda v: (v, v * 2), x, dtype=(tf.float64, tf.float64)),
                     tf.scan(lambda a, v: a + v, x, initializer=tf.constant(10.0, tf.float64), reverse=True)])
    # TensorFlow 2.21 (tf.compat.v1, graph mode) gives these
    assert got[0].tolist() == [129.0, 64.0, 31.0, 14.0, 5.0] and got[1] == 129.0
    assert [v.tolist() for v in got[2]] == [[1.0, 3.0, 6.0, 10.0, 15.0], [2.0, 8.0, 48.0, 384.0, 3840.0]]
    assert [v.tolist() for v in got[3]] == [[1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 4.0, 6.0, 8.0, 10.0]]
    assert got[4].tolist() == [25.0, 24.0, 22.0, 19.0, 15.0]
