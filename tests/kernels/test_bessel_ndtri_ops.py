"""Bessel I0/I1, ndtri, erfinv/erfcinv, nextafter and the no-nan composites against TF 2.21's
figures (hard-coded below), their gradients by finite differences, on the schedulers."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

V = np.array([-3.0, -0.5, 0.0, 0.1, 1.0, 5.0, 30.0, 100.0])
# TF 2.21 compat.v1, float64
TF_BESSEL = {
    "bessel_i0": [4.88079259e+00, 1.06348337e+00, 1.0, 1.00250156e+00, 1.26606588e+00, 2.72398718e+01,
                  7.81672298e+11, 1.07375171e+42],
    "bessel_i0e": [0.24300035, 0.64503527, 1.0, 0.90710093, 0.46575961, 0.18354081, 0.07314595, 0.03994438],
    "bessel_i1": [-3.95337022e+00, -2.57894305e-01, 0.0, 5.00625260e-02, 5.65159104e-01, 2.43356421e+01,
                  7.68532039e+11, 1.06836939e+42],
    "bessel_i1e": [-0.19682671, -0.1564208, 0.0, 0.04529845, 0.20791042, 0.16397227, 0.07191633, 0.03974415],
}


@pytest.mark.parametrize("fn", sorted(TF_BESSEL))
def test_bessel_against_tf(fn):
    x = tf.placeholder(tf.float64, [8])
    np.testing.assert_allclose(run_modes(getattr(tf.math, fn)(x), {x: V}), TF_BESSEL[fn], rtol=1e-7)
    # float32 in, float32 out
    assert run_modes(getattr(tf.math, fn)(tf.constant(V[:4], tf.float32))).dtype == np.float32


def test_inverse_normal_and_erf_against_tf():
    p = np.array([0.0, 1e-300, 1e-10, 0.025, 0.5, 0.6, 0.975, 1 - 1e-12, 1.0])
    e = np.array([-1.0, -0.999999, -0.3, 0.0, 1e-10, 0.5, 0.9999, 1.0, 1.5])
    c = np.array([0.0, 1e-100, 0.3, 1.0, 1.7, 2.0, 2.5])
    got = run_modes([tf.math.ndtri(p), tf.math.erfinv(e), tf.math.erfcinv(c)])
    # TF 2.21 compat.v1
    np.testing.assert_allclose(got[0], [-np.inf, -37.0470963, -6.3613409, -1.95996398, 0.0, 0.2533471, 1.95996398,
                                        7.03448691, np.inf], rtol=1e-7)
    # TF gives 8.86226999e-11 at 1e-10 (its float64 erfinv goes through ndtri((x+1)/2)); the value is
    # sqrt(pi)/2 * 1e-10 = 8.86226925e-11, which dflow returns
    np.testing.assert_allclose(got[1], [-np.inf, -3.45891074, -0.272462715, 0.0, 8.86226925e-11, 0.476936276,
                                        2.75106391, np.inf, np.nan], rtol=1e-7)
    np.testing.assert_allclose(got[2], [np.inf, 15.0655747, 0.73286908, 0.0, -0.73286908, -np.inf, np.nan], rtol=1e-7)
    # round trips against erf (special_ops)
    y = np.linspace(-5, 5, 41)
    back = run_modes([tf.math.erfinv(tf.erf(y)), tf.math.ndtri(0.5 * tf.erfc(-y / np.sqrt(2)))])
    np.testing.assert_allclose(back[0][np.abs(y) < 4], y[np.abs(y) < 4], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(back[1], y, rtol=1e-9, atol=1e-12)


def test_nextafter_and_no_nan_composites():
    got = run_modes([tf.math.nextafter(np.array([1.0, 0.0], np.float32), np.array([2.0, -1.0], np.float32)),
                     tf.math.multiply_no_nan([np.inf, np.nan, 2.0], [0.0, 0.0, 3.0]),
                     tf.math.reciprocal_no_nan([0.0, 2.0]), tf.math.xlog1py([0.0, 2.0], [-1.0, 1.0])])
    np.testing.assert_array_equal(got[0], np.nextafter(np.float32([1, 0]), np.float32([2, -1])))
    np.testing.assert_array_equal(got[1], [0.0, 0.0, 6.0])  # TF 2.21
    np.testing.assert_array_equal(got[2], [0.0, 0.5])
    np.testing.assert_allclose(got[3], [0.0, 2 * np.log(2.0)])


@pytest.mark.parametrize("fn,lo,hi", [("bessel_i0", -3, 3), ("bessel_i0e", -3, 3), ("bessel_i1", -3, 3),
                                      ("bessel_i1e", -3, 3), ("ndtri", 0.05, 0.95), ("erfinv", -0.9, 0.9),
                                      ("erfcinv", 0.1, 1.9), ("xlog1py", 0.1, 2)])
def test_gradients(fn, lo, hi):
    v = np.random.default_rng(3).uniform(lo, hi, (3, 4))
    x = tf.placeholder(tf.float64, [3, 4])
    f = getattr(tf.math, fn)
    y = f(x, x) if fn == "xlog1py" else f(x)
    with tf.Session():
        assert tf.test.compute_gradient_error(x, [3, 4], y, [3, 4], x_init_value=v, delta=1e-6) < 1e-6


def test_i1_gradient_at_zero_and_bad_dtypes():
    x = tf.constant([0.0, 0.0], tf.float64)
    got = run_modes(tf.gradients(tf.reduce_sum(tf.math.bessel_i1(x) + tf.math.bessel_i1e(x)), x))
    np.testing.assert_allclose(got[0], [1.0, 1.0])  # 1/2 each, as TF
    with pytest.raises(TypeError, match="BesselI0"):
        tf.math.bessel_i0(tf.constant([1], tf.int32))
    with pytest.raises(TypeError, match="Ndtri"):
        tf.math.ndtri(tf.constant([1], tf.int32))
