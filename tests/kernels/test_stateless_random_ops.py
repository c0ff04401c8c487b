"""Stateless random ops: values a function of (seed, position) alone, on every scheduler and in
every chunking; distributions checked by their moments (the generator is not TF's Philox, so TF's
exact numbers are not expected); TF1's errors."""

import numpy as np
import pytest

import dflow as tf
from dflow.errors import InvalidArgumentError
from tests.conftest import LOCAL_MODES, make_session, run_modes


def _all(shape, seed):
    return [tf.random.stateless_uniform(shape, seed=seed), tf.random.stateless_normal(shape, seed=seed),
            tf.random.stateless_truncated_normal(shape, seed=seed, mean=1., stddev=2.),
            tf.random.stateless_uniform(shape, seed=seed, minval=-3, maxval=10, dtype=tf.int64),
            tf.random.stateless_binomial(shape, seed=seed, counts=[[5.], [40.], [1000.]][:shape[0]], probs=0.7),
            tf.random.stateless_gamma(shape, seed=seed, alpha=0.5, beta=2.),
            tf.random.stateless_poisson(shape, seed=seed, lam=[3., 30., 0.5, 12., 0.][:shape[1]])]


def test_same_seed_same_values_every_run_mode_and_chunking():
    xs = _all([3, 5], [4, 7])
    seed = tf.placeholder(tf.int32, [2])
    fed = _all([3, 5], seed)
    first = run_modes(xs, chunks=2)  # eager, sync, threads agree (asserted by run_modes)
    np.testing.assert_array_equal(first[0], run_modes(xs, chunks=1, modes=["sync"])[0])
    for mode in LOCAL_MODES:
        with make_session(mode, chunks=4) as s:
            for a, b, c in zip(first, s.run(xs), s.run(fed, {seed: [4, 7]})):
                np.testing.assert_array_equal(a, b)
                np.testing.assert_array_equal(a, c)
    with tf.Session() as s:
        other = s.run(fed, {seed: [4, 8]})
    assert not np.array_equal(first[0], other[0]) and not np.array_equal(first[1], other[1])
    # a sub-shape's values are a prefix of nothing in particular, but a rebuilt op is the same
    again = tf.random.stateless_normal([3, 5], seed=[4, 7])
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(again), first[1])


def test_distributed_scheduler_agrees(sess_factory):
    xs = _all([3, 5], [1, 2])
    with tf.Session() as s:
        want = s.run(xs)
    got = sess_factory("distributed", chunks=2).run(xs)
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)


def test_moments():
    n = 200_000
    seed = [11, 3]
    u, z, tn, i, b, g, p = (
        tf.random.stateless_uniform([n], seed=seed, minval=2., maxval=5., dtype=tf.float64),
        tf.random.stateless_normal([n], seed=seed, mean=1., stddev=3.),
        tf.random.stateless_truncated_normal([n], seed=seed),
        tf.random.stateless_uniform([n], seed=seed, minval=-3, maxval=4, dtype=tf.int32),
        tf.random.stateless_binomial([n], seed=seed, counts=50., probs=0.3),
        tf.random.stateless_gamma([n], seed=seed, alpha=3., beta=2., dtype=tf.float64),
        tf.random.stateless_poisson([n], seed=seed, lam=7.))
    cat = tf.random.stateless_categorical(tf.math.log([[0.2, 0.5, 0.3]]), n, seed=seed)
    with tf.Session() as s:
        u, z, tn, i, b, g, p, cat = s.run([u, z, tn, i, b, g, p, cat])
    tol = 4 / np.sqrt(n)  # ~4 standard errors of a unit-variance mean
    assert u.min() >= 2 and u.max() < 5 and abs(u.mean() - 3.5) < 1.5 * tol
    assert abs(z.mean() - 1) < 3 * tol and abs(z.std() - 3) < 3 * tol
    assert np.abs(tn).max() <= 2 and abs(tn.std() - 0.8796) < tol  # sd of N(0,1) truncated at 2
    assert i.dtype == np.int32 and set(np.unique(i)) == set(range(-3, 4))
    assert b.dtype == np.int32 and abs(b.mean() - 15) < 4 * tol and abs(b.var() - 10.5) < 0.2
    assert abs(g.mean() - 1.5) < tol and abs(g.var() - 0.75) < 0.02  # Gamma(3, rate 2)
    assert p.dtype == np.int32 and abs(p.mean() - 7) < 3 * tol and abs(p.var() - 7) < 0.15
    np.testing.assert_allclose(np.bincount(cat[0], minlength=3) / n, [0.2, 0.5, 0.3], atol=0.005)


def test_names_and_ops():
    assert tf.random.stateless_uniform is tf.contrib.stateless.stateless_random_uniform
    assert tf.contrib.stateless.stateless_multinomial is tf.random.stateless_multinomial
    u = tf.random.stateless_uniform([2], seed=[1, 2])
    assert u.name == "stateless_random_uniform:0" and u.op.inputs[0].op.inputs[0].op.type == "StatelessRandomUniform"
    assert tf.random.stateless_poisson([2], seed=[1, 2], lam=1.).op.type == "StatelessRandomPoisson"
    assert tf.random.stateless_binomial([2], seed=[1, 2], counts=1., probs=.5).op.type == "StatelessRandomBinomial"
    assert tf.random.stateless_gamma([2], seed=[1, 2], alpha=1.).name == "stateless_random_gamma/Maximum:0"


def test_errors_as_tf():
    with pytest.raises(ValueError, match=r"seed must have shape \[2\]"):
        tf.random.stateless_uniform([2], seed=[1, 2, 3])
    with pytest.raises(TypeError, match="'seed' has DataType float32 not in list of allowed values: int32, int64"):
        tf.random.stateless_uniform([2], seed=[1., 2.])
    with pytest.raises(ValueError, match="`minval` and `maxval` must be both None or not None"):
        tf.random.stateless_uniform([2], seed=[1, 2], dtype=tf.int32, maxval=None, minval=0)
    with pytest.raises(TypeError):
        tf.random.stateless_normal([2], seed=[1, 2], dtype=tf.int32)
    with pytest.raises(TypeError, match="DataType string"):
        tf.random.stateless_poisson([2], seed=[1, 2], lam=1., dtype=tf.string)
    with pytest.raises(ValueError, match="broadcast"):
        tf.random.stateless_gamma([2, 3], seed=[1, 2], alpha=[1., 2.])
    seed = tf.placeholder(tf.int32, [None])
    x = tf.random.stateless_uniform([2], seed=seed)
    for mode in LOCAL_MODES:
        with make_session(mode) as s:
            with pytest.raises(InvalidArgumentError, match=r"seed must have shape \[2\], not \[3\]"):
                s.run(x, {seed: [1, 2, 3]})
