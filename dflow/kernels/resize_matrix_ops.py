"""TF1's bicubic and area resizes (`resize_bicubic`, `resize_area`, legacy coordinates) as two matrix
products: each output row is a fixed weighted sum of input rows, and each column of columns, so
out = Wy . images . Wx^T with [new, old] weight matrices built when the graph is built (static
sizes). Gradients come from the Einsum rule; on Dask the batch axis keeps its chunks.

Bicubic: TF's legacy kernel (half_pixel_centers=False): source y * in/out (or (in-1)/(out-1) with
align_corners), Keys' cubic with a = -0.75 read from TF's 1024-entry table, neighbours clamped to
the image. Area: each output cell averages the input cells it covers, partial cells weighted by
the covered fraction (TF's ResizeArea).
"""

from __future__ import annotations

import math

import numpy as np

from ..graph import dtypes
from ..graph.graph import name_scope
from ..graph.ops import constant_value
from .common import convert_to_tensor
from .linalg_ops import einsum
from .manip_ops import expand_dims, squeeze
from .math_ops import cast

__all__: list[str] = []

_TABLE_SIZE = 1024


def _coeffs_table():
    a = np.float32(-0.75)
    x = (np.arange(_TABLE_SIZE + 1) / _TABLE_SIZE).astype(np.float32)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x1 = x + np.float32(1.0)
    far = ((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a
    return near.astype(np.float32), far.astype(np.float32)


_NEAR, _FAR = _coeffs_table()


def _scale(n_in, n_out, align_corners):
    if align_corners and n_out > 1:
        return np.float32(n_in - 1) / np.float32(n_out - 1)
    return np.float32(n_in) / np.float32(n_out)


def bicubic_weights(n_in, n_out, align_corners=False):
    """[n_out, n_in] float64: TF's legacy bicubic weights of each output row."""
    w = np.zeros((n_out, n_in), np.float64)
    scale = _scale(n_in, n_out, align_corners)
    for o in range(n_out):
        src = np.float32(o) * scale
        loc = math.floor(src)
        off = int(np.rint((src - np.float32(loc)) * _TABLE_SIZE))
        weights = (_FAR[off], _NEAR[off], _NEAR[_TABLE_SIZE - off], _FAR[_TABLE_SIZE - off])
        for k, wt in zip(range(loc - 1, loc + 3), weights):
            w[o, min(max(k, 0), n_in - 1)] += wt
    return w


def area_weights(n_in, n_out, align_corners=False):
    """[n_out, n_in] float64: the fraction of each input cell an output cell covers, over its size."""
    w = np.zeros((n_out, n_in), np.float64)
    scale = _scale(n_in, n_out, align_corners)
    for o in range(n_out):
        lo, hi = np.float32(o) * scale, np.float32(o + 1) * scale
        for i in range(math.floor(lo), math.ceil(hi)):
            if i < lo:
                part = scale if i + 1 > hi else i + 1 - lo
            else:
                part = hi - i if i + 1 > hi else 1.0
            w[o, min(i, n_in - 1)] += float(part) / float(scale)
    return w


def _static_size(size, fn):
    v = size if isinstance(size, (list, tuple)) else constant_value(convert_to_tensor(size, dtype=dtypes.int32))
    if v is None:
        raise ValueError(f"{fn}: dflow needs size known when building, got a computed tensor")
    v = [int(e) for e in np.asarray(v).reshape(-1)]
    if len(v) != 2 or min(v) <= 0:
        raise ValueError(f"{fn}: size must be 2 positive ints [new_height, new_width], got {v}")
    return v


def _resize(images, size, align_corners, weights, fn, name):
    new_h, new_w = _static_size(size, fn)
    with name_scope(name, fn, [images]):
        x = convert_to_tensor(images, name="images")
        if x.shape.ndims not in (3, 4):
            raise ValueError(f"{fn}: images must be [batch, height, width, channels] (or 3-D), got {x.shape}")
        batched = x.shape.ndims == 4
        x = x if batched else expand_dims(x, 0)
        h, w = x.shape[1].value, x.shape[2].value
        if h is None or w is None:
            raise ValueError(f"{fn}: dflow needs the image height and width when building, got {x.shape}")
        x = cast(x, dtypes.float32) if x.dtype != dtypes.float32 else x
        wy = convert_to_tensor(weights(h, new_h, align_corners).astype(np.float32), name="row_weights")
        wx = convert_to_tensor(weights(w, new_w, align_corners).astype(np.float32), name="column_weights")
        out = einsum("nhwc,oh,pw->nopc", x, wy, wx)
        return out if batched else squeeze(out, [0])


def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """[batch, h, w, c] images resized to `size` by TF1's legacy bicubic interpolation: float32.
    half_pixel_centers is not provided (ValueError). Gradient w.r.t. the images."""
    if half_pixel_centers:
        raise ValueError("resize_bicubic: dflow provides the legacy coordinates (half_pixel_centers=False) only")
    return _resize(images, size, align_corners, bicubic_weights, "resize_bicubic", name)


def resize_area(images, size, align_corners=False, name=None):
    """[batch, h, w, c] images resized to `size` by area averaging (TF1's ResizeArea): float32.
    Gradient w.r.t. the images."""
    return _resize(images, size, align_corners, area_weights, "resize_area", name)
