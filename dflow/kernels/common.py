"""Helpers every kernel module shares: tensor conversion with TF1's dtype rules, op creation,
and the common static-inference rules (unary, broadcasting binary)."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import numbers

import numpy as np

from ..devices import machine_memory
from ..errors import OverAllocation
from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.graph import current_executor, get_default_graph
from ..graph.indexed_slices import IndexedSlices, densify
from ..graph.ops import Operation, Tensor
from ..graph.registry import register_op
from ..graph.shape import Dimension, TensorShape, broadcast_static_shape

# ---- Python/numpy values -> numpy arrays with TF1's dtype rules ---------------------------------


def to_numpy(value, dtype=None, what="value"):
    """`value` as a numpy array of `dtype` (DType or None), following TF1's constant rules.

    Without a dtype, Python floats become float32 and ints int32 (int64 if they do not fit);
    numpy values keep their dtype. With a dtype, values are converted; a non-integral float into
    an integer dtype, or a value numpy cannot convert, raises TypeError (as TF1).
    """
    if isinstance(value, Tensor):
        raise TypeError(f"{what}: expected a Python or numpy value, got Tensor {value.name!r}")
    if isinstance(value, (list, tuple, Dimension)):
        value = _without_dimensions(value)
    if dtype is not None:
        dtype = as_dtype(dtype)
        if dtype == dtypes.string:
            return to_bytes_array(value, what)
        arr = np.asarray(value) if not isinstance(value, np.ndarray) else value
        if arr.dtype == object or arr.dtype.kind in "US":
            raise TypeError(f"Expected {dtype.name}, got {value!r} of type '{type(value).__name__}'.")
        if dtype.is_integer and arr.dtype.kind in "fc":
            # TF1: a Python float is never an integer (1.0 included); numpy values are cast
            python_value = not isinstance(value, (np.ndarray, np.generic)) and arr.size > 0
            if python_value or not np.all(np.isfinite(arr)) or not np.all(np.equal(np.mod(arr, 1), 0)):
                raise TypeError(f"Expected {dtype.name}, but got {value!r} of type '{type(value).__name__}'.")
        if dtype.is_bool and arr.dtype.kind not in "b":
            raise TypeError(f"Expected bool, got {value!r} of type '{type(value).__name__}'.")
        if not (dtype.is_complex) and arr.dtype.kind == "c":
            raise TypeError(f"Expected {dtype.name}, got complex value {value!r}.")
        return arr.astype(dtype.np_dtype, copy=False)
    if isinstance(value, (str, bytes)):
        return to_bytes_array(value, what)
    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        if arr.dtype.kind in "US" or (arr.dtype == object and _all_strings(arr)):
            return to_bytes_array(arr, what)
    else:
        try:
            arr = np.asarray(value)
        except ValueError as e:
            raise TypeError(f"{what}: cannot convert {value!r} to a tensor: {e}") from None
        if arr.dtype.kind in "US" or (arr.dtype == object and _all_strings(arr)):
            if not _all_strings(np.asarray(value, dtype=object)):  # ["a", 1]: numpy made 1 a string
                raise TypeError(f"Failed to convert elements of {value!r} to Tensor: strings and other values "
                                "mixed.")
            return to_bytes_array(value, what)  # not `arr`: numpy's |S drops trailing NUL bytes
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype.kind == "i":
            if arr.size == 0 or (arr.min() >= -(2**31) and arr.max() < 2**31):
                arr = arr.astype(np.int32)
            else:
                arr = arr.astype(np.int64)
    if arr.dtype == object or arr.dtype.kind in "USVO":
        raise TypeError(f"{what}: cannot convert {value!r} (numpy dtype {arr.dtype}) to a tensor")
    as_dtype(arr.dtype)  # unsupported dtypes raise TypeError here
    return arr


def _without_dimensions(value, top=None):
    """A shape list holding `Dimension`s (`[-1, x.shape[1] * x.shape[2]]`) as plain ints, as TF1
    converts them; an unknown Dimension is TF1's TypeError."""
    top = value if top is None else top
    if isinstance(value, Dimension):
        if value.value is None:
            raise TypeError(f"Failed to convert object of type {type(top)} to Tensor. Contents: {top!r}. "
                            "Consider casting elements to a supported type.")
        return value.value
    if type(value) in (list, tuple) and any(isinstance(v, (Dimension, list, tuple)) for v in value):
        return type(value)(_without_dimensions(v, top) for v in value)
    return value


def _all_strings(arr):
    return arr.size > 0 and all(isinstance(v, (str, bytes)) for v in arr.reshape(-1))


def _as_bytes(v):
    if isinstance(v, bytes):
        return bytes(v)  # np.bytes_ too: TF1 hands out plain bytes
    if isinstance(v, str):
        return v.encode("utf-8")
    raise TypeError(f"Expected string, but got {v!r} of type '{type(v).__name__}'.")


_encode = np.frompyfunc(_as_bytes, 1, 1)


def to_bytes_array(value, what="value"):
    """`value` (str, bytes, nested lists of them, numpy U/S/object arrays) as a numpy object array
    of `bytes`, TF1's string tensor value: str is encoded as UTF-8. TypeError (TF1's wording) for a
    non-string element."""
    if isinstance(value, (str, bytes)):
        arr = np.empty((), dtype=object)
        arr[()] = _as_bytes(value)
        return arr
    try:
        arr = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=object)
    except ValueError as e:
        raise TypeError(f"{what}: cannot convert {value!r} to a string tensor: {e}") from None
    if arr.dtype.kind not in "USO":
        if arr.size == 0:
            return np.empty(arr.shape, dtype=object)
        v = arr.reshape(-1)[0]
        raise TypeError(f"Expected string, but got {v.item() if hasattr(v, 'item') else v!r} of type "
                        f"'{type(v.item() if hasattr(v, 'item') else v).__name__}'.")
    out = _encode(arr)
    return np.asarray(out, dtype=object) if isinstance(out, np.ndarray) else to_bytes_array(out, what)


# ---- op creation ------------------------------------------------------------------------------


def graph_of(values, default=None):
    """The graph of the tensors among `values`; ValueError if they come from different graphs."""
    g = None
    for v in values:
        if getattr(v, "_is_eager", False) or getattr(getattr(v, "_handle", None), "_is_eager", False):
            continue  # an eager tensor or variable goes into any graph (captured there)
        if isinstance(v, (Tensor, Operation)) or hasattr(v, "_as_graph_element"):
            vg = v.graph
            if g is None:
                g = vg
            elif vg is not g:
                raise ValueError(f"{v.name!r} must be from the same graph as the other inputs.")
    return g or default or get_default_graph()


def apply_op(op_type, inputs, attrs=None, name=None, default_name=None, graph=None):
    """Creates an op of type `op_type` on tensors `inputs`; returns its output (or list of them)."""
    g = graph or graph_of(inputs)
    op = g.create_op(op_type, inputs, attrs or {}, name=name, default_name=default_name or op_type)
    outs = op.outputs
    if len(outs) == 1:
        return outs[0]
    if not outs:
        return op
    return outs


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """A constant tensor (`Const`) from a Python or numpy value; `shape` broadcasts a scalar or
    reshapes a value of matching size, as TF1."""
    arr = to_numpy(value, dtype, what=f"constant {name!r}")
    if dtype is not None and arr.dtype.kind != "O" and as_dtype(dtype) == dtypes.string:
        raise TypeError(f"Expected string, but got {value!r} of type '{type(value).__name__}'.")
    if shape is not None:
        shape = tuple(int(s) for s in (shape if isinstance(shape, (list, tuple)) else [shape]))
        if arr.shape != shape:
            if verify_shape:
                raise TypeError(f"Expected Tensor's shape: {shape}, got {arr.shape}.")
            if arr.size == 1:
                arr = np.full(shape, arr.reshape(()), dtype=arr.dtype)
            elif arr.size == int(np.prod(shape)):
                arr = arr.reshape(shape)
            else:
                raise TypeError(f"Eager/graph constant: expected {int(np.prod(shape))} elements for shape "
                                f"{list(shape)}, got {arr.size}.")
    if not arr.flags.c_contiguous or arr.flags.writeable:
        arr = np.array(arr, order="C", copy=True)  # (ascontiguousarray would make 0-d arrays 1-d)
    arr.setflags(write=False)
    return apply_op("Const", [], {"value": arr, "dtype": as_dtype(arr.dtype)}, name=name,
                    default_name="Const", graph=get_default_graph())


def _const_infer(inputs, attrs):
    v = attrs["value"]
    return TensorShape(v.shape), attrs["dtype"]


register_op("Const", _const_infer, eager=lambda xp, value, dtype: xp.asarray(value),
            fold=lambda op: op.get_attr("value"), cheap_source=True)


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, dtype_hint=None):
    """`value` as a Tensor: tensors pass through (dtype checked), lists holding tensors are stacked,
    other values become constants (TF1's `tf.convert_to_tensor`)."""
    preferred_dtype = preferred_dtype or dtype_hint
    if hasattr(value, "_as_graph_element") and not isinstance(value, Tensor):
        value = value._as_graph_element()  # variables and other tensor-like objects
    if isinstance(value, IndexedSlices):  # a sparse gradient: densified, as TF1 (warning when huge)
        value = densify(value)
    if isinstance(value, Tensor):
        if dtype is not None and as_dtype(dtype) != value.dtype:
            raise ValueError(f"Tensor conversion requested dtype {as_dtype(dtype).name} for Tensor with "
                             f"dtype {value.dtype.name}: {value!r}")
        return value
    if isinstance(value, Operation):
        raise TypeError(f"Can't convert Operation {value.name!r} to Tensor (fetch or depend on it instead)")
    if hasattr(value, "__dask_graph__") and hasattr(value, "chunks"):
        executor = current_executor()
        if executor is not None and hasattr(executor, "lazy_value"):  # eager: stays a lazy plan
            return executor.lazy_value(value, dtype or preferred_dtype)
    if isinstance(value, (list, tuple)) and _contains_tensor(value):
        return apply_op("Pack", [convert_to_tensor(v, dtype=dtype, preferred_dtype=preferred_dtype) for v in value],
                        {"axis": 0}, name=name or "packed")
    if dtype is None and preferred_dtype is not None:
        try:
            return constant(value, dtype=preferred_dtype, name=name or "Const")
        except (TypeError, ValueError):
            pass
    return constant(value, dtype=dtype, name=name or "Const")


def _contains_tensor(value):
    for v in value:
        if isinstance(v, Tensor) or hasattr(v, "_as_graph_element"):
            return True
        if isinstance(v, (list, tuple)) and _contains_tensor(v):
            return True
    return False


def convert_pair(x, y, op_name):
    """Converts binary-op operands as TF1: a non-tensor operand takes the other's dtype."""
    x_is = isinstance(x, Tensor) or hasattr(x, "_as_graph_element")
    y_is = isinstance(y, Tensor) or hasattr(y, "_as_graph_element")
    if x_is:
        x = convert_to_tensor(x)
        y = _convert_operand(y, x.dtype, op_name, "y") if not y_is else convert_to_tensor(y)
    elif y_is:
        y = convert_to_tensor(y)
        x = _convert_operand(x, y.dtype, op_name, "x")
    else:
        x = convert_to_tensor(x)
        y = _convert_operand(y, x.dtype, op_name, "y")
    return x, y


def _convert_operand(value, dtype, op_name, arg):
    try:
        return convert_to_tensor(value, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"Input {arg!r} of {op_name!r} Op has a value {value!r} that cannot be converted "
                        f"to {dtype.name}: {e}") from None


def is_python_scalar(v):
    return isinstance(v, (numbers.Number, np.generic)) and not isinstance(v, Tensor)


# ---- static inference helpers -----------------------------------------------------------------

FLOAT = "f"
INT = "iu"
NUMERIC = "iufc"
REAL = "iuf"
BOOL = "b"
ANY = "iufcb"


STRING = "O"  # dflow.string (object arrays of bytes)

_NAMED = [dtypes.float16, dtypes.float32, dtypes.float64, dtypes.uint8, dtypes.int8, dtypes.uint16, dtypes.int16,
          dtypes.int32, dtypes.uint32, dtypes.uint64, dtypes.int64, dtypes.complex64, dtypes.complex128, dtypes.bool,
          dtypes.string]


def check_dtype(t, kinds, op_type, arg="x"):
    """TypeError in TF1's words when `t`'s dtype is not of the numpy `kinds` an op accepts."""
    if t.dtype.np_dtype.kind not in kinds:
        allowed = ", ".join(d.name for d in _NAMED if d.np_dtype.kind in kinds)
        raise TypeError(f"Value passed to parameter {arg!r} has DataType {t.dtype.name} not in list of allowed "
                        f"values: {allowed} (op {op_type!r}, tensor {t.name!r})")


def unary_infer(kinds=ANY, out_dtype=None, op_type="op"):
    def infer(inputs, attrs):
        (x,) = inputs
        check_dtype(x, kinds, op_type)
        return x.shape, out_dtype or x.dtype

    return infer


def broadcast_infer(kinds=ANY, out_dtype=None, op_type="op"):
    """Inference for n-ary elementwise ops: equal input dtypes, numpy-broadcast shapes."""

    def infer(inputs, attrs):
        d0 = inputs[0].dtype
        for i, t in enumerate(inputs):
            if t.dtype != d0:
                raise TypeError(f"Input {i} of {op_type!r} Op has type {t.dtype.name} that does not match "
                                f"type {d0.name} of argument 0 ({inputs[0].name!r} vs {t.name!r}).")
            check_dtype(t, kinds, op_type, arg=f"input {i}")
        shape = inputs[0].shape
        for t in inputs[1:]:
            try:
                shape = broadcast_static_shape(shape, t.shape)
            except ValueError:
                raise ValueError(f"Dimensions must be compatible for {op_type!r}: shapes "
                                 f"{inputs[0].shape} and {t.shape} cannot broadcast "
                                 f"({inputs[0].name!r}, {t.name!r}).") from None
        return shape, out_dtype or d0

    return infer


def host_ints(v):
    """A host value (numpy or cupy array, or Python; axes, shapes, sizes) as a flat list of Python
    ints."""
    v = v.tolist() if hasattr(v, "tolist") else v
    if type(v) is int:  # (the common cases, without a numpy round trip)
        return [v]
    if type(v) is list and all(type(i) is int for i in v):
        return v
    return np.asarray(v, dtype=np.int64).reshape(-1).tolist()


def ints_in_range(idx, n):
    """Whether every value of integer numpy array `idx` is in [0, n): one reduction (a signed array
    viewed as unsigned, where a negative value is at least 2**(bits - 1)), two where n is that
    large. A per-step check of a batch of row ids; within an in-process run (`index_checks`) an
    array found in range, or a view of one (same dtype), is not checked again: a training step's
    ids are checked by the gathers and again by the row updates."""
    if not idx.size:
        return True
    memo = _RUN_CHECKS.get()
    if memo is not None:
        for a in (idx, idx.base):
            hit = memo.get(id(a))
            if hit is not None and hit[0] is a and hit[1] <= n and a.dtype == idx.dtype:
                return True
    unsigned = _UNSIGNED.get(idx.dtype)
    if unsigned is not None and n <= 1 << (8 * idx.dtype.itemsize - 1) and idx.flags.c_contiguous:
        ok = int(_max(idx.view(unsigned), axis=None)) < n  # (the ufunc itself: no method wrapper)
    else:
        ok = int(idx.min()) >= 0 and int(idx.max()) < n
    if ok and memo is not None:
        memo[id(idx)] = (idx, n)  # (held: its id is not reused while the run lasts)
    return ok


_UNSIGNED = {np.dtype(t): np.dtype(t.lower().replace("i", "u")) for t in ("i1", "i2", "i4", "i8")}
_UNSIGNED.update({np.dtype(t).newbyteorder(): np.dtype(t.replace("i", "u")).newbyteorder()
                  for t in ("i2", "i4", "i8")})
_max = np.maximum.reduce
_RUN_CHECKS = contextvars.ContextVar("dflow_index_checks", default=None)


class index_checks:  # noqa: N801 - used as a function, like contextlib's managers
    """An in-process run's memo of the index arrays `ints_in_range` found in range. Only for a run
    whose kernels never write their inputs (a plan's steps): a feed the caller changes between runs
    is checked again in the next run."""

    __slots__ = ("token",)

    def __enter__(self):
        self.token = _RUN_CHECKS.set({})

    def __exit__(self, *exc):
        _RUN_CHECKS.reset(self.token)


def normalize_axis(axis, ndims, op_name):
    """`axis` (int, may be negative) as 0..ndims-1; ValueError if out of range."""
    a = int(axis)
    if ndims is not None:
        if not -ndims <= a < ndims:
            raise ValueError(f"{op_name}: axis {axis} is out of range for a tensor of rank {ndims}")
        a %= ndims
    return a


def dtype_of(x):
    return dtypes.as_dtype(x)


def run_with_epilogue(eager, n_inputs, kernel, slot, xp, *args, **attrs):
    """The producer's kernel `eager` on args[:n_inputs], running the elementwise chain `kernel` (a
    schedule.fusion FusedKernel: `kernel.eager(xp, *leaves)`) on each row slab of its output, in
    place (OpDef `epilogue`): the chain's leaves are args[n_inputs:] with the slab at `slot`."""
    epilogue = functools.partial(chain_on, kernel, slot, xp, args[n_inputs:])
    return eager(xp, *args[:n_inputs], epilogue=epilogue, **attrs)


def chain_on(kernel, slot, xp, others, value):
    """The elementwise chain `kernel` (a FusedKernel) on `value` as its leaf `slot`, `others` its
    other leaves in order."""
    leaves = list(others)
    leaves.insert(slot, value)
    return kernel.eager(xp, *leaves)


# ---- the in-process allocation limit ----------------------------------------------------------------

_ALLOCATION_LIMIT = contextvars.ContextVar("dflow_allocation_limit", default=None)


@contextlib.contextmanager
def allocation_limit(nbytes):
    """While an in-process plan runs under a memory budget: kernels whose output size comes from a
    run-time value (Fill, random draws, Tile, BroadcastTo, OneHot) refuse an output over `nbytes`
    (None: no limit) with OverAllocation before allocating it; the session then runs the plan
    through Dask, chunked."""
    token = _ALLOCATION_LIMIT.set(nbytes)
    try:
        yield
    finally:
        _ALLOCATION_LIMIT.reset(token)


def check_allocation(shape, dtype, what):
    """Before a kernel allocates an output of `shape` and `dtype` sized by a run-time value:
    OverAllocation over the run's allocation limit, MemoryError over this machine's memory (the
    plan reports either as the op's ResourceExhaustedError)."""
    try:
        item = np.dtype(getattr(dtype, "_np_dtype", dtype)).itemsize  # (array_api_strict's dtypes wrap numpy's)
    except TypeError:
        return  # a namespace's dtype numpy cannot size: not checked
    nbytes = math.prod(int(d) for d in shape) * item
    limit = _ALLOCATION_LIMIT.get()
    text = f"shape[{','.join(str(int(d)) for d in shape)}] and type {getattr(dtype, 'name', dtype)}: {nbytes} bytes"
    if limit is not None and nbytes > limit:
        raise OverAllocation(f"{what}: OOM when allocating tensor with {text}, over the memory budget "
                             f"({limit} bytes) for a value held whole in this process")
    machine = machine_memory()
    if machine and nbytes > machine:
        raise MemoryError(f"{what}: OOM when allocating tensor with {text}, more than this machine's memory "
                          f"({machine} bytes)")
