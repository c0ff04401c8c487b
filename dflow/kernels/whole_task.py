"""The Dask lowering of a host kernel that needs its inputs whole: one task computes every output
(strings split into a SparseTensor, a file read, an image decoded), each output picked from it.

`lower_whole(eager)` gives an OpDef's `lower` from its eager kernel; a failure inside the task has
the wording of the in-process plan's (`evaluate.OpTask`), naming the op.
"""

from __future__ import annotations

import functools

import numpy as np

from ..graph.evaluate import OpTask

__all__ = ["lower_whole"]


def _whole(eager, attrs, *args):
    """The one task: whole inputs in, the eager kernel's outputs out as a tuple."""
    out = eager(np, *[np.asarray(a) if not isinstance(a, np.ndarray) else a for a in args], **attrs)
    return tuple(out) if isinstance(out, (list, tuple)) else (out,)


def _pick(values, i):
    return values[i]


def lower_whole(eager):
    """An OpDef `lower` running `eager` in one task on whole inputs (shapes of the outputs: their
    static ones, unknown dimensions NaN; an output of unknown rank is a whole value, `ctx.whole`)."""

    def lower(ctx, *inputs, **attrs):
        op = ctx.op
        task = OpTask(functools.partial(_whole, eager, attrs), op.type, op.name)
        values = ctx.delayed(task, *inputs, shape=(), dtype=object)
        outs = []
        for i, t in enumerate(op.outputs):
            shape = tuple(float("nan") if d is None else int(d) for d in t.shape.as_list()) \
                if t.shape.ndims is not None else ()
            dt = np.dtype(t.dtype.np_dtype)
            arr = ctx.delayed(_pick, values, i, shape=shape, dtype=dt, meta=np.empty((0,) * len(shape), dt))
            outs.append(ctx.whole(arr) if t.shape.ndims is None else arr)
        return outs

    return lower
