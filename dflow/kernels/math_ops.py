"""Elementwise ops: arithmetic, comparisons, logic, unary math, cast, where, clip.

All are `elementwise=True`: their eager kernel runs on whole arrays and, fused by the compiler,
on chunks. Kernels take their namespace `xp` from the inputs (numpy or cupy through
array_api_compat), so a cupy chunk stays on the GPU. A unary or binary op is one row,
`sqrt = _unary(op type, public name, input kinds, eager kernel, gradient rule)`: its registration,
its public function (in `__all__`) and its derivative together; the other ops are short blocks.
"""

from __future__ import annotations

import array_api_compat
import numpy as np

from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.gradients import needs_gradient
from ..graph.graph import name_scope
from ..graph.ops import Tensor
from ..graph.registry import no_gradient, register_op
from ..graph.shape import broadcast_static_shape
from .common import (
    ANY,
    BOOL,
    FLOAT,
    INT,
    NUMERIC,
    REAL,
    STRING,
    apply_op,
    broadcast_infer,
    check_dtype,
    convert_pair,
    convert_to_tensor,
    unary_infer,
)
from .grad_util import unbroadcast

__all__ = []  # the public names, each added where it is defined (`_unary` and `_binary` add theirs)


# ---- gradient helpers: each op's rule sits in its row below (autograd's defvjp, one line an op) --


def _c(t):
    """conj(t) of a complex tensor, `t` itself otherwise: TF1's gradient of a real loss with
    respect to z = x + iy is dL/dx + i dL/dy, so a holomorphic op's rule is g * conj(f'(z))
    (math_grad conjugates so). Conj is complex_ops' op, made by its registered type."""
    return apply_op("Conj", [t], default_name="Conj") if t.dtype.is_complex else t


def _x(op):
    """The op's input, conjugated when complex (the derivatives below are f'(conj x))."""
    return _c(op.inputs[0])


def _y(op):
    """The op's output, conjugated when complex."""
    return _c(op.outputs[0])


def zeros_like_t(t):
    with name_scope(None, "zeros_like", [t]) as scope:
        return apply_op("ZerosLike", [t], {"dtype": t.dtype}, name=scope)


def ones_like_t(t):
    with name_scope(None, "ones_like", [t]) as scope:
        return apply_op("OnesLike", [t], {"dtype": t.dtype}, name=scope)


def _zeros_grad(op, g):
    """The gradient of a piecewise-constant op (Sign, Floor, Ceil, Round)."""
    return [zeros_like_t(_x(op))]


# ---- unary -------------------------------------------------------------------------------------


def _relu(xp, x):
    """max(x, 0). A numpy array's against a zeros array it then holds the result in: numpy's
    maximum with a scalar (0-d) operand has no vectorized loop (2-3x slower at 8,000 to 1,000,000
    float32s), and np.zeros costs no pass of its own (calloc'd pages); not zeros_like, which writes
    its zeros first (that made LeNet's first relu 1.6x slower)."""
    if type(x) is np.ndarray and x.ndim:
        out = np.zeros(x.shape, x.dtype)
        return np.maximum(x, out, out=out)
    return xp.maximum(x, xp.zeros((), dtype=x.dtype, device=array_api_compat.device(x)))


def _sigmoid(xp, x):
    """1 / (1 + exp(-x)): exp is vectorized in numpy, tanh about half as fast; exp(-x) overflowing
    to inf for very negative x gives the limit 0, silently. On float numpy arrays in place on one
    temporary."""
    if type(x) is np.ndarray and x.dtype.kind == "f" and x.size >= 64:
        e = np.negative(x)
        with np.errstate(over="ignore"):
            np.exp(e, out=e)
        e += 1
        return np.reciprocal(e, out=e)
    with np.errstate(over="ignore"):
        return 1 / (1 + xp.exp(-x))


def _log1p(xp, x):
    """log(1 + x). numpy's float32 log1p is a scalar loop (several times its vectorized
    log); on float32 numpy arrays this is Eigen's formula, the one TF1's CPU kernel uses:
    x * log(u) / (u - 1) with u = 1 + x (the rounding of u cancels), x itself where u rounds to 1
    or is +inf. Within a few ulps of the exact value."""
    if not (type(x) is np.ndarray and x.dtype == np.float32 and x.size >= 256):
        return xp.log1p(x)
    return _log1p_f32(x, not x.max() < np.inf)  # (a nan max: may hold inf too)


def _log1p_f32(x, infinite=True):
    """Eigen's log1p of a float32 array, on two temporaries (`infinite`: x may hold +inf)."""
    u = x + np.float32(1)
    d = u - np.float32(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.log(u, out=u)
        u /= d
    u *= x
    same = d == 0  # u rounded to 1: log1p(x) is x to float32 precision
    if infinite:
        same |= x == np.inf
    np.copyto(u, x, where=same)
    return u


def _log1p_unit_f32(x):
    """log1p of a float32 array of values in [0, 1] (or nan): log(u) corrected by the rounding of
    u = 1 + x, log(u) - ((u - 1) - x) / u. The rounding error (u - 1) - x is exact there and the
    correction's own error is below 2**-48, so this is within a few ulps like `_log1p_f32`, in six
    passes that never divide by zero (no errstate, no select)."""
    u = x + np.float32(1)
    d = u - np.float32(1)
    d -= x
    d /= u
    np.log(u, out=u)
    u -= d
    return u


def _unary(op_type, public, kinds, kernel, grad, *, out=None, export=True, **traits):
    """Registers elementwise `op_type`: the input kinds it allows, its eager kernel, its gradient
    rule (`no_gradient`: TF1's NotDifferentiable), its output dtype (None: the input's) and
    `traits`; returns its public function, named `public` (in `__all__` when `export`)."""
    register_op(op_type, unary_infer(kinds, out, op_type), eager=kernel, grad=grad, elementwise=True,
                **traits)

    def fn(x, name=None):
        return apply_op(op_type, [convert_to_tensor(x)], name=name)

    fn.__name__ = public
    fn.__doc__ = f"Elementwise {public} (op `{op_type}`); same shape and dtype as `x`."
    if export:
        __all__.append(public)
    return fn


negative = _unary("Neg", "negative", NUMERIC, lambda xp, x: xp.negative(x), lambda op, g: [-g])
_unary("Abs", "abs", REAL, lambda xp, x: xp.abs(x), lambda op, g: [g * sign(_x(op))])  # abs: below


def abs(x, name=None):  # noqa: A001 - TF1 public name
    """Elementwise |x| (op `Abs`); of a complex tensor its real magnitude (op `ComplexAbs`,
    float32 of complex64, float64 of complex128), as TF1."""
    x = convert_to_tensor(x)
    if x.dtype.is_complex:  # (ComplexAbs is complex_ops' op, made by its registered type)
        return apply_op("ComplexAbs", [x], {"Tout": x.dtype.real_dtype}, name=name, default_name="Abs")
    return apply_op("Abs", [x], name=name)


sign = _unary("Sign", "sign", NUMERIC, lambda xp, x: xp.sign(x), _zeros_grad)
square = _unary("Square", "square", NUMERIC, lambda xp, x: xp.multiply(x, x),
                lambda op, g: [g * (2.0 * _x(op))])
sqrt = _unary("Sqrt", "sqrt", "fc", lambda xp, x: xp.sqrt(x), lambda op, g: [g * 0.5 / _y(op)])
rsqrt = _unary("Rsqrt", "rsqrt", "fc", lambda xp, x: 1 / xp.sqrt(x),
               lambda op, g: [g * -0.5 * _y(op) * _y(op) * _y(op)])
exp = _unary("Exp", "exp", "fc", lambda xp, x: xp.exp(x), lambda op, g: [g * _y(op)])
log = _unary("Log", "log", "fc", lambda xp, x: xp.log(x), lambda op, g: [g / _x(op)])
log1p = _unary("Log1p", "log1p", "fc", lambda xp, x: _log1p(xp, x), lambda op, g: [g / (1.0 + _x(op))])
expm1 = _unary("Expm1", "expm1", "fc", lambda xp, x: xp.expm1(x), lambda op, g: [g * (_y(op) + 1.0)])
sin = _unary("Sin", "sin", "fc", lambda xp, x: xp.sin(x), lambda op, g: [g * cos(_x(op))])
cos = _unary("Cos", "cos", "fc", lambda xp, x: xp.cos(x), lambda op, g: [-g * sin(_x(op))])
tan = _unary("Tan", "tan", "fc", lambda xp, x: xp.tan(x), lambda op, g: [g * (1.0 + square(_y(op)))])
tanh = _unary("Tanh", "tanh", "fc", lambda xp, x: xp.tanh(x), lambda op, g: [g * (1.0 - square(_y(op)))])
sinh = _unary("Sinh", "sinh", "fc", lambda xp, x: xp.sinh(x), lambda op, g: [g * cosh(_x(op))])
cosh = _unary("Cosh", "cosh", "fc", lambda xp, x: xp.cosh(x), lambda op, g: [g * sinh(_x(op))])
asin = _unary("Asin", "asin", "fc", lambda xp, x: xp.asin(x), lambda op, g: [g * rsqrt(1.0 - square(_x(op)))])
acos = _unary("Acos", "acos", "fc", lambda xp, x: xp.acos(x), lambda op, g: [-g * rsqrt(1.0 - square(_x(op)))])
atan = _unary("Atan", "atan", "fc", lambda xp, x: xp.atan(x), lambda op, g: [g / (1.0 + square(_x(op)))])
asinh = _unary("Asinh", "asinh", "fc", lambda xp, x: xp.asinh(x), lambda op, g: [g / cosh(_y(op))])
acosh = _unary("Acosh", "acosh", "fc", lambda xp, x: xp.acosh(x), lambda op, g: [g / sinh(_y(op))])
atanh = _unary("Atanh", "atanh", "fc", lambda xp, x: xp.atanh(x), lambda op, g: [g / (1.0 - square(_x(op)))])
sigmoid = _unary("Sigmoid", "sigmoid", "fc", lambda xp, x: _sigmoid(xp, x),
                 lambda op, g: [g * _y(op) * (1.0 - _y(op))])
reciprocal = _unary("Reciprocal", "reciprocal", "fc", lambda xp, x: 1 / x, lambda op, g: [-g * square(_y(op))])
floor = _unary("Floor", "floor", FLOAT, lambda xp, x: xp.floor(x), _zeros_grad)
ceil = _unary("Ceil", "ceil", FLOAT, lambda xp, x: xp.ceil(x), _zeros_grad)
round = _unary("Round", "round", NUMERIC, lambda xp, x: xp.round(x), _zeros_grad)  # noqa: A001 - TF1 name
is_finite = _unary("IsFinite", "is_finite", FLOAT, lambda xp, x: xp.isfinite(x), no_gradient, out=dtypes.bool)
is_nan = _unary("IsNan", "is_nan", FLOAT, lambda xp, x: xp.isnan(x), no_gradient, out=dtypes.bool)
is_inf = _unary("IsInf", "is_inf", FLOAT, lambda xp, x: xp.isinf(x), no_gradient, out=dtypes.bool)
logical_not = _unary("LogicalNot", "logical_not", BOOL, lambda xp, x: xp.logical_not(x), no_gradient)
# tf.nn.relu (not tf.relu); its gradient is TF1's ReluGrad(gradients, features) of the output: one op
relu = _unary("Relu", "relu", REAL, lambda xp, x: _relu(xp, x),
              lambda op, g: [apply_op("ReluGrad", [g, _y(op)])], export=False, monotone=(0,))


def _relu_grad_kernel(xp, g, y):
    """g where y > 0, else 0, in one pass: g times the mask (numpy multiplies by a bool array
    itself), as TF's ReluGrad, so an infinite g where y <= 0 gives nan there, as in TF."""
    mask = xp.greater(y, xp.zeros((), dtype=y.dtype, device=array_api_compat.device(y)))
    return np.multiply(g, mask) if isinstance(g, np.ndarray) else xp.multiply(g, xp.astype(mask, g.dtype))


register_op("ReluGrad", broadcast_infer(REAL, None, "ReluGrad"), eager=_relu_grad_kernel, elementwise=True,
            grad=lambda op, gg: [apply_op("ReluGrad", [gg, op.inputs[1]]), zeros_like_t(op.inputs[1])])


# ---- cast ----------------------------------------------------------------------------------------


def _cast_infer(inputs, attrs):
    src, dst = inputs[0].dtype, attrs["DstT"]
    if (src == dtypes.string) != (dst == dtypes.string):  # TF1's Cast has no kernel for these
        raise TypeError(f"Cast {src.name} to {dst.name} is not supported ({inputs[0].name!r}); use "
                        "dflow.as_string or dflow.strings.to_number")
    return inputs[0].shape, dst


def _cast_kernel(xp, x, DstT):
    """x as DstT; a complex value cast to a real dtype keeps its real part (as TF1, without numpy's
    ComplexWarning)."""
    if not DstT.is_complex and xp.isdtype(x.dtype, "complex floating"):
        x = xp.real(x)
    return xp.astype(x, DstT.np_dtype)


def _cast_grad(op, g):
    src = _x(op).dtype
    if (src.is_floating or src.is_complex) and (g.dtype.is_floating or g.dtype.is_complex):
        return [cast(g, src)]
    return [None]


register_op("Cast", _cast_infer, eager=_cast_kernel, grad=_cast_grad, elementwise=True)


def cast(x, dtype, name=None):
    """`x` converted elementwise to `dtype` (floats to ints truncate toward zero, as TF1)."""
    dtype = as_dtype(dtype)
    x = convert_to_tensor(x)
    if x.dtype == dtype:
        return x
    return apply_op("Cast", [x], {"DstT": dtype}, name=name)


def to_float(x, name="ToFloat"):
    return cast(x, dtypes.float32, name=name)


def to_double(x, name="ToDouble"):
    return cast(x, dtypes.float64, name=name)


def to_int32(x, name="ToInt32"):
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    return cast(x, dtypes.int64, name=name)


__all__ += ["cast", "to_float", "to_double", "to_int32", "to_int64"]


# ---- binary --------------------------------------------------------------------------------------


def _int_divisor(xp, y):
    """Raises as TF1's integer division and modulo kernels do for a zero divisor (numpy would give
    0). One check of the divisor, only for integer dtypes: float division stays IEEE (inf, nan).
    The plans report the error as the op's InvalidArgumentError ("Integer division by zero")."""
    dt = getattr(y, "dtype", None)
    if dt is None or hasattr(y, "dask"):  # (a dask array is checked chunk by chunk, in its tasks)
        return
    kind = getattr(dt, "kind", None)  # numpy and cupy dtypes; other namespaces are asked
    integral = kind in ("i", "u") if kind is not None else xp.isdtype(dt, "integral")
    if integral and bool(xp.any(y == 0)):
        raise ZeroDivisionError("Integer division by zero")


def _floordiv(xp, x, y):
    _int_divisor(xp, y)
    return xp.floor_divide(x, y)


def _floormod(xp, x, y):
    _int_divisor(xp, y)
    return xp.remainder(x, y)


def _truncatediv(xp, x, y):
    """C's integer division (rounds toward zero), TF1's TruncateDiv (integers only)."""
    _int_divisor(xp, y)
    q = xp.floor_divide(x, y)
    return xp.where((xp.remainder(x, y) != 0) & ((x < 0) != (y < 0)), q + 1, q)


def _truncatemod(xp, x, y):
    """C's remainder (the sign of x), TF1's TruncateMod: fmod for floats too."""
    _int_divisor(xp, y)
    return xp.fmod(x, y) if hasattr(xp, "fmod") else x - y * _truncatediv(xp, x, y)


def _squared_difference(xp, x, y):
    """(x - y)**2; of complex values conj(x - y) * (x - y), as TF1 (a real value in a complex dtype)."""
    d = x - y
    return d * xp.conj(d) if xp.isdtype(d.dtype, "complex floating") else xp.square(d)


def _binary(op_type, public, kinds, kernel, grad, *, out=None, **traits):
    """Registers elementwise `op_type` of two inputs of one dtype, broadcast as numpy does (its
    parts as `_unary`'s); returns its public function, named `public` (in `__all__`)."""
    register_op(op_type, broadcast_infer(kinds, out, op_type), eager=kernel, grad=grad, elementwise=True,
                **traits)

    def fn(x, y, name=None):
        x, y = convert_pair(x, y, op_type)
        return apply_op(op_type, [x, y], name=name)

    fn.__name__ = public
    fn.__doc__ = (f"Elementwise {public} with numpy broadcasting (op `{op_type}`); inputs of one "
                  "dtype (TypeError otherwise), shapes that broadcast (ValueError otherwise).")
    __all__.append(public)
    return fn


def _pow_grad(op, g):
    x0, y0 = op.inputs
    x, y, z = _c(x0), _c(y0), _c(op.outputs[0])
    gx = g * y * pow(x, y - 1.0) if not x.dtype.is_integer else g * y * pow(x, y - 1)
    if not needs_gradient(op, 1):  # x**2 on an eager tape: no log branch for the exponent
        return [unbroadcast(gx, x0), None]
    mask = not_equal(x, 0) if x.dtype.is_complex else greater(x, 0)  # TF1: log(x) where x != 0 / x > 0
    safe_log = where(mask, log(where(mask, x, ones_like_t(x))), zeros_like_t(x))
    gy = g * z * safe_log
    return [unbroadcast(gx, x0), unbroadcast(gy, y0)]


def _minmax_grad(op, g):
    x, y = op.inputs
    mask = greater_equal(x, y) if op.type == "Maximum" else less_equal(x, y)  # ties go to x, as TF1
    zeros = zeros_like_t(g)
    return [unbroadcast(where(mask, g, zeros), x), unbroadcast(where(mask, zeros, g), y)]


add = _binary("Add", "add", NUMERIC + STRING, lambda xp, x, y: xp.add(x, y),
              lambda op, g: [unbroadcast(g, op.inputs[0]), unbroadcast(g, op.inputs[1])], monotone=(0, 1))
subtract = _binary("Sub", "subtract", NUMERIC, lambda xp, x, y: xp.subtract(x, y),
                   lambda op, g: [unbroadcast(g, op.inputs[0]), unbroadcast(-g, op.inputs[1])], monotone=(0,))
multiply = _binary("Mul", "multiply", NUMERIC, lambda xp, x, y: xp.multiply(x, y),
                   lambda op, g: [unbroadcast(g * _c(op.inputs[1]), op.inputs[0]),
                                  unbroadcast(g * _c(op.inputs[0]), op.inputs[1])])
realdiv = _binary("RealDiv", "realdiv", "fc", lambda xp, x, y: xp.divide(x, y),
                  lambda op, g: [unbroadcast(g / _c(op.inputs[1]), op.inputs[0]),
                                 unbroadcast(-g * _c(op.inputs[0]) / square(_c(op.inputs[1])), op.inputs[1])])
floordiv = _binary("FloorDiv", "floordiv", REAL, _floordiv, no_gradient)
floormod = _binary("FloorMod", "floormod", REAL, _floormod,
                   lambda op, g: [unbroadcast(g, op.inputs[0]),
                                  unbroadcast(-g * floor(op.inputs[0] / op.inputs[1]), op.inputs[1])])
truncatediv = _binary("TruncateDiv", "truncatediv", INT, _truncatediv, no_gradient)
truncatemod = _binary("TruncateMod", "truncatemod", REAL, _truncatemod, None)  # no gradient rule, as TF1
# atan2(y, x): the angle of the point (x, y), in [-pi, pi]
atan2 = _binary("Atan2", "atan2", FLOAT, lambda xp, y, x: xp.atan2(y, x), lambda op, g: [
    unbroadcast(g * op.inputs[1] / (square(op.inputs[0]) + square(op.inputs[1])), op.inputs[0]),
    unbroadcast(-g * op.inputs[0] / (square(op.inputs[0]) + square(op.inputs[1])), op.inputs[1])])
pow = _binary("Pow", "pow", NUMERIC, lambda xp, x, y: xp.pow(x, y), _pow_grad)  # noqa: A001 - TF1 public name
maximum = _binary("Maximum", "maximum", REAL, lambda xp, x, y: xp.maximum(x, y), _minmax_grad, monotone=(0, 1))
minimum = _binary("Minimum", "minimum", REAL, lambda xp, x, y: xp.minimum(x, y), _minmax_grad, monotone=(0, 1))
squared_difference = _binary("SquaredDifference", "squared_difference", NUMERIC, _squared_difference, lambda op, g: [
    unbroadcast(2.0 * g * (op.inputs[0] - op.inputs[1]), op.inputs[0]),
    unbroadcast(-2.0 * g * (op.inputs[0] - op.inputs[1]), op.inputs[1])])
equal = _binary("Equal", "equal", ANY + STRING, lambda xp, x, y: xp.equal(x, y), no_gradient, out=dtypes.bool)
not_equal = _binary("NotEqual", "not_equal", ANY + STRING, lambda xp, x, y: xp.not_equal(x, y), no_gradient,
                    out=dtypes.bool)
less = _binary("Less", "less", REAL, lambda xp, x, y: xp.less(x, y), no_gradient, out=dtypes.bool)
less_equal = _binary("LessEqual", "less_equal", REAL, lambda xp, x, y: xp.less_equal(x, y), no_gradient,
                     out=dtypes.bool)
greater = _binary("Greater", "greater", REAL, lambda xp, x, y: xp.greater(x, y), no_gradient, out=dtypes.bool)
greater_equal = _binary("GreaterEqual", "greater_equal", REAL, lambda xp, x, y: xp.greater_equal(x, y),
                        no_gradient, out=dtypes.bool)
logical_and = _binary("LogicalAnd", "logical_and", BOOL, lambda xp, x, y: xp.logical_and(x, y), no_gradient)
logical_or = _binary("LogicalOr", "logical_or", BOOL, lambda xp, x, y: xp.logical_or(x, y), no_gradient)
logical_xor = _binary("LogicalXor", "logical_xor", BOOL, lambda xp, x, y: xp.logical_xor(x, y), no_gradient)
floor_div, mod = floordiv, floormod
sub, mul = subtract, multiply
__all__ += ["floor_div", "mod"]

_TRUEDIV_INT = {"int8": dtypes.float32, "uint8": dtypes.float32, "int16": dtypes.float32,
                "uint16": dtypes.float32, "int32": dtypes.float64, "uint32": dtypes.float64,
                "int64": dtypes.float64, "uint64": dtypes.float64}


def truediv(x, y, name=None):
    """x / y; integer inputs are cast to floats first (int32 -> float64), as TF1's truediv."""
    with name_scope(name, "truediv", [x, y]) as scope:
        x, y = convert_pair(x, y, "truediv")
        target = _TRUEDIV_INT.get(x.dtype.name)
        if target is not None:
            x, y = cast(x, target), cast(y, target)
        return apply_op("RealDiv", [x, y], name=scope)


divide = truediv


def div(x, y, name=None):
    """TF1's Python-2 style division: floor division for integers, true division for floats."""
    x, y = convert_pair(x, y, "div")
    if x.dtype.is_integer:
        return apply_op("FloorDiv", [x, y], name=name, default_name="div")
    return apply_op("RealDiv", [x, y], name=name, default_name="div")


def scalar_mul(scalar, x, name=None):
    return multiply(scalar, x, name=name)


__all__ += ["truediv", "divide", "div", "scalar_mul"]


# ---- n-ary elementwise --------------------------------------------------------------------------


def _select_infer(inputs, attrs):
    c, x, y = inputs
    check_dtype(c, BOOL, "Select", "condition")
    if x.dtype != y.dtype:
        raise TypeError(f"where: x and y must have the same dtype, got {x.dtype.name} ({x.name!r}) and "
                        f"{y.dtype.name} ({y.name!r})")
    shape, _ = broadcast_infer(ANY + STRING, None, "Select")([x, y], attrs)
    try:
        shape = broadcast_static_shape(c.shape, shape)
    except ValueError:
        raise ValueError(f"where: condition shape {c.shape} does not broadcast with {shape}") from None
    return shape, x.dtype


def _select_grad(op, g):
    c, x, y = op.inputs
    zeros = zeros_like_t(g)
    return [None, unbroadcast(where(c, g, zeros), x), unbroadcast(where(c, zeros, g), y)]


register_op("SelectV2", _select_infer, eager=lambda xp, c, x, y: xp.where(c, x, y), grad=_select_grad,
            elementwise=True)


def where(condition, x=None, y=None, name=None):
    """Elementwise `x if condition else y` with numpy broadcasting (op `SelectV2`); with one
    argument, the int64 coordinates of the true elements of `condition`, shape [None, rank]."""
    if x is None and y is None:  # coordinates of the true elements (a data-dependent shape): the
        # Where op of data_dependent_ops, made by its registered type (that module is above this one)
        return apply_op("Where", [convert_to_tensor(condition)], name=name, default_name="Where")
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    condition = convert_to_tensor(condition)
    if not condition.dtype.is_bool:
        raise TypeError(f"where: condition {condition.name!r} must be bool, got {condition.dtype.name}")
    x, y = convert_pair(x, y, "where")
    return apply_op("SelectV2", [condition, x, y], name=name, default_name="Select")


where_v2 = where
__all__ += ["where", "where_v2"]


def _clip_infer(inputs, attrs):
    return broadcast_infer(REAL, None, "ClipByValue")(inputs, attrs)


def _clip_grad(op, g):
    t, lo, hi = op.inputs
    zeros = zeros_like_t(g)
    below, above = less(t, lo), greater(t, hi)
    inside = logical_not(logical_or(below, above))
    return [unbroadcast(where(inside, g, zeros), t), unbroadcast(where(below, g, zeros), lo),
            unbroadcast(where(above, g, zeros), hi)]


# TF1's order, max(min(t, hi), lo): with min above max every value becomes min (numpy's clip gives max)
register_op("ClipByValue", _clip_infer, eager=lambda xp, t, lo, hi: xp.maximum(xp.minimum(t, hi), lo),
            grad=_clip_grad, elementwise=True)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clips `t` elementwise to [min, max]; bounds broadcast against `t`."""
    t = convert_to_tensor(t)
    lo = convert_to_tensor(clip_value_min, dtype=t.dtype)
    hi = convert_to_tensor(clip_value_max, dtype=t.dtype)
    shape = t.shape
    out = apply_op("ClipByValue", [t, lo, hi], name=name)
    if shape.ndims is not None and out.shape.ndims is not None and out.shape.ndims != shape.ndims:
        raise ValueError(f"clip_by_value: clip bounds must not change the shape of {t.name!r}")
    return out


__all__ += ["clip_by_value"]


# ---- Tensor operator overloads (TF1 names: add, sub, mul, truediv, ...) -------------------------


def _binop(fn, opname):
    def forward(self, other):
        with name_scope(None, opname, [self, other]) as scope:
            return fn(self, other, name=scope)

    def reverse(self, other):
        with name_scope(None, opname, [self, other]) as scope:
            return fn(other, self, name=scope)

    return forward, reverse


def _truediv_op(x, y, name=None):
    x, y = convert_pair(x, y, "truediv")
    target = _TRUEDIV_INT.get(x.dtype.name)
    if target is not None:
        x, y = cast(x, target), cast(y, target)
    return apply_op("RealDiv", [x, y], name=name)


def _logic_op(op_type):
    def fn(x, y, name=None):
        x, y = convert_pair(x, y, op_type)
        if not x.dtype.is_bool or not y.dtype.is_bool:
            raise TypeError(f"Operator {op_type} ({name or ''}) needs bool tensors, got {x.dtype.name} and "
                            f"{y.dtype.name}")
        return apply_op(op_type, [x, y], name=name)

    return fn


for _meth, _fn, _name in [
    ("add", add, "add"), ("sub", subtract, "sub"), ("mul", multiply, "mul"),
    ("truediv", _truediv_op, "truediv"), ("floordiv", floordiv, "floordiv"), ("mod", floormod, "mod"),
    ("pow", pow, "pow"), ("and", _logic_op("LogicalAnd"), "and"),
    ("or", _logic_op("LogicalOr"), "or"), ("xor", _logic_op("LogicalXor"), "xor"),
]:
    _f, _r = _binop(_fn, _name)
    Tensor._override_operator(f"__{_meth}__", _f)
    Tensor._override_operator(f"__r{_meth}__", _r)

Tensor._override_operator("__lt__", lambda self, other: less(self, other))
Tensor._override_operator("__le__", lambda self, other: less_equal(self, other))
Tensor._override_operator("__gt__", lambda self, other: greater(self, other))
Tensor._override_operator("__ge__", lambda self, other: greater_equal(self, other))
Tensor._override_operator("__neg__", lambda self: negative(self))
Tensor._override_operator("__abs__", lambda self: abs(self))
Tensor._override_operator("__invert__", lambda self: logical_not(self))


# ---- composites (TF1 names built from the ops above: their gradients come with them) -----------


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), without overflow."""
    x = convert_to_tensor(x)
    return subtract(minimum(x, 0.0), log1p(exp(-abs(x))), name=name)


def divide_no_nan(x, y, name=None):
    """x / y, and 0 where y is 0."""
    x, y = convert_pair(x, y, "DivNoNan")
    safe = where_v2(equal(y, 0), _ones_like(y), y)
    return where_v2(equal(y, 0), _zeros_like(x / safe), x / safe, name=name)


def xlogy(x, y, name=None):
    """x * log(y), and 0 where x is 0."""
    x, y = convert_pair(x, y, "Xlogy")
    safe = where_v2(equal(x, 0), _ones_like(y), y)
    return where_v2(equal(x, 0), _zeros_like(x * safe), x * log(safe), name=name)


def xdivy(x, y, name=None):
    """x / y, and 0 where x is 0."""
    x, y = convert_pair(x, y, "Xdivy")
    safe = where_v2(equal(x, 0), _ones_like(y), y)
    return where_v2(equal(x, 0), _zeros_like(x / safe), x / safe, name=name)


__all__ += ["log_sigmoid", "divide_no_nan", "xlogy", "xdivy"]


def _ones_like(t):
    return t * 0 + 1


def _zeros_like(t):
    return t * 0
