"""`dflow.debugging`: TF1's checks under one name (tf.debugging), and the composites TF1 adds to
them (`assert_near`, `assert_rank_in`, `assert_same_float_dtype`, `assert_proper_iterable`,
`is_non_decreasing`, `is_strictly_increasing`; also at the top level)."""

import collections.abc

import numpy as np

from .framework import is_numeric_tensor
from .graph import dtypes
from .graph.graph import name_scope
from .graph.ops import Tensor, constant_value
from .kernels.array_ops import rank as _rank
from .kernels.array_ops import shape as _shape_of
from .kernels.array_ops import stack as _stack
from .kernels.check_ops import (
    Assert,
    add_check_numerics_ops,
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_integer,
    assert_less,
    assert_less_equal,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_rank,
    assert_rank_at_least,
    assert_scalar,
    assert_type,
    check_numerics,
)
from .kernels.check_ops import verify_tensor_all_finite as assert_all_finite
from .kernels.common import convert_to_tensor
from .kernels.control_ops import no_op as _no_op
from .kernels.math_composites import is_non_decreasing, is_strictly_increasing
from .kernels.math_ops import abs as _abs
from .kernels.math_ops import equal as _equal
from .kernels.math_ops import is_finite, is_inf, is_nan
from .kernels.math_ops import less_equal as _less_equal
from .kernels.math_ops import subtract as _subtract
from .kernels.reduction_ops import reduce_all as _reduce_all
from .kernels.reduction_ops import reduce_any as _reduce_any
from .kernels.sparse_ops import SparseTensor

__all__ = ["Assert", "add_check_numerics_ops", "assert_equal", "assert_greater", "assert_greater_equal",
           "assert_integer", "assert_less", "assert_less_equal", "assert_negative", "assert_non_negative",
           "assert_non_positive", "assert_none_equal", "assert_positive", "assert_rank", "assert_rank_at_least",
           "assert_scalar", "assert_type", "check_numerics", "assert_all_finite", "is_finite", "is_inf", "is_nan",
           "assert_near", "assert_rank_in", "assert_same_float_dtype", "assert_proper_iterable", "is_numeric_tensor",
           "is_non_decreasing", "is_strictly_increasing"]


def _prefix(message):
    return f"{message}  " if message else ""


def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None, name=None):
    """An Assert that |x - y| <= atol + rtol * |y| elementwise (x, y float or complex of one dtype);
    rtol and atol default to 10 * eps of the dtype (TF1's `tf.assert_near`)."""
    with name_scope(name, "assert_near", [x, y, rtol, atol, data]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype)
        if not (x.dtype.is_floating or x.dtype.is_complex):
            raise TypeError(f"assert_near: x and y must be float or complex, got {x.dtype.name}")
        real = x.dtype.real_dtype if x.dtype.is_complex else x.dtype
        eps = float(np.finfo(real.np_dtype).eps)
        rtol = convert_to_tensor(10 * eps if rtol is None else rtol, name="rtol", dtype=real)
        atol = convert_to_tensor(10 * eps if atol is None else atol, name="atol", dtype=real)
        if data is None:
            data = [_prefix(message) + f"x and y not equal to tolerance rtol = {rtol}, atol = {atol}",
                    f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        tol = atol + rtol * _abs(y)
        diff = _abs(_subtract(x, y))
        return Assert(_reduce_all(_less_equal(diff, tol)), data, summarize=summarize)


def assert_rank_in(x, ranks, data=None, summarize=None, message=None, name=None):
    """An Assert that rank(x) is one of `ranks` (scalar int32 each); ValueError when the graph is
    built if the static rank is known and not among them, a no_op if it is."""
    with name_scope(name, "assert_rank_in", [x] + list(ranks)):
        x = convert_to_tensor(x, name="x")
        ranks = [convert_to_tensor(r, name="rank") for r in ranks]
        for r in ranks:
            assert_type(r, dtypes.int32)
        static = [constant_value(r) for r in ranks]
        if all(v is not None for v in static):
            if any(np.ndim(v) != 0 for v in static):
                raise ValueError("Rank must be a scalar.")
            if x.shape.ndims is not None:
                wanted = tuple(int(v) for v in static)
                if x.shape.ndims not in wanted:
                    raise ValueError(f"{_prefix(message)}Tensor {x.name} must have rank in {wanted}.  Received rank "
                                     f"{x.shape.ndims}, shape {x.shape}")
                return _no_op(name="static_checks_determined_all_ok")
        if data is None:
            data = [_prefix(message) + f"Tensor {x.name} must have rank in", *ranks, "Received shape: ",
                    _shape_of(x)]
        r = _rank(x)
        return Assert(_reduce_any(_stack([_equal(r, k) for k in ranks])), data, summarize=summarize)


def assert_same_float_dtype(tensors=None, dtype=None):
    """The common float dtype of `tensors` (and `dtype`), float32 if neither gives one; ValueError
    when they differ or the dtype is not floating."""
    if tensors:
        dtype = _same_dtype(tensors, dtype)
    if dtype is None:
        return dtypes.float32
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype!r}.")
    return dtype


def _same_dtype(tensors, dtype):
    expected = dtypes.as_dtype(dtype) if dtype is not None else None
    first = None
    for t in tensors:
        if t is None:
            continue
        d = t.dtype.base_dtype if hasattr(t.dtype, "base_dtype") else t.dtype
        if expected is None:
            expected, first = d, t
        elif d != expected:
            raise ValueError(f"{getattr(t, 'name', t)}, type={d!r}: expected type "
                             f"{expected!r}{'' if first is None else ' (from ' + first.name + ')'}.")
    return expected


def assert_proper_iterable(values):
    """TypeError unless `values` is an iterable of values: a Tensor, SparseTensor, numpy array,
    string or bytes is not (it would iterate over elements or characters)."""
    unintentional = (Tensor, SparseTensor, np.ndarray, str, bytes)
    if isinstance(values, unintentional) or not isinstance(values, collections.abc.Iterable):
        raise TypeError(f'Expected argument "values" to be a "proper" iterable.  Found: {type(values)}')
