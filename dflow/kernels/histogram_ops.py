"""Counting into bins: `bincount` (Bincount), `histogram_fixed_width` (HistogramFixedWidth),
`histogram_fixed_width_bins` and `confusion_matrix` (composites, as TF 1.15 builds them).

bincount's length is max(arr) + 1 (0 for an empty arr), at least `minlength`, at most
`maxlength`, computed in the graph; with `weights` it is unsorted_segment_sum (TF1). The ops with
a run-time length read it first on the host (a host decision), then count in one whole-array task.
confusion_matrix is ScatterNd of ones (or weights) at the (label, prediction) rows, after TF1's
asserts that the classes are non-negative and below `num_classes`.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.graph import control_dependencies, name_scope
from ..graph.ops import constant_value
from ..graph.registry import not_differentiable
from ..graph.shape import TensorShape
from .array_ops import identity, reshape, shape, stack
from .check_ops import assert_less, assert_non_negative
from .common import INT, REAL, apply_op, check_dtype, convert_to_tensor
from .creation_ops import ones_like
from .manip_ops import squeeze
from .math_ops import (
    cast,
    clip_by_value,
    floor,
    greater,
    maximum,
    minimum,
    multiply,
    realdiv,
    subtract,
)
from .numpy_kernels import numpy_op
from .reduction_ops import reduce_max, reduce_prod
from .scatter_nd_ops import scatter_nd
from .scatter_ops import unsorted_segment_sum

__all__ = ["bincount", "histogram_fixed_width", "histogram_fixed_width_bins", "confusion_matrix"]


# ---- bincount ----------------------------------------------------------------------------------------


def _bincount_infer(inputs, attrs):
    arr, size_t, weights = inputs
    n = constant_value(size_t)
    return TensorShape([None if n is None else int(n)]), weights.dtype


def _bincount(np_, arr, size_v, weights):
    size_v = int(size_v)
    if size_v < 0:
        raise InvalidArgumentError(None, None, f"Bincount: size ({size_v}) must be non-negative")
    arr = np.asarray(arr).reshape(-1)
    if arr.size and arr.min() < 0:
        raise InvalidArgumentError(None, None, f"Bincount: input arr must be non-negative, got {int(arr.min())}")
    w = np.asarray(weights).reshape(-1) if np.size(weights) else None
    keep = arr < size_v  # TF1 drops values past the size
    out = np.bincount(arr[keep], weights=None if w is None else w[keep], minlength=size_v)[:size_v]
    return out.astype(np.asarray(weights).dtype)


numpy_op("Bincount", _bincount_infer, _bincount, lambda sa, size_v, sw: [(int(size_v),)],
         out_dtypes=lambda da_, ds, dw: [dw], host_inputs=(1,))
not_differentiable("Bincount")


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32):
    """How often each value of the int32 `arr` occurs: out[v] = count of v (or the sum of
    `weights` at those entries, weights' dtype; else `dtype`). Length max(arr) + 1 (0 for an
    empty arr), at least `minlength`, at most `maxlength` (larger values are dropped).
    InvalidArgumentError at run time for a negative value."""
    with name_scope(None, "bincount", [arr, weights, minlength, maxlength]):
        arr = convert_to_tensor(arr, dtype=dtypes.int32, name="arr")
        nonempty = greater(reduce_prod(shape(arr)), 0)
        output_size = multiply(cast(nonempty, dtypes.int32), reduce_max(arr) + 1)
        if minlength is not None:
            output_size = maximum(convert_to_tensor(minlength, dtype=dtypes.int32, name="minlength"), output_size)
        if maxlength is not None:
            output_size = minimum(convert_to_tensor(maxlength, dtype=dtypes.int32, name="maxlength"), output_size)
        if weights is not None:
            return unsorted_segment_sum(convert_to_tensor(weights, name="weights"), arr, output_size)
        empty = convert_to_tensor(np.zeros((0,), as_dtype(dtype).np_dtype))
        return apply_op("Bincount", [arr, output_size, empty])


# ---- histogram_fixed_width ---------------------------------------------------------------------------


def _histogram_infer(inputs, attrs):
    values, value_range, nbins = inputs
    check_dtype(values, REAL, "HistogramFixedWidth", "values")
    check_dtype(nbins, INT, "HistogramFixedWidth", "nbins")
    if value_range.shape.ndims is not None and value_range.shape.as_list() not in ([2], [None]):
        raise ValueError(f"HistogramFixedWidth: value_range must have shape [2], got {value_range.shape}")
    n = constant_value(nbins)
    return TensorShape([None if n is None else int(n)]), attrs["dtype"]


def _bin_indices(values, lo, hi, nbins):
    step = (float(hi) - float(lo)) / nbins
    scaled = np.floor((np.asarray(values, np.float64) - float(lo)) / step)
    return np.clip(scaled, 0, nbins - 1).astype(np.int64)


def _histogram(np_, values, value_range, nbins, *, dtype):
    nbins = int(nbins)
    lo, hi = np.asarray(value_range).reshape(-1)
    if nbins <= 0:
        raise InvalidArgumentError(None, None, f"nbins should be a positive number, but got '{nbins}'")
    if not lo < hi:
        raise InvalidArgumentError(None, None, f"value_range should satisfy value_range[0] < value_range[1], but "
                                   f"got '[{lo}, {hi}]'")
    return np.bincount(_bin_indices(values, lo, hi, nbins).reshape(-1), minlength=nbins).astype(dtype.np_dtype)


numpy_op("HistogramFixedWidth", _histogram_infer, _histogram, lambda sv, sr, nbins, dtype: [(int(nbins),)],
         out_dtypes=lambda dv, dr, dn, dtype: [dtype.np_dtype], host_inputs=(2,))
not_differentiable("HistogramFixedWidth")


def histogram_fixed_width(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """Counts of `values` in `nbins` equal bins over [value_range[0], value_range[1]]; values
    below go to the first bin, above to the last. Output [nbins] of `dtype` (int32/int64).
    InvalidArgumentError at run time for nbins <= 0 or an empty range."""
    with name_scope(name, "histogram_fixed_width", [values, value_range, nbins]) as scope:
        values = convert_to_tensor(values, name="values")
        value_range = convert_to_tensor(value_range, dtype=values.dtype, name="value_range")
        nbins = convert_to_tensor(nbins, dtype=dtypes.int32, name="nbins")
        return apply_op("HistogramFixedWidth", [values, value_range, nbins], {"dtype": as_dtype(dtype)},
                        name=scope)


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """The bin of each of `values` (values' shape, `dtype`): floor(nbins * (v - lo) / (hi - lo)),
    clipped to [0, nbins - 1] (TF1's composite)."""
    with name_scope(name, "histogram_fixed_width_bins", [values, value_range, nbins]):
        values = convert_to_tensor(values, name="values")
        flat = reshape(values, [-1])
        value_range = convert_to_tensor(value_range, dtype=values.dtype, name="value_range")
        nbins_t = convert_to_tensor(nbins, dtype=dtypes.int32, name="nbins")
        nbins_float = cast(nbins_t, values.dtype)
        scaled = realdiv(subtract(flat, value_range[0]), subtract(value_range[1], value_range[0]))
        indices = floor(multiply(nbins_float, scaled), name="indices")
        indices = cast(clip_by_value(indices, 0, subtract(nbins_float, 1)), as_dtype(dtype))
        return reshape(indices, shape(values))


# ---- confusion_matrix ---------------------------------------------------------------------------------


def _checked(x, checks):
    with control_dependencies(checks):
        return identity(x)


def confusion_matrix(labels, predictions, num_classes=None, dtype=dtypes.int32, name=None, weights=None):
    """[num_classes, num_classes] counts: entry [i, j] counts (or sums the `weights` of) the
    examples with label i predicted as j. num_classes defaults to max(labels, predictions) + 1.
    labels, predictions: 1-D integers; InvalidArgumentError at run time for a negative class or one
    >= num_classes; ValueError when the static shapes of predictions and weights differ."""
    with name_scope(name, "confusion_matrix", [predictions, labels, num_classes, weights]):
        labels = convert_to_tensor(labels, name="labels")
        predictions = convert_to_tensor(predictions, name="predictions")
        labels, predictions = _squeeze_pair(labels, predictions)
        predictions = cast(predictions, dtypes.int64)
        labels = cast(labels, dtypes.int64)
        labels = _checked(labels, [assert_non_negative(labels, message="`labels` contains negative values")])
        predictions = _checked(predictions, [assert_non_negative(predictions,
                                                                 message="`predictions` contains negative values")])
        if num_classes is None:
            num_classes = maximum(reduce_max(predictions), reduce_max(labels)) + 1
        else:
            n64 = cast(num_classes, dtypes.int64)
            labels = _checked(labels, [assert_less(labels, n64, message="`labels` out of bound")])
            predictions = _checked(predictions, [assert_less(predictions, n64, message="`predictions` out of bound")])
        dtype = as_dtype(dtype)
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
            predictions.shape.assert_is_compatible_with(weights.shape)
            weights = cast(weights, dtype)
        out_shape = stack([num_classes, num_classes])
        indices = stack([labels, predictions], axis=1)
        values = ones_like(predictions, dtype=dtype) if weights is None else weights
        return scatter_nd(indices, values, cast(out_shape, dtypes.int64))


def _squeeze_pair(labels, predictions):
    """TF1's remove_squeezable_dimensions: a trailing 1 dropped from the one of rank one higher."""
    lr, pr = labels.shape.ndims, predictions.shape.ndims
    if lr is not None and pr is not None:
        if pr - lr == 1 and predictions.shape[-1].value == 1:
            predictions = squeeze(predictions, [-1])
        elif lr - pr == 1 and labels.shape[-1].value == 1:
            labels = squeeze(labels, [-1])
    return labels, predictions
