"""Python functions as ops: `py_func` / `numpy_function` (whole arrays) and `map_blocks` (chunk
by chunk).

`py_func(func, inp, Tout)` is TF1's op: `func` gets numpy arrays (numpy scalars for 0-d inputs),
returns one value per `Tout` dtype, and runs once per `Session.run` in one task (whole arrays).
Its outputs have unknown static shapes, as in TF1; give them one with `set_shape` when they feed
chunked ops (Dask plans need at least the rank). `map_blocks(func, *inputs, dtype)` runs `func`
on each chunk, in the chunk's own namespace (numpy or cupy), so it scales out of core.

The callable is an attr of the op: it is shipped with the task graph to process pools and
distributed workers (cloudpickle), and the ops are stateful (never folded or run at build time).
An exception inside `func` surfaces as InvalidArgumentError naming the op, with the original
exception chained as `__cause__` on every scheduler (the error re-attaches it after pickling).
Neither op has a gradient (TF1: NotDifferentiable); give one with
`gradient_override_map({"PyFunc": name})` and `RegisterGradient(name)`, or `custom_gradient`.
"""

from __future__ import annotations

import itertools
import traceback

import numpy as np

from ..errors import InvalidArgumentError, OpError
from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.evaluate import namespace, np_xp
from ..graph.graph import get_default_graph
from ..graph.registry import not_differentiable, register_op
from ..graph.shape import TensorShape, broadcast_static_shape, unknown_shape
from .common import apply_op, convert_to_tensor, graph_of, to_bytes_array

__all__ = ["py_func", "numpy_function", "map_blocks"]

_tokens = itertools.count()


# ---- errors that keep their cause across processes ------------------------------------------
class PyFuncError(InvalidArgumentError):
    """A Python function inside an op raised; `__cause__` is its exception (also after pickling,
    when the exception itself pickles)."""

    def __reduce__(self):
        return (_rebuild_error, (type(self), self.node_def, self.message, self.__cause__))


def _rebuild_error(cls, node_def, message, cause):
    e = cls(node_def, None, message)
    e.__cause__ = cause
    return e


class _OpRef:
    """The op, for errors raised in this process; pickles to nothing (an Operation holds its graph)."""

    __slots__ = ("op",)

    def __init__(self, op):
        self.op = op

    def __reduce__(self):
        return (_OpRef, (None,))


def _picklable(e):
    import cloudpickle  # what process pools and distributed fall back to for local classes

    try:
        cloudpickle.dumps(e)
        return True
    except Exception:  # noqa: BLE001 - any failure means "send the message only"
        return False


def _function_failed(label, op_ref, e):
    if isinstance(e, OpError):  # a dflow error the function raised on purpose keeps its class, as in process
        return e, None
    tb = "".join(traceback.format_tb(e.__traceback__)[1:])  # the user's frames, not this wrapper's
    msg = f"{label} failed: {type(e).__name__}: {e}"
    if tb:
        msg += f"\nTraceback of the Python function (most recent call last):\n{tb.rstrip()}"
    err = PyFuncError(None, op_ref.op, msg)
    return err, (e if _picklable(e) else None)


# ---- arrays in and out -------------------------------------------------------------------------
def _to_host(a):
    """A numpy array (numpy scalar for 0-d) of any array: numpy, cupy, array-API arrays."""
    if isinstance(a, np.generic):
        return a
    if not isinstance(a, np.ndarray):
        if type(a).__module__.startswith("cupy"):
            a = a.get()
        else:
            try:
                a = np.from_dlpack(a)
            except (TypeError, AttributeError, RuntimeError, BufferError):
                a = np.asarray(a)
    return a[()] if a.ndim == 0 else a


_TF_TYPE_NAMES = {"float16": "half", "float32": "float", "float64": "double"}  # TF's DataTypeString


def _tf_type_name(dt):
    name = np.dtype(dt).name
    return _TF_TYPE_NAMES.get(name, name)


def _check_outputs(result, tout, label):
    """`result` of a py_func as a list of numpy arrays of the `tout` numpy dtypes.

    A list or tuple is several values (TF1). As TF1, a value's dtype must be its `Tout` exactly
    (Python floats are float64, ints int64): anything else raises ValueError (the op's
    InvalidArgumentError) with TF1's words ("0-th value returned by pyfunc_0 is double, but
    expects float"), never a silent cast.
    """
    values = list(result) if isinstance(result, (list, tuple)) else ([] if result is None and not tout else [result])
    if len(values) != len(tout):
        raise ValueError(f"{label} returned {len(values)} values, but expects to see {len(tout)} values.")
    out = []
    for i, (v, dt) in enumerate(zip(values, tout)):
        if np.dtype(dt).kind == "O":  # a string output: bytes, str (UTF-8 encoded, as TF1) or arrays of them
            try:
                out.append(to_bytes_array(_to_host(v) if hasattr(v, "__array_namespace__") else v))
            except TypeError as e:
                raise ValueError(f"{i}-th value returned by {label} is not a string: {e}") from None
            continue
        arr = np.asarray(_to_host(v) if not isinstance(v, (int, float, bool, complex, list)) else v)
        if arr.dtype != dt:
            raise ValueError(f"{i}-th value returned by {label} is {_tf_type_name(arr.dtype)}, but expects "
                             f"{_tf_type_name(dt)}")
        out.append(arr)
    return out


# ---- py_func -------------------------------------------------------------------------------------
def _py_infer(inputs, attrs):
    if not attrs["Tout"]:
        # one hidden bool scalar, so that running the op (or depending on it) runs the function
        return [(TensorShape([]), dtypes.bool)]
    return [(unknown_shape(), dt) for dt in attrs["Tout"]]


def _finish(outs, arrays):
    """Outputs back in the inputs' namespace (a py_func between cupy ops returns cupy arrays)."""
    if not outs:
        return (np.bool_(True),)
    back = namespace([a for a in arrays if hasattr(a, "shape")])
    if back is not np_xp:
        outs = [back.asarray(o) for o in outs]
    return tuple(outs)


def _py_eager(xp, *arrays, func, Tout, token, Tin):
    label = f"py_func {token}"
    outs = _check_outputs(func(*[_to_host(a) for a in arrays]), [d.np_dtype for d in Tout], label)
    return _finish(outs, arrays)


class _PyCall:
    """The task of a lowered py_func: host arrays in, the function, outputs checked (picklable)."""

    rereadable = False  # the function may have effects: a scheduler never runs it twice to save memory

    def __init__(self, func, label, tout, shapes, op_ref, single):
        self.func, self.label, self.tout, self.shapes, self.op_ref = func, label, tout, shapes, op_ref
        self.single = single

    def __call__(self, *arrays):
        args = [_to_host(a) for a in arrays]
        try:
            result = self.func(*args)
        except Exception as e:  # noqa: BLE001 - any user exception becomes the op's error
            err, cause = _function_failed(self.label, self.op_ref, e)
            raise err from cause
        try:
            outs = _check_outputs(result, self.tout, self.label)
        except ValueError as e:  # a result that contradicts the op: no cause to chain
            raise PyFuncError(None, self.op_ref.op, f"{self.label}: {e}") from None
        for i, (o, shape) in enumerate(zip(outs, self.shapes)):
            if shape is not None and not TensorShape(shape).is_compatible_with(o.shape):
                raise PyFuncError(None, self.op_ref.op, f"{self.label}: {i}-th value has shape {o.shape}, "
                                  f"but its tensor's static shape is {TensorShape(shape)}")
        outs = _finish(outs, arrays)
        return outs[0] if self.single else outs


def _pick(values, i):
    return values[i]


def _out_shape(t):
    """A lowering shape for output `t`: its static dims, nan where unknown; None if rank unknown."""
    if t.shape.ndims is None:
        return None
    return tuple(float("nan") if d is None else int(d) for d in t.shape.as_list())


def _py_lower(ctx, *inputs, func, Tout, token, Tin):
    """One task calling the function on whole inputs. An output of unknown rank (TF1's py_func
    without `set_shape`) is a whole value (`ctx.whole`): it can be fetched or passed to another
    py_func as it is; an op that needs its chunks gets it once its value is known (the compiler
    computes it first and feeds it, see schedule/host.py)."""
    op = ctx.op
    label = f"{op.type} op {op.name!r}"
    static = [None if t.shape.ndims is None else t.shape.as_list() for t in op.outputs][:len(Tout)]
    single = len(op.outputs) == 1
    call = _PyCall(func, label, [d.np_dtype for d in Tout], static, _OpRef(op), single)

    def out(arr, t):
        return ctx.whole(arr) if t.shape.ndims is None else arr

    if single:
        t = op.outputs[0]
        shape, dt = _out_shape(t) or (), t.dtype.np_dtype
        return [out(ctx.delayed(call, *inputs, shape=shape, dtype=dt, meta=np.empty((0,) * len(shape), dt)), t)]
    values = ctx.delayed(call, *inputs, shape=(), dtype=object)
    outs = []
    for i, t in enumerate(op.outputs):
        shape = _out_shape(t) or ()
        dt = t.dtype.np_dtype
        outs.append(out(ctx.delayed(_pick, values, i, shape=shape, dtype=dt, meta=np.empty((0,) * len(shape), dt)), t))
    return outs


for _type in ("PyFunc", "PyFuncStateless", "EagerPyFunc"):  # EagerPyFunc: tfe.py_func (dflow/eager/py_func.py)
    register_op(_type, _py_infer, eager=_py_eager, lower=_py_lower, stateful=True, num_outputs=None,
                takes_whole=True)
not_differentiable("PyFunc", "PyFuncStateless")


def _as_dtypes(tout):
    single = not isinstance(tout, (list, tuple))
    return single, [as_dtype(t) for t in ([tout] if single else tout)]


def py_func(func, inp, Tout, stateful=True, name=None):  # noqa: N803 - TF1 signature
    """An op running the Python function `func` on the values of `inp` (TF1's `tf.py_func`).

    `func(*numpy_arrays)` returns one value, or a list/tuple of values, per dtype of `Tout` (a
    dtype, or a list of them). Returns one Tensor when `Tout` is a dtype, a list when it is a list
    (the Operation when the list is empty: it has one hidden bool output, so that running the op,
    or depending on it, runs `func` in every mode). The outputs' static shapes are unknown (use
    `set_shape`). Op type "PyFunc" ("PyFuncStateless" when `stateful=False`), default name
    "PyFunc". At run time a wrong number of values, a value of another kind of dtype (a float for
    an int32 output) or an exception inside `func` raises InvalidArgumentError naming the op.
    """
    return apply_py_func("PyFunc" if stateful else "PyFuncStateless", func, inp, Tout, name)


def apply_py_func(op_type, func, inp, Tout, name=None):  # noqa: N803 - TF1 signature
    """The op of `py_func` (and of `tfe.py_func`, whose `func` wraps the user's in eager mode)."""
    if not callable(func):
        raise TypeError(f"py_func: func must be callable, got {type(func).__name__}")
    inp = list(inp) if isinstance(inp, (list, tuple)) else [inp]
    inputs = [convert_to_tensor(x) for x in inp]
    single, tout = _as_dtypes(Tout)
    attrs = {"func": func, "Tout": tout, "token": f"pyfunc_{next(_tokens)}", "Tin": [t.dtype for t in inputs]}
    g = graph_of(inputs, get_default_graph())
    out = apply_op(op_type, inputs, attrs, name=name, default_name=op_type, graph=g)
    if not tout:
        return out.op
    if single:
        return out
    return out if isinstance(out, list) else [out]


def numpy_function(func, inp, Tout, name=None, stateful=True):  # noqa: N803 - TF1 signature
    """`py_func` under TF 1.15's newer name (`tf.numpy_function`): same op, same semantics."""
    return py_func(func, inp, Tout, stateful=stateful, name=name)


# ---- map_blocks ----------------------------------------------------------------------------------
def _block_shape(shapes, chunks):
    """The output shape of `func` on arrays (or blocks) of `shapes`: broadcast, with the fixed
    sizes of `chunks` (None entries follow the inputs)."""
    bshape = np.broadcast_shapes(*shapes) if shapes else ()
    if chunks is None:
        return tuple(bshape)
    return tuple(int(b) if c is None else int(c) for b, c in zip(bshape, chunks))


def _mb_infer(inputs, attrs):
    shape = TensorShape([])
    for t in inputs:
        try:
            shape = broadcast_static_shape(shape, t.shape)
        except ValueError:
            raise ValueError(f"map_blocks: input shapes {[str(i.shape) for i in inputs]} do not broadcast") from None
    chunks = attrs["chunks"]
    if chunks is not None:
        if shape.ndims is not None and len(chunks) != shape.ndims:
            raise ValueError(f"map_blocks: chunks {chunks} has {len(chunks)} entries for outputs of rank "
                             f"{shape.ndims} (the inputs broadcast to {shape})")
        dims = [None] * len(chunks) if shape.ndims is None else shape.as_list()
        shape = TensorShape([d if c is None else int(c) for d, c in zip(dims, chunks)])
    return shape, attrs["dtype"]


def _normalize_block(out, expected, dtype, label):
    """`out` (a function's result on blocks) as an array of the blocks' namespace, of `dtype`,
    checked against the `expected` shape."""
    if not hasattr(out, "shape") or not hasattr(out, "dtype"):
        out = np.asarray(out)
    if tuple(out.shape) != tuple(expected):
        raise ValueError(f"{label} returned a block of shape {tuple(out.shape)}, expected {tuple(expected)}")
    try:
        got = np.dtype(out.dtype)
    except TypeError:  # an array-API dtype (array_api_strict): compare by name
        got = np.dtype(str(out.dtype).rpartition(".")[2])
    if got != dtype:
        if not np.can_cast(got, dtype, casting="same_kind"):
            raise ValueError(f"{label} returned {got}, but expects {dtype}")
        xp = namespace((out,))
        out = xp.astype(out, getattr(xp, dtype.name))
    return out


class _BlockCall:
    """The chunk kernel of a lowered map_blocks (picklable)."""

    def __init__(self, func, label, dtype, chunks, op_ref):
        self.func, self.label, self.dtype, self.chunks, self.op_ref = func, label, dtype, chunks, op_ref

    def __call__(self, *blocks):
        try:
            out = self.func(*blocks)
        except Exception as e:  # noqa: BLE001 - any user exception becomes the op's error
            err, cause = _function_failed(self.label, self.op_ref, e)
            raise err from cause
        expected = _block_shape([b.shape for b in blocks], self.chunks)
        try:
            return _normalize_block(out, expected, self.dtype, self.label)
        except ValueError as e:  # a result that contradicts the op: no cause to chain
            raise PyFuncError(None, self.op_ref.op, f"{self.label}: {e}") from None


def _mb_eager(xp, *arrays, func, dtype, chunks):
    out = func(*arrays)
    expected = _block_shape([a.shape for a in arrays], chunks)
    return _normalize_block(out, expected, dtype.np_dtype, f"map_blocks function {getattr(func, '__name__', func)!r}")


def _mb_lower(ctx, *inputs, func, dtype, chunks):
    op = ctx.op
    ins = [ctx.as_dask(x) for x in inputs]
    ndim = max((x.ndim for x in ins), default=0)
    if chunks is not None:
        # a dim whose block size the function fixes is one block in every input
        fixed = [d for d, c in enumerate(chunks) if c is not None]
        ins = [x.rechunk({d - (ndim - x.ndim): -1 for d in fixed if d >= ndim - x.ndim}) for x in ins]
    np_dtype = dtype.np_dtype
    label = f"{op.type} op {op.name!r}"
    kernel = _BlockCall(func, label, np_dtype, chunks, _OpRef(op))
    meta = np.empty((0,) * ndim, np_dtype)
    out = ctx.da.map_blocks(kernel, *ins, dtype=np_dtype, meta=meta, name=ctx.name("-map_blocks"))
    if chunks is not None and any(c is not None for c in chunks):
        out_chunks = tuple(o if c is None else (int(c),) * len(o) for o, c in zip(out.chunks, chunks))
        out = ctx.da.map_blocks(kernel, *ins, dtype=np_dtype, meta=meta, chunks=out_chunks,
                                name=ctx.name("-map_blocks"))
    return out


register_op("MapBlocks", _mb_infer, eager=_mb_eager, lower=_mb_lower, stateful=True)
not_differentiable("MapBlocks")


def map_blocks(func, *inputs, dtype, chunks=None, name=None):
    """An op applying the Python function `func` chunk by chunk (dask's `map_blocks`, as an op).

    `func(*blocks)` gets same-index blocks of `inputs` (numpy broadcasting across them; numpy or
    cupy blocks, as the inputs' chunks are: use `array_api_compat.array_namespace` to stay on
    the GPU) and returns a block of `dtype` (a value of another dtype of the same kind is cast).
    `chunks`: None when each output block has the broadcast shape of its input blocks; else one
    entry per output dim, None (follows the inputs) or an int k: that dim of the inputs is kept in
    one block and each output block has k along it (a function that maps rows of 3 features to 10,
    `chunks=(None, 10)`). In small in-memory plans `func` gets whole arrays, so it must be
    blockwise: `func(concat(blocks)) == concat(func(block) for block in blocks)`.
    Default op name "MapBlocks". Shape or dtype errors at run time, and exceptions inside `func`,
    raise InvalidArgumentError naming the op.
    """
    if not callable(func):
        raise TypeError(f"map_blocks: func must be callable, got {type(func).__name__}")
    if not inputs:
        raise ValueError("map_blocks needs at least one input tensor")
    tensors = [convert_to_tensor(x) for x in inputs]
    if chunks is not None:
        chunks = tuple(None if c is None else int(c) for c in chunks)
    attrs = {"func": func, "dtype": as_dtype(dtype), "chunks": chunks}
    return apply_op("MapBlocks", tensors, attrs, name=name, default_name="MapBlocks")
