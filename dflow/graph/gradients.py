"""Reverse-mode autodiff: the one walk (`backward`) of TF1's `tf.gradients` and of eager tapes.

The engine is small (autograd's `backward_pass`): take the ops between `xs` and `ys` (a graph's, or
those a `GradientTape` recorded), walk them in reverse topological order, sum the gradients
arriving at each output, call the op's rule and add the results into its inputs. The rules build
ops in the graph given (an eager context runs them at once). Rules are data in the registry (`OpDef.grad`, set with `def_grad`);
`gradient_override_map` and `RegisterGradient` names take precedence. The engine builds gradient
sums, seeds and zeros through the registered op types `AddN`, `OnesLike` and `ZerosLike`.
"""

from __future__ import annotations

import threading

import numpy as np

from .dtypes import int32, int64, variant
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
    """Ops on a path from some x to some y (through data edges, not crossing the tensors whose ids
    are in `stop`), in reverse topological order."""
    back = set()
    stack = [y.op for y in ys if id(y) not in stop]
    while stack:
        op = stack.pop()
        if op in back:
            continue
        back.add(op)
        for t in op.inputs:
            if id(t) not in stop and t.op not in back:
                stack.append(t.op)
    fwd = set()
    stack = [c for x in xs for c in x.consumers()]
    while stack:
        op = stack.pop()
        if op in fwd or op not in back:
            continue
        fwd.add(op)
        for t in op.outputs:
            if id(t) not in stop:
                stack.extend(c for c in t.consumers() if c not in fwd)
    return sorted(fwd, key=lambda o: o._id, reverse=True)


def _create(graph, op_type, inputs, name):
    attrs = {"dtype": inputs[0].dtype} if op_type in ("OnesLike", "ZerosLike") else {}
    return graph.create_op(op_type, inputs, attrs, name=name).outputs[0]


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
    axis = np.array(0, np.int32)
    axis.setflags(write=False)
    zero = graph.create_op("Const", [], {"value": axis, "dtype": int32}, name="axis").outputs[0]
    idx = [g.indices for g in sparse]
    if len({i.dtype for i in idx}) > 1:
        idx = [i if i.dtype.name == "int64" else graph.create_op("Cast", [i], {"DstT": int64}, name="Cast").outputs[0]
               for i in idx]
    values = graph.create_op("ConcatV2", [g.values for g in sparse] + [zero], {}, name="concat").outputs[0]
    indices = graph.create_op("ConcatV2", idx + [zero], {}, name="concat_indices").outputs[0]
    return IndexedSlices(values, indices, sparse[0].dense_shape)


def _seed(graph, y, gy, i, caller):
    """The gradient flowing into target `y`: ones of its dtype, or a grad_ys entry (a tensor is
    checked, a value becomes a Const op, made through the registry: the graph layer does not
    import the kernels)."""
    if gy is None:
        if not (y.dtype.is_floating or y.dtype.is_complex):
            raise TypeError(f"{caller}: target {y.name!r} has dtype {y.dtype.name}, which is not differentiable")
        return _create(graph, "OnesLike", [y], f"grad_ys_{i}")
    if isinstance(gy, Tensor):
        if gy.dtype != y.dtype:
            raise TypeError(f"{caller}: grad_ys[{i}] has dtype {gy.dtype.name}, but target {y.name!r} has "
                            f"dtype {y.dtype.name}")
        return gy
    try:
        value = np.array(gy, dtype=y.dtype.np_dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{caller}: cannot convert grad_ys[{i}] {gy!r} to {y.dtype.name}: {e}") from None
    value.setflags(write=False)
    return graph.create_op("Const", [], {"value": value, "dtype": y.dtype}, name=f"grad_ys_{i}").outputs[0]


def backward(graph, ys, grad_ys, sources, ops=None, needed=None, stop_gradients=(), aggregation_method=None,
             unconnected_gradients="none", caller="tf.gradients"):
    """The one reverse-mode walk, of `tf.gradients` and of `GradientTape.gradient`: one gradient
    per source, None where `ys` do not depend on it (zeros with `unconnected_gradients="zero"`).

    `grad_ys`: one seed per y or None (ones). `sources`: (tensor, keys) pairs; a source's gradient
    is the sum of those arriving at its keys (the tensor itself, or a tape's reads of a variable),
    and `tensor` gives the zeros of an unconnected one. `ops`: the ops a tape recorded, in the
    order they ran; None walks the graph's ops between `ys` and the keys. `needed`: ids of the
    tensors that lead to a source (a tape's): a rule may skip the others (`needs_gradient`). Nothing
    flows back through `stop_gradients`. Each `aggregation_method` sums with AddN, or keeps a sum
    of IndexedSlices sparse. Ops are built in `graph` (an eager context runs them at once).
    """
    if aggregation_method not in (None, 0, 1, 2):  # TF1's AggregationMethod values
        raise ValueError(f"Invalid aggregation_method specified {aggregation_method!r}.")
    unconnected_gradients = getattr(unconnected_gradients, "value", unconnected_gradients)  # the enum's string
    if unconnected_gradients not in ("none", "zero"):
        raise ValueError(f"Unknown value for unconnected_gradients: {unconnected_gradients!r}")
    stop = {id(t) for t in stop_gradients}
    grads = {}  # id(tensor) -> the gradients arriving at it
    for i, (y, gy) in enumerate(zip(ys, grad_ys or [None] * len(ys))):
        grads.setdefault(id(y), []).append(_seed(graph, y, gy, i, caller))
    if ops is None:
        ops = _ops_between(ys, [k for _, keys in sources for k in keys], stop)
    else:
        ops = reversed(ops)
    for op in ops:
        outs = op._outputs
        out_grads = []
        for t in outs:
            gs = grads.get(id(t))
            if gs and len(gs) > 1:
                gs[:] = [_aggregate(graph, gs)]
            # nothing flows back through a stop tensor (its gradient is still summed: a stop tensor
            # among the sources gets its partial derivative, as TF1's stop_gradients)
            out_grads.append(gs[0] if gs and id(t) not in stop else None)
        inputs = op._inputs
        if all(g is None for g in out_grads) or not any(differentiable(t._dtype) for t in inputs):
            continue
        fn = _grad_fn(op)
        if fn is None:
            raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type})")
        out_grads = [g if g is not None or not differentiable(t._dtype) else _create(graph, "ZerosLike", [t], "zeros_like")
                     for t, g in zip(outs, out_grads)]
        if not op._opdef.traits.sparse_grad:  # a rule that needs dense gradients gets them densified
            out_grads = [densify(g, warn=False) if isinstance(g, IndexedSlices) else g for g in out_grads]
        skipped = needed is not None and frozenset(i for i, t in enumerate(inputs) if id(t) not in needed)
        outer, _skip.value = getattr(_skip, "value", None), (op, skipped) if skipped else None
        try:
            with graph.name_scope(op.name + "_grad"):
                in_grads = fn(op, *out_grads)
        finally:
            _skip.value = outer
        in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
        if len(in_grads) != len(inputs):
            raise ValueError(f"Gradient rule of {op.type} returned {len(in_grads)} gradients for "
                             f"{len(inputs)} inputs (op {op.name!r})")
        for t, g in zip(inputs, in_grads):
            if g is None or not differentiable(t._dtype):
                continue
            if isinstance(g, Operation):
                raise TypeError(f"Gradient rule of {op.type} returned an Operation for input {t.name!r}")
            grads.setdefault(id(t), []).append(g)
    out = []
    for like, keys in sources:
        g = _aggregate(graph, [g for k in keys for g in grads.get(id(k), ())])
        if g is None and unconnected_gradients == "zero":
            g = _create(graph, "ZerosLike", [like], "zeros_like")
        out.append(g)
    return out


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
    grad_ys = _as_list(grad_ys) or None
    if grad_ys is not None and len(grad_ys) != len(ys):
        raise ValueError(f"gradients: {len(grad_ys)} grad_ys for {len(ys)} ys")
    stop = [_as_tensor(t, "stop_gradients") for t in _as_list(stop_gradients)]
    graph = ys[0].graph
    with graph.as_default(), graph.name_scope(name):
        return backward(graph, ys, grad_ys, [(x, [x]) for x in xs], stop_gradients=stop,
                        aggregation_method=aggregation_method, unconnected_gradients=unconnected_gradients)
