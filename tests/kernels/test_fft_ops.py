"""The FFT family against np.fft on the schedulers (shapes, dtypes, fft_length cropping and padding),
its errors, and its gradients (TF's spectral_grad.py) against finite differences."""

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes


def _z(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


AX = {1: (-1,), 2: (-2, -1), 3: (-3, -2, -1)}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_transforms_against_numpy(dtype):
    z = _z((3, 4, 6, 5), 1).astype(dtype)
    p = tf.placeholder(dtype, z.shape)
    fns = [(tf.fft, np.fft.fftn, 1), (tf.ifft, np.fft.ifftn, 1), (tf.fft2d, np.fft.fftn, 2),
           (tf.ifft2d, np.fft.ifftn, 2), (tf.signal.fft3d, np.fft.fftn, 3), (tf.spectral.ifft3d, np.fft.ifftn, 3)]
    outs = [f(p) for f, _, _ in fns]
    assert all(o.dtype == dtype and o.shape.as_list() == list(z.shape) for o in outs)
    got = run_modes(outs, {p: z})  # chunks of 2 along the leading axes: one task per chunk
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    for g, (_, ref, k) in zip(got, fns):
        assert g.dtype == dtype
        want = ref(z.astype(np.complex128), axes=AX[k])
        np.testing.assert_allclose(g, want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("k, length", [(1, None), (1, [8]), (1, [3]), (2, None), (2, [3, 4]), (2, [8, 7]),
                                       (3, None), (3, [2, 6, 9])])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_real_transforms_against_numpy(k, length, dtype):
    x = np.random.default_rng(k).standard_normal((3, 4, 6, 5)).astype(dtype)
    p = tf.placeholder(dtype, x.shape)
    rf = {1: tf.signal.rfft, 2: tf.signal.rfft2d, 3: tf.signal.rfft3d}[k]
    irf = {1: tf.signal.irfft, 2: tf.spectral.irfft2d, 3: tf.irfft3d}[k]
    y = rf(p, length)
    s = list(length or x.shape[-k:])
    assert y.dtype == (tf.complex64 if dtype == np.float32 else tf.complex128)
    assert y.shape.as_list() == [3, 4, 6, 5][:4 - k] + s[:-1] + [s[-1] // 2 + 1]
    back = irf(y, s)
    assert back.dtype == tf.as_dtype(dtype) and back.shape.as_list() == [3, 4, 6, 5][:4 - k] + s
    got = run_modes([y, back, irf(y)], {p: x})
    tol = 1e-5 if dtype == np.float32 else 1e-12
    want = np.fft.rfftn(x.astype(np.float64), s=s, axes=AX[k])
    np.testing.assert_allclose(got[0], want, rtol=tol, atol=tol * np.abs(want).max())
    np.testing.assert_allclose(got[1], np.fft.irfftn(want, s=s, axes=AX[k]), rtol=tol, atol=tol * 10)
    n = list(want.shape[-k:])
    np.testing.assert_allclose(got[2], np.fft.irfftn(want, s=n[:-1] + [2 * (n[-1] - 1)], axes=AX[k]),
                               rtol=tol, atol=tol * 10)  # TF1's default fft_length of irfft


def test_errors():
    with pytest.raises(TypeError, match="float32"):
        tf.fft(tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="complex128"):
        tf.signal.rfft(tf.constant([1 + 0j]))
    with pytest.raises(ValueError, match="at least rank 2"):
        tf.fft2d(tf.constant([1 + 0j]))
    with pytest.raises(ValueError, match="Dimension must be 2"):
        tf.signal.rfft2d(tf.zeros([3, 4]), [4])
    with pytest.raises(AttributeError):
        tf.signal.stft  # noqa: B018 - not provided


def _numeric_grad(f, v, eps=1e-6):
    out = np.zeros_like(v)
    units = (1.0, 1j) if np.iscomplexobj(v) else (1.0,)
    for idx in np.ndindex(v.shape):
        for u in units:
            vp, vm = v.copy(), v.copy()
            vp[idx] += eps * u
            vm[idx] -= eps * u
            out[idx] += u * (f(vp) - f(vm)) / (2 * eps)
    return out


GRADS = [
    ("fft", lambda t: tf.fft(t), True), ("ifft", lambda t: tf.ifft(t), True),
    ("fft2d", lambda t: tf.fft2d(t), True), ("ifft3d", lambda t: tf.ifft3d(t), True),
    ("rfft", lambda t: tf.signal.rfft(t), False), ("rfft_pad", lambda t: tf.signal.rfft(t, [7]), False),
    ("rfft_crop", lambda t: tf.signal.rfft(t, [3]), False), ("rfft2d", lambda t: tf.signal.rfft2d(t, [3, 5]), False),
    ("rfft3d", lambda t: tf.signal.rfft3d(t), False),
    ("irfft", lambda t: tf.signal.irfft(t), True), ("irfft_odd", lambda t: tf.signal.irfft(t, [5]), True),
    ("irfft_crop", lambda t: tf.signal.irfft(t, [3]), True), ("irfft2d", lambda t: tf.signal.irfft2d(t, [4, 6]), True),
    ("irfft3d", lambda t: tf.signal.irfft3d(t, [2, 3, 5]), True),
]


@pytest.mark.parametrize("name, fn, complex_in", GRADS, ids=[g[0] for g in GRADS])
def test_gradients_against_finite_differences(name, fn, complex_in):
    shape = (2, 3, 4)
    v = _z(shape, 5) if complex_in else np.random.default_rng(5).standard_normal(shape)
    p = tf.placeholder(tf.complex128 if complex_in else tf.float64, shape)
    y = fn(p)
    w = _z(y.shape.as_list(), 6) if y.dtype.is_complex else np.random.default_rng(6).standard_normal(y.shape.as_list())
    loss = tf.reduce_sum(tf.real(y * tf.constant(w))) if y.dtype.is_complex else tf.reduce_sum(y * tf.constant(w))
    (g,) = tf.gradients(loss, p)
    with tf.Session() as s:
        got = s.run(g, {p: v})
        num = _numeric_grad(lambda a: s.run(loss, {p: a}), v)
    np.testing.assert_allclose(got, num, rtol=1e-6, atol=1e-6)
