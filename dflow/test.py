"""`dflow.test`: gradient checking (TF1's `tf.test.compute_gradient*`) and device queries."""

from __future__ import annotations

import numpy as np

from .graph.gradients import gradients
from .graph.graph import get_default_session
from .graph.indexed_slices import IndexedSlices
from .kernels.array_ops import placeholder
from .kernels.common import convert_to_tensor

__all__ = ["compute_gradient", "compute_gradient_error", "is_gpu_available", "is_built_with_cuda"]


def _session(x):
    sess = get_default_session()
    if sess is None:
        raise ValueError("compute_gradient needs a default session: use `with tf.Session():`")
    return sess


def _jacobians(x, x_shape, y, y_shape, x_init_value, delta, extra_feed_dict):
    sess = _session(x)
    x_shape, y_shape = tuple(x_shape), tuple(y_shape)
    xdt = x.dtype.np_dtype
    if x_init_value is None:
        x_init_value = np.random.default_rng(0).standard_normal(x_shape).astype(xdt)
    x0 = np.asarray(x_init_value, dtype=xdt).reshape(x_shape)
    feed = dict(extra_feed_dict or {})
    nx, ny = int(np.prod(x_shape)), int(np.prod(y_shape))
    dy = placeholder(y.dtype, y_shape)
    (dx,) = gradients(y, x, grad_ys=dy)
    if isinstance(dx, IndexedSlices):  # a gather's sparse gradient: compared densified
        dx = convert_to_tensor(dx)
    theoretical = np.zeros((nx, ny), dtype=xdt)
    if dx is not None:
        for j in range(ny):
            e = np.zeros(ny, dtype=y.dtype.np_dtype)
            e[j] = 1
            feed_j = {**feed, x: x0, dy: e.reshape(y_shape)}
            theoretical[:, j] = np.asarray(sess.run(dx, feed_j)).reshape(-1)
    numerical = np.zeros((nx, ny), dtype=xdt)
    for i in range(nx):
        xp, xm = x0.copy().reshape(-1), x0.copy().reshape(-1)
        xp[i] += delta
        xm[i] -= delta
        yp = np.asarray(sess.run(y, {**feed, x: xp.reshape(x_shape)}), dtype=np.float64).reshape(-1)
        ym = np.asarray(sess.run(y, {**feed, x: xm.reshape(x_shape)}), dtype=np.float64).reshape(-1)
        numerical[i, :] = (yp - ym) / (2 * delta)
    return theoretical, numerical


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3, init_targets=None,
                     extra_feed_dict=None):
    """(theoretical, numerical) Jacobians of y w.r.t. x, each of shape (x size, y size), using the
    default session; x is fed (any tensor can be), so it needs no initializer."""
    if isinstance(x, (list, tuple)):
        return [compute_gradient(xi, si, y, y_shape, None if x_init_value is None else x_init_value[i], delta,
                                 init_targets, extra_feed_dict) for i, (xi, si) in enumerate(zip(x, x_shape))]
    if init_targets:
        _session(x).run(init_targets)
    return _jacobians(x, x_shape, y, y_shape, x_init_value, delta, extra_feed_dict)


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3, init_targets=None,
                           extra_feed_dict=None):
    """The largest absolute difference between the theoretical and numerical Jacobians."""
    res = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets, extra_feed_dict)
    pairs = res if isinstance(res, list) else [res]
    return max(float(np.max(np.abs(t - n))) if t.size else 0.0 for t, n in pairs)


def is_built_with_cuda():
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False
    return True


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """True when cupy is installed and sees a GPU."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - no cupy, no driver or no device all mean "no GPU"
        return False
