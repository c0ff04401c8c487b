"""The Dask lowering of a host kernel that needs its inputs whole: one task computes every output
(strings split into a SparseTensor, a file read, an image decoded), each output picked from it.

`lower_whole(eager)` gives an OpDef's `lower` from its eager kernel; a failure inside the task has
the wording of the in-process plan's (`errors.raise_kernel_failure`), naming the op.
"""

from __future__ import annotations

import numpy as np

from ..errors import raise_kernel_failure

__all__ = ["lower_whole"]


class _Call:
    """The one task: whole inputs in, the eager kernel's outputs out as a tuple (picklable)."""

    def __init__(self, eager, attrs, op_type, op_name):
        self.eager, self.attrs, self.op_type, self.op_name = eager, attrs, op_type, op_name

    def __call__(self, *args):
        try:
            out = self.eager(np, *[np.asarray(a) if not isinstance(a, np.ndarray) else a for a in args],
                             **self.attrs)
        except Exception as e:  # noqa: BLE001 - the same wording as the in-process plan's
            raise_kernel_failure(None, e, op_type=self.op_type, op_name=self.op_name)
        return tuple(out) if isinstance(out, (list, tuple)) else (out,)


def _pick(values, i):
    return values[i]


def lower_whole(eager):
    """An OpDef `lower` running `eager` in one task on whole inputs (shapes of the outputs: their
    static ones, unknown dimensions NaN; an output of unknown rank is a whole value, `ctx.whole`)."""

    def lower(ctx, *inputs, **attrs):
        op = ctx.op
        values = ctx.delayed(_Call(eager, attrs, op.type, op.name), *inputs, shape=(), dtype=object)
        outs = []
        for i, t in enumerate(op.outputs):
            shape = tuple(float("nan") if d is None else int(d) for d in t.shape.as_list()) \
                if t.shape.ndims is not None else ()
            dt = np.dtype(t.dtype.np_dtype)
            arr = ctx.delayed(_pick, values, i, shape=shape, dtype=dt, meta=np.empty((0,) * len(shape), dt))
            outs.append(ctx.whole(arr) if t.shape.ndims is None else arr)
        return outs

    return lower
