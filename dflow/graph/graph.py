"""`Graph`: the container of ops, with TF1's name scopes, collections, control-dependency and
device stacks, and the default-graph and default-session stacks."""

from __future__ import annotations

import contextlib
import re
import threading

from ..devices import canonical_device
from ..errors import user_frames
from .dtypes import as_dtype
from .ops import (  # noqa: F401 - the default-session stack lives with Tensor.eval/Operation.run
    Operation,
    Tensor,
    _default_session_stack,
    _DefaultStack,
    _session_for,
    get_default_session,
)
from .registry import get_opdef, is_registered
from .serialize import graph_to_def
from .shape import as_shape

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\\/>-]*$")


class Graph:
    """A dataflow graph (TF1's `tf.Graph`): ops and tensors, built once and run by sessions."""

    def __init__(self):
        self._lock = threading.RLock()
        self._ops = []
        self._ops_by_name = {}
        self._names_in_use = {}
        self._name_stack = ""
        self._control_stack = []  # list of lists of Operations; None entries clear
        self._device_stack = []
        self._collections = {}
        self._finalized = False
        self._gradient_override_stack = [{}]
        self._variable_scope_stack = []  # used by dflow.variable_scope (issue: state)
        self.seed = None
        self._version = 0

    # ---- building ------------------------------------------------------------------------
    def create_op(self, op_type, inputs, attrs=None, name=None, default_name=None):
        """Adds an op of registered type `op_type`; returns the Operation.

        `name` is taken relative to the current name scope and made unique; a name ending in
        "/" (a scope returned by `name_scope`) is used as given, minus the slash.
        """
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        if not is_registered(op_type):
            raise ValueError(f"Op type not registered: {op_type!r}")
        opdef = get_opdef(op_type)
        if any(getattr(t, "_is_eager", False) for t in inputs):
            inputs = [self._capture_eager(t) if getattr(t, "_is_eager", False) else t for t in inputs]
        for t in inputs:
            if not isinstance(t, Tensor):
                raise TypeError(f"Input to op {op_type!r} must be a Tensor, got {type(t).__name__}")
            if t.graph is not self:
                raise ValueError(f"Tensor {t.name!r} must be from the same graph as the op {op_type!r} "
                                 "being created (it belongs to another graph).")
        attrs = dict(attrs or {})
        with self._lock:
            if name and name.endswith("/"):
                op_name = name[:-1]
                if op_name in self._ops_by_name:
                    raise ValueError(f"Duplicate node name in graph: '{op_name}'")
            else:
                if name and not _VALID_OP_NAME.match(name):
                    raise ValueError(f"'{name}' is not a valid node name")
                op_name = self.unique_name(name or default_name or op_type)
            controls = self._current_control_inputs(inputs)
            device = self._current_device()
            op = Operation(self, op_name, op_type, inputs, attrs, controls, device, opdef, len(self._ops))
            op._origin = user_frames()  # for a run-time failure's "Original stack trace"
            try:
                outs = opdef.infer(list(inputs), attrs)
            except (ValueError, TypeError) as e:
                raise _naming_node(e, op_name) from None
            if isinstance(outs, tuple) and len(outs) == 2 and not isinstance(outs[0], tuple):
                outs = [outs]
            op._outputs = tuple(Tensor(op, i, as_dtype(dt), as_shape(sh)) for i, (sh, dt) in enumerate(outs))
            if any(callable(d) for d in self._device_stack):
                op._set_device(self._current_device(op))
            for t in inputs:
                t._consumers.append(op)
            override = self._gradient_override_stack[-1].get(op_type)
            if override is not None:
                op._gradient_override = override
            self._ops.append(op)
            self._ops_by_name[op_name] = op
            self._version += 1
        return op

    def _capture_eager(self, t):
        """An eager tensor (dflow/eager) used by an op of this graph: a constant of its value now
        (a variable's handle: of the variable's value now), made once per tensor. A graph that
        traces a function (`tfe.defun`) overrides this to feed it instead."""
        captures = self.__dict__.setdefault("_eager_captures", {})
        hit = captures.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        import numpy as np

        value = np.array(t.numpy())
        value.setflags(write=False)
        const = self.create_op("Const", [], {"value": value, "dtype": t.dtype}, name="captured").outputs[0]
        captures[id(t)] = (t, const)
        return const

    def unique_name(self, name, mark_as_used=True):
        """`name` under the current name scope, suffixed `_N` if taken (TF1, case-insensitive)."""
        if self._name_stack:
            name = self._name_stack + "/" + name
        name_key = name.lower()
        i = self._names_in_use.get(name_key, 0)
        if mark_as_used:
            self._names_in_use[name_key] = i + 1
        if i > 0:
            base_key = name_key
            while name_key in self._names_in_use:
                name_key = f"{base_key}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[name_key] = 1
            name = f"{name}_{i - 1}"
        return name

    def get_name_scope(self):
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name):
        """Opens a name scope; re-entering a name gives `name_1`; None or "" goes to the root."""
        if name:
            regex = _VALID_SCOPE_NAME if self._name_stack else _VALID_OP_NAME
            if not regex.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
        old = self._name_stack
        if not name:
            new = ""
        elif name[-1] == "/":
            new = name[:-1]
        else:
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield "" if not new else new + "/"
        finally:
            self._name_stack = old

    # ---- control dependencies and devices ------------------------------------------------
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops created inside run after `control_inputs` (ops or tensors); None clears."""
        if control_inputs is None:
            self._control_stack.append(None)
        else:
            ops = []
            for c in control_inputs:
                if isinstance(c, Tensor):
                    c = c.op
                elif hasattr(c, "_as_control_op"):
                    c = c._as_control_op()
                if not isinstance(c, Operation):
                    raise TypeError(f"Control input must be an Operation or Tensor, got {c!r}")
                if c.graph is not self:
                    raise ValueError(f"Control input {c.name!r} is from another graph")
                ops.append(c)
            self._control_stack.append(ops)
        try:
            yield
        finally:
            self._control_stack.pop()

    def _current_control_inputs(self, inputs):
        out = []
        for frame in reversed(self._control_stack):
            if frame is None:
                break
            for op in frame:
                if op not in out:
                    out.append(op)
        if out:
            input_ops = {t.op for t in inputs}
            out = [o for o in out if o not in input_ops]
        return out

    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Ops created inside are placed on this device (a string, DeviceSpec, or function of the
        op); None clears. Strings are put in TF1's canonical form; ValueError if malformed."""
        d = device_name_or_function
        if d is not None and not callable(d):
            d = canonical_device(d)
        self._device_stack.append(d)
        try:
            yield
        finally:
            self._device_stack.pop()

    def _current_device(self, op=None):
        merged = ""
        for d in self._device_stack:
            if d is None:
                merged = ""
            elif callable(d):
                if op is None:
                    continue  # device functions are applied to the op once it exists
                chosen = d(op)
                if chosen:
                    merged = _merge_device(merged, canonical_device(chosen))
            else:
                merged = _merge_device(merged, str(d))
        if merged:
            merged = canonical_device(merged)
        return merged

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        """Ops of these types created inside use the named registered gradients."""
        new = dict(self._gradient_override_stack[-1])
        new.update(op_type_map)
        self._gradient_override_stack.append(new)
        try:
            yield
        finally:
            self._gradient_override_stack.pop()

    # ---- lookup --------------------------------------------------------------------------
    def get_operations(self):
        return list(self._ops)

    def get_operation_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings, got {type(name).__name__}")
        if ":" in name:
            raise ValueError(f"Name {name!r} appears to refer to a Tensor, not an Operation.")
        try:
            return self._ops_by_name[name]
        except KeyError:
            raise KeyError(f"The name {name!r} refers to an Operation not in the graph.") from None

    def get_tensor_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings, got {type(name).__name__}")
        if ":" not in name:
            raise ValueError(f"The name {name!r} looks like an (invalid) Operation name, not a Tensor. "
                             "Tensor names must be of the form \"<op_name>:<output_index>\".")
        op_name, _, idx = name.rpartition(":")
        try:
            op = self._ops_by_name[op_name]
        except KeyError:
            raise KeyError(f"The name {name!r} refers to a Tensor which does not exist. The operation, "
                           f"{op_name!r}, does not exist in the graph.") from None
        try:
            return op.outputs[int(idx)]
        except (ValueError, IndexError):
            raise KeyError(f"The name {name!r} refers to a Tensor which does not exist. The operation, "
                           f"{op_name!r}, exists but only has {len(op.outputs)} outputs.") from None

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        """Resolves a Tensor, Operation or name to an element of this graph (TypeError/ValueError)."""
        if hasattr(obj, "_as_graph_element"):
            obj = obj._as_graph_element()
        if isinstance(obj, str):
            if ":" in obj:
                if not allow_tensor:
                    raise ValueError(f"Name {obj!r} appears to refer to a Tensor, not an Operation.")
                return self.get_tensor_by_name(obj)
            if not allow_operation:
                raise ValueError(f"Name {obj!r} appears to refer to an Operation, not a Tensor.")
            return self.get_operation_by_name(obj)
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj.name!r} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj.name!r} is not an element of this graph.")
            return obj
        raise TypeError(f"Can not convert a {type(obj).__name__} into a "
                        f"{'Tensor or Operation' if allow_tensor and allow_operation else 'graph element'}.")

    # ---- collections ---------------------------------------------------------------------
    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        names = (names,) if isinstance(names, str) else set(names)
        for n in names:
            self.add_to_collection(n, value)

    def get_collection_ref(self, name):
        return self._collections.setdefault(name, [])

    def get_collection(self, name, scope=None):
        items = self._collections.get(name, [])
        if scope is None:
            return list(items)
        pattern = re.compile(scope)
        return [i for i in items if hasattr(i, "name") and pattern.match(i.name)]

    def get_all_collection_keys(self):
        return [k for k in self._collections if isinstance(k, str)]

    def clear_collection(self, name):
        self._collections.pop(name, None)

    # ---- lifecycle -----------------------------------------------------------------------
    def finalize(self):
        """Makes this graph read-only: adding an op afterwards raises RuntimeError."""
        self._finalized = True

    @property
    def finalized(self):
        return self._finalized

    def _unsafe_unfinalize(self):
        """Makes a finalized graph writable again (a MonitoredSession that finalized it, on close)."""
        self._finalized = False

    @property
    def version(self):
        return self._version

    @property
    def building_function(self):
        return False

    def as_default(self):
        return _default_graph_stack.get_controller(self)

    def as_graph_def(self, from_version=None, add_shapes=False):
        return graph_to_def(self)

    def _last_id(self):
        return len(self._ops)

    def __repr__(self):
        return f"<dflow.Graph with {len(self._ops)} ops>"


def _merge_device(outer, inner):
    """Merges device strings field by field, inner fields winning (TF1 nesting)."""
    if not outer:
        return inner
    if not inner:
        return outer
    fields = {}
    for spec in (outer, inner):
        for part in spec.strip("/").split("/"):
            if not part:
                continue
            k, _, v = part.partition(":")
            if k.lower() in ("cpu", "gpu", "device"):
                fields.pop("cpu", None)
                fields.pop("gpu", None)
                fields.pop("device", None)
            fields[k.lower()] = part
    return "/" + "/".join(fields.values())


# ---- default graph and default session stacks ------------------------------------------------
class _DefaultGraphStack(_DefaultStack):
    _global = None
    _lock = threading.Lock()

    def get_default(self):
        if self.stack:
            return self.stack[-1]
        executor = _installed()
        if executor is not None:
            return executor
        with _DefaultGraphStack._lock:
            if _DefaultGraphStack._global is None:
                _DefaultGraphStack._global = Graph()
            return _DefaultGraphStack._global

    def reset(self):
        if self.stack:
            raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. If you "
                                 "need a cleared graph, exit the nesting and create a new graph.")
        _DefaultGraphStack._global = Graph()


_default_graph_stack = _DefaultGraphStack()

# ---- the eager executor hook ------------------------------------------------------------------
# A package above (dflow/eager) installs an executor: a Graph subclass whose `create_op` runs the
# op's kernel at once. While one is installed and no graph is entered with `as_default()`, it is
# the default graph, so every op function (and every gradient rule) runs eagerly through the same
# registry. `None` on a stack is graph mode (`graph_mode()` inside eager code). An installation is
# for the calling thread (`eager_mode()`, as TF's context) or, with `process_wide=True`, for every
# thread (TF1's `enable_eager_execution`); a thread's own installations win.
_executors = []  # process-wide installations, innermost last
_thread_executors = threading.local()


def _thread_stack():
    stack = getattr(_thread_executors, "stack", None)
    if stack is None:
        stack = _thread_executors.stack = []
    return stack


def _installed():
    stack = getattr(_thread_executors, "stack", None)
    if stack:
        return stack[-1]
    return _executors[-1] if _executors else None


def push_executor(executor, process_wide=False):
    """Installs `executor` (a Graph whose create_op runs ops at once, or None for graph mode) for
    this thread, or for every thread."""
    (_executors if process_wide else _thread_stack()).append(executor)


def pop_executor(executor, process_wide=False):
    """Removes the innermost installation of `executor`."""
    stack = _executors if process_wide else _thread_stack()
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] is executor:
            del stack[i]
            return
    raise ValueError("pop_executor: this executor is not installed")


def installed_executors():
    """(process-wide installations, this thread's installations), for checks in tests."""
    return list(_executors), list(_thread_stack())


def current_executor():
    """The eager executor ops run on now, or None in graph mode (a graph entered with
    `as_default()`, `graph_mode()`, or no executor installed)."""
    if _default_graph_stack.stack:
        return None
    return _installed()


@contextlib.contextmanager
def outside_entered_graphs():
    """Leaves this thread's graphs entered with `as_default()` for the block and enters them again
    after: what `eager_mode()` needs to run ops at once inside a graph program (the body of a
    `tfe.py_func`, called while a Session runs its graph)."""
    saved = list(_default_graph_stack.stack)
    _default_graph_stack.stack[:] = []
    try:
        yield
    finally:
        _default_graph_stack.stack[:] = saved


def executing_eagerly():
    """True when ops run at once (an eager executor is installed and no graph is entered)."""
    return current_executor() is not None


def global_graph_has_ops():
    """Whether the global default graph (not an entered one) has ops: TF1 then refuses
    `enable_eager_execution`."""
    g = _DefaultGraphStack._global
    return g is not None and bool(g._ops)


def get_default_graph():
    """The graph new ops go into: the innermost `as_default()` graph, else the global one."""
    return _default_graph_stack.get_default()


def reset_default_graph():
    """Replaces the global default graph with a new empty one (AssertionError inside as_default)."""
    _default_graph_stack.reset()


def name_scope(name, default_name=None, values=None):
    """Opens a name scope in the graph of `values` (or the default graph), as TF1's `tf.name_scope`."""
    g = None
    for v in values or ():
        if isinstance(v, (Tensor, Operation)):
            g = v.graph
            break
    g = g or get_default_graph()
    n = name if name is not None else default_name
    if name is None and default_name is not None:
        return g.name_scope(default_name)
    return g.name_scope(n)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function):
    return get_default_graph().device(device_name_or_function)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)


def set_random_seed(seed):
    """Sets the graph-level random seed of the default graph (TF1's `tf.set_random_seed`)."""
    get_default_graph().seed = seed


_DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1


def get_seed(op_seed):
    """The (graph seed, op seed) pair of a new random op, as TF1's `random_seed.get_seed`."""
    g = get_default_graph()
    global_seed = g.seed
    if global_seed is not None:
        if op_seed is None:
            op_seed = g._last_id()
        seeds = (global_seed, op_seed)
    elif op_seed is not None:
        seeds = (_DEFAULT_GRAPH_SEED, op_seed)
    else:
        seeds = (None, None)
    if seeds == (0, 0):
        seeds = (0, _MAXINT32)
    return seeds


def _naming_node(exc, op_name):
    """A shape or dtype error of an op being created, naming the node as TF1 does ("... for node
    'project'"), in the same class (a subclass with its own signature passes as it is)."""
    msg = str(exc)
    if type(exc) not in (ValueError, TypeError) or f"'{op_name}'" in msg:
        return exc
    return type(exc)(f"{msg.rstrip('.')} for node {op_name!r}.")
