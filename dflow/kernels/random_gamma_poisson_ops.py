"""`random_gamma` (RandomGamma) and `random_poisson` (RandomPoissonV2): TF1's seeded draws whose
output shape is `shape + parameter shape`, a new draw on each run (seeds, run counts and the
counter-based streams as random_ops; the samplers in random_samplers).

random_gamma has TF's reparameterized gradient with respect to alpha: for a sample x of
Gamma(alpha, 1) drawn as F^-1(u), dx/dalpha = -(dF/dalpha)(x) / f(x) (TF's RandomGammaGrad op,
`random_gamma_grad`); dF/dalpha of the regularized incomplete gamma is taken by a central
difference of its series / continued fraction in float64. RandomPoissonV2 has no gradient registered: tf.gradients through it raises LookupError (TF1).
"""

from __future__ import annotations

import math

import numpy as np

from ..graph import dtypes
from ..graph.dtypes import as_dtype
from ..graph.graph import get_seed, name_scope
from ..graph.registry import def_grad, not_differentiable, register_op
from . import random_samplers
from .common import FLOAT, apply_op, broadcast_infer, convert_to_tensor
from .math_ops import add, maximum, multiply, realdiv
from .random_ops import (
    _FLOATS,
    _float_dtype,
    _material,
    _on_host,
    _run_values,
    _seed_attrs,
    _shape_tensor,
    _static_shape,
)
from .reduction_ops import reduce_sum

__all__ = ["random_gamma", "random_poisson"]


def _infer(op_type):
    def infer(inputs, attrs):
        out = _static_shape(inputs[0], op_type)
        return out.concatenate(inputs[1].shape), attrs["dtype"]

    return infer


def _shape_value(shape, op_name):
    shape = tuple(int(d) for d in _on_host(shape).reshape(-1))
    if any(d < 0 for d in shape):
        raise ValueError(f"{op_name}: shape {list(shape)} has a negative dim")
    return shape


def _chunk(counter, base, *, kind, np_dtype, seed, seed2, op_name, full_shape, param, block_info=None):
    info = block_info[None]
    material = _material(seed, seed2, op_name, counter, 0 if base is None else base)
    return random_samplers.draw(kind, np_dtype, material, full_shape, [a for a, _ in info["array-location"]],
                                info["chunk-shape"], [param])


def _eager(kind):
    def eager(xp, shape, param, *, dtype, seed, seed2, ctx):
        param = _on_host(param)
        full = _shape_value(shape, ctx.op.name) + tuple(param.shape)
        counter, base = _run_values(ctx, seed, seed2)
        material = _material(seed, seed2, ctx.op.name, counter, 0 if base is None else base)
        return xp.asarray(random_samplers.draw(kind, dtype.np_dtype, material, full, (0,) * len(full), full, [param]))

    return eager


def _lower(kind):
    def lower(lctx, shape, param, *, dtype, seed, seed2, ctx=None):
        ctx = ctx or lctx
        param = _on_host(ctx.host_value(param, f"the {kind} parameter of a random op"))
        full = _shape_value(ctx.host_value(shape, "the shape of a random op"), ctx.op.name) + tuple(param.shape)
        counter, base = _run_values(ctx, seed, seed2)
        return ctx.da.map_blocks(
            _chunk, counter, base, chunks=ctx.default_chunks(full, dtype.np_dtype), dtype=dtype.np_dtype,
            new_axis=list(range(len(full))) or None, meta=np.empty((0,) * len(full), dtype.np_dtype),
            name=ctx.name("-random"), kind=kind, np_dtype=dtype.np_dtype, seed=seed, seed2=seed2,
            op_name=ctx.op.name, full_shape=full, param=param)

    return lower


register_op("RandomGamma", _infer("RandomGamma"), eager=_eager("gamma"), lower=_lower("gamma"), run_state=True,
            stateful=True)
register_op("RandomPoissonV2", _infer("RandomPoissonV2"), eager=_eager("poisson"), lower=_lower("poisson"),
            run_state=True, stateful=True)


# ---- the reparameterized gradient: RandomGammaGrad ----------------------------------------------


def _lower_gamma_inc(a, x):
    """P(a, x), the regularized lower incomplete gamma (float64 arrays; Numerical Recipes'
    series for x < a + 1, continued fraction otherwise)."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    lg = np.vectorize(math.lgamma, otypes=[np.float64])(a) if a.size else a
    out = np.empty(a.shape)
    with np.errstate(all="ignore"):
        pre = np.exp(-x + a * np.log(x) - lg)
        ser = x < a + 1
        # series: sum x^n / (a (a+1) ... (a+n))
        term = 1.0 / a
        total = term.copy()
        ap = a.copy()
        for _ in range(500):
            ap = ap + 1
            term = term * x / ap
            total = total + term
        out[ser] = (pre * total)[ser]
        # continued fraction (modified Lentz) for Q(a, x)
        tiny = 1e-300
        b = x + 1 - a
        c = np.full(a.shape, 1 / tiny)
        d = 1 / np.where(b == 0, tiny, b)
        h = d.copy()
        for i in range(1, 500):
            an = -i * (i - a)
            b = b + 2
            d = an * d + b
            d = 1 / np.where(np.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            h = h * d * c
        out[~ser] = (1 - pre * h)[~ser]
    return out


def _random_gamma_grad(alpha, x):
    """d x / d alpha of a Gamma(alpha, 1) sample x (TF's RandomGammaGrad), float64."""
    a = np.asarray(alpha, np.float64)
    x = np.asarray(x, np.float64)
    h = 1e-5 * np.maximum(a, 1e-3)
    dcdf = (_lower_gamma_inc(a + h, x) - _lower_gamma_inc(a - h, x)) / (2 * h)
    with np.errstate(all="ignore"):
        lg = np.vectorize(math.lgamma, otypes=[np.float64])(a) if a.size else a
        pdf = np.exp((a - 1) * np.log(x) - x - lg)
        return np.where(x > 0, -dcdf / pdf, 0.0)


def _grad_kernel(xp, alpha, sample):
    sample = _on_host(sample)
    return xp.asarray(_random_gamma_grad(_on_host(alpha), sample).astype(sample.dtype))


register_op("RandomGammaGrad", broadcast_infer(FLOAT, None, "RandomGammaGrad"), eager=_grad_kernel, elementwise=True)
not_differentiable("RandomGammaGrad")


def random_gamma_grad(alpha, sample, name=None):
    """d sample / d alpha for samples of Gamma(alpha, 1) (alpha broadcast against sample)."""
    return apply_op("RandomGammaGrad", [convert_to_tensor(alpha), convert_to_tensor(sample)], name=name,
                    default_name="RandomGammaGrad")


@def_grad("RandomGamma")
def _random_gamma_op_grad(op, g):
    # TF 1.15 random_grad._RandomGammaGrad: the sample's shape is shape + alpha.shape; sum over
    # the leading `shape` dims of g * d sample / d alpha.
    # (alpha broadcasts against the sample's trailing dims)
    shape, alpha = op.inputs
    partial = random_gamma_grad(alpha, op.outputs[0])
    n = op.outputs[0].shape.ndims - alpha.shape.ndims if op.outputs[0].shape.ndims is not None and \
        alpha.shape.ndims is not None else None
    if n is None:
        raise ValueError(f"RandomGamma {op.name!r}: its gradient needs the ranks of shape and alpha known")
    return [None, reduce_sum(multiply(g, partial), axis=list(range(n)))]


# ---- public functions --------------------------------------------------------------------------


def random_gamma(shape, alpha, beta=None, dtype=dtypes.float32, seed=None, name=None):
    """Gamma(alpha, beta) samples of shape `shape + broadcast(alpha, beta).shape` (beta is the
    rate; default 1). dtype float16/32/64 (TypeError otherwise). Op `RandomGamma` on alpha
    broadcast against beta, divided by beta, then at least the dtype's tiny (`Maximum`, as TF).
    Differentiable with respect to alpha and beta (reparameterized)."""
    dtype = _float_dtype(dtype, "random_gamma")
    with name_scope(name, "random_gamma", [shape, alpha, beta]):
        shape_t = _shape_tensor(shape)
        alpha = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        beta = convert_to_tensor(1 if beta is None else beta, dtype=dtype, name="beta")
        alpha_b = add(alpha, multiply(beta, 0)) if beta.shape.ndims != 0 else alpha
        seed1, seed2 = get_seed(seed)
        g = apply_op("RandomGamma", [shape_t, alpha_b], _seed_attrs(dtype, seed1, seed2))
        return maximum(realdiv(g, beta), np.finfo(dtype.np_dtype).tiny, name="Maximum")


def random_poisson(lam, shape, dtype=dtypes.float32, seed=None, name=None):
    """Poisson(lam) samples of shape `shape + lam.shape`; dtype float16/32/64 or int32/int64
    (TypeError otherwise). Op `RandomPoissonV2`; a new draw on each run; no gradient."""
    dtype = as_dtype(dtype)
    if dtype not in _FLOATS + (dtypes.int32, dtypes.int64):
        raise TypeError(f"Value passed to parameter 'dtype' has DataType {dtype.name} not in list of allowed values: "
                        "float16, float32, float64, int32, int64")
    with name_scope(name, "random_poisson", [lam, shape]):
        shape_t = _shape_tensor(shape)
        lam = convert_to_tensor(lam, name="lam")
        if not lam.dtype.is_floating and lam.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"random_poisson: lam must be a float or int tensor, got {lam.dtype.name}")
        seed1, seed2 = get_seed(seed)
        return apply_op("RandomPoissonV2", [shape_t, lam], _seed_attrs(dtype, seed1, seed2))
