"""py_func / numpy_function / map_blocks: values against numpy in every mode, TF1's op types,
names and output rules, errors naming the op (cause chained on every scheduler), gradients through
gradient_override_map (TF1's recipe) and custom_gradient, chunk-by-chunk execution."""

from __future__ import annotations

import array_api_compat
import numpy as np
import pytest

import dflow as tf
from dflow.kernels import py_ops
from tests.conftest import LOCAL_MODES, make_session, rand, run_modes

DASK_MODES = ["sync", "threads"]


class Boom(Exception):
    """A user exception: module level, so it pickles by reference to other processes."""


def explode(a):
    raise Boom(f"kaput on {a.shape}")


def test_public_names():
    assert tf.py_func is py_ops.py_func
    assert tf.numpy_function is py_ops.numpy_function
    assert tf.map_blocks is py_ops.map_blocks


# ---- py_func: values, types and names --------------------------------------------------------
def test_py_func_matches_numpy_in_every_local_mode():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.py_func(np.sinh, [x], tf.float32)
    y.set_shape([None, 3])
    xv = rand((7, 3))
    np.testing.assert_allclose(run_modes(y, {x: xv}), np.sinh(xv), rtol=1e-6)


def test_op_type_name_attrs_and_unknown_shape():
    x = tf.placeholder(tf.float32, [2])
    y = tf.py_func(np.sinh, [x], tf.float32)
    assert isinstance(y, tf.Tensor) and y.op.type == "PyFunc" and y.op.name == "PyFunc"
    assert y.shape.ndims is None and y.dtype == tf.float32
    assert y.op.get_attr("Tout") == [tf.float32] and y.op.get_attr("Tin") == [tf.float32]
    assert y.op.get_attr("token").startswith("pyfunc_")
    ys = tf.py_func(np.sinh, [x], [tf.float32], stateful=False, name="sh")
    assert isinstance(ys, list) and len(ys) == 1 and ys[0].op.type == "PyFuncStateless"
    assert ys[0].op.name == "sh"
    z = tf.numpy_function(np.cosh, [x], tf.float32)
    assert z.op.type == "PyFunc" and z.op.name == "PyFunc_1"


def test_multiple_outputs_single_call_per_run():
    calls = []

    def f(a, b):
        calls.append(1)
        return a + b, (a * b).astype(np.float64), np.int32(a.shape[0])

    x = tf.placeholder(tf.float32, [4])
    y = tf.constant(rand(4, seed=1))
    s, p, n = tf.py_func(f, [x, y], [tf.float32, tf.float64, tf.int32])
    for t in (s, p):
        t.set_shape([4])
    n.set_shape([])
    xv, yv = rand(4, seed=2), rand(4, seed=1)
    for m in LOCAL_MODES:
        calls.clear()
        with make_session(m, chunks=2) as sess:
            got = sess.run([s, p, n], {x: xv})
        assert len(calls) == 1, m
        np.testing.assert_allclose(got[0], xv + yv, rtol=1e-6)
        assert got[1].dtype == np.float64 and got[2] == 4 and got[2].dtype == np.int32


def test_scalars_arrive_as_numpy_scalars():
    seen = []

    def f(a):
        seen.append(type(a))
        return a * 2

    y = tf.py_func(f, [tf.constant(3.0)], tf.float32)
    assert run_modes(y) == np.float32(6.0)
    assert all(t is np.float32 for t in seen)


def test_stateful_functions_never_run_at_build_time():
    calls = []
    y = tf.py_func(lambda a: calls.append(1) or a, [tf.constant([1.0, 2.0])], tf.float32)
    z = y + 1.0
    assert tf.get_default_graph() is z.graph and not calls
    from dflow.graph.ops import constant_value

    assert constant_value(y) is None and not calls


def test_empty_tout_returns_the_op_and_runs_for_side_effects():
    calls = []
    x = tf.placeholder(tf.float32, [3])
    op = tf.py_func(lambda a: calls.append(a.sum()), [x], [])
    assert isinstance(op, tf.Operation) and op.type == "PyFunc"
    with tf.control_dependencies([op]):
        y = tf.identity(x * 2.0)
    xv = rand(3)
    for m in LOCAL_MODES:
        calls.clear()
        with make_session(m, chunks=2) as sess:
            assert sess.run(op, {x: xv}) is None
            np.testing.assert_allclose(sess.run(y, {x: xv}), 2 * xv)
        assert len(calls) == 2, m


# ---- output rules ------------------------------------------------------------------------------
@pytest.mark.parametrize("m", LOCAL_MODES)
def test_results_must_have_tout_exactly(m):
    """TF1 never casts a py_func's result: a float64 value for float32 (a Python float included)
    or a Python int (int64) for int32 is an InvalidArgumentError, in TF 2.21's words (checked with
    tf.compat.v1: "0-th value returned by pyfunc_0 is double, but expects float")."""
    x = tf.placeholder(tf.float32, [3])
    lst = tf.py_func(lambda a: [7], [x], [tf.int64])  # a Python int is int64: exact
    flag = tf.py_func(lambda a: True, [x], tf.bool)
    with make_session(m, chunks=2) as sess:
        lv, fv = sess.run([lst, flag], {x: np.ones(3, np.float32)})
        assert lv[0].dtype == np.int64 and lv[0] == 7 and fv.dtype == np.bool_
        for fn, tout, want in ((lambda a: a.astype(np.float64) * 2, tf.float32, "is double, but expects float"),
                               (lambda a: 1.5, tf.float32, "is double, but expects float"),
                               (lambda a: 3, tf.int32, "is int64, but expects int32"),
                               (lambda a: True, tf.int32, "is bool, but expects int32"),
                               (lambda a: np.float16(1), tf.float64, "is half, but expects double")):
            y = tf.py_func(fn, [x], tout, name="wrong")
            with pytest.raises(tf.errors.InvalidArgumentError, match="0-th value returned by .* " + want) as e:
                sess.run(y, {x: np.ones(3, np.float32)})
            assert "wrong" in str(e.value)


@pytest.mark.parametrize("m", LOCAL_MODES)
@pytest.mark.parametrize("case", ["kind", "count", "list"])
def test_bad_results_raise_naming_the_op(m, case):
    x = tf.placeholder(tf.float32, [3])
    if case == "kind":
        y, want = tf.py_func(lambda a: 3.5, [x], tf.int32, name="bad"), "expects int32"
    elif case == "count":
        y, want = tf.py_func(lambda a: (a, a), [x], tf.float32, name="bad"), "expects to see 1 values"
    else:
        y, want = tf.py_func(lambda a: a, [x], [tf.float32, tf.float32], name="bad")[0], "expects to see 2"
    with make_session(m, chunks=2) as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(y, {x: np.ones(3, np.float32)})
    assert "bad" in str(info.value) and want in str(info.value)


@pytest.mark.parametrize("m", DASK_MODES)
def test_result_contradicting_set_shape_raises(m):
    x = tf.placeholder(tf.float32, [3])
    y = tf.py_func(lambda a: a[:2], [x], tf.float32, name="short")
    y.set_shape([3])
    with make_session(m) as sess, pytest.raises(tf.errors.InvalidArgumentError, match="short.*shape"):
        sess.run(y, {x: np.ones(3, np.float32)})


def test_unknown_rank_feeding_a_chunked_op_runs_on_every_path():
    # TF1's py_func outputs have unknown shapes: a Dask plan computes such an output first (one
    # task) and feeds it to the ops that need its chunks
    x = tf.placeholder(tf.float32, [4, 3])
    y = tf.py_func(np.sinh, [x], tf.float32, name="f")
    total = tf.reduce_sum(y, axis=1)
    xv = rand((4, 3))
    through_identity = tf.reduce_max(tf.identity(y), axis=0)
    for mode in ("eager", "sync", "threads"):
        with make_session(mode, chunks=2) as sess:
            t1, t2 = sess.run([total, through_identity], {x: xv})
            np.testing.assert_allclose(t1, np.sinh(xv).sum(1), rtol=1e-5)
            np.testing.assert_allclose(t2, np.sinh(xv).max(0), rtol=1e-5)
    y.set_shape([None, None])  # the rank is enough: sizes stay unknown until the run
    np.testing.assert_allclose(run_modes(total, {x: xv}), np.sinh(xv).sum(1), rtol=1e-5)


def test_unknown_rank_output_fetched_or_fed_to_another_py_func():
    x = tf.placeholder(tf.float32, [4, 3])
    y = tf.py_func(np.sinh, [x], tf.float32)
    z = tf.py_func(lambda a: a.T.copy(), [y], tf.float32)
    xv = rand((4, 3))
    yv, zv = run_modes([y, z], {x: xv})
    np.testing.assert_allclose(yv, np.sinh(xv), rtol=1e-6)
    np.testing.assert_allclose(zv, np.sinh(xv).T, rtol=1e-6)


# ---- errors on every scheduler ---------------------------------------------------------------
def test_exceptions_name_the_op_and_chain_the_cause(any_mode, sess_factory):
    x = tf.placeholder(tf.float32, [4, 2])
    y = tf.py_func(explode, [x], tf.float32, name="boom")
    m = tf.map_blocks(explode, x, dtype=tf.float32, name="blocks")
    sess = sess_factory(any_mode, chunks=2)
    for t, name in ((y, "boom"), (m, "blocks")):
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(t, {x: np.ones((4, 2), np.float32)})
        assert name in str(info.value) and "Boom" in str(info.value) and "kaput" in str(info.value)
        assert isinstance(info.value.__cause__, Boom), any_mode


def test_functions_ship_to_other_processes(any_mode, sess_factory):
    scale = np.float32(3.0)  # captured by a closure: the function is pickled by value
    x = tf.placeholder(tf.float32, [6, 4])
    y = tf.py_func(lambda a: np.tanh(a) * scale, [x], tf.float32)
    y.set_shape([6, 4])
    z = tf.map_blocks(lambda b: b - scale, y, dtype=tf.float32)
    xv = rand((6, 4))
    got = sess_factory(any_mode, chunks=2).run(z, {x: xv})
    np.testing.assert_allclose(got, np.tanh(xv) * 3 - 3, rtol=1e-5, atol=1e-6)


# ---- gradients ---------------------------------------------------------------------------------
def _tf1_py_func(func, inp, Tout, stateful=True, name=None, grad=None):  # noqa: N803
    """TF1's recipe, verbatim but for the import: a py_func with a gradient given by name."""
    rnd_name = "PyFuncGrad" + str(np.random.randint(0, 1e8))
    tf.RegisterGradient(rnd_name)(grad)
    g = tf.get_default_graph()
    with g.gradient_override_map({"PyFunc": rnd_name, "PyFuncStateless": rnd_name}):
        return tf.py_func(func, inp, Tout, stateful=stateful, name=name)


def _my_square_grad(op, grad):
    x = op.inputs[0]
    return grad * 20 * x  # the TF1 example's deliberately "wrong" gradient, to see it is used


def mysquare(x, name=None):
    with tf.name_scope(name, "Mysquare", [x]) as name:
        sqr_x = _tf1_py_func(np.square, [x], [tf.float32], name=name, grad=_my_square_grad)
        return sqr_x[0]


@pytest.mark.program
def test_gradient_override_map_tf1_example():
    with tf.Session() as sess:
        x = tf.constant([1.0, 2.0])
        y = mysquare(x)
        tf.global_variables_initializer().run()
        assert y.op.name == "Mysquare"
        np.testing.assert_allclose(x.eval(), [1.0, 2.0])
        np.testing.assert_allclose(y.eval(), [1.0, 4.0])
        np.testing.assert_allclose(tf.gradients(y, x)[0].eval(), [20.0, 40.0])
        assert sess.run(tf.gradients(y, x)[0]).dtype == np.float32


def test_gradient_that_is_itself_a_py_func_in_every_mode():
    def square_grad(op, grad):
        g = tf.py_func(lambda x, dy: (2 * x * dy).astype(np.float32), [op.inputs[0], grad], tf.float32)
        g.set_shape(op.inputs[0].shape)
        return g

    x = tf.placeholder(tf.float32, [5])
    y = _tf1_py_func(np.square, [x], tf.float32, stateful=False, grad=square_grad)
    y.set_shape([5])
    assert y.op.type == "PyFuncStateless"
    loss = tf.reduce_sum(y * 3.0)
    (dx,) = tf.gradients(loss, x)
    xv = rand(5)
    np.testing.assert_allclose(run_modes(dx, {x: xv}), 6 * xv, rtol=1e-6)


def test_py_func_is_not_differentiable_by_default():
    x = tf.placeholder(tf.float32, [3])
    y = tf.py_func(np.square, [x], tf.float32)
    m = tf.map_blocks(np.square, x, dtype=tf.float32)
    assert tf.gradients(y, x) == [None]
    assert tf.gradients(m, x) == [None]


def test_custom_gradient_around_py_func_and_map_blocks():
    @tf.custom_gradient
    def softplus(x):
        y = tf.map_blocks(lambda b: np.logaddexp(0, b), x, dtype=tf.float32)

        def grad(dy):
            return dy * tf.sigmoid(x)

        return y, grad

    x = tf.placeholder(tf.float32, [6])
    y = softplus(x)
    (dx,) = tf.gradients(tf.reduce_sum(y), x)
    xv = rand(6)
    yv, dxv = run_modes([y, dx], {x: xv})
    np.testing.assert_allclose(yv, np.logaddexp(0, xv), rtol=1e-5)
    np.testing.assert_allclose(dxv, 1 / (1 + np.exp(-xv)), rtol=1e-5)


def test_map_blocks_gradient_override():
    @tf.RegisterGradient("MapBlocksCubeGrad")
    def _cube_grad(op, dy):
        return [dy * 3.0 * tf.square(op.inputs[0])]

    x = tf.placeholder(tf.float32, [4, 2])
    with tf.get_default_graph().gradient_override_map({"MapBlocks": "MapBlocksCubeGrad"}):
        y = tf.map_blocks(lambda b: b ** 3, x, dtype=tf.float32)
    (dx,) = tf.gradients(y, x)
    xv = rand((4, 2))
    np.testing.assert_allclose(run_modes(dx, {x: xv}), 3 * xv**2, rtol=1e-5)


# ---- map_blocks --------------------------------------------------------------------------------
def test_map_blocks_runs_chunk_by_chunk_in_the_chunks_namespace():
    shapes = []

    def standardize_rows(b):
        xp = array_api_compat.array_namespace(b)
        shapes.append(b.shape)
        mean = xp.mean(b, axis=1, keepdims=True)
        return b - mean

    x = tf.placeholder(tf.float64, [7, 3])
    # a row's mean needs the whole row: chunks=(None, 3) keeps each row in one block
    y = tf.map_blocks(standardize_rows, x, dtype=tf.float64, chunks=(None, 3))
    assert y.op.type == "MapBlocks" and y.op.name == "MapBlocks" and y.shape == [7, 3]
    xv = rand((7, 3), np.float64)
    np.testing.assert_allclose(run_modes(y, {x: xv}), xv - xv.mean(1, keepdims=True), atol=1e-12)
    with make_session("sync", chunks=2) as sess:
        shapes.clear()
        sess.run(y, {x: xv})
    assert sorted(shapes) == [(1, 3)] + [(2, 3)] * 3  # four row blocks, never the whole array


def test_map_blocks_broadcasts_and_casts():
    x = tf.placeholder(tf.float32, [6, 4])
    b = tf.constant(rand(4, seed=3))
    y = tf.map_blocks(lambda xb, bb: (xb + bb).astype(np.float64), x, b, dtype=tf.float32)
    assert y.shape == [6, 4] and y.dtype == tf.float32
    xv = rand((6, 4))
    got = run_modes(y, {x: xv})
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, xv + rand(4, seed=3), rtol=1e-6)


def test_map_blocks_with_a_fixed_block_size():
    w = rand((3, 5), seed=4)
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.map_blocks(lambda b: b @ w, x, dtype=tf.float32, chunks=(None, 5))
    assert y.shape.as_list() == [None, 5]
    xv = rand((9, 3))
    np.testing.assert_allclose(run_modes(y, {x: xv}, chunks=(2, 1)), xv @ w, rtol=1e-5, atol=1e-6)


def test_map_blocks_build_and_run_errors():
    x = tf.placeholder(tf.float32, [4, 3])
    with pytest.raises(ValueError, match="chunks"):
        tf.map_blocks(np.sinh, x, dtype=tf.float32, chunks=(None,))
    with pytest.raises(ValueError, match="broadcast"):
        tf.map_blocks(np.add, x, tf.zeros([5]), dtype=tf.float32)
    with pytest.raises(TypeError):
        tf.map_blocks("sinh", x, dtype=tf.float32)
    bad_shape = tf.map_blocks(lambda b: b[:, :1], x, dtype=tf.float32, name="narrow")
    bad_kind = tf.map_blocks(lambda b: b, x, dtype=tf.int32, name="kind")
    for m in LOCAL_MODES:
        with make_session(m, chunks=2) as sess:
            for t, name in ((bad_shape, "narrow"), (bad_kind, "kind")):
                with pytest.raises(tf.errors.InvalidArgumentError, match=name):
                    sess.run(t, {x: np.ones((4, 3), np.float32)})


# ---- GPU ---------------------------------------------------------------------------------------
@pytest.mark.skipif(not tf.test.is_gpu_available(), reason="needs cupy and a GPU")
def test_cupy_feeds_stay_on_the_gpu_through_py_ops():
    import cupy

    x = tf.placeholder(tf.float32, [4, 3])
    y = tf.py_func(np.sinh, [x], tf.float32)
    z = tf.map_blocks(lambda b: b * 2, x, dtype=tf.float32)
    xv = rand((4, 3))
    with tf.Session() as sess:
        yv, zv = sess.run([y, z], {x: cupy.asarray(xv)})
    np.testing.assert_allclose(yv, np.sinh(xv), rtol=1e-6)
    np.testing.assert_allclose(zv, 2 * xv, rtol=1e-6)
