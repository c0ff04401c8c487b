"""Reverse-mode autodiff over the graph (graph -> graph), as TF1's `tf.gradients`.

The engine is small (autograd's `backward_pass`): find the ops between `xs` and `ys`, walk them in
reverse topological order, sum the gradients arriving at each output, call the op's rule and add
the results into its inputs. Rules are data in the registry (`OpDef.grad`, set with `def_grad`);
`gradient_override_map` and `RegisterGradient` names take precedence. The engine builds gradient
sums, seeds and zeros through the registered op types `AddN`, `OnesLike` and `ZerosLike`.
"""

from __future__ import annotations

import threading

from . import dtypes
from .dtypes import variant
from .graph import executing_eagerly
from .indexed_slices import IndexedSlices, densify
from .ops import Operation, Tensor
from .registry import get_opdef, get_registered_gradient

_skip = threading.local()  # (op, input indices) whose gradients the running backward pass does not need


def needs_gradient(op, index):
    """False when the backward pass now running `op`'s rule needs no gradient for input `index` (an
    eager tape knows which inputs lead to its sources): a rule may then skip building it, as TF's
    `skip_input_indices`. True otherwise (graph mode prunes unneeded gradient ops when it runs)."""
    s = getattr(_skip, "value", None)
    return s is None or s[0] is not op or index not in s[1]


def set_skipped(op, indices):
    """Tells rules which inputs of `op` need no gradient (None: every input may)."""
    _skip.value = None if op is None else (op, indices)


def _as_tensor(x, what):
    if hasattr(x, "_as_graph_element") and not isinstance(x, Tensor):
        x = x._as_graph_element()
    if not isinstance(x, Tensor):
        raise TypeError(f"gradients: {what} must be Tensors or Variables, got {x!r}")
    return x


def _as_list(x):
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def differentiable(dtype):
    """Whether gradients flow through tensors of `dtype`: floats, complex numbers, and variants (a
    TensorArray's flow, whose gradient is the gradient TensorArray's flow, as TF's backprop)."""
    return dtype.is_floating or dtype.is_complex or dtype == variant


def _grad_fn(op):
    if op._gradient_override is not None:
        fn = get_registered_gradient(op._gradient_override)
        if fn is None:
            raise LookupError(f"gradient_override_map names {op._gradient_override!r} for op {op.name!r}, but no "
                              "gradient is registered under that name")
        return fn
    fn = get_opdef(op.type).grad
    return fn if fn is not None else get_registered_gradient(op.type)


def _ops_between(ys, xs, stop):
    """Ops on a path from some x to some y (through data edges, not crossing `stop` tensors)."""
    back = set()
    stack = [y.op for y in ys if y not in stop]
    while stack:
        op = stack.pop()
        if op in back:
            continue
        back.add(op)
        for t in op.inputs:
            if t not in stop and t.op not in back:
                stack.append(t.op)
    fwd = set()
    stack = [c for x in xs for c in x.consumers()]
    while stack:
        op = stack.pop()
        if op in fwd or op not in back:
            continue
        fwd.add(op)
        for t in op.outputs:
            if t not in stop:
                stack.extend(c for c in t.consumers() if c not in fwd)
    return sorted(fwd, key=lambda o: o._id, reverse=True)


def _create(graph, op_type, inputs, name):
    attrs = {"dtype": inputs[0].dtype} if op_type in ("OnesLike", "ZerosLike") else {}
    return graph.create_op(op_type, inputs, attrs, name=name).outputs[0]


def _as_grad_y(graph, gy, y, i):
    """A grad_ys entry as a tensor of y's dtype: a tensor is checked, a value becomes a Const op
    (made through the registry: the graph layer does not import the kernels)."""
    if isinstance(gy, Tensor):
        if gy.dtype != y.dtype:
            raise TypeError(f"gradients: grad_ys[{i}] has dtype {gy.dtype.name}, but y {y.name!r} has "
                            f"dtype {y.dtype.name}")
        return gy
    import numpy as np

    try:
        value = np.array(gy, dtype=y.dtype.np_dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"gradients: cannot convert grad_ys[{i}] {gy!r} to {y.dtype.name}: {e}") from None
    value.setflags(write=False)
    return graph.create_op("Const", [], {"value": value, "dtype": y.dtype}, name=f"grad_ys_{i}").outputs[0]


def _aggregate(graph, grads):
    """The sum of the gradients arriving at one tensor: AddN, or, when all are IndexedSlices, their
    rows concatenated (TF1's aggregation, which keeps a sum of sparse gradients sparse)."""
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    sparse = [g for g in grads if isinstance(g, IndexedSlices)]
    if not sparse:
        return _create(graph, "AddN", grads, "AddN")
    if len(sparse) < len(grads):
        return _create(graph, "AddN", [densify(g, warn=False) if isinstance(g, IndexedSlices) else g
                                       for g in grads], "AddN")
    import numpy as np

    axis = np.array(0, np.int32)
    axis.setflags(write=False)
    zero = graph.create_op("Const", [], {"value": axis, "dtype": _int32()}, name="axis").outputs[0]
    idx = [g.indices for g in sparse]
    if len({i.dtype for i in idx}) > 1:
        idx = [i if i.dtype.name == "int64" else graph.create_op("Cast", [i], {"DstT": _int64()}, name="Cast").outputs[0]
               for i in idx]
    values = graph.create_op("ConcatV2", [g.values for g in sparse] + [zero], {}, name="concat").outputs[0]
    indices = graph.create_op("ConcatV2", idx + [zero], {}, name="concat_indices").outputs[0]
    return IndexedSlices(values, indices, sparse[0].dense_shape)


def _int32():
    return dtypes.int32


def _int64():
    return dtypes.int64


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False, gate_gradients=False,
              aggregation_method=None, stop_gradients=None, unconnected_gradients="none"):
    """Symbolic derivatives of sum(ys) with respect to each x in xs (TF1's `tf.gradients`).

    Returns a list with one tensor per x, None where ys do not depend on x (zeros with
    `unconnected_gradients="zero"`). `grad_ys` weights each y
    (default ones); nothing flows back through `stop_gradients` (each is held constant, and one
    among `xs` gets its partial derivative: TF1's `gradients(a + b, [a, b], stop_gradients=[a, b])`
    is [1, 1] for b = 2a). Integer and bool tensors get no
    gradient. LookupError if a differentiable op on the path has no gradient rule.
    """
    if executing_eagerly():
        raise RuntimeError("tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape "
                           "instead.")
    ys = [_as_tensor(y, "ys") for y in _as_list(ys)]
    xs = [_as_tensor(x, "xs") for x in _as_list(xs)]
    if not ys:
        raise ValueError("gradients: ys must not be empty")
    graph = ys[0].graph
    grad_ys = _as_list(grad_ys) or [None] * len(ys)
    if len(grad_ys) != len(ys):
        raise ValueError(f"gradients: {len(grad_ys)} grad_ys for {len(ys)} ys")
    stop = {_as_tensor(t, "stop_gradients") for t in _as_list(stop_gradients)}
    with graph.as_default(), graph.name_scope(name):
        grads = {}
        for i, (y, gy) in enumerate(zip(ys, grad_ys)):
            if gy is None:
                if not (y.dtype.is_floating or y.dtype.is_complex):
                    raise TypeError(f"gradients: y {y.name!r} has dtype {y.dtype.name}, which is not differentiable")
                gy = _create(graph, "OnesLike", [y], f"grad_ys_{i}")
            else:
                gy = _as_grad_y(graph, gy, y, i)
            grads.setdefault(y, []).append(gy)
        for op in _ops_between(ys, xs, stop):
            # nothing flows back through a stop tensor (its gradient is still summed: a stop tensor
            # among xs gets its partial derivative, as TF1's stop_gradients)
            out_grads = [_aggregate(graph, grads.get(t)) if grads.get(t) and t not in stop else None
                         for t in op.outputs]
            for t, g in zip(op.outputs, out_grads):
                if g is not None and len(grads[t]) > 1:
                    grads[t] = [g]
            if all(g is None for g in out_grads):
                continue
            if not any(differentiable(t.dtype) for t in op.inputs):
                continue
            fn = _grad_fn(op)
            if fn is None:
                raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type})")
            out_grads = [g if g is not None or not differentiable(t.dtype)
                         else _create(graph, "ZerosLike", [t], "zeros_like")
                         for t, g in zip(op.outputs, out_grads)]
            with graph.name_scope(op.name + "_grad"):
                if not op._opdef.traits.sparse_grad:  # a rule that needs dense gradients gets them densified
                    out_grads = [densify(g, warn=False) if isinstance(g, IndexedSlices) else g for g in out_grads]
                in_grads = fn(op, *out_grads)
            in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
            if len(in_grads) != len(op.inputs):
                raise ValueError(f"Gradient rule of {op.type} returned {len(in_grads)} gradients for "
                                 f"{len(op.inputs)} inputs (op {op.name!r})")
            for t, g in zip(op.inputs, in_grads):
                if g is None or not differentiable(t.dtype):
                    continue
                if isinstance(g, Operation):
                    raise TypeError(f"Gradient rule of {op.type} returned an Operation for input {t.name!r}")
                grads.setdefault(t, []).append(g)
        out = [_aggregate(graph, grads.get(x)) for x in xs]
        unconnected_gradients = getattr(unconnected_gradients, "value", unconnected_gradients)  # the enum's
        if unconnected_gradients == "zero":
            out = [g if g is not None else _create(graph, "ZerosLike", [x], "zeros_like") for g, x in zip(out, xs)]
        elif unconnected_gradients != "none":
            raise ValueError(f"Unknown value for unconnected_gradients: {unconnected_gradients!r}")
        return out
