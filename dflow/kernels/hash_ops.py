"""Strings hashed into buckets, bit for bit as TensorFlow: `string_to_hash_bucket_fast` (FarmHash's
Fingerprint64, farmhashna::Hash64), `string_to_hash_bucket_strong` (SipHash-2-4 under a 128-bit
key) and the legacy `string_to_hash_bucket` (TF's own Hash64, a MurmurHash2 variant seeded
0xDECAFCAFFE); the bucket is hash mod num_buckets (int64).

The hashes are written out here in Python integers masked to 64 bits (no dependency has TF's
Fingerprint64), one string at a time: ~µs a short string. The ops are elementwise.
"""

from __future__ import annotations

import struct

import numpy as np

from ..graph import dtypes
from ..graph.registry import not_differentiable, register_op
from .common import STRING, apply_op, check_dtype, convert_to_tensor
from .string_ops import _host

__all__ = ["string_to_hash_bucket_fast", "string_to_hash_bucket_strong", "string_to_hash_bucket"]

M64 = 0xFFFFFFFFFFFFFFFF
_K0, _K1, _K2 = 0xC3A5C85C97CB3127, 0xB492B66FBE98F273, 0x9AE16A3B2F90404F


def _f64(s, i):
    return struct.unpack_from("<Q", s, i)[0]


def _f32(s, i):
    return struct.unpack_from("<I", s, i)[0]


def _rot(v, r):
    return v if r == 0 else ((v >> r) | (v << (64 - r))) & M64


def _smix(v):
    return v ^ (v >> 47)


def _len16(u, v, mul):
    a = ((u ^ v) * mul) & M64
    a ^= a >> 47
    b = ((v ^ a) * mul) & M64
    b ^= b >> 47
    return (b * mul) & M64


def _len0to16(s, n):
    if n >= 8:
        mul = _K2 + n * 2
        a = (_f64(s, 0) + _K2) & M64
        b = _f64(s, n - 8)
        c = (_rot(b, 37) * mul + a) & M64
        d = ((_rot(a, 25) + b) * mul) & M64
        return _len16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        return _len16((n + (_f32(s, 0) << 3)) & M64, _f32(s, n - 4), mul)
    if n > 0:
        y = s[0] + (s[n >> 1] << 8)
        z = n + (s[n - 1] << 2)
        return (_smix(((y * _K2) ^ (z * _K0)) & M64) * _K2) & M64
    return _K2


def _len17to32(s, n):
    mul = _K2 + n * 2
    a = (_f64(s, 0) * _K1) & M64
    b = _f64(s, 8)
    c = (_f64(s, n - 8) * mul) & M64
    d = (_f64(s, n - 16) * _K2) & M64
    return _len16((_rot((a + b) & M64, 43) + _rot(c, 30) + d) & M64, (a + _rot((b + _K2) & M64, 18) + c) & M64, mul)


def _len33to64(s, n):
    mul = _K2 + n * 2
    a = (_f64(s, 0) * _K2) & M64
    b = _f64(s, 8)
    c = (_f64(s, n - 8) * mul) & M64
    d = (_f64(s, n - 16) * _K2) & M64
    y = (_rot((a + b) & M64, 43) + _rot(c, 30) + d) & M64
    z = _len16(y, (a + _rot((b + _K2) & M64, 18) + c) & M64, mul)
    e = (_f64(s, 16) * mul) & M64
    f = _f64(s, 24)
    g = ((y + _f64(s, n - 32)) * mul) & M64
    h = ((z + _f64(s, n - 24)) * mul) & M64
    return _len16((_rot((e + f) & M64, 43) + _rot(g, 30) + h) & M64, (e + _rot((f + a) & M64, 18) + g) & M64, mul)


def _weak32(s, i, a, b):
    w, x, y, z = _f64(s, i), _f64(s, i + 8), _f64(s, i + 16), _f64(s, i + 24)
    a = (a + w) & M64
    b = _rot((b + a + z) & M64, 21)
    c = a
    a = (a + x + y) & M64
    b = (b + _rot(a, 44)) & M64
    return (a + z) & M64, (b + c) & M64


def fingerprint64(s):
    """FarmHash's Fingerprint64 of bytes `s` (TF's `Fingerprint64`, farmhashna::Hash64)."""
    n = len(s)
    if n <= 16:
        return _len0to16(s, n)
    if n <= 32:
        return _len17to32(s, n)
    if n <= 64:
        return _len33to64(s, n)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & M64
    z = (_smix((y * _K2 + 113) & M64) * _K2) & M64
    v0 = v1 = w0 = w1 = 0
    x = (x * _K2 + _f64(s, 0)) & M64
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    i = 0
    while True:
        x = (_rot((x + y + v0 + _f64(s, i + 8)) & M64, 37) * _K1) & M64
        y = (_rot((y + v1 + _f64(s, i + 48)) & M64, 42) * _K1) & M64
        x ^= w1
        y = (y + v0 + _f64(s, i + 40)) & M64
        z = (_rot((z + w0) & M64, 33) * _K1) & M64
        v0, v1 = _weak32(s, i, (v1 * _K1) & M64, (x + w0) & M64)
        w0, w1 = _weak32(s, i + 32, (z + w1) & M64, (y + _f64(s, i + 16)) & M64)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = _K1 + ((z & 0xFF) << 1)
    i = last64
    w0 = (w0 + ((n - 1) & 63)) & M64
    v0 = (v0 + w0) & M64
    w0 = (w0 + v0) & M64
    x = (_rot((x + y + v0 + _f64(s, i + 8)) & M64, 37) * mul) & M64
    y = (_rot((y + v1 + _f64(s, i + 48)) & M64, 42) * mul) & M64
    x ^= (w1 * 9) & M64
    y = (y + v0 * 9 + _f64(s, i + 40)) & M64
    z = (_rot((z + w0) & M64, 33) * mul) & M64
    v0, v1 = _weak32(s, i, (v1 * mul) & M64, (x + w0) & M64)
    w0, w1 = _weak32(s, i + 32, (z + w1) & M64, (y + _f64(s, i + 16)) & M64)
    z, x = x, z
    return _len16((_len16(v0, w0, mul) + _smix(y) * _K0 + z) & M64, (_len16(v1, w1, mul) + x) & M64, mul)


def siphash24(key0, key1, s):
    """SipHash-2-4 of bytes `s` under the key (key0, key1) (TF's StrongKeyedHash)."""
    v0, v1 = key0 ^ 0x736F6D6570736575, key1 ^ 0x646F72616E646F6D
    v2, v3 = key0 ^ 0x6C7967656E657261, key1 ^ 0x7465646279746573

    def rounds(v0, v1, v2, v3, k):
        for _ in range(k):
            v0 = (v0 + v1) & M64
            v1 = _rot(v1, 64 - 13) ^ v0
            v0 = _rot(v0, 32)
            v2 = (v2 + v3) & M64
            v3 = _rot(v3, 64 - 16) ^ v2
            v0 = (v0 + v3) & M64
            v3 = _rot(v3, 64 - 21) ^ v0
            v2 = (v2 + v1) & M64
            v1 = _rot(v1, 64 - 17) ^ v2
            v2 = _rot(v2, 32)
        return v0, v1, v2, v3

    n = len(s)
    for i in range(0, n - n % 8, 8):
        m = _f64(s, i)
        v3 ^= m
        v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
        v0 ^= m
    last = int.from_bytes(s[n - n % 8:], "little") | ((n & 0xFF) << 56)
    v3 ^= last
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
    v0 ^= last
    v2 ^= 0xFF
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


def legacy_hash64(s, seed=0xDECAFCAFFE):
    """TF's Hash64 (tensorflow/core/lib/hash/hash.cc), the hash of `string_to_hash_bucket`."""
    m, n = 0xC6A4A7935BD1E995, len(s)
    h = (seed ^ (n * m)) & M64
    i = 0
    while n - i >= 8:
        k = (_f64(s, i) * m) & M64
        k ^= k >> 47
        k = (k * m) & M64
        h = ((h ^ k) * m) & M64
        i += 8
    rest = n - i
    if rest:
        for j in range(rest - 1, -1, -1):
            h ^= s[i + j] << (8 * j)
        h = (h * m) & M64
    h ^= h >> 47
    h = (h * m) & M64
    return h ^ (h >> 47)


_HASHES = {"fast": lambda b, key: fingerprint64(b), "strong": lambda b, key: siphash24(key[0], key[1], b),
           "legacy": lambda b, key: legacy_hash64(b)}
_OP_TYPES = {"fast": "StringToHashBucketFast", "strong": "StringToHashBucketStrong", "legacy": "StringToHashBucket"}


def _infer(inputs, attrs):
    check_dtype(inputs[0], STRING, "StringToHashBucket", arg="input")
    if attrs["num_buckets"] < 1:
        raise ValueError(f"num_buckets must be >= 1, got {attrs['num_buckets']}")
    return inputs[0].shape, dtypes.int64


def _eager(xp, x, num_buckets, hash, key=()):  # noqa: A002
    fn, k = _HASHES[hash], tuple(key)
    out = np.frompyfunc(lambda b: fn(b, k) % num_buckets, 1, 1)(_host(x))
    return np.asarray(out, dtype=np.int64)


for _kind, _type in _OP_TYPES.items():
    register_op(_type, _infer, eager=_eager, elementwise=True)
    not_differentiable(_type)


def _bucket(kind, input, num_buckets, name, key=None):  # noqa: A002
    attrs = {"num_buckets": int(num_buckets), "hash": kind}
    if key is not None:
        key = [int(k) & M64 for k in key]
        if len(key) != 2:
            raise ValueError(f"Key must have size 2, got {len(key)}")
        attrs["key"] = key
    x = convert_to_tensor(input, dtype=None if hasattr(input, "dtype") else dtypes.string, name="input")
    return apply_op(_OP_TYPES[kind], [x], attrs, name=name, default_name=_OP_TYPES[kind])


def string_to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002 - TF1 signature
    """Each string's FarmHash Fingerprint64 mod `num_buckets` (int64), as TensorFlow's."""
    return _bucket("fast", input, num_buckets, name)


def string_to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002
    """Each string's SipHash-2-4 under `key` (two uint64s) mod `num_buckets` (int64)."""
    return _bucket("strong", input, num_buckets, name, key=key)


def string_to_hash_bucket(string_tensor, num_buckets, name=None, input=None):  # noqa: A002
    """Each string's TF Hash64 mod `num_buckets` (the legacy op; prefer the `_fast` one)."""
    return _bucket("legacy", string_tensor if input is None else input, num_buckets, name)
