"""The FFT family over the innermost 1, 2 or 3 axes: fft/ifft(2d, 3d) of complex tensors (ops FFT,
IFFT, FFT2D, ...) and rfft/irfft(2d, 3d) between real and complex (ops RFFT, IRFFT, ...) with an
`fft_length` input, with TF1's shape rules and gradients (TF's spectral_grad.py).

Kernels are the array namespace's FFT (np.fft; cupy.fft on a GPU), computed in complex128 (float64 for irfft) and cast back to the op's dtype
(complex64 in, complex64 out: so the figures are those of a double-precision transform rounded
once, within float32 rounding of TF's). On Dask the transformed axes are gathered into one chunk
and the leading axes keep theirs: one task per leading-dims chunk.
"""

from __future__ import annotations

import array_api_compat
import numpy as np

from ..graph import dtypes
from ..graph.ops import constant_value
from ..graph.registry import def_grad, register_op
from ..graph.shape import TensorShape, unknown_shape
from .array_ops import shape
from .common import apply_op, check_dtype, convert_to_tensor, host_ints
from .complex_ops import real
from .index_ops import strided_slice
from .math_ops import cast, multiply
from .pad_ops import pad
from .reduction_ops import reduce_prod

__all__ = ["fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "rfft", "irfft", "rfft2d", "irfft2d", "rfft3d",
           "irfft3d"]

_COMPLEX = {"FFT": 1, "IFFT": 1, "FFT2D": 2, "IFFT2D": 2, "FFT3D": 3, "IFFT3D": 3}
_REAL = {"RFFT": 1, "IRFFT": 1, "RFFT2D": 2, "IRFFT2D": 2, "RFFT3D": 3, "IRFFT3D": 3}
_OUT = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


def _fft_of(xp):
    """The namespace's FFT module (numpy's, cupy's, an array-API extension's)."""
    return getattr(xp, "fft", None) or np.fft


def _dt(xp, name):
    return getattr(xp, name, None) or np.dtype(name)


def _size_of(x):
    return int(np.prod(tuple(x.shape)))


def _check_rank(x, k, op_type):
    if x.shape.ndims is not None and x.shape.ndims < k:
        raise ValueError(f"Shape must be at least rank {k} but is rank {x.shape.ndims} for '{op_type}' "
                         f"(input {x.name!r} has shape {x.shape})")


# ---- complex to complex --------------------------------------------------------------------------


def _c2c_infer(op_type):
    def infer(inputs, attrs):
        (x,) = inputs
        check_dtype(x, "c", op_type, "input")
        _check_rank(x, _COMPLEX[op_type], op_type)
        return x.shape, x.dtype

    return infer


def _c2c_kernel(op_type):
    k, inverse = _COMPLEX[op_type], op_type.startswith("I")

    def kernel(xp, x):
        axes = tuple(range(-k, 0))
        if _size_of(x) == 0:
            return xp.asarray(x, copy=True)
        f = getattr(_fft_of(xp), "ifftn" if inverse else "fftn")
        return xp.astype(f(xp.astype(x, _dt(xp, "complex128")), axes=axes), x.dtype)

    return kernel


def _lower_inner(ctx, x, k, fn, inner, dtype):
    """`fn` on each leading-dims chunk of `x` whose last `k` axes are one chunk; `inner`: the output's
    last k sizes."""
    x = ctx.as_dask(x)
    x = x.rechunk({ax: -1 for ax in range(x.ndim - k, x.ndim)})
    chunks = x.chunks[:x.ndim - k] + tuple((n,) for n in inner)
    return x.map_blocks(fn, chunks=chunks, dtype=dtype, meta=np.empty((0,) * x.ndim, dtype=dtype))


def _c2c_lower(op_type):
    k, kernel = _COMPLEX[op_type], _c2c_kernel(op_type)

    def lower(ctx, x):
        x = ctx.as_dask(x)
        return _lower_inner(ctx, x, k, lambda b: kernel(np, b), x.shape[x.ndim - k:], x.dtype)

    return lower


for _t in _COMPLEX:
    register_op(_t, _c2c_infer(_t), eager=_c2c_kernel(_t), lower=_c2c_lower(_t))


def _size(t, k):
    """The number of elements of `t`'s last k axes, as a scalar of its dtype."""
    dims = t.shape.as_list()[-k:] if t.shape.ndims is not None else [None]
    if None not in dims:
        return convert_to_tensor(np.asarray(np.prod(dims), t.dtype.as_numpy_dtype))
    return cast(reduce_prod(shape(t)[-k:]), t.dtype)


# spectral_grad.py: fft's gradient is ifft times the size, ifft's is fft divided by it
@def_grad(*[t for t in _COMPLEX if not t.startswith("I")])
def _fft_grad(op, g):
    k = _COMPLEX[op.type]
    return [multiply(apply_op("I" + op.type, [g]), _size(g, k))]


@def_grad(*[t for t in _COMPLEX if t.startswith("I")])
def _ifft_grad(op, g):
    k = _COMPLEX[op.type]
    return [apply_op(op.type[1:], [g]) / _size(g, k)]


# ---- real to complex and back ----------------------------------------------------------------------


def _lengths_value(fft_length, k, op_type):
    v = constant_value(fft_length)
    if v is None:
        return None
    v = [int(n) for n in np.asarray(v).reshape(-1)]
    if len(v) != k:
        raise ValueError(f"Dimension must be {k} but is {len(v)} for '{op_type}' (fft_length {v})")
    return v


def _real_infer(op_type):
    k, inverse = _REAL[op_type], op_type.startswith("I")

    def infer(inputs, attrs):
        x, length = inputs
        check_dtype(x, "c" if inverse else "f", op_type, "input")
        check_dtype(length, "i", op_type, "fft_length")
        _check_rank(x, k, op_type)
        out = x.dtype.real_dtype if inverse else _OUT.get(x.dtype)
        if out is None:
            raise TypeError(f"Value passed to parameter 'input' has DataType {x.dtype.name} not in list of allowed "
                            f"values: float32, float64 (op '{op_type}', tensor {x.name!r})")
        n = _lengths_value(length, k, op_type)
        if x.shape.ndims is None:
            return unknown_shape(), out
        dims = x.shape.as_list()
        if n is None:
            inner = [None] * k
        else:
            inner = list(n) if inverse else list(n[:-1]) + [n[-1] // 2 + 1]
        return TensorShape(dims[:len(dims) - k] + inner), out

    return infer


def _real_kernel(op_type):
    k, inverse = _REAL[op_type], op_type.startswith("I")

    def kernel(xp, x, fft_length):
        s = host_ints(fft_length)
        axes = tuple(range(-k, 0))
        fftm, dev, lead = _fft_of(xp), array_api_compat.device(x), tuple(x.shape[:x.ndim - k])
        single = xp.isdtype(x.dtype, "complex floating") and x.dtype == _dt(xp, "complex64") or \
            x.dtype == _dt(xp, "float32")
        if inverse:  # (irfftn crops or zero-pads each axis as TF1: the last to s[-1] // 2 + 1)
            out = _dt(xp, "float32" if single else "float64")
            if 0 in s or _size_of(x) == 0:
                return xp.zeros(lead + tuple(s), dtype=out, device=dev)
            return xp.astype(fftm.irfftn(xp.astype(x, _dt(xp, "complex128")), s=s, axes=axes), out)
        out = _dt(xp, "complex64" if single else "complex128")
        if 0 in s or _size_of(x) == 0:
            return xp.zeros(lead + tuple(s[:-1]) + (s[-1] // 2 + 1,), dtype=out, device=dev)
        return xp.astype(fftm.rfftn(xp.astype(x, _dt(xp, "float64")), s=s, axes=axes), out)

    return kernel


def _real_lower(op_type):
    k, inverse, kernel = _REAL[op_type], op_type.startswith("I"), _real_kernel(op_type)

    def lower(ctx, x, fft_length):
        s = [int(n) for n in np.asarray(ctx.host_value(fft_length, "fft_length")).reshape(-1)]
        x = ctx.as_dask(x)
        inner = s if inverse else s[:-1] + [s[-1] // 2 + 1]
        out = np.dtype(x.dtype.type(0).real.dtype) if inverse else \
            np.dtype(np.complex64 if x.dtype == np.float32 else np.complex128)
        return _lower_inner(ctx, x, k, lambda b: kernel(np, b, s), inner, out)

    return lower


for _t in _REAL:
    register_op(_t, _real_infer(_t), eager=_real_kernel(_t), lower=_real_lower(_t))


def _pad_or_crop(t, sizes):
    """`t` with its last len(sizes) axes cropped or zero-padded at the end to `sizes` (static)."""
    dims = t.shape.as_list()
    k = len(sizes)
    lead = len(dims) - k
    begin, end, paddings = [0] * len(dims), list(dims), [[0, 0] for _ in dims]
    for i, n in enumerate(sizes):
        end[lead + i] = min(dims[lead + i], n)
        paddings[lead + i][1] = max(0, n - dims[lead + i])
    t = strided_slice(t, begin, end)
    return pad(t, paddings) if any(p[1] for p in paddings) else t


@def_grad(*[t for t in _REAL if not t.startswith("I")])
def _rfft_grad(op, g):
    """The adjoint of rfft (the value of spectral_grad.py's _RFFTGradHelper): g zero-extended to the
    full spectrum, N * IFFT of it, its real part, cropped or padded back to the input's shape."""
    k = _REAL[op.type]
    x, length = op.inputs
    s = _lengths_value(length, k, op.type)
    if s is None or not x.shape.is_fully_defined():
        raise ValueError(f"The gradient of {op.type} needs static shapes and fft_length ({op.name!r})")
    c2c = {1: "FFT", 2: "FFT2D", 3: "FFT3D"}[k]
    # rfft = keep the first s[-1] // 2 + 1 bins of the complex FFT of the padded input; its adjoint:
    # g zero-extended to the full spectrum, through FFT's adjoint (N * IFFT), its real part
    full = _pad_or_crop(g, list(s))
    n = float(np.prod(s))
    xg = real(apply_op("I" + c2c, [full])) * np.asarray(n, x.dtype.as_numpy_dtype)
    return [_pad_or_crop(xg, x.shape.as_list()[x.shape.ndims - k:]), None]


@def_grad(*[t for t in _REAL if t.startswith("I")])
def _irfft_grad(op, g):
    """The adjoint of irfft: rfft of g divided by the size, the interior bins doubled (each stands
    for itself and its mirror), cropped/padded back to the input's shape."""
    k = _REAL[op.type]
    x, length = op.inputs
    s = _lengths_value(length, k, op.type)
    if s is None or not x.shape.is_fully_defined():
        raise ValueError(f"The gradient of {op.type} needs static shapes and fft_length ({op.name!r})")
    n_last = s[-1] // 2 + 1
    y = apply_op(op.type[1:], [g, convert_to_tensor(np.asarray(s, np.int32))])
    w = np.full(n_last, 2.0)
    w[0] = 1.0
    if s[-1] % 2 == 0:
        w[-1] = 1.0
    scale = w / float(np.prod(s))
    y = multiply(y, convert_to_tensor(scale.astype(x.dtype.as_numpy_dtype)))
    return [_pad_or_crop(y, x.shape.as_list()[x.shape.ndims - k:]), None]


# ---- public functions --------------------------------------------------------------------------------


def _c2c(op_type, public):
    def fn(input, name=None):  # noqa: A002 - TF1 argument name
        x = convert_to_tensor(input, name="input")
        return apply_op(op_type, [x], name=name, default_name=op_type)

    fn.__name__ = public
    inv = op_type.startswith("I")
    fn.__doc__ = (f"The {'inverse ' if inv else ''}discrete Fourier transform over the innermost {_COMPLEX[op_type]} "
                  f"axes (op `{op_type}`): complex64/complex128 in, the same out"
                  f"{' (divided by the size)' if inv else ''}. TypeError for real input, ValueError "
                  "for a rank below the transform's.")
    return fn


fft, ifft = _c2c("FFT", "fft"), _c2c("IFFT", "ifft")
fft2d, ifft2d = _c2c("FFT2D", "fft2d"), _c2c("IFFT2D", "ifft2d")
fft3d, ifft3d = _c2c("FFT3D", "fft3d"), _c2c("IFFT3D", "ifft3d")


def _r2c(op_type, public):
    k, inverse = _REAL[op_type], op_type.startswith("I")

    def fn(input_tensor, fft_length=None, name=None):
        x = convert_to_tensor(input_tensor, name="input_tensor")
        if fft_length is None:  # TF1: the input's inner dims (irfft: the last as 2 * (n - 1))
            dims = x.shape.as_list()[-k:] if x.shape.ndims is not None else [None]
            if None in dims:
                raise ValueError(f"{public}: fft_length is needed when the inner dims of {x.name!r} are unknown "
                                 f"({x.shape})")
            fft_length = dims[:-1] + [2 * (dims[-1] - 1)] if inverse else dims
        length = convert_to_tensor(fft_length, dtype=dtypes.int32, name="fft_length")
        return apply_op(op_type, [x, length], name=name, default_name=op_type)

    fn.__name__ = public
    fn.__doc__ = (f"{'Inverse ' if inverse else ''}real-valued FFT over the innermost {k} axes (op `{op_type}`): "
                  + ("complex64 -> float32, complex128 -> float64; the output's inner dims are fft_length."
                     if inverse else "float32 -> complex64, float64 -> complex128; the last inner dim is "
                     "fft_length[-1] // 2 + 1.")
                  + " The input is cropped or zero-padded to fft_length (int32, length "
                  f"{k}; default the input's inner dims).")
    return fn


rfft, irfft = _r2c("RFFT", "rfft"), _r2c("IRFFT", "irfft")
rfft2d, irfft2d = _r2c("RFFT2D", "rfft2d"), _r2c("IRFFT2D", "irfft2d")
rfft3d, irfft3d = _r2c("RFFT3D", "rfft3d"), _r2c("IRFFT3D", "irfft3d")
