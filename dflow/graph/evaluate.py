"""The one evaluator: how an op is applied to concrete values, wherever that happens (build-time
constants, a Program's folded steps, host values in the Dask lowering, in-process steps, bound
and fused kernels, eager mode).

- `namespace(values)`: the array namespace kernels get; `quiet()`: numpy's error state while they
  run (silent, as TF1: a log(0) is -inf, an x / 0 inf).
- `fold`: an op's outputs computed now from known values (`known_inputs`), as the one folding rule
  (`foldable`) allows.
- `apply`: an op's kernel on values, its failure raised as the op's error (`raise_failure`: the
  op's shape rule, re-run on the shapes it got, words a mismatch as TF1 does); `evaluate`: the
  same for an eager op, from choosing the namespace to outputs of their dtypes; `OpTask`: a
  function run as a Dask task of an op, its failure worded the same way.
"""

from __future__ import annotations

import functools

import array_api_compat
import array_api_compat.numpy as np_xp
import numpy as np

from ..errors import OpError, kernel_failure, raise_kernel_failure, user_frames
from .registry import OpState
from .shape import TensorShape

# The one size limit of values computed on the host instead of as data: at build time
# (`constant_value`), when a Program is folded and when a plan is lowered (shapes of feeds,
# integer arithmetic on them).
FOLD_MAX_ELEMENTS = 1 << 16

_ARRAY = (np.ndarray, np.generic)
_SCALAR = (bool, int, float, complex, bytes, str)

quiet = functools.partial(np.errstate, all="ignore")  # kernels are silent where TF1 is


def namespace(values):
    """The array namespace of `values` (None entries ignored): numpy's unless one is another array
    (cupy, array-API arrays); a mix the namespaces cannot agree on runs on numpy."""
    for v in values:
        if v is not None and not isinstance(v, _ARRAY):
            try:
                return array_api_compat.array_namespace(*[v for v in values if v is not None and
                                                          not isinstance(v, _ARRAY)])
            except TypeError:
                return np_xp
    return np_xp


# ---- folding: what may be computed now, once ---------------------------------------------------

def foldable(op, values=None):
    """The one folding rule: whether pure `op` on these known input values is computed now (values
    None: whether it may be, before they are looked up). Yes for a Const (its value exists), for
    outputs statically small, and, for outputs of unknown static size, for an op with a static
    `fold` rule (shape arithmetic: Shape, StridedSlice of a shape) or integer arithmetic on small
    values (shapes and sizes computed from known shapes); never for a statically large output or
    one of a non-array dtype."""
    opdef, traits = op._opdef, op._opdef.traits
    if opdef.state is not OpState.NONE or opdef.eager is None or traits.stateful or traits.run_state or \
            traits.must_feed:  # not pure: its value does not follow from its inputs alone
        return False
    if op._type == "Const":
        return True
    small = True
    for t in op._outputs:
        if t.dtype.np_dtype is None:
            return False
        n = t.shape.num_elements()
        if n is None:
            small = False
        elif n > FOLD_MAX_ELEMENTS:
            return False
    if small or opdef.fold is not None:
        return True
    if not all(t.dtype.is_integer or t.dtype.is_bool for t in op._outputs):
        return False
    return values is None or sum(int(np.size(v)) for v in values if v is not None) <= FOLD_MAX_ELEMENTS


def known_inputs(op, inputs, lookup):
    """The values of `inputs` (an op's input tensors) by `lookup` (None: unknown), a shape-only op
    (OnesLike, Shape) reading a read-only stand-in of a fully known static shape; None if one is
    unknown."""
    shape_only = op._opdef.traits.shape_only
    values = []
    for t in inputs:
        v = lookup(t) if t is not None else None
        if v is None:
            if t is None or not shape_only or not t.shape.is_fully_defined():
                return None
            v = np.broadcast_to(np.empty((), t.dtype.np_dtype), t.shape.as_list())
        values.append(v)
    return values


def fold(op, values):
    """The outputs of `op` on known `values`, computed now (owned numpy arrays; strings as object
    arrays of bytes), or None: not `foldable`, a kernel that fails (the run raises it as the op's
    error) or returns something other than arrays."""
    if not foldable(op, values):
        return None
    try:
        with quiet():
            out = op._opdef.eager(np_xp, *values, **op._attrs)
    except Exception:  # noqa: BLE001 - left to the run, which raises it as the op's error
        return None
    out = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(out) != len(op._outputs):
        return None
    owned = []
    for t, v in zip(op._outputs, out):
        if not isinstance(v, _ARRAY + _SCALAR):
            return None
        if isinstance(v, (bytes, str)) or np.dtype(t.dtype.np_dtype).kind == "O":
            arr = np.empty(np.shape(v), dtype=object)  # strings stay object arrays of bytes
            arr[...] = v
            owned.append(arr)
        else:
            owned.append(np.array(v))
    return owned


# ---- applying an op's kernel --------------------------------------------------------------------

def apply(op, xp, values):
    """The eager kernel of `op` on `values` of namespace `xp`, numpy quiet; a failure is raised as
    the op's error."""
    try:
        with quiet():
            return op._opdef.eager(xp, *values, **op._attrs)
    except Exception as e:  # an OpError keeps its class, and gets its op named
        raise_failure(op, e, values)


def evaluate(op, values, dtypes, xp=None, ctx=None):
    """The outputs of `op`, made where it runs (an eager op), on `values`: its eager kernel on
    their namespace (`xp` when given: values placed on a device), numpy quiet, `ctx` a run-state
    kernel's per-run values; each output converted to its DType in `dtypes` (the op's shape rule
    gave them). A failure is raised as the op's error, saying where the user's code made it."""
    if xp is None:
        xp = np_xp
        for v in values:
            if v is not None and not isinstance(v, _ARRAY):
                xp = namespace(values)
                break
    try:
        with quiet():
            if ctx is None:
                out = op._opdef.eager(xp, *values, **op._attrs)
            else:
                out = op._opdef.eager(xp, *values, ctx=ctx, **op._attrs)
    except Exception as e:  # an OpError keeps its class, and gets its op named
        if op._origin is None:
            op._origin = user_frames()  # (looked up only when it failed: it costs a frame walk)
        raise_failure(op, e, values)
    if len(dtypes) == 1:  # (one output: no loop, the common case of a small eager op)
        if isinstance(out, (tuple, list)):
            out = out[0]
        np_dtype = dtypes[0]._np
        if out.__class__ is np.ndarray:
            return (out,) if out.dtype == np_dtype else (out.astype(np_dtype),)
        out = (out,)
    return tuple(_typed(v, dt._np) for dt, v in zip(dtypes, out))


def _typed(v, np_dtype):
    """Output value `v` of the dtype `np_dtype` (a scalar or a value of another dtype converted)."""
    if not isinstance(v, np.ndarray) and (isinstance(v, np.generic) or not hasattr(v, "dtype")):
        return np.asarray(v, dtype=np_dtype)
    return v if v.dtype == np_dtype else v.astype(np_dtype)


class OpTask:
    """`fn` as a Dask task of one op (picklable: a worker runs it too, where only the op's type and
    name travel): its failure is the op's error, worded as in process (an OpError keeps its class)."""

    __slots__ = ("fn", "op_type", "op_name")

    def __init__(self, fn, op_type, op_name):
        self.fn, self.op_type, self.op_name = fn, op_type, op_name

    def __call__(self, *args, **kwargs):
        try:
            return self.fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - any kernel failure is reported against the op
            raise_kernel_failure(None, e, op_type=self.op_type, op_name=self.op_name)

    @property
    def __wrapped__(self):  # its signature is fn's (dask's map_blocks passes `block_info` if fn takes it)
        return self.fn


def raise_failure(op, exc, args):
    """Raises kernel exception `exc` of `op` on `args` as the op's error: an OpError keeps its class
    (an error worded already passes as it is); with every input's value, the op's shape rule
    words a mismatch (`input_failure`)."""
    err = None
    if not isinstance(exc, OpError) and len(args) == len(op._inputs):
        try:
            err = input_failure(op, exc, [value_shape(a) for a in args])
        except Exception:  # noqa: BLE001 - the wording must never hide the failure
            pass
    err = err or kernel_failure(op, exc)
    if err is exc:
        raise exc
    raise err from exc


def input_failure(op, exc, shapes, where=""):
    """The error of `op` that raised `exc` on inputs of these run-time `shapes` (tuples, None where
    unknown): the op's own shape rule, run again with the shapes it got, words a shape mismatch as
    TF1 does at build time ("Dimensions must be equal, but are 3 and 4 for 'MatMul' with input
    shapes: [2,3], [4,5]."); otherwise the kernel's error, with the shapes named."""
    if not isinstance(exc, OpError) and len(shapes) == len(op.inputs) and all(s is not None for s in shapes):
        try:
            op._opdef.infer([_WithShape(t, s) for t, s in zip(op.inputs, shapes)], op._attrs)
        except (ValueError, TypeError) as e:
            return kernel_failure(op, e, where=where)
        except Exception:  # noqa: BLE001 - a shape rule that cannot take stand-ins: the kernel's words
            pass
    return kernel_failure(op, exc, where=where, shapes=shapes if not isinstance(exc, OpError) else None)


class _WithShape:
    """A stand-in of tensor `t` with the run-time shape `shape` (for `input_failure`)."""

    def __init__(self, t, shape):
        self._t = t
        self.shape = TensorShape([None if d != d else int(d) for d in shape])

    def get_shape(self):
        return self.shape

    def __getattr__(self, name):
        return getattr(self._t, name)


def value_shape(v):
    """The shape of a value an op got (None when it has none)."""
    shape = getattr(v, "shape", None)
    if shape is None:
        return None if v is None else tuple(np.shape(v))
    if hasattr(shape, "as_list"):  # an unbuilt elementwise chain: its static shape
        return tuple(shape.as_list()) if shape.ndims is not None else None
    return tuple(shape)
