"""The combining row scatters (scatter_mul/div/max/min), batch_scatter_update and TF1's Variable
scatter methods, against numpy and TF 1.x figures.

The TF figures were obtained by running the same calls with TensorFlow 2.21's
`tensorflow.compat.v1` (graph mode, RefVariables) and copying its output.
"""

import numpy as np
import pytest

import dflow as tf
from dflow.errors import InvalidArgumentError
from tests.conftest import LOCAL_MODES, make_session

_INIT = np.arange(1., 9.).reshape(4, 2)


def _reference(init, indices, updates, fn):
    out = init.copy()
    rows = np.broadcast_to(updates, np.shape(indices) + init.shape[1:]).reshape((-1,) + init.shape[1:])
    for i, r in zip(np.reshape(indices, -1), rows):
        out[i] = fn(out[i], r)
    return out


@pytest.mark.parametrize("mode", LOCAL_MODES)
def test_combining_scatters_match_tf_and_commit(mode):
    v = tf.Variable(_INIT)
    vi = tf.Variable(np.array([7, -7, 9, 4], np.int32))
    ops = [tf.scatter_mul(v, [1, 1, 3], [[2., 3], [4, 5], [0.5, 0.5]]), tf.scatter_div(v, [0, 0], [[2., 4], [2, 2]]),
           tf.scatter_max(v, [2, 2], [[5.5, 7], [6, 1]]), tf.scatter_min(v, [2], [[5.5, 0]]),
           tf.scatter_div(vi, [0, 1, 1], [2, 2, 2]), tf.scatter_mul(v, [1], 2.0)]
    assert [o.name for o in ops] == ["ScatterMul:0", "ScatterDiv:0", "ScatterMax:0", "ScatterMin:0",
                                     "ScatterDiv_1:0", "ScatterMul_1:0"]  # TF names
    want = [[[1, 2], [24, 60], [5, 6], [3.5, 4]], [[0.25, 0.25], [3, 4], [5, 6], [7, 8]],
            [[1, 2], [3, 4], [6, 7], [7, 8]], [[1, 2], [3, 4], [5, 0], [7, 8]], [3, -1, 9, 4],
            [[1, 2], [6, 8], [5, 6], [7, 8]]]  # TF figures (ints truncate toward zero)
    with make_session(mode, chunks=2) as s:
        for op, w in zip(ops, want):
            s.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(s.run(op), w)
            np.testing.assert_array_equal(s.run(op.op.inputs[0]), w)  # committed
        s.run(tf.global_variables_initializer())
        s.run(ops[0])
        np.testing.assert_array_equal(s.run(ops[0]), [[1, 2], [192, 900], [5, 6], [1.75, 2]])  # twice


@pytest.mark.parametrize("seed", [0, 1])
def test_combining_scatters_random_against_numpy(seed):
    rng = np.random.default_rng(seed)
    init = rng.normal(size=(6, 3))
    idx = rng.integers(0, 6, size=(2, 5))
    upd = rng.uniform(0.5, 2, size=(2, 5, 3))
    v = tf.Variable(init)
    fns = {tf.scatter_mul: np.multiply, tf.scatter_div: np.divide, tf.scatter_max: np.maximum,
           tf.scatter_min: np.minimum}
    for f, fn in fns.items():
        op = f(v, idx, upd)
        for mode in LOCAL_MODES:
            with make_session(mode, chunks=2) as s:
                s.run(v.initializer)
                np.testing.assert_allclose(s.run(op), _reference(init, idx, upd, fn), rtol=1e-12)


def test_combining_scatter_errors():
    v = tf.Variable(_INIT, name="v")
    with pytest.raises(TypeError, match="float32 that does not match type float64"):
        tf.scatter_max(v, [0], tf.constant([[9., 0]]))
    with pytest.raises(TypeError, match="indices"):
        tf.scatter_mul(v, [0.], [[1., 2]])
    with pytest.raises(ValueError, match="updates shape"):
        tf.scatter_mul(v, [0], [[1., 2, 3]])
    with pytest.raises(TypeError, match="must be a variable"):
        tf.scatter_min(tf.constant([1.]), [0], [1.])
    up = tf.scatter_mul(v, [5], [[1., 1]], name="mul")
    with tf.Session() as s:
        s.run(v.initializer)
        with pytest.raises(InvalidArgumentError, match=r"mul.*index 5 is out of range \[0, 4\)"):
            s.run(up)
        np.testing.assert_array_equal(s.run(v), _INIT)  # nothing changed


def test_variable_scatter_methods_take_indexed_slices():
    v = tf.Variable(_INIT)
    delta = tf.IndexedSlices(tf.constant([[9., 0]], tf.float64), tf.constant([0]))
    ops = {"scatter_max": [[9, 2]], "scatter_min": [[1, 0]], "scatter_mul": [[9, 0]], "scatter_div": [[1 / 9, np.inf]],
           "scatter_add": [[10, 2]], "scatter_sub": [[-8, 2]], "scatter_update": [[9, 0]]}
    built = {k: getattr(v, k)(delta) for k in ops}
    assert built["scatter_max"].op.type == "ScatterMax"
    nd = [v.scatter_nd_max([[0, 1]], [100.]), v.scatter_nd_min([[0, 1]], [-1.]), v.scatter_nd_add([[3, 0]], [1.]),
          v.scatter_nd_sub([[3, 0]], [1.]), v.scatter_nd_update([[3, 0]], [0.])]
    assert nd[0].op.type == "ScatterNdMax" and nd[1].op.type == "ScatterNdMin"
    with pytest.raises(TypeError, match="sparse_delta is not IndexedSlices"):
        v.scatter_max([0])
    with tf.Session() as s:
        for k, row0 in ops.items():
            s.run(v.initializer)
            got = s.run(built[k])
            np.testing.assert_array_equal(got[0], row0[0])
            np.testing.assert_array_equal(got[1:], _INIT[1:])
        want = [(0, 1, 100), (0, 1, -1), (3, 0, 8), (3, 0, 6), (3, 0, 0)]
        for op, (i, j, x) in zip(nd, want):
            s.run(v.initializer)
            got = s.run(op)
            assert got[i, j] == x


def test_batch_scatter_update_matches_tf():
    b = tf.Variable(np.arange(12.).reshape(3, 4))
    up = tf.batch_scatter_update(b, [[0, 2], [1, 1], [3, 0]], [[10., 20], [30, 40], [50, 60]])
    assert up.op.type == "ScatterNdUpdate"  # TF builds it from scatter_nd_update
    b3 = tf.Variable(np.zeros((2, 2, 3)))
    up3 = b3.batch_scatter_update(tf.IndexedSlices(tf.constant(np.ones((2, 2, 1))), tf.constant([[[2], [0]], [[1], [1]]])))
    v1 = tf.Variable([1., 2, 3])
    up1 = tf.batch_scatter_update(v1, [2, 0], [7., 8])
    for mode in LOCAL_MODES:
        with make_session(mode, chunks=2) as s:
            s.run(tf.global_variables_initializer())
            # TF figure (the last of two updates of one element wins: [1, 1] -> 40)
            np.testing.assert_array_equal(s.run(up), [[10, 1, 20, 3], [4, 40, 6, 7], [60, 9, 10, 50]])
            want = np.zeros((2, 2, 3))
            want[0, 0, 2] = want[0, 1, 0] = want[1, 0, 1] = want[1, 1, 1] = 1
            np.testing.assert_array_equal(s.run(up3), want)
            np.testing.assert_array_equal(s.run(up1), [8, 2, 7])
    with pytest.raises(ValueError, match="at least rank 1"):
        tf.batch_scatter_update(v1, 0, 1.)
