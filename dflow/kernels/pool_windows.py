"""The window geometry of the pooling kernels (pool_ops) and the walks they share: for each of
the kh*kw window offsets, one strided view of the (padded) input holds that offset's cell of
every window (`_view`); the windows are reduced across those views (max, sum), and the first
strict maximum of each window (TF's ties, for the max-pool gradients and argmax) is found by
comparing each view with the windows' maxima (`_first_max`, or `_first_max_tiled` when the
windows tile the input: one whole-array comparison).

SAME pads as TF1 (total = max((out - 1) * stride + k - in, 0), the smaller half before); padded
cells never win a max and are not counted in an average.
"""

from __future__ import annotations

import itertools
import math

import array_api_compat
import numpy as np


def _spatial_axes(data_format, rank):
    return list(range(2, rank)) if data_format.startswith("NC") else list(range(1, rank - 1))


def _channel_axis(data_format, rank):
    return 1 if data_format.startswith("NC") else rank - 1


def _out_size(n, k, s, padding, op_type):
    """(out, pad_before, pad_after) along one axis; ValueError for a VALID window larger than n."""
    if padding == "SAME":
        out = -(-n // s)
        total = max((out - 1) * s + k - n, 0)
        return out, total // 2, total - total // 2
    if n < k:
        raise ValueError(f"Negative dimension size caused by subtracting {k} from {n} for {op_type!r} "
                         f"(VALID padding)")
    return (n - k) // s + 1, 0, 0


def _geometry(shape, attrs, op_type):
    """[(axis, k, s, out, before, after)] for the spatial axes of an input of `shape`."""
    axes = _spatial_axes(attrs["data_format"], len(shape))
    return [(ax, attrs["ksize"][ax], attrs["strides"][ax],
             *_out_size(int(shape[ax]), attrs["ksize"][ax], attrs["strides"][ax], attrs["padding"], op_type))
            for ax in axes]


def _out_shape(shape, geo):
    out = list(shape)
    for ax, _k, _s, n, _b, _a in geo:
        out[ax] = n
    return tuple(out)


def _padded_shape(shape, geo):
    out = list(shape)
    for ax, _k, _s, _n, b, a in geo:
        out[ax] += b + a
    return tuple(out)


def _offsets(geo):
    """Window offsets in row-major window order (the order in which TF's ties are decided)."""
    return list(itertools.product(*[range(k) for _ax, k, *_ in geo]))


def _view(ndim, geo, offset):
    """The index of the strided view holding cell `offset` of every window (padded coordinates)."""
    idx = [slice(None)] * ndim
    for (ax, _k, s, n, _b, _a), o in zip(geo, offset):
        idx[ax] = slice(o, o + s * (n - 1) + 1, s)
    return tuple(idx)


def _interior(ndim, geo):
    idx = [slice(None)] * ndim
    for ax, _k, _s, _n, b, a in geo:
        idx[ax] = slice(b, -a if a else None)
    return tuple(idx)


def _pad(xp, x, geo, value):
    if all(b == 0 and a == 0 for *_, b, a in geo):
        return x
    out = xp.full(_padded_shape(x.shape, geo), value, dtype=x.dtype, device=_device(x))
    out[_interior(x.ndim, geo)] = x
    return out


def _lowest(xp, dtype):
    return -math.inf if xp.isdtype(dtype, "real floating") else xp.iinfo(dtype).min


def _device(x):
    return array_api_compat.device(x)


def _maximum(xp, out, v):
    if isinstance(out, np.ndarray):
        return np.maximum(out, v, out=out)  # in place: one output-sized buffer for the whole walk
    return xp.maximum(out, v)


def _add(out, v):
    if isinstance(out, np.ndarray):
        out += v
        return out
    return out + v


def _first_max(xp, x, geo, best=None):
    """(offset number, strided view, mask) for each window offset in row-major order; mask marks
    the windows whose first maximum sits at that offset (TF's ties). `best`: the windows' maxima
    (MaxPool's output) when known, else computed."""
    xpad = _pad(xp, x, geo, _lowest(xp, x.dtype))
    views = [_view(x.ndim, geo, off) for off in _offsets(geo)]
    if best is None:
        for view in views:
            best = xp.asarray(xpad[view], copy=True) if best is None else _maximum(xp, best, xpad[view])
    taken = None
    for i, (off, view) in enumerate(zip(_offsets(geo), views)):
        hit = xpad[view] == best
        outside = _in_padding(xp, x, geo, off)
        if outside is not None:  # a padded cell never wins, even where the window holds only -inf
            hit = xp.logical_and(hit, xp.logical_not(outside))
        if taken is not None:
            hit = xp.logical_and(hit, xp.logical_not(taken))
        taken = hit if taken is None else xp.logical_or(taken, hit)
        yield i, view, hit


def _tiling(shape, geo):
    """When the windows tile the input exactly (k == stride and k divides the size on every pooled
    axis, hence no padding, SAME = VALID): (the input's shape with each pooled axis split into
    (windows, k), that shape with 1 for each k, the index of each window offset in row-major
    order into the split value). Else None."""
    if any(k != s or b or a or n * k != int(shape[ax]) for ax, k, s, n, b, a in geo):
        return None
    ks = {ax: k for ax, k, *_ in geo}
    split = [d for ax, d in enumerate(shape) for d in ((int(d) // ks[ax], ks[ax]) if ax in ks else (int(d),))]
    pooled = [d for ax, d in enumerate(shape) for d in ((int(d) // ks[ax], 1) if ax in ks else (int(d),))]
    views = []
    for off in _offsets(geo):
        it = iter(off)
        views.append(tuple(i for ax in range(len(shape)) for i in ((slice(None), next(it)) if ax in ks else
                                                                   (slice(None),))))
    return tuple(split), tuple(pooled), views


def _first_max_tiled(xp, x, tiling, best):
    """The mask, in the split shape, of each window's first maximum (row-major window order), for
    windows that tile x: one comparison of the whole input with its pooled maxima `best`, then
    the ties a window's later offsets share with an earlier one cleared (whole-array ops, no
    padding)."""
    split, pooled, views = tiling
    hit = xp.reshape(x, split) == xp.reshape(best, pooled)
    taken = xp.asarray(hit[views[0]], copy=True)
    for k, view in enumerate(views[1:], 2):
        if isinstance(hit, np.ndarray):  # in place, one pass each (for bools a > b is a and not b)
            np.greater(hit[view], taken, out=hit[view])
            if k < len(views):
                np.logical_or(taken, hit[view], out=taken)
        else:
            hit[view] = xp.logical_and(hit[view], xp.logical_not(taken))
            taken = xp.logical_or(taken, hit[view])
    return hit


def _in_padding(xp, x, geo, offset):
    """Where cell `offset` of each window lies in the padding (broadcastable bool), or None."""
    out = None
    for (ax, _k, s, n, b, _a), o in zip(geo, offset):
        first, last = o - b, o - b + s * (n - 1)  # input coordinates of this cell in the first and last window
        if first >= 0 and last < int(x.shape[ax]):
            continue
        coord = np.arange(n) * s + (o - b)
        mask = xp.asarray((coord < 0) | (coord >= int(x.shape[ax])), device=_device(x))
        mask = xp.reshape(mask, tuple(n if i == ax else 1 for i in range(x.ndim)))
        out = mask if out is None else xp.logical_or(out, mask)
    return out


def _argmax(xp, x, geo):
    """The offset number of each window's first maximum (int32, pooled shape)."""
    arg = None
    for i, _view_i, hit in _first_max(xp, x, geo):
        arg = xp.zeros(hit.shape, dtype=xp.int32, device=_device(x)) if arg is None else \
            xp.where(hit, xp.asarray(i, dtype=xp.int32, device=_device(x)), arg)
    return arg


def _counts(xp, shape, geo, like):
    """How many unpadded cells each window covers (SAME averages over those only), broadcastable."""
    total = None
    for ax, k, s, n, b, _a in geo:
        start = np.arange(n) * s - b
        c = np.minimum(start + k, int(shape[ax])) - np.maximum(start, 0)
        c = c.reshape([n if i == ax else 1 for i in range(len(shape))])
        total = c if total is None else total * c
    return xp.asarray(total, dtype=like.dtype, device=_device(like))
