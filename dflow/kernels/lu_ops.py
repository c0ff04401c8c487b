"""The LU factorization (TF's `Lu` op) and TF's composites over it: `lu_solve`, `lu_reconstruct`,
`lu_matrix_inverse`.

`lu` packs L (unit lower, diagonal implied) and U into one [..., M, M] matrix and returns the row
permutation `p` with input[..., p, :] = L @ U (LAPACK's getrf: partial pivoting on the largest
|entry| of the column, the first on a tie). The kernel is a small Doolittle elimination vectorized
over the batch (numpy has no LU); a zero pivot raises InvalidArgumentError as TF's kernel does.
Like TF, `Lu` has no gradient (LookupError). The composites apply the permutation as a one-hot matrix product
(TF gathers), so they are differentiable in `lower_upper` and `rhs`.
"""

from __future__ import annotations

import collections

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.graph import name_scope
from ..graph.shape import unknown_shape
from .common import apply_op, check_dtype, convert_to_tensor
from .gather_ops import one_hot
from .linalg_ops import matmul
from .math_ops import add, cast
from .matrix_ops import matrix_band_part, matrix_diag_part, matrix_set_diag, matrix_triangular_solve
from .numpy_kernels import numpy_op

__all__: list[str] = []  # tf.linalg only (dflow/linalg.py)

LuOutput = collections.namedtuple("Lu", ["lu", "p"])


def _lu_infer(inputs, attrs):
    (a,) = inputs
    check_dtype(a, "fc", "Lu", "input")
    s = a.shape
    idx = dtypes.as_dtype(attrs["output_idx_type"])
    if s.ndims is None:
        return [(unknown_shape(), a.dtype), (unknown_shape(), idx)]
    if s.ndims < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {s.ndims} for 'Lu' (input {a.name!r})")
    m, n = s.as_list()[-2:]
    if m is not None and n is not None and m != n:
        raise ValueError(f"Dimensions must be equal, but are {m} and {n} for 'Lu': input {a.name!r} of shape {s} "
                         f"is not square")
    return [(s, a.dtype), (s[:-1], idx)]


def _lu(xp, a, *, output_idx_type):
    """Doolittle elimination with partial pivoting on every matrix of the batch at once."""
    lu = a.reshape((-1,) + a.shape[-2:]).copy()
    b, n = lu.shape[0], a.shape[-1]
    perm = np.tile(np.arange(n), (b, 1))
    rows = np.arange(b)
    for k in range(n):
        piv = k + np.argmax(np.abs(lu[:, k:, k]), axis=1)
        lu[rows, [k], :], lu[rows, piv, :] = lu[rows, piv, :], lu[rows, [k], :].copy()  # noqa: RUF005
        perm[rows, k], perm[rows, piv] = perm[rows, piv], perm[rows, k].copy()
        pivot = lu[:, k, k]
        if np.any(pivot == 0) or not np.all(np.isfinite(pivot)):
            raise InvalidArgumentError(None, None, "Lu: Input is not invertible.")
        lu[:, k + 1:, k] /= pivot[:, None]
        lu[:, k + 1:, k + 1:] -= lu[:, k + 1:, k:k + 1] * lu[:, k:k + 1, k + 1:]
    idx = dtypes.as_dtype(output_idx_type).np_dtype
    return lu.reshape(a.shape), perm.reshape(a.shape[:-1]).astype(idx)


numpy_op("Lu", _lu_infer, _lu, lambda s, **k: [s, s[:-1]],
         lambda d, *, output_idx_type: [d, dtypes.as_dtype(output_idx_type).np_dtype], n_out=2)


def lu(input, output_idx_type=dtypes.int32, name=None):  # noqa: A002 - TF's signature
    """(lu, p): the LU factorization with partial pivoting of each [..., M, M] float/complex
    matrix, L and U packed into `lu` (L's unit diagonal implied), `p` [..., M] (int32 or int64)
    with input[..., p, :] = L @ U. InvalidArgumentError at run time for a singular matrix."""
    idx = dtypes.as_dtype(output_idx_type)
    if idx not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"Lu: output_idx_type must be int32 or int64, got {idx.name}")
    out = apply_op("Lu", [convert_to_tensor(input)], {"output_idx_type": idx.name}, name=name)
    return LuOutput(*out)


# ---- TF's composites over the factorization ---------------------------------------------------------


def _checked(lower_upper, perm, what):
    lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
    perm = convert_to_tensor(perm, name="perm")
    r, pr = lower_upper.shape.ndims, perm.shape.ndims
    if r is not None and r < 2:
        raise ValueError(f"{what}: Input `lower_upper` must have at least 2 dimensions, got shape "
                         f"{lower_upper.shape}")
    if r is not None and pr is not None and r != pr + 1:
        raise ValueError(f"{what}: `rank(lower_upper)` must equal `rank(perm) + 1`, got shapes {lower_upper.shape} "
                         f"and {perm.shape}")
    if r is not None:
        m, n = lower_upper.shape.as_list()[-2:]
        if m is not None and n is not None and m != n:
            raise ValueError(f"{what}: `lower_upper` must be square, got shape {lower_upper.shape}")
    return lower_upper, perm


def _permutation(perm, n, dtype):
    """P with P[..., i, j] = 1 where perm[..., i] = j: (P @ x) is x[..., perm, :]."""
    return cast(one_hot(perm, n, dtype=dtypes.float64), dtype)


def _lower(lower_upper):
    ones = add(matrix_diag_part(lower_upper) * 0, 1)
    return matrix_set_diag(matrix_band_part(lower_upper, -1, 0), ones)


def _order(t, what):
    n = t.shape.as_list()[-1] if t.shape.ndims is not None else None
    if n is None:
        raise ValueError(f"{what}: the matrix order (last dimension of {t.name!r}) must be known, got {t.shape}")
    return n


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """X with A @ X = rhs from A's factorization (`tf.linalg.lu`): lower_upper [..., M, M],
    perm [..., M], rhs [..., M, K]. Does not check that A is invertible (as TF)."""
    with name_scope(name, "lu_solve", [lower_upper, perm, rhs]):
        lower_upper, perm = _checked(lower_upper, perm, "lu_solve")
        rhs = convert_to_tensor(rhs, name="rhs")
        if rhs.shape.ndims is not None and rhs.shape.ndims < 2:
            raise ValueError(f"lu_solve: Input `rhs` must have at least 2 dimensions, got shape {rhs.shape}")
        n = _order(lower_upper, "lu_solve")
        k = rhs.shape.as_list()[-2] if rhs.shape.ndims is not None else None
        if k is not None and k != n:
            raise ValueError(f"lu_solve: `lower_upper.shape[-1]` must equal `rhs.shape[-2]`, got {n} and {k}")
        permuted = matmul(_permutation(perm, n, lower_upper.dtype), rhs)
        y = matrix_triangular_solve(_lower(lower_upper), permuted, lower=True)
        return matrix_triangular_solve(lower_upper, y, lower=False)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None):
    """The inverse of A from its factorization (`tf.linalg.lu`): [..., M, M]."""
    with name_scope(name, "lu_matrix_inverse", [lower_upper, perm]):
        lower_upper, perm = _checked(lower_upper, perm, "lu_matrix_inverse")
        ident = matrix_set_diag(lower_upper * 0, add(matrix_diag_part(lower_upper) * 0, 1))  # batch-shaped eye
        return lu_solve(lower_upper, perm, ident)


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    """A from its factorization (`tf.linalg.lu`): P^T @ L @ U, [..., M, M]."""
    with name_scope(name, "lu_reconstruct", [lower_upper, perm]):
        lower_upper, perm = _checked(lower_upper, perm, "lu_reconstruct")
        n = _order(lower_upper, "lu_reconstruct")
        lu_product = matmul(_lower(lower_upper), matrix_band_part(lower_upper, 0, -1))
        return matmul(_permutation(perm, n, lower_upper.dtype), lu_product, transpose_a=True)
