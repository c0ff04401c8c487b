"""random_gamma / random_poisson: shapes and names as TF1, seeds and fresh draws as random_ops,
moments against the analytic ones (the generator is not TF's, so TF's numbers are not expected),
and random_gamma's reparameterized gradient."""

import numpy as np
import pytest

import dflow as tf
from dflow.kernels.random_gamma_poisson_ops import _lower_gamma_inc, _random_gamma_grad
from tests.conftest import LOCAL_MODES, make_session, run_modes


def test_shapes_names_and_moments_on_the_schedulers():
    g = tf.random_gamma([40000], alpha=[1.5, 4.], beta=[[1.], [2.]], seed=3)
    p = tf.random_poisson([1., 20.], [40000], seed=3)
    pi = tf.random.poisson([0.5], [10], dtype=tf.int64, seed=1)
    # TF figures: names and static shapes from TF 2.21's compat.v1
    assert g.name == "random_gamma/Maximum:0" and g.shape.as_list() == [40000, 2, 2]
    assert p.name == "random_poisson/RandomPoissonV2:0" and p.shape.as_list() == [40000, 2]
    assert p.dtype == tf.float32 and pi.dtype == tf.int64 and tf.random.gamma is tf.random_gamma
    gv, pv, _ = run_modes([g, p, pi], chunks=7000)
    np.testing.assert_allclose(gv.mean(axis=0), [[1.5, 4.], [0.75, 2.]], rtol=0.03)
    np.testing.assert_allclose(gv.var(axis=0), [[1.5, 4.], [0.375, 1.]], rtol=0.06)
    np.testing.assert_allclose(pv.mean(axis=0), [1., 20.], rtol=0.02)
    np.testing.assert_allclose(pv.var(axis=0), [1., 20.], rtol=0.05)
    assert gv.min() > 0


def test_seeds_and_fresh_draws():
    tf.set_random_seed(5)
    g = tf.random_gamma([6], alpha=2., seed=1)
    p = tf.random_poisson(3., [6])
    with make_session("eager") as s:
        a = s.run([g, p])
        b = s.run([g, p])
    assert not np.array_equal(a[0], b[0])  # a new draw each run
    for mode in LOCAL_MODES[1:]:
        with make_session(mode, chunks=2) as s:  # the same sequence in every session and mode
            for want in (a, b):
                got = s.run([g, p])
                np.testing.assert_array_equal(got[0], want[0])
                np.testing.assert_array_equal(got[1], want[1])


def test_errors():
    with pytest.raises(TypeError):
        tf.random_gamma([5], alpha=[1., 2.], dtype=tf.int32)
    with pytest.raises(TypeError, match="DataType string"):
        tf.random_poisson([1., 2.], [5], dtype=tf.string)
    with pytest.raises(LookupError):
        lam = tf.constant([1., 2.])
        tf.gradients(tf.random_poisson(lam, [3]), lam)


def _quantile(a, u):
    lo, hi = np.zeros_like(u), np.full_like(u, 200.)
    for _ in range(200):
        mid = (lo + hi) / 2
        below = _lower_gamma_inc(a, mid) < u
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return (lo + hi) / 2


def test_gamma_grad_is_the_quantile_derivative():
    a = np.array([0.3, 1., 2.5, 9.])
    x = np.array([0.05, 0.7, 3., 8.])
    np.testing.assert_allclose(_lower_gamma_inc(1., x), 1 - np.exp(-x), rtol=1e-10)
    u = _lower_gamma_inc(a, x)
    h = 1e-4
    fd = (_quantile(a + h, u) - _quantile(a - h, u)) / (2 * h)
    np.testing.assert_allclose(_random_gamma_grad(a, x), fd, rtol=1e-4)


def test_gamma_gradient_through_the_graph():
    # E[x] = alpha / beta: the mean of d x / d alpha is 1 / beta; d/d beta of the mean is -alpha / beta**2
    alpha = tf.constant([1.5, 3.], tf.float64)
    beta = tf.constant(2., tf.float64)
    g = tf.random_gamma([50000], alpha, beta=beta, dtype=tf.float64, seed=2)
    da, db = tf.gradients(tf.reduce_mean(g, axis=0), [alpha, beta])
    with tf.Session() as s:
        da, db = s.run([da, db])
    np.testing.assert_allclose(da, [0.5, 0.5], rtol=0.02)
    np.testing.assert_allclose(db, -(1.5 + 3.) / 4, rtol=0.02)
