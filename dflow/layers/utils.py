"""Small helpers the layers share (TF1's `layers/utils.py` and `conv_utils.py`): argument
normalization, output-length arithmetic, and `smart_cond` (a Python or constant predicate picks
its branch when the graph is built; a tensor predicate makes a `cond`)."""

from __future__ import annotations

import numbers

import numpy as np

from ..graph.ops import Tensor
from ..graph.ops import constant_value as _tensor_value
from ..kernels.control_flow_ops import cond

__all__ = ["smart_cond", "constant_value", "normalize_tuple", "normalize_data_format", "normalize_padding",
           "conv_output_length", "deconv_output_length", "channel_axis"]


def constant_value(pred):
    """The Python bool of `pred` if it is known when the graph is built, else None.

    pred: a Python bool/int, or a bool tensor (a Variable or a placeholder gives None).
    TypeError for anything else.
    """
    if isinstance(pred, (bool, np.bool_)):
        return bool(pred)
    if isinstance(pred, numbers.Integral):
        if pred not in (0, 1):
            raise ValueError(f"pred must be a bool or 0/1, got {pred!r}")
        return bool(pred)
    if isinstance(pred, Tensor):
        if not pred.dtype.is_bool:
            raise TypeError(f"pred {pred.name!r} must be a bool tensor, got {pred.dtype.name}")
        v = _tensor_value(pred)
        return None if v is None else bool(v)
    if hasattr(pred, "_as_graph_element"):  # a Variable: its value is known only at run time
        return None
    raise TypeError(f"pred must be a Python bool or a bool Tensor, got {type(pred).__name__}: {pred!r}")


def smart_cond(pred, true_fn, false_fn, name=None):
    """`true_fn()` or `false_fn()` now if `pred` is known at build time, else `cond(pred, ...)`."""
    value = constant_value(pred)
    if value is None:
        return cond(pred, true_fn, false_fn, name=name)
    return true_fn() if value else false_fn()


def normalize_tuple(value, n, name):
    """An int or an iterable of n ints -> a tuple of n ints (ValueError naming `name` otherwise)."""
    if isinstance(value, numbers.Integral):
        return (int(value),) * n
    try:
        out = tuple(value)
    except TypeError:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value!r}") from None
    if len(out) != n or not all(isinstance(v, numbers.Integral) for v in out):
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value!r}")
    return tuple(int(v) for v in out)


def normalize_data_format(value):
    """'channels_last' (default for None) or 'channels_first'; ValueError otherwise."""
    fmt = "channels_last" if value is None else str(value).lower()
    if fmt not in ("channels_first", "channels_last"):
        raise ValueError(f'The `data_format` argument must be one of "channels_first", "channels_last". '
                         f"Received: {value!r}")
    return fmt


def normalize_padding(value):
    """'valid' or 'same' (any case); ValueError otherwise."""
    padding = str(value).lower()
    if padding not in ("valid", "same"):
        raise ValueError(f'The `padding` argument must be one of "valid", "same". Received: {value!r}')
    return padding


def channel_axis(data_format):
    return 1 if data_format == "channels_first" else -1


def conv_output_length(input_length, filter_size, padding, stride, dilation=1):
    """Output length of a convolution or pooling along one axis (None stays None)."""
    if input_length is None:
        return None
    dilated = (filter_size - 1) * dilation + 1
    length = input_length if padding == "same" else input_length - dilated + 1
    return (length + stride - 1) // stride


def deconv_output_length(input_length, filter_size, padding, stride):
    """Output length of a transposed convolution along one axis (None stays None)."""
    if input_length is None:
        return None
    if padding == "same":
        return input_length * stride
    return input_length * stride + max(filter_size - stride, 0)
