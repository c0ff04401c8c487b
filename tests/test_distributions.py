"""tf.distributions: every family's densities, distribution functions, moments, entropy, KL and
shapes against TensorFlow's figures (tests/fixtures/tf_distributions/figures.json, written by
tools/make_tf_distributions_fixture.py with TF 2.21's compat.v1), in every local mode (Dask with
small chunks) and eagerly; sampling statistics and shapes; gradients through reparameterized
samples; the KL registry and TF's errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import dflow as tf
from dflow import errors
from dflow.eager import eager_mode
from tests.conftest import run_modes

tfd = tf.distributions
FIGURES = json.loads((Path(__file__).parent / "fixtures" / "tf_distributions" / "figures.json").read_text())
METHODS = ["log_prob", "prob", "cdf", "log_cdf", "survival_function", "log_survival_function"]
STATS = ["entropy", "mean", "stddev", "variance", "mode", "covariance"]


def _array(figure):
    values, shape = figure
    return np.array([np.nan if v is None else float(v) for v in values]).reshape(shape)


def _build(case):
    fig = FIGURES[case]
    return getattr(tfd, fig["class"])(**fig["kwargs"]), fig


def _fetches(case):
    """{name: tensor} of every figure TF computed for `case`, and {name: expected}; the names TF
    does not implement must raise NotImplementedError here too."""
    dist, fig = _build(case)
    x = np.asarray(fig["x"], dist.dtype.np_dtype)
    fetches, want = {}, {}
    for name in METHODS + STATS:
        expected = fig[name]
        call = (lambda n=name: getattr(dist, n)(x)) if name in METHODS else (lambda n=name: getattr(dist, n)())
        if expected == "NotImplementedError":
            with pytest.raises(NotImplementedError, match=f"is not implemented: {fig['class']}"):
                call()
            continue
        if isinstance(expected, str):  # a TF bug (Dirichlet.mode): checked against numpy below
            continue
        fetches[name], want[name] = call(), _array(expected)
    if "kl" in fig:
        other = getattr(tfd, fig["class"])(**fig["kl_other"])
        fetches["kl"], want["kl"] = tfd.kl_divergence(dist, other), _array(fig["kl"])
    return dist, fig, fetches, want


@pytest.mark.parametrize("case", sorted(FIGURES))
def test_every_figure_matches_tensorflow_in_every_mode(case):
    dist, fig, fetches, want = _fetches(case)
    assert dist.batch_shape.as_list() == fig["batch_shape"]
    assert dist.event_shape.as_list() == fig["event_shape"]
    assert str(dist.reparameterization_type) == fig["reparameterization_type"]
    got = run_modes(fetches)
    for name in fetches:
        np.testing.assert_allclose(np.asarray(got[name], np.float64), want[name], rtol=2e-5, atol=1e-6,
                                   equal_nan=True, err_msg=f"{case}.{name}")
    shapes = run_modes([dist.batch_shape_tensor(), dist.event_shape_tensor()])
    assert [list(s) for s in shapes] == [fig["batch_shape"], fig["event_shape"]]


@pytest.mark.parametrize("case", ["normal", "gamma", "categorical", "dirichlet", "student_t"])
def test_eagerly_the_same_figures(case):
    with eager_mode():
        dist, fig, fetches, want = _fetches(case)
        for name, t in fetches.items():
            np.testing.assert_allclose(np.asarray(t.numpy(), np.float64), want[name], rtol=2e-5, atol=1e-6,
                                       equal_nan=True, err_msg=f"{case}.{name}")


def test_dirichlet_mode_where_tensorflow_1_fails():
    # TF's Dirichlet.mode errs on a batch (its where mixes ranks); the formula: (a - 1) / (a0 - k)
    # where every a > 1, NaN elsewhere
    a = np.array([[2.0, 3.0, 4.0], [0.5, 2.0, 2.0]], np.float32)
    got = run_modes(tfd.Dirichlet(a).mode())
    np.testing.assert_allclose(got[0], (a[0] - 1) / (a[0].sum() - 3), rtol=1e-6)
    assert np.isnan(got[1]).all()


def test_normal_log_cdf_stays_finite_far_in_the_tail():
    z = np.array([-40.0, -12.0, -3.0, 0.0, 6.0], np.float32)
    got = run_modes(tfd.Normal(0.0, 1.0).log_cdf(z))
    # log Phi(z) ~ -z^2/2 - log(-z) - log(2 pi)/2 in the far tail (the asymptotic series)
    np.testing.assert_allclose(got[0], -800.0 - np.log(40.0) - 0.5 * np.log(2 * np.pi), rtol=1e-5)
    assert np.isfinite(got).all() and got[3] == pytest.approx(np.log(0.5))
    np.testing.assert_allclose(got[4], -9.865876e-10, rtol=1e-3)  # -Phi(-6)


@pytest.mark.parametrize("make, mean, var", [
    (lambda: tfd.Normal([0.0, 3.0], [1.0, 0.5]), [0.0, 3.0], [1.0, 0.25]),
    (lambda: tfd.Laplace(1.0, 2.0), 1.0, 8.0),
    (lambda: tfd.Uniform(-1.0, 3.0), 1.0, 16.0 / 12.0),
    (lambda: tfd.Gamma(3.0, 2.0), 1.5, 0.75),
    (lambda: tfd.Exponential(0.5), 2.0, 4.0),
    (lambda: tfd.Beta(2.0, 3.0), 0.4, 0.04),
    (lambda: tfd.StudentT(5.0, 1.0, 2.0), 1.0, 4.0 * 5.0 / 3.0),
    (lambda: tfd.Bernoulli(probs=0.3), 0.3, 0.21),
])
def test_samples_have_the_distributions_moments_and_shape(make, mean, var):
    tf.set_random_seed(7)
    dist = make()
    samples = dist.sample([100, 400], seed=3)
    assert samples.shape.as_list() == [100, 400] + dist.batch_shape.as_list()
    s = np.asarray(run_modes(samples, modes=["eager"]), np.float64).reshape([40000] + dist.batch_shape.as_list())
    np.testing.assert_allclose(s.mean(0), mean, atol=0.06 * max(1.0, np.sqrt(np.max(var))))
    np.testing.assert_allclose(s.var(0), var, rtol=0.12)


def test_discrete_and_simplex_samples():
    tf.set_random_seed(1)
    cat = tfd.Categorical(logits=np.log([[0.2, 0.3, 0.5]]).astype(np.float32))
    mult = tfd.Multinomial(total_count=[4.0, 7.0], probs=[0.2, 0.3, 0.5])
    dirichlet = tfd.Dirichlet([[1.0, 2.0, 3.0]])
    dm = tfd.DirichletMultinomial(5.0, [1.0, 1.0, 2.0])
    c, m, d, dms = run_modes([cat.sample(6000), mult.sample(2000), dirichlet.sample(3000), dm.sample(3000)],
                             modes=["eager"])
    assert c.shape == (6000, 1) and c.dtype == np.int32
    np.testing.assert_allclose(np.bincount(c[:, 0], minlength=3) / 6000, [0.2, 0.3, 0.5], atol=0.03)
    assert m.shape == (2000, 2, 3)
    np.testing.assert_array_equal(m.sum(-1), np.broadcast_to([4.0, 7.0], (2000, 2)))
    np.testing.assert_allclose(m.mean(0), [[0.8, 1.2, 2.0], [1.4, 2.1, 3.5]], atol=0.15)
    np.testing.assert_allclose(d.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(d.mean(0), [[1 / 6, 2 / 6, 3 / 6]], atol=0.02)
    assert dms.shape == (3000, 3) and (dms.sum(-1) == 5.0).all()
    np.testing.assert_allclose(dms.mean(0), [1.25, 1.25, 2.5], atol=0.15)


def test_gradients_flow_through_reparameterized_samples():
    loc, scale = tf.Variable(1.0), tf.Variable(2.0)
    eps = tfd.Normal(loc, scale).sample(1000, seed=5)
    g_loc, g_scale = tf.gradients(tf.reduce_mean(eps), [loc, scale])
    alpha = tf.Variable([2.0, 5.0])
    g_alpha = tf.gradients(tf.reduce_mean(tfd.Gamma(alpha, 1.0).sample(4000, seed=2)), alpha)[0]
    low, high = tf.Variable(0.0), tf.Variable(4.0)
    g_low, g_high = tf.gradients(tf.reduce_mean(tfd.Uniform(low, high).sample(4000, seed=1)), [low, high])
    # a Bernoulli's samples are not differentiable: no gradient to its probabilities
    p = tf.Variable(0.5)
    assert tf.gradients(tf.reduce_sum(tf.cast(tfd.Bernoulli(probs=p).sample(10), tf.float32)), p) == [None]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        e, gl, gs, ga, glo, ghi = sess.run([eps, g_loc, g_scale, g_alpha, g_low, g_high])
    assert gl == pytest.approx(1.0)
    assert gs == pytest.approx(np.mean((e - 1.0) / 2.0), abs=1e-5)  # d(loc + scale * eps)/d scale = eps
    np.testing.assert_allclose(ga, [0.5, 0.5], atol=0.05)  # d E[Gamma(a)] / da = 1 (mean of 2: 1/2 each)
    assert glo + ghi == pytest.approx(1.0, abs=1e-5) and ghi == pytest.approx(0.5, abs=0.03)


def test_log_prob_gradients_match_the_formula():
    loc = tf.Variable(0.5)
    x = np.array([0.0, 1.0, 2.0], np.float32)
    g = tf.gradients(tf.reduce_sum(tfd.Normal(loc, 2.0).log_prob(x)), loc)[0]
    with tf.Session() as sess:
        sess.run(loc.initializer)
        assert sess.run(g) == pytest.approx(np.sum((x - 0.5) / 4.0))


def test_sample_shapes_and_properties():
    dist = tfd.Normal(loc=np.zeros([2, 3], np.float32), scale=1.0)
    assert dist.sample().shape.as_list() == [2, 3]
    assert dist.sample(5).shape.as_list() == [5, 2, 3]
    assert dist.sample([4, 5]).shape.as_list() == [4, 5, 2, 3]
    n = tf.placeholder(tf.int32, [])
    with tf.Session() as sess:
        assert sess.run(dist.sample(n), {n: 7}).shape == (7, 2, 3)
    assert dist.dtype == tf.float32 and dist.reparameterization_type is tfd.FULLY_REPARAMETERIZED
    assert tfd.Categorical(logits=[0.0, 1.0]).reparameterization_type is tfd.NOT_REPARAMETERIZED
    assert set(dist.parameters) >= {"loc", "scale", "validate_args", "allow_nan_stats", "name"}
    assert dist.copy(scale=3.0).parameters["scale"] == 3.0
    assert tfd.Dirichlet([1.0, 2.0]).event_shape.as_list() == [2]
    assert isinstance(dist, tfd.Distribution)
    with tf.Session() as sess:
        assert sess.run(dist.is_scalar_event()) and not sess.run(dist.is_scalar_batch())
    # cross entropy is entropy plus KL
    a, b = tfd.Normal(0.0, 1.0), tfd.Normal(1.0, 2.0)
    with tf.Session() as sess:
        ce, h, kl = sess.run([a.cross_entropy(b), a.entropy(), a.kl_divergence(b)])
    assert ce == pytest.approx(h + kl)


def test_the_kl_registry():
    class MyNormal(tfd.Normal):
        pass

    with tf.Session() as sess:  # a subclass uses its base classes' KL
        assert sess.run(tfd.kl_divergence(MyNormal(0.0, 1.0), tfd.Normal(0.0, 1.0))) == pytest.approx(0.0)
        # Exponential is a Gamma: Gamma's KL
        assert sess.run(tfd.kl_divergence(tfd.Exponential(1.0), tfd.Gamma(1.0, 1.0))) == pytest.approx(0.0)

    @tfd.RegisterKL(MyNormal, tfd.Gamma)
    def _kl(a, b, name=None):
        return tf.constant(42.0)

    with tf.Session() as sess:
        assert sess.run(tfd.kl_divergence(MyNormal(0.0, 1.0), tfd.Gamma(1.0, 1.0))) == 42.0
    with pytest.raises(ValueError, match="has already been registered"):
        tfd.RegisterKL(MyNormal, tfd.Gamma)(_kl)
    with pytest.raises(TypeError, match="kl_fn must be callable"):
        tfd.RegisterKL(tfd.Gamma, MyNormal)(3)
    with pytest.raises(NotImplementedError, match="No KL.*type Normal and distribution_b type Gamma"):
        tfd.kl_divergence(tfd.Normal(0.0, 1.0), tfd.Gamma(1.0, 1.0))


def test_tf1_errors():
    with pytest.raises(ValueError, match="Must pass probs or logits, but not both"):
        tfd.Bernoulli(logits=[0.0], probs=[0.5])
    with pytest.raises(ValueError, match="Must pass probs or logits"):
        tfd.Categorical()
    with pytest.raises(TypeError, match="Normal: parameters must share one float dtype"):
        tfd.Normal(tf.constant(0.0, tf.float64), tf.constant(1.0))
    with pytest.raises(NotImplementedError, match="cdf is not implemented: Bernoulli"):
        tfd.Bernoulli(probs=0.5).cdf(1)
    with pytest.raises(NotImplementedError, match="entropy is not implemented: Multinomial"):
        tfd.Multinomial(3.0, probs=[0.5, 0.5]).entropy()
    strict = tfd.Gamma([0.5, 2.0], 1.0, allow_nan_stats=False)
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="mode not defined when any concentration <= 1"):
            sess.run(strict.mode())
        kl = tfd.kl_divergence(tfd.Normal(0.0, 0.0), tfd.Normal(0.0, 0.0), allow_nan_stats=False)
        with pytest.raises(errors.InvalidArgumentError, match="returned NaN values"):
            sess.run(kl)
    with pytest.raises(AttributeError, match="tf.distributions.Poisson"):
        tfd.Poisson  # noqa: B018 - the missing-name message


def test_names_as_tf_gives_them():
    # TF 1.15 (checked with tensorflow.compat.v1): Normal/loc:0, Normal_1/loc:0, name 'foo/'
    with tf.Graph().as_default():
        d, d2 = tf.distributions.Normal(0., 1.), tf.distributions.Normal(0., 1.)
        assert (d.loc.name, d.scale.name, d2.loc.name) == ("Normal/loc:0", "Normal/scale:0", "Normal_1/loc:0")
        assert tf.distributions.Gamma(2., 3.).rate.name == "Gamma/rate:0"
        foo = tf.distributions.Normal(0., 1., name="foo")
        assert foo.name == "foo/" and d.sample(3).name.startswith("Normal/sample/")
        assert repr(foo) == "<tf.distributions.Normal 'foo/' batch_shape=() event_shape=() dtype=float32>"
