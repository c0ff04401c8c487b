"""Complex numbers: `complex`, `real`, `imag`, `conj`, `angle` and the magnitude `abs` takes of a
complex tensor (TF1's ops Complex, Real, Imag, Conj, Angle, ComplexAbs), with TF1's gradients.

All are elementwise. The gradients follow TF1's convention for complex tensors: the gradient of a
real loss L with respect to z = x + iy is dL/dx + i dL/dy, so the rule of a holomorphic op f is
g * conj(f'(z)) (math_ops' rules conjugate the derivative with `Conj`, as TF1's math_grad does).
On real inputs `real` and `conj` return the input and `imag` zeros, as TF1, without an op.
"""

from __future__ import annotations

import array_api_compat
import numpy as np

from ..graph import dtypes
from ..graph.graph import name_scope
from ..graph.registry import def_grad, register_op
from .common import apply_op, broadcast_infer, check_dtype, convert_to_tensor, unary_infer
from .grad_util import unbroadcast
from .math_ops import cast

__all__ = ["complex", "real", "imag", "conj", "angle", "to_complex64", "to_complex128"]

_PARTS = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}

# ---- Complex(real, imag) ---------------------------------------------------------------------------


def _complex_infer(inputs, attrs):
    shape, dt = broadcast_infer("f", None, "Complex")(inputs, attrs)
    return shape, attrs["Tout"]


def _complex_kernel(xp, re, im, *, Tout):
    """re + i*im, each part written as it is (re + 1j * im would make an infinite im's real part nan)."""
    shape = np.broadcast_shapes(tuple(re.shape), tuple(im.shape))
    if isinstance(re, np.ndarray) or hasattr(re, "__cuda_array_interface__"):  # numpy, cupy
        out = xp.empty(shape, dtype=Tout.np_dtype, device=array_api_compat.device(re))
        out.real, out.imag = re, im
        return out
    dt = getattr(xp, Tout.name)  # other array-API namespaces: no settable parts
    return xp.astype(re, dt) + xp.astype(im, dt) * 1j


register_op("Complex", _complex_infer, eager=_complex_kernel, elementwise=True)


@def_grad("Complex")
def _complex_grad(op, g):
    x, y = op.inputs
    return [unbroadcast(real(g), x), unbroadcast(imag(g), y)]


def complex(real, imag, name=None):  # noqa: A001 - TF1 public name
    """real + i*imag elementwise (op `Complex`): float32 parts give complex64, float64 complex128.

    The parts broadcast; TypeError unless both are float32 or both float64, ValueError for shapes
    that do not broadcast."""
    with name_scope(name, "Complex", [real, imag]) as scope:
        re = convert_to_tensor(real, name="real")
        im = convert_to_tensor(imag, name="imag", preferred_dtype=re.dtype)
        out = _PARTS.get(re.dtype.base_dtype)
        if out is None or im.dtype.base_dtype != re.dtype.base_dtype:
            raise TypeError(f"The `real` and `imag` components have incorrect types: {re.dtype.name} "
                            f"{im.dtype.name}. They must be consistent, and one of [tf.float32, tf.float64]")
        return apply_op("Complex", [re, im], {"Tout": out}, name=scope)


# ---- Real, Imag, Conj, Angle, ComplexAbs: complex in, real (Conj: complex) out ------------------------

_UNARY = {
    # op type: (eager kernel, real output)
    "Real": (lambda xp, x, Tout=None: xp.real(x), True),
    "Imag": (lambda xp, x, Tout=None: xp.imag(x), True),
    "Angle": (lambda xp, x, Tout=None: xp.atan2(xp.imag(x), xp.real(x)), True),
    "ComplexAbs": (lambda xp, x, Tout=None: xp.abs(x), True),
    "Conj": (lambda xp, x: xp.conj(x), False),
}


def _part_infer(op_type):
    def infer(inputs, attrs):
        check_dtype(inputs[0], "c", op_type, "input")
        return inputs[0].shape, inputs[0].dtype.real_dtype

    return infer


for _type, (_fn, _real_out) in _UNARY.items():
    register_op(_type, _part_infer(_type) if _real_out else unary_infer("c", None, _type), eager=_fn,
                elementwise=True)


def _to_complex(t, like):
    """A real tensor `t` as the complex dtype of `like` (imaginary part 0)."""
    return apply_op("Complex", [t, apply_op("ZerosLike", [t], {"dtype": t.dtype})], {"Tout": like.dtype})


def_grad("Real")(lambda op, g: [_to_complex(g, op.inputs[0])])
def_grad("Imag")(lambda op, g: [apply_op("Complex", [apply_op("ZerosLike", [g], {"dtype": g.dtype}), g],
                                         {"Tout": op.inputs[0].dtype})])
def_grad("Conj")(lambda op, g: [conj(g)])


@def_grad("ComplexAbs")
def _complex_abs_grad(op, g):
    """g * z / |z|, and 0 at z = 0 (TF1.15: complex(g, 0) * sign(z))."""
    z = op.inputs[0]
    return [_to_complex(g, z) * apply_op("Sign", [z])]


@def_grad("Angle")
def _angle_grad(op, g):
    """-g / (Im(z) + i Re(z)) (TF1's rule: -inf+nanj at z = 0)."""
    z = op.inputs[0]
    rot = apply_op("Reciprocal", [complex(imag(z), real(z))])
    return [-_to_complex(g, z) * rot]


def _check_numeric(x, fn):
    if not x.dtype.is_numeric:
        raise TypeError(f"Expected numeric or variant tensor, got dtype {x.dtype!r}. ({fn} of {x.name!r})")


def real(input, name=None):  # noqa: A002 - TF1 argument name
    """The real part of a complex tensor (op `Real`, float32 of complex64, float64 of complex128);
    a real tensor is returned as it is."""
    x = convert_to_tensor(input, name="input")
    _check_numeric(x, "real")
    if not x.dtype.is_complex:
        return x
    return apply_op("Real", [x], {"Tout": x.dtype.real_dtype}, name=name, default_name="Real")


def imag(input, name=None):  # noqa: A002
    """The imaginary part of a complex tensor (op `Imag`); zeros of a real tensor's dtype."""
    x = convert_to_tensor(input, name="input")
    _check_numeric(x, "imag")
    if not x.dtype.is_complex:
        with name_scope(name, "Imag", [x]):
            return apply_op("ZerosLike", [x], {"dtype": x.dtype}, name="zeros_like")
    return apply_op("Imag", [x], {"Tout": x.dtype.real_dtype}, name=name, default_name="Imag")


def conj(x, name=None):
    """The complex conjugate (op `Conj`); a real tensor is returned as it is. TypeError for
    strings and bools."""
    x = convert_to_tensor(x, name="x")
    _check_numeric(x, "conj")
    if not x.dtype.is_complex:
        return x
    return apply_op("Conj", [x], name=name, default_name="Conj")


def angle(input, name=None):  # noqa: A002
    """The argument of each complex value, atan2(imag, real), in [-pi, pi] (op `Angle`). Of a real
    float tensor: pi where it is negative, else 0 (TF1's Select); TypeError for integers."""
    x = convert_to_tensor(input, name="input")
    _check_numeric(x, "angle")
    if x.dtype.is_complex:
        return apply_op("Angle", [x], {"Tout": x.dtype.real_dtype}, name=name, default_name="Angle")
    if not x.dtype.is_floating:
        raise TypeError(f"Expected {x.dtype.name}, but got {np.pi} of type 'float'. (angle of {x.name!r})")
    with name_scope(name, "Angle", [x]):
        zeros = apply_op("ZerosLike", [x], {"dtype": x.dtype})
        pis = apply_op("Add", [zeros, convert_to_tensor(np.pi, dtype=x.dtype)])
        return apply_op("SelectV2", [apply_op("Less", [x, zeros]), pis, zeros], name="Select")


def to_complex64(x, name="ToComplex64"):
    """`x` cast to complex64 (op `Cast`)."""
    return cast(x, dtypes.complex64, name=name)


def to_complex128(x, name="ToComplex128"):
    """`x` cast to complex128 (op `Cast`)."""
    return cast(x, dtypes.complex128, name=name)
