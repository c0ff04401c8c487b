"""Dense linear algebra on (batches of) square matrices, TF1's `tf.linalg` ops: inverse,
determinants, Cholesky, solves, QR, SVD, self-adjoint eigen, the matrix exponential, and the
diagonal/band ops.

Every op takes [..., M, N] (batch dims first) and runs numpy's batched LAPACK routines: eagerly on
the value, and on Dask as one task over the whole operands (these matrices are small next to the
data, and LAPACK needs whole matrices). A singular or non positive-definite matrix raises
InvalidArgumentError naming the op, as TF1's kernels do. Gradients follow TF 1.15's
`linalg_grad.py` and are written with these ops and matmul, so they are differentiable in turn.
"""

from __future__ import annotations

import collections

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.graph import name_scope
from ..graph.shape import TensorShape, unknown_shape
from .common import apply_op, check_dtype, constant, convert_to_tensor
from .linalg_ops import matmul
from .manip_ops import transpose
from .math_ops import add, cast, log, multiply
from .numpy_kernels import numpy_op
from .reduction_ops import reduce_sum

__all__ = ["matrix_inverse", "matrix_determinant", "log_matrix_determinant", "cholesky", "matrix_solve",
           "matrix_triangular_solve", "qr", "svd", "self_adjoint_eig", "self_adjoint_eigvals", "matrix_band_part",
           "matrix_diag", "matrix_diag_part", "matrix_set_diag", "matrix_transpose", "trace", "cholesky_solve",
           "matrix_solve_ls", "matrix_exponential", "eye", "adjoint", "logdet"]

_FLOATC = "fc"  # float16/32/64, complex64/128


def _fail(op_type, msg):
    raise InvalidArgumentError(None, None, f"{op_type}: {msg}")


# ---- shape rules -----------------------------------------------------------------------------------


def _matrix(t, op_type, square=True, arg="input"):
    """Checks `t` is [..., M, N] (square when asked) of a float/complex dtype; its shape or None."""
    check_dtype(t, _FLOATC, op_type, arg)
    s = t.shape
    if s.ndims is None:
        return None
    if s.ndims < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {s.ndims} for '{op_type}' "
                         f"({arg} {t.name!r} has shape {s})")
    m, n = s.as_list()[-2:]
    if square and m is not None and n is not None and m != n:
        raise ValueError(f"Dimensions must be equal, but are {m} and {n} for '{op_type}': {arg} {t.name!r} of "
                         f"shape {s} is not square")
    return s


def _same_infer(op_type, square=True):
    def infer(inputs, attrs):
        s = _matrix(inputs[0], op_type, square)
        return (s if s is not None else unknown_shape()), inputs[0].dtype

    return infer


def _batch_infer(op_type):
    def infer(inputs, attrs):
        s = _matrix(inputs[0], op_type)
        return (s[:-2] if s is not None else unknown_shape()), inputs[0].dtype

    return infer


def _same_shape(*shapes, **attrs):
    return [shapes[0]]


def _batch_shape(*shapes, **attrs):
    return [shapes[0][:-2]]


# ---- inverse, determinants, Cholesky ---------------------------------------------------------------


def _inverse(xp, a, *, adjoint):
    if adjoint:
        a = np.conj(np.swapaxes(a, -1, -2))
    try:
        return np.linalg.inv(a).astype(a.dtype)
    except np.linalg.LinAlgError:
        _fail("MatrixInverse", "Input is not invertible.")


numpy_op("MatrixInverse", _same_infer("MatrixInverse"), _inverse, _same_shape)


def matrix_inverse(input, adjoint=False, name=None):  # noqa: A002 - TF1 signature
    """The inverse of each square matrix of [..., M, M] `input` (of its adjoint with `adjoint`).
    InvalidArgumentError at run time for a singular matrix."""
    return apply_op("MatrixInverse", [convert_to_tensor(input)], {"adjoint": bool(adjoint)}, name=name)


def _determinant(xp, a):
    return np.linalg.det(a).astype(a.dtype)


numpy_op("MatrixDeterminant", _batch_infer("MatrixDeterminant"), _determinant, _batch_shape)


def matrix_determinant(input, name=None):  # noqa: A002
    """The determinant of each square matrix of [..., M, M] `input`: shape [...]."""
    return apply_op("MatrixDeterminant", [convert_to_tensor(input)], name=name)


def _slogdet(xp, a):
    sign, logabs = np.linalg.slogdet(a)
    return sign.astype(a.dtype), logabs.astype(np.abs(np.zeros((), a.dtype)).dtype)


def _slogdet_infer(inputs, attrs):
    s = _matrix(inputs[0], "LogMatrixDeterminant")
    b = s[:-2] if s is not None else unknown_shape()
    return [(b, inputs[0].dtype), (b, inputs[0].dtype.real_dtype)]


numpy_op("LogMatrixDeterminant", _slogdet_infer, _slogdet, lambda s: [s[:-2], s[:-2]],
    lambda d: [d, np.abs(np.zeros((), d)).dtype], n_out=2)
SlogdetOutput = collections.namedtuple("LogMatrixDeterminant", ["sign", "log_abs_determinant"])


def log_matrix_determinant(input, name=None):  # noqa: A002
    """(sign, log|det|) of each square matrix of [..., M, M] `input` (tf.linalg.slogdet)."""
    return SlogdetOutput(*apply_op("LogMatrixDeterminant", [convert_to_tensor(input)], name=name))


def _cholesky(xp, a):
    try:
        return np.linalg.cholesky(a).astype(a.dtype)
    except np.linalg.LinAlgError:
        _fail("Cholesky", "Cholesky decomposition was not successful. The input might not be valid.")


numpy_op("Cholesky", _same_infer("Cholesky"), _cholesky, _same_shape)


def cholesky(input, name=None):  # noqa: A002
    """The lower-triangular L with L L^H = input for each [..., M, M] Hermitian positive-definite
    matrix (only its lower triangle is read). InvalidArgumentError when one is not."""
    return apply_op("Cholesky", [convert_to_tensor(input)], name=name)


# ---- solves ------------------------------------------------------------------------------------------


def _solve_infer(op_type):
    def infer(inputs, attrs):
        a, b = inputs
        sa = _matrix(a, op_type, arg="matrix")
        sb = _matrix(b, op_type, square=False, arg="rhs")
        if a.dtype != b.dtype:
            raise TypeError(f"{op_type}: matrix and rhs must have one dtype, got {a.dtype.name} and {b.dtype.name}")
        if sa is None or sb is None:
            return unknown_shape(), a.dtype
        if not sa[:-1].is_compatible_with(sb[:-1]):
            raise ValueError(f"Dimensions must be equal for '{op_type}': matrix of shape {sa} and rhs of shape {sb}")
        return sa[:-1].merge_with(sb[:-1]).concatenate(sb[-1:]), a.dtype

    return infer


def _check_solve(op_type, a, b):
    if a.shape[:-1] != b.shape[:-1]:
        _fail(op_type, f"matrix of shape {list(a.shape)} and rhs of shape {list(b.shape)} do not match")


def _solve(xp, a, b, *, adjoint):
    _check_solve("MatrixSolve", a, b)
    if adjoint:
        a = np.conj(np.swapaxes(a, -1, -2))
    try:
        return np.linalg.solve(a, b).astype(b.dtype)
    except np.linalg.LinAlgError:
        _fail("MatrixSolve", "Input matrix is not invertible.")


numpy_op("MatrixSolve", _solve_infer("MatrixSolve"), _solve, lambda sa, sb, **k: [sb])


def matrix_solve(matrix, rhs, adjoint=False, name=None):
    """X with matrix @ X = rhs (adjoint(matrix) @ X with `adjoint`): [..., M, M] and [..., M, K]."""
    return apply_op("MatrixSolve", [convert_to_tensor(matrix), convert_to_tensor(rhs)], {"adjoint": bool(adjoint)},
                    name=name)


def _triangular_solve(xp, a, b, *, lower, adjoint):
    _check_solve("MatrixTriangularSolve", a, b)
    m = a.shape[-1]
    keep = np.tril(np.ones((m, m), bool)) if lower else np.triu(np.ones((m, m), bool))
    a = np.where(keep, a, 0)
    if adjoint:
        a = np.conj(np.swapaxes(a, -1, -2))
    if m and np.any(np.diagonal(a, axis1=-2, axis2=-1) == 0):
        _fail("MatrixTriangularSolve", "Input matrix is not invertible.")
    return np.linalg.solve(a, b).astype(b.dtype) if a.size else np.zeros(b.shape, b.dtype)


numpy_op("MatrixTriangularSolve", _solve_infer("MatrixTriangularSolve"), _triangular_solve, lambda sa, sb, **k: [sb])


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """X with matrix @ X = rhs for triangular `matrix` (its lower triangle with `lower`, else upper;
    the other entries are ignored)."""
    return apply_op("MatrixTriangularSolve", [convert_to_tensor(matrix), convert_to_tensor(rhs)],
                    {"lower": bool(lower), "adjoint": bool(adjoint)}, name=name)


def cholesky_solve(chol, rhs, name=None):
    """X with A X = rhs given chol = cholesky(A): two triangular solves."""

    with name_scope(name, "cholesky_solve", [chol, rhs]):
        y = matrix_triangular_solve(chol, rhs, adjoint=False, lower=True)
        return matrix_triangular_solve(chol, y, adjoint=True, lower=True)


def matrix_solve_ls(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """The least-squares solution of matrix @ X = rhs ([..., M, N], [..., M, K]), as TF1's fast
    path: the normal equations (A^H A + l2 I) X = A^H rhs by Cholesky when M >= N, else
    X = A^H (A A^H + l2 I)^-1 rhs. Differentiable through those ops."""

    with name_scope(name, "matrix_solve_ls", [matrix, rhs]):
        a, b = convert_to_tensor(matrix), convert_to_tensor(rhs)
        m, n = a.shape.as_list()[-2:] if a.shape.ndims else (None, None)
        if m is None or n is None:
            raise ValueError(f"matrix_solve_ls: the matrix dims of {a.name!r} must be known, got {a.shape}")
        reg = multiply(cast(l2_regularizer, a.dtype), eye(min(m, n), dtype=a.dtype))
        if m >= n:
            gram = add(matmul(a, a, adjoint_a=True), reg)
            return cholesky_solve(cholesky(gram), matmul(a, b, adjoint_a=True))
        gram = add(matmul(a, a, adjoint_b=True), reg)
        return matmul(a, cholesky_solve(cholesky(gram), b), adjoint_a=True)


# ---- QR, SVD, eigen --------------------------------------------------------------------------------


def _qr_shapes(s, *, full_matrices):
    m, n = s[-2], s[-1]
    k = m if full_matrices else (min(m, n) if m == m and n == n else np.nan)
    return [s[:-2] + (m, k), s[:-2] + (k, n)]


def _qr_infer(inputs, attrs):
    s = _matrix(inputs[0], "Qr", square=False)
    if s is None:
        return [(unknown_shape(), inputs[0].dtype)] * 2
    b, (m, n) = s[:-2], s.as_list()[-2:]
    k = m if attrs["full_matrices"] else (None if m is None or n is None else min(m, n))
    return [(b.concatenate([m, k]), inputs[0].dtype), (b.concatenate([k, n]), inputs[0].dtype)]


def _qr(xp, a, *, full_matrices):
    q, r = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return q.astype(a.dtype), r.astype(a.dtype)


numpy_op("Qr", _qr_infer, _qr, _qr_shapes, n_out=2)
QrOutput = collections.namedtuple("Qr", ["q", "r"])


def qr(input, full_matrices=False, name=None):  # noqa: A002
    """(q, r) with input = q @ r for each [..., M, N] matrix; q [..., M, P], r [..., P, N] with
    P = min(M, N) (P = M with `full_matrices`). Differentiable as TF 2.x: reduced factors, or M < N."""
    return QrOutput(*apply_op("Qr", [convert_to_tensor(input)], {"full_matrices": bool(full_matrices)}, name=name))


def _svd_dims(m, n, full):
    p = None if m is None or n is None else min(m, n)
    return p, (m if full else p), (n if full else p)


def _svd_infer(inputs, attrs):
    s = _matrix(inputs[0], "Svd", square=False)
    real = inputs[0].dtype.real_dtype
    if s is None:
        return [(unknown_shape(), real), (unknown_shape(), inputs[0].dtype), (unknown_shape(), inputs[0].dtype)]
    b, (m, n) = s[:-2], s.as_list()[-2:]
    p, mu, nv = _svd_dims(m, n, attrs["full_matrices"])
    if not attrs["compute_uv"]:
        return [(b.concatenate([p]), real), (TensorShape([0]), inputs[0].dtype), (TensorShape([0]), inputs[0].dtype)]
    return [(b.concatenate([p]), real), (b.concatenate([m, mu]), inputs[0].dtype),
            (b.concatenate([n, nv]), inputs[0].dtype)]


def _svd_shapes(s, *, full_matrices, compute_uv):
    b, m, n = s[:-2], s[-2], s[-1]
    p = min(m, n)
    if not compute_uv:
        return [b + (p,), (0,), (0,)]
    return [b + (p,), b + (m, m if full_matrices else p), b + (n, n if full_matrices else p)]


def _svd(xp, a, *, full_matrices, compute_uv):
    real = np.abs(np.zeros((), a.dtype)).dtype
    if not compute_uv:
        return np.linalg.svd(a, compute_uv=False).astype(real), np.zeros((0,), a.dtype), np.zeros((0,), a.dtype)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return s.astype(real), u.astype(a.dtype), np.conj(np.swapaxes(vh, -1, -2)).astype(a.dtype)


numpy_op("Svd", _svd_infer, _svd, _svd_shapes, lambda d, **k: [np.abs(np.zeros((), d)).dtype, d, d], n_out=3)


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """Singular values s (descending) and, with `compute_uv`, u and v with tensor = u diag(s) v^H,
    for each [..., M, N] matrix: returns (s, u, v), or s alone when not `compute_uv` (TF1's order).
    Differentiable as TF: full u and v only when |M - N| <= 1."""
    s, u, v = apply_op("Svd", [convert_to_tensor(tensor)],
                       {"full_matrices": bool(full_matrices), "compute_uv": bool(compute_uv)}, name=name)
    return (s, u, v) if compute_uv else s


def _eig_infer(inputs, attrs):
    s = _matrix(inputs[0], "SelfAdjointEigV2")
    real = inputs[0].dtype.real_dtype
    if s is None:
        return [(unknown_shape(), real), (unknown_shape(), inputs[0].dtype)]
    return [(s[:-1], real), (s if attrs["compute_v"] else TensorShape([0]), inputs[0].dtype)]


def _eigh(xp, a, *, compute_v):
    real = np.abs(np.zeros((), a.dtype)).dtype
    if not compute_v:
        return np.linalg.eigvalsh(a, UPLO="L").astype(real), np.zeros((0,), a.dtype)
    e, v = np.linalg.eigh(a, UPLO="L")
    return e.astype(real), v.astype(a.dtype)


numpy_op("SelfAdjointEigV2", _eig_infer, _eigh, lambda s, *, compute_v: [s[:-1], s if compute_v else (0,)],
    lambda d, **k: [np.abs(np.zeros((), d)).dtype, d], n_out=2)


def self_adjoint_eig(tensor, name=None):
    """(e, v): the eigenvalues (ascending) and eigenvectors of each [..., N, N] self-adjoint
    matrix (its lower triangle is read)."""
    e, v = apply_op("SelfAdjointEigV2", [convert_to_tensor(tensor)], {"compute_v": True}, name=name)
    return e, v


def self_adjoint_eigvals(tensor, name=None):
    """The eigenvalues (ascending) of each [..., N, N] self-adjoint matrix."""
    return apply_op("SelfAdjointEigV2", [convert_to_tensor(tensor)], {"compute_v": False}, name=name)[0]


# ---- the matrix exponential (scaling and squaring with a [13/13] Padé approximant) -------------------

_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
           10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.)


def _expm_one(a):
    """exp(a) of one square float64/complex128 matrix (Higham 2005, the [13/13] approximant only)."""
    n = a.shape[-1]
    norm = np.linalg.norm(a, 1) if n else 0.0
    s = max(0, int(np.ceil(np.log2(norm / 5.371920351148152)))) if norm > 0 else 0
    a = a / (2.0 ** s)
    b, ident = _PADE13, np.eye(n, dtype=a.dtype)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident
    r = np.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = r @ r
    return r


def _expm(xp, a):
    wide = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
    flat = wide.reshape((-1,) + a.shape[-2:])
    out = np.stack([_expm_one(m) for m in flat]) if len(flat) else flat
    return out.reshape(a.shape).astype(a.dtype)


numpy_op("MatrixExponential", _same_infer("MatrixExponential"), _expm, _same_shape)


def matrix_exponential(input, name=None):  # noqa: A002
    """exp(input) for each [..., M, M] matrix (tf.linalg.expm): scaling and squaring with a Padé
    approximant, in float64."""
    return apply_op("MatrixExponential", [convert_to_tensor(input)], name=name)


# ---- diagonals and bands -----------------------------------------------------------------------------


def _any_matrix(t, op_type):
    s = t.shape
    if s.ndims is not None and s.ndims < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {s.ndims} for '{op_type}' ({t.name!r})")
    return s if s.ndims is not None else None


def _band_infer(inputs, attrs):
    s = _any_matrix(inputs[0], "MatrixBandPart")
    return (s if s is not None else unknown_shape()), inputs[0].dtype


def _band(xp, a, lower, upper):
    m, n = a.shape[-2:]
    lower, upper = int(lower), int(upper)
    if lower > m or upper > n:
        _fail("MatrixBandPart", f"num_lower ({lower}) must be negative or less or equal to number of rows ({m}), "
              f"num_upper ({upper}) to number of columns ({n})")
    i, j = np.arange(m)[:, None], np.arange(n)[None, :]
    keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
    return np.where(keep, a, np.zeros((), a.dtype))


numpy_op("MatrixBandPart", _band_infer, _band, lambda s, *rest: [s])


def matrix_band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """`input` with entries outside the band zeroed: kept where (num_lower < 0 or i - j <= num_lower)
    and (num_upper < 0 or j - i <= num_upper). tf.linalg.band_part."""
    x = convert_to_tensor(input)
    lo = convert_to_tensor(num_lower, dtype=dtypes.int64)
    hi = convert_to_tensor(num_upper, dtype=dtypes.int64)
    return apply_op("MatrixBandPart", [x, lo, hi], name=name)


def _diag_infer(inputs, attrs):
    s = inputs[0].shape
    if s.ndims == 0:
        raise ValueError(f"Shape must be at least rank 1 but is rank 0 for 'MatrixDiag' ({inputs[0].name!r})")
    return (s.concatenate(s[-1:]) if s.ndims is not None else unknown_shape()), inputs[0].dtype


def _diag(xp, d):
    n = d.shape[-1]
    out = np.zeros(d.shape + (n,), d.dtype)
    idx = np.arange(n)
    out[..., idx, idx] = d
    return out


numpy_op("MatrixDiag", _diag_infer, _diag, lambda s: [s + s[-1:]])


def matrix_diag(diagonal, name=None):
    """[..., N] -> [..., N, N] with `diagonal` on the main diagonal, zeros elsewhere."""
    return apply_op("MatrixDiag", [convert_to_tensor(diagonal)], name=name)


def _diag_part_infer(inputs, attrs):
    s = _any_matrix(inputs[0], "MatrixDiagPart")
    if s is None:
        return unknown_shape(), inputs[0].dtype
    m, n = s.as_list()[-2:]
    return s[:-2].concatenate([None if m is None or n is None else min(m, n)]), inputs[0].dtype


def _diag_part(xp, a):
    return np.ascontiguousarray(np.diagonal(a, axis1=-2, axis2=-1))


numpy_op("MatrixDiagPart", _diag_part_infer, _diag_part, lambda s: [s[:-2] + (min(s[-2], s[-1]),)])


def matrix_diag_part(input, name=None):  # noqa: A002
    """The main diagonal of each [..., M, N] matrix: [..., min(M, N)]."""
    return apply_op("MatrixDiagPart", [convert_to_tensor(input)], name=name)


def _set_diag_infer(inputs, attrs):
    x, d = inputs
    s = _any_matrix(x, "MatrixSetDiag")
    if s is not None and d.shape.ndims is not None:
        want, _ = _diag_part_infer([x], attrs)
        if not want.is_compatible_with(d.shape):
            raise ValueError(f"MatrixSetDiag: diagonal of shape {d.shape} does not fit input of shape {s} "
                             f"(expected {want})")
    return (s if s is not None else unknown_shape()), x.dtype


def _set_diag(xp, a, d):
    k = min(a.shape[-2:])
    if d.shape != a.shape[:-2] + (k,):
        _fail("MatrixSetDiag", f"diagonal of shape {list(d.shape)} does not fit input of shape {list(a.shape)}")
    out = np.array(a, copy=True)
    idx = np.arange(k)
    out[..., idx, idx] = d
    return out


numpy_op("MatrixSetDiag", _set_diag_infer, _set_diag, lambda s, sd: [s])


def matrix_set_diag(input, diagonal, name=None):  # noqa: A002
    """`input` with its main diagonal replaced by `diagonal` ([..., min(M, N)])."""
    return apply_op("MatrixSetDiag", [convert_to_tensor(input), convert_to_tensor(diagonal)], name=name)


# ---- composites -----------------------------------------------------------------------------------------


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """Swaps the last two dims of [..., M, N] `a` (conjugating with `conjugate`)."""

    a = convert_to_tensor(a)
    n = a.shape.ndims
    if n is None:
        raise ValueError(f"matrix_transpose: the rank of {a.name!r} must be known")
    if n < 2:
        raise ValueError(f"Argument 'a' should be a (batch) matrix, with rank >= 2.  Found: {a.shape}")
    return transpose(a, list(range(n - 2)) + [n - 1, n - 2], name=name, conjugate=conjugate)


def adjoint(matrix, name=None):
    """The conjugate transpose of each [..., M, N] matrix."""
    return matrix_transpose(matrix, name=name or "adjoint", conjugate=True)


def trace(x, name=None):
    """The sum of the main diagonal of each [..., M, N] matrix: shape [...]."""

    return reduce_sum(matrix_diag_part(x), axis=-1, name=name or "trace")


def logdet(matrix, name=None):
    """log(det(matrix)) of Hermitian positive-definite matrices: 2 sum(log(diag(cholesky)))."""

    with name_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        return multiply(2.0, reduce_sum(log(matrix_diag_part(chol)), axis=-1))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """An identity matrix [num_rows, num_columns] (square by default), broadcast over `batch_shape`."""

    cols = num_rows if num_columns is None else num_columns
    value = np.eye(int(num_rows), int(cols), dtype=dtypes.as_dtype(dtype).np_dtype)
    if batch_shape is not None:
        value = np.broadcast_to(value, tuple(int(b) for b in batch_shape) + value.shape).copy()
    return constant(value, dtype=dtype, name=name or "eye")
