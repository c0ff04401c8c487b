"""What every summary op shares: TF1's tags and scopes, the SUMMARIES collection, the one-task
lowering, and numpy values as TensorBoard's protos.

A summary op's output is a scalar string tensor holding a serialized `Summary` proto (bytes), as
TF1's. The protos are the `tensorboard` package's (`tensorboard.compat.proto`), never a
hand-written encoder. The tag of a summary is its name scope (`outer/loss`), with `family` in
front when given (`fam/outer/fam/loss`, as TF1's `summary_op_util.summary_scope`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import re

import numpy as np
from tensorboard.compat.proto import summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2

from ..graph import dtypes
from ..graph.evaluate import OpTask
from ..graph.graph import add_to_collection, name_scope
from ..graph.shape import TensorShape

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")

_log = logging.getLogger("dflow.summary")


def clean_tag(name):
    """`name` with characters TensorBoard does not allow in a tag replaced by `_` and leading
    slashes removed (TF1's `clean_tag`; it logs what it changed)."""
    if name is None:
        return None
    new_name = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    if new_name != name:
        _log.info("Summary name %s is illegal; using %s instead.", name, new_name)
    return new_name


@contextlib.contextmanager
def summary_scope(name, family=None, default_name=None, values=None):
    """Opens the summary's name scope; yields (tag, scope) as TF1's `summary_scope`."""
    name, family = clean_tag(name), clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    with name_scope(base, default_name, values) as scope:
        tag = scope.rstrip("/") if family is None else f"{family}/{scope.rstrip('/')}"
        yield tag, scope


def collect(value, collections, default_collections):
    """Adds `value` to `collections` (`default_collections` when None), as TF1's summaries do."""
    for key in default_collections if collections is None else collections:
        add_to_collection(key, value)


def host(x):
    """A kernel input as a numpy array (cupy chunks are copied to the host)."""
    return x.get() if hasattr(x, "get") and not isinstance(x, np.ndarray) else np.asarray(x)


def tag_text(tag):
    """A tag tensor's value (0-d object array of bytes, or bytes/str) as str."""
    t = host(tag)
    v = t.reshape(()).item() if t.size == 1 else t
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def serialized(summary):
    """A Summary proto as the 0-d string value a summary op outputs."""
    out = np.empty((), dtype=object)
    out[()] = summary.SerializeToString()
    return out


def gather(ctx, fn, *inputs):
    """A 0-d object dask array of `fn(*whole inputs)` in one task (`ctx.delayed` gathers each dask
    input into it). The memory projection is told that the task holds its whole inputs: as
    scratch, in units of its 8-byte output chunk (`set_scratch`), so a budget refuses a summary of
    a tensor too large to hold instead of running it."""
    held = sum(int(x.nbytes) for x in inputs if isinstance(x, ctx.da.Array) and not math.isnan(x.nbytes))
    ctx.set_scratch(max(1, math.ceil(held / np.dtype(object).itemsize)))
    return ctx.delayed(fn, *inputs, shape=(), dtype=object)


def lower_whole(kernel):
    """A lowering running `kernel(np, *whole inputs, **attrs)` in one task (summaries are small:
    a scalar, a few images)."""

    def lower(ctx, *inputs, **attrs):
        return gather(ctx, OpTask(functools.partial(kernel, np, **attrs), ctx.op.type, ctx.op.name), *inputs)

    return lower


def scalar_string_infer(op_type, string_inputs=()):
    """infer: the output is a scalar string; inputs at `string_inputs` must be strings."""
    def infer(inputs, attrs):
        for i in string_inputs:
            if i < len(inputs) and inputs[i].dtype != dtypes.string:
                raise TypeError(f"{op_type}: input {i} ({inputs[i].name!r}) must be a string tensor, got "
                                f"{inputs[i].dtype.name}")
        return TensorShape([]), dtypes.string

    return infer


# ---- numpy values as TensorBoard protos -----------------------------------------------------------

_DT_NAMES = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "float16": "DT_HALF"}


def data_type(dtype):
    """The `types_pb2.DataType` enum value of a dflow DType (a `_ref` dtype gives its `_REF` value)."""
    dtype = dtypes.as_dtype(dtype)
    base = dtype.base_dtype
    name = _DT_NAMES.get(base.name, "DT_" + base.name.upper())
    if dtype.name.endswith("_ref"):
        name += "_REF"
    return types_pb2.DataType.Value(name)


def shape_proto(dims):
    """A `TensorShapeProto` from a list of dims (None: unknown, -1) or None (unknown rank)."""
    if dims is None:
        return tensor_shape_pb2.TensorShapeProto(unknown_rank=True)
    return tensor_shape_pb2.TensorShapeProto(
        dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=-1 if d is None else int(d)) for d in dims])


def tensor_proto(value, dtype=None, with_content=True):
    """A `TensorProto` of a numpy value, as TF's `AsProtoTensorContent`: numbers as little-endian
    `tensor_content`, strings in `string_val`. `with_content=False` gives dtype and shape only."""
    arr = np.asarray(value)
    dtype = dtypes.as_dtype(dtype if dtype is not None else
                            (dtypes.string if arr.dtype.kind in "OSU" else arr.dtype))
    proto = tensor_pb2.TensorProto(dtype=data_type(dtype), tensor_shape=shape_proto(arr.shape))
    if not with_content:
        return proto
    if dtype == dtypes.string:
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode("utf-8") for v in arr.reshape(-1))
    else:
        np_dtype = dtype.np_dtype.newbyteorder("<") if dtype.np_dtype.itemsize > 1 else dtype.np_dtype
        proto.tensor_content = np.ascontiguousarray(arr, dtype=np_dtype).tobytes()
    return proto


def summary_of(values):
    """A Summary proto with `values` (Summary.Value protos)."""
    return summary_pb2.Summary(value=values)
