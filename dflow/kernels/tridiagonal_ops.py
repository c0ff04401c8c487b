"""Tridiagonal matrices, TF's `tf.linalg` names for them: `tridiagonal_solve` (the
`TridiagonalSolve` op: Gaussian elimination vectorized over the batch, LAPACK gtsv's partial
pivoting or none), `tridiagonal_matmul` and `eigh_tridiagonal` (composites).

Diagonals come in TF's three formats: `compact` [..., 3, M] (superdiagonal, diagonal,
subdiagonal; diagonals[..., 0, M-1] and diagonals[..., 2, 0] are ignored), `sequence` (three
tensors, the off-diagonals [..., M] or [..., M-1]) and `matrix` [..., M, M] (entries off the three
diagonals ignored). As TF's kernel, a singular system gives NaN or inf rather than an error.
The solve's gradient is TF's (a solve with the transposed matrix); the composites differentiate
through their ops.
"""

from __future__ import annotations

import numpy as np

from ..graph.graph import name_scope
from ..graph.registry import def_grad
from ..graph.shape import unknown_shape
from .array_ops import stack
from .common import apply_op, check_dtype, convert_to_tensor
from .complex_ops import conj
from .data_dependent_ops import boolean_mask
from .manip_ops import expand_dims, squeeze
from .math_ops import add, greater, less_equal, logical_and, multiply, negative
from .matrix_ops import matrix_diag, matrix_diag_part, matrix_transpose, self_adjoint_eig
from .numpy_kernels import numpy_op
from .pad_ops import pad
from .reduction_ops import reduce_sum

__all__: list[str] = []  # tf.linalg only (dflow/linalg.py)

# ---- the TridiagonalSolve op ------------------------------------------------------------------------


def _solve_infer(inputs, attrs):
    diags, rhs = inputs
    check_dtype(diags, "fc", "TridiagonalSolve", "diagonals")
    if diags.dtype != rhs.dtype:
        raise TypeError(f"Input 'rhs' of 'TridiagonalSolve' Op has type {rhs.dtype.name} that does not match type "
                        f"{diags.dtype.name} of argument 'diagonals'.")
    ds, rs = diags.shape, rhs.shape
    if ds.ndims is not None and ds.ndims < 2:
        raise ValueError(f"TridiagonalSolve: diagonals {diags.name!r} must be at least rank 2, got {ds}")
    if rs.ndims is not None and rs.ndims < 2:
        raise ValueError(f"TridiagonalSolve: rhs {rhs.name!r} must be at least rank 2, got {rs}")
    if ds.ndims is None or rs.ndims is None:
        return rs if rs.ndims is not None else unknown_shape(), rhs.dtype
    if ds[-2] is not None and ds[-2] != 3:
        raise ValueError(f"TridiagonalSolve: Expected 3 diagonals got {ds[-2]} (diagonals {diags.name!r} of shape {ds})")
    if not ds[:-2].is_compatible_with(rs[:-2]) or not ds[-1:].is_compatible_with(rs[-2:-1]):
        raise ValueError(f"TridiagonalSolve: diagonals of shape {ds} and rhs of shape {rs} do not match "
                         f"(want [..., 3, M] and [..., M, K])")
    return rs, rhs.dtype


def _tridiagonal_solve(xp, diags, rhs, *, partial_pivoting, perturb_singular):
    """LAPACK gtsv on every system of the batch at once; the fill-in of pivoting goes in du2."""
    if diags.shape[:-2] != rhs.shape[:-2] or diags.shape[-1] != rhs.shape[-2]:
        raise ValueError(f"TridiagonalSolve: diagonals of shape {list(diags.shape)} and rhs of shape "
                         f"{list(rhs.shape)} do not match")
    m = diags.shape[-1]
    flat = diags.reshape((-1, 3, m))
    du, d, dl = (flat[:, i].astype(rhs.dtype) for i in range(3))  # dl[i] = A[i, i-1]
    b = rhs.reshape((-1, m, rhs.shape[-1])).astype(rhs.dtype).copy()
    du2 = np.zeros_like(d)
    d, du = d.copy(), du.copy()
    with np.errstate(all="ignore"):
        if perturb_singular and m:
            eps = np.finfo(np.abs(np.zeros((), d.dtype)).dtype).eps
            tiny = eps * np.maximum(np.abs(flat).max(axis=(-2, -1)), 1.0)
        for i in range(m - 1):
            sub = dl[:, i + 1]
            swap = np.abs(sub) > np.abs(d[:, i]) if partial_pivoting else np.zeros(len(d), bool)
            # without a swap: row i+1 -= f * row i
            f = sub / np.where(swap, 1, d[:, i])
            # with a swap: rows i and i+1 trade places, then the new row i+1 -= f * the new row i
            g = d[:, i] / np.where(swap, sub, 1)
            nxt_du = du[:, i + 1] if i + 1 < m - 1 else np.zeros_like(sub)
            keep_d1 = d[:, i + 1] - f * du[:, i]
            swap_d1 = du[:, i] - g * d[:, i + 1]
            du2[:, i] = np.where(swap, nxt_du, 0)
            new_du_i = np.where(swap, d[:, i + 1], du[:, i])
            if i + 1 < m - 1:
                du[:, i + 1] = np.where(swap, -g * nxt_du, du[:, i + 1])
            d[:, i] = np.where(swap, sub, d[:, i])
            d[:, i + 1] = np.where(swap, swap_d1, keep_d1)
            du[:, i] = new_du_i
            bi, bj = b[:, i].copy(), b[:, i + 1].copy()
            sw = swap[:, None]
            b[:, i] = np.where(sw, bj, bi)
            b[:, i + 1] = np.where(sw, bi - g[:, None] * bj, bj - f[:, None] * bi)
            if perturb_singular:
                d[:, i] = np.where(d[:, i] == 0, tiny, d[:, i])
        if perturb_singular and m:
            d[:, m - 1] = np.where(d[:, m - 1] == 0, tiny, d[:, m - 1])
        x = np.zeros_like(b)
        for i in range(m - 1, -1, -1):
            acc = b[:, i]
            if i + 1 < m:
                acc = acc - du[:, i, None] * x[:, i + 1]
            if i + 2 < m:
                acc = acc - du2[:, i, None] * x[:, i + 2]
            x[:, i] = acc / d[:, i, None]
    return x.reshape(rhs.shape)


numpy_op("TridiagonalSolve", _solve_infer, _tridiagonal_solve, lambda sd, sr, **k: [sr],
         lambda dd, dr, **k: [dr])


def _transposed(diags):
    """The compact diagonals of the transposed matrix (TF's _TransposeTridiagonalMatrix)."""
    rank = diags.shape.ndims
    zeros = [[0, 0]] * (rank - 2)
    superdiag = pad(diags[..., 2, 1:], zeros + [[0, 1]])
    subdiag = pad(diags[..., 0, :-1], zeros + [[1, 0]])
    return stack([superdiag, diags[..., 1, :], subdiag], axis=-2)


def _shift_up(x):  # x[..., i+1, :] at row i (TF's _LeftShift)
    return pad(x[..., 1:, :], [[0, 0]] * (x.shape.ndims - 2) + [[0, 1], [0, 0]])


def _shift_down(x):  # x[..., i-1, :] at row i (TF's _RightShift)
    return pad(x[..., :-1, :], [[0, 0]] * (x.shape.ndims - 2) + [[1, 0], [0, 0]])


@def_grad("TridiagonalSolve")
def _tridiagonal_solve_grad(op, g):
    diags, x = op.inputs[0], op.outputs[0]
    if diags.shape.ndims is None or x.shape.ndims is None:
        raise NotImplementedError(f"TridiagonalSolve gradient needs known ranks, got {diags.shape} and {x.shape}")
    grad_rhs = apply_op("TridiagonalSolve", [_transposed(diags), g],
                        {"partial_pivoting": op.get_attr("partial_pivoting"),
                         "perturb_singular": op.get_attr("perturb_singular")})
    # the three diagonals of grad_rhs @ x^T (TF's _MatmulExtractingThreeDiagonals)
    superdiag = reduce_sum(multiply(grad_rhs, _shift_up(x)), axis=-1)
    maindiag = reduce_sum(multiply(grad_rhs, x), axis=-1)
    subdiag = reduce_sum(multiply(grad_rhs, _shift_down(x)), axis=-1)
    return [negative(stack([superdiag, maindiag, subdiag], axis=-2)), grad_rhs]


# ---- the public functions ----------------------------------------------------------------------------


def _last(t):
    return t.shape.as_list()[-1] if t.shape.ndims else None


def _compact_from_sequence(diagonals):
    if not isinstance(diagonals, (tuple, list)) or len(diagonals) != 3:
        raise ValueError("Expected diagonals to be a sequence of length 3.")
    superdiag, maindiag, subdiag = (convert_to_tensor(t) for t in diagonals)
    m = _last(maindiag)
    for t, what in ((superdiag, "superdiagonal"), (subdiag, "subdiagonal")):
        if not t.shape[:-1].is_compatible_with(maindiag.shape[:-1]):
            raise ValueError(f"Tensors representing the three diagonals must have the same shape, except for the "
                             f"last dimension, got {subdiag.shape}, {maindiag.shape}, {superdiag.shape}")
        n = _last(t)
        if n is not None and m is not None and n not in (m, m - 1):
            raise ValueError(f"Expected {what} to be have length {m} or {m - 1}, got {n}.")
    if m is not None and _last(superdiag) == m - 1:
        superdiag = pad(superdiag, [[0, 0]] * (superdiag.shape.ndims - 1) + [[0, 1]])
    if m is not None and _last(subdiag) == m - 1:
        subdiag = pad(subdiag, [[0, 0]] * (subdiag.shape.ndims - 1) + [[1, 0]])
    return stack([superdiag, maindiag, subdiag], axis=-2)


def _compact_from_matrix(matrix):
    matrix = convert_to_tensor(matrix)
    s = matrix.shape
    if s.ndims is None or s.ndims < 2:
        raise ValueError(f"Expected diagonals of rank at least 2 in matrix format, got shape {s}")
    m1, m2 = s.as_list()[-1], s.as_list()[-2]
    if m1 is not None and m2 is not None and m1 != m2:
        raise ValueError(f"Expected last two dimensions of diagonals to be same, got {m2} and {m1}")
    zeros = [[0, 0]] * (s.ndims - 2)
    superdiag = pad(matrix_diag_part(matrix[..., :-1, 1:]), zeros + [[0, 1]])
    subdiag = pad(matrix_diag_part(matrix[..., 1:, :-1]), zeros + [[1, 0]])
    return stack([superdiag, matrix_diag_part(matrix), subdiag], axis=-2)


def _compact(diagonals, diagonals_format):
    if diagonals_format == "compact":
        return convert_to_tensor(diagonals)
    if diagonals_format == "sequence":
        return _compact_from_sequence(diagonals)
    if diagonals_format == "matrix":
        return _compact_from_matrix(diagonals)
    raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")


def tridiagonal_solve(diagonals, rhs, diagonals_format="compact", transpose_rhs=False, conjugate_rhs=False,
                      name=None, partial_pivoting=True, perturb_singular=False):
    """x with A @ x = rhs for tridiagonal A given in `diagonals_format`; rhs [..., M] or [..., M, K]
    ([..., K, M] with `transpose_rhs`), output of rhs's shape ([..., M, K] when transposed).
    ValueError at build for a bad format or shapes; a singular A gives NaN/inf (as TF)."""
    if perturb_singular and not partial_pivoting:
        raise ValueError("partial_pivoting must be True if perturb_singular is.")
    with name_scope(name, "tridiagonal_solve", [rhs]):
        diags = _compact(diagonals, diagonals_format)
        rhs = convert_to_tensor(rhs, dtype=diags.dtype, name="rhs")
        dr, rr = diags.shape.ndims, rhs.shape.ndims
        if dr is not None:
            if dr < 2:
                raise ValueError(f"Expected diagonals to have rank at least 2, got {dr}")
            if rr is not None and rr not in (dr, dr - 1):
                raise ValueError(f"Expected the rank of rhs to be {dr - 1} or {dr}, got {rr}")
            if rr is not None and not diags.shape[:-2].is_compatible_with(rhs.shape[:dr - 2]):
                raise ValueError(f"Batch shapes {diags.shape[:-2]} and {rhs.shape[:dr - 2]} are incompatible")
        attrs = {"partial_pivoting": bool(partial_pivoting), "perturb_singular": bool(perturb_singular)}
        if rr is not None and dr is not None and rr == dr - 1:
            if conjugate_rhs:
                rhs = conj(rhs)
            return squeeze(apply_op("TridiagonalSolve", [diags, expand_dims(rhs, -1)], attrs), -1)
        if transpose_rhs:
            rhs = matrix_transpose(rhs, conjugate=conjugate_rhs)
        elif conjugate_rhs:
            rhs = conj(rhs)
        return apply_op("TridiagonalSolve", [diags, rhs], attrs)


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """A @ rhs for tridiagonal A given in `diagonals_format` and rhs [..., M, N]: [..., M, N]."""
    with name_scope(name, "tridiagonal_matmul", [rhs]):
        diags = _compact(diagonals, diagonals_format)
        rhs = convert_to_tensor(rhs, dtype=diags.dtype, name="rhs")
        if rhs.shape.ndims is None:
            raise ValueError(f"tridiagonal_matmul: rhs {rhs.name!r} must have a known rank")
        column = lambda i: expand_dims(diags[..., i, :], -1)  # noqa: E731
        return add(add(multiply(column(0), _shift_up(rhs)), multiply(column(1), rhs)),
                   multiply(column(2), _shift_down(rhs)))


def eigh_tridiagonal(alpha, beta, eigvals_only=True, select="a", select_range=None, tol=None, name=None):
    """Eigenvalues (ascending; with eigenvectors as columns unless `eigvals_only`) of the Hermitian
    tridiagonal matrix with diagonal `alpha` [n] and superdiagonal `beta` [n-1] (the subdiagonal is
    conj(beta)). `select`: 'a' all, 'i' indices select_range=[lo, hi] (inclusive), 'v' the values
    in (lo, hi]. Built as the dense matrix and solved by eigh; `tol` is accepted and not needed."""
    with name_scope(name, "eigh_tridiagonal", [alpha, beta]):
        alpha = convert_to_tensor(alpha, name="alpha")
        beta = convert_to_tensor(beta, dtype=alpha.dtype, name="beta")
        if alpha.shape.ndims != 1 or beta.shape.ndims != 1:
            raise ValueError(f"eigh_tridiagonal: alpha and beta must be vectors, got shapes {alpha.shape} and "
                             f"{beta.shape}")
        n = alpha.shape.as_list()[0]
        if n is None or beta.shape.as_list()[0] not in (None, n - 1):
            raise ValueError(f"eigh_tridiagonal: beta must have length n - 1 for alpha of known length n, got "
                             f"shapes {alpha.shape} and {beta.shape}")
        if select not in ("a", "i", "v"):
            raise ValueError(f"eigh_tridiagonal: select must be 'a', 'i' or 'v', got {select!r}")
        if select != "a" and (select_range is None or len(select_range) != 2):
            raise ValueError(f"eigh_tridiagonal: select={select!r} needs select_range=[lo, hi], got {select_range!r}")
        lower = pad(matrix_diag(conj(beta) if alpha.dtype.is_complex else beta), [[1, 0], [0, 1]])
        matrix = add(add(matrix_diag(alpha), lower), matrix_transpose(lower, conjugate=True))
        e, v = self_adjoint_eig(matrix)
        if select == "i":
            lo, hi = int(select_range[0]), int(select_range[1])
            e, v = e[lo:hi + 1], v[:, lo:hi + 1]
        elif select == "v":
            keep = logical_and(greater(e, select_range[0]), less_equal(e, select_range[1]))
            e, v = boolean_mask(e, keep), matrix_transpose(boolean_mask(matrix_transpose(v), keep))
        return e if eigvals_only else (e, v)

