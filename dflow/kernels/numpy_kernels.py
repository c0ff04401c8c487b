"""Ops whose kernel is a numpy function of whole arrays: `numpy_op` registers one.

The kernel `kernel(np, *arrays, **attrs)` runs eagerly on the values, and on Dask as one task over
the whole inputs (`ctx.delayed`), for ops that need whole operands (LAPACK's matrices, sorts,
searches) and whose operands are small next to the data. The Dask lowering declares its outputs'
shapes from the op's `shapes(*input shapes, **attrs)` rule (nan for a size known only at run time).
"""

from __future__ import annotations

import operator

import numpy as np

from ..graph.registry import register_op

__all__: list[str] = []


def _lowering(kernel, n_out, host_inputs):
    """The Dask lowering of `kernel(np, *arrays, **attrs)`: one task over the whole inputs; the
    output shapes it declares come from the op's `shapes` rule on the input arrays' shapes."""

    def lower(ctx, *vals, **attrs):
        arrays = [ctx.as_dask(v) for v in vals]
        shapes = _SHAPES[kernel](*[ctx.host_value(v, f"input {i}") if i in host_inputs else tuple(a.shape)
                                   for i, (v, a) in enumerate(zip(vals, arrays))], **attrs)
        dts = _DTYPES[kernel](*[a.dtype for a in arrays], **attrs)
        run = _run_whole(kernel, attrs)
        if n_out == 1:
            return ctx.delayed(run, *arrays, shape=shapes[0], dtype=dts[0],
                               meta=np.empty((0,) * len(shapes[0]), dts[0]))
        task = ctx.delayed(run, *arrays, shape=(), dtype=object, meta=np.empty((), object))
        return tuple(ctx.delayed(operator.getitem, task, i, shape=s, dtype=d, meta=np.empty((0,) * len(s), d))
                     for i, (s, d) in enumerate(zip(shapes, dts)))

    return lower


def _run_whole(kernel, attrs):
    def run(*arrays):
        return kernel(np, *[np.asarray(a) for a in arrays], **attrs)

    return run


_SHAPES, _DTYPES = {}, {}


def numpy_op(op_type, infer, kernel, shapes, out_dtypes=None, n_out=1, host_inputs=()):
    """Registers `op_type` with its numpy `kernel`; `shapes(*input shapes, **attrs)` gives the
    output shapes the Dask lowering declares (it gets the values of the inputs at `host_inputs`,
    sizes read on the host: computed first when they come from the run), `out_dtypes` their
    dtypes (default: input 0's)."""
    _SHAPES[kernel] = shapes
    _DTYPES[kernel] = out_dtypes or (lambda d0, *rest, **attrs: [d0] * n_out)
    register_op(op_type, infer, eager=lambda xp, *a, **attrs: _as_xp(xp, kernel(np, *[np.asarray(v) for v in a],
                                                                                    **attrs)),
                lower=_lowering(kernel, n_out, host_inputs), num_outputs=n_out)


def _as_xp(xp, out):
    if isinstance(out, tuple):
        return tuple(xp.asarray(o) for o in out)
    return xp.asarray(out)


