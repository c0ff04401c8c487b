"""`EagerTensor`: a `Tensor` that holds its value (TF1's eager tensor), and `HandleTensor`, a
variable's handle in eager mode (its value is the variable's current value).

An eager tensor is a `Tensor` subclass, so every op function, shape rule and gradient rule takes it
as it takes a graph tensor: static shapes are the value's, `constant_value` is the value. Its op is
the executor's shared anonymous op unless a tape recorded the op that made it (then the recorded
`Operation`, with its inputs, for the gradient rules).
"""

from __future__ import annotations

import numpy as np

from ..errors import FailedPreconditionError, InvalidArgumentError
from ..graph.dtypes import as_dtype
from ..graph.ops import Tensor
from ..graph.shape import TensorShape
from .gpus import gpu_namespace

__all__ = ["EagerTensor", "HandleTensor", "ReadTensor", "Slot", "is_eager"]

_new = object.__new__


def _on_host(v):
    """A value as a numpy array (a cupy array is copied to the host)."""
    if isinstance(v, np.ndarray):
        return v
    get = getattr(v, "get", None)
    if get is not None and not isinstance(v, np.generic):
        return get()
    return np.asarray(v)


def _device_of(v):
    return "/job:localhost/replica:0/task:0/device:CPU:0" if isinstance(v, (np.ndarray, np.generic)) else \
        f"/job:localhost/replica:0/task:0/device:GPU:{getattr(getattr(v, 'device', None), 'id', 0)}"


# the ufuncs numpy calls for `ndarray OP tensor`, and the tensor's reflected operator
_REFLECTED = {"add": "__radd__", "subtract": "__rsub__", "multiply": "__rmul__", "divide": "__rtruediv__",
              "true_divide": "__rtruediv__", "floor_divide": "__rfloordiv__", "remainder": "__rmod__",
              "power": "__rpow__", "matmul": "__rmatmul__"}


class EagerTensor(Tensor):
    """A tensor with a value, computed when its op ran (`tf.Tensor` in eager mode)."""

    __slots__ = ("_v",)
    _is_eager = True
    _lazy = False  # LazyTensor (lazy.py): a value not computed yet

    @staticmethod
    def make(value, dtype, op):
        """A new eager tensor of `value` (an array of `dtype`, a DType), made by `op`."""
        return _filled(_new(EagerTensor), value, dtype, op)

    # ---- the value -------------------------------------------------------------------------
    def numpy(self):
        """The value as a numpy array (a numpy scalar for a 0-d value is still a 0-d array's item
        type, as TF: `tf.constant(3.).numpy()` is `np.float32(3.0)`)."""
        v = _on_host(self._v)
        return v[()] if v.ndim == 0 else v

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy functions take eager tensors as arrays (`np.sqrt(x)` is a numpy array); a numpy
        value on the left of an operator defers to the tensor, as TF's EagerTensor has numpy do
        (`np_array * x` is a tensor of x's dtype)."""
        reflected = _REFLECTED.get(ufunc.__name__)
        if reflected and method == "__call__" and not kwargs and len(inputs) == 2 \
                and isinstance(inputs[1], EagerTensor) and isinstance(inputs[0], (np.ndarray, np.generic)):
            return getattr(inputs[1], reflected)(inputs[0])
        inputs = [np.asarray(i) if isinstance(i, EagerTensor) else i for i in inputs]
        out = kwargs.get("out")
        if out:
            kwargs["out"] = tuple(np.asarray(o) if isinstance(o, EagerTensor) else o for o in out)
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array__(self, dtype=None, copy=None):
        v = _on_host(self._v)
        return v if dtype is None else v.astype(dtype, copy=False)

    @property
    def shape(self):
        s = self._shape
        if s is None:
            s = self._shape = TensorShape(self._v.shape)
        return s

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        if not self.shape.is_compatible_with(TensorShape(shape)):
            raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied shape "
                             f"{TensorShape(shape)}")

    @property
    def name(self):
        # TF raises AttributeError here; shape rules and messages name their inputs, so an eager
        # tensor has a descriptive stand-in
        return f"eager tensor of shape {self.shape} and dtype {self._dtype.name}"

    @property
    def device(self):
        return _device_of(self._v)

    @property
    def graph(self):
        return self._op._graph

    def consumers(self):
        return []

    @property
    def _eager_value(self):
        return self._v

    def _const(self):
        """The value for `constant_value` (numpy, on the host)."""
        return _on_host(self._v)

    # ---- Python protocols -------------------------------------------------------------------
    def __bool__(self):
        return bool(self._scalar("bool"))

    def __float__(self):
        return float(self._scalar("float"))

    def __int__(self):
        return int(self._scalar("int"))

    def __index__(self):
        if not self._dtype.is_integer:
            raise TypeError(f"Only integer tensors can be used as indices, got {self._dtype.name}")
        return int(self._scalar("index"))

    def __complex__(self):
        return complex(self._scalar("complex"))

    def _scalar(self, what):
        v = self._v
        if getattr(v, "size", 1) != 1:
            raise ValueError(f"The truth value of an array with more than one element is ambiguous "
                             f"(converting a tensor of shape {self.shape} to {what})" if what == "bool" else
                             f"only size-1 tensors can be converted to Python {what}s, got shape {self.shape}")
        return _on_host(v).reshape(())[()]

    def __len__(self):
        if not self.shape.ndims:
            raise TypeError("Scalar tensor has no `len()`")
        return int(self._v.shape[0])

    def __iter__(self):
        if not self.shape.ndims:
            raise TypeError("Cannot iterate over a scalar tensor.")
        for i in range(int(self._v.shape[0])):
            yield self[i]

    def __format__(self, spec):
        if self.shape.ndims == 0:
            return format(self.numpy(), spec)
        return format(str(self), spec)

    def __str__(self):
        return f"tf.Tensor({_numpy_text(self)}, shape={self.shape}, dtype={self._dtype.name})"

    def __repr__(self):
        return (f"<tf.Tensor: shape={self.shape}, dtype={self._dtype.name}, "
                f"numpy={_numpy_text(self, is_repr=True)}>")

    def __reduce__(self):
        return (_rebuild, (self.numpy(), self._dtype.name))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    # ---- devices ----------------------------------------------------------------------------
    def cpu(self):
        """A copy of this tensor in host memory."""
        if isinstance(self._v, (np.ndarray, np.generic)):
            return self
        return EagerTensor.make(_on_host(self._v), self._dtype, self._op._graph._anon)

    def gpu(self, gpu_index=0):
        """A copy of this tensor on GPU `gpu_index` (cupy); InvalidArgumentError without one."""
        cp = gpu_namespace(gpu_index)
        with cp.cuda.Device(gpu_index):
            v = cp.asarray(self._v)
        return EagerTensor.make(v, self._dtype, self._op._graph._anon)

    def as_cpu_tensor(self):
        return self.cpu()

    def as_gpu_tensor(self, gpu_index=0):
        return self.gpu(gpu_index)


_ANON = [None]  # the eager context's anonymous op, set by context.py when it makes the context


def _rebuild(value, dtype):
    return EagerTensor.make(np.asarray(value), as_dtype(dtype), _ANON[0])


def _numpy_text(t, is_repr=False):
    v = t.numpy()
    if t._dtype.name == "string":
        v = np.asarray(v)
        return repr(v.item()) if v.ndim == 0 else np.array2string(v, separator=", " if is_repr else " ")
    if not isinstance(v, np.ndarray):  # a 0-d value: numpy's short form (3.1, True), as TF
        return str(v)
    return repr(v) if is_repr else np.array_str(v)


class Slot:
    """A variable's storage in eager mode: its value (None until initialized), and the Variable
    object once the variable registered itself (for implicit gradients and savers)."""

    __slots__ = ("value", "name", "variable", "trainable", "__weakref__")

    def __init__(self, name):
        self.value = None
        self.name = name
        self.variable = None
        self.trainable = False


class HandleTensor(EagerTensor):
    """An eager variable's handle: reading it gives the variable's current value."""

    __slots__ = ("_slot",)

    @staticmethod
    def make_handle(slot, dtype, shape, op):
        t = _new(HandleTensor)
        t._op = op
        t._value_index = 0
        t._dtype = dtype
        t._shape = TensorShape(shape)
        t._slot = slot
        t._const_cache = None
        return t

    @property
    def _v(self):
        v = self._slot.value
        if v is None:
            raise FailedPreconditionError(None, None, f"Error while reading resource variable {self._slot.name} "
                                          "from Container: localhost. This could mean that the variable was "
                                          "uninitialized.")
        return v

    @property
    def shape(self):
        return self._shape

    def _const(self):
        return None  # a variable's value may change: never a constant

    @property
    def name(self):
        return self._slot.name + ":0"

    def __str__(self):
        return f"tf.Tensor({_numpy_text(self)}, shape={self.shape}, dtype={self._dtype.name})"


class ReadTensor(EagerTensor):
    """A variable's value as an op read it while a tape was recording (tied to its slot, so a
    gradient with respect to the variable sums over its reads)."""

    __slots__ = ("_slot",)

    @staticmethod
    def make_read(value, dtype, slot, op):
        t = _filled(_new(ReadTensor), value, dtype, op)
        t._slot = slot
        return t


def _filled(t, value, dtype, op):
    """`t` (a bare EagerTensor or subclass) holding `value` of `dtype`, made by `op`."""
    t._op = op
    t._value_index = 0
    t._dtype = dtype
    t._shape = None
    t._v = value
    t._const_cache = None
    return t


def is_eager(x):
    return isinstance(x, EagerTensor)


def check_same_dtype(value, dtype, what):
    if value.dtype != dtype.np_dtype:
        raise InvalidArgumentError(None, None, f"{what}: expected {dtype.name}, got {value.dtype}")
