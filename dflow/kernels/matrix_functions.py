"""Primary matrix functions TF has beside expm: the principal square root (`MatrixSquareRoot`,
tf.linalg.sqrtm) and the principal logarithm (`MatrixLogarithm`, tf.linalg.logm, complex only).

TF runs Eigen's Schur methods; numpy has no Schur decomposition, so the square root is the
Denman–Beavers iteration in product form with determinant scaling (quadratic convergence for a
matrix with no eigenvalue on the closed negative real axis), falling back to the eigenvector
formula V sqrt(w) V^-1 where it does not converge (a complex matrix with an eigenvalue on the
branch cut). The logarithm is inverse scaling and squaring: square roots until A is near I, then
the [8/8] Padé approximant of log(I + X) (as Gauss–Legendre quadrature), times 2^s. A real
matrix with a negative real eigenvalue has no real square root and, as TF, gives NaN; a singular
matrix too. The square root's gradient is TF's: the Sylvester equation R^T Y + Y R^T = g solved
as one Kronecker-product system; the logarithm has none (as TF).
"""

from __future__ import annotations

import numpy as np

from ..graph.registry import def_grad
from .common import apply_op, convert_to_tensor
from .manip_ops import expand_dims, reshape
from .math_ops import add, multiply
from .matrix_ops import (
    _same_infer,
    _same_shape,
    matrix_diag_part,
    matrix_set_diag,
    matrix_solve,
    matrix_transpose,
)
from .numpy_kernels import numpy_op

__all__ = ["matrix_square_root"]  # top level (TF1's tf.matrix_square_root); logm is tf.linalg only

# ---- the square root ---------------------------------------------------------------------------------


def _db_sqrt(a):
    """Denman–Beavers (product form, determinant scaling) on a batch [B, N, N]; (X, converged [B])."""
    n = a.shape[-1]
    ident = np.eye(n, dtype=a.dtype)
    x, m = a.copy(), a.copy()
    for _ in range(60):  # Higham, Functions of Matrices (6.28)
        with np.errstate(all="ignore"):
            det = np.abs(np.linalg.det(m))
            mu = np.where(det > 0, det ** (-1.0 / (2 * n)), 1.0)[:, None, None]
            minv = np.linalg.inv(m) / mu ** 2
            x = (mu / 2) * (x @ (ident + minv))
            m = (ident + (mu ** 2 * m + minv) / 2) / 2
        if not np.all(np.abs(m - ident).max(axis=(-2, -1)) > 1e-15):
            break
    with np.errstate(all="ignore"):
        scale = np.maximum(np.abs(a).max(axis=(-2, -1)), np.finfo(np.float64).tiny)
        ok = np.abs(x @ x - a).max(axis=(-2, -1)) <= 1e-8 * scale
    return x, ok


def _sqrt_batch(a):
    """The principal square root of each complex128 matrix of [B, N, N] (NaN where none)."""
    if a.shape[0] == 0 or a.shape[-1] == 0:
        return a.copy()
    with np.errstate(all="ignore"):
        singular = np.linalg.matrix_rank(a) < a.shape[-1] if a.shape[-1] else np.zeros(len(a), bool)
        x, ok = _db_sqrt(np.where(singular[:, None, None], np.eye(a.shape[-1]), a))
        for i in np.flatnonzero(~ok & ~singular):
            w, v = np.linalg.eig(a[i])
            x[i] = (v * np.sqrt(w)) @ np.linalg.inv(v)
    x[singular] = np.nan
    return x


def _sqrtm(xp, a):
    flat = a.reshape((-1,) + a.shape[-2:]).astype(np.complex128)
    out = _sqrt_batch(flat)
    if not np.iscomplexobj(a):
        # a real matrix has a real principal root iff it has no negative real eigenvalue; TF gives NaN otherwise
        with np.errstate(all="ignore"):
            scale = np.maximum(np.abs(out).max(axis=(-2, -1)), 1.0)
            real = np.abs(out.imag).max(axis=(-2, -1), initial=0.0) <= 1e-7 * scale
        out = np.where(real[:, None, None], out.real, np.nan)
    return out.reshape(a.shape).astype(a.dtype)


numpy_op("MatrixSquareRoot", _same_infer("MatrixSquareRoot"), _sqrtm, _same_shape)


def matrix_square_root(input, name=None):  # noqa: A002 - TF's signature
    """The principal square root of each [..., M, M] float/complex matrix (tf.linalg.sqrtm):
    R @ R = input. NaN for a matrix without one (a real matrix with a negative eigenvalue, a
    singular one)."""
    return apply_op("MatrixSquareRoot", [convert_to_tensor(input)], name=name)


def _kron_batch(b1, b2, n):
    """The Kronecker product of two batches of [..., n, n] matrices: [..., n*n, n*n]."""
    k = multiply(expand_dims(expand_dims(b1, -1), -3), expand_dims(expand_dims(b2, -3), -2))
    batch = b1.shape.as_list()[:-2]
    return reshape(k, [-1 if d is None else d for d in batch] + [n * n, n * n])


@def_grad("MatrixSquareRoot")
def _sqrtm_grad(op, g):
    """TF's rule: vec(dA) from (I kron R^T + R kron I) vec(dR) = vec(g), column-major vec."""
    r = op.outputs[0]
    s = r.shape.as_list() if r.shape.ndims is not None else None
    if s is None or s[-1] is None or any(d is None for d in s[:-2]):
        raise NotImplementedError(f"MatrixSquareRoot gradient needs a known shape, got {r.shape} for {r.name!r}")
    n = s[-1]
    ident = matrix_set_diag(r * 0, add(matrix_diag_part(r) * 0, 1))
    ksum = add(_kron_batch(ident, matrix_transpose(r), n), _kron_batch(r, ident, n))
    vec_g = reshape(matrix_transpose(g), s[:-2] + [n * n, 1])
    return [matrix_transpose(reshape(matrix_solve(ksum, vec_g), s))]


# ---- the logarithm -----------------------------------------------------------------------------------

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(8)


def _log_near_identity(x):
    """log(I + x) for ||x|| < 1/4: the [8/8] Padé approximant, sum_j w_j x (I + t_j x)^-1."""
    ident = np.eye(x.shape[-1], dtype=x.dtype)
    out = np.zeros_like(x)
    for node, weight in zip(_GL_NODES, _GL_WEIGHTS):
        t = (node + 1) / 2
        out += (weight / 2) * np.linalg.solve((ident + t * x).swapaxes(-1, -2), x.swapaxes(-1, -2)).swapaxes(-1, -2)
    return out


def _logm(xp, a):
    flat = a.reshape((-1,) + a.shape[-2:]).astype(np.complex128)
    n = a.shape[-1]
    if flat.shape[0] == 0 or n == 0:
        return a.copy()
    ident = np.eye(n)
    with np.errstate(all="ignore"):
        singular = np.linalg.matrix_rank(flat) < n
        x = np.where(singular[:, None, None], ident, flat)
        s = np.zeros(len(x), int)
        for _ in range(64):  # square roots until every matrix is within 1/4 of I (in the 1-norm)
            far = np.abs(x - ident).sum(axis=-2).max(axis=-1) > 0.25
            if not far.any():
                break
            x[far] = _sqrt_batch(x[far])
            s[far] += 1
        out = _log_near_identity(x - ident) * (2.0 ** s)[:, None, None]
    out[singular] = complex(np.nan, np.nan)
    return out.reshape(a.shape).astype(a.dtype)


def _logm_infer(inputs, attrs):
    if inputs[0].dtype.np_dtype.kind != "c":
        raise TypeError(f"Value passed to parameter 'input' has DataType {inputs[0].dtype.name} not in list of "
                        f"allowed values: complex64, complex128 (op 'MatrixLogarithm', tensor {inputs[0].name!r})")
    return _same_infer("MatrixLogarithm")(inputs, attrs)


numpy_op("MatrixLogarithm", _logm_infer, _logm, _same_shape)


def matrix_logarithm(input, name=None):  # noqa: A002 - TF's signature
    """The principal logarithm of each [..., M, M] complex matrix (tf.linalg.logm): expm(out) =
    input. TypeError for a real dtype (as TF); NaN for a singular matrix."""
    return apply_op("MatrixLogarithm", [convert_to_tensor(input)], name=name)

