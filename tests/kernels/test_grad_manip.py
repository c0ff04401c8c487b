"""Gradient rules of the array-manipulation, padding and creation ops: each against central
differences (float64) on random shapes, with negative axes, static and run-time shapes; the same
gradient values from the eager path and chunked Dask runs; and second derivatives."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from tests.conftest import rand, run_modes

TOL = 1e-7  # the ops are linear: central differences are exact up to rounding


def rand_shape(rng, rank, lo=1, hi=4):
    return [int(d) for d in rng.integers(lo, hi + 1, size=rank)]


def check_grad(build, shapes, seed=0, static=True, tol=TOL):
    """Checks d build(*xs) / d xs against central differences, the static shapes of the gradients,
    and that chunked Dask runs give the eager gradient values. Returns the gradients' values."""
    shapes = [list(s) for s in shapes]
    xs = [tf.placeholder(tf.float64, s if static else [None] * len(s)) for s in shapes]
    vals = [rand(s, np.float64, seed + i) for i, s in enumerate(shapes)]
    feed = dict(zip(xs, vals))
    y = build(*xs)
    y_shape = list(run_modes(y, feed, modes=["eager"]).shape)
    if static:
        assert y.shape.as_list() == y_shape
    with tf.Session():
        for i, x in enumerate(xs):
            others = {t: v for t, v in feed.items() if t is not x}
            err = tf.test.compute_gradient_error(x, shapes[i], y, y_shape, x_init_value=vals[i],
                                                 extra_feed_dict=others)
            assert err < tol, f"input {i}: gradient error {err}"
    w = rand(y_shape, np.float64, seed + 100)
    grads = tf.gradients(y, xs, grad_ys=tf.constant(w))
    for g, x in zip(grads, xs):
        assert g is not None and g.dtype == tf.float64
        assert g.shape.is_compatible_with(x.shape)
        if static:
            assert g.shape.as_list() == x.shape.as_list()
    return run_modes(grads, feed)  # eager, sync and threads on chunks of 2 agree


def second_order(build, shape, seed=0):
    """d/dx of the gradient of sum(build(x)), against central differences and across modes."""
    x = tf.placeholder(tf.float64, shape)
    (g1,) = tf.gradients(build(x), x)
    x0 = rand(shape, np.float64, seed)
    with tf.Session():
        err = tf.test.compute_gradient_error(x, shape, g1, shape, x_init_value=x0)
    assert err < 1e-6
    (g2,) = tf.gradients(g1, x, grad_ys=tf.constant(rand(shape, np.float64, seed + 1)))
    assert g2.shape.as_list() == list(shape)
    run_modes(g2, {x: x0})


# ---- transpose, expand_dims, squeeze ---------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_transpose(seed):
    rng = np.random.default_rng(seed)
    shape = rand_shape(rng, seed + 2)
    perm = rng.permutation(len(shape))
    perm = [int(p) - len(shape) if rng.random() < 0.5 else int(p) for p in perm]  # negative entries too
    check_grad(lambda x: tf.transpose(x, perm), [shape], seed)
    check_grad(lambda x: tf.transpose(x), [shape], seed)


def test_transpose_run_time_perm_and_shape():
    # perm is known only when the plan is compiled (computed from a shape): InvertPermutation
    check_grad(lambda x: tf.transpose(x, tf.shape(x) * 0 + tf.constant([2, 0, 1])), [[2, 3, 4]],
               static=False)
    x = tf.placeholder(tf.float64)  # unknown rank: Transpose without perm
    (g,) = tf.gradients(tf.transpose(x), x, grad_ys=tf.constant(rand([4, 3, 2], np.float64)))
    np.testing.assert_array_equal(run_modes(g, {x: rand([2, 3, 4], np.float64)}), rand([4, 3, 2], np.float64).T)


def test_conjugate_transpose():
    x = tf.placeholder(tf.complex128, [2, 3, 4])
    y = tf.transpose(x, [1, -1, 0], conjugate=True)
    assert y.op.type == "ConjugateTranspose"
    w = rand([3, 4, 2], np.float64) + 1j * rand([3, 4, 2], np.float64, 1)
    (g,) = tf.gradients(y, x, grad_ys=tf.constant(w))
    got = run_modes(g, {x: np.zeros([2, 3, 4], np.complex128)})
    np.testing.assert_allclose(got, np.conj(np.transpose(w, [2, 0, 1])))


def test_invert_permutation():
    p = [2, 0, 3, 1]
    np.testing.assert_array_equal(run_modes(tf.invert_permutation(p)), np.argsort(p))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a permutation"):
        tf.Session().run(tf.invert_permutation(tf.shape(tf.placeholder(tf.float32, [None, 3])) * 0),
                         {"Placeholder:0": np.zeros((2, 3), np.float32)})


@pytest.mark.parametrize("axis", [0, 2, -1, -3])
def test_expand_dims(axis):
    check_grad(lambda x: tf.expand_dims(x, axis), [[2, 3]])
    check_grad(lambda x: tf.expand_dims(x, axis), [[2, 3]], static=False)


@pytest.mark.parametrize("axis", [None, [1], [-1], [1, -1]])
def test_squeeze(axis):
    check_grad(lambda x: tf.squeeze(x, axis), [[3, 1, 2, 1]])
    x = tf.placeholder(tf.float64, [None, 1, None, 1])
    (g,) = tf.gradients(tf.squeeze(x, axis or [1, 3]), x)
    assert g.shape.as_list() == [None, 1, None, 1]
    np.testing.assert_array_equal(run_modes(g, {x: rand([3, 1, 2, 1], np.float64)}), np.ones([3, 1, 2, 1]))


# ---- concat, unstack, split ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_concat(seed):
    rng = np.random.default_rng(seed)
    base = rand_shape(rng, 3)
    axis = int(rng.integers(-3, 3))
    shapes = [base[:axis % 3] + [int(rng.integers(1, 4))] + base[axis % 3 + 1:] for _ in range(3)]
    check_grad(lambda *xs: tf.concat(list(xs), axis), shapes, seed)
    check_grad(lambda *xs: tf.concat(list(xs), axis), shapes, seed, static=False)


def test_concat_run_time_axis():
    # The axis is known only when the plan is compiled: each input's size comes from its shape.
    check_grad(lambda a, b: tf.concat([a, b], tf.shape(a)[0] * 0 - 1), [[2, 3], [2, 1]], static=False)


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_unstack_with_missing_grads(axis):
    def build(x):
        parts = tf.unstack(x, axis=axis)
        return tf.stack([parts[0] * 2.0, parts[-1]])  # the middle slice gets no gradient: zeros

    got = check_grad(build, [[3, 4, 3]])
    assert not np.take(got[0], 1, axis=axis).any()
    check_grad(lambda x: tf.stack(tf.unstack(x, num=3, axis=axis)[1:], axis=axis), [[3, 3, 3]],
               static=False)


@pytest.mark.parametrize("sizes,axis", [(3, 1), (2, -1), ([1, -1, 2], 1), ([2, 0, 4], -2)])
def test_split(sizes, axis):
    def build(x):
        parts = tf.split(x, sizes, axis=axis)
        return tf.concat([parts[-1], parts[0] * 3.0], axis)  # the other pieces get zeros

    check_grad(build, [[2, 6, 6]])
    check_grad(build, [[2, 6, 6]], static=False)


# ---- tile, pad, reverse, add_n, fill ---------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_tile(seed):
    rng = np.random.default_rng(seed)
    shape = rand_shape(rng, seed + 1, hi=3)
    mult = [int(m) for m in rng.integers(1, 4, size=len(shape))]
    check_grad(lambda x: tf.tile(x, mult), [shape], seed)
    check_grad(lambda x: tf.tile(x, mult), [shape], seed, static=False)
    check_grad(lambda x: tf.tile(x, tf.shape(x) * 0 + mult), [shape], seed, static=False)


def test_tile_zero_multiple_and_unknown_rank():
    x = tf.placeholder(tf.float64, [2, 3])
    (g,) = tf.gradients(tf.tile(x, [0, 2]), x)
    np.testing.assert_array_equal(run_modes(g, {x: rand([2, 3], np.float64)}), np.zeros([2, 3]))
    x = tf.placeholder(tf.float64)
    (g,) = tf.gradients(tf.tile(x, [2, 3]), x)
    np.testing.assert_array_equal(run_modes(g, {x: rand([2, 2], np.float64)}), np.full([2, 2], 6.0))


@pytest.mark.parametrize("mode", ["CONSTANT", "REFLECT", "SYMMETRIC"])
@pytest.mark.parametrize("seed", range(3))
def test_pad(mode, seed):
    rng = np.random.default_rng(seed)
    shape = rand_shape(rng, seed + 1, lo=2)
    limit = 1 if mode == "REFLECT" else 0
    pads = [[int(rng.integers(0, d - limit + 1)) for _ in range(2)] for d in shape]
    check_grad(lambda x: tf.pad(x, pads, mode), [shape], seed)
    # paddings computed from a shape: known only when the plan is compiled
    check_grad(lambda x: tf.pad(x, tf.stack([tf.shape(x)] * 2, axis=1) * 0 + pads, mode),
               [shape], seed, static=False)


def test_pad_constant_values_gradient():
    # dflow differentiates constant_values (TF1 returns None): it fills every padded cell
    x, c = tf.placeholder(tf.float64, [2, 3]), tf.placeholder(tf.float64, [])
    check_grad(lambda x, c: tf.pad(x, [[1, 0], [2, 1]], constant_values=c), [[2, 3], []])
    y = tf.pad(x, [[1, 0], [2, 1]], constant_values=c)
    assert y.op.type == "PadV2"
    gx, gc = tf.gradients(y, [x, c])
    gx, gc = run_modes([gx, gc], {x: rand([2, 3], np.float64), c: 1.5})
    np.testing.assert_array_equal(gx, np.ones([2, 3]))
    assert gc == 3 * 6 - 2 * 3


@pytest.mark.parametrize("axis", [[0], [-1], [0, 2], [-3, 1]])
def test_reverse(axis):
    check_grad(lambda x: tf.reverse(x, axis), [[2, 3, 4]])
    check_grad(lambda x: tf.reverse(x, axis), [[2, 3, 4]], static=False)


def test_add_n():
    check_grad(lambda a, b, c: tf.add_n([a, b * 2.0, c, a]), [[2, 3]] * 3)


def test_fill():
    (gx, gv) = check_grad(lambda x, v: tf.fill([2, 3], v) * x, [[2, 3], []])
    np.testing.assert_allclose(gv, np.sum(rand([2, 3], np.float64) * rand([2, 3], np.float64, 100)))
    v = tf.placeholder(tf.float64, [])
    dims = tf.placeholder_with_default(tf.constant([2, 3]), [2])
    assert tf.gradients(tf.fill(dims, v), [dims, v])[0] is None


def test_creation_ops_are_not_differentiable():
    x = tf.placeholder(tf.float64, [2, 3])
    a = tf.placeholder(tf.float64, [])
    y = tf.zeros_like(x) + tf.ones_like(x) * 2.0
    assert tf.gradients(y, x) == [None]
    assert tf.gradients(tf.range(a, 10.0, 2.0), a) == [None]
    assert tf.gradients(tf.linspace(a, 10.0, 5), a) == [None]
    # the seeds and zeros gradients() builds (OnesLike, ZerosLike) sit on paths to x
    (g,) = tf.gradients(tf.unstack(x)[0] * x[0], x)
    np.testing.assert_allclose(run_modes(g, {x: np.ones([2, 3])}), [[2.0] * 3, [0.0] * 3])


# ---- second derivatives ----------------------------------------------------------------------------


@pytest.mark.parametrize("build,shape", [
    (lambda x: tf.square(tf.pad(x, [[1, 2], [0, 1]])) * rand([5, 3], np.float64, 7), [2, 2]),
    (lambda x: tf.square(tf.pad(x, [[1, 1], [2, 0]], "REFLECT")) * rand([4, 5], np.float64, 7), [2, 3]),
    (lambda x: tf.square(tf.transpose(x, [1, 0])) * rand([3, 4], np.float64, 7), [4, 3]),
    (lambda x: tf.square(tf.tile(x, [2, 1])) * rand([4, 3], np.float64, 7), [2, 3]),
    (lambda x: tf.square(tf.split(x, [1, -1], axis=-1)[1]) * rand([2, 2], np.float64, 7), [2, 3]),
    (lambda x: tf.square(tf.concat([x, tf.reverse(x, [-1])], -1)) * rand([2, 4], np.float64, 7), [2, 2]),
    (lambda x: tf.stack(tf.unstack(tf.square(x), axis=1)[::-1]) * tf.transpose(x), [3, 3]),
])
def test_second_derivatives(build, shape):
    second_order(build, shape)
