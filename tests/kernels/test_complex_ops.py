"""Complex numbers: complex/real/imag/conj/angle/abs against numpy on the schedulers, TF1's dtype
rule and errors, the elementwise ops on complex values, and TF1's gradients (dL/dx + i dL/dy of a
real loss) against finite differences and TF's figures."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes


def _z(shape, seed=0, dtype=np.complex128):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("part, out", [(np.float32, np.complex64), (np.float64, np.complex128)])
def test_complex_parts_and_magnitude_on_the_schedulers(part, out):
    rng = np.random.default_rng(1)
    re, im = rng.standard_normal((4, 6)).astype(part), rng.standard_normal((1, 6)).astype(part)
    pr, pi = tf.placeholder(part, [4, 6]), tf.placeholder(part, [1, 6])
    c = tf.complex(pr, pi)
    assert c.dtype == out and c.shape.as_list() == [4, 6] and c.op.type == "Complex"
    fetch = [c, tf.real(c), tf.imag(c), tf.conj(c), tf.angle(c), tf.abs(c), tf.math.abs(c), tf.cast(c, part),
             tf.to_complex64(pr), tf.to_complex128(pr)]
    assert [t.dtype.name for t in fetch[1:3] + fetch[4:6]] == [np.dtype(part).name] * 4
    assert fetch[5].op.type == "ComplexAbs"  # TF1's abs of a complex tensor: its real magnitude
    got = run_modes(fetch, {pr: re, pi: im})
    z = re + 1j * im
    want = [z, z.real, z.imag, np.conj(z), np.angle(z), np.abs(z), np.abs(z), z.real, re + 0j, re + 0j]
    tol = 1e-6 if part == np.float32 else 1e-13
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-6 if i == 8 else tol, atol=1e-6 if i == 8 else tol)
    assert got[0].dtype == out and got[8].dtype == np.complex64 and got[9].dtype == np.complex128


def test_complex_keeps_infinite_parts():
    got = run_modes(tf.complex(tf.constant([np.inf, 1.0]), tf.constant([2.0, -np.inf])))
    assert got[0] == complex(np.inf, 2.0) and got[1] == complex(1.0, -np.inf)


def test_complex_dtype_rule_and_errors():
    # TF 2.21 compat.v1's messages (tf.complex of these)
    f32, f64, i32 = tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0], tf.float64), tf.constant([1, 2])
    assert tf.complex(1.0, 2.0).dtype == tf.complex64
    assert tf.complex(f32, 2.0).dtype == tf.complex64 and tf.complex(f64, 2.0).dtype == tf.complex128
    assert tf.complex(f32, f32, name="cc").name == "cc:0"
    with pytest.raises(TypeError, match=r"incorrect types: float32 float64. They must be consistent, and one of"):
        tf.complex(f32, f64)
    with pytest.raises(TypeError, match="incorrect types: int32 int32"):
        tf.complex(i32, i32)
    with pytest.raises(ValueError, match="Dimensions must be"):
        tf.complex(f32, tf.constant([1.0, 2.0, 3.0]))


def test_parts_of_real_tensors_as_tf1():
    f32, i32 = tf.constant([-1.0, 2.0]), tf.constant([1, 2])
    assert tf.real(f32) is f32 and tf.conj(f32) is f32 and tf.conj(i32) is i32
    im = tf.imag(f32)
    assert im.name == "Imag/zeros_like:0" and im.dtype == tf.float32  # TF1's names
    ang = tf.angle(f32)
    assert ang.name == "Angle/Select:0"
    np.testing.assert_allclose(run_modes([im, ang]), [[0.0, 0.0], [np.pi, 0.0]], rtol=1e-6)
    with pytest.raises(TypeError, match="Expected int32, but got 3.14"):
        tf.angle(i32)
    with pytest.raises(TypeError, match="Expected numeric or variant tensor, got dtype tf.string"):
        tf.conj(tf.constant(["a"]))


def test_ops_that_reject_complex():
    c = tf.constant([1 + 2j], tf.complex64)
    for fn in (lambda: c < c, lambda: tf.maximum(c, c), lambda: tf.floor(c), lambda: tf.reduce_max(c)):
        with pytest.raises(TypeError, match="complex64"):
            fn()
    with pytest.raises(TypeError):
        tf.add(c, tf.constant([1.0]))


def test_elementwise_and_reductions_on_complex_match_numpy():
    a, b = _z((3, 4), 2), _z((4,), 3)
    m = _z((4, 2), 4)
    pa, pb, pm = tf.placeholder(tf.complex128, [3, 4]), tf.placeholder(tf.complex128, [4]), \
        tf.placeholder(tf.complex128, [4, 2])
    fetch = [pa + pb, pa - pb, pa * pb, pa / pb, tf.exp(pa), tf.log(pa), tf.square(pa), tf.sqrt(pa),
             tf.reduce_sum(pa, 0), tf.reduce_mean(pa), tf.reduce_prod(pa, 1), tf.matmul(pa, pm), -pa, tf.sign(pa),
             tf.squared_difference(pa, pb), tf.pow(pa, pb), tf.cast(pa, tf.int32)]
    got = run_modes(fetch, {pa: a, pb: b, pm: m})
    d = a - b
    want = [a + b, a - b, a * b, a / b, np.exp(a), np.log(a), a * a, np.sqrt(a), a.sum(0), a.mean(), a.prod(1),
            a @ m, -a, a / np.abs(a), d * np.conj(d), a ** b, a.real.astype(np.int32)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_squared_difference_pow_div_prod_as_tf():
    # TF 2.21 compat.v1, complex64: y = f(x, w); tf.gradients(real(y) + 0.3 * imag(y), [x, w])
    x = tf.constant([[1 + 2j, -3 - 0.5j]], tf.complex64)
    w = tf.constant([[0.5 - 1j, 2 + 1j]], tf.complex64)

    def loss(y):
        return tf.real(y) + tf.imag(y) * 0.3

    sd, pw, dv, pr = tf.squared_difference(x, w), tf.pow(x, w), x / w, tf.reduce_prod(x)
    fetch = [sd, tf.gradients(loss(sd), [x, w]), tf.gradients(loss(pw), [x, w]), tf.gradients(loss(dv), [x, w]),
             tf.gradients(loss(pr), x)]
    got = run_modes(fetch)
    np.testing.assert_allclose(got[0], [[9.25, 27.25]])
    np.testing.assert_allclose(got[1][0], [[-0.8 + 6.3j, -9.1 - 6j]], rtol=1e-5)
    np.testing.assert_allclose(got[1][1], [[0.8 - 6.3j, 9.1 + 6j]], rtol=1e-5)
    np.testing.assert_allclose(got[2][0], [[-2.1892407 + 0.88634825j, -16.833138 + 138.26985j]], rtol=1e-5)
    np.testing.assert_allclose(got[2][1], [[5.9558067 - 2.5158448j, 600.8379 + 37.305313j]], rtol=1e-5)
    np.testing.assert_allclose(got[3][0], [[0.64 - 0.68j, 0.34 + 0.32j]], rtol=1e-5)
    np.testing.assert_allclose(got[3][1], [[1.856 + 0.208j, 0.314 + 0.552j]], rtol=1e-5)
    np.testing.assert_allclose(got[4][0], [[-3.15 - 0.4j, 1.6 - 1.7j]], rtol=1e-5)


def _numeric_grad(f, z, eps=1e-6):
    """dL/dx + i dL/dy of a real scalar function of a complex array (central differences)."""
    out = np.zeros_like(z)
    for idx in np.ndindex(z.shape):
        for unit in (1.0, 1j):
            zp, zm = z.copy(), z.copy()
            zp[idx] += eps * unit
            zm[idx] -= eps * unit
            out[idx] += unit * (f(zp) - f(zm)) / (2 * eps)
    return out


LOSSES = {
    "real_of_square": lambda t: tf.real(tf.square(t)),
    "imag_of_exp": lambda t: tf.imag(tf.exp(t)),
    "abs": lambda t: tf.abs(t),
    "angle": lambda t: tf.angle(t),
    "conj_times": lambda t: tf.real(tf.conj(t) * tf.constant(_z((2, 3), 7))),
    "log_div": lambda t: tf.imag(tf.log(t) / tf.constant(_z((2, 3), 8))),
    "sqrt_tanh": lambda t: tf.real(tf.sqrt(t)) + tf.imag(tf.tanh(t)),
    "complex_of_parts": lambda t: tf.abs(tf.complex(tf.imag(t) * 2.0, tf.real(t) + 1.0)),
    "matmul": lambda t: tf.real(tf.matmul(t, tf.constant(_z((3, 2), 9)), adjoint_a=False)) ** 2,
    "matmul_adjoint": lambda t: tf.imag(tf.matmul(tf.constant(_z((2, 2), 10)), t, adjoint_a=True)),
    "matmul_transpose": lambda t: tf.real(tf.matmul(tf.constant(_z((3, 3), 11)), t, transpose_b=True)),
    "prod_pow": lambda t: tf.real(tf.reduce_prod(t, 1))[:, None] + tf.imag(tf.pow(t, tf.constant(_z((2, 3), 12)))),
    "sum_cast": lambda t: tf.cast(tf.reduce_sum(t * t, 0), tf.float64),
    "reciprocal_sigmoid": lambda t: tf.real(tf.reciprocal(t)) + tf.imag(tf.sigmoid(t)),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients_of_real_losses_against_finite_differences(name):
    z = _z((2, 3), 13)
    p = tf.placeholder(tf.complex128, [2, 3])
    loss = tf.reduce_sum(LOSSES[name](p))
    (g,) = tf.gradients(loss, p)
    assert g.dtype == tf.complex128
    with tf.Session() as s:
        got = s.run(g, {p: z})
        num = _numeric_grad(lambda v: s.run(loss, {p: v}), z)
    np.testing.assert_allclose(got, num, rtol=1e-6, atol=1e-7)


def test_gradients_of_complex_from_real_parts():
    re, im = tf.placeholder(tf.float64, [2, 3]), tf.placeholder(tf.float64, [3])
    c = tf.complex(re, im)
    loss = tf.reduce_sum(tf.abs(c * c))
    gr, gi = tf.gradients(loss, [re, im])
    assert gi.shape.as_list() == [3]
    rv, iv = np.random.default_rng(3).standard_normal((2, 3)), np.array([0.5, -1.0, 2.0])
    got = run_modes([gr, gi], {re: rv, im: iv})
    r2 = rv ** 2 + iv ** 2
    np.testing.assert_allclose(got[0], 2 * rv, rtol=1e-12)  # |c|^2 = re^2 + im^2
    np.testing.assert_allclose(got[1], (2 * iv * np.ones_like(rv)).sum(0), rtol=1e-12)
    assert r2.shape == (2, 3)


def test_abs_and_angle_gradients_at_zero_as_tf():
    z = tf.constant([0j, 1 + 1j])
    (ga,) = tf.gradients(tf.abs(z), z)
    np.testing.assert_allclose(run_modes(ga), [0, (1 + 1j) / np.sqrt(2)])  # TF: 0 at 0
