"""TF1's spellings of convolution pieces dflow already has: the depthwise backprop ops (ops of
`kernels/depthwise_ops.py`), conv3d_backprop_filter (the gradient of the composite conv3d),
atrous_conv2d_transpose (a dilated conv2d_transpose), with_space_to_batch (TF1's
space_to_batch_nd / op / batch_to_space_nd), and safe_embedding_lookup_sparse."""

from __future__ import annotations

import numpy as np

from ..graph import dtypes
from ..graph.gradients import gradients
from ..graph.graph import name_scope
from ..graph.ops import constant_value
from ..kernels.array_ops import reshape, shape
from ..kernels.common import apply_op, convert_pair, convert_to_tensor
from ..kernels.conv_ops import _conv_attrs, conv2d_transpose
from ..kernels.creation_ops import _int_input, zeros
from ..kernels.manip_ops import concat
from ..kernels.math_ops import cast, greater, greater_equal, logical_and, logical_not, multiply
from ..kernels.reduction_ops import reduce_prod
from ..kernels.space_ops import batch_to_space_nd, space_to_batch_nd
from ..kernels.sparse_manip_ops import sparse_fill_empty_rows, sparse_reshape, sparse_retain
from ..kernels.sparse_ops import SparseTensor
from .conv3d import conv3d
from .core import embedding_lookup_sparse

__all__ = ["depthwise_conv2d_backprop_input", "depthwise_conv2d_backprop_filter",
           "depthwise_conv2d_native_backprop_input", "depthwise_conv2d_native_backprop_filter",
           "conv3d_backprop_filter", "conv3d_backprop_filter_v2", "atrous_conv2d_transpose", "with_space_to_batch",
           "safe_embedding_lookup_sparse"]


def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop, strides, padding,  # noqa: A002
                                           data_format="NHWC", dilations=[1, 1, 1, 1], name=None):  # noqa: B006
    """The gradient of depthwise_conv2d_native with respect to its input of shape `input_sizes`
    (op `DepthwiseConv2dNativeBackpropInput`); `out_backprop` has the convolution's output shape."""
    attrs = _conv_attrs(strides, padding, data_format, dilations)
    with name_scope(name, "DepthwiseConv2dNativeBackpropInput", [filter, out_backprop]) as scope:
        dy, w = convert_pair(out_backprop, filter, "DepthwiseConv2dNativeBackpropInput")
        sizes = _int_input(input_sizes, "input_sizes", "DepthwiseConv2dNativeBackpropInput")
        return apply_op("DepthwiseConv2dNativeBackpropInput", [sizes, w, dy], attrs, name=scope)


def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                                            data_format="NHWC", dilations=[1, 1, 1, 1], name=None):  # noqa: B006
    """The gradient of depthwise_conv2d_native with respect to its filter of shape `filter_sizes`
    (op `DepthwiseConv2dNativeBackpropFilter`)."""
    attrs = _conv_attrs(strides, padding, data_format, dilations)
    with name_scope(name, "DepthwiseConv2dNativeBackpropFilter", [input, out_backprop]) as scope:
        x, dy = convert_pair(input, out_backprop, "DepthwiseConv2dNativeBackpropFilter")
        sizes = _int_input(filter_sizes, "filter_sizes", "DepthwiseConv2dNativeBackpropFilter")
        return apply_op("DepthwiseConv2dNativeBackpropFilter", [x, sizes, dy], attrs, name=scope)


depthwise_conv2d_backprop_input = depthwise_conv2d_native_backprop_input
depthwise_conv2d_backprop_filter = depthwise_conv2d_native_backprop_filter


def conv3d_backprop_filter(input, filter_sizes, out_backprop, strides, padding, data_format="NDHWC",  # noqa: A002
                           dilations=[1, 1, 1, 1, 1], name=None):  # noqa: B006
    """The gradient of conv3d with respect to its filter of shape `filter_sizes` (static, 5 ints):
    conv3d is linear in the filter, so this is the gradient of conv3d at a zero filter."""
    sizes = constant_value(convert_to_tensor(filter_sizes)) if not isinstance(filter_sizes, (list, tuple)) \
        else np.asarray(filter_sizes)
    if sizes is None or np.asarray(sizes).shape != (5,):
        raise ValueError(f"conv3d_backprop_filter: filter_sizes must be 5 static ints, got {filter_sizes}")
    with name_scope(name, "Conv3DBackpropFilterV2", [input, out_backprop]):
        x = convert_to_tensor(input, name="input")
        w = zeros([int(s) for s in sizes], x.dtype)
        y = conv3d(x, w, strides=strides, padding=padding, data_format=data_format, dilations=dilations)
        return gradients(y, w, grad_ys=convert_to_tensor(out_backprop, dtype=x.dtype))[0]


conv3d_backprop_filter_v2 = conv3d_backprop_filter


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """The transpose of atrous_conv2d: conv2d_transpose of `value` by `filters` [KH, KW, out_c,
    in_c] dilated by `rate`, stride 1. ValueError for a rate below 1 or a bad padding."""
    if int(rate) < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"padding must be either VALID or SAME: {padding}")
    with name_scope(name, "atrous_conv2d_transpose", [value, filters, output_shape]) as scope:
        return conv2d_transpose(value, filters, output_shape, strides=[1, 1, 1, 1], padding=padding.upper(),
                                dilations=[1, int(rate), int(rate), 1], name=scope)


def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None, spatial_dims=None,  # noqa: A002
                        data_format=None):
    """`op(converted_input, num_spatial_dims, padding)` run on the space_to_batch_nd of `input` by
    `dilation_rate` and turned back by batch_to_space_nd (TF1's): a stride-1 op becomes its dilated
    form. The input's spatial shape must be static; SAME padding needs `filter_shape`."""
    x = convert_to_tensor(input, name="input")
    rate = np.asarray(dilation_rate, np.int64).reshape(-1)
    n = rate.size
    if spatial_dims is None:
        start = 2 if data_format is not None and data_format.startswith("NC") else 1
        spatial_dims = list(range(start, start + n))
    if list(spatial_dims) != list(range(spatial_dims[0], spatial_dims[0] + n)) or spatial_dims[0] != 1:
        raise ValueError(f"with_space_to_batch: dflow supports the spatial dims 1..{n} of a channels-last input, "
                         f"got {spatial_dims}")
    if np.any(rate < 1):
        raise ValueError(f"dilation_rate must be positive, got {rate.tolist()}")
    if np.all(rate == 1):
        return op(x, n, padding)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("filter_shape must be specified for SAME padding")
        dilated = (np.asarray(filter_shape, np.int64).reshape(-1) - 1) * rate + 1
        base = np.stack([(dilated - 1) // 2, dilated - 1 - (dilated - 1) // 2], axis=1)
    elif padding == "VALID":
        base = np.zeros((n, 2), np.int64)
    else:
        raise ValueError(f"Invalid padding method {padding!r}")
    dims = x.shape.as_list()[1:1 + n] if x.shape.ndims is not None else [None]
    if None in dims:
        raise ValueError(f"with_space_to_batch: needs the input's static spatial shape, got {x.shape}")
    full = np.asarray(dims) + base[:, 0] + base[:, 1]
    extra = (rate - full % rate) % rate
    paddings = np.stack([base[:, 0], base[:, 1] + extra], axis=1)
    crops = np.stack([np.zeros(n, np.int64), extra], axis=1)
    y = op(space_to_batch_nd(x, rate, paddings), n, "VALID")
    return batch_to_space_nd(y, rate, crops)


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None, combiner="mean",
                                 default_id=None, name=None, partition_strategy="div", max_norm=None,
                                 allow_fast_lookup=False):
    """embedding_lookup_sparse that drops invalid ids (< 0) and weights <= 0, gives rows without ids
    the embedding of `default_id` (zeros when None), and keeps sparse_ids' batch shape (rank >= 2):
    [d0, ..., dn-1] + embedding dims, as TF1's."""
    del allow_fast_lookup
    if not isinstance(sparse_ids, SparseTensor):
        raise TypeError("sparse_ids must be SparseTensor")
    with name_scope(name, "embedding_lookup", [sparse_ids]) as scope:
        original_shape = sparse_ids.dense_shape
        batch = original_shape[:-1]
        ids = sparse_reshape(sparse_ids, concat([reshape(reduce_prod(batch), [1]), original_shape[-1:]], 0))
        weights = None
        if sparse_weights is not None:
            weights = sparse_reshape(sparse_weights, ids.dense_shape)
        keep = greater_equal(ids.values, cast(0, ids.values.dtype))
        if weights is not None:
            keep = logical_and(keep, greater(weights.values, cast(0, weights.values.dtype)))
            weights = sparse_retain(weights, keep)
        ids = sparse_retain(ids, keep)
        ids, is_empty = sparse_fill_empty_rows(ids, default_id or 0)
        if weights is not None:
            weights, _ = sparse_fill_empty_rows(weights, 1.0)
        result = embedding_lookup_sparse(embedding_weights, ids, weights, combiner=combiner,
                                         partition_strategy=partition_strategy, max_norm=max_norm)
        if default_id is None:  # rows that had no valid id are zeros
            keep_row = cast(logical_not(is_empty), result.dtype)
            result = multiply(result, reshape(keep_row, [-1] + [1] * ((result.shape.ndims or 2) - 1)))
        out_shape = concat([cast(batch, dtypes.int32), shape(result)[1:]], 0)
        return reshape(result, out_shape, name=scope)
