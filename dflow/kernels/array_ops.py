"""Array ops the compiler's core path needs: placeholders, identity, shape queries, reshape and
stack. Further array-manipulation ops live in `manip_ops.py`."""

from __future__ import annotations

import numpy as np

from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.graph import get_default_graph
from ..graph.ops import Tensor, constant_value
from ..graph.registry import def_bind, register_op
from ..graph.shape import TensorShape, as_shape, check_static_size, unknown_shape
from .common import apply_op, convert_to_tensor, normalize_axis

__all__ = ["placeholder", "placeholder_with_default", "identity", "identity_n", "stop_gradient", "shape",
           "size", "rank", "reshape", "stack"]

# ---- placeholders and identity ----------------------------------------------------------------


def _placeholder_infer(inputs, attrs):
    check_static_size(attrs["shape"], "op Placeholder")
    return attrs["shape"], attrs["dtype"]


register_op("Placeholder", _placeholder_infer, must_feed=True, cheap_source=True)


def placeholder(dtype, shape=None, name=None, chunks=None):
    """A tensor that must be fed at run time (`feed_dict`), checked against `dtype` and `shape`.

    `chunks` (dflow extension): how an in-memory feed is chunked, as dask's `chunks=` argument.
    """
    shape = unknown_shape() if shape is None else as_shape(shape)
    check_static_size(shape, f"Placeholder {name or 'Placeholder'!r}")
    return apply_op("Placeholder", [], {"dtype": as_dtype(dtype), "shape": shape, "chunks": chunks},
                    name=name, graph=get_default_graph())


def _with_default_infer(inputs, attrs):
    return attrs["shape"], inputs[0].dtype


register_op("PlaceholderWithDefault", _with_default_infer, eager=lambda xp, x, shape: x,
            lower=lambda ctx, x, shape: x, stateful=True, cheap_source=True)


def placeholder_with_default(input, shape, name=None):  # noqa: A002 - TF1 signature
    """A placeholder that yields `input` when not fed."""
    input = convert_to_tensor(input)
    shape = as_shape(shape)
    if not shape.is_compatible_with(input.shape):
        raise ValueError(f"placeholder_with_default: shape {shape} is incompatible with the default's "
                         f"shape {input.shape}")
    return apply_op("PlaceholderWithDefault", [input], {"shape": shape}, name=name)


register_op("Identity", lambda inputs, attrs: (inputs[0].shape, inputs[0].dtype),
            eager=lambda xp, x: x, lower=lambda ctx, x: x, cheap_source=True, takes_whole=True,
            sparse_grad=True)  # an IndexedSlices passes through as it is (TF1)


def identity(input, name=None):  # noqa: A002 - TF1 signature
    """The same value as `input`, as a new tensor (useful with control_dependencies)."""
    return apply_op("Identity", [convert_to_tensor(input)], name=name)


register_op("StopGradient", lambda inputs, attrs: (inputs[0].shape, inputs[0].dtype),
            eager=lambda xp, x: x, elementwise=True, cheap_source=True)


def stop_gradient(input, name=None):  # noqa: A002 - TF1 signature
    """The same value as `input`; gradients do not flow through it."""
    return apply_op("StopGradient", [convert_to_tensor(input)], name=name)


register_op("IdentityN", lambda inputs, attrs: [(t.shape, t.dtype) for t in inputs],
            eager=lambda xp, *xs: tuple(xs), lower=lambda ctx, *xs: tuple(xs), num_outputs=None, takes_whole=True,
            sparse_grad=True)


def identity_n(input, name=None):  # noqa: A002 - TF1 signature
    """The same values as the list `input`, as one op (used by custom_gradient)."""
    return apply_op("IdentityN", [convert_to_tensor(t) for t in input], name=name)


# ---- shape queries -----------------------------------------------------------------------------


def _shape_infer(inputs, attrs):
    n = inputs[0].shape.ndims
    return TensorShape([n]), attrs["out_type"]


def _shape_fold(op):
    s = op.inputs[0].shape
    if s.is_fully_defined():
        return np.array(s.as_list(), dtype=op.get_attr("out_type").np_dtype)
    return None


def _shape_eager(xp, x, out_type):
    return np.array(x.shape, dtype=out_type.np_dtype)


def _shape_lower(ctx, x, out_type):
    shape = tuple(x.shape)
    if all(d == d for d in shape):
        return np.array(shape, dtype=out_type.np_dtype)
    # data-dependent sizes (boolean_mask, unique...): the shape is data computed in the run
    return data_shape(ctx, x, out_type.np_dtype)


def data_shape(ctx, x, dtype=np.int64):
    """The run-time shape of a dask array with unknown chunk sizes, as a 1-D dask array."""
    import dask.array as da

    dims = []
    for axis, d in enumerate(x.shape):
        if d == d:
            dims.append(da.from_array(np.array([d], dtype=dtype)))
            continue
        # the length along `axis`: the chunks' lengths summed along it (one chunk wide elsewhere)
        first = tuple(slice(None) if i == axis else slice(0, 1) for i in range(x.ndim))
        lengths = x[first].map_blocks(lambda b, a=axis: np.full((1,) * b.ndim, b.shape[a], dtype=dtype),
                                      dtype=dtype, chunks=(1,) * x.ndim)
        dims.append(lengths.sum().reshape((1,)))
    return da.concatenate(dims).astype(dtype)


register_op("Shape", _shape_infer, eager=_shape_eager, lower=_shape_lower, fold=_shape_fold, shape_only=True)


def shape(input, name=None, out_type=dtypes.int32):  # noqa: A002 - TF1 signature
    """The run-time shape of `input` as a 1-D int32 tensor."""
    return apply_op("Shape", [convert_to_tensor(input)], {"out_type": as_dtype(out_type)}, name=name)


def _size_fold(op):
    n = op.inputs[0].shape.num_elements()
    return None if n is None else np.array(n, dtype=op.get_attr("out_type").np_dtype)


def _size_lower(ctx, x, out_type):
    if all(d == d for d in x.shape):
        return np.array(int(np.prod(x.shape)), dtype=out_type.np_dtype)
    return data_shape(ctx, x, out_type.np_dtype).prod(dtype=out_type.np_dtype)


register_op("Size", lambda inputs, attrs: (TensorShape([]), attrs["out_type"]),
            eager=lambda xp, x, out_type: np.array(int(np.prod(x.shape)), dtype=out_type.np_dtype),
            lower=_size_lower, fold=_size_fold, shape_only=True)


def size(input, name=None, out_type=dtypes.int32):  # noqa: A002 - TF1 signature
    """The number of elements of `input` as a scalar int32 tensor."""
    return apply_op("Size", [convert_to_tensor(input)], {"out_type": as_dtype(out_type)}, name=name)


def _rank_fold(op):
    n = op.inputs[0].shape.ndims
    return None if n is None else np.array(n, dtype=np.int32)


register_op("Rank", lambda inputs, attrs: (TensorShape([]), dtypes.int32),
            eager=lambda xp, x: np.array(x.ndim, dtype=np.int32),
            lower=lambda ctx, x: np.array(x.ndim, dtype=np.int32), fold=_rank_fold, shape_only=True)


def rank(input, name=None):  # noqa: A002 - TF1 signature
    """The rank of `input` as a scalar int32 tensor."""
    return apply_op("Rank", [convert_to_tensor(input)], name=name)


# ---- reshape -----------------------------------------------------------------------------------


def partial_shape_value(t):
    """A 1-D int tensor's value where known when building: a list of ints/None, or None."""
    v = constant_value(t)
    if v is not None:
        return [int(d) for d in np.asarray(v).reshape(-1)]
    if t.op.type == "Shape" and t.op.inputs[0].shape.ndims is not None:
        return t.op.inputs[0].shape.as_list()  # static dims of the measured tensor, None where unknown
    if t.op.type == "Pack" and t.op.get_attr("axis") == 0:
        out = []
        for e in t.op.inputs:
            ev = constant_value(e)
            out.append(None if ev is None else int(ev))
        return out
    n = t.shape.num_elements() if t.shape.ndims == 1 else None
    return None if n is None else [None] * n


def _resolve_reshape(in_shape, target, op_name):
    """The static output shape of reshaping `in_shape` to `target` (ints, -1 or None entries)."""
    if target is None:
        return unknown_shape()
    if sum(1 for d in target if d == -1) > 1:
        raise ValueError(f"{op_name}: can only infer one dimension (-1) in the shape {target}")
    known = [d for d in target if d is not None and d != -1]
    if any(d < -1 for d in known):
        raise ValueError(f"{op_name}: invalid dimension in shape {target}")
    n_in = in_shape.num_elements()
    if -1 in target:
        if n_in is not None and None not in target:
            prod = int(np.prod(known)) if known else 1
            if prod == 0 or n_in % prod:
                raise ValueError(f"{op_name}: cannot reshape a tensor with {n_in} elements to shape {target}")
            return TensorShape([n_in // prod if d == -1 else d for d in target])
        return TensorShape([None if d == -1 else d for d in target])
    if n_in is not None and None not in target and int(np.prod(target)) != n_in:
        raise ValueError(f"{op_name}: cannot reshape a tensor with {n_in} elements to shape {target} "
                         f"({int(np.prod(target))} elements)")
    return TensorShape(target)


def _reshape_infer(inputs, attrs):
    x, s = inputs
    if not s.dtype.is_integer:
        raise TypeError(f"Reshape: shape must be an integer tensor, got {s.dtype.name}")
    return _resolve_reshape(x.shape, partial_shape_value(s), "Reshape"), x.dtype


def _check_reshape(size, target):
    """TF1's run-time refusal of a shape that `size` values cannot fill (its words)."""
    known = [d for d in target if d != -1]
    prod = int(np.prod(known)) if known else 1
    if -1 in target:
        if prod == 0 and size == 0:
            raise ValueError("Reshape cannot infer the missing input size for an empty tensor unless all specified "
                             "input sizes are non-zero")
        if prod == 0 or size % prod:
            raise ValueError(f"Input to reshape is a tensor with {size} values, but the requested shape requires a "
                             f"multiple of {prod}")
    elif prod != size:
        raise ValueError(f"Input to reshape is a tensor with {size} values, but the requested shape has {prod}")


def _reshape_eager(xp, x, shape):
    target = tuple(int(d) for d in np.asarray(shape).reshape(-1))
    _check_reshape(int(np.prod(x.shape)), target)
    return xp.reshape(x, target)


def _reshape_lower(ctx, x, shape):
    target = tuple(int(d) for d in ctx.host_value(shape, "Reshape shape").reshape(-1))
    x = ctx.as_dask(x)
    if not any(d != d for d in x.shape):  # sizes known: TF1's words, not dask's "Bad index 3.33"
        _check_reshape(int(np.prod(x.shape)), target)
    try:
        return x.reshape(target)
    except NotImplementedError:
        # dims that neither merge nor split evenly: dask reshapes through one flat axis
        return x.reshape(-1).reshape(target)


register_op("Reshape", _reshape_infer, eager=_reshape_eager, lower=_reshape_lower)


@def_bind("Reshape")
def _reshape_bind(op, known):
    if 1 not in known:
        return None
    target = tuple(int(d) for d in np.asarray(known[1]).reshape(-1))
    return lambda xp, x: x.reshape(target) if type(x) is np.ndarray else xp.reshape(x, target)


def reshape(tensor, shape, name=None):
    """`tensor` with a new shape: ints, -1 (inferred), scalar tensors, or a mix (a list is stacked)."""
    tensor = convert_to_tensor(tensor)
    if isinstance(shape, (list, tuple)):
        shape = [(-1 if d is None else d) for d in shape]
    shape = convert_to_tensor(shape, dtype=dtypes.int32) if not isinstance(shape, Tensor) else shape
    return apply_op("Reshape", [tensor, shape], name=name)


# ---- stack -------------------------------------------------------------------------------------


def _pack_infer(inputs, attrs):
    if not inputs:
        raise ValueError("stack needs at least one input")
    shape = inputs[0].shape
    for t in inputs[1:]:
        if t.dtype != inputs[0].dtype:
            raise TypeError(f"stack: all inputs must have one dtype; {inputs[0].name!r} is "
                            f"{inputs[0].dtype.name}, {t.name!r} is {t.dtype.name}")
        try:
            shape = shape.merge_with(t.shape)
        except ValueError:
            raise ValueError(f"stack: shapes of all inputs must match: {inputs[0].shape} vs {t.shape} "
                             f"({t.name!r})") from None
    if shape.ndims is None:
        return unknown_shape(), inputs[0].dtype
    axis = normalize_axis(attrs["axis"], shape.ndims + 1, "stack")
    dims = shape.as_list()
    dims.insert(axis, len(inputs))
    return TensorShape(dims), inputs[0].dtype


register_op("Pack", _pack_infer, eager=lambda xp, *xs, axis: xp.stack(xs, axis=axis),
            lower=lambda ctx, *xs, axis: ctx.da.stack([ctx.as_dask(x) for x in xs], axis=axis))


def stack(values, axis=0, name="stack"):
    """Stacks a list of rank-R tensors into one rank-(R+1) tensor along `axis`."""
    values = [convert_to_tensor(v) for v in values]
    if values and values[0].shape.ndims is not None:
        axis = normalize_axis(axis, values[0].shape.ndims + 1, "stack")
    return apply_op("Pack", values, {"axis": int(axis)}, name=name)


# ---- gradient rules ----------------------------------------------------------------------------

from ..graph.registry import def_grad, not_differentiable  # noqa: E402

def_grad("Identity", "PlaceholderWithDefault")(lambda op, g: [g])
def_grad("IdentityN")(lambda op, *gs: list(gs))
not_differentiable("StopGradient", "Shape", "Size", "Rank")
def_grad("Reshape")(lambda op, g: [reshape(g, shape(op.inputs[0])) if not op.inputs[0].shape.is_fully_defined()
                                   else reshape(g, op.inputs[0].shape.as_list()), None])


@def_grad("Pack")
def _pack_grad(op, g):
    n = len(op.inputs)  # Unpack (manip_ops) made by its registered type: this module is below manip_ops
    out = apply_op("Unpack", [g], {"num": n, "axis": int(op.get_attr("axis"))})
    return list(out) if n > 1 else [out]
