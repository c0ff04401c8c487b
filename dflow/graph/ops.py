"""`Operation` and `Tensor`: the nodes and edges of a graph, and build-time constant values."""

from __future__ import annotations

import contextlib
import threading

import numpy as np

from .dtypes import DType, as_dtype
from .evaluate import fold, foldable, known_inputs
from .shape import TensorShape, as_shape


class Operation:
    """A node of a graph: an op type applied to input tensors, producing output tensors."""

    __slots__ = ("_graph", "_name", "_type", "_inputs", "_outputs", "_control_inputs", "_attrs",
                 "_device", "_id", "_opdef", "_gradient_override", "_origin", "__weakref__")

    def __init__(self, graph, name, op_type, inputs, attrs, control_inputs, device, opdef, op_id):
        self._graph = graph
        self._name = name
        self._type = op_type
        self._inputs = tuple(inputs)
        self._attrs = dict(attrs)
        self._control_inputs = list(control_inputs)
        self._device = device or ""
        self._opdef = opdef
        self._id = op_id
        self._outputs = ()
        self._gradient_override = None
        self._origin = None  # where the user's code made it (errors.user_frames), graph ops only

    @property
    def graph(self):
        return self._graph

    @property
    def name(self):
        return self._name

    @property
    def type(self):
        return self._type

    @property
    def inputs(self):
        return self._inputs

    @property
    def outputs(self):
        return list(self._outputs)

    @property
    def control_inputs(self):
        return list(self._control_inputs)

    @property
    def device(self):
        return self._device

    def _update_input(self, index, tensor):
        """Makes input `index` read `tensor` (TF1's private `Operation._update_input`, which
        tf.contrib.graph_editor rewires graphs with): consumers are updated and the graph's version
        bumped, so plans built before are not reused."""
        if tensor.graph is not self._graph:
            raise ValueError(f"Tensor {tensor.name!r} is not in the graph of op {self._name!r}")
        old = self._inputs[index]
        if old.dtype.base_dtype != tensor.dtype.base_dtype:
            raise TypeError(f"Input {index} of op {self._name!r} is {old.dtype.name}; cannot read {tensor.name!r} of "
                            f"type {tensor.dtype.name}")
        inputs = list(self._inputs)
        inputs[index] = tensor
        self._inputs = tuple(inputs)
        if self in old._consumers:
            old._consumers.remove(self)  # one entry per input that reads it
        tensor._consumers.append(self)
        self._graph._version += 1
        self._graph._rewrites = getattr(self._graph, "_rewrites", 0) + 1  # Sessions' cached plans are stale

    @property
    def node_def(self):
        """A plain-dict description of this node (name, op, inputs, attrs, device)."""
        inputs = [t.name for t in self._inputs] + ["^" + c.name for c in self._control_inputs]
        return {"name": self._name, "op": self._type, "input": inputs, "device": self._device,
                "attr": dict(self._attrs)}

    @property
    def op_def(self):
        return self._opdef

    @property
    def attrs(self):
        return dict(self._attrs)

    def get_attr(self, name):
        try:
            return self._attrs[name]
        except KeyError:
            raise ValueError(f"Operation {self._name!r} has no attr named {name!r}.") from None

    def _set_device(self, device):
        self._device = device or ""

    def _add_control_input(self, op):
        if op not in self._control_inputs:
            self._control_inputs.append(op)

    def run(self, feed_dict=None, session=None):
        """Runs this op in `session` (default: the default session); returns None."""
        _session_for(self._graph, session, what=f"operation {self._name!r}").run(self, feed_dict)

    def __repr__(self):
        return f"<tf.Operation '{self._name}' type={self._type}>"

    def __str__(self):
        """The node as TF1 prints it: its NodeDef in protobuf text format (name, op, inputs, device,
        attrs sorted by key)."""
        return node_def_text(self)


class Tensor:
    """A symbolic value: output `value_index` of an `Operation`, with a static shape and dtype.

    `==` and `!=` compare identity (as TF1); use `dflow.equal` for elementwise comparison.
    `bool(tensor)` raises TypeError: a graph value has no truth value when the graph is built.
    """

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_consumers", "_const_cache", "__weakref__")

    __array_priority__ = 100
    __array_ufunc__ = None  # numpy defers to our reflected operators
    _is_eager = False  # an eager tensor (dflow/eager) holds its value: True there

    # Filled by dflow.kernels (TF1's Tensor._override_operator): "__add__" -> function.
    _OVERLOADS = ()

    def __init__(self, op, value_index, dtype, shape):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = as_shape(shape)
        self._consumers = []

    @property
    def op(self):
        return self._op

    @property
    def graph(self):
        return self._op._graph

    @property
    def name(self):
        return f"{self._op._name}:{self._value_index}"

    @property
    def value_index(self):
        return self._value_index

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._op._device

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        """Merges `shape` into this tensor's static shape; ValueError if they conflict."""
        try:
            self._shape = self._shape.merge_with(as_shape(shape))
        except ValueError:
            raise ValueError(
                f"Tensor {self.name!r}: shape {as_shape(shape)} is incompatible with its static shape "
                f"{self._shape}") from None

    def consumers(self):
        return list(self._consumers)

    def eval(self, feed_dict=None, session=None):
        """The value of this tensor in `session` (default: the default session)."""
        return _session_for(self.graph, session, what=f"tensor {self.name!r}").run(self, feed_dict)

    @classmethod
    def _override_operator(cls, operator, func):
        setattr(cls, operator, func)

    def __bool__(self):
        raise TypeError(
            "Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` "
            "instead of `if t:` to test if a tensor is defined, and use ops such as tf.cond to execute "
            "subgraphs conditioned on the value of a tensor.")

    __nonzero__ = __bool__

    def __iter__(self):
        raise TypeError(f"Tensor {self.name!r} is not iterable when the graph is built; "
                        "use dflow.unstack to split it along a dim.")

    def __len__(self):
        raise TypeError(f"len is not well defined for symbolic Tensors ({self.name!r}); "
                        "use dflow.shape or tensor.shape")

    # `==`, `!=` and hash are object identity (the defaults): TF1 semantics, and C-speed hashing
    # for the compiler's dicts.

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    def __str__(self):
        shape = "" if self._shape.ndims is None else f", shape={self._shape}"
        return f'Tensor("{self.name}"{shape}, dtype={self._dtype.name})'

    def __reduce__(self):
        raise TypeError(f"Tensor {self.name!r} cannot be pickled; fetch its value with Session.run")


# ---- TF1's text form of a node (str(op)) -------------------------------------------------------

_DT_NAMES = {"float16": "DT_HALF", "float32": "DT_FLOAT", "float64": "DT_DOUBLE", "string": "DT_STRING"}


def _dt(dtype):
    return _DT_NAMES.get(dtype.base_dtype.name, "DT_" + dtype.base_dtype.name.upper())


def _quoted(text):
    if isinstance(text, bytes):
        text = text.decode("utf-8", "backslashreplace")
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _shape_lines(shape, key, pad):
    if shape.ndims is None:
        return [f"{pad}{key} {{", f"{pad}  unknown_rank: true", f"{pad}}}"]
    lines = [f"{pad}{key} {{"]
    for d in shape.as_list():
        lines += [f"{pad}  dim {{", f"{pad}    size: {-1 if d is None else d}", f"{pad}  }}"]
    return lines + [f"{pad}}}"]


def _tensor_lines(arr, dtype, pad):
    lines = [f"{pad}tensor {{", f"{pad}  dtype: {_dt(dtype)}"] + _shape_lines(TensorShape(arr.shape), "tensor_shape",
                                                                               pad + "  ")
    field = {"f": "float_val" if arr.dtype.itemsize <= 4 else "double_val", "b": "bool_val", "c": "scomplex_val",
             "i": "int64_val" if arr.dtype.itemsize == 8 else "int_val", "u": "int_val"}.get(arr.dtype.kind, "string_val")
    flat = arr.reshape(-1)
    shown = flat[:16]
    for v in shown:
        if field == "string_val":
            lines.append(f"{pad}  {field}: {_quoted(v)}")
        elif field == "bool_val":
            lines.append(f"{pad}  {field}: {'true' if v else 'false'}")
        elif field == "scomplex_val":
            lines += [f"{pad}  {field}: {v.real!r}", f"{pad}  {field}: {v.imag!r}"]
        else:
            lines.append(f"{pad}  {field}: {v.item()!r}")
    if flat.size > len(shown):
        lines.append(f"{pad}  # ... {flat.size - len(shown)} more values")
    return lines + [f"{pad}}}"]


def _attr_value_lines(value, pad):
    """The body of one attr's `value { ... }`, in AttrValue's text form."""
    if isinstance(value, DType):
        return [f"{pad}type: {_dt(value)}"]
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return [f"{pad}b: {'true' if value else 'false'}"]
    if isinstance(value, (int, np.integer)):
        return [f"{pad}i: {int(value)}"]
    if isinstance(value, (float, np.floating)):
        return [f"{pad}f: {float(value)!r}"]
    if isinstance(value, (str, bytes)):
        return [f"{pad}s: {_quoted(value)}"]
    if isinstance(value, TensorShape):
        return _shape_lines(value, "shape", pad)
    if isinstance(value, np.ndarray):
        try:
            dtype = as_dtype(value.dtype)
        except TypeError:
            return [f"{pad}s: {_quoted(repr(value))}"]
        return _tensor_lines(value, dtype, pad)
    if isinstance(value, (list, tuple)) and all(
            isinstance(v, (bool, int, float, str, bytes, np.generic, DType, TensorShape)) for v in value):
        lines = [f"{pad}list {{"]
        for v in value:
            lines += [ln.replace(pad, pad + "  ", 1) for ln in _attr_value_lines(v, pad)]
        return lines + [f"{pad}}}"]
    # dflow-specific attrs (a py_func's function, a branch's ops): named by their Python repr
    return [f"{pad}s: {_quoted(repr(value) if not callable(value) else getattr(value, '__qualname__', repr(value)))}"]


def node_def_text(op):
    """`op`'s NodeDef in protobuf text format, as TF1's `str(op)` prints it."""
    lines = [f"name: {_quoted(op.name)}", f"op: {_quoted(op.type)}"]
    lines += [f"input: {_quoted(t.name[:-2] if t.name.endswith(':0') else t.name)}" for t in op.inputs]
    lines += [f"input: {_quoted('^' + c.name)}" for c in op.control_inputs]
    if op.device:
        lines.append(f"device: {_quoted(op.device)}")
    for key in sorted(k for k, v in op._attrs.items() if v is not None):  # None: a dflow option left unset
        lines += ["attr {", f"  key: {_quoted(key)}", "  value {"]
        lines += _attr_value_lines(op._attrs[key], "    ")
        lines += ["  }", "}"]
    return "\n".join(lines)


def constant_value(tensor):
    """The value of `tensor` if it is known when the graph is built (a numpy array), else None.

    Known: Const outputs, ops with an OpDef `fold` rule (shape/size/rank of static shapes), and
    what the evaluator folds (`evaluate.fold`) from known inputs.
    """
    if not isinstance(tensor, Tensor):
        return None
    if getattr(tensor, "_is_eager", False):  # an eager tensor (dflow/eager) knows its value
        return tensor._const()
    cache = getattr(tensor, "_const_cache", None)
    if cache is not None:
        return cache[0]
    value = _constant_value(tensor)
    tensor._const_cache = (value,)
    return value


def _constant_value(tensor):
    op = tensor.op
    if op.type == "Const":
        return op.get_attr("value")
    opdef = op.op_def
    if opdef.fold is not None:
        v = opdef.fold(op)
        if v is not None:
            return v[tensor.value_index] if isinstance(v, (list, tuple)) else v
    if not foldable(op):  # (before its inputs are looked up)
        return None
    values = known_inputs(op, op._inputs, constant_value)
    out = fold(op, values) if values is not None else None
    if out is None:
        return None
    for t, v in zip(op._outputs, out):  # every output's value, from one run of the kernel
        t._const_cache = (v,)
    return out[tensor.value_index]


__all__ = ["Operation", "Tensor", "constant_value", "TensorShape"]


# ---- the default session (`with sess:`), which Tensor.eval and Operation.run use ----------------
class _DefaultStack(threading.local):
    def __init__(self):
        self.stack = []

    def get_default(self):
        return self.stack[-1] if self.stack else None

    @contextlib.contextmanager
    def get_controller(self, obj):
        self.stack.append(obj)
        try:
            yield obj
        finally:
            if self.stack and self.stack[-1] is obj:
                self.stack.pop()
            elif obj in self.stack:
                self.stack.remove(obj)


_default_session_stack = _DefaultStack()


def get_default_session():
    """The innermost session entered with `with sess:` or `sess.as_default()`, else None."""
    return _default_session_stack.get_default()


def _session_for(graph, session, what):
    if session is None:
        session = get_default_session()
        if session is None:
            raise ValueError(f"Cannot evaluate {what} using `eval()` or `run()`: No default session is "
                             "registered. Use `with sess.as_default()` or pass an explicit session.")
    if session.graph is not graph:
        raise ValueError(f"Cannot use the given session to evaluate {what}: its graph is different "
                         "from the session's graph.")
    return session
