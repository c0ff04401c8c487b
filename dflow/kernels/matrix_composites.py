"""tf.linalg names TF builds from other ops, built the same way (their gradients come with the
ops): `pinv` and `matrix_rank` from the SVD (TF's cutoffs), `matvec`, `normalize`.
"""

from __future__ import annotations

import collections

import numpy as np

from ..graph.graph import name_scope
from .common import convert_to_tensor
from .linalg_ops import matmul, norm
from .manip_ops import expand_dims, squeeze
from .math_ops import cast, greater, realdiv, where
from .matrix_ops import svd
from .reduction_ops import reduce_max, reduce_sum

__all__: list[str] = []  # tf.linalg only (dflow/linalg.py)

Normalized = collections.namedtuple("Normalized", ["normalized", "norm"])


def _eps(t):
    return float(np.finfo(t.dtype.real_dtype.np_dtype).eps)


def _rows_cols(a, what):
    s = a.shape.as_list() if a.shape.ndims is not None else None
    if s is None or len(s) < 2 or s[-1] is None or s[-2] is None:
        raise ValueError(f"{what}: the last two dimensions of {a.name!r} must be known, got {a.shape}")
    return s[-2], s[-1]


def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse of each [..., M, N] matrix: [..., N, M]. Singular values
    at or below rcond * max(s) count as zero (rcond defaults to 10 * max(M, N) * eps, as TF)."""
    with name_scope(name, "pinv", [a]):
        a = convert_to_tensor(a, name="a")
        m, n = _rows_cols(a, "pinv")
        if rcond is None:
            rcond = 10.0 * max(m, n) * _eps(a)
        s, u, v = svd(a, full_matrices=False, compute_uv=True)
        cutoff = rcond * reduce_max(s, axis=-1, keepdims=True)
        s = where(greater(s, cutoff), s, s * 0 + np.inf)
        return matmul(realdiv(v, expand_dims(s, -2)), u, adjoint_b=True)


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values of each [..., M, N] matrix above `tol` (default
    max(M, N) * eps * max(s), as TF): int32 [...]."""
    with name_scope(name, "matrix_rank", [a]):
        a = convert_to_tensor(a, name="a")
        m, n = _rows_cols(a, "matrix_rank")
        s = svd(a, compute_uv=False)
        if tol is None:
            tol = max(m, n) * _eps(a) * reduce_max(s, axis=-1, keepdims=True)
        return reduce_sum(cast(greater(s, tol), "int32"), axis=-1)


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False, name=None):
    """a @ b for [..., M, N] matrices `a` and [..., N] vectors `b`: [..., M]."""
    with name_scope(name, "MatVec", [a, b]):
        out = matmul(a, expand_dims(convert_to_tensor(b, name="b"), -1), transpose_a=transpose_a,
                     adjoint_a=adjoint_a)
        return squeeze(out, axis=-1)


def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002 - TF's signature
    """(tensor / norm, norm) with the norm of `tf.norm` kept with its reduced dims."""
    with name_scope(name, "normalize", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        n = norm(tensor, ord=ord, axis=axis, keepdims=True)
        return Normalized(realdiv(tensor, n), n)
