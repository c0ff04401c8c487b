"""TF's LinearOperator family (tf.linalg.LinearOperator*): Python classes over ops, as in TF.

A LinearOperator stands for a batch of [..., M, N] matrices without always building them. The
base class answers everything from `to_dense()` (matmul, solve, determinants, diag_part, trace,
add_to_tensor); a subclass overrides what its structure makes cheap (a diagonal's solve and
determinant, the identity's matmul, a composition's solve as a chain). The subset provided:
FullMatrix, Diag, Identity, ScaledIdentity, LowerTriangular, Zeros, Composition, Adjoint and
Inversion. Shapes must be known when the operator is built (TF's dynamic-shape paths are absent).
"""

from __future__ import annotations

import numpy as np

from ..graph import dtypes
from ..graph.graph import name_scope
from ..graph.shape import TensorShape
from .common import convert_to_tensor
from .complex_ops import conj
from .linalg_ops import matmul as _matmul
from .manip_ops import expand_dims, squeeze
from .math_ops import abs as _abs
from .math_ops import add, cast, log, multiply, realdiv
from .matrix_ops import (
    cholesky,
    log_matrix_determinant,
    matrix_band_part,
    matrix_determinant,
    matrix_diag,
    matrix_diag_part,
    matrix_inverse,
    matrix_solve,
    matrix_transpose,
    matrix_triangular_solve,
)
from .reduction_ops import reduce_prod, reduce_sum

__all__: list[str] = []  # tf.linalg only (dflow/linalg.py)


def _adj(x, adjoint):
    return matrix_transpose(x, conjugate=True) if adjoint else x


class LinearOperator:
    """The base: a batch of [..., M, N] matrices known through `to_dense()` (TF's defaults)."""

    def __init__(self, dtype, graph_parents=None, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        self._dtype = dtypes.as_dtype(dtype)
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._is_square = is_square
        self._name = name or type(self).__name__

    # ---- what a subclass gives -------------------------------------------------------------------
    def _shape(self):
        raise NotImplementedError(f"{type(self).__name__} must define _shape")

    def _to_dense(self):
        raise NotImplementedError(f"{type(self).__name__} must define _to_dense")

    # ---- properties ------------------------------------------------------------------------------
    dtype = property(lambda self: self._dtype)
    name = property(lambda self: self._name)
    is_non_singular = property(lambda self: self._is_non_singular)
    is_self_adjoint = property(lambda self: self._is_self_adjoint)
    is_positive_definite = property(lambda self: self._is_positive_definite)

    @property
    def is_square(self):
        if self._is_square is not None:
            return self._is_square
        m, n = self.shape[-2], self.shape[-1]
        return None if m is None or n is None else m == n

    @property
    def shape(self):
        return TensorShape(self._shape())

    @property
    def batch_shape(self):
        return self.shape[:-2]

    @property
    def tensor_rank(self):
        return self.shape.ndims

    @property
    def domain_dimension(self):
        return self.shape.dims[-1]

    @property
    def range_dimension(self):
        return self.shape.dims[-2]

    def shape_tensor(self, name="shape_tensor"):
        return convert_to_tensor(self.shape.as_list(), dtype=dtypes.int32, name=name)

    # ---- the operations --------------------------------------------------------------------------
    def to_dense(self, name="to_dense"):
        with name_scope(self._name + "/" + name):
            return self._to_dense()

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _matmul(self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        """self @ x (adjoints as asked); x a Tensor [..., N, R] or another LinearOperator."""
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            return LinearOperatorComposition([left, right])
        with name_scope(self._name + "/" + name):
            return self._matmul(convert_to_tensor(x, dtype=self.dtype), adjoint, adjoint_arg)

    def matvec(self, x, adjoint=False, name="matvec"):
        return squeeze(self.matmul(expand_dims(convert_to_tensor(x, dtype=self.dtype), -1), adjoint, name=name), -1)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return matrix_solve(self.to_dense(), _adj(rhs, adjoint_arg), adjoint=adjoint)

    def solve(self, rhs, adjoint=False, adjoint_arg=False, name="solve"):
        """X with self @ X = rhs (adjoints as asked). NotImplementedError for a singular or
        non-square operator (as TF)."""
        if self.is_non_singular is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is expected to be singular.")
        if self.is_square is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is expected to not be square.")
        if isinstance(rhs, LinearOperator):
            left = self.adjoint() if adjoint else self
            return LinearOperatorComposition([left.inverse(), rhs.adjoint() if adjoint_arg else rhs])
        with name_scope(self._name + "/" + name):
            return self._solve(convert_to_tensor(rhs, dtype=self.dtype), adjoint, adjoint_arg)

    def solvevec(self, rhs, adjoint=False, name="solve"):
        return squeeze(self.solve(expand_dims(convert_to_tensor(rhs, dtype=self.dtype), -1), adjoint, name=name), -1)

    def _check_square(self, what):
        if self.is_square is False:
            raise NotImplementedError(f"Determinant not implemented for an operator that is expected to not be "
                                      f"square ({what}).")

    def _determinant(self):
        return matrix_determinant(self.to_dense())

    def determinant(self, name="det"):
        self._check_square(name)
        with name_scope(self._name + "/" + name):
            return self._determinant()

    def _log_abs_determinant(self):
        return log_matrix_determinant(self.to_dense())[1]

    def log_abs_determinant(self, name="log_abs_det"):
        self._check_square(name)
        with name_scope(self._name + "/" + name):
            return self._log_abs_determinant()

    def _diag_part(self):
        return matrix_diag_part(self.to_dense())

    def diag_part(self, name="diag_part"):
        with name_scope(self._name + "/" + name):
            return self._diag_part()

    def trace(self, name="trace"):
        with name_scope(self._name + "/" + name):
            return reduce_sum(self._diag_part(), axis=-1)

    def add_to_tensor(self, x, name="add_to_tensor"):
        with name_scope(self._name + "/" + name):
            return add(self.to_dense(), convert_to_tensor(x, dtype=self.dtype))

    def adjoint(self, name="adjoint"):
        if self.is_self_adjoint:
            return self
        return LinearOperatorAdjoint(self)

    H = property(lambda self: self.adjoint())

    def inverse(self, name="inverse"):
        if self.is_square is False:
            raise ValueError("Cannot take the Inverse: This operator represents a non square matrix.")
        if self.is_non_singular is False:
            raise ValueError("Cannot take the Inverse: This operator represents a singular matrix.")
        return LinearOperatorInversion(self)

    def cholesky(self, name="cholesky"):
        if not self.is_positive_definite or not self.is_self_adjoint:
            raise ValueError("Cholesky decomposition only exists for self-adjoint positive definite operators.")
        return LinearOperatorLowerTriangular(cholesky(self.to_dense()), is_non_singular=True)


class LinearOperatorFullMatrix(LinearOperator):
    """A batch of [..., M, N] matrices held as a Tensor."""

    def __init__(self, matrix, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name="LinearOperatorFullMatrix"):
        self._matrix = convert_to_tensor(matrix, name="matrix")
        if self._matrix.shape.ndims is not None and self._matrix.shape.ndims < 2:
            raise ValueError(f"Argument matrix must have at least 2 dimensions. Found: {self._matrix.shape}")
        super().__init__(self._matrix.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name)

    def _shape(self):
        return self._matrix.shape

    def _to_dense(self):
        return self._matrix


class LinearOperatorLowerTriangular(LinearOperatorFullMatrix):
    """The lower triangle of [..., N, N] `tril` (the rest ignored); triangular solves."""

    def __init__(self, tril, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name="LinearOperatorLowerTriangular"):
        super().__init__(matrix_band_part(convert_to_tensor(tril, name="tril"), -1, 0), is_non_singular,
                         is_self_adjoint, is_positive_definite, True if is_square is None else is_square, name)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return matrix_triangular_solve(self._matrix, _adj(rhs, adjoint_arg), lower=True, adjoint=adjoint)

    def _determinant(self):
        return reduce_prod(matrix_diag_part(self._matrix), axis=-1)

    def _log_abs_determinant(self):
        return reduce_sum(log(_abs(matrix_diag_part(self._matrix))), axis=-1)


class LinearOperatorDiag(LinearOperator):
    """diag(d) for `diag` [..., N]: elementwise matmul, solve and determinant."""

    def __init__(self, diag, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=True, name="LinearOperatorDiag"):
        self._diag = convert_to_tensor(diag, name="diag")
        if self._diag.shape.ndims is not None and self._diag.shape.ndims < 1:
            raise ValueError(f"Argument diag must have at least 1 dimension. Found: {self._diag.shape}")
        if not is_square:
            raise ValueError("A diagonal operator is always square.")
        if is_self_adjoint is None and not self._diag.dtype.is_complex:
            is_self_adjoint = True
        super().__init__(self._diag.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True, name)

    def _shape(self):
        return self._diag.shape.concatenate(self._diag.shape[-1:])

    def _to_dense(self):
        return matrix_diag(self._diag)

    def _column(self, adjoint):
        d = self._diag
        if adjoint and d.dtype.is_complex:
            d = conj(d)
        return expand_dims(d, -1)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return multiply(self._column(adjoint), _adj(x, adjoint_arg))

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return realdiv(_adj(rhs, adjoint_arg), self._column(adjoint))

    def _determinant(self):
        return reduce_prod(self._diag, axis=-1)

    def _log_abs_determinant(self):
        return reduce_sum(log(_abs(self._diag)), axis=-1)

    def _diag_part(self):
        return self._diag

    diag = property(lambda self: self._diag)


class LinearOperatorScaledIdentity(LinearOperator):
    """multiplier * I of order `num_rows` (multiplier [...] sets the batch shape)."""

    def __init__(self, num_rows, multiplier, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, assert_proper_shapes=False,
                 name="LinearOperatorScaledIdentity"):
        self._num_rows = int(num_rows)
        if self._num_rows < 0:
            raise ValueError(f"Argument num_rows must be non-negative, got {num_rows}")
        self._multiplier = convert_to_tensor(multiplier, name="multiplier")
        super().__init__(self._multiplier.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         True, name)

    def _shape(self):
        return self._multiplier.shape.concatenate([self._num_rows, self._num_rows])

    def _scale(self, adjoint):
        m = self._multiplier
        if adjoint and m.dtype.is_complex:
            m = conj(m)
        return expand_dims(expand_dims(m, -1), -1)

    def _to_dense(self):
        return matrix_diag(self._diag_part())

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return multiply(self._scale(adjoint), _adj(x, adjoint_arg))

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return realdiv(_adj(rhs, adjoint_arg), self._scale(adjoint))

    def _determinant(self):
        return self._multiplier ** self._num_rows

    def _log_abs_determinant(self):
        return multiply(cast(self._num_rows, self._multiplier.dtype.real_dtype), log(_abs(self._multiplier)))

    def _diag_part(self):
        return multiply(expand_dims(self._multiplier, -1), _ones_row(self._num_rows, self.dtype))

    multiplier = property(lambda self: self._multiplier)


def _ones_row(n, dtype):
    return convert_to_tensor(np.ones([n], dtype.np_dtype))


class LinearOperatorIdentity(LinearOperatorScaledIdentity):
    """I of order `num_rows` (with an optional static `batch_shape`)."""

    def __init__(self, num_rows, batch_shape=None, dtype=None, is_non_singular=True, is_self_adjoint=True,
                 is_positive_definite=True, is_square=True, assert_proper_shapes=False,
                 name="LinearOperatorIdentity"):
        dt = dtypes.as_dtype(dtype or dtypes.float32)
        super().__init__(num_rows, np.ones(list(batch_shape or []), dt.np_dtype), is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name=name)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = _adj(x, adjoint_arg)
        return x if self._multiplier.shape.ndims == 0 else multiply(self._scale(False), x)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint, adjoint_arg)


class LinearOperatorZeros(LinearOperator):
    """The zero [..., M, N] operator (not invertible)."""

    def __init__(self, num_rows, num_columns=None, batch_shape=None, dtype=None, is_non_singular=False,
                 is_self_adjoint=True, is_positive_definite=False, is_square=True, assert_proper_shapes=False,
                 name="LinearOperatorZeros"):
        if is_non_singular:
            raise ValueError("A Zeros operator is always singular.")
        self._rows = int(num_rows)
        self._cols = self._rows if num_columns is None else int(num_columns)
        self._batch = list(batch_shape or [])
        super().__init__(dtype or dtypes.float32, None, False, is_self_adjoint and self._rows == self._cols,
                         False, self._rows == self._cols, name)

    def _shape(self):
        return self._batch + [self._rows, self._cols]

    def _to_dense(self):
        return convert_to_tensor(np.zeros(self._shape(), self.dtype.np_dtype))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _matmul(self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _determinant(self):
        return convert_to_tensor(np.zeros(self._batch, self.dtype.np_dtype))


class LinearOperatorComposition(LinearOperator):
    """operators[0] @ operators[1] @ ...: matmul and solve as chains."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name=None):
        operators = list(operators)
        if not operators:
            raise ValueError(f"Expected a non-empty list of operators. Found: {operators}")
        dts = {o.dtype for o in operators}
        if len(dts) != 1:
            raise TypeError(f"Expected all operators to have the same dtype. Found {sorted(d.name for d in dts)}")
        self._operators = operators
        if is_non_singular is None and all(o.is_non_singular for o in operators):
            is_non_singular = True
        super().__init__(operators[0].dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name or "_o_".join(o.name for o in operators))

    operators = property(lambda self: self._operators)

    def _shape(self):
        first, last = self._operators[0].shape, self._operators[-1].shape
        batch = first[:-2]
        for o in self._operators[1:]:
            batch = TensorShape(_broadcast(batch.as_list(), o.batch_shape.as_list()))
        return batch.concatenate([first[-2], last[-1]])

    def _to_dense(self):
        out = self._operators[-1].to_dense()
        for o in reversed(self._operators[:-1]):
            out = o.matmul(out)
        return out

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        ops = list(reversed(self._operators)) if adjoint else self._operators
        out = _adj(x, adjoint_arg)
        for o in reversed(ops):
            out = o.matmul(out, adjoint=adjoint)
        return out

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        ops = list(reversed(self._operators)) if adjoint else self._operators
        out = _adj(rhs, adjoint_arg)
        for o in ops:
            out = o.solve(out, adjoint=adjoint)
        return out

    def _determinant(self):
        out = self._operators[0].determinant()
        for o in self._operators[1:]:
            out = multiply(out, o.determinant())
        return out

    def _log_abs_determinant(self):
        out = self._operators[0].log_abs_determinant()
        for o in self._operators[1:]:
            out = add(out, o.log_abs_determinant())
        return out


def _broadcast(a, b):
    if len(a) < len(b):
        a, b = b, a
    b = [1] * (len(a) - len(b)) + b
    return [x if y == 1 else y for x, y in zip(a, b)]


class LinearOperatorAdjoint(LinearOperator):
    """The adjoint of another operator, without building it."""

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name=None):
        self._operator = operator
        super().__init__(operator.dtype, None, operator.is_non_singular if is_non_singular is None else
                         is_non_singular, operator.is_self_adjoint, operator.is_positive_definite,
                         operator.is_square, name or operator.name + "_adjoint")

    operator = property(lambda self: self._operator)

    def _shape(self):
        s = self._operator.shape
        return s[:-2].concatenate([s[-1], s[-2]])

    def _to_dense(self):
        return matrix_transpose(self._operator.to_dense(), conjugate=True)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._operator.solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        d = self._operator.determinant()
        if d.dtype.is_complex:
            return conj(d)
        return d

    def _log_abs_determinant(self):
        return self._operator.log_abs_determinant()

    def adjoint(self, name="adjoint"):
        return self._operator


class LinearOperatorInversion(LinearOperator):
    """The inverse of another (square, non-singular) operator: matmul is its solve."""

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name=None):
        if operator.is_non_singular is False:
            raise ValueError("operator and supplied hints must result in a non-singular operator.")
        if operator.is_square is False:
            raise ValueError("operator and supplied hints must result in a square operator.")
        self._operator = operator
        super().__init__(operator.dtype, None, True if is_non_singular is None else is_non_singular,
                         operator.is_self_adjoint, operator.is_positive_definite, True,
                         name or operator.name + "_inv")

    operator = property(lambda self: self._operator)

    def _shape(self):
        return self._operator.shape

    def _to_dense(self):
        return matrix_inverse(self._operator.to_dense())

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return realdiv(cast(1, self.dtype), self._operator.determinant())

    def _log_abs_determinant(self):
        return -self._operator.log_abs_determinant()

    def inverse(self, name="inverse"):
        return self._operator
