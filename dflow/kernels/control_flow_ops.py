"""Control flow: `cond`, `case` and `while_loop` (TF1 semantics, host-driven execution).

Both branches of a `cond` and the body and condition of a `while_loop` are built as ordinary ops
of the graph. The `Cond` and `While` ops carry them in their attrs, not their inputs, so pruning
never reaches branch or body ops by itself. Their OpDefs have `state="host"`: the compiler stops
at them and the Session decides on the host (dflow/schedule/session.py): it evaluates a cond's
predicate and compiles a plan specialised to the taken branch (cached per choice), or runs a loop
iteration by iteration, each iteration one run of a cached plan computing `body(v)` and
`cond(body(v))` together. The ops of the branch not taken, assigns and asserts included, never run.
"""

from __future__ import annotations

from ..errors import UnimplementedError
from ..graph.graph import control_dependencies, executing_eagerly, get_default_graph, name_scope
from ..graph.ops import Operation, Tensor
from ..graph.registry import OpState, register_op
from ..graph.shape import TensorShape, as_shape
from .array_ops import identity, placeholder, stack
from .check_ops import Assert
from .common import convert_to_tensor
from .creation_ops import zeros_like
from .math_ops import cast
from .reduction_ops import reduce_sum
from .tensor_array_ops import TensorArray as _TA

__all__ = ["cond", "case", "while_loop"]


# ---- nested structures ----------------------------------------------------------------------------


def _flatten(x):
    if isinstance(x, _TA):
        return [x.flow]
    if isinstance(x, dict):
        return [v for k in sorted(x) for v in _flatten(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for e in x for v in _flatten(e)]
    return [x]


def _pack(structure, flat):
    it = iter(flat)

    def build(s):
        if isinstance(s, dict):
            return {k: build(s[k]) for k in sorted(s)}
        if isinstance(s, tuple) and hasattr(s, "_fields"):
            return type(s)(*[build(e) for e in s])
        if isinstance(s, (list, tuple)):
            return type(s)(build(e) for e in s)
        if isinstance(s, _TA):
            return s._with(next(it))
        return next(it)

    return build(structure)


def _same_structure(a, b):
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and sorted(a) == sorted(b) and all(
            _same_structure(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(_same_structure(x, y) for x, y in zip(a, b)))
    return True


def _captures(graph, start, end, outputs):
    """Tensors made before `start` that the ops [start, end) or the outputs use."""
    made = set(graph._ops[start:end])
    caps = []
    seen = set()
    for op in graph._ops[start:end]:
        for t in op._inputs:
            if t._op not in made and t not in seen:
                seen.add(t)
                caps.append(t)
    for t in outputs:
        if isinstance(t, Tensor) and t._op not in made and t not in seen:
            seen.add(t)
            caps.append(t)
    return caps


# ---- cond -----------------------------------------------------------------------------------------


def _cond_infer(inputs, attrs):
    if attrs["out_specs"] is None:  # an imported TF1 cond (dflow/io/tf_control_flow.py): from its branches
        return [(_merged_shape(a.shape, b.shape), a.dtype)
                for a, b in zip(attrs["true_outputs"], attrs["false_outputs"])]
    return list(attrs["out_specs"])


register_op("Cond", _cond_infer, eager=None, lower=None, must_feed=False, stateful=True, state="host",
            num_outputs=None)


def _branch(fn, scope_name):
    g = get_default_graph()
    start = len(g._ops)
    with name_scope(scope_name):
        out = fn()
        flat = []
        for v in _flatten(out):
            if isinstance(v, Operation):
                with control_dependencies([v]):
                    v = identity(convert_to_tensor(True), name="op_done")
            elif not isinstance(v, Tensor):
                v = convert_to_tensor(v)
            flat.append(v)
    return out, flat, start, len(g._ops)


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """`true_fn()` if `pred` else `false_fn()`; only the taken branch runs.

    Both branches are built now; their outputs (nested structures of tensors, matching) get
    merged static shapes. `pred`: a bool scalar tensor. ValueError/TypeError when the branches'
    structures or dtypes differ.
    """
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("cond: true_fn and false_fn must be callable.")
    if executing_eagerly():  # TF1's eager cond: the predicate is a value, only the taken branch is called
        pred = convert_to_tensor(pred)
        if not pred.dtype.is_bool or pred.shape.ndims != 0:
            raise ValueError(f"cond: pred must be a bool scalar, got {pred.dtype.name} with shape {pred.shape}")
        return true_fn() if bool(pred) else false_fn()
    g = get_default_graph()
    with name_scope(name, "cond", [pred]) as scope:
        pred = convert_to_tensor(pred)
        if not pred.dtype.is_bool or (pred.shape.ndims not in (None, 0)):
            raise ValueError(f"cond: pred must be a bool scalar, got {pred.dtype.name} with shape {pred.shape}")
        t_out, t_flat, t0, t1 = _branch(true_fn, "cond_true")
        f_out, f_flat, f0, f1 = _branch(false_fn, "cond_false")
        if not _same_structure(t_out, f_out) or len(t_flat) != len(f_flat):
            raise ValueError(f"cond: the branches return different structures: {t_out!r} and {f_out!r}")
        specs = []
        for i, (a, b) in enumerate(zip(t_flat, f_flat)):
            if a.dtype != b.dtype:
                raise TypeError(f"cond: output {i} has dtype {a.dtype.name} in true_fn and {b.dtype.name} in "
                                "false_fn")
            specs.append((_merged_shape(a.shape, b.shape), a.dtype))
        caps = _captures(g, t0, f1, t_flat + f_flat)
        op = g.create_op("Cond", [pred] + caps, {"true_outputs": tuple(t_flat), "false_outputs": tuple(f_flat),
                                                 "out_specs": tuple(specs), "n_captures": len(caps)},
                         name=scope)
        outs = _tf1_named(op.outputs, "Merge")
    if not outs:
        return op
    if all(isinstance(v, Operation) for v in _flatten(t_out)) and not isinstance(t_out, (list, tuple, dict)):
        return op
    if not strict and isinstance(t_out, (list, tuple)) and not hasattr(t_out, "_fields") and len(t_out) == 1:
        t_out = t_out[0]  # TF1 unpacks a one-element list unless strict
    return _pack(t_out, outs) if isinstance(t_out, (list, tuple, dict, _TA)) else outs[0]  # a TensorArray: as one


def _tf1_named(outputs, kind):
    """The outputs as TF1's control flow names them: `Identity`s named `<scope>/Merge`,
    `<scope>/Merge_1`, ... (a cond) or `<scope>/Exit`, ... (a loop), made in the construct's name
    scope, so `print(result)` and `get_tensor_by_name("cond/Merge:0")` read as in a TF1 program."""
    return [identity(t, name=kind) for t in outputs]


def _merged_shape(a, b):
    return a.merge_with(b) if a.is_compatible_with(b) else _most_specific(a, b)


def _most_specific(a, b):
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The first fn whose predicate holds (TF1 `tf.case`), else `default`; nested conds."""
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    pairs = list(pred_fn_pairs)
    if not pairs and default is None:
        raise ValueError("case: needs at least one (pred, fn) pair or a default")
    with name_scope(name, "case", [p for p, _ in pairs]):
        if exclusive and len(pairs) > 1:
            preds = [convert_to_tensor(p) for p, _ in pairs]
            count = reduce_sum(cast(stack(preds), "int32"))
            check = Assert(count <= 1, [count], name="Assert_exclusive")
            with control_dependencies([check]):
                pairs = [(identity(p), f) for p, f in zip(preds, [f for _, f in pairs])]
        result = default
        for p, f in reversed(pairs):
            result = _chain(p, f, result)
        return result() if callable(result) else result


def _chain(pred, fn, rest):
    if rest is None:
        return lambda: fn()
    return lambda: cond(pred, fn, rest)


# ---- while_loop -------------------------------------------------------------------------------


def _while_infer(inputs, attrs):
    return list(attrs["out_specs"])


register_op("While", _while_infer, eager=None, lower=None, stateful=True, state="host", num_outputs=None)


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, name=None, maximum_iterations=None, return_same_structure=False):
    """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` (TF1 `tf.while_loop`).

    loop_vars: a (nested) structure of tensors. Each body output must keep its loop var's shape
    unless `shape_invariants` allows it (ValueError naming the var). The loop runs on the host,
    one run of a cached plan per iteration (body and the next condition together).
    """
    if not callable(cond) or not callable(body):
        raise TypeError("while_loop: cond and body must be callable")
    single = not isinstance(loop_vars, (list, tuple, dict))
    structure = [loop_vars] if single else loop_vars
    if executing_eagerly():  # TF1's eager while_loop: a Python loop over values
        return _eager_while(cond, body, loop_vars, single, maximum_iterations)
    g = get_default_graph()
    with name_scope(name, "while", _flatten(structure)) as scope:
        init = [convert_to_tensor(v) for v in _flatten(structure)]
        if shape_invariants is None:
            invariants = [t.shape for t in init]
        else:
            inv = [shape_invariants] if single else shape_invariants
            invariants = [as_shape(s) for s in _flatten(inv)]
            if len(invariants) != len(init):
                raise ValueError("while_loop: shape_invariants must match loop_vars")
        for t, s in zip(init, invariants):
            if not s.is_compatible_with(t.shape):
                raise ValueError(f"while_loop: the shape invariant {s} is not compatible with the initial shape "
                                 f"{t.shape} of loop var {t.name!r}")
        start = len(g._ops)
        phs = [placeholder(t.dtype, s, name=f"loop_var_{i}") for i, (t, s) in enumerate(zip(init, invariants))]
        args = _pack(structure, phs)
        with name_scope("cond"):
            c0 = _bool_scalar(cond(*args) if not single else cond(args[0]))
        with name_scope("body"):
            out = body(*args) if not single else body(args[0])
        out_struct = [out] if single and not (isinstance(out, (list, tuple)) and len(out) == 1) else out
        if single and isinstance(out, (list, tuple)) and len(out) == 1:
            out_struct = list(out)
        flat = [convert_to_tensor(v) for v in _flatten(out_struct)]
        if len(flat) != len(phs):
            raise ValueError(f"while_loop: body returned {len(flat)} values for {len(phs)} loop vars")
        for i, (ph, o, s) in enumerate(zip(phs, flat, invariants)):
            if o.dtype != ph.dtype:
                raise TypeError(f"while_loop: loop var {i} ({init[i].name!r}) enters with dtype {ph.dtype.name} and "
                                f"the body returns {o.dtype.name}")
            if not s.is_compatible_with(o.shape) or (s.is_fully_defined() and o.shape != s and
                                                    not o.shape.is_compatible_with(s)):
                raise ValueError(f"Input tensor '{init[i].name}' enters the loop with shape {s}, but has shape "
                                 f"{o.shape} after one iteration. To allow the shape to vary across iterations, "
                                 "use the `shape_invariants` argument of tf.while_loop to specify a less-specific "
                                 "shape.")
        with name_scope("cond_next"):
            next_args = _pack(structure, flat)
            c1 = _bool_scalar(cond(*next_args) if not single else cond(next_args[0]))
        _refuse_state_changes(g, start, flat + [c0, c1])
        caps = [t for t in _captures(g, start, len(g._ops), flat + [c0, c1]) if t not in phs]
        caps += [t for t in _variables_made_inside(g, start, phs) if t not in caps]
        specs = tuple((s, t.dtype) for s, t in zip(invariants, init))
        op = g.create_op("While", init + caps, {
            "loop_vars": tuple(phs), "cond": c0, "body": tuple(flat), "cond_next": c1,
            "maximum_iterations": maximum_iterations, "n_loop_vars": len(phs), "out_specs": specs}, name=scope)
        outs = _tf1_named(op.outputs, "Exit")
    if single:
        return _pack([out_struct[0] if isinstance(out_struct, (list, tuple)) else out_struct], outs)[0]
    # the body's structure: TensorArrays there carry the element shapes their writes inferred
    packed = _pack(out_struct if _same_structure(out_struct, structure) else structure, outs)
    if isinstance(packed, (list, tuple)) and len(packed) == 1 and not return_same_structure:
        return packed[0]  # TF1: a single loop var comes back bare
    return packed


def _refuse_state_changes(g, start, outputs):
    """UnimplementedError for an assign the loop's outputs depend on (one made inside the body
    that nothing reads, a variable's initializer, never runs in the loop: as in TF1)."""
    seen, stack = set(), [t.op for t in outputs]
    while stack:
        op = stack.pop()
        if op in seen or op._id < start:
            continue
        seen.add(op)
        if op.op_def.state in (OpState.ASSIGN, OpState.UPDATE, OpState.SINK):
            raise UnimplementedError(None, op, f"while_loop: the body or condition creates {op.type} op "
                                     f"{op.name!r}; state changes inside loops are not supported (dflow runs "
                                     "a loop's iterations as separate host runs that do not commit). Carry the "
                                     "variable's value as a loop variable and assign the result once after the "
                                     "loop: `_, new = tf.while_loop(cond, lambda i, v: (i + 1, v + 1.0), "
                                     "[0, var.read_value()])`, then `tf.assign(var, new)`.")
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)


def _variables_made_inside(g, start, phs):
    """Tensors of variables created inside the body (a layer called there) that the loop reads:
    captured as the variables made outside are, so gradients reach them."""
    varying, of_variable = {p.op for p in phs}, set()
    for op in g._ops[start:]:
        if op in varying or op.op_def.traits.must_feed or any(t.op in varying for t in op.inputs):
            varying.add(op)
        elif op.op_def.state is OpState.VARIABLE or (op.inputs and all(t.op in of_variable for t in op.inputs)):
            of_variable.add(op)
    return list(dict.fromkeys(t for op in g._ops[start:] if op in varying for t in op.inputs
                              if t.op in of_variable))


def _eager_while(cond, body, loop_vars, single, maximum_iterations):
    n = 0
    while maximum_iterations is None or n < int(maximum_iterations):
        if not bool(_bool_scalar(cond(loop_vars) if single else cond(*loop_vars))):
            break
        out = body(loop_vars) if single else body(*loop_vars)
        if not single and not isinstance(out, (list, tuple)):
            out = [out]
        loop_vars = out if single else (type(loop_vars)(out) if isinstance(loop_vars, tuple) else list(out))
        n += 1
    return loop_vars


def _bool_scalar(c):
    c = convert_to_tensor(c)
    if not c.dtype.is_bool or c.shape.ndims not in (None, 0):
        raise ValueError(f"while_loop: cond must return a bool scalar, got {c.dtype.name} {c.shape}")
    return c


# ---- gradients ------------------------------------------------------------------------------------

from ..graph.gradients import differentiable, gradients  # noqa: E402
from ..graph.registry import def_grad  # noqa: E402


@def_grad("Cond")
def _cond_grad(op, *grads):
    """Gradients flow to the captured tensors through the branch taken: a cond on the same pred."""
    pred, caps = op.inputs[0], list(op.inputs[1:])
    diff_caps = [c for c in caps if differentiable(c.dtype)]
    if not diff_caps:
        return [None] * len(op.inputs)

    def branch(outs):
        def fn():
            ys = [o for o, g in zip(outs, grads) if g is not None and differentiable(o.dtype)]
            gys = [g for o, g in zip(outs, grads) if g is not None and differentiable(o.dtype)]
            # partial derivatives (caps held constant): a cap computed from another cap (a TensorArray flow
            # built from x, x itself) must not pass its gradient on here too, or it counts twice outside
            res = gradients(ys, diff_caps, grad_ys=gys, stop_gradients=diff_caps) if ys else [None] * len(diff_caps)
            # a branch's outputs are tensors: an IndexedSlices (a gather's gradient) is densified
            return [convert_to_tensor(r) if r is not None else zeros_like(c) for r, c in zip(res, diff_caps)]
        return fn

    dcaps = cond(pred, branch(op.get_attr("true_outputs")), branch(op.get_attr("false_outputs")))
    dcaps = list(dcaps) if isinstance(dcaps, (list, tuple)) else [dcaps]
    it = iter(dcaps)
    return [None] + [next(it) if differentiable(c.dtype) else None for c in caps]


def _while_grad_infer(inputs, attrs):
    return list(attrs["out_specs"])


register_op("WhileGrad", _while_grad_infer, eager=None, lower=None, stateful=True, state="host", num_outputs=None)


@def_grad("While")
def _while_grad(op, *grads):
    """Reverse pass on the host: one VJP graph of the body, built here over placeholders, run
    backwards once per iteration over the states the forward loop recorded. The body's
    intermediates the VJP reads (`saved`: a tanh's output, a matmul's inputs) are recorded too and
    fed back, so the reverse pass does not compute the body again (TF1 keeps them on stacks)."""
    n = op.get_attr("n_loop_vars")
    phs = list(op.get_attr("loop_vars"))
    body = list(op.get_attr("body"))
    caps = list(op.inputs[n:])
    idx = [i for i in range(n) if differentiable(phs[i].dtype)]
    cap_idx = [j for j, c in enumerate(caps) if differentiable(c.dtype)]
    if not idx:
        return [None] * len(op.inputs)
    g = op.graph
    first_grad_op = len(g._ops)
    g_phs = [placeholder(phs[i].dtype, phs[i].shape, name=f"grad_loop_var_{i}") for i in idx]
    wrt = [phs[i] for i in idx] + [caps[j] for j in cap_idx]
    # partial derivatives, the loop vars and captures held constant (a capture computed from another
    # capture passes its gradient on outside the loop, not through the body's VJP too)
    vjp = gradients([body[i] for i in idx], wrt, grad_ys=g_phs, stop_gradients=wrt)
    vjp = [convert_to_tensor(v) if v is not None else zeros_like(w) for v, w in zip(vjp, wrt)]  # (IndexedSlices)
    out_grads = [grads[i] if grads[i] is not None else zeros_like(op.outputs[i]) for i in idx]
    specs = tuple((op.inputs[i].shape, op.inputs[i].dtype) for i in idx) + tuple(
        (caps[j].shape, caps[j].dtype) for j in cap_idx)
    gop = g.create_op("WhileGrad", list(op.inputs) + out_grads, {
        "forward": op, "grad_vars": tuple(g_phs), "vjp": tuple(vjp), "var_index": tuple(idx),
        "saved": tuple(_saved(phs, op, g._ops[first_grad_op:])), "n_forward_inputs": len(op.inputs),
        "out_specs": specs}, name=op.name + "_grad/WhileGrad")
    outs = gop.outputs
    result = [None] * len(op.inputs)
    for k, i in enumerate(idx):
        result[i] = outs[k]
    for k, j in enumerate(cap_idx):
        result[n + j] = outs[len(idx) + k]
    return result


def _saved(phs, loop, grad_ops):
    """The loop body's tensors that the gradient ops read, among those one step of this loop
    computes: made while the loop was built, from its vars and earlier tensors (an inner loop's
    vars, and what depends on them, are that loop's own), and varying from step to step: computed
    from the loop vars, or by a stateful op (a random draw). What the body makes from invariants
    alone (a variable a cell creates on its first call, a constant, a transpose of a weight) has
    one value in every step of a run: the reverse pass computes it, rather than the forward pass
    recording it per step (an LSTM's recorded [256, 512] kernel, copied each step because it is
    the variable's own array, cost 40% of a 100-step forward run)."""
    start, mine = min(p.op._id for p in phs), {p.op for p in phs}
    body, varying = set(), set(mine)
    for o in loop.graph._ops[start:loop._id]:
        if o in mine or (not o.op_def.traits.must_feed and all(t.op in body or t.op._id < start for t in o.inputs)):
            body.add(o)
            if (o.op_def.traits.stateful and o.op_def.state is not OpState.VARIABLE) or \
                    any(t.op in varying for t in o.inputs):
                varying.add(o)
    saved, seen = [], set(phs)
    for o in grad_ops:
        for t in o.inputs:
            if t.op in varying and t not in seen:
                seen.add(t)
                saved.append(t)
    return saved
