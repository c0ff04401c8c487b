"""Gradient rules of reductions, cumsum and contractions against central differences of numpy
(float64), with static, partly known and unknown shapes; TF1's tie and zero rules; second
derivatives; and the dask path (several chunks) against the eager path."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dflow as tf
from tests.conftest import make_session, run_modes

HYP = settings(max_examples=25, deadline=None)


def numgrad(f, xs, w, k, eps=1e-6):
    """d/dxs[k] of sum(w * f(*xs)), by central differences."""
    xs = [np.array(v, dtype=np.float64) for v in xs]
    x = xs[k]
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        orig = x[i]
        x[i] = orig + eps
        fp = np.sum(w * f(*xs))
        x[i] = orig - eps
        fm = np.sum(w * f(*xs))
        x[i] = orig
        out[i] = (fp - fm) / (2 * eps)
    return out


def placeholder_like(v, known):
    """A float64 placeholder for `v`: "static" shape, "dims" (rank only) or "rank" (unknown)."""
    shape = {"static": v.shape, "dims": [None] * v.ndim, "rank": None}[known]
    return tf.placeholder(tf.float64, shape)


def check_grads(build, f, xs, known="static", seed=0, modes=None, rtol=1e-6):
    """tf.gradients of build(*placeholders) (weighted by random grad_ys) equal numgrad of `f`;
    each gradient has its input's static shape. Returns the gradients."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(np.shape(f(*xs)))
    with tf.Graph().as_default() as graph:
        ps = [placeholder_like(v, known) for v in xs]
        y = build(*ps)
        grads = tf.gradients(y, ps, grad_ys=tf.constant(w))
        for g, p in zip(grads, ps):
            assert g is not None
            assert g.shape.is_compatible_with(p.shape) and g.shape.ndims == p.shape.ndims, (g.shape, p.shape)
        feed = dict(zip(ps, xs))
        if modes:
            got = run_modes(grads, feed, modes=modes, graph=graph)
        else:
            with make_session("eager", graph=graph) as s:
                got = s.run(grads, feed)
    for k, g in enumerate(got):
        assert g.shape == np.shape(xs[k])
        np.testing.assert_allclose(g, numgrad(f, xs, w, k), rtol=rtol, atol=1e-6)
    return got


def np_logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


REDUCTIONS = {
    "reduce_sum": np.sum, "reduce_mean": np.mean, "reduce_max": np.max, "reduce_min": np.min,
    "reduce_prod": np.prod, "reduce_logsumexp": np_logsumexp,
}


def values_for(name, shape, rng):
    n = int(np.prod(shape))
    if name in ("reduce_max", "reduce_min"):  # distinct values: no ties within a difference step
        return (rng.permutation(n) * 0.1 + rng.uniform(0, 0.01, n)).reshape(shape)
    if name == "reduce_prod":  # away from 0: each factor matters
        return (rng.uniform(0.5, 1.5, n) * rng.choice([-1, 1], n)).reshape(shape)
    return rng.standard_normal(shape)


@st.composite
def reduction_cases(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    r = len(shape)
    axis = draw(st.one_of(
        st.none(), st.integers(-r, r - 1),
        st.lists(st.integers(0, r - 1), unique=True, max_size=r).map(
            lambda ax: [a - r if a % 2 else a for a in ax])))
    known = draw(st.sampled_from(["static", "dims", "rank"]))
    return shape, axis, draw(st.booleans()), known, draw(st.integers(0, 2**16))


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@HYP
@given(case=reduction_cases())
def test_reduction_grad(name, case):
    shape, axis, keepdims, known, seed = case
    x = values_for(name, shape, np.random.default_rng(seed))
    ax = None if axis is None else tuple(np.atleast_1d(axis).tolist())
    fn = getattr(tf, name)
    check_grads(lambda p: fn(p, axis=axis, keepdims=keepdims),
                lambda v: REDUCTIONS[name](v, axis=ax, keepdims=keepdims), [x], known=known, seed=seed)


def test_reduction_axis_known_at_run_time():
    # the axis is computed from the unknown rank: only the plan knows it
    x = np.random.default_rng(1).standard_normal((2, 3, 4))
    for fn, ref in [(tf.reduce_sum, np.sum), (tf.reduce_max, np.max), (tf.reduce_mean, np.mean)]:
        check_grads(lambda p, fn=fn: fn(p, axis=tf.rank(p) - 1),
                    lambda v, ref=ref: ref(v, axis=-1), [x], known="rank")


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum_grad(exclusive, reverse, axis):
    def ref(v):
        if reverse:
            v = np.flip(v, axis)
        out = np.cumsum(v, axis=axis)
        if exclusive:
            out = out - v
        return np.flip(out, axis) if reverse else out

    x = np.random.default_rng(2).standard_normal((3, 4))
    check_grads(lambda p: tf.cumsum(p, axis=axis, exclusive=exclusive, reverse=reverse), ref, [x],
                known="dims")


def grad_values(y_fn, x):
    with tf.Graph().as_default():
        p = tf.constant(x)
        (g,) = tf.gradients(y_fn(p), p)
        with tf.Session() as s:
            return s.run(g)


def test_max_min_ties_share_the_gradient():
    # values from TF1 (tf.compat.v1, graph mode)
    x = np.array([[1.0, 3.0, 3.0, 2.0], [0.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(grad_values(lambda p: tf.reduce_max(p, axis=1), x),
                                  [[0, 0.5, 0.5, 0], [0.25, 0.25, 0.25, 0.25]])
    np.testing.assert_array_equal(grad_values(lambda p: tf.reduce_min(p), x),
                                  [[0, 0, 0, 0], [0.25, 0.25, 0.25, 0.25]])
    np.testing.assert_array_equal(grad_values(lambda p: tf.reduce_max(p, axis=0, keepdims=True), x),
                                  [[1, 1, 1, 1], [0, 0, 0, 0]])


def test_prod_grad_with_zeros_as_tf1():
    # one zero: the product of the others at the zero; two zeros: all 0 (TF1's values)
    x = np.array([[2.0, 0.0, 3.0, 4.0], [0.0, 0.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0]])
    np.testing.assert_array_equal(grad_values(lambda p: tf.reduce_prod(p, axis=1), x),
                                  [[0, 24, 0, 0], [0, 0, 0, 0], [24, 12, 8, 6]])
    x = np.array([[2.0, 0.0], [3.0, -1.0]])
    np.testing.assert_array_equal(grad_values(lambda p: tf.reduce_prod(p), x), [[0, -6], [0, 0]])


def test_logsumexp_grad_is_stable_and_matches_tf1_at_inf():
    x = np.array([[1000.0, 1000.0, -1000.0], [-5.0, 0.0, 5.0]])
    g = grad_values(lambda p: tf.reduce_logsumexp(p, axis=1), x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(g, e / e.sum(axis=1, keepdims=True), rtol=1e-12)
    with np.errstate(invalid="ignore"):  # TF1 gives nan where the row holds +-inf only
        g = grad_values(lambda p: tf.reduce_logsumexp(p, axis=1), np.array([[-np.inf, -np.inf], [1.0, 2.0]]))
    assert np.isnan(g[0]).all() and np.isfinite(g[1]).all()


def test_not_differentiable():
    with tf.Graph().as_default():
        x = tf.constant(np.arange(6.0).reshape(2, 3))
        y = tf.cast(tf.argmax(x, axis=1), tf.float64) + tf.cast(tf.argmin(x, axis=0), tf.float64)[0]
        y = y + tf.cast(tf.reduce_any(x > 1.0), tf.float64) + tf.cast(tf.reduce_all(x > 1.0), tf.float64)
        assert tf.gradients(y, x) == [None]
        assert tf.gradients(tf.cast(tf.count_nonzero(x), tf.float64), x) == [None]


# ---- matmul ------------------------------------------------------------------------------------


def np_op(v, t, adj):
    if t or adj:
        v = np.swapaxes(v, -1, -2)
    return np.conj(v) if adj else v


@pytest.mark.parametrize("flags_a", ["", "t", "adj"])
@pytest.mark.parametrize("flags_b", ["", "t", "adj"])
def test_matmul_grad(flags_a, flags_b):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 3) if flags_a else (3, 4))
    b = rng.standard_normal((5, 4) if flags_b else (4, 5))
    kw = {"transpose_a": flags_a == "t", "adjoint_a": flags_a == "adj",
          "transpose_b": flags_b == "t", "adjoint_b": flags_b == "adj"}
    check_grads(lambda p, q: tf.matmul(p, q, **kw),
                lambda u, v: np_op(u, bool(flags_a), False) @ np_op(v, bool(flags_b), False), [a, b],
                known="dims")


@pytest.mark.parametrize("sa, sb, flags", [
    ((2, 1, 3, 4), (5, 4, 2), {}),
    ((3, 4), (2, 4, 5), {}),
    ((2, 3, 4), (5, 3), {"transpose_a": True, "transpose_b": True}),
    ((1, 4, 3), (2, 4, 5), {"adjoint_a": True}),
    ((2, 2, 3, 4), (2, 1, 5, 4), {"transpose_b": True}),
])
@pytest.mark.parametrize("known", ["static", "dims", "rank"])
def test_batch_matmul_grad_with_broadcast(sa, sb, flags, known):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    ta = flags.get("transpose_a") or flags.get("adjoint_a")
    tb = flags.get("transpose_b") or flags.get("adjoint_b")
    check_grads(lambda p, q: tf.matmul(p, q, **flags),
                lambda u, v: np.matmul(np_op(u, ta, False), np_op(v, tb, False)), [a, b], known=known)


@pytest.mark.parametrize("adjoint", [False, True])
def test_complex_matmul_grad(adjoint):
    # TF1's convention (dL/dx + i dL/dy): C = X @ Y gives dX = G @ Y^H, dY = X^H @ G; TF 2.21's
    # tf.gradients gave these same values (checked by hand with /tmp/tfenv)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    b = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    w = rng.standard_normal((2, 4)) + 1j * rng.standard_normal((2, 4))
    with tf.Graph().as_default():
        pa, pb = tf.constant(a), tf.constant(b)
        y = tf.matmul(pa, pb, transpose_a=not adjoint, adjoint_a=adjoint)
        ga, gb = tf.gradients(y, [pa, pb], grad_ys=tf.constant(w))
        with tf.Session() as s:
            ga, gb = s.run([ga, gb])
    op_a = np.conj(a.T) if adjoint else a.T
    np.testing.assert_allclose(gb, np.conj(op_a.T) @ w, rtol=1e-12)
    g_op_a = w @ np.conj(b.T)
    np.testing.assert_allclose(ga, np.conj(g_op_a.T) if adjoint else g_op_a.T, rtol=1e-12)


# ---- tensordot and einsum ------------------------------------------------------------------------


@pytest.mark.parametrize("sa, sb, axes", [
    ((2, 3, 4), (4, 5, 2), ([2, 0], [0, 2])),
    ((2, 3, 4), (3, 4, 5), 2),
    ((3, 4), (4, 3), ([0, 1], [1, 0])),
    ((2, 3), (4,), 0),
    ((2, 3, 4), (4, 3), ([-1, -2], [0, 1])),
])
def test_tensordot_grad(sa, sb, axes):
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    check_grads(lambda p, q: tf.tensordot(p, q, axes), lambda u, v: np.tensordot(u, v, axes), [a, b],
                known="dims")


EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ijk->ki", [(2, 3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bi,bi->b", [(3, 4), (3, 4)]),
    ("ij,kl->jk", [(2, 3), (4, 5)]),
    ("ijk,ikl,ilm->jm", [(2, 3, 4), (2, 4, 3), (2, 3, 2)]),
    ("ii->i", [(3, 3)]),
    ("ii->", [(3, 3)]),
    ("iij,jk->ik", [(3, 3, 2), (2, 4)]),
    ("...ij,jk->...ik", [(2, 1, 3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("i...,i...->...", [(3, 2, 1), (3, 4)]),
    ("...,...->...", [(2, 1), (3,)]),
    ("a...b,b->...", [(2, 3, 4), (4,)]),
]


@pytest.mark.parametrize("eq, shapes", EINSUMS)
@pytest.mark.parametrize("known", ["static", "dims"])
def test_einsum_grad(eq, shapes, known):
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal(s) for s in shapes]
    check_grads(lambda *ps: tf.einsum(eq, *ps), lambda *vs: np.einsum(eq, *vs), xs, known=known)


@pytest.mark.parametrize("eq, shapes", [("...ij,jk->...ik", [(2, 3, 4), (4, 5)]),
                                        ("ij,...j->...i", [(3, 4), (2, 5, 4)]),
                                        ("j...k,kl->j...l", [(2, 3, 4, 5), (5, 2)]),
                                        ("j...jk,kl->j...l", [(2, 3, 2, 5), (5, 2)])])
def test_einsum_grad_ellipsis_of_unknown_rank(eq, shapes):
    rng = np.random.default_rng(8)
    xs = [rng.standard_normal(s) for s in shapes]
    rng_known = [placeholder_like(v, "rank" if "..." in t else "static")
                 for v, t in zip(xs, eq.split("->")[0].split(","))]
    y = tf.einsum(eq, *rng_known)
    w = rng.standard_normal(np.einsum(eq, *xs).shape)
    grads = tf.gradients(y, rng_known, grad_ys=tf.constant(w))
    with tf.Session() as s:
        got = s.run(grads, dict(zip(rng_known, xs)))
    for k, g in enumerate(got):
        np.testing.assert_allclose(g, numgrad(lambda *vs: np.einsum(eq, *vs), xs, w, k), rtol=1e-6, atol=1e-6)


def test_einsum_grad_unsupported_cases_raise():
    a, b = tf.placeholder(tf.float64, None), tf.placeholder(tf.float64, None)
    with pytest.raises(tf.errors.UnimplementedError, match="unknown rank"):
        tf.gradients(tf.einsum("...ij,...jk->...ik", a, b), [a, b])
    with pytest.raises(tf.errors.UnimplementedError, match="unknown rank"):
        tf.gradients(tf.einsum("...i->i", a), a)


# ---- second derivatives ----------------------------------------------------------------------------


def hessian_vector(y_fn, x, v):
    """(H v, gradient) of scalar y_fn at x, by differentiating <grad, v>."""
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float64, [None] * x.ndim)
        (g,) = tf.gradients(y_fn(p), p)
        (hv,) = tf.gradients(tf.reduce_sum(g * tf.constant(v)), p)
        with tf.Session() as s:
            return s.run([hv, g], {p: x})


def test_second_derivatives():
    rng = np.random.default_rng(9)
    x, v = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    hv, _ = hessian_vector(lambda p: tf.reduce_sum(p ** 3), x, v)
    np.testing.assert_allclose(hv, 6 * x * v, rtol=1e-12)

    hv, g = hessian_vector(lambda p: tf.reduce_sum(tf.reduce_logsumexp(p, axis=1)), x, v)
    s = np.exp(x - np_logsumexp(x, axis=1, keepdims=True))
    np.testing.assert_allclose(g, s, rtol=1e-12)
    np.testing.assert_allclose(hv, s * v - s * np.sum(s * v, axis=1, keepdims=True), rtol=1e-10, atol=1e-12)

    a = rng.standard_normal((4, 4))
    quad = [lambda p: tf.reduce_sum(tf.matmul(p, tf.constant(a)) * p),
            lambda p: tf.einsum("ij,jk,ik->", p, tf.constant(a), p),
            lambda p: tf.reduce_sum(tf.tensordot(p, tf.tensordot(p, tf.constant(a), 1), [[0], [0]]))]
    for f in quad[:2]:  # sum_ijk x_ij a_jk x_ik: H v = v (a + a^T)
        hv, g = hessian_vector(f, x, v)
        np.testing.assert_allclose(g, x @ (a + a.T), rtol=1e-10)
        np.testing.assert_allclose(hv, v @ (a + a.T), rtol=1e-10)
    hv, g = hessian_vector(quad[2], x, v)  # sum_jk (x^T x a)_jk: numerically checked below
    eps = 1e-6
    gp = hessian_vector(quad[2], x + eps * v, v)[1]
    gm = hessian_vector(quad[2], x - eps * v, v)[1]
    np.testing.assert_allclose(hv, (gp - gm) / (2 * eps), rtol=1e-6, atol=1e-6)

    for f in [lambda p: tf.reduce_sum(tf.reduce_prod(p, axis=0) ** 2),
              lambda p: tf.reduce_sum(tf.reduce_max(p, axis=1) ** 2) + tf.reduce_sum(tf.reduce_mean(p, axis=0) ** 3),
              lambda p: tf.reduce_sum(tf.cumsum(p, axis=1, reverse=True) ** 2)]:
        hv = hessian_vector(f, x, v)[0]
        gp, gm = hessian_vector(f, x + eps * v, v)[1], hessian_vector(f, x - eps * v, v)[1]
        np.testing.assert_allclose(hv, (gp - gm) / (2 * eps), rtol=1e-6, atol=1e-6)


# ---- the dask path -----------------------------------------------------------------------------------


@pytest.mark.parametrize("build, ref, shapes", [
    (lambda p: tf.reduce_sum(p, axis=0), lambda v: np.sum(v, axis=0), [(6, 5)]),
    (lambda p: tf.reduce_mean(p, axis=[0, 1], keepdims=True), lambda v: np.mean(v, axis=(0, 1), keepdims=True),
     [(6, 5)]),
    (lambda p: tf.reduce_max(p, axis=1), lambda v: np.max(v, axis=1), [(6, 5)]),
    (lambda p: tf.reduce_prod(p, axis=1), lambda v: np.prod(v, axis=1), [(6, 5)]),
    (lambda p: tf.reduce_logsumexp(p, axis=0), lambda v: np_logsumexp(v, axis=0), [(6, 5)]),
    (lambda p: tf.cumsum(p, axis=0, exclusive=True), lambda v: np.cumsum(v, axis=0) - v, [(6, 5)]),
    (lambda p, q: tf.matmul(p, q), np.matmul, [(3, 5, 4), (4, 6)]),
    (lambda p, q: tf.tensordot(p, q, [[0], [1]]), lambda u, v: np.tensordot(u, v, [[0], [1]]), [(5, 3), (4, 5)]),
    (lambda p, q: tf.einsum("...ij,jk->...k", p, q), lambda u, v: np.einsum("...ij,jk->...k", u, v),
     [(2, 3, 5), (5, 4)]),
])
def test_gradients_on_the_dask_path_equal_eager(build, ref, shapes):
    rng = np.random.default_rng(10)
    xs = [rng.uniform(0.5, 1.5, s) for s in shapes]
    check_grads(build, ref, xs, modes=["eager", "sync", "threads"])


def test_einsum_grad_of_a_dim_broadcast_at_run_time():
    # the '...' dim of `a` is unknown when building and 1 when run: its gradient is summed over it
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal((1, 3, 4)), rng.standard_normal((5, 4, 2))
    eq = "...ij,...jk->...ik"
    check_grads(lambda p, q: tf.einsum(eq, p, q), lambda u, v: np.einsum(eq, u, v), [a, b], known="dims",
                modes=["eager", "threads"])


def test_tensordot_grad_of_unknown_rank_raises():
    a, b = tf.placeholder(tf.float64, None), tf.placeholder(tf.float64, [3, 4])
    with pytest.raises(ValueError, match="needs the ranks"):
        tf.gradients(tf.tensordot(a, b, 1), a)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float16, tf.complex64])
def test_gradients_keep_the_input_dtype(dtype):
    x = tf.constant(np.arange(1.0, 7.0).reshape(2, 3), dtype=dtype)
    ys = [tf.reduce_sum(x, 0), tf.reduce_mean(x, 1), tf.reduce_prod(x), tf.cumsum(x, 1),
          tf.matmul(x, x, transpose_b=True), tf.tensordot(x, x, 2), tf.einsum("ij,ij->i", x, x)]
    if not dtype.is_complex:
        ys += [tf.reduce_max(x, 1), tf.reduce_min(x), tf.reduce_logsumexp(x, 1)]
    grads = [tf.gradients(y, x)[0] for y in ys]
    assert all(g.dtype == dtype and g.shape.as_list() == [2, 3] for g in grads)
    with tf.Session() as s:
        got = s.run(grads)
    np.testing.assert_allclose(got[0], np.ones((2, 3)))
    np.testing.assert_allclose(got[2], 720.0 / np.arange(1.0, 7.0).reshape(2, 3), rtol=1e-2)
