"""`dflow.math` (TF1's tf.math): the same functions as the top level, plus the hyperbolic and
inverse trigonometric ops and TF1's composites, compared with numpy on random inputs."""

import numpy as np
import pytest

import dflow as tf
from dflow import tf1_names
from tests.conftest import run_modes

UNARY = {
    "sinh": (np.sinh, (-3, 3)), "cosh": (np.cosh, (-3, 3)), "asin": (np.arcsin, (-0.95, 0.95)),
    "acos": (np.arccos, (-0.95, 0.95)), "atan": (np.arctan, (-5, 5)), "asinh": (np.arcsinh, (-5, 5)),
    "acosh": (np.arccosh, (1.05, 5)), "atanh": (np.arctanh, (-0.95, 0.95)),
}
COMPOSITES = ("atan2", "log_sigmoid", "divide_no_nan", "xlogy", "xdivy")  # test_composites_match_numpy


def test_every_name_is_the_top_level_function():
    # where TF1 also has the name at the top level or in tf.nn, it is the same function there
    ref = tf1_names.reference().modules
    elsewhere = ref[""][0] | ref["nn"][0]
    for name in tf.math.__all__:
        fn = getattr(tf.math, name)
        if name in elsewhere:
            assert fn is getattr(tf, name, None) or fn is getattr(tf.nn, name, None), name
    for name in ("log", "squared_difference", "reduce_std", "reduce_variance", "sigmoid", "softplus", "top_k",
                 "divide_no_nan", "xlogy", "atan2", "log_sigmoid", "is_nan", "cumsum", "unsorted_segment_sum"):
        assert name in tf.math.__all__, name


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_and_their_gradients_match_numpy(name):
    ref, (lo, hi) = UNARY[name]
    v = np.random.default_rng(0).uniform(lo, hi, (6, 5))
    x = tf.placeholder(tf.float64, [6, 5])
    y = getattr(tf.math, name)(x)
    (g,) = tf.gradients(tf.reduce_sum(y), [x])
    got, grad = run_modes([y, g], {x: v})
    np.testing.assert_allclose(got, ref(v), rtol=1e-12)
    eps = 1e-6  # central differences of numpy's function
    np.testing.assert_allclose(grad, (ref(v + eps) - ref(v - eps)) / (2 * eps), rtol=1e-5)


def test_composites_match_numpy():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 7))
    b = rng.standard_normal((4, 7))
    a[0, :3] = 0.0
    b[1, :2] = 0.0
    b[0, 0] = 0.0
    x, y = tf.placeholder(tf.float64, [4, 7]), tf.placeholder(tf.float64, [4, 7])
    fetches = [tf.math.atan2(y, x), tf.math.log_sigmoid(x * 30), tf.math.divide_no_nan(x, y),
               tf.math.xlogy(x, tf.abs(y)), tf.math.xdivy(x, y)]
    got = run_modes(fetches, {x: a, y: b})
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_allclose(got[0], np.arctan2(b, a), rtol=1e-12)
        np.testing.assert_allclose(got[1], -np.logaddexp(0, -a * 30), rtol=1e-12)
        np.testing.assert_allclose(got[2], np.where(b == 0, 0, a / b), rtol=1e-12)
        np.testing.assert_allclose(got[3], np.where(a == 0, 0, a * np.log(np.abs(b))), rtol=1e-12)
        np.testing.assert_allclose(got[4], np.where(a == 0, 0, a / b), rtol=1e-12)
    assert np.isfinite(got[2]).all()  # divide_no_nan: 0 where y is 0


@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, True), ([0, 1], False)])
def test_variance_std_and_euclidean_norm(axis, keepdims):
    v = np.random.default_rng(2).standard_normal((9, 6)) * 3 + 10
    x = tf.placeholder(tf.float64, [9, 6])
    ax = tuple(axis) if isinstance(axis, list) else axis
    got = run_modes([tf.math.reduce_variance(x, axis, keepdims), tf.math.reduce_std(x, axis, keepdims),
                     tf.math.reduce_euclidean_norm(x, axis, keepdims)], {x: v})
    np.testing.assert_allclose(got[0], v.var(axis=ax, keepdims=keepdims), rtol=1e-10)
    np.testing.assert_allclose(got[1], v.std(axis=ax, keepdims=keepdims), rtol=1e-10)
    np.testing.assert_allclose(got[2], np.sqrt((v ** 2).sum(axis=ax, keepdims=keepdims)), rtol=1e-10)


def test_atan2_matches_numpy_with_signed_zeros_and_its_gradient():
    rng = np.random.default_rng(3)
    yv, xv = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    yv[0] = [0.0, -0.0, 1.0, -1.0]
    xv[0] = [-1.0, -1.0, 0.0, 0.0]
    y, x = tf.placeholder(tf.float64, [5, 4]), tf.placeholder(tf.float64, [5, 4])
    a = tf.math.atan2(y, x)
    gy, gx = tf.gradients(tf.reduce_sum(a), [y, x])
    got, dy, dx = run_modes([a, gy, gx], {y: yv, x: xv})
    np.testing.assert_array_equal(got, np.arctan2(yv, xv))
    r2 = xv ** 2 + yv ** 2
    np.testing.assert_allclose(dy[1:], (xv / r2)[1:], rtol=1e-12)
    np.testing.assert_allclose(dx[1:], (-yv / r2)[1:], rtol=1e-12)
