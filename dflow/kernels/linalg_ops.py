"""Contractions: matmul (rank 2 and batched with broadcasting), tensordot and einsum.

Static shapes are inferred when the graph is built, and contractions of known, unequal dims raise
ValueError then (as TF1). Chunked lowerings are `da.matmul`, `da.tensordot` and `da.einsum`:
each output block sums block products over the contracted axis, so no task holds a whole operand.
Gradient rules, at the end, are contractions again (so they are differentiable in turn).
"""

from __future__ import annotations

import numpy as np

from ..errors import UnimplementedError
from ..graph.graph import name_scope
from ..graph.ops import Tensor, constant_value
from ..graph.registry import register_op
from ..graph.shape import Dimension, TensorShape, broadcast_static_shape, unknown_shape
from . import math_ops as m
from .array_ops import rank, reshape, shape
from .common import apply_op, check_dtype, constant, convert_pair, convert_to_tensor
from .cores import intra_op_parts, may_split, run_parts
from .creation_ops import range as range_
from .grad_util import broadcast_like
from .manip_ops import expand_dims, transpose
from .math_ops import cast, equal
from .reduction_ops import kept_shape, reduce_max, reduce_sum

__all__ = ["norm", "matmul", "tensordot", "einsum"]

# TF1's MatMul/BatchMatMulV2/Einsum type lists: no bool, int8 or int16
_CONTRACT_DTYPES = {"float16", "float32", "float64", "int32", "int64", "uint8", "uint16", "uint32",
                    "uint64", "complex64", "complex128"}


def _check_pair(op_type, a, b, names=("a", "b")):
    if a.dtype != b.dtype:
        raise TypeError(f"Input {names[1]!r} of {op_type!r} Op has type {b.dtype.name} that does not "
                        f"match type {a.dtype.name} of argument {names[0]!r}.")
    if a.dtype.name not in _CONTRACT_DTYPES:
        raise TypeError(f"Value passed to parameter {names[0]!r} of {op_type!r} has DataType "
                        f"{a.dtype.name} not in list of allowed values: {', '.join(sorted(_CONTRACT_DTYPES))}")


def _shape_str(s):
    return "?" if s.ndims is None else "[" + ",".join("?" if d is None else str(d) for d in s.as_list()) + "]"


# ---- matmul ------------------------------------------------------------------------------------


def _matmul_infer(op_type):
    def infer(inputs, attrs):
        a, b = inputs
        _check_pair(op_type, a, b)
        shapes = f"with input shapes: {_shape_str(a.shape)}, {_shape_str(b.shape)}"
        for t in (a, b):
            n = t.shape.ndims
            if n is None:
                continue
            if op_type == "MatMul" and n != 2:
                raise ValueError(f"Shape must be rank 2 but is rank {n} for {op_type!r} {shapes}.")
            if n < 2:
                raise ValueError(f"Shape must be at least rank 2 but is rank {n} for {op_type!r} {shapes}.")
        if a.shape.ndims is None or b.shape.ndims is None:
            return unknown_shape(), a.dtype
        ta = attrs["transpose_a"] or attrs["adjoint_a"]
        tb = attrs["transpose_b"] or attrs["adjoint_b"]
        ad, bd = a.shape.as_list(), b.shape.as_list()
        m, ka = (ad[-1], ad[-2]) if ta else (ad[-2], ad[-1])
        kb, n = (bd[-1], bd[-2]) if tb else (bd[-2], bd[-1])
        if ka is not None and kb is not None and ka != kb:
            raise ValueError(f"Dimensions must be equal, but are {ka} and {kb} for {op_type!r} {shapes}.")
        try:
            batch = broadcast_static_shape(TensorShape(ad[:-2]), TensorShape(bd[:-2]))
        except ValueError:
            raise ValueError(f"Batch dimensions {ad[:-2]} and {bd[:-2]} must broadcast for {op_type!r} "
                             f"{shapes}.") from None
        return batch.concatenate([m, n]), a.dtype

    return infer


def _prepare(xp, x, transpose, adjoint):
    if transpose or adjoint:
        x = xp.matrix_transpose(x)
    if adjoint and np.dtype(x.dtype).kind == "c":
        x = xp.conj(x)
    return x


def _upcast(xp, arrays):
    """float16 operands contract in float32 (as TF1's kernels), so chunked and whole-array
    results agree to float16 precision however the contracted axis is split."""
    if np.dtype(arrays[0].dtype) == np.float16:
        return [xp.astype(x, np.float32) for x in arrays]
    return list(arrays)


def _as(xp, out, dtype):
    # also undoes dask's widened declared dtype for small ints (numpy keeps the input dtype)
    return out if out.dtype == dtype else xp.astype(out, dtype)


def _matmul_eager(xp, a, b, *, transpose_a, transpose_b, adjoint_a, adjoint_b):
    dtype = a.dtype
    if type(a) is np.ndarray and type(b) is np.ndarray and dtype == b.dtype and dtype.kind == "f" \
            and dtype.itemsize >= 4 and a.ndim == 2 == b.ndim:
        # numpy float32/float64 matrices (a training step's case): no namespace wrappers (their cost
        # per call); for real dtypes adjoint is transpose
        a = a.T if transpose_a or adjoint_a else a
        b = b.T if transpose_b or adjoint_b else b
        if not may_split(2.0 * a.shape[0] * a.shape[1] * b.shape[1]):
            return np.matmul(a, b)
    else:
        a, b = _upcast(xp, [a, b])
        a = _prepare(xp, a, transpose_a, adjoint_a)
        b = _prepare(xp, b, transpose_b, adjoint_b)
    if a.ndim == 2 and b.ndim == 2 and may_split(2.0 * a.shape[0] * a.shape[1] * b.shape[1]):
        parts = intra_op_parts(xp, a.shape[0], 2.0 * a.shape[0] * a.shape[1] * b.shape[1])
        if len(parts) > 1:  # rows of the product on the intra-op threads (kernels/cores.py)
            out = np.empty((a.shape[0], b.shape[1]), dtype=np.result_type(a.dtype, b.dtype))
            run_parts(lambda p: np.matmul(a[p], b, out=out[p]), parts)
            return _as(xp, out, dtype)
    return _as(xp, xp.matmul(a, b), dtype)


def _matmul_lower(ctx, a, b, *, transpose_a, transpose_b, adjoint_a, adjoint_b):
    a, b = ctx.as_dask(a), ctx.as_dask(b)
    dtype = a.dtype
    a, b = _upcast(ctx.xp, [a, b])
    a = _prepare(ctx.xp, a, transpose_a, adjoint_a)
    b = _prepare(ctx.xp, b, transpose_b, adjoint_b)
    return _as(ctx.xp, ctx.da.matmul(a, b), dtype)


for _type in ("MatMul", "BatchMatMulV2"):
    register_op(_type, _matmul_infer(_type), eager=_matmul_eager, lower=_matmul_lower)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    """Matrix product `a @ b` of the last two axes (op `MatMul` for rank 2, else `BatchMatMulV2`).

    Shapes [..., M, K] x [..., K, N] -> [..., M, N]; batch dims broadcast as numpy. `transpose_*`
    swaps the last two axes first, `adjoint_*` also conjugates. `a_is_sparse`/`b_is_sparse` are
    accepted and ignored (hints only). ValueError: rank below 2, known inner dims that differ,
    batch dims that do not broadcast, or transpose and adjoint both set. TypeError: dtypes that
    differ or are not float, int32/int64, uint or complex.
    """
    if transpose_a and adjoint_a:
        raise ValueError("Only one of `transpose_a` and `adjoint_a` can be True. Received "
                         f"`transpose_a`={transpose_a}, `adjoint_a`={adjoint_a}.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of `transpose_b` and `adjoint_b` can be True. Received "
                         f"`transpose_b`={transpose_b}, `adjoint_b`={adjoint_b}.")
    a, b = convert_pair(a, b, "MatMul")
    ra, rb = a.shape.ndims, b.shape.ndims
    batched = ra is None or rb is None or ra > 2 or rb > 2
    attrs = {"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b),
             "adjoint_a": bool(adjoint_a), "adjoint_b": bool(adjoint_b)}
    return apply_op("BatchMatMulV2" if batched else "MatMul", [a, b], attrs, name=name,
                    default_name="MatMul")


def _matmul_operator(self, other, reverse=False):
    with name_scope(None, "matmul", [self, other]) as scope:
        return matmul(other, self, name=scope) if reverse else matmul(self, other, name=scope)


# Tensor's `@` is bound here, beside matmul (math_ops binds the elementwise operators)
Tensor._override_operator("__matmul__", lambda self, other: _matmul_operator(self, other))
Tensor._override_operator("__rmatmul__", lambda self, other: _matmul_operator(self, other, reverse=True))


# ---- tensordot -----------------------------------------------------------------------------------


def _tensordot_axes(axes, ra, rb):
    """(axes of a, axes of b) as lists of ints in range; ValueError for a bad spec."""
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0:
            raise ValueError(f"'axes' must be at least 0, got {n}.")
        for r, which in ((ra, "a"), (rb, "b")):
            if r is not None and n > r:
                raise ValueError(f"`axes` must not be larger than the number of dimensions of tensor "
                                 f"{which}. Received {n}, vs tensor dimensions {r}.")
        return list(range(-n, 0)), list(range(n))
    try:
        ax_a, ax_b = axes
    except (TypeError, ValueError):
        raise ValueError(f"'axes' must be an int or a pair of lists of axes, got {axes!r}") from None
    ax_a = [int(i) for i in np.asarray(ax_a).reshape(-1)]
    ax_b = [int(i) for i in np.asarray(ax_b).reshape(-1)]
    if len(ax_a) != len(ax_b):
        raise ValueError(f"Different number of contraction axes `a` and `b`, {len(ax_a)} != {len(ax_b)}.")
    return ax_a, ax_b


def _norm_axes(axes, rank, which):
    if rank is None:
        return axes
    out = []
    for i in axes:
        if not -rank <= i < rank:
            raise ValueError(f"tensordot: axis {i} of `{which}` is out of range for rank {rank}")
        out.append(i % rank)
    if len(set(out)) != len(out):
        raise ValueError(f"tensordot: repeated axis in {axes} for `{which}`")
    return out


def _tensordot_infer(inputs, attrs):
    a, b = inputs
    _check_pair("Tensordot", a, b)
    ax_a, ax_b = attrs["axes"]
    ra, rb = a.shape.ndims, b.shape.ndims
    ax_a, ax_b = _norm_axes(ax_a, ra, "a"), _norm_axes(ax_b, rb, "b")
    if ra is None or rb is None:
        return unknown_shape(), a.dtype
    da_, db_ = a.shape.as_list(), b.shape.as_list()
    for i, j in zip(ax_a, ax_b):
        if da_[i] is not None and db_[j] is not None and da_[i] != db_[j]:
            raise ValueError(f"Dimensions must be equal, but are {da_[i]} and {db_[j]} for 'Tensordot' "
                             f"(axis {i} of a, axis {j} of b) with input shapes: {_shape_str(a.shape)}, "
                             f"{_shape_str(b.shape)}.")
    free = [d for i, d in enumerate(da_) if i not in ax_a] + [d for j, d in enumerate(db_) if j not in ax_b]
    return TensorShape(free), a.dtype


def _tensordot_eager(xp, a, b, *, axes):
    ax_a, ax_b = _norm_axes(axes[0], a.ndim, "a"), _norm_axes(axes[1], b.ndim, "b")
    dtype = a.dtype
    a, b = _upcast(xp, [a, b])
    return _as(xp, xp.tensordot(a, b, axes=(ax_a, ax_b)), dtype)


def _tensordot_lower(ctx, a, b, *, axes):
    a, b = ctx.as_dask(a), ctx.as_dask(b)
    ax_a, ax_b = _norm_axes(axes[0], a.ndim, "a"), _norm_axes(axes[1], b.ndim, "b")
    dtype = a.dtype
    a, b = _upcast(ctx.xp, [a, b])
    return _as(ctx.xp, ctx.da.tensordot(a, b, axes=(ax_a, ax_b)), dtype)


register_op("Tensordot", _tensordot_infer, eager=_tensordot_eager, lower=_tensordot_lower)


def tensordot(a, b, axes, name=None):
    """Sums the products of `a` and `b` over the given axes (op `Tensordot`).

    `axes`: an int N (last N axes of `a` with first N of `b`) or a pair of lists of axes (may be
    negative), known when building. Output shape: the free axes of `a` then those of `b`.
    ValueError for contracted dims that differ, axes out of range or lists of different
    lengths; TypeError for dtypes that differ.
    """
    a, b = convert_pair(a, b, "Tensordot")
    if isinstance(axes, Tensor):
        value = constant_value(axes)
        if value is None:
            raise ValueError("tensordot: `axes` must be known when the graph is built (a Python value or "
                             f"a constant), got the computed tensor {axes.name!r}")
        axes = int(value) if np.ndim(value) == 0 else value.tolist()
    ax_a, ax_b = _tensordot_axes(axes, a.shape.ndims, b.shape.ndims)
    return apply_op("Tensordot", [a, b], {"axes": (tuple(ax_a), tuple(ax_b))}, name=name,
                    default_name="Tensordot")


# ---- einsum ----------------------------------------------------------------------------------------


def _parse_equation(equation, n_inputs):
    """(input terms, output term, normalized equation); a term is a list of labels and '...'."""
    eq = "".join(equation.split())
    if "->" in eq:
        lhs, rhs = eq.split("->", 1)
        if "->" in rhs:
            raise ValueError(f"einsum: equation {equation!r} has more than one '->'")
    else:
        lhs, rhs = eq, None
    terms = [_parse_term(t, equation) for t in lhs.split(",")]
    if len(terms) != n_inputs:
        raise ValueError(f'Got {n_inputs} inputs for equation "{equation}", expecting {len(terms)}')
    if rhs is None:
        counts = {}
        for t in terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = (["..."] if "..." in counts else []) + sorted(c for c, k in counts.items()
                                                           if k == 1 and c != "...")
    else:
        out = _parse_term(rhs, equation)
        seen = set(c for t in terms for c in t)
        for c in out:
            if c not in seen:
                raise ValueError(f"Output subscripts contain the label {c} not present in the input "
                                 f"subscripts ({equation!r}).")
        if len(set(out)) != len(out):
            raise ValueError(f"Output subscripts contain a label appearing more than once: {equation!r}")
    normalized = ",".join("".join(t) for t in terms) + "->" + "".join(out)
    return terms, out, normalized


def _parse_term(term, equation):
    labels = []
    i = 0
    while i < len(term):
        if term.startswith("...", i):
            if "..." in labels:
                raise ValueError(f"einsum: more than one ellipsis in a term of {equation!r}")
            labels.append("...")
            i += 3
        elif term[i].isalpha() and term[i].isascii():
            labels.append(term[i])
            i += 1
        else:
            raise ValueError(f"einsum: invalid character {term[i]!r} in equation {equation!r}")
    return labels


def _einsum_infer(inputs, attrs):
    for t in inputs[1:]:
        if t.dtype != inputs[0].dtype:
            raise TypeError(f"Tensors in list passed to 'inputs' of 'Einsum' Op have types "
                            f"{[x.dtype.name for x in inputs]} that don't all match.")
    check_dtype(inputs[0], "iufc", "Einsum", "inputs")
    terms, out, eq = _parse_equation(attrs["equation"], len(inputs))
    shapes = ", ".join(_shape_str(t.shape) for t in inputs)
    dims = {}
    ell = TensorShape([])
    for k, (t, term) in enumerate(zip(inputs, terms)):
        n_labels = len([c for c in term if c != "..."])
        if t.shape.ndims is None:
            if "..." in term:
                ell = unknown_shape()
            continue
        rank = t.shape.ndims
        if "..." not in term and rank != n_labels:
            raise ValueError(f"Shape must be rank {n_labels} but is rank {rank} for {k}th input and "
                             f"equation: {eq} (Einsum with input shapes: {shapes}).")
        if rank < n_labels:
            raise ValueError(f"Shape must be at least rank {n_labels} but is rank {rank} for {k}th "
                             f"input and equation: {eq} (Einsum with input shapes: {shapes}).")
        sdims = t.shape.as_list()
        pos = 0
        for c in term:
            if c == "...":
                n_ell = rank - n_labels
                try:
                    ell = broadcast_static_shape(ell, TensorShape(sdims[pos:pos + n_ell]))
                except ValueError:
                    raise ValueError(f"einsum: the broadcast dims (...) of the inputs do not broadcast "
                                     f"for equation {eq} with input shapes: {shapes}") from None
                pos += n_ell
                continue
            d = sdims[pos]
            pos += 1
            old = dims.get(c)
            if old is not None and d is not None and old != d:
                raise ValueError(f"Dimensions must be equal, but are {old} and {d} for label {c!r} of "
                                 f"'Einsum' (equation {eq}) with input shapes: {shapes}.")
            if old is None:
                dims[c] = d
    if "..." not in out and ell.ndims:
        raise ValueError(f"einsum equation {eq!r} has no ellipsis (...) in the output subscripts where "
                         f"input(s) have non-empty broadcasting shape {ell} (input shapes: {shapes}).")
    if "..." in out and ell.ndims is None:
        return unknown_shape(), inputs[0].dtype
    result = []
    for c in out:
        if c == "...":
            result.extend(ell.as_list())
        else:
            result.append(Dimension(dims.get(c)).value)
    return TensorShape(result), inputs[0].dtype


def _einsum_eager(xp, *arrays, equation, N):
    dtype = arrays[0].dtype
    return _as(xp, xp.einsum(equation, *_upcast(xp, arrays)), dtype)


def _einsum_lower(ctx, *arrays, equation, N):
    arrays = [ctx.as_dask(x) for x in arrays]
    dtype = arrays[0].dtype
    return _as(ctx.xp, ctx.da.einsum(equation, *_upcast(ctx.xp, arrays)), dtype)


register_op("Einsum", _einsum_infer, eager=_einsum_eager, lower=_einsum_lower)


def einsum(equation, *inputs, **kwargs):
    """Einstein summation over `inputs` by `equation` (op `Einsum`, in name scope "einsum").

    `equation`: 'ij,jk->ik'; without '->' the output is the labels used once, sorted; '...'
    broadcasts as numpy. Labels that appear in several places must have equal dims (ValueError,
    when known; size-1 dims do not broadcast, as TF1). TypeError for dtypes that differ.
    """
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"einsum: invalid keyword arguments {sorted(kwargs)}")
    if not isinstance(equation, str):
        raise TypeError(f"einsum: equation must be a string, got {equation!r}")
    if len(inputs) == 2:
        inputs = list(convert_pair(inputs[0], inputs[1], "Einsum"))
    else:
        inputs = [convert_to_tensor(x) for x in inputs]
    _, _, normalized = _parse_equation(equation, len(inputs))
    with name_scope(name, "einsum", inputs):
        return apply_op("Einsum", inputs, {"equation": normalized, "N": len(inputs)}, name="Einsum")


# ---- gradient rules ----------------------------------------------------------------------------------
# Complex inputs follow TF1's convention (math_ops' `_c`): the gradient of a real loss with respect
# to z = x + iy is dL/dx + i dL/dy, so C = X @ Y gives dX = G @ Y^H and dY = X^H @ G.

from ..graph.registry import def_grad  # noqa: E402
from .grad_util import unbroadcast  # noqa: E402


def _shaped(grads, inputs):
    """`grads`, each given its input's static shape (a contraction may know fewer of the dims)."""
    for g, x in zip(grads, inputs):
        g.set_shape(x.shape)
    return grads


def _conj(t):
    if t.shape.ndims is not None:
        return transpose(t, list(range(t.shape.ndims)), conjugate=True)
    return transpose(transpose(t, conjugate=True))  # unknown rank: reverse the axes twice


@def_grad("MatMul", "BatchMatMulV2")
def _matmul_grad(op, g):
    """C = op_a(A) @ op_b(B): dA = g @ op_b(B)^T (and so on), written with transpose flags as TF1.
    Broadcast batch dims are summed away."""
    a, b = op.inputs
    if a.dtype.is_complex:
        return _complex_matmul_grad(op, g)
    ta = op.get_attr("transpose_a") or op.get_attr("adjoint_a")
    tb = op.get_attr("transpose_b") or op.get_attr("adjoint_b")
    ca = a.dtype.is_complex and op.get_attr("adjoint_a")
    cb = b.dtype.is_complex and op.get_attr("adjoint_b")
    a_, b_ = (_conj(a) if ca else a), (_conj(b) if cb else b)  # now C = t_a(a_) @ t_b(b_)
    if not ta and not tb:
        ga, gb = matmul(g, b_, transpose_b=True), matmul(a_, g, transpose_a=True)
    elif not ta:
        ga, gb = matmul(g, b_), matmul(g, a_, transpose_a=True)
    elif not tb:
        ga, gb = matmul(b_, g, transpose_b=True), matmul(a_, g)
    else:
        ga = matmul(b_, g, transpose_a=True, transpose_b=True)
        gb = matmul(g, a_, transpose_a=True, transpose_b=True)
    ga, gb = (_conj(ga) if ca else ga), (_conj(gb) if cb else gb)
    if op.type == "BatchMatMulV2":
        ga, gb = unbroadcast(ga, a), unbroadcast(gb, b)
    return _shaped([ga, gb], op.inputs)


def _flag(op, side):
    """How the op takes its input `side` ("a" or "b"): "H" (adjoint), "T" (transpose) or ""."""
    return "H" if op.get_attr(f"adjoint_{side}") else "T" if op.get_attr(f"transpose_{side}") else ""


def _complex_matmul_grad(op, g):
    """C = X @ Y with X = op_a(A), Y = op_b(B): dX = G @ Y^H, dY = X^H @ G (TF1's conjugating rule),
    taken back through op_a / op_b, each product one matmul with flags (no rank needed)."""
    a, b = op.inputs
    fa, fb = _flag(op, "a"), _flag(op, "b")

    def pick(t, f, want):  # (tensor, flag) whose matmul operand is op(t), op(t)^H or conj(op(t))
        if want == "Y":
            return t, f
        if want == "YH":
            return (apply_op("Conj", [t]), "") if f == "T" else (t, "H" if f == "" else "")
        return (apply_op("Conj", [t]), "") if f == "" else (t, "H" if f == "T" else "T")  # conj(op(t))

    def mm(x, fx, y, fy):
        return matmul(x, y, transpose_a=fx == "T", adjoint_a=fx == "H", transpose_b=fy == "T",
                      adjoint_b=fy == "H")

    ga = {"": lambda: mm(g, "", *pick(b, fb, "YH")), "T": lambda: mm(*pick(b, fb, "conjY"), g, "T"),
          "H": lambda: mm(*pick(b, fb, "Y"), g, "H")}[fa]()
    gb = {"": lambda: mm(*pick(a, fa, "YH"), g, ""), "T": lambda: mm(g, "T", *pick(a, fa, "conjY")),
          "H": lambda: mm(g, "H", *pick(a, fa, "Y"))}[fb]()
    if op.type == "BatchMatMulV2":
        ga, gb = unbroadcast(ga, a), unbroadcast(gb, b)
    return _shaped([ga, gb], op.inputs)


def _unpermute(t, order):
    """`t`, whose axis k is axis order[k] of the input, with the input's axis order."""
    perm = [int(i) for i in np.argsort(order)]
    return t if perm == list(range(len(perm))) else transpose(t, perm)


def _tensordot_grad_ranks(op):
    ra, rb = (t.shape.ndims for t in op.inputs)
    if ra is None or rb is None:
        raise ValueError(f"Gradient of Tensordot {op.name!r} needs the ranks of both inputs, got shapes "
                         f"{_shape_str(op.inputs[0].shape)} and {_shape_str(op.inputs[1].shape)}")
    return ra, rb


@def_grad("Tensordot")
def _tensordot_grad(op, g):
    """dA = g contracted with B over B's free axes; dB likewise; then each put in its input's order."""
    a, b = op.inputs
    ra, rb = _tensordot_grad_ranks(op)
    ax_a, ax_b = _norm_axes(op.get_attr("axes")[0], ra, "a"), _norm_axes(op.get_attr("axes")[1], rb, "b")
    free_a = [i for i in range(ra) if i not in ax_a]
    free_b = [j for j in range(rb) if j not in ax_b]
    nfa, nfb = len(free_a), len(free_b)
    ga = tensordot(g, b, axes=(list(range(nfa, nfa + nfb)), free_b))
    gb = tensordot(a, g, axes=(free_a, list(range(nfa))))
    order_a = free_a + [ax_a[ax_b.index(j)] for j in sorted(ax_b)]
    order_b = [ax_b[ax_a.index(i)] for i in sorted(ax_a)] + free_b
    return _shaped([_unpermute(ga, order_a), _unpermute(gb, order_b)], op.inputs)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _explicit_labels(terms, out, inputs, eq):
    """`terms` and `out` with each '...' spelled out in letters (aligned right, as broadcasting);
    an input's '...' dim of static size 1 gets a letter of its own, so the gradient sums it."""
    if not any("..." in t for t in terms):
        return terms, out
    n_ell = {}
    for k, (t, x) in enumerate(zip(terms, inputs)):
        if "..." in t:
            if x.shape.ndims is None:
                raise UnimplementedError(None, None, f"Gradient of einsum {eq!r}: input {k} has '...' and an unknown rank")
            n_ell[k] = x.shape.ndims - (len(t) - 1)
    n = max(n_ell.values())
    fresh = iter(c for c in _LETTERS if c not in {c for t in terms + [out] for c in t})
    try:
        shared = [next(fresh) for _ in range(n)]
        new_terms = []
        for k, t in enumerate(terms):
            if "..." not in t:
                new_terms.append(list(t))
                continue
            p, dims = t.index("..."), inputs[k].shape.as_list()
            ell = [next(fresh) if dims[p + i] == 1 else shared[n - n_ell[k] + i] for i in range(n_ell[k])]
            new_terms.append(t[:p] + ell + t[p + 1:])
    except StopIteration:
        raise UnimplementedError(None, None, f"Gradient of einsum {eq!r}: more than 52 labels") from None
    p = out.index("...") if "..." in out else None
    return new_terms, (out if p is None else out[:p] + shared + out[p + 1:])


def _diagonal(gk, kept, t, x, used, eq):
    """(gk put on the diagonals of the labels `t` repeats, its labels): X[i, i] = gk[i]."""
    fresh = iter(c for c in reversed(_LETTERS) if c not in used)
    labels, deltas = [], []
    for i, c in enumerate(t):
        if c not in t[:i]:
            labels.append(c)
            continue
        n = None if x.shape.ndims is None else x.shape.as_list()[i]
        if n is None:  # after a '...' of unknown rank, count from the end
            n = shape(x)[i - len(t) if "..." in t[:i] else i]
        d = next(fresh)
        idx = range_(n)
        deltas.append((c + d, cast(equal(expand_dims(idx, 1), expand_dims(idx, 0)), x.dtype)))
        labels.append(d)
    on_diag = "".join(s for s, _ in deltas)
    out = [c for c in labels if c in kept or c in on_diag]
    spec = ",".join(["".join(kept)] + [s for s, _ in deltas]) + "->" + "".join(out)
    return einsum(spec, gk, *(dl for _, dl in deltas)), labels, out


@def_grad("Einsum")
def _einsum_grad(op, g):
    """dX_k = einsum(out, other terms -> term_k)(g, other inputs); labels summed in X_k alone are
    broadcast back, repeated labels put on their diagonal, broadcast '...' dims summed.
    UnimplementedError: '...' of unknown rank in several inputs, or absent from the output."""
    eq = op.get_attr("equation")
    inputs = list(op.inputs)
    given, out, _ = _parse_equation(eq, len(inputs))
    # '...' of unknown rank stays one block; with one input holding it, the output's '...' is its own
    opaque = any("..." in t and x.shape.ndims is None for t, x in zip(given, inputs))
    if opaque and (sum("..." in t for t in given) > 1 or "..." not in out):
        raise UnimplementedError(None, None, f"Gradient of einsum {eq!r}: '...' of unknown rank is supported in one "
                                  "input only, and with '...' in the output")
    terms, out = (given, out) if opaque else _explicit_labels(given, out, inputs, eq)
    used = {c for t in terms + [out] for c in t}
    grads = []
    for k, x in enumerate(inputs):
        t = terms[k]
        others = [j for j in range(len(inputs)) if j != k]
        avail = set(out).union(*(terms[j] for j in others))
        kept = [c for i, c in enumerate(t) if c in avail and c not in t[:i]]
        summed = ["..."] if opaque and "..." not in t else []  # the '...' dims X_k was broadcast over
        lhs = ",".join("".join(s) for s in [out] + [terms[j] for j in others])
        gk = einsum(lhs + "->" + "".join(summed + kept), g, *(inputs[j] for j in others)) \
            if others or summed + kept != out else g
        if summed:
            gk = reduce_sum(gk, axis=range_(rank(gk) - len(kept)))
        if len(set(t)) < len(t):
            gk, t, kept = _diagonal(gk, kept, t, x, used, eq)
        if len(kept) < len(t):
            p = t.index("...") if "..." in t else len(t)  # axes after a '...' of unknown rank count from the end
            axes = np.array([i if i < p else i - len(t) for i, c in enumerate(t) if c not in kept], dtype=np.int32)
            gk = broadcast_like(reshape(gk, kept_shape(x, constant(axes))), x)
        if "..." in given[k] and not opaque and not x.shape.is_fully_defined():
            gk = unbroadcast(gk, x)  # a '...' dim unknown when building may be broadcast at run time
        grads.append(gk)
    return _shaped(grads, inputs)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):  # noqa: A002
    """The vector norm of `tensor` over `axis` (all elements by default): "euclidean"/2, 1 or
    np.inf (TF1's `tf.norm` for vectors)."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "norm", [tensor]):
        t = convert_to_tensor(tensor)
        if ord in ("euclidean", "fro", 2, 2.0):
            return m.sqrt(reduce_sum(m.square(m.abs(t) if t.dtype.is_complex else t), axis=axis, keepdims=keep))
        if ord in (1, 1.0):
            return reduce_sum(m.abs(t), axis=axis, keepdims=keep)
        if ord == np.inf:
            return reduce_max(m.abs(t), axis=axis, keepdims=keep)
        raise ValueError(f"norm: ord must be 'euclidean', 1, 2 or np.inf, got {ord!r}")
