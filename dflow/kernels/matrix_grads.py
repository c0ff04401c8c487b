"""The gradients of matrix_ops' ops (TF 1.15's linalg_grad.py, and TF 2.x's rules for Qr and Svd),
built from registered ops: inverse, determinants, Cholesky, solves, eigh, expm, bands and
diagonals, QR and SVD. Registered when dflow/__init__.py imports this module."""

from __future__ import annotations

from ..graph.registry import def_grad
from .creation_ops import zeros_like
from .index_ops import strided_slice
from .linalg_ops import matmul
from .manip_ops import concat, expand_dims
from .math_ops import add, cast, multiply, negative, reciprocal, subtract
from .matrix_ops import (
    adjoint,
    matrix_band_part,
    matrix_diag,
    matrix_diag_part,
    matrix_exponential,
    matrix_inverse,
    matrix_set_diag,
    matrix_solve,
    matrix_triangular_solve,
    self_adjoint_eig,
    svd,
)

# ---- gradients (TF 1.15's linalg_grad.py) ---------------------------------------------------------------


def _expand2(t):

    return expand_dims(expand_dims(t, -1), -1)


@def_grad("MatrixInverse")
def _inverse_grad(op, g):
    c = op.outputs[0]
    adj = op.get_attr("adjoint")

    if adj:  # C = inv(A^H): the adjoint of the rule below
        return [negative(matmul(c, matmul(g, c, adjoint_a=True)))]
    return [negative(matmul(c, matmul(g, c, adjoint_b=True), adjoint_a=True))]


@def_grad("MatrixDeterminant")
def _determinant_grad(op, g):

    a, c = op.inputs[0], op.outputs[0]
    return [multiply(_expand2(multiply(g, c)), matrix_inverse(a, adjoint=True))]


@def_grad("LogMatrixDeterminant")
def _slogdet_grad(op, g_sign, g_logabs):

    a = op.inputs[0]
    return [multiply(_expand2(cast(g_logabs, a.dtype)), matrix_inverse(a, adjoint=True))]


@def_grad("Cholesky")
def _cholesky_grad(op, g):

    chol = op.outputs[0]
    chol_inv = matrix_inverse(chol)
    phi = matmul(chol, g, adjoint_a=True)
    mid = matrix_band_part(phi, -1, 0)
    mid = matrix_set_diag(mid, multiply(0.5, matrix_diag_part(mid)))
    grad_a = matmul(matmul(chol_inv, mid, adjoint_a=True), chol_inv)
    grad_a = add(grad_a, adjoint(grad_a))
    return [multiply(0.5, grad_a)]


@def_grad("MatrixSolve")
def _solve_grad(op, g):

    a, adj, c = op.inputs[0], op.get_attr("adjoint"), op.outputs[0]
    grad_b = matrix_solve(a, g, adjoint=not adj)
    grad_a = negative(matmul(c, grad_b, adjoint_b=True) if adj else matmul(grad_b, c, adjoint_b=True))
    return [grad_a, grad_b]


@def_grad("MatrixTriangularSolve")
def _triangular_solve_grad(op, g):

    a, c = op.inputs[0], op.outputs[0]
    adj, lower = op.get_attr("adjoint"), op.get_attr("lower")
    grad_b = matrix_triangular_solve(a, g, lower=lower, adjoint=not adj)
    grad_a = negative(matmul(c, grad_b, adjoint_b=True) if adj else matmul(grad_b, c, adjoint_b=True))
    grad_a = matrix_band_part(grad_a, -1, 0) if lower else matrix_band_part(grad_a, 0, -1)
    return [grad_a, grad_b]


@def_grad("SelfAdjointEigV2")
def _eigh_grad(op, grad_e, grad_v):

    e, v = op.outputs
    if not op.get_attr("compute_v"):
        _, v = self_adjoint_eig(op.inputs[0])
        grad_a = matmul(v, matmul(matrix_diag(grad_e), v, adjoint_b=True))
    else:
        f = reciprocal(subtract(expand_dims(e, -2), expand_dims(e, -1)))
        f = matrix_set_diag(f, zeros_like(e))
        f = cast(f, v.dtype)
        grad_a = matmul(v, matmul(add(matrix_diag(cast(grad_e, v.dtype)), multiply(f, matmul(v, grad_v, adjoint_a=True))),
                                  v, adjoint_b=True))
    grad_a = matrix_band_part(add(grad_a, adjoint(grad_a)), -1, 0)
    grad_a = matrix_set_diag(grad_a, multiply(0.5, matrix_diag_part(grad_a)))
    return [grad_a]


@def_grad("MatrixExponential")
def _expm_grad(op, g):
    """The upper-right block of exp([[A^H, g], [0, A^H]]) (the Fréchet derivative's adjoint)."""

    ah = adjoint(op.inputs[0])
    n = ah.shape.as_list()[-1]
    block = concat([concat([ah, g], -1), concat([zeros_like(ah), ah], -1)], -2)
    big = matrix_exponential(block)
    rank = ah.shape.ndims
    begin = [0] * (rank - 2) + [0, n]
    end = [0] * (rank - 2) + [n, 2 * n]
    mask = (1 << (rank - 2)) - 1
    return [strided_slice(big, begin, end, begin_mask=mask, end_mask=mask)]


@def_grad("MatrixBandPart")
def _band_grad(op, g):
    return [matrix_band_part(g, op.inputs[1], op.inputs[2]), None, None]


@def_grad("MatrixDiag")
def _diag_grad(op, g):
    return [matrix_diag_part(g)]


@def_grad("MatrixDiagPart")
def _diag_part_grad(op, g):

    x = op.inputs[0]
    s = x.shape.as_list()
    if s[-1] == s[-2]:
        return [matrix_diag(g)]
    return [matrix_set_diag(zeros_like(x), g)]


@def_grad("MatrixSetDiag")
def _set_diag_grad(op, g):

    return [matrix_set_diag(g, zeros_like(op.inputs[1])), matrix_diag_part(g)]


def _upper_solve_right(x, r):
    """x @ inv(r)^H for upper-triangular r, by a triangular solve (TF's `_TriangularSolve`)."""
    return adjoint(matrix_triangular_solve(r, adjoint(x), lower=False, adjoint=False))


def _real_diag(m):
    """diag(re(diag(m))) of a complex m, from the diagonal and its conjugate (no Real op needed)."""
    return matrix_diag(multiply(0.5, add(matrix_diag_part(m), matrix_diag_part(adjoint(m)))))


def _qr_grad_deep(q, r, dq, dr):
    """The QR gradient for M >= N, reduced factors (arXiv:2009.10071, as TF's linalg_grad.py)."""
    qdq = matmul(q, dq, adjoint_a=True)
    rdr = matmul(r, dr, adjoint_b=True)
    tril = matrix_band_part(add(subtract(qdq, adjoint(qdq)), subtract(rdr, adjoint(rdr))), -1, 0)
    grad = add(matmul(q, add(dr, _upper_solve_right(tril, r))), _upper_solve_right(subtract(dq, matmul(q, qdq)), r))
    if q.dtype.is_complex:  # the imaginary part of the diagonal, which the real formula drops
        m = subtract(rdr, adjoint(qdq))
        eyem = matrix_diag(matrix_diag_part(m))
        grad = add(grad, _upper_solve_right(matmul(q, adjoint(subtract(eyem, _real_diag(m)))), r))
    return grad


@def_grad("Qr")
def _qr_grad(op, dq, dr):
    """TF 2.x's rule: reduced factors with M >= N, and M < N by splitting a = [x, y], r = [u, v]."""

    q, r = op.outputs
    rs = r.shape.as_list() if r.shape.ndims is not None else None
    if rs is None or rs[-2] is None or rs[-1] is None:
        raise NotImplementedError(f"QrGrad not implemented with dynamic shapes. Received r.shape: {r.shape}")
    qs = q.shape.as_list()
    if rs[-2] > rs[-1] and qs[-2] == qs[-1]:
        raise NotImplementedError(f"QrGrad not implemented when nrows > ncols and full_matrices is true. Received "
                                  f"r.shape={r.shape} with nrows={rs[-2]}and ncols={rs[-1]}.")
    m = qs[-2]
    if m >= rs[-1]:
        return [_qr_grad_deep(q, r, dq, dr)]
    a = op.inputs[0]
    y, u = a[..., :, m:], r[..., :, :m]
    dv, du = dr[..., :, m:], dr[..., :, :m]
    dx = _qr_grad_deep(q, u, add(dq, matmul(y, dv, adjoint_b=True)), du)
    return [concat([dx, matmul(q, dv)], -1)]


def _safe_reciprocal(x, epsilon=1e-20):
    return multiply(x, reciprocal(add(multiply(x, x), epsilon)))


@def_grad("Svd")
def _svd_grad(op, grad_s, grad_u, grad_v):
    """Giles' rule for the singular values, Townsend's for reduced u and v; full u/v only when
    |M - N| <= 1 (TF's limits, with its NotImplementedError messages)."""

    a = op.inputs[0]
    grad_s_mat = matrix_diag(cast(grad_s, a.dtype))
    if not op.get_attr("compute_uv"):
        _, u, v = svd(a, compute_uv=True)
        return [matmul(u, matmul(grad_s_mat, v, adjoint_b=True))]
    full = op.get_attr("full_matrices")
    dims = a.shape.as_list() if a.shape.ndims is not None else None
    m, n = (dims[-2], dims[-1]) if dims else (None, None)
    if m is None or n is None:
        raise NotImplementedError("SVD gradient has not been implemented for input with unknown inner matrix shape.")
    s, u, v = op.outputs
    s = cast(s, a.dtype)
    use_adjoint = m > n
    if use_adjoint:  # the gradient of A^H = V S U^H, transposed back at the end
        m, n, u, v, grad_u, grad_v = n, m, v, u, grad_v, grad_u
    if full and abs(m - n) > 1:
        raise NotImplementedError(f"svd gradient is not implemented for abs(m - n) > 1 when full_matrices is True. "
                                  f"Received: m={m} and n={n} from op input={a} with shape={a.shape}.")
    s_mat = matrix_diag(s)
    s2 = multiply(s, s)
    f = matrix_set_diag(_safe_reciprocal(subtract(expand_dims(s2, -2), expand_dims(s2, -1))), zeros_like(s))
    s_inv_mat = matrix_diag(_safe_reciprocal(s))
    v1, grad_v1 = v[..., :, :m], grad_v[..., :, :m]
    f_u = multiply(f, matmul(u, grad_u, adjoint_a=True))
    v_gv = matmul(v1, grad_v1, adjoint_a=True)
    f_v = multiply(f, v_gv)
    term1_nouv = add(add(grad_s_mat, matmul(add(f_u, adjoint(f_u)), s_mat)), matmul(s_mat, add(f_v, adjoint(f_v))))
    grad = matmul(u, matmul(term1_nouv, v1, adjoint_b=True))
    if m != n:
        gv1t = adjoint(grad_v1)
        term2_nous = subtract(gv1t, matmul(matmul(gv1t, v1), v1, adjoint_b=True))
        if full:
            v2, grad_v2 = v[..., :, m:n], grad_v[..., :, m:n]
            term2_nous = subtract(term2_nous, matmul(matmul(v1, grad_v2, adjoint_a=True), v2, adjoint_b=True))
        grad = add(grad, matmul(matmul(u, s_inv_mat), term2_nous))
    if a.dtype.is_complex:
        diag = matrix_diag(matrix_diag_part(v_gv))
        term3_nouv = matmul(s_inv_mat, subtract(adjoint(diag), diag))
        grad = add(grad, multiply(0.5, matmul(u, matmul(term3_nouv, v1, adjoint_b=True))))
    return [adjoint(grad) if use_adjoint else grad]
