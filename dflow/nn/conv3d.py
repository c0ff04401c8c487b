"""3-D convolutions and the 1-D transposed convolution as composites of the 2-D convolution ops
(dflow has no Conv3D op; Keras's Conv3D layer builds the same sum): conv3d is the sum over the
filter's depth of conv2d of depth slices, conv3d_transpose the sum of conv2d_transposes placed at
depth i·stride + j. Gradients come from the 2-D ops. The input's depth must be static."""

from __future__ import annotations

from ..graph.graph import name_scope
from ..graph.ops import constant_value
from ..kernels.array_ops import identity, reshape, shape
from ..kernels.common import convert_to_tensor
from ..kernels.conv_ops import conv2d, conv2d_transpose
from ..kernels.manip_ops import add_n, concat, expand_dims, squeeze, stack, transpose, unstack
from ..kernels.pad_ops import pad

__all__ = ["conv3d", "conv3d_transpose", "conv1d_transpose", "conv_transpose"]


def _five(values, what, fmt):
    """The (depth, height, width) entries of a 5-element strides/dilations list."""
    values = [1] * 5 if values is None else list(values)
    if len(values) == 1:
        values = values * 3
    if len(values) == 3:
        return values
    if len(values) != 5:
        raise ValueError(f"{what} must be a list of 5 ints (or 3, or 1), got {values}")
    outer = (values[0], values[1]) if fmt == "NCDHW" else (values[0], values[4])
    if outer != (1, 1):
        raise ValueError(f"{what} in the batch and depth dimensions must be 1, got {values}")
    return values[2:] if fmt == "NCDHW" else values[1:4]


def _check(fmt, padding, fn):
    if fmt not in ("NDHWC", "NCDHW"):
        raise ValueError(f"{fn}: data_format must be NDHWC or NCDHW, got {fmt!r}")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"{fn}: padding must be either VALID or SAME: {padding}")
    return padding.upper()


def _static_depth(x, fn):
    depth = x.shape[1].value if x.shape.ndims == 5 else None
    if depth is None:
        raise ValueError(f"{fn}: dflow builds 3-D convolutions from 2-D ones and needs a 5-D input with a static "
                         f"depth; got {x.name} of shape {x.shape}")
    return depth


def conv3d(input, filter=None, strides=None, padding=None, data_format="NDHWC",  # noqa: A002 - TF1 names
           dilations=(1, 1, 1, 1, 1), name=None, filters=None):
    """3-D cross-correlation of `input` [N, D, H, W, C] (NDHWC; or NCDHW) by `filter`
    [KD, KH, KW, C, O]. ValueError for a bad format/padding, strides/dilations of the wrong length
    or not 1 on batch/channels, or an input whose depth is not static."""
    filter = filters if filter is None else filter
    padding = _check(data_format, padding, "conv3d")
    sd, sh, sw = _five(strides, "strides", data_format)
    dd, dh, dw = _five(dilations, "dilations", data_format)
    with name_scope(name, "Conv3D", [input, filter]) as scope:
        x = convert_to_tensor(input)
        w = convert_to_tensor(filter, dtype=x.dtype)
        if data_format == "NCDHW":
            x = transpose(x, [0, 2, 3, 4, 1])
        depth = _static_depth(x, "conv3d")
        kd = w.shape[0].value
        if kd is None or w.shape.ndims != 5:
            raise ValueError(f"conv3d: the filter must be 5-D [KD, KH, KW, in, out] with a static KD; got {w.shape}")
        span = (kd - 1) * dd + 1
        if padding == "SAME":
            out_depth = -(-depth // sd)
            total = max((out_depth - 1) * sd + span - depth, 0)
            x = pad(x, [[0, 0], [total // 2, total - total // 2], [0, 0], [0, 0], [0, 0]])
        else:
            out_depth = (depth - span) // sd + 1
            if out_depth < 1:
                raise ValueError(f"conv3d: the filter's depth {kd} (dilated {span}) exceeds the input's depth {depth}")
        slices, kernels = unstack(x, axis=1), unstack(w, num=kd, axis=0)
        outputs = []
        for od in range(out_depth):
            terms = [conv2d(slices[od * sd + k * dd], kernels[k], strides=[1, sh, sw, 1], padding=padding,
                            dilations=[1, dh, dw, 1]) for k in range(kd)]
            outputs.append(add_n(terms) if kd > 1 else terms[0])
        out = stack(outputs, axis=1)
        if data_format == "NCDHW":
            out = transpose(out, [0, 4, 1, 2, 3])
        return identity(out, name=scope)


def conv3d_transpose(value=None, filter=None, output_shape=None, strides=None, padding="SAME",  # noqa: A002
                     data_format="NDHWC", name=None, input=None, filters=None, dilations=None):  # noqa: A002
    """The transpose of conv3d: `value` [N, D, H, W, in] by `filter` [KD, KH, KW, out, in] gives
    `output_shape` [N, OD, OH, OW, out] (OD static). Dilations other than 1 are not supported
    (ValueError), nor is a depth that is not static."""
    value = input if value is None else value
    filter = filters if filter is None else filter
    padding = _check(data_format, padding, "conv3d_transpose")
    sd, sh, sw = _five(strides, "strides", data_format)
    if tuple(_five(dilations, "dilations", data_format)) != (1, 1, 1):
        raise ValueError(f"conv3d_transpose: dflow supports dilations of 1 only, got {dilations}")
    with name_scope(name, "conv3d_transpose", [value, filter, output_shape]) as scope:
        x = convert_to_tensor(value)
        w = convert_to_tensor(filter, dtype=x.dtype)
        if data_format == "NCDHW":
            x = transpose(x, [0, 2, 3, 4, 1])
        depth = _static_depth(x, "conv3d_transpose")
        sizes = convert_to_tensor(output_shape)
        known = constant_value(sizes)
        if known is None or len(known) != 5:
            raise ValueError(f"conv3d_transpose: output_shape must be 5 known ints, got {output_shape}")
        known = [int(v) for v in known]
        if data_format == "NCDHW":
            known = [known[0], known[2], known[3], known[4], known[1]]
        n, od, oh, ow, out_c = known
        kd = w.shape[0].value
        if kd is None or w.shape.ndims != 5:
            raise ValueError(f"conv3d_transpose: the filter must be 5-D [KD, KH, KW, out, in] with a static KD; "
                             f"got {w.shape}")
        if w.shape[3].value is not None and w.shape[3].value != out_c:
            raise ValueError(f"conv3d_transpose: output_shape does not match filter's output channels, "
                             f"{out_c} != {w.shape[3].value}")
        dyn = shape(x)
        flat = reshape(x, concat([[n * depth], dyn[2:]], 0))
        # the forward convolution's padding along depth (TF's), then where each slice lands
        before = max((depth - 1) * sd + kd - od, 0) // 2 if padding == "SAME" else 0
        full = max((depth - 1) * sd + kd, od + before)
        span = (depth - 1) * sd + 1
        terms = []
        for j, kernel in enumerate(unstack(w, num=kd, axis=0)):
            y = conv2d_transpose(flat, kernel, [n * depth, oh, ow, out_c], strides=[1, sh, sw, 1], padding=padding)
            y = reshape(y, [n, depth, oh, ow, out_c])
            if sd > 1:  # slice i lands at depth i·sd: zeros in between
                y = reshape(stack([y] + [y * 0.0] * (sd - 1), axis=2), [n, depth * sd, oh, ow, out_c])[:, :span]
            terms.append(pad(y, [[0, 0], [j, full - j - span], [0, 0], [0, 0], [0, 0]]))
        out = (add_n(terms) if kd > 1 else terms[0])[:, before:before + od]
        if data_format == "NCDHW":
            out = transpose(out, [0, 4, 1, 2, 3])
        return identity(out, name=scope)


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NWC",  # noqa: A002
                     dilations=None, name=None):
    """The transpose of conv1d: `input` [N, W, in] by `filters` [K, out, in] gives `output_shape`
    [N, OW, out], through conv2d_transpose with a height of 1 (as TF)."""
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"conv1d_transpose: data_format must be NWC or NCW, got {data_format!r}")
    strides = list(strides) if isinstance(strides, (list, tuple)) else [strides]
    stride = strides[0] if len(strides) == 1 else (strides[1] if data_format == "NWC" else strides[2])
    dil = [1] if dilations is None else (list(dilations) if isinstance(dilations, (list, tuple)) else [dilations])
    dil = dil[0] if len(dil) == 1 else (dil[1] if data_format == "NWC" else dil[2])
    with name_scope(name, "conv1d_transpose", [input, filters, output_shape]) as scope:
        x = convert_to_tensor(input)
        axis = 1 if data_format == "NWC" else 2
        fmt = "NHWC" if data_format == "NWC" else "NCHW"
        sizes = convert_to_tensor(output_shape)
        sizes4 = concat([sizes[:axis], [1], sizes[axis:]], 0)
        st = [1, 1, stride, 1] if fmt == "NHWC" else [1, 1, 1, stride]
        dl = [1, 1, dil, 1] if fmt == "NHWC" else [1, 1, 1, dil]
        y = conv2d_transpose(expand_dims(x, axis), expand_dims(convert_to_tensor(filters, dtype=x.dtype), 0),
                             sizes4, strides=st, padding=padding, data_format=fmt, dilations=dl)
        return squeeze(y, [axis], name=scope)


def conv_transpose(input, filters, output_shape, strides, padding="SAME", data_format=None,  # noqa: A002
                   dilations=None, name=None):
    """The transpose of `convolution` in 1, 2 or 3 dimensions, chosen by the length of
    output_shape (3, 4 or 5)."""
    n = len(output_shape) if isinstance(output_shape, (list, tuple)) else \
        convert_to_tensor(output_shape).shape[0].value
    if n == 3:
        return conv1d_transpose(input, filters, output_shape, strides, padding, data_format or "NWC", dilations, name)
    if n == 4:
        return conv2d_transpose(input, filters, output_shape, strides, padding, data_format or "NHWC", name,
                                dilations=dilations)
    if n == 5:
        return conv3d_transpose(input, filters, output_shape, strides, padding, data_format or "NDHWC", name,
                                dilations=dilations)
    raise ValueError(f"conv_transpose: output_shape must have 3, 4 or 5 elements, got {output_shape}")
