"""TF1's space/depth/batch shuffles and patch extraction: SpaceToDepth, DepthToSpace,
SpaceToBatchND, BatchToSpaceND (tf.space_to_batch and tf.batch_to_space are these with a square
block, as TF1's Python wrappers), ExtractImagePatches (and its gradient op), UnravelIndex.

Each is a reshape/transpose (or an index gather) of the whole input, run as one numpy task
(`numpy_op`: eagerly and as one Dask task). The shuffles are each other's gradients, as TF1's
array_grad.py; ExtractImagePatches' gradient scatters the patches back (np.add.at), which TF1 does
with a sparse matmul. Shapes and errors follow TF's shape functions ("Dimension size must be
evenly divisible by 2 but is 5 ...").
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.ops import constant_value
from ..graph.registry import def_grad, not_differentiable
from ..graph.shape import TensorShape
from .common import INT, apply_op, check_dtype, convert_to_tensor
from .numpy_kernels import numpy_op

__all__ = ["space_to_depth", "depth_to_space", "space_to_batch", "space_to_batch_nd", "batch_to_space",
           "batch_to_space_nd", "extract_image_patches", "unravel_index"]


def _divisible(size, by, op_type, inputs):
    if size is not None and size % by:
        raise ValueError(f"Dimension size must be evenly divisible by {by} but is {size} for '{op_type}' with "
                         f"input shapes: {', '.join(str(t.shape) for t in inputs)}.")


# ---- SpaceToDepth / DepthToSpace ---------------------------------------------------------------------


def _depth_infer(op_type):
    def infer(inputs, attrs):
        (x,) = inputs
        bs, fmt = attrs["block_size"], attrs["data_format"]
        if x.shape.ndims is not None and x.shape.ndims != 4:
            raise ValueError(f"Shape must be rank 4 but is rank {x.shape.ndims} for '{op_type}' with input shapes: "
                             f"{x.shape}.")
        if x.shape.ndims is None:
            return TensorShape([None] * 4), x.dtype
        n, h, w, c = x.shape.as_list() if fmt == "NHWC" else [x.shape.as_list()[i] for i in (0, 2, 3, 1)]
        if op_type == "SpaceToDepth":
            _divisible(h, bs, op_type, inputs)
            _divisible(w, bs, op_type, inputs)
            h, w, c = (None if h is None else h // bs, None if w is None else w // bs,
                       None if c is None else c * bs * bs)
        else:
            _divisible(c, bs * bs, op_type, inputs)
            h, w, c = (None if h is None else h * bs, None if w is None else w * bs,
                       None if c is None else c // (bs * bs))
        return TensorShape([n, h, w, c] if fmt == "NHWC" else [n, c, h, w]), x.dtype

    return infer


def _space_to_depth(np_, x, *, block_size, data_format):
    bs = block_size
    if data_format == "NCHW":
        x = x.transpose(0, 2, 3, 1)
    n, h, w, c = x.shape
    if h % bs or w % bs:
        raise InvalidArgumentError(None, None, f"Image height {h} and width {w} must be multiples of the block_size "
                                                f"{bs}")
    y = x.reshape(n, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5).reshape(n, h // bs, w // bs, bs * bs * c)
    return np.ascontiguousarray(y.transpose(0, 3, 1, 2) if data_format == "NCHW" else y)


def _depth_to_space(np_, x, *, block_size, data_format):
    bs = block_size
    if data_format == "NCHW":
        x = x.transpose(0, 2, 3, 1)
    n, h, w, c = x.shape
    if c % (bs * bs):
        raise InvalidArgumentError(None, None, f"Input depth dimension {c} should be divisible by: {bs * bs}")
    y = x.reshape(n, h, w, bs, bs, c // (bs * bs)).transpose(0, 1, 3, 2, 4, 5).reshape(n, h * bs, w * bs,
                                                                                       c // (bs * bs))
    return np.ascontiguousarray(y.transpose(0, 3, 1, 2) if data_format == "NCHW" else y)


def _depth_shapes(kernel):
    return lambda s, **attrs: [kernel(np, np.empty(s, np.int8), **attrs).shape]


numpy_op("SpaceToDepth", _depth_infer("SpaceToDepth"), _space_to_depth, _depth_shapes(_space_to_depth))
numpy_op("DepthToSpace", _depth_infer("DepthToSpace"), _depth_to_space, _depth_shapes(_depth_to_space))
def_grad("SpaceToDepth")(lambda op, g: [apply_op("DepthToSpace", [g], dict(op._attrs))])
def_grad("DepthToSpace")(lambda op, g: [apply_op("SpaceToDepth", [g], dict(op._attrs))])


def _depth_op(op_type, input, block_size, name, data_format):  # noqa: A002
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"Attr 'data_format' of '{op_type}' Op passed string '{data_format}' not in: \"NHWC\", "
                         "\"NCHW\", \"NCHW_VECT_C\".")
    if int(block_size) < 2:
        raise ValueError(f"Attr 'block_size' of '{op_type}' Op passed {int(block_size)} less than minimum 2.")
    x = convert_to_tensor(input, name="input")
    return apply_op(op_type, [x], {"block_size": int(block_size), "data_format": data_format}, name=name,
                    default_name=op_type)


def space_to_depth(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """Moves block_size x block_size spatial blocks into the depth: [n, h, w, c] ->
    [n, h/bs, w/bs, c*bs*bs] (NHWC; NCHW alike). ValueError for a rank other than 4, a block
    below 2 or sizes not divisible by it."""
    return _depth_op("SpaceToDepth", input, block_size, name, data_format)


def depth_to_space(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """The inverse of space_to_depth: [n, h, w, c] -> [n, h*bs, w*bs, c/(bs*bs)]."""
    return _depth_op("DepthToSpace", input, block_size, name, data_format)


# ---- SpaceToBatchND / BatchToSpaceND ----------------------------------------------------------------


def _nd_infer(op_type):
    def infer(inputs, attrs):
        x, block, pads = inputs
        check_dtype(block, INT, op_type, "block_shape")
        check_dtype(pads, INT, op_type, "paddings" if op_type == "SpaceToBatchND" else "crops")
        bv, pv = constant_value(block), constant_value(pads)
        m = block.shape.as_list()[0] if block.shape.ndims == 1 else None
        if x.shape.ndims is not None and m is not None and x.shape.ndims < m + 1:
            raise ValueError(f"Shape must be at least rank {m + 1} but is rank {x.shape.ndims} for '{op_type}' "
                             f"with input shapes: {', '.join(str(t.shape) for t in inputs)}.")
        if x.shape.ndims is None or bv is None or pv is None:
            return TensorShape(None if x.shape.ndims is None else [None] * x.shape.ndims), x.dtype
        bv, pv = np.asarray(bv).reshape(-1), np.asarray(pv).reshape(-1, 2)
        if (bv < 1).any():
            raise ValueError(f"{op_type}: block_shape must be positive, got {bv.tolist()}")
        if (pv < 0).any():
            raise ValueError(f"{op_type}: paddings/crops must be non-negative, got {pv.tolist()}")
        dims = x.shape.as_list()
        out = list(dims)
        prod = int(np.prod(bv))
        for i, b in enumerate(bv):
            d = dims[i + 1]
            if op_type == "SpaceToBatchND":
                if d is not None:
                    _divisible(d + int(pv[i].sum()), int(b), op_type, inputs)
                    out[i + 1] = (d + int(pv[i].sum())) // int(b)
            elif d is not None:
                out[i + 1] = d * int(b) - int(pv[i].sum())
        if dims[0] is not None:
            if op_type == "SpaceToBatchND":
                out[0] = dims[0] * prod
            else:  # divided by each block size in turn, as TF's shape function (its error names that size)
                batch = dims[0]
                for b in bv:
                    _divisible(batch, int(b), op_type, inputs)
                    batch //= int(b)
                out[0] = batch
        return TensorShape(out), x.dtype

    return infer


def _space_to_batch_nd(np_, x, block, pads):
    block, pads = np.asarray(block).reshape(-1).astype(np.int64), np.asarray(pads).reshape(-1, 2).astype(np.int64)
    m = len(block)
    full = [(0, 0)] + [tuple(p) for p in pads] + [(0, 0)] * (x.ndim - m - 1)
    xp_ = np.pad(x, full)
    for i, b in enumerate(block):
        if xp_.shape[i + 1] % b:
            raise InvalidArgumentError(None, None, f"padded_shape[{i}]={xp_.shape[i + 1]} is not divisible by "
                                                    f"block_shape[{i}]={b}")
    n, rest = xp_.shape[0], xp_.shape[m + 1:]
    shape = [n]
    for i, b in enumerate(block):
        shape += [xp_.shape[i + 1] // b, int(b)]
    y = xp_.reshape(shape + list(rest))
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(2 * m + 1, y.ndim))
    y = y.transpose(perm)
    return np.ascontiguousarray(y.reshape([n * int(np.prod(block))] + [xp_.shape[i + 1] // b for i, b in
                                                                        enumerate(block)] + list(rest)))


def _batch_to_space_nd(np_, x, block, crops):
    block, crops = np.asarray(block).reshape(-1).astype(np.int64), np.asarray(crops).reshape(-1, 2).astype(np.int64)
    m, prod = len(block), int(np.prod(block))
    if x.shape[0] % prod:
        raise InvalidArgumentError(None, None, f"Input batch dimension ({x.shape[0]}) is not divisible by product "
                                                f"of block sizes ({prod})")
    n = x.shape[0] // prod
    spatial, rest = list(x.shape[1:m + 1]), list(x.shape[m + 1:])
    y = x.reshape([int(b) for b in block] + [n] + spatial + rest)
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, y.ndim))
    y = y.transpose(perm).reshape([n] + [s * int(b) for s, b in zip(spatial, block)] + rest)
    index = [slice(None)] + [slice(int(c[0]), y.shape[i + 1] - int(c[1])) for i, c in enumerate(crops)]
    for i, c in enumerate(crops):
        if c[0] + c[1] > y.shape[i + 1]:
            raise InvalidArgumentError(None, None, f"Crops must be non-negative and not exceed the block size: "
                                                    f"crops {c.tolist()} of dimension {i + 1} of size {y.shape[i + 1]}")
    return np.ascontiguousarray(y[tuple(index)])


def _nd_shapes(kernel):
    return lambda s, block, pads, **attrs: [kernel(np, np.empty(s, np.int8), block, pads).shape]


numpy_op("SpaceToBatchND", _nd_infer("SpaceToBatchND"), _space_to_batch_nd, _nd_shapes(_space_to_batch_nd),
         host_inputs=(1, 2))
numpy_op("BatchToSpaceND", _nd_infer("BatchToSpaceND"), _batch_to_space_nd, _nd_shapes(_batch_to_space_nd),
         host_inputs=(1, 2))
def_grad("SpaceToBatchND")(lambda op, g: [apply_op("BatchToSpaceND", [g, op.inputs[1], op.inputs[2]]), None, None])
def_grad("BatchToSpaceND")(lambda op, g: [apply_op("SpaceToBatchND", [g, op.inputs[1], op.inputs[2]]), None, None])


def _int_tensor(v, name):
    t = convert_to_tensor(v, name=name)
    return t if t.dtype.is_integer else convert_to_tensor(v, dtype=dtypes.int32, name=name)


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002
    """Zero-pads the M spatial dims after the batch by `paddings` [M, 2], then moves blocks of
    `block_shape` [M] into the batch: [n, s1.., rest] -> [n*prod(block), (s1+p)/b1.., rest].
    ValueError (InvalidArgumentError at run time) for padded sizes not divisible by the block."""
    return apply_op("SpaceToBatchND", [convert_to_tensor(input, name="input"), _int_tensor(block_shape, "block_shape"),
                                       _int_tensor(paddings, "paddings")], name=name, default_name="SpaceToBatchND")


def batch_to_space_nd(input, block_shape, crops, name=None):  # noqa: A002
    """The inverse of space_to_batch_nd: blocks of the batch back into the spatial dims, then
    `crops` [M, 2] cut off."""
    return apply_op("BatchToSpaceND", [convert_to_tensor(input, name="input"), _int_tensor(block_shape, "block_shape"),
                                       _int_tensor(crops, "crops")], name=name, default_name="BatchToSpaceND")


def space_to_batch(input, paddings, block_size=None, name=None, block_shape=None):  # noqa: A002
    """TF1's 4-D space_to_batch: space_to_batch_nd with the square block [block_size, block_size]
    (the op is SpaceToBatchND, as TF1's wrapper)."""
    size = block_size if block_size is not None else block_shape
    if size is None:
        raise TypeError("space_to_batch() missing required argument: 'block_size'")
    out = space_to_batch_nd(input, np.array([size, size], np.int64), paddings, name=name)
    out.set_shape(out.shape.merge_with(TensorShape([None] * 4)) if out.shape.ndims in (None, 4) else
                  TensorShape([None] * 4))
    return out


def batch_to_space(input, crops, block_size, name=None, block_shape=None):  # noqa: A002
    """TF1's 4-D batch_to_space: batch_to_space_nd with the square block [block_size, block_size]."""
    size = block_size if block_size is not None else block_shape
    return batch_to_space_nd(input, np.array([size, size], np.int64), crops, name=name)


# ---- ExtractImagePatches -------------------------------------------------------------------------------


def _patch_geometry(h, w, ksizes, strides, rates, padding):
    """(out_h, out_w, pad_top, pad_left, effective kh, kw) as TF's GetWindowedOutputSize."""
    kh, kw = ksizes[1], ksizes[2]
    ekh, ekw = kh + (kh - 1) * (rates[1] - 1), kw + (kw - 1) * (rates[2] - 1)
    sh, sw = strides[1], strides[2]
    if padding == "VALID":
        oh, ow = max((h - ekh + sh) // sh, 0), max((w - ekw + sw) // sw, 0)
        return oh, ow, 0, 0
    oh, ow = -(-h // sh), -(-w // sw)
    ph, pw = max((oh - 1) * sh + ekh - h, 0), max((ow - 1) * sw + ekw - w, 0)
    return oh, ow, ph // 2, pw // 2


def _patch_index(h, w, ksizes, strides, rates, padding):
    """Row and column indices ([oh, kh], [ow, kw]) into the image, -1 where the window is off it."""
    oh, ow, pt, pl = _patch_geometry(h, w, ksizes, strides, rates, padding)
    rows = (np.arange(oh) * strides[1] - pt)[:, None] + np.arange(ksizes[1])[None, :] * rates[1]
    cols = (np.arange(ow) * strides[2] - pl)[:, None] + np.arange(ksizes[2])[None, :] * rates[2]
    rows[(rows < 0) | (rows >= h)] = -1
    cols[(cols < 0) | (cols >= w)] = -1
    return rows, cols


def _extract_patches(np_, x, *, ksizes, strides, rates, padding):
    n, h, w, d = x.shape
    rows, cols = _patch_index(h, w, ksizes, strides, rates, padding)
    padded = np.zeros((n, h + 1, w + 1, d), x.dtype)  # index -1 reads the zero row/column
    padded[:, :h, :w] = x
    out = padded[:, rows[:, None, :, None], cols[None, :, None, :], :]  # [n, oh, ow, kh, kw, d]
    return np.ascontiguousarray(out.reshape(n, rows.shape[0], cols.shape[0], -1))


def _extract_patches_grad(np_, g, x, *, ksizes, strides, rates, padding):
    n, h, w, d = x.shape
    rows, cols = _patch_index(h, w, ksizes, strides, rates, padding)
    g = g.reshape(n, rows.shape[0], cols.shape[0], ksizes[1], ksizes[2], d)
    acc = np.zeros((n, h + 1, w + 1, d), g.dtype)
    r = np.broadcast_to(rows[:, None, :, None], g.shape[1:5])
    c = np.broadcast_to(cols[None, :, None, :], g.shape[1:5])
    for b in range(n):
        np.add.at(acc[b], (r, c), g[b])
    return np.ascontiguousarray(acc[:, :h, :w])


def _patches_infer(inputs, attrs):
    x = inputs[0]
    if x.shape.ndims is not None and x.shape.ndims != 4:
        raise ValueError(f"Shape must be rank 4 but is rank {x.shape.ndims} for 'ExtractImagePatches' with input "
                         f"shapes: {x.shape}.")
    if x.shape.ndims is None:
        return TensorShape([None] * 4), x.dtype
    n, h, w, d = x.shape.as_list()
    k = attrs["ksizes"]
    oh = ow = None
    if h is not None and w is not None:
        oh, ow, _, _ = _patch_geometry(h, w, k, attrs["strides"], attrs["rates"], attrs["padding"])
    elif h is not None or w is not None:
        g = _patch_geometry(h or 1, w or 1, k, attrs["strides"], attrs["rates"], attrs["padding"])
        oh, ow = (g[0] if h is not None else None), (g[1] if w is not None else None)
    return TensorShape([n, oh, ow, None if d is None else k[1] * k[2] * d]), x.dtype


def _patches_shapes(s, **attrs):
    oh, ow, _, _ = _patch_geometry(s[1], s[2], attrs["ksizes"], attrs["strides"], attrs["rates"], attrs["padding"])
    return [(s[0], oh, ow, attrs["ksizes"][1] * attrs["ksizes"][2] * s[3])]


numpy_op("ExtractImagePatches", _patches_infer, _extract_patches, _patches_shapes)
numpy_op("ExtractImagePatchesGrad", lambda inputs, attrs: (inputs[1].shape, inputs[0].dtype), _extract_patches_grad,
         lambda g, x, **attrs: [x])
def_grad("ExtractImagePatches")(lambda op, g: [apply_op("ExtractImagePatchesGrad", [g, op.inputs[0]],
                                                        dict(op._attrs))])
not_differentiable("ExtractImagePatchesGrad")


def _four(v, what):
    v = [int(i) for i in v]
    if len(v) != 4 or v[0] != 1 or v[3] != 1:
        raise ValueError(f"extract_image_patches: {what} must be [1, rows, cols, 1] (TF1 supports patches "
                         f"across space only), got {v}")
    if min(v) < 1:
        raise ValueError(f"extract_image_patches: {what} must be positive, got {v}")
    return v


def extract_image_patches(images, ksizes=None, strides=None, rates=None, padding=None, name=None, sizes=None):
    """Patches of `images` [n, h, w, d] as depth: [n, oh, ow, kh*kw*d] (ordered row, column,
    channel), windows of ksizes [1, kh, kw, 1] every strides [1, sh, sw, 1], dilated by rates
    [1, rh, rw, 1]; padding "SAME" (zeros) or "VALID". ValueError for other arguments."""
    ksizes = ksizes if ksizes is not None else sizes
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"Attr 'padding' of 'ExtractImagePatches' Op passed string '{padding}' not in: \"SAME\", "
                         "\"VALID\".")
    attrs = {"ksizes": _four(ksizes, "ksizes"), "strides": _four(strides, "strides"), "rates": _four(rates, "rates"),
             "padding": padding}
    return apply_op("ExtractImagePatches", [convert_to_tensor(images, name="images")], attrs, name=name,
                    default_name="ExtractImagePatches")


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """tf.image.extract_patches: extract_image_patches with TF2's argument name `sizes`."""
    return extract_image_patches(images, sizes, strides, rates, padding, name=name)


# ---- UnravelIndex ----------------------------------------------------------------------------------


def _unravel(np_, indices, dims):
    dims = np.asarray(dims)
    if (dims < 0).any():
        raise InvalidArgumentError(None, None, f"Input dims cannot be negative. Got: {dims.tolist()}")
    size = int(np.prod(dims))
    idx = np.asarray(indices)
    if ((idx < 0) | (idx >= size)).any():
        raise InvalidArgumentError(None, None, f"index is out of bound as with dims {dims.tolist()}")
    out = np.stack(np.unravel_index(idx.reshape(-1), tuple(int(d) for d in dims)), 0).astype(idx.dtype)
    return out.reshape(-1) if idx.ndim == 0 else out


def _unravel_infer(inputs, attrs):
    idx, dims = inputs
    check_dtype(idx, INT, "UnravelIndex", "indices")
    if dims.dtype != idx.dtype:
        raise TypeError(f"UnravelIndex: dims ({dims.name!r}) must have the dtype of indices, {idx.dtype.name}, "
                        f"got {dims.dtype.name}")
    if idx.shape.ndims not in (None, 0, 1):
        raise ValueError(f"Shape must be at most rank 1 but is rank {idx.shape.ndims} for 'UnravelIndex'")
    if dims.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {dims.shape.ndims} for 'UnravelIndex'")
    k = dims.shape.as_list()[0] if dims.shape.ndims == 1 else None
    if idx.shape.ndims == 0:
        return TensorShape([k]), idx.dtype
    if idx.shape.ndims == 1:
        return TensorShape([k, idx.shape.as_list()[0]]), idx.dtype
    return TensorShape(None), idx.dtype


numpy_op("UnravelIndex", _unravel_infer, _unravel,
         lambda i, d, **attrs: [(d[0],) if len(i) == 0 else (d[0], i[0])])
not_differentiable("UnravelIndex")


def unravel_index(indices, dims, name=None):
    """The coordinates in an array of shape `dims` of the flat `indices` (int32/int64): [len(dims)]
    for a scalar index, [len(dims), n] for n indices. InvalidArgumentError at run time for an
    index outside [0, prod(dims)) or a negative dim."""
    indices = convert_to_tensor(indices, name="indices")
    dims = convert_to_tensor(dims, dtype=indices.dtype, name="dims")
    return apply_op("UnravelIndex", [indices, dims], name=name, default_name="UnravelIndex")
