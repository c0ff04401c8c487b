"""erf, erfc, lgamma, digamma, igamma(c), betainc, zeta, polygamma, rint, lbeta against TF 2.21's
figures (tf.compat.v1, float64, printed with 17 digits: /tmp/chk2.py of issue 28's notes) and
Python's math module on random inputs, on the local schedulers, with gradients against finite
differences."""

import math

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

X = np.array([-3.5, -2.0, -0.5, 0.0, 1e-3, 0.5, 1.0, 2.0, 3.7, 10.0, 30.0, 171.5, 1e6])
# TF 2.21 compat.v1 on X
TF_UNARY = {
    "erf": [-0.9999992569016276, -0.9953222650189528, -0.5204998778130466, 0.0, 0.00112837879096924,
            0.5204998778130466, 0.8427007929497148, 0.9953222650189527, 0.9999998328489421, 1.0, 1.0, 1.0, 1.0],
    "erfc": [1.9999992569016276, 1.9953222650189528, 1.5204998778130467, 1.0, 9.9887162120903072e-01,
             4.7950012218695337e-01, 1.5729920705028522e-01, 4.6777349810472662e-03, 1.6715105790914596e-07,
             2.0884875837625443e-45, 0.0, 0.0, 0.0],
    "lgamma": [-1.3090066849930420, np.inf, 1.2655121234846454, np.inf, 6.9071788853838534, 5.7236494292470008e-01,
               0.0, 0.0, 1.4280723266653881, 1.2801827480081471e+01, 7.1257038967168015e+01,
               7.0914316303092824e+02, 1.2815504569147611e+07],
    "digamma": [1.3888709263595289, np.nan, 3.6489973978576451e-02, np.nan, -1.0005755719318104e+03,
                -1.9635100260214227, -5.7721566490153231e-01, 4.2278433509846747e-01, 1.1671535393615109,
                2.2517525890667214, 3.3844381326855251, 5.1416649814340003, 1.3815510057964190e+01],
    "rint": [-4.0, -2.0, -0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 4.0, 10.0, 30.0, 172.0, 1e6],
}


@pytest.mark.parametrize("name", sorted(TF_UNARY))
def test_unary_against_tf_figures(name):
    got = run_modes(getattr(tf, name)(tf.constant(X)))
    np.testing.assert_allclose(got, TF_UNARY[name], rtol=1e-13, atol=1e-15)
    assert getattr(tf.math, name) is getattr(tf, name)


def test_float32_keeps_its_dtype():
    got = run_modes(tf.lgamma(tf.constant(X.astype(np.float32))))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.array(TF_UNARY["lgamma"], np.float32), rtol=1e-6)


def test_random_inputs_against_python_math():
    x = np.random.default_rng(0).uniform(-6, 6, 4000)
    x = x[np.abs(x - np.round(x)) > 1e-6]
    p = tf.placeholder(tf.float64, [None])
    erf, erfc, lg = run_modes([tf.erf(p), tf.erfc(p), tf.lgamma(p)], {p: x})
    np.testing.assert_allclose(erf, [math.erf(v) for v in x], rtol=1e-15, atol=3e-16)
    np.testing.assert_allclose(erfc, [math.erfc(v) for v in x], rtol=1e-14)
    np.testing.assert_allclose(lg, [math.lgamma(v) for v in x], rtol=1e-13, atol=1e-14)


def test_binary_and_ternary_against_tf_figures():
    a = [0.5, 1.0, 2.0, 5.0, 30.0, 100.0, 0.0, -1.0, 2.0, 1000.0]
    x = [0.3, 1.0, 3.0, 4.0, 25.0, 110.0, 1.0, 1.0, 0.0, 1010.0]
    z = [2.0, 3.0, 1.5, 1.0, 0.5, 4.0, 2.0, 2.0, 3.0, 50.]
    q = [1.0, 2.5, 0.1, 1.0, 1.0, -2.0, -1.5, 100., -1.5, 2.]
    n = [0., 1., 2., 3., 1.5, -1., 1., 4.]
    xp = [2.0, 0.5, 3.0, 10., 2., 2., -1.5, -2.0]
    ba, bb = [0.5, 1., 2., 5., 10., 0., 2., 100., 0.5], [0.5, 1., 3., 2., 30., 1., 2., 200., 0.5]
    bx = [0.5, 0.3, 0.7, 0.99, 0.2, 0.5, 1.5, 0.33, 0.0]
    c = lambda v: tf.constant(np.array(v))  # noqa: E731
    got = run_modes([tf.igamma(c(a), c(x)), tf.math.igammac(c(a), c(x)), tf.zeta(c(z), c(q)),
                     tf.polygamma(c(n), c(xp)), tf.betainc(c(ba), c(bb), c(bx))])
    tf_figures = [  # TF 2.21 compat.v1, float64
        [0.5614219739190001, 0.6321205588285578, 0.8008517265285442, 0.37116306482012645, 0.1821039159774535,
         0.8417213299399123, np.nan, np.nan, 0.0, 0.6276789447368795],
        [0.43857802608099994, 0.36787944117144233, 0.1991482734714558, 0.6288369351798735, 0.8178960840225464,
         0.15827867006008764, np.nan, np.nan, 1.0, 0.37232105526312054],
        [1.6449340668482266, 1.1810202582086368e-01, 3.4052975515075595e+01, np.inf, np.nan, np.inf,
         9.3792466449891236, 1.0050166663333573e-02, 1.1810202582086413e-01, 8.8817842109308162e-16],
        [4.2278433509846747e-01, 4.9348022005446799, -1.5411380631918856e-01, 2.3199013042898686e-03, np.nan,
         np.nan, 9.3792466449891236, np.nan],
        [0.49999999999999994, 0.3, 0.9163, 0.998539552395, 0.24135945128079017, np.nan, np.nan,
         0.4566181633340067, 0.0],
    ]
    for g, want in zip(got, tf_figures):
        np.testing.assert_allclose(g, want, rtol=5e-13)


def test_lbeta_and_broadcasting():
    got = run_modes(tf.lbeta(tf.constant(np.array([[1., 2.], [0.5, 3.], [2., 2.]]))))
    np.testing.assert_allclose(got, [-0.6931471805599453, 0.06453852113757108, -1.791759469228055], rtol=1e-13, atol=1e-15)
    assert tf.lbeta(tf.ones((2, 2))).op.type == "Sub"  # TF1: lbeta/sub
    with tf.Session() as s:
        assert s.run(tf.lbeta(np.zeros((2, 0)))).tolist() == [-np.inf, -np.inf]  # as TF 2.21
        got = s.run(tf.igamma(tf.constant([[1.0], [2.0]]), tf.constant([0.5, 1.0, 2.0])))
    assert got.shape == (2, 3)


def test_errors_in_tf_words():
    with pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
        tf.erf(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="Shapes must be equal rank, but are 2 and 1"):
        tf.betainc(np.ones((2, 3)), 2.0, np.full(3, .5))
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.betainc(np.ones(3), np.ones(2), 0.5)


def _grad_error(build, x0):
    p = tf.placeholder(tf.float64, x0.shape)
    y = build(p)
    with tf.Session():
        return tf.test.compute_gradient_error(p, list(x0.shape), y, list(x0.shape), x_init_value=x0, delta=1e-6)


@pytest.mark.parametrize("build", [
    lambda p: tf.erf(p), lambda p: tf.erfc(p), lambda p: tf.lgamma(p), lambda p: tf.digamma(p),
    lambda p: tf.igamma(tf.constant([0.5, 2.0, 5.0], tf.float64), p),
    lambda p: tf.igammac(tf.constant([0.5, 2.0, 5.0], tf.float64), p),
    lambda p: tf.betainc(tf.constant([0.5, 2.0, 5.0], tf.float64), 3.0, p / 4.0),
    lambda p: tf.zeta(tf.constant([2.0, 3.0, 4.5], tf.float64), p),
    lambda p: tf.polygamma(tf.constant([1.0, 2.0, 3.0], tf.float64), p),
], ids=["erf", "erfc", "lgamma", "digamma", "igamma", "igammac", "betainc", "zeta", "polygamma"])
def test_gradients_against_finite_differences(build):
    assert _grad_error(build, np.array([0.7, 1.3, 2.9])) < 1e-6


def test_gradients_tf1_leaves_out_are_none():
    a, x = tf.constant([1.0, 2.0]), tf.constant([0.5, 1.5])
    assert tf.gradients(tf.rint(x), x) == [None]
    assert tf.gradients(tf.zeta(a + 1, x), a) == [None]
    assert tf.gradients(tf.polygamma(a, x), a) == [None]
    assert tf.gradients(tf.betainc(a, a, 0.5 * tf.ones_like(a)), a) == [None]
    np.testing.assert_allclose(run_modes(tf.gradients(tf.lgamma(x), x)[0]), [-1.9635100260214227,
                                                                             0.03648997397857652], rtol=1e-6)


# TF 2.21's tf.raw_ops.IgammaGradA(a, x) in float64 (printed with 17 digits)
IGA_A = np.array([0.1, 0.5, 1.0, 2.5, 3.0, 10.0, 0.7, 50.0, 200.0, 1.5, 4.0])
IGA_X = np.array([0.05, 2.0, 1.0, 0.3, 7.0, 9.0, 1e-6, 55.0, 180.0, 30.0, 4.0])
TF_IGAMMA_GRAD_A = [-2.0264226621003978e+00, -1.3561933520399783e-01, -4.3172971063489896e-01,
                    -2.7981574279413723e-02, -3.4996415852200230e-02, -1.2703651192426865e-01,
                    -9.7382809278046109e-04, -4.2603980624083285e-02, -1.0177598720669673e-02,
                    -1.9971258273873289e-12, -2.0367956368671331e-01]


def test_igamma_gradient_with_respect_to_a_against_tf():
    a, x = tf.placeholder(tf.float64, [None]), tf.constant(IGA_X)
    w = np.linspace(0.5, 1.5, len(IGA_A))
    ga, gca = tf.gradients(tf.reduce_sum(tf.igamma(a, x) * w), a)[0], tf.gradients(tf.igammac(a, x), a)[0]
    got, got_c = run_modes([ga, gca], {a: IGA_A})
    np.testing.assert_allclose(got, w * np.array(TF_IGAMMA_GRAD_A), rtol=1e-8)  # a = 200: ~2e-9
    np.testing.assert_allclose(got_c, -np.array(TF_IGAMMA_GRAD_A), rtol=1e-8)
    assert any(op.type == "IgammaGradA" for op in ga.graph.get_operations())
    # TF's domain: nan for a <= 0, 0 at x == 0 and x == inf
    edge = tf.gradients(tf.igamma(a, tf.constant([1.0, 1.0, 0.0, np.inf], tf.float64)), a)[0]
    np.testing.assert_array_equal(tf.Session().run(edge, {a: [-1.0, 0.0, 1.0, 1.0]}), [np.nan, np.nan, 0.0, 0.0])


def test_igamma_gradient_with_respect_to_a_broadcast_and_float32():
    a = tf.constant([[0.5], [2.0], [5.0]], tf.float32)
    x = tf.constant([0.3, 1.0, 4.0, 9.0], tf.float32)
    (ga,) = tf.gradients(tf.igamma(a, x), a)
    assert ga.shape.as_list() == [3, 1] and ga.dtype == tf.float32
    p = tf.placeholder(tf.float64, [3, 1])
    y = tf.igamma(p, tf.constant([0.3, 1.0, 4.0, 9.0], tf.float64))
    with tf.Session():
        err = tf.test.compute_gradient_error(p, [3, 1], y, [3, 4], x_init_value=np.array([[0.5], [2.0], [5.0]]),
                                             delta=1e-6)
    assert err < 1e-7
