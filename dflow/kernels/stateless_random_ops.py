"""Stateless random ops: `tf.random.stateless_*` (and TF 1.15's `tf.contrib.stateless` names).

A stateless draw is a pure function of its `seed` (an int32/int64 tensor of shape [2]), its shape
and its parameters: the same seed gives the same values on every run, in every session, on every
scheduler and in every chunking. Element `i` (flat index in the whole output) is computed from
random_ops' counter-based streams keyed by the seed alone (`(2, seed[0], seed[1])`: no run count,
no op name), so a Dask chunk computes exactly its part of the whole array. Gamma, Poisson and
binomial draws use random_samplers. The numbers are not TF's Philox draws, only their
distributions.

Ops (TF 1.15's): StatelessRandomUniform / StatelessRandomNormal / StatelessTruncatedNormal
(shape, seed), StatelessRandomUniformInt (shape, seed, minval, maxval), StatelessRandomBinomial
(shape, seed, counts, probs), StatelessRandomGammaV2 (shape, seed, alpha) and
StatelessRandomPoisson (shape, seed, lam); parameters broadcast to `shape`. stateless_categorical
/ stateless_multinomial are inverse-CDF composites over a stateless uniform.
"""

from __future__ import annotations

import numpy as np

from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.graph import name_scope
from ..graph.registry import not_differentiable, register_op
from ..graph.shape import broadcast_static_shape
from . import random_samplers
from .array_ops import shape as shape_of
from .array_ops import stack
from .common import apply_op, convert_to_tensor
from .manip_ops import expand_dims
from .math_ops import add, cast, exp, less_equal, maximum, minimum, multiply, realdiv, subtract
from .random_ops import _FLOATS, _draw, _float_dtype, _on_host, _shape_tensor, _static_shape
from .reduction_ops import cumsum, reduce_max, reduce_sum

__all__ = ["stateless_random_uniform", "stateless_random_normal", "stateless_truncated_normal",
           "stateless_multinomial", "stateless_categorical", "stateless_random_binomial",
           "stateless_random_gamma", "stateless_random_poisson"]

_BASIC = {"StatelessRandomUniform": "uniform", "StatelessRandomNormal": "normal",
          "StatelessTruncatedNormal": "truncated", "StatelessRandomUniformInt": "int"}
_PARAM = {"StatelessRandomBinomial": "binomial", "StatelessRandomGammaV2": "gamma",
          "StatelessRandomPoisson": "poisson"}


def _seed_material(seed, op_name):
    seed = _on_host(seed)
    if seed.shape != (2,):
        raise ValueError(f"{op_name}: seed must have shape [2], not {list(seed.shape)}")
    return (2, int(seed[0]), int(seed[1]))


def _infer(op_type):
    def infer(inputs, attrs):
        seed = inputs[1]
        if not seed.dtype.is_integer or seed.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"Value passed to parameter 'seed' has DataType {seed.dtype.name} not in list of "
                            f"allowed values: int32, int64 ({op_type})")
        if seed.shape.ndims is not None and (seed.shape.ndims != 1 or seed.shape[0].value not in (None, 2)):
            raise ValueError(f"{op_type}: seed must have shape [2], not {seed.shape.as_list()} ({seed.name!r})")
        out = _static_shape(inputs[0], op_type)
        for p in inputs[2:]:
            if out.ndims is not None and p.shape.ndims is not None:
                b = broadcast_static_shape(out, p.shape) if out.ndims >= p.shape.ndims else None
                if b is None or (b.ndims is not None and not b.is_compatible_with(out)):
                    raise ValueError(f"{op_type}: parameter {p.name!r} of shape {p.shape} does not broadcast to "
                                     f"the output shape {out}")
        return out, attrs["dtype"]

    return infer


def _chunk(kind, dtype, material, full_shape, params, block_info=None):
    info = block_info[None]
    offsets = [a for a, _ in info["array-location"]]
    chunk_shape = info["chunk-shape"]
    if kind in ("uniform", "normal", "truncated", "int"):
        lo, hi = (None, None) if kind != "int" else params
        return _draw(np, kind, dtype, material, full_shape, offsets, chunk_shape, lo, hi)
    return random_samplers.draw(kind, dtype.np_dtype, material, full_shape, offsets, chunk_shape, params)


def _host_params(values, kind):
    params = [_on_host(p) for p in values]
    if kind == "int":
        lo, hi = (int(p) for p in params)
        if lo >= hi:
            raise ValueError(f"Need minval < maxval, got {lo} >= {hi}")
        return (lo, hi)
    return tuple(params)


def _shape_value(shape, op_name):
    shape = tuple(int(d) for d in _on_host(shape).reshape(-1))
    if any(d < 0 for d in shape):
        raise ValueError(f"{op_name}: shape {list(shape)} has a negative dim")
    return shape


def _eager(kind, op_type):
    def eager(xp, shape, seed, *params, dtype):
        shape = _shape_value(shape, op_type)
        material = _seed_material(seed, op_type)
        out = _chunk(kind, dtype, material, shape, _host_params(params, kind),
                     block_info={None: {"array-location": [(0, d) for d in shape], "chunk-shape": shape}})
        return xp.asarray(out)

    return eager


def _lower(kind):
    def lower(ctx, shape, seed, *params, dtype):
        shape = _shape_value(ctx.host_value(shape, "the shape of a random op"), ctx.op.name)
        material = _seed_material(ctx.host_value(seed, "the seed of a stateless random op"), ctx.op.name)
        params = _host_params([ctx.host_value(p, "a parameter of a random op") for p in params], kind)
        return ctx.da.map_blocks(
            _chunk_kw, chunks=ctx.default_chunks(shape, dtype.np_dtype), dtype=dtype.np_dtype,
            meta=np.empty((0,) * len(shape), dtype.np_dtype), name=ctx.name("-stateless"), kind=kind,
            out_dtype=dtype, material=material, full_shape=shape, params=params)

    return lower


def _chunk_kw(*, kind, out_dtype, material, full_shape, params, block_info=None):
    return _chunk(kind, out_dtype, material, full_shape, params, block_info=block_info)


for _type, _kind in {**_BASIC, **_PARAM}.items():
    register_op(_type, _infer(_type), eager=_eager(_kind, _type), lower=_lower(_kind))
not_differentiable(*_BASIC, *_PARAM)


# ---- public functions --------------------------------------------------------------------------


def _seed_tensor(seed):
    seed = convert_to_tensor(seed, preferred_dtype=dtypes.int64, name="seed")
    if seed.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"Value passed to parameter 'seed' has DataType {seed.dtype.name} not in list of allowed "
                        "values: int32, int64")
    return seed


def _scaled(op_type, default_name, shape, seed, mean, stddev, dtype, name):
    dtype = _float_dtype(dtype, default_name)
    with name_scope(name, default_name, [shape, seed, mean, stddev]) as scope:
        shape_t, seed_t = _shape_tensor(shape), _seed_tensor(seed)
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = apply_op(op_type, [shape_t, seed_t], {"dtype": dtype})
        return add(multiply(rnd, stddev_t, name="mul"), mean_t, name=scope)


def stateless_random_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None, alg="auto_select"):
    """Normal samples of `shape`, a function of `seed` (int32/int64, shape [2]) alone.

    dtype float16/32/64 (TypeError otherwise); ValueError for a seed of static shape other than
    [2] (InvalidArgumentError at run time). Op `StatelessRandomNormal`, then `mul` and add."""
    return _scaled("StatelessRandomNormal", "stateless_random_normal", shape, seed, mean, stddev, dtype, name)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None,
                               alg="auto_select"):
    """Normal samples of `shape` re-drawn beyond 2 stddev, a function of `seed` alone."""
    return _scaled("StatelessTruncatedNormal", "stateless_truncated_normal", shape, seed, mean, stddev, dtype, name)


def stateless_random_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None,
                             alg="auto_select"):
    """Uniform samples of `shape` in [minval, maxval), a function of `seed` alone.

    Floats (maxval defaults to 1): `StatelessRandomUniform` scaled and shifted. int32/int64 need
    both bounds (ValueError otherwise, as TF): `StatelessRandomUniformInt`."""
    dtype = as_dtype(dtype)
    if dtype not in _FLOATS + (dtypes.int32, dtypes.int64):
        raise ValueError(f"stateless_random_uniform: invalid dtype {dtype.name}; accepted dtypes are float16, "
                         "float32, float64, int32, int64")
    if dtype.is_integer and (minval is None) != (maxval is None):
        raise ValueError(f"For integer `dtype` argument {dtype!r}, argument `minval` and `maxval` must be both None "
                         f"or not None. Got `minval`={minval} and `maxval`={maxval}.")
    if dtype.is_integer and maxval is None:
        raise ValueError(f"stateless_random_uniform: dtype {dtype.name} needs minval and maxval")
    maxval = 1 if maxval is None else maxval
    minval = 0 if minval is None else minval
    with name_scope(name, "stateless_random_uniform", [shape, seed, minval, maxval]) as scope:
        shape_t, seed_t = _shape_tensor(shape), _seed_tensor(seed)
        lo = convert_to_tensor(minval, dtype=dtype, name="min")
        hi = convert_to_tensor(maxval, dtype=dtype, name="max")
        if dtype.is_integer:
            return apply_op("StatelessRandomUniformInt", [shape_t, seed_t, lo, hi], {"dtype": dtype}, name=scope)
        rnd = apply_op("StatelessRandomUniform", [shape_t, seed_t], {"dtype": dtype})
        return add(multiply(rnd, subtract(hi, lo, name="sub"), name="mul"), lo, name=scope)


def stateless_multinomial(logits, num_samples, seed, output_dtype=dtypes.int64, name=None):
    """[batch, num_samples] class indices drawn from each row of `logits` ([batch, classes]),
    a function of `seed` alone (inverse-CDF over a stateless uniform, as `multinomial`)."""
    out_dtype = as_dtype(output_dtype)
    if out_dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"stateless_multinomial: output_dtype must be int32 or int64, got {out_dtype.name}")
    with name_scope(name, "stateless_multinomial", [logits, seed]):
        logits = convert_to_tensor(logits, name="logits")
        if not logits.dtype.is_floating:
            raise TypeError(f"stateless_multinomial: logits must be a float tensor, got {logits.dtype.name}")
        if logits.shape.ndims not in (None, 2):
            raise ValueError(f"logits should be a matrix, got shape {logits.shape} ({logits.name!r})")
        wide = cast(logits, dtypes.float64)
        cdf = cumsum(exp(subtract(wide, reduce_max(wide, axis=1, keepdims=True))), axis=1)
        n = convert_to_tensor(num_samples, dtype=dtypes.int32, name="num_samples")
        u = stateless_random_uniform(stack([shape_of(logits)[0], n]), seed, dtype=dtypes.float64)
        below = less_equal(expand_dims(cdf, 1), expand_dims(multiply(u, cdf[:, -1:]), 2))
        count = reduce_sum(cast(below, dtypes.int32), axis=2)
        return cast(minimum(count, subtract(shape_of(logits)[1], 1)), out_dtype)


def stateless_categorical(logits, num_samples, seed, dtype=dtypes.int64, name=None):
    """`stateless_multinomial` with the dtype argument named `dtype` (TF's tf.random spelling)."""
    return stateless_multinomial(logits, num_samples, seed, output_dtype=dtype, name=name or "stateless_categorical")


def _param_draw(op_type, default_name, shape, seed, params, dtype, name, param_dtype=None):
    with name_scope(name, default_name, [shape, seed, *params]):
        shape_t, seed_t = _shape_tensor(shape), _seed_tensor(seed)
        ps = [convert_to_tensor(p, dtype=param_dtype) for p in params]
        return apply_op(op_type, [shape_t, seed_t, *ps], {"dtype": dtype})


def stateless_random_binomial(shape, seed, counts, probs, output_dtype=dtypes.int32, name=None):
    """Binomial(counts, probs) samples of `shape` (counts, probs broadcast to it), a function of
    `seed` alone. output_dtype float16/32/64 or int32/int64."""
    dtype = as_dtype(output_dtype)
    if dtype not in _FLOATS + (dtypes.int32, dtypes.int64):
        raise TypeError(f"stateless_random_binomial: output_dtype must be a float or int32/int64, got {dtype.name}")
    counts = convert_to_tensor(counts, name="counts")
    probs = convert_to_tensor(probs, dtype=counts.dtype, name="probs")
    return _param_draw("StatelessRandomBinomial", "stateless_random_binomial", shape, seed, [counts, probs], dtype,
                       name)


def stateless_random_gamma(shape, seed, alpha, beta=None, dtype=dtypes.float32, name=None):
    """Gamma(alpha, beta) samples of `shape` (alpha, beta broadcast to it), a function of `seed`
    alone: `StatelessRandomGammaV2` divided by beta, at least the dtype's tiny (as TF)."""
    dtype = _float_dtype(dtype, "stateless_random_gamma")
    with name_scope(name, "stateless_random_gamma", [shape, seed, alpha, beta]):
        alpha = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        beta = convert_to_tensor(1 if beta is None else beta, dtype=dtype, name="beta")
        alpha_b = add(alpha, multiply(beta, 0))  # alpha broadcast against beta
        g = apply_op("StatelessRandomGammaV2", [_shape_tensor(shape), _seed_tensor(seed), alpha_b], {"dtype": dtype})
        return maximum(realdiv(g, beta), np.finfo(dtype.np_dtype).tiny, name="Maximum")


def stateless_random_poisson(shape, seed, lam, dtype=dtypes.int32, name=None):
    """Poisson(lam) samples of `shape` (lam broadcast to it), a function of `seed` alone; dtype
    float16/32/64 or int32/int64."""
    dtype = as_dtype(dtype)
    if dtype not in _FLOATS + (dtypes.int32, dtypes.int64):
        raise TypeError(f"Value passed to parameter 'dtype' has DataType {dtype.name} not in list of allowed values: "
                        "float16, float32, float64, int32, int64")
    lam = convert_to_tensor(lam, name="lam")
    return _param_draw("StatelessRandomPoisson", "stateless_random_poisson", shape, seed, [lam], dtype, name)
