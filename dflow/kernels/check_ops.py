"""Debugging ops: `Assert` and the `assert_*` family, `check_numerics`, `Print` and `print`.

As in TF1: a check whose outcome is known when the graph is built raises then (ValueError for a
static rank, TypeError for a dtype, InvalidArgumentError for constant values) and otherwise
becomes an op that raises InvalidArgumentError with its message and data when it runs. An
Assert (or print) op runs only when a fetch depends on it: fetched itself, or named in
`control_dependencies` of an op the fetch needs; it runs on every scheduler, and its error
arrives as InvalidArgumentError from process pools and distributed workers too.

The data of an Assert/Print reach their one task cut to what the message shows (the first
`summarize` entries; the edges of each dim for `print`), so a check never gathers a whole large
array. Print output is written by the process running the task (a worker, on a cluster).
"""

from __future__ import annotations

import sys

import dask.array as da
import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.graph import control_dependencies, get_default_graph, name_scope
from ..graph.ops import Tensor, constant_value
from ..graph.registry import def_grad, not_differentiable, register_op
from ..graph.shape import TensorShape
from . import math_ops
from .array_ops import rank as rank_of
from .array_ops import shape
from .common import FLOAT, apply_op, check_dtype, convert_to_tensor
from .control_ops import group, no_op
from .math_ops import equal, greater_equal
from .reduction_ops import reduce_all

__all__ = ["Assert", "assert_equal", "assert_none_equal", "assert_less", "assert_less_equal", "assert_greater",
           "assert_greater_equal", "assert_positive", "assert_negative", "assert_non_negative",
           "assert_non_positive", "assert_rank", "assert_rank_at_least", "assert_type", "assert_integer",
           "assert_scalar", "check_numerics", "verify_tensor_all_finite", "add_check_numerics_ops", "Print", "print"]

# ---- formatting values as TF1 does --------------------------------------------------------------


def _fmt_elem(v, quote=False):
    """One entry as TF prints it: bools as 1/0, floats in the shortest of %.6g/%.9g that round-trips,
    strings as their text (tf.Print) or quoted (tf.print: `quote`)."""
    b = v[()] if isinstance(v, np.ndarray) and v.dtype.kind in "OSU" else v
    if isinstance(b, (bytes, str)):
        text = b.decode("utf-8", "backslashreplace") if isinstance(b, bytes) else str(b)
        return f'"{text}"' if quote else text
    v = np.asarray(v)
    if v.dtype == np.bool_:
        return "1" if v else "0"
    if v.dtype.kind in "iu":
        return str(int(v))
    if v.dtype.kind == "c":
        return f"({_fmt_elem(v.real)},{_fmt_elem(v.imag)})"
    digits = (15, 17) if v.dtype == np.float64 else (6, 9)
    s = "%.*g" % (digits[0], float(v))
    return s if np.isnan(v) or v.dtype.type(float(s)) == v else "%.*g" % (digits[1], float(v))


def _summarize_v1(a, n, shape=None):
    """TF1's Tensor::SummarizeValue: the first `n` entries (all if n < 0), nested for rank > 1."""
    shape = tuple(a.shape) if shape is None else tuple(shape)
    total = int(np.prod(shape, dtype=np.int64))
    limit = total if n < 0 else min(n, total)
    flat = np.asarray(a).reshape(-1)[:limit]
    if len(shape) <= 1:
        out = " ".join(_fmt_elem(v) for v in flat)
    else:
        parts, pos = [], [0]
        _one_dim(0, shape, limit, flat, pos, parts)
        out = "".join(parts)
    return out + "..." if limit < total else out


def _one_dim(dim, shape, limit, flat, pos, out):
    if pos[0] >= limit:
        return
    if dim == len(shape) - 1:
        for i in range(shape[dim]):
            if pos[0] >= limit:
                if dim != 0:
                    out.append("...")
                return
            out.append((" " if i else "") + _fmt_elem(flat[pos[0]]))
            pos[0] += 1
        return
    for _ in range(shape[dim]):
        opened = pos[0] < limit
        if opened:
            out.append("[")
        _one_dim(dim + 1, shape, limit, flat, pos, out)
        if opened:
            out.append("]")


def _edges(a, k):
    """`a` with each dim longer than 2k cut to its first and last k entries (print_v2's summary)."""
    if k < 0:
        return a
    for axis, d in enumerate(a.shape):
        if d > 2 * k:
            a = np.concatenate([a[(slice(None),) * axis + (slice(0, k),)], a[(slice(None),) * axis + (slice(d - k, d),)]],
                               axis=axis)
    return a


def _summarize_v2(a, k, shape=None, depth=0):
    """print_v2's format (numpy-like, `...` past the first and last k entries of a dim)."""
    shape = tuple(a.shape) if shape is None else tuple(shape)
    a = _edges(np.asarray(a), k) if depth == 0 else a
    if a.ndim == 0:
        return _fmt_elem(a, quote=True)
    if a.ndim == 1:
        items = [_fmt_elem(v, quote=True) for v in a]
    else:
        items = [_summarize_v2(a[i], k, shape[1:], depth + 1) for i in range(a.shape[0])]
    if 0 <= k and shape[0] > 2 * k:
        items = items[:k] + ["..."] + items[k:]
    return "[" + (" " if a.ndim == 1 else "\n" + " " * (depth + 1)).join(items) + "]"


def _render_v1(template, values, shapes, summarize):
    """The `[item]` strings of an Assert/Print message: literals as given, tensors summarized."""
    return ["[" + (t if isinstance(t, str) else _summarize_v1(values[t], summarize, shapes[t])) + "]"
            for t in template]


# ---- moving data summaries into one task -------------------------------------------------------


def _to_host(a):
    if isinstance(a, (np.ndarray, np.generic)):
        return np.asarray(a)
    if type(a).__module__.startswith("cupy"):
        return a.get()
    return np.asarray(a)


def _prefix_index(shape, n):
    """A slice of an array of `shape` holding its first n entries in row-major order (< 2n + 1 of them)."""
    idx = []
    for i, d in enumerate(shape):
        rest = int(np.prod(shape[i + 1:], dtype=np.int64))
        rows = min(d, max(1, -(-n // rest) if rest else d))
        idx.append(slice(0, rows))
        if rows > 1:
            break
    return tuple(idx)


def _cut(ctx, x, summarize, edges=False):
    """(dask array of what a message shows of `x`, x's shape or None when it is data-dependent)."""
    x = ctx.as_dask(x)
    if any(d != d for d in x.shape) or summarize < 0:
        return x, None
    shape = tuple(int(d) for d in x.shape)
    if not edges:
        return x[_prefix_index(shape, summarize)] if x.ndim else x, shape
    for axis, d in enumerate(shape):
        if d > 2 * summarize:
            keep = np.r_[0:summarize, d - summarize:d]
            x = x[(slice(None),) * axis + (keep,)]
    return x, shape


def _one_task(fn, arrays, **kw):
    """A 0-d bool dask array: `fn(*whole arrays, **kw)` in one task (any chunk sizes)."""
    args, n = [], 0
    for x in arrays:  # distinct index names per input: each is contracted to its whole array
        args += [x, tuple(f"i{n + j}" for j in range(x.ndim))]
        n += x.ndim
    return da.blockwise(fn, (), *args, concatenate=True, dtype=bool, meta=np.empty((), dtype=bool), **kw)


# ---- Assert ----------------------------------------------------------------------------------------


def _check_condition(cond):
    if cond.ndim != 0:
        raise InvalidArgumentError(None, None, f"In[0] should be a scalar: {list(cond.shape)}")
    return bool(cond)


def _assert_fail(template, values, shapes, summarize):
    raise InvalidArgumentError(None, None, "assertion failed: " + " ".join(
        _render_v1(template, [_to_host(v) for v in values], shapes, summarize)))


def _assert_eager(xp, cond, *data, template, summarize):
    if not _check_condition(cond):
        _assert_fail(template, data, [None] * len(data), summarize)
    return xp.asarray(True)


def _assert_task(cond, *data, template, summarize, shapes):
    if not _check_condition(cond):
        _assert_fail(template, data, shapes, summarize)
    return np.array(True)


def _assert_lower(ctx, cond, *data, template, summarize):
    cut = [_cut(ctx, d, summarize) for d in data]
    return _one_task(_assert_task, [ctx.as_dask(cond)] + [c for c, _ in cut], template=template,
                     summarize=summarize, shapes=[s for _, s in cut])


def _assert_infer(inputs, attrs):
    if inputs[0].dtype != dtypes.bool:
        raise TypeError(f"Input 'condition' of 'Assert' Op has type {inputs[0].dtype.name} that does not match "
                        "expected type of bool.")
    return TensorShape([]), dtypes.bool


register_op("Assert", _assert_infer, eager=_assert_eager, lower=_assert_lower, stateful=True)
not_differentiable("Assert")


def _template(data):
    """(template, tensors): strings stay literals; everything else becomes a tensor input."""
    template, tensors = [], []
    for d in data:
        if isinstance(d, (str, bytes)):
            template.append(d.decode() if isinstance(d, bytes) else d)
        else:
            template.append(len(tensors))
            tensors.append(convert_to_tensor(d))
    return template, tensors


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TF1 public name
    """An op raising InvalidArgumentError "assertion failed: [data...]" when `condition` is false.

    condition: a scalar bool tensor (InvalidArgumentError at run time if not scalar); data: list
    of tensors and strings, each shown by its first `summarize` (default 3) entries. Returns the
    Operation (one bool output, dflow's handle for scheduling it); it runs only when fetched or
    named in control_dependencies of something fetched. TypeError if condition is not bool.
    """
    condition = convert_to_tensor(condition)
    template, tensors = _template(data)
    out = apply_op("Assert", [condition] + tensors, {"template": template, "summarize": 3 if summarize is None
                                                      else int(summarize)}, name=name, default_name="Assert")
    return out.op


# ---- the assert_* family ------------------------------------------------------------------------------


def _message_prefix(message):
    return f"{message}.  " if message else ""


def _static_string(d):
    if isinstance(d, Tensor):
        v = constant_value(d)
        return str(d) if v is None else str(v)
    return str(d)


def _binary_assert(sym, opname, op_func, static_func, x, y, data, summarize, message, name):
    with name_scope(name, opname, [x, y]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y")
        if data is None:
            data = [f"Condition x {sym} y did not hold element-wise:", f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        if message is not None:
            data = [message] + list(data)
        condition = reduce_all(op_func(x, y))
        xs, ys = constant_value(x), constant_value(y)
        if xs is not None and ys is not None and not np.all(static_func(xs, ys)):
            raise InvalidArgumentError(None, None, "\n".join(_static_string(d) for d in data))
        return Assert(condition, data, summarize=summarize)


def _binary(sym, opname, fn_name, static_func):
    def check(x, y, data=None, summarize=None, message=None, name=None):
        if opname == "assert_equal" and x is y:
            with name_scope(name, opname, [x]):
                return no_op()
        return _binary_assert(sym, opname, getattr(math_ops, fn_name), static_func, x, y, data, summarize,
                              message, name)

    check.__name__ = check.__qualname__ = opname
    check.__doc__ = (f"An Assert that `x {sym} y` holds element-wise (with broadcasting); returns the Operation.\n\n"
                     "    InvalidArgumentError when the graph is built if x and y are constants and it fails, else\n"
                     "    when it runs (message, then the first `summarize` entries of x and y). TypeError for\n"
                     "    operands of different dtypes, ValueError for shapes that cannot broadcast.\n")
    return check


assert_equal = _binary("==", "assert_equal", "equal", np.equal)
assert_none_equal = _binary("!=", "assert_none_equal", "not_equal", np.not_equal)
assert_less = _binary("<", "assert_less", "less", np.less)
assert_less_equal = _binary("<=", "assert_less_equal", "less_equal", np.less_equal)
assert_greater = _binary(">", "assert_greater", "greater", np.greater)
assert_greater_equal = _binary(">=", "assert_greater_equal", "greater_equal", np.greater_equal)


def _unary(sym, opname, against):
    def check(x, data=None, summarize=None, message=None, name=None):
        message = _message_prefix(message)
        with name_scope(name, opname, [x]):
            x = convert_to_tensor(x, name="x")
            if data is None:
                data = [message, f"Condition x {sym} did not hold element-wise:", f"x ({x.name}) = ", x]
            zero = convert_to_tensor(0, dtype=x.dtype)
            return against(x, zero, data, summarize)

    check.__name__ = check.__qualname__ = opname
    check.__doc__ = (f"An Assert that `x {sym}` holds element-wise; returns the Operation (see assert_less).\n")
    return check


assert_positive = _unary("> 0", "assert_positive", lambda x, z, d, s: assert_less(z, x, data=d, summarize=s))
assert_negative = _unary("< 0", "assert_negative", lambda x, z, d, s: assert_less(x, z, data=d, summarize=s))
assert_non_negative = _unary(">= 0", "assert_non_negative",
                             lambda x, z, d, s: assert_less_equal(z, x, data=d, summarize=s))
assert_non_positive = _unary("<= 0", "assert_non_positive",
                             lambda x, z, d, s: assert_less_equal(x, z, data=d, summarize=s))


def _rank_check(x, rank, data, summarize, message, name, opname, words, static_ok, dynamic):
    with name_scope(name, opname, [x, rank]):
        x = convert_to_tensor(x, name="x")
        rank = convert_to_tensor(rank, name="rank")
        message = _message_prefix(message)
        if data is None:
            data = [message, f"Tensor {x.name} must have {words}", rank, "Received shape: ", shape(x)]
        assert_type(rank, dtypes.int32)
        rank_static = constant_value(rank)
        if rank_static is not None:
            if np.ndim(rank_static) != 0:
                raise ValueError("Rank must be a scalar.")
            if x.shape.ndims is not None:
                if not static_ok(x.shape.ndims, int(rank_static)):
                    raise ValueError(f"{message}Tensor {x.name} must have {words} {int(rank_static)}.  Received "
                                     f"rank {x.shape.ndims}, shape {x.shape}")
                return no_op(name="static_checks_determined_all_ok")
        elif rank.shape.ndims not in (None, 0):
            raise ValueError("Rank must be a scalar.")
        return Assert(dynamic(rank_of(x), rank), data, summarize=summarize)


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """An Assert that `x` has rank `rank` (a scalar int32); returns the Operation.

    ValueError when the graph is built if the static rank is known and wrong; a no_op if it is
    known and right; else InvalidArgumentError when it runs. TypeError if rank is not int32.
    """
    return _rank_check(x, rank, data, summarize, message, name, "assert_rank", "rank",
                       lambda a, b: a == b, equal)


def assert_rank_at_least(x, rank, data=None, summarize=None, message=None, name=None):
    """As `assert_rank`, for rank(x) >= rank."""
    return _rank_check(x, rank, data, summarize, message, name, "assert_rank_at_least", "rank at least",
                       lambda a, b: a >= b, greater_equal)


def assert_type(tensor, tf_type, message=None, name=None):
    """A no_op when `tensor` has dtype `tf_type`; TypeError (when the graph is built) otherwise."""
    tf_type = as_dtype(tf_type)
    with name_scope(name, "assert_type", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype != tf_type:
            raise TypeError(f"{_message_prefix(message)}{tensor.name} must be of type {tf_type!r}; got "
                            f"{tensor.dtype!r}")
        return no_op(name="statically_determined_correct_type")


def assert_integer(x, message=None, name=None):
    """A no_op when `x` has an integer dtype; TypeError (when the graph is built) otherwise."""
    with name_scope(name, "assert_integer", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError(f'{_message_prefix(message)}Expected "x" to be integer type.  Found: {x.name} of dtype '
                            f"<dtype: '{x.dtype.name}'>")
        return no_op(name="statically_determined_was_integer")


def assert_scalar(tensor, name=None, message=None):
    """`tensor` if its static rank is 0; ValueError otherwise (unknown rank included, as TF1)."""
    with name_scope(name, "assert_scalar", [tensor]):
        tensor = convert_to_tensor(tensor)
        if tensor.shape.ndims != 0:
            raise ValueError(f"{_message_prefix(message)}Expected scalar shape for {tensor.name}, saw shape: "
                             f"{tensor.shape}.")
        return tensor


# ---- check_numerics ----------------------------------------------------------------------------------


def _check_numerics(xp, x, message):
    bad_nan, bad_inf = bool(xp.any(xp.isnan(x))), bool(xp.any(xp.isinf(x)))
    if bad_nan or bad_inf:
        what = "Inf and NaN" if bad_nan and bad_inf else "NaN" if bad_nan else "Inf"
        raise InvalidArgumentError(None, None, f"{message} : Tensor had {what} values")
    return x


def _check_numerics_infer(inputs, attrs):
    check_dtype(inputs[0], FLOAT, "CheckNumerics", "tensor")
    return inputs[0].shape, inputs[0].dtype


register_op("CheckNumerics", _check_numerics_infer, eager=_check_numerics, elementwise=True)


def check_numerics(tensor, message, name=None):
    """`tensor`, checked when it runs: InvalidArgumentError "message : Tensor had NaN values" (or
    Inf, or Inf and NaN). Each chunk is checked as it is computed. TypeError for non-float dtypes."""
    return apply_op("CheckNumerics", [convert_to_tensor(tensor)], {"message": str(message)}, name=name,
                    default_name="CheckNumerics")


@def_grad("CheckNumerics")
def _check_numerics_grad(op, g):
    return [check_numerics(g, "Not a number (NaN) or infinity (Inf) values detected in gradient. "
                              + op.get_attr("message"))]


def verify_tensor_all_finite(t, msg, name=None):
    """`t`, checked as by `check_numerics(t, msg)` (TF1's verify_tensor_all_finite)."""
    with name_scope(name, "VerifyFinite", [t]):
        return check_numerics(t, msg)


def add_check_numerics_ops():
    """A group op running check_numerics on every float16/32/64 tensor of the default graph
    (message "op_name:output_index"), chained by control dependencies as TF1."""
    graph = get_default_graph()
    check_op = []
    for op in list(graph.get_operations()):
        for t in op.outputs:
            if t.dtype in (dtypes.float16, dtypes.float32, dtypes.float64):
                with control_dependencies(check_op):
                    check_op = [check_numerics(t, message=f"{op.name}:{t.value_index}").op]
    return group(*check_op)


# ---- Print and print ------------------------------------------------------------------------------------


def _should_print(counter, first_n):
    return first_n < 0 or int(counter) < first_n


def _print_message(template, values, shapes, message, summarize):
    return message + "".join(_render_v1(template, [_to_host(v) for v in values], shapes, summarize))


def _print_eager(xp, x, *data, template, message, first_n, summarize, ctx=None):
    if first_n < 0 or _should_print(ctx.run_param(("counter", ctx.op.name)), first_n):
        _write("stderr", _print_message(template, data, [None] * len(data), message, summarize) + "\n")
    return x


def _print_task(counter, *data, template, message, first_n, summarize, shapes):
    if _should_print(counter, first_n):
        _write("stderr", _print_message(template, data, shapes, message, summarize) + "\n")
    return np.array(True)


def _after(block, _done):
    return block


def _print_lower(lctx, x, *data, template, message, first_n, summarize, ctx=None):
    ctx = ctx or lctx
    counter = ctx.run_param(("counter", ctx.op.name)) if first_n >= 0 else np.array(0)
    cut = [_cut(ctx, d, summarize) for d in data]
    done = _one_task(_print_task, [ctx.as_dask(counter)] + [c for c, _ in cut], template=template, message=message,
                     first_n=first_n, summarize=summarize, shapes=[s for _, s in cut])
    x = ctx.as_dask(x)
    return da.map_blocks(_after, x, done, dtype=x.dtype, meta=x._meta)  # every chunk waits for the print


register_op("Print", lambda inputs, attrs: (inputs[0].shape, inputs[0].dtype), eager=_print_eager,
            lower=_print_lower, run_state=True, stateful=True)


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802 - TF1 public name
    """`input_`, writing `message` and the data (first `summarize`, default 3, entries of each) to
    stderr whenever it is computed; only the first `first_n` runs print if first_n >= 0."""
    input_ = convert_to_tensor(input_)
    template, tensors = _template(data)
    attrs = {"template": template, "message": message or "", "first_n": -1 if first_n is None else int(first_n),
             "summarize": 3 if summarize is None else int(summarize)}
    return apply_op("Print", [input_] + tensors, attrs, name=name, default_name="Print")


@def_grad("Print")
def _print_grad(op, g):
    return [g] + [None] * (len(op.inputs) - 1)


def _write(stream, text):
    if callable(stream):
        stream(text.rstrip("\n"))
    elif stream.startswith("file://"):
        with open(stream[len("file://"):], "a") as f:
            f.write(text)
    else:  # looked up when writing, so redirected streams (pytest's capture) see it
        out = getattr(sys, stream)
        out.write(text)
        out.flush()


def _render_v2(node, values, shapes, k, top=True):
    kind, v = node
    if kind == "s":
        return v if top else repr(v)
    if kind == "t":
        return _summarize_v2(_to_host(values[v]), k, shapes[v])
    if kind == "d":
        return "{" + ", ".join(f"{key}: {_render_v2(n, values, shapes, k, False)}" for key, n in v) + "}"
    inner = ", ".join(_render_v2(n, values, shapes, k, False) for n in v)
    return f"[{inner}]" if kind == "l" else f"({inner}{',' if len(v) == 1 else ''})"


def _print_v2_eager(xp, *data, template, stream, summarize, sep, end):
    _write(stream, sep.join(_render_v2(n, data, [None] * len(data), summarize) for n in template) + end)
    return xp.asarray(True)


def _print_v2_task(_token, *data, template, stream, summarize, sep, end, shapes):
    _write(stream, sep.join(_render_v2(n, data, shapes, summarize) for n in template) + end)
    return np.array(True)


def _print_v2_lower(ctx, *data, template, stream, summarize, sep, end):
    cut = [_cut(ctx, d, summarize, edges=True) for d in data]
    token = ctx.as_dask(np.array(True))  # a first input, for prints of no tensors
    return _one_task(_print_v2_task, [token] + [c for c, _ in cut], template=template, stream=stream, summarize=summarize,
                     sep=sep, end=end, shapes=[s for _, s in cut])


register_op("PrintV2", lambda inputs, attrs: (TensorShape([]), dtypes.bool), eager=_print_v2_eager,
            lower=_print_v2_lower, stateful=True)
not_differentiable("PrintV2")


def _v2_template(x, tensors):
    """A nested structure as template nodes: ("s", text), ("t", input index), ("l"|"u", [...]), ("d", [...])."""
    if isinstance(x, (str, bytes)):
        return ("s", x.decode() if isinstance(x, bytes) else x)
    if isinstance(x, dict):
        return ("d", [(repr(k), _v2_template(v, tensors)) for k, v in x.items()])
    if isinstance(x, (list, tuple)):
        return ("l" if isinstance(x, list) else "u", [_v2_template(v, tensors) for v in x])
    if isinstance(x, (Tensor, np.ndarray)) or hasattr(x, "_as_graph_element"):
        tensors.append(convert_to_tensor(x))
        return ("t", len(tensors) - 1)
    return ("s", str(x))


def print_v2(*inputs, **kwargs):
    """An op writing `inputs` (tensors, strings, nested lists/dicts of them) to `output_stream`
    (sys.stderr default, sys.stdout, a "file://path", or a logging function), joined by `sep`
    and followed by `end`; each dim shows its first and last `summarize` (3) entries. Returns the
    Operation; it runs only when fetched or a control dependency of something fetched."""
    stream = kwargs.pop("output_stream", sys.stderr)
    summarize = int(kwargs.pop("summarize", 3))
    sep, end, name = kwargs.pop("sep", " "), kwargs.pop("end", "\n"), kwargs.pop("name", None)
    if kwargs:
        raise ValueError(f"print: unrecognized keyword arguments {sorted(kwargs)}")
    if stream is sys.stderr or stream is sys.__stderr__:
        stream = "stderr"
    elif stream is sys.stdout or stream is sys.__stdout__:
        stream = "stdout"
    elif not (callable(stream) or (isinstance(stream, str) and stream.startswith("file://"))):
        raise ValueError(f"print: unsupported output_stream {stream!r}: use sys.stdout, sys.stderr, a "
                         "'file://path' or a logging function")
    tensors = []
    template = [_v2_template(x, tensors) for x in inputs]
    attrs = {"template": template, "stream": stream, "summarize": summarize, "sep": sep, "end": end}
    return apply_op("PrintV2", tensors, attrs, name=name, default_name="PrintV2", graph=get_default_graph()).op


print = print_v2  # noqa: A001 - TF1 public name (tf.print)

