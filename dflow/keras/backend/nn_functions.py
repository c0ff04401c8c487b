"""The backend's layer functions: padding, convolutions and poolings with Keras's data_format,
locally connected convolutions, resizes, batch normalization, `rnn` (Keras's step loop over
dflow's while_loop or unrolled), and the CTC names dflow lacks."""

from __future__ import annotations

import builtins

import numpy as np

from ... import errors, nn
from ...eager.context import executing_eagerly
from ...kernels import (
    array_ops,
    creation_ops,
    image_ops,
    manip_ops,
    math_ops,
    pad_ops,
)
from ...kernels.common import convert_to_tensor
from ...kernels.control_flow_ops import while_loop
from ...kernels.linalg_ops import matmul
from ...kernels.tensor_array_ops import TensorArray
from .session import image_data_format, int_shape, ndim
from .tensor_functions import repeat_elements

__all__ = ["temporal_padding", "spatial_2d_padding", "spatial_3d_padding", "bias_add", "conv1d", "conv2d",
           "conv2d_transpose", "depthwise_conv2d", "separable_conv2d", "conv3d", "pool2d", "pool3d",
           "local_conv1d", "local_conv2d", "resize_images", "resize_volumes", "batch_normalization",
           "normalize_batch_in_training", "rnn", "ctc_label_dense_to_sparse", "ctc_batch_cost", "ctc_decode"]

def _normalize_data_format(data_format):
    data_format = image_data_format() if data_format is None else data_format
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError("Unknown data_format: " + str(data_format))
    return data_format


def _padding_mode(padding):
    if padding == "same":
        return "SAME"
    if padding == "valid":
        return "VALID"
    raise ValueError("Invalid padding: " + str(padding))


def _to_last(x, data_format, rank):
    """channels_first -> channels_last (Keras transposes around TF's NHWC ops)."""
    return manip_ops.transpose(x, [0] + list(range(2, rank)) + [1]) if data_format == "channels_first" else x


def _to_first(x, data_format, rank):
    return manip_ops.transpose(x, [0, rank - 1] + list(range(1, rank - 1))) if data_format == "channels_first" else x


def _pair(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


def temporal_padding(x, padding=(1, 1)):
    """Zeros added before/after axis 1 of a [batch, time, features] tensor."""
    if len(padding) != 2:
        raise ValueError(f"temporal_padding: padding must be a pair, got {padding!r}")
    return pad_ops.pad(x, [[0, 0], list(padding), [0, 0]])


def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    data_format = _normalize_data_format(data_format)
    if len(padding) != 2 or len(padding[0]) != 2 or len(padding[1]) != 2:
        raise ValueError(f"spatial_2d_padding: padding must be 2 pairs, got {padding!r}")
    spatial = [list(padding[0]), list(padding[1])]
    pads = [[0, 0], [0, 0]] + spatial if data_format == "channels_first" else [[0, 0]] + spatial + [[0, 0]]
    return pad_ops.pad(x, pads)


def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    data_format = _normalize_data_format(data_format)
    if len(padding) != 3 or builtins.any(len(p) != 2 for p in padding):
        raise ValueError(f"spatial_3d_padding: padding must be 3 pairs, got {padding!r}")
    spatial = [list(p) for p in padding]
    pads = [[0, 0], [0, 0]] + spatial if data_format == "channels_first" else [[0, 0]] + spatial + [[0, 0]]
    return pad_ops.pad(x, pads)


def bias_add(x, bias, data_format=None):
    """x + bias over the channels axis (a bias of rank ndim(x) - 1 is added as a whole)."""
    data_format = _normalize_data_format(data_format)
    x = convert_to_tensor(x)
    bias_shape = int_shape(bias)
    if len(bias_shape) != 1 and len(bias_shape) != ndim(x) - 1:
        raise ValueError("Unexpected bias dimensions %d, expect to be 1 or %d dimensions" % (
            len(bias_shape), ndim(x)))
    if len(bias_shape) == 1:
        if data_format == "channels_first" and ndim(x) > 2:
            return x + array_ops.reshape(bias, [1, bias_shape[0]] + [1] * (ndim(x) - 2))
        return nn.bias_add(x, bias)
    if data_format == "channels_first":
        return x + array_ops.reshape(bias, (1, bias_shape[-1]) + tuple(bias_shape[:-1]))
    return x + array_ops.reshape(bias, (1,) + tuple(bias_shape))


def conv1d(x, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """1-D convolution of [batch, steps, channels] (or channels_first) by [k, in, out];
    padding 'causal' pads the left with dilation_rate * (k - 1) zeros."""
    data_format = _normalize_data_format(data_format)
    if padding == "causal":
        left = dilation_rate * (int_shape(kernel)[0] - 1)
        x = _to_first(temporal_padding(_to_last(x, data_format, 3), (left, 0)), data_format, 3)
        padding = "valid"
    x = _to_last(x, data_format, 3)
    y = nn.conv1d(x, kernel, stride=strides, padding=_padding_mode(padding), data_format="NWC",
                  dilations=dilation_rate)
    return _to_first(y, data_format, 3)


def conv2d(x, kernel, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1)):
    """2-D convolution of [batch, rows, cols, channels] (or channels_first) by [kh, kw, in, out]."""
    data_format = _normalize_data_format(data_format)
    x = _to_last(x, data_format, 4)
    y = nn.conv2d(x, kernel, strides=(1,) + _pair(strides, 2) + (1,), padding=_padding_mode(padding),
                  data_format="NHWC", dilations=(1,) + _pair(dilation_rate, 2) + (1,))
    return _to_first(y, data_format, 4)


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    """The transpose of conv2d: `kernel` [kh, kw, out, in], `output_shape` in `data_format`'s
    layout (a None batch is the input's)."""
    data_format = _normalize_data_format(data_format)
    if tuple(_pair(dilation_rate, 2)) != (1, 1):
        raise errors.UnimplementedError(None, None, "conv2d_transpose: dflow's Conv2DBackpropInput has no "
                                                    f"dilations; got dilation_rate={dilation_rate}")
    x = _to_last(x, data_format, 4)
    if isinstance(output_shape, (list, tuple)):
        output_shape = list(output_shape)
        if data_format == "channels_first":
            output_shape = [output_shape[0], output_shape[2], output_shape[3], output_shape[1]]
        if output_shape[0] is None:
            output_shape = array_ops.stack([array_ops.shape(x)[0]] + output_shape[1:])
    y = nn.conv2d_transpose(x, kernel, output_shape, strides=(1,) + _pair(strides, 2) + (1,),
                            padding=_padding_mode(padding), data_format="NHWC")
    return _to_first(y, data_format, 4)


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    data_format = _normalize_data_format(data_format)
    x = _to_last(x, data_format, 4)
    y = nn.depthwise_conv2d(x, depthwise_kernel, strides=(1,) + _pair(strides, 2) + (1,),
                            padding=_padding_mode(padding), rate=_pair(dilation_rate, 2), data_format="NHWC")
    return _to_first(y, data_format, 4)


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    data_format = _normalize_data_format(data_format)
    if ndim(x) != 4:
        raise ValueError("Input should have rank 4.")
    x = _to_last(x, data_format, 4)
    y = nn.separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1,) + _pair(strides, 2) + (1,),
                            padding=_padding_mode(padding), rate=_pair(dilation_rate, 2), data_format="NHWC")
    return _to_first(y, data_format, 4)


def conv3d(x, kernel, strides=(1, 1, 1), padding="valid", data_format=None, dilation_rate=(1, 1, 1)):
    """3-D convolution of [batch, d, h, w, channels] (or channels_first) by [kd, kh, kw, in, out].

    dflow has no Conv3D op: the output is summed from 2-D convolutions of depth slices, so the
    depth must be static (ValueError otherwise)."""
    data_format = _normalize_data_format(data_format)
    x = _to_last(convert_to_tensor(x), data_format, 5)
    strides, dilation_rate = _pair(strides, 3), _pair(dilation_rate, 3)
    depth = x.shape[1].value
    if depth is None:
        raise ValueError(f"conv3d: dflow builds 3-D convolutions from 2-D ones and needs a static depth; "
                         f"got an input of shape {x.shape}")
    kd, sd, dd = int_shape(kernel)[0], strides[0], dilation_rate[0]
    span = (kd - 1) * dd + 1
    if padding == "same":
        out_depth = -(-depth // sd)
        total = builtins.max((out_depth - 1) * sd + span - depth, 0)
        x = pad_ops.pad(x, [[0, 0], [total // 2, total - total // 2], [0, 0], [0, 0], [0, 0]])
    elif padding == "valid":
        out_depth = (depth - span) // sd + 1
    else:
        raise ValueError("Invalid padding: " + str(padding))
    mode = _padding_mode(padding)
    kernels = manip_ops.unstack(kernel, num=kd, axis=0)
    slices = manip_ops.unstack(x, axis=1)
    outputs = []
    for od in range(out_depth):
        terms = [nn.conv2d(slices[od * sd + k * dd], kernels[k], strides=[1, strides[1], strides[2], 1],
                           padding=mode, dilations=[1, dilation_rate[1], dilation_rate[2], 1])
                 for k in range(kd)]
        outputs.append(manip_ops.add_n(terms) if len(terms) > 1 else terms[0])
    return _to_first(array_ops.stack(outputs, axis=1), data_format, 5)


def _pool(x, pool_size, strides, padding, data_format, pool_mode, rank, max_fn, avg_fn):
    data_format = _normalize_data_format(data_format)
    if pool_mode not in ("max", "avg"):
        raise ValueError("Invalid pooling mode: " + str(pool_mode))
    n = rank - 2
    x = _to_last(x, data_format, rank)
    fn = max_fn if pool_mode == "max" else avg_fn
    y = fn(x, (1,) + _pair(pool_size, n) + (1,), (1,) + _pair(strides, n) + (1,), _padding_mode(padding))
    return _to_first(y, data_format, rank)


def pool2d(x, pool_size, strides=(1, 1), padding="valid", data_format=None, pool_mode="max"):
    if len(pool_size) != 2:
        raise ValueError("`pool_size` must be a tuple of 2 integers.")
    if len(strides) != 2:
        raise ValueError("`strides` must be a tuple of 2 integers.")
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 4, nn.max_pool2d, nn.avg_pool2d)


def pool3d(x, pool_size, strides=(1, 1, 1), padding="valid", data_format=None, pool_mode="max"):
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 5, nn.max_pool3d, nn.avg_pool3d)


def _local_conv(inputs, kernel, kernel_size, strides, output_shape, data_format):
    """Keras's local_conv: a separate kernel per output position ([positions, k * in, out])."""
    data_format = _normalize_data_format(data_format)
    rank = len(output_shape)
    x = _to_last(convert_to_tensor(inputs), data_format, rank + 2)
    feature_dim = int_shape(kernel)[1]
    channels = int_shape(kernel)[-1]
    patches = []
    for position in np.ndindex(*output_shape):
        index = (slice(None),) + tuple(slice(p * s, p * s + k) for p, s, k in zip(position, strides, kernel_size))
        patches.append(array_ops.reshape(x[index], [1, -1, feature_dim]))
    xs = manip_ops.concat(patches, 0)  # [positions, batch, feature_dim]
    output = matmul(xs, kernel)  # [positions, batch, filters]
    output = array_ops.reshape(output, list(output_shape) + [-1, channels])
    output = manip_ops.transpose(output, [rank] + list(range(rank)) + [rank + 1])  # batch first
    return _to_first(output, data_format, rank + 2)


def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
    """Unshared 1-D convolution: `kernel` [output_length, k * in, filters]."""
    output_length = int_shape(kernel)[0]
    return _local_conv(inputs, kernel, _pair(kernel_size, 1), _pair(strides, 1), (output_length,), data_format)


def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
    """Unshared 2-D convolution: `kernel` [rows * cols, kh * kw * in, filters]."""
    return _local_conv(inputs, kernel, _pair(kernel_size, 2), _pair(strides, 2), tuple(output_shape), data_format)


def resize_images(x, height_factor, width_factor, data_format, interpolation="nearest"):
    """Rows and columns scaled by integer factors ('nearest' or 'bilinear')."""
    data_format = _normalize_data_format(data_format)
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError("interpolation should be one of \"nearest\" or \"bilinear\".")
    x = _to_last(convert_to_tensor(x), data_format, 4)
    rows, cols = x.shape[1].value, x.shape[2].value
    if rows is not None and cols is not None:
        size = [rows * height_factor, cols * width_factor]
    else:
        dims = array_ops.shape(x)
        size = array_ops.stack([dims[1] * height_factor, dims[2] * width_factor])
    if interpolation == "nearest":
        y = image_ops.resize_nearest_neighbor(x, size)
    else:
        y = image_ops.resize_bilinear(x, size)
    return _to_first(y, data_format, 4)


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    """Depth, rows and columns repeated by integer factors."""
    data_format = _normalize_data_format(data_format)
    first = 2 if data_format == "channels_first" else 1
    y = repeat_elements(x, depth_factor, axis=first)
    y = repeat_elements(y, height_factor, axis=first + 1)
    return repeat_elements(y, width_factor, axis=first + 2)


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """(x - mean) / sqrt(var + epsilon) * gamma + beta (beta/gamma may be None)."""
    return nn.batch_normalization(x, mean, var, beta, gamma, epsilon)


def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """(normalized x, mean, variance) with the batch's statistics over `reduction_axes`; the
    statistics keep the other axes (shape of x without the reduced ones)."""
    x = convert_to_tensor(x)
    rank = x.shape.ndims
    reduction_axes = sorted(a % rank for a in reduction_axes)
    mean_, variance = nn.moments(x, reduction_axes)
    kept = [a for a in range(rank) if a not in reduction_axes]
    dims = array_ops.shape(x)
    target = array_ops.stack([dims[a] if a in kept else 1 for a in range(rank)])

    def broadcast(t):
        return None if t is None else array_ops.reshape(t, target)

    normed = nn.batch_normalization(x, broadcast(mean_), broadcast(variance), broadcast(beta), broadcast(gamma),
                                    epsilon)
    return normed, mean_, variance


def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None, constants=None, unroll=False,
        input_length=None, time_major=False, zero_output_for_mask=False):
    """Keras's loop: `step_function(x_t, states + constants) -> (output, new_states)` over the time
    axis of `inputs` ([batch, time, ...], or [time, batch, ...] when time_major).

    Returns (last_output, outputs [batch, time, ...], new_states). Where `mask` ([batch, time]) is
    False the states are carried over and the output is the previous one (zeros when
    zero_output_for_mask). A static time axis is unrolled when `unroll` (or eagerly); otherwise
    a while_loop runs over a TensorArray."""
    del input_length
    inputs = convert_to_tensor(inputs)
    rank = inputs.shape.ndims
    if rank is None or rank < 3:
        raise ValueError("Input should be at least 3D.")
    x = inputs if time_major else manip_ops.transpose(inputs, [1, 0] + list(range(2, rank)))
    constants = list(constants or [])
    states = list(initial_states)
    if mask is not None:
        mask = convert_to_tensor(mask)
        if mask.dtype != "bool":
            mask = math_ops.cast(mask, "bool")
        if mask.shape.ndims == 2:
            mask = manip_ops.expand_dims(mask, -1)
        if not time_major:
            mask = manip_ops.transpose(mask, [1, 0] + list(range(2, mask.shape.ndims)))
    if go_backwards:
        x = manip_ops.reverse(x, [0])
        if mask is not None:
            mask = manip_ops.reverse(mask, [0])

    def select(m, new, old):
        m = convert_to_tensor(m)
        for _ in range(new.shape.ndims - m.shape.ndims):
            m = manip_ops.expand_dims(m, -1)
        return math_ops.where(m, new, old)

    steps = x.shape[0].value
    if unroll or executing_eagerly():
        if steps is None:
            raise ValueError("Unrolling requires a fixed number of timesteps.")
        xs = manip_ops.unstack(x, num=steps)
        ms = manip_ops.unstack(mask, num=steps) if mask is not None else [None] * steps
        outputs, prev = [], None
        for x_t, m_t in zip(xs, ms):
            out, new_states = step_function(x_t, tuple(states) + tuple(constants))
            new_states = list(new_states) if isinstance(new_states, (list, tuple)) else [new_states]
            if m_t is not None:
                base = creation_ops.zeros_like(out) if prev is None or zero_output_for_mask else prev
                out = select(m_t, out, base)
                new_states = [select(m_t, n, s) for n, s in zip(new_states, states)]
            prev, states = out, new_states
            outputs.append(out)
        stacked = array_ops.stack(outputs)
        out_rank = stacked.shape.ndims
        if not time_major:
            stacked = manip_ops.transpose(stacked, [1, 0] + list(range(2, out_rank)))
        return prev, stacked, states

    # while_loop: one step on the first input fixes the output's shape and dtype
    first_out, _ = step_function(x[0], tuple(states) + tuple(constants))
    steps_t = array_ops.shape(x)[0] if steps is None else steps
    input_ta = TensorArray(x.dtype, size=steps_t, element_shape=x.shape[1:], tensor_array_name="input_ta").unstack(x)
    mask_ta = TensorArray("bool", size=steps_t, element_shape=mask.shape[1:],
                          tensor_array_name="mask_ta").unstack(mask) if mask is not None else None
    output_ta = TensorArray(first_out.dtype, size=steps_t, element_shape=first_out.shape,
                            tensor_array_name="output_ta")
    n_states = len(states)
    zero_output = creation_ops.zeros_like(first_out)

    def body(t, out_ta, prev, *st):
        x_t = input_ta.read(t)
        x_t.set_shape(x.shape[1:])
        out, new_states = step_function(x_t, tuple(st) + tuple(constants))
        new_states = list(new_states) if isinstance(new_states, (list, tuple)) else [new_states]
        if mask_ta is not None:
            m_t = mask_ta.read(t)
            m_t.set_shape(mask.shape[1:])
            out = select(m_t, out, zero_output if zero_output_for_mask else prev)
            new_states = [select(m_t, n, s) for n, s in zip(new_states, st)]
        for n, s in zip(new_states, st):
            n.set_shape(s.shape)
        out.set_shape(first_out.shape)
        return (math_ops.add(t, 1), out_ta.write(t, out), out) + tuple(new_states)

    time = convert_to_tensor(0, dtype="int32", name="time")
    result = while_loop(lambda t, *_: math_ops.less(t, steps_t), body,
                        (time, output_ta, zero_output) + tuple(states), maximum_iterations=steps_t)
    outputs = result[1].stack()
    out_rank = outputs.shape.ndims
    if not time_major:
        outputs = manip_ops.transpose(outputs, [1, 0] + list(range(2, out_rank)))
    return result[2], outputs, list(result[3:3 + n_states])


def _no_ctc(name, tf_op):
    def missing(*args, **kwargs):
        raise errors.UnimplementedError(None, None, f"tf.keras.backend.{name} needs TensorFlow's {tf_op}, which "
                                                    "dflow does not implement (it has no CTC ops)")
    missing.__name__ = name
    missing.__doc__ = f"Not available: dflow has no {tf_op} (raises UnimplementedError)."
    return missing


ctc_label_dense_to_sparse = _no_ctc("ctc_label_dense_to_sparse", "tf.nn.ctc_loss label conversion")
ctc_batch_cost = _no_ctc("ctc_batch_cost", "tf.nn.ctc_loss (op CTCLoss)")
ctc_decode = _no_ctc("ctc_decode", "tf.nn.ctc_greedy_decoder / ctc_beam_search_decoder")

