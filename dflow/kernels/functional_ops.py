"""TF1's higher-order functions: `map_fn`, `scan`, `foldl`, `foldr` (composites of while_loop).

Each is a `while_loop` over TensorArrays: the elements are unstacked along axis 0 into one array
per (flattened) input, the body reads element i, applies `fn` and writes its result (or carries
the accumulator), and the outputs are stacked. Gradients come from those of while_loop and
TensorArray, so none is registered here.

`map_fn` of a per-element function runs as one vectorized call when it can: the body's `fn` is
traced once in the loop, and when all of its ops are elementwise on tensors of the element's
shape (with constants and captured tensors of no higher rank, which broadcast the same way
against the whole stacked input), `fn(elems)` computes every element at once. Its ops are then
ordinary elementwise ops: fused, and on chunked data run chunk by chunk, one task per chunk.
Any other `fn` runs the host loop, one element per iteration.
"""

from __future__ import annotations

from ..graph.graph import get_default_graph, name_scope
from ..graph.shape import TensorShape
from .array_ops import shape, stop_gradient
from .common import convert_to_tensor
from .control_flow_ops import _flatten, _pack, while_loop
from .tensor_array_ops import TensorArray

__all__ = ["map_fn", "scan", "foldl", "foldr"]


def _elems(elems):
    flat = [convert_to_tensor(e, name="elem") for e in _flatten(elems)]
    if not flat:
        raise ValueError("elems must be a Tensor or a (possibly nested) sequence of Tensors, got an empty one")
    for e in flat:
        if e.shape.ndims == 0:
            raise ValueError(f"Elements in elems must be 1+ dimensional Tensors, not scalars: {e.name!r}")
    n_static = None
    for e in flat:
        d = e.shape.as_list()[0] if e.shape.ndims else None
        if d is not None:
            if n_static is not None and d != n_static:
                raise ValueError(f"All elems must have the same leading dimension, got {n_static} and {d}")
            n_static = d
    n = n_static if n_static is not None else shape(flat[0])[0]
    arrays = [TensorArray(e.dtype, size=n, element_shape=e.shape[1:] if e.shape.ndims else None,
                          infer_shape=True).unstack(e) for e in flat]
    return flat, n, n_static, arrays


def _stacked(tas, n_static):
    out = []
    for ta in tas:
        t = ta.stack()
        t.set_shape(TensorShape([n_static]).concatenate(ta.element_shape))
        out.append(t)
    return out


def _checked(structure, values, what):
    flat = _flatten(values)
    if len(flat) != len(_flatten(structure)):
        raise ValueError(f"{what}: fn returned {values!r}, which does not match the structure {structure!r}")
    return [convert_to_tensor(v) for v in flat]


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True,
           name=None):
    """`fn` applied to each element of `elems` unpacked along axis 0, the results stacked.

    elems: a tensor or a nested structure of tensors of one leading dimension n; fn takes an
    element of that structure. dtype: the structure and dtypes of fn's output when it differs
    from elems'. Returns tensors of shape [n] + fn's output shape. ValueError for scalar elems or
    a result of another structure; TypeError for a result of another dtype.
    """
    if not callable(fn):
        raise TypeError("fn must be callable.")
    g = get_default_graph()
    with name_scope(name, "map", _flatten(elems)):
        flat, n, n_static, in_tas = _elems(elems)
        out_structure = dtype if dtype is not None else _pack(elems, [e.dtype for e in flat])
        out_dtypes = _flatten(out_structure)
        traced = {}

        def body(i, *tas):
            xs = [ta.read(i) for ta in in_tas]
            start = len(g._ops)
            out = fn(_pack(elems, xs))
            traced.update(start=start, end=len(g._ops), xs=xs, out=out)
            outs = _checked(out_structure, out, "map_fn")
            for v, dt in zip(outs, out_dtypes):
                if v.dtype != dt:
                    raise TypeError(f"map_fn: fn returned {v.dtype.name} where dtype says {dt.name}")
            return (i + 1,) + tuple(ta.write(i, v) for ta, v in zip(tas, outs))

        out_tas = [TensorArray(dt, size=n, infer_shape=infer_shape) for dt in out_dtypes]
        res = while_loop(lambda i, *_: i < n, body, [0] + out_tas, parallel_iterations=parallel_iterations or 10,
                         back_prop=back_prop, swap_memory=swap_memory, return_same_structure=True)
        if _elementwise(g, traced):
            outs = _checked(out_structure, fn(elems), "map_fn")  # every element at once
        else:
            outs = _stacked(res[1:], n_static)
        if not back_prop:
            outs = [stop_gradient(o) for o in outs]
        return _pack(out_structure, outs)


def _elementwise(g, traced):
    """Whether fn, as traced on one element, is elementwise on tensors of the element's shape."""
    xs = traced["xs"]
    elem = xs[0].shape
    if not elem.is_fully_defined() or any(x.shape != elem for x in xs):
        return False
    derived = set(xs)
    for op in g._ops[traced["start"]:traced["end"]]:
        if not op.inputs and not op.op_def.traits.stateful:  # a constant made by fn
            continue
        if not op.op_def.traits.elementwise or op.op_def.traits.stateful or op.control_inputs:
            return False
        for t in op.inputs:
            if t not in derived and (t.shape.ndims is None or t.shape.ndims > elem.ndims):
                return False  # a captured tensor that would not broadcast the same way
        for t in op.outputs:
            if t.shape != elem:
                return False
            derived.add(t)
    return all(t in derived for t in _flatten(traced["out"]))


def _accumulate(fn, elems, initializer, reverse, keep_all, name, default_name, back_prop, parallel_iterations,
                swap_memory):
    """The loop behind scan (keep_all: every accumulator, stacked) and foldl/foldr (the last)."""
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with name_scope(name, default_name, _flatten(elems)):
        flat, n, n_static, in_tas = _elems(elems)

        def element(i):
            return _pack(elems, [ta.read(i) for ta in in_tas])

        first = (n - 1) if reverse else 0
        if initializer is None:
            acc_structure = elems
            acc0 = [ta.read(first) for ta in in_tas]
            start = 1
        else:
            acc_structure = initializer
            acc0 = [convert_to_tensor(a, name="initializer") for a in _flatten(initializer)]
            start = 0
        out_tas = [TensorArray(a.dtype, size=n, element_shape=a.shape, infer_shape=True) for a in acc0]
        if keep_all and initializer is None:
            out_tas = [ta.write(first, a) for ta, a in zip(out_tas, acc0)]
        k = len(acc0)

        def body(i, *state):
            acc, tas = list(state[:k]), list(state[k:])
            j = (n - 1 - i) if reverse else i
            new = _checked(acc_structure, fn(_pack(acc_structure, acc), element(j)), default_name)
            for a, b in zip(acc, new):
                if a.dtype != b.dtype:
                    raise TypeError(f"{default_name}: fn returned {b.dtype.name} for an accumulator of "
                                    f"{a.dtype.name}")
            if keep_all:
                tas = [ta.write(j, v) for ta, v in zip(tas, new)]
            return (i + 1,) + tuple(new) + tuple(tas)

        loop_vars = [convert_to_tensor(start)] + acc0 + (out_tas if keep_all else [])
        res = while_loop(lambda i, *_: i < n, body, loop_vars, parallel_iterations=parallel_iterations,
                         back_prop=back_prop, swap_memory=swap_memory, return_same_structure=True)
        outs = _stacked(res[1 + k:], n_static) if keep_all else list(res[1:1 + k])
        if not back_prop:
            outs = [stop_gradient(o) for o in outs]
        return _pack(acc_structure, outs)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, infer_shape=True,
         reverse=False, name=None):
    """The accumulators of `acc = fn(acc, x)` over the elements x of `elems` (axis 0), stacked.

    Without `initializer` the first element is the first accumulator (and the first output).
    `reverse`: from the last element to the first (outputs keep the elements' positions).
    """
    return _accumulate(fn, elems, initializer, reverse, True, name, "scan", back_prop, parallel_iterations,
                       swap_memory)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """The last accumulator of `acc = fn(acc, x)` over `elems` from first to last (axis 0)."""
    return _accumulate(fn, elems, initializer, False, False, name, "foldl", back_prop, parallel_iterations,
                       swap_memory)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """The last accumulator of `acc = fn(acc, x)` over `elems` from last to first (axis 0)."""
    return _accumulate(fn, elems, initializer, True, False, name, "foldr", back_prop, parallel_iterations,
                       swap_memory)
