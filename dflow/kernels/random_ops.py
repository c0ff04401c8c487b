"""Random ops: random_normal, random_uniform, truncated_normal (TF1 seeds, a new draw per run).

Seeds follow TF1: the graph-level seed (`dflow.set_random_seed`) and the op-level `seed` give the
op's `(seed, seed2)` attrs through `get_seed` when the op is built; `(0, 0)` means unseeded, and
such an op draws from a seed that the Session picks at random when it opens. Each `Session.run`
that computes the op gives a new draw (the session counts the runs of each op), so two sessions
over one seeded graph see the same sequence of draws.

The draw is counter-based: element `i` (its flat index in the whole array) of run `n` of an op is
a keyed hash of `(seed, seed2, n, i)`, turned into a uniform, normal (Box-Muller) or bounded
integer value. A value depends only on the seeds, the run count and its position, never on the
chunking, the scheduler or which worker computes a chunk: the in-memory (eager) path and every
Dask scheduler give identical arrays. (The numbers are not TF's Philox stream.)
"""

from __future__ import annotations

import math
import zlib

import array_api_compat.numpy as np_xp
import numpy as np

from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.graph import get_seed, name_scope
from ..graph.ops import Tensor, constant_value
from ..graph.registry import register_op
from ..graph.shape import TensorShape, unknown_shape
from .array_ops import partial_shape_value
from .common import apply_op, check_allocation, convert_to_tensor
from .math_ops import add, multiply, subtract

__all__ = ["random_normal", "random_uniform", "truncated_normal"]

_M64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15  # SplitMix64's increment (odd: idx -> idx * GAMMA is a bijection)
_C1 = 0xBF58476D1CE4E5B9
_C2 = 0x94D049BB133111EB
_TRUNCATE_AT = 2.0  # truncated_normal re-draws standard values beyond 2 stddev (TF1)
_BLOCK = 1 << 16  # values computed per step of a chunk


# ---- the counter-based generator ---------------------------------------------------------------


def _mix_int(z):
    """SplitMix64's finalizer on a Python int (a bijection of 64-bit words)."""
    z &= _M64
    z = ((z ^ (z >> 30)) * _C1) & _M64
    z = ((z ^ (z >> 27)) * _C2) & _M64
    return z ^ (z >> 31)


def _hash_words(words):
    """A 64-bit key from a sequence of Python ints (seeds, run count, stream number)."""
    k = 0x6A09E667F3BCC908
    for w in words:
        k = _mix_int(k ^ (int(w) & _M64)) + _GAMMA
    return _mix_int(k)


def _mix(xp, z):
    u = lambda v: xp.asarray(v, dtype=xp.uint64)  # noqa: E731 - constants in the chunk's namespace
    z = (z ^ (z >> u(30))) * u(_C1)
    z = (z ^ (z >> u(27))) * u(_C2)
    return z ^ (z >> u(31))


def _bits(xp, idx, material, stream):
    """64 random bits per flat index `idx` (uint64 array) for one stream of the key material:
    SplitMix64's output at position `idx` of a sequence keyed by a hash of the material."""
    key = xp.asarray(_hash_words((*material, stream)), dtype=xp.uint64)
    return _mix(xp, idx * xp.asarray(_GAMMA, dtype=xp.uint64) + key)


def _unit(xp, bits, ftype):
    """Uniform in [0, 1) of float32 (top 24 bits) or float64 (top 53 bits): exact, never 1.0."""
    mant = 53 if ftype == xp.float64 else 24
    top = xp.astype(bits >> xp.asarray(64 - mant, dtype=xp.uint64), ftype)
    return top * xp.asarray(2.0 ** -mant, dtype=ftype)


def _standard_normal(xp, idx, material, attempt, ftype):
    """Box-Muller from two streams, computed in `ftype` (float32 for float16/32 results, as TF's
    float kernels; float64 for float64); one value per index."""
    u1 = 1.0 - _unit(xp, _bits(xp, idx, material, 2 * attempt), ftype)  # (0, 1]: log is finite
    u2 = _unit(xp, _bits(xp, idx, material, 2 * attempt + 1), ftype)
    return xp.sqrt(-2.0 * xp.log(u1)) * xp.cos((2.0 * math.pi) * u2)


def _uniform_float(xp, idx, material, dtype):
    """Uniform in [0, 1) of `dtype`, from as many bits as its mantissa holds (rounding never
    gives 1.0)."""
    mant = {2: 11, 4: 24, 8: 53}[dtype.size]
    ftype = xp.float64 if dtype.size == 8 else xp.float32
    top = xp.astype(_bits(xp, idx, material, 0) >> xp.asarray(64 - mant, dtype=xp.uint64), ftype)
    return xp.astype(top * xp.asarray(2.0 ** -mant, dtype=ftype), dtype.np_dtype)


def _uniform_int(xp, idx, material, dtype, lo, hi):
    """Integers in [lo, hi) of `dtype` (the modulo bias is below 2**-32 for 32-bit ranges)."""
    lo, hi = int(lo), int(hi)
    if lo >= hi:
        raise ValueError(f"Need minval < maxval, got {lo} >= {hi}")
    r = _bits(xp, idx, material, 0) % xp.asarray(hi - lo, dtype=xp.uint64)
    # add in uint64 (wrapping) so a full int64 range cannot overflow, then reinterpret
    v = xp.astype(r + xp.asarray(lo & _M64, dtype=xp.uint64), xp.int64)
    return xp.astype(v, dtype.np_dtype)


def _truncated_normal(xp, idx, material, ftype):
    z = _standard_normal(xp, idx, material, 0, ftype)
    bad = xp.abs(z) > _TRUNCATE_AT
    attempt = 0
    # each element re-draws from its own next streams: the result does not depend on chunking
    while bool(xp.any(bad)):
        attempt += 1
        z[bad] = _standard_normal(xp, idx[bad], material, attempt, ftype)
        bad = xp.abs(z) > _TRUNCATE_AT
    return z


def _flat_index(xp, shape, offsets, chunk_shape):
    """The flat (C-order) index in the whole array of each element of one chunk: a 1-D uint64
    array in the chunk's C order (1-D also for 0-d chunks: 0-d numpy math warns on wrap-around)."""
    strides = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    idx = xp.zeros((1,) * max(len(shape), 1), dtype=xp.uint64)
    for k, (o, c, s) in enumerate(zip(offsets, chunk_shape, strides)):
        a = xp.arange(o, o + c, dtype=xp.uint64) * xp.asarray(s, dtype=xp.uint64)
        idx = idx + xp.reshape(a, (1,) * k + (c,) + (1,) * (len(shape) - k - 1))
    return xp.reshape(idx, (-1,))


def _values(xp, kind, dtype, material, idx, lo, hi):
    ftype = xp.float64 if dtype.size == 8 else xp.float32
    if kind == "normal":
        return xp.astype(_standard_normal(xp, idx, material, 0, ftype), dtype.np_dtype)
    if kind == "truncated":
        return xp.astype(_truncated_normal(xp, idx, material, ftype), dtype.np_dtype)
    if kind == "uniform":
        return _uniform_float(xp, idx, material, dtype)
    return _uniform_int(xp, idx, material, dtype, lo, hi)


def _draw(xp, kind, dtype, material, shape, offsets, chunk_shape, lo=None, hi=None):
    """The values of one chunk (or of the whole array: offsets all 0, chunk_shape == shape)."""
    idx = _flat_index(xp, shape, offsets, chunk_shape)
    n = idx.shape[0]
    if n <= _BLOCK:
        out = _values(xp, kind, dtype, material, idx, lo, hi)
    else:
        # a few dozen temporaries per value: blocks that stay in cache run about twice as fast
        out = xp.empty((n,), dtype=dtype.np_dtype)
        for s in range(0, n, _BLOCK):
            out[s:s + _BLOCK] = _values(xp, kind, dtype, material, idx[s:s + _BLOCK], lo, hi)
    return xp.reshape(out, tuple(chunk_shape))


def _material(seed, seed2, op_name, counter, session_seed):
    """The key words of one run of one op; unseeded ops key on the session's seed and their name."""
    if seed == 0 and seed2 == 0:
        return (1, int(session_seed), zlib.crc32(op_name.encode()), int(counter))
    return (0, int(seed), int(seed2), int(counter))


def _run_values(ctx, seed, seed2):
    """(counter, session seed or None) of this run: Python ints (eager) or 0-d dask arrays."""
    counter = ctx.run_param(("counter", ctx.op.name))
    base = ctx.run_param(("session_seed",)) if seed == 0 and seed2 == 0 else None
    return counter, base


def _chunk(counter, base, lo, hi, *, kind, out_dtype, seed, seed2, op_name, full_shape, block_info=None):
    """One chunk of a lowered random op (a module-level function: pickled to workers)."""
    info = block_info[None]
    offsets = [a for a, _ in info["array-location"]]
    material = _material(seed, seed2, op_name, counter, 0 if base is None else base)
    return _draw(np_xp, kind, out_dtype, material, full_shape, offsets, info["chunk-shape"], lo, hi)


# ---- op definitions ----------------------------------------------------------------------------


def _static_shape(shape_t, op_type):
    if shape_t.shape.ndims is not None and shape_t.shape.ndims != 1:
        raise ValueError(f"{op_type}: shape must be a 1-D tensor, got shape {shape_t.shape} "
                         f"({shape_t.name!r})")
    if shape_t.op.type == "Shape":  # random_normal(tf.shape(x)): x's partly known static shape
        dims = shape_t.op.inputs[0].shape
        return dims if dims.ndims is not None else unknown_shape()
    dims = partial_shape_value(shape_t)
    if dims is None:
        return unknown_shape()
    if any(d is not None and d < 0 for d in dims):
        raise ValueError(f"{op_type}: shape {dims} has a negative dim")
    return TensorShape(dims)


def _float_infer(op_type):
    def infer(inputs, attrs):
        return _static_shape(inputs[0], op_type), attrs["dtype"]

    return infer


def _int_infer(inputs, attrs):
    shape_t, lo, hi = inputs
    for t, what in ((lo, "minval"), (hi, "maxval")):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"RandomUniformInt: {what} must be a scalar, got shape {t.shape} ({t.name!r})")
        if t.dtype != attrs["dtype"]:
            raise TypeError(f"RandomUniformInt: {what} has dtype {t.dtype.name}, expected {attrs['dtype'].name}")
    lo_v, hi_v = constant_value(lo), constant_value(hi)
    if lo_v is not None and hi_v is not None and int(lo_v) >= int(hi_v):
        raise ValueError(f"RandomUniformInt: need minval < maxval, got {int(lo_v)} >= {int(hi_v)}")
    return _static_shape(shape_t, "RandomUniformInt"), attrs["dtype"]


def _on_host(a):
    """A small array (a shape) as numpy, also when the eager namespace is cupy."""
    return np.asarray(a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else a)


def _eager(kind):
    def eager(xp, shape, lo=None, hi=None, *, dtype, seed, seed2, ctx):
        shape = tuple(int(d) for d in _on_host(shape).reshape(-1))
        if any(d < 0 for d in shape):
            raise ValueError(f"{ctx.op.name}: shape {list(shape)} has a negative dim")
        check_allocation(shape, dtype.np_dtype, ctx.op.type)
        counter, base = _run_values(ctx, seed, seed2)
        material = _material(seed, seed2, ctx.op.name, counter, 0 if base is None else base)
        return _draw(xp, kind, dtype, material, shape, (0,) * len(shape), shape,
                     None if lo is None else int(lo), None if hi is None else int(hi))

    return eager


def _lower(kind):
    # `ctx=` too: some compiler versions also pass the context by keyword to run_state ops.
    def lower(lctx, shape, lo=None, hi=None, *, dtype, seed, seed2, ctx=None):
        ctx = ctx or lctx
        shape = tuple(int(d) for d in ctx.host_value(shape, "the shape of a random op").reshape(-1))
        if any(d < 0 for d in shape):
            raise ValueError(f"{ctx.op.name}: shape {list(shape)} has a negative dim")
        counter, base = _run_values(ctx, seed, seed2)
        if lo is not None:
            lo, hi = ctx.as_dask(lo), ctx.as_dask(hi)
        chunks = ctx.default_chunks(shape, dtype.np_dtype)
        return ctx.da.map_blocks(
            _chunk, counter, base, lo, hi, chunks=chunks, dtype=dtype.np_dtype,
            new_axis=list(range(len(shape))) or None, meta=np.empty((0,) * len(shape), dtype.np_dtype),
            name=ctx.name("-random"), kind=kind, out_dtype=dtype, seed=seed, seed2=seed2,
            op_name=ctx.op.name, full_shape=shape)

    return lower


for _type, _kind in (("RandomStandardNormal", "normal"), ("TruncatedNormal", "truncated"),
                     ("RandomUniform", "uniform")):
    register_op(_type, _float_infer(_type), eager=_eager(_kind), lower=_lower(_kind), run_state=True,
                stateful=True)
register_op("RandomUniformInt", _int_infer, eager=_eager("int"), lower=_lower("int"), run_state=True,
            stateful=True)


# ---- public functions --------------------------------------------------------------------------

_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)


_INT32_MAX = 2**31 - 1


def _shape_tensor(shape):
    """The shape argument as a 1-D int tensor: int32, or int64 when a Python dimension does not
    fit int32 (TF1's shape_tensor: [3_000_000_000] must not wrap to a negative dimension)."""
    if isinstance(shape, Tensor) or hasattr(shape, "_as_graph_element"):
        t = convert_to_tensor(shape)
    elif isinstance(shape, TensorShape):
        dims = shape.as_list()
        t = convert_to_tensor(dims, dtype=_shape_dtype(dims), name="shape")
    else:
        t = convert_to_tensor(shape, preferred_dtype=_shape_dtype(shape), name="shape")
    if not t.dtype.is_integer:
        raise TypeError(f"shape must be an integer tensor, got dtype {t.dtype.name} ({t.name!r})")
    return t


def _shape_dtype(dims):
    if isinstance(dims, (list, tuple)) and any(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                                               and abs(int(d)) > _INT32_MAX for d in dims):
        return dtypes.int64
    return dtypes.int32


def _float_dtype(dtype, fn):
    dtype = as_dtype(dtype)
    if dtype not in _FLOATS:
        raise TypeError(f"{fn}: dtype must be a floating type (float16, float32, float64), got {dtype.name}")
    return dtype


def _scaled(op_type, default_name, shape, mean, stddev, dtype, seed, name):
    dtype = _float_dtype(dtype, default_name)
    with name_scope(name, default_name, [shape, mean, stddev]) as scope:
        shape_t = _shape_tensor(shape)
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        seed1, seed2 = get_seed(seed)
        rnd = apply_op(op_type, [shape_t], _seed_attrs(dtype, seed1, seed2))
        return add(multiply(rnd, stddev_t, name="mul"), mean_t, name=scope)


def _seed_attrs(dtype, seed1, seed2):
    return {"dtype": dtype, "seed": 0 if seed1 is None else int(seed1),
            "seed2": 0 if seed2 is None else int(seed2)}


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal samples of `shape` (1-D ints or int tensor) with `mean` and `stddev` (broadcast).

    dtype float16/32/64 (TypeError otherwise); a new draw on each run (see the module doc for
    seeds). Op `RandomStandardNormal`, scaled by `mul` and shifted by the `random_normal` add.
    """
    return _scaled("RandomStandardNormal", "random_normal", shape, mean, stddev, dtype, seed, name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal samples of `shape` with values beyond 2 stddev from `mean` re-drawn.

    dtype float16/32/64 (TypeError otherwise). Op `TruncatedNormal`, then `mul` and add as
    `random_normal`.
    """
    return _scaled("TruncatedNormal", "truncated_normal", shape, mean, stddev, dtype, seed, name)


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Uniform samples of `shape` in [minval, maxval).

    Float dtypes (16/32/64): maxval defaults to 1; op `RandomUniform` in [0, 1), scaled by
    `(maxval - minval)` and shifted. int32/int64: `maxval` is required (ValueError) and both
    bounds must be scalars with minval < maxval; op `RandomUniformInt` named `random_uniform`.
    Other dtypes raise ValueError (TF1).
    """
    dtype = as_dtype(dtype)
    if dtype not in _FLOATS + (dtypes.int32, dtypes.int64):
        raise ValueError(f"random_uniform: invalid dtype {dtype.name}; accepted dtypes are float16, "
                         "float32, float64, int32, int64")
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    with name_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        shape_t = _shape_tensor(shape)
        lo = convert_to_tensor(minval, dtype=dtype, name="min")
        hi = convert_to_tensor(maxval, dtype=dtype, name="max")
        seed1, seed2 = get_seed(seed)
        if dtype.is_integer:
            return apply_op("RandomUniformInt", [shape_t, lo, hi], _seed_attrs(dtype, seed1, seed2), name=scope)
        rnd = apply_op("RandomUniform", [shape_t], _seed_attrs(dtype, seed1, seed2))
        return add(multiply(rnd, subtract(hi, lo, name="sub"), name="mul"), lo, name=scope)
