"""FarmHash's 64-bit fingerprints, as TensorFlow hashes strings: `fingerprint64` is
`Fingerprint64` (farmhashna::Hash64), the hash of `tf.string_to_hash_bucket_fast` and of a lookup
table's out-of-vocabulary buckets; `fingerprint_cat64` is `FingerprintCat64`, which chains them in
`tf.sparse.cross_hashed` (a `crossed_column`'s ids). Both are fixed by TensorFlow's files and
serving, so they are written out exactly, on Python ints masked to 64 bits (strings are short).
"""

from __future__ import annotations

import numpy as np

__all__ = ["fingerprint64", "fingerprint_cat64", "hash_bucket_fast", "CROSS_HASH_KEY"]

_M = (1 << 64) - 1
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F
_KMUL = 0xC6A4A7935BD1E995
CROSS_HASH_KEY = 0xDECAFCAFFE  # sparse_cross_hashed's default hash_key (a crossed_column's)


def _f64(s, i):
    return int.from_bytes(s[i:i + 8], "little")


def _f32(s, i):
    return int.from_bytes(s[i:i + 4], "little")


def _rot(v, k):
    return v if k == 0 else ((v >> k) | (v << (64 - k))) & _M


def _shift_mix(v):
    return v ^ (v >> 47)


def _len16(u, v, mul):
    a = ((u ^ v) * mul) & _M
    a ^= a >> 47
    b = ((v ^ a) * mul) & _M
    b ^= b >> 47
    return (b * mul) & _M


def _len0to16(s):
    n = len(s)
    if n >= 8:
        mul = _K2 + n * 2
        a = (_f64(s, 0) + _K2) & _M
        b = _f64(s, n - 8)
        c = (_rot(b, 37) * mul + a) & _M
        d = ((_rot(a, 25) + b) * mul) & _M
        return _len16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        return _len16((n + (_f32(s, 0) << 3)) & _M, _f32(s, n - 4), mul)
    if n > 0:
        y = (s[0] + (s[n >> 1] << 8)) & 0xFFFFFFFF
        z = (n + (s[n - 1] << 2)) & 0xFFFFFFFF
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _M) * _K2) & _M
    return _K2


def _len17to32(s):
    n = len(s)
    mul = _K2 + n * 2
    a = (_f64(s, 0) * _K1) & _M
    b = _f64(s, 8)
    c = (_f64(s, n - 8) * mul) & _M
    d = (_f64(s, n - 16) * _K2) & _M
    return _len16((_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M, (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)


def _len33to64(s):
    n = len(s)
    mul = _K2 + n * 2
    a = (_f64(s, 0) * _K2) & _M
    b = _f64(s, 8)
    c = (_f64(s, n - 8) * mul) & _M
    d = (_f64(s, n - 16) * _K2) & _M
    y = (_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M
    z = _len16(y, (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)
    e = (_f64(s, 16) * mul) & _M
    f = _f64(s, 24)
    g = ((y + _f64(s, n - 32)) * mul) & _M
    h = ((z + _f64(s, n - 24)) * mul) & _M
    return _len16((_rot((e + f) & _M, 43) + _rot(g, 30) + h) & _M, (e + _rot((f + a) & _M, 18) + g) & _M, mul)


def _weak32(s, i, a, b):
    w, x, y, z = _f64(s, i), _f64(s, i + 8), _f64(s, i + 16), _f64(s, i + 24)
    a = (a + w) & _M
    b = _rot((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rot(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


def fingerprint64(s: bytes) -> int:
    """TensorFlow's `Fingerprint64` of the bytes `s`: an int in [0, 2**64)."""
    n = len(s)
    if n <= 16:
        return _len0to16(s)
    if n <= 32:
        return _len17to32(s)
    if n <= 64:
        return _len33to64(s)
    seed = 81
    y = (seed * _K1 + 113) & _M
    z = (_shift_mix((y * _K2 + 113) & _M) * _K2) & _M
    v0 = v1 = w0 = w1 = 0
    x = (seed * _K2 + _f64(s, 0)) & _M
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    i = 0
    while True:
        x = (_rot((x + y + v0 + _f64(s, i + 8)) & _M, 37) * _K1) & _M
        y = (_rot((y + v1 + _f64(s, i + 48)) & _M, 42) * _K1) & _M
        x ^= w1
        y = (y + v0 + _f64(s, i + 40)) & _M
        z = (_rot((z + w0) & _M, 33) * _K1) & _M
        v0, v1 = _weak32(s, i, (v1 * _K1) & _M, (x + w0) & _M)
        w0, w1 = _weak32(s, i + 32, (z + w1) & _M, (y + _f64(s, i + 16)) & _M)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = _K1 + ((z & 0xFF) << 1)
    i = last64
    w0 = (w0 + ((n - 1) & 63)) & _M
    v0 = (v0 + w0) & _M
    w0 = (w0 + v0) & _M
    x = (_rot((x + y + v0 + _f64(s, i + 8)) & _M, 37) * mul) & _M
    y = (_rot((y + v1 + _f64(s, i + 48)) & _M, 42) * mul) & _M
    x ^= (w1 * 9) & _M
    y = (y + v0 * 9 + _f64(s, i + 40)) & _M
    z = (_rot((z + w0) & _M, 33) * mul) & _M
    v0, v1 = _weak32(s, i, (v1 * mul) & _M, (x + w0) & _M)
    w0, w1 = _weak32(s, i + 32, (z + w1) & _M, (y + _f64(s, i + 16)) & _M)
    z, x = x, z
    return _len16((_len16(v0, w0, mul) + _shift_mix(y) * _K0 + z) & _M, (_len16(v1, w1, mul) + x) & _M, mul)


def fingerprint_cat64(fp1: int, fp2: int) -> int:
    """TensorFlow's `FingerprintCat64(fp1, fp2)`: two 64-bit fingerprints combined, in [0, 2**64)."""
    result = fp1 ^ _KMUL
    result ^= (_shift_mix((fp2 * _KMUL) & _M) * _KMUL) & _M
    result = (result * _KMUL) & _M
    result = (_shift_mix(result) * _KMUL) & _M
    return _shift_mix(result)


def hash_bucket_fast(values, num_buckets):
    """`tf.string_to_hash_bucket_fast`: Fingerprint64 of each byte string of `values` (a numpy
    object array of bytes) modulo `num_buckets`, as int64 of the same shape."""
    arr = np.asarray(values, dtype=object)
    flat = [fingerprint64(v if isinstance(v, bytes) else str(v).encode()) % num_buckets for v in arr.reshape(-1)]
    return np.asarray(flat, dtype=np.int64).reshape(arr.shape)
