"""Gamma, Poisson and binomial samples from random_ops' counter-based streams.

Each function takes the flat indices of the elements to draw (uint64), the key material of the
draw (random_ops._material, or a stateless seed's) and one parameter value per element, and
returns one sample per element. Every random number an element uses comes from its own index in
numbered streams of the material, so a value depends only on (material, index, parameters):
rejection loops re-draw only the rejected elements, from their next stream, and the result is the
same whichever chunk holds the element. The algorithms are the ones TF's kernels use (Marsaglia
and Tsang for gamma; inversion for small means, Hörmann's PTRS / BTRS transformed rejection
otherwise), computed in float64; the numbers are not TF's Philox draws.
"""

from __future__ import annotations

import math

import numpy as np

from .random_ops import _bits, _flat_index, _standard_normal, _unit

_GAMMA_NORMAL, _GAMMA_UNIFORM, _GAMMA_BOOST, _UNIFORM_A, _UNIFORM_B = 101, 102, 103, 104, 105
_MAX_ATTEMPTS = 256  # rejection loops accept > 0.8 of the draws: never reached in practice
_INVERSION_BELOW = 10.0  # mean below which Poisson / binomial invert the CDF (as TF)
_STIRLING_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                           0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                           0.00925546218271273, 0.00833056343336287])


def _uniform(idx, material, tag, attempt):
    return _unit(np, _bits(np, idx, (*material, tag), attempt), np.float64)


def _stirling_tail(k):
    """log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2], for integer-valued k >= 0."""
    k = np.asarray(k, np.float64)
    kp1sq = (k + 1.0) ** 2
    tail = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1.0)
    small = k <= 9
    return np.where(small, _STIRLING_TAIL[np.clip(k, 0, 9).astype(np.int64)], tail)


def _log_factorial(k):
    return (k + 0.5) * np.log1p(k) - (k + 1.0) + 0.5 * math.log(2 * math.pi) + _stirling_tail(k)


def _reject_loop(n, propose):
    """Runs `propose(positions, attempt) -> (values, accepted)` on the still rejected positions
    until all are accepted; returns the float64 values."""
    out = np.zeros(n, np.float64)
    todo = np.arange(n)
    for attempt in range(_MAX_ATTEMPTS):
        if not todo.size:
            break
        vals, ok = propose(todo, attempt)
        out[todo[ok]] = vals[ok]
        todo = todo[~ok]
    out[todo] = np.nan
    return out


def gamma(idx, material, alpha):
    """Gamma(alpha, 1) per element (alpha float64, > 0; NaN for alpha <= 0 or NaN)."""
    alpha = np.asarray(alpha, np.float64)
    a = np.where(alpha < 1, alpha + 1.0, alpha)
    d = a - 1.0 / 3
    c = 1.0 / np.sqrt(9.0 * np.where(d > 0, d, 1.0))

    def propose(pos, attempt):
        i = idx[pos]
        x = _standard_normal(np, i, (*material, _GAMMA_NORMAL), attempt, np.float64)
        v = 1.0 + c[pos] * x
        v3 = v * v * v
        u = _uniform(i, material, _GAMMA_UNIFORM, attempt)
        with np.errstate(invalid="ignore", divide="ignore"):
            ok = (v > 0) & ((u < 1 - 0.0331 * x ** 4) |
                            (np.log(u) < 0.5 * x * x + d[pos] * (1 - v3 + np.log(np.where(v3 > 0, v3, 1.0)))))
        return d[pos] * v3, ok

    out = _reject_loop(idx.size, propose)
    boost = alpha < 1  # Gamma(a) = Gamma(a + 1) * U ** (1 / a)
    if np.any(boost):
        u = _uniform(idx[boost], material, _GAMMA_BOOST, 0)
        out[boost] *= np.exp(np.log1p(-u) / alpha[boost])  # 1 - u in (0, 1]: never log(0)
    out[~(alpha > 0)] = np.nan
    return out


def poisson(idx, material, lam):
    """Poisson(lam) per element as float64 (NaN for lam < 0 or NaN, 0 for lam == 0)."""
    lam = np.asarray(lam, np.float64)
    out = np.zeros(idx.size, np.float64)
    small = (lam > 0) & (lam < _INVERSION_BELOW)
    if np.any(small):
        out[small] = _invert(idx[small], material, lambda k: np.exp(-lam[small]) if k is None else lam[small] / k)
    big = lam >= _INVERSION_BELOW
    if np.any(big):
        out[big] = _ptrs(idx[big], material, lam[big])
    out[~(lam >= 0)] = np.nan
    return out


def _invert(idx, material, ratio):
    """Inverse-CDF draw of a distribution on 0, 1, 2, ... given p(0) = ratio(None) and
    p(k) / p(k - 1) = ratio(k) (float64 arrays)."""
    u = _uniform(idx, material, _UNIFORM_A, 0)
    p = ratio(None)
    cdf = p.copy()
    k = np.zeros(idx.size)
    more = u > cdf
    step = 0
    while np.any(more) and step < 100000:
        step += 1
        p = np.where(more, p * ratio(step), p)
        k = np.where(more, step, k)
        cdf = np.where(more, cdf + p, cdf)
        more = more & (u > cdf) & (p > 0)
    return k


def _ptrs(idx, material, lam):
    """Hörmann's transformed rejection with squeeze (PTRS) for lam >= 10."""
    log_lam = np.log(lam)
    b = 0.931 + 2.53 * np.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)

    def propose(pos, attempt):
        i = idx[pos]
        u = _uniform(i, material, _UNIFORM_A, attempt) - 0.5
        v = _uniform(i, material, _UNIFORM_B, attempt)
        us = 0.5 - np.abs(u)
        k = np.floor((2 * a[pos] / us + b[pos]) * u + lam[pos] + 0.43)
        with np.errstate(invalid="ignore", divide="ignore"):
            squeeze = (us >= 0.07) & (v <= vr[pos])
            kk = np.maximum(k, 0)
            full = (np.log(v) + np.log(inv_alpha[pos]) - np.log(a[pos] / (us * us) + b[pos])
                    <= -lam[pos] + kk * log_lam[pos] - _log_factorial(kk))
            ok = squeeze | ((k >= 0) & ~((us < 0.013) & (v > us)) & full)
        return k, ok

    return _reject_loop(idx.size, propose)


def binomial(idx, material, n, p):
    """Binomial(n, p) per element as float64 (NaN for n < 0 or p outside [0, 1])."""
    n, p = np.asarray(n, np.float64), np.asarray(p, np.float64)
    flip = p > 0.5
    q = np.where(flip, 1 - p, p)  # draw for min(p, 1 - p), then n - k
    out = np.zeros(idx.size, np.float64)
    valid = (n >= 0) & (p >= 0) & (p <= 1)
    small = valid & (q > 0) & (n * q < _INVERSION_BELOW)
    if np.any(small):
        ns, qs = n[small], q[small]
        out[small] = _invert(idx[small], material,
                             lambda k: (1 - qs) ** ns if k is None else np.maximum(ns - k + 1, 0) / k * qs / (1 - qs))
    big = valid & (n * q >= _INVERSION_BELOW)
    if np.any(big):
        out[big] = _btrs(idx[big], material, n[big], q[big])
    out = np.where(flip, n - out, out)
    out[~valid] = np.nan
    return out


def _btrs(idx, material, n, p):
    """Hörmann's BTRS for n * p >= 10, p <= 1/2."""
    q = 1 - p
    spq = np.sqrt(n * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    vr = 0.92 - 4.2 / b
    r = p / q
    alpha = (2.83 + 5.1 / b) * spq
    m = np.floor((n + 1) * p)

    def propose(pos, attempt):
        i = idx[pos]
        u = _uniform(i, material, _UNIFORM_A, attempt) - 0.5
        v = _uniform(i, material, _UNIFORM_B, attempt)
        us = 0.5 - np.abs(u)
        nn, rr, mm = n[pos], r[pos], m[pos]
        k = np.floor((2 * a[pos] / us + b[pos]) * u + c[pos])
        inside = (k >= 0) & (k <= nn)
        kk = np.clip(k, 0, nn)
        with np.errstate(invalid="ignore", divide="ignore"):
            squeeze = (us >= 0.07) & (v <= vr[pos])
            lv = np.log(v * alpha[pos] / (a[pos] / (us * us) + b[pos]))
            bound = ((mm + 0.5) * np.log((mm + 1) / (rr * (nn - mm + 1))) + (nn + 1) * np.log((nn - mm + 1) / (nn - kk + 1))
                     + (kk + 0.5) * np.log(rr * (nn - kk + 1) / (kk + 1)) + _stirling_tail(mm) + _stirling_tail(nn - mm)
                     - _stirling_tail(kk) - _stirling_tail(nn - kk))
            ok = inside & (squeeze | (lv <= bound))
        return k, ok

    return _reject_loop(idx.size, propose)


# ---- one chunk of a parameterized draw -------------------------------------------------------


def param_at(param, shape, idx):
    """The value of `param` (broadcast against the trailing dims of `shape`) at each flat index
    `idx` of an array of `shape`, without materializing the broadcast."""
    p = np.asarray(param, np.float64)
    if p.ndim == 0 or p.size == 1:
        return np.full(idx.size, p.reshape(-1)[0] if p.size else np.nan)
    coords = np.unravel_index(idx.astype(np.int64), shape)[len(shape) - p.ndim:]
    return p[tuple(np.zeros_like(c) if p.shape[k] == 1 else c for k, c in enumerate(coords))]


def draw(kind, np_dtype, material, full_shape, offsets, chunk_shape, params):
    """One chunk (offsets, chunk_shape) of a draw of `kind` (gamma, poisson or binomial) with
    `params` (numpy arrays broadcast against the trailing dims of full_shape)."""
    idx = _flat_index(np, full_shape, offsets, chunk_shape)
    vals = [param_at(p, full_shape, idx) for p in params]
    out = {"gamma": gamma, "poisson": poisson, "binomial": binomial}[kind](idx, material, *vals)
    if np.dtype(np_dtype).kind in "iu":
        out = np.where(np.isnan(out), 0, out)
    return out.astype(np_dtype).reshape(tuple(chunk_shape))
