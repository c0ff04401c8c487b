"""Strings hashed into buckets, bit for bit as TensorFlow: `string_to_hash_bucket_fast` (FarmHash's
Fingerprint64, farmhashna::Hash64), `string_to_hash_bucket_strong` (SipHash-2-4 under a 128-bit
key) and the legacy `string_to_hash_bucket` (TF's own Hash64, a MurmurHash2 variant seeded
0xDECAFCAFFE); the bucket is hash mod num_buckets (int64).

The hashes are Python integers masked to 64 bits (no dependency has TF's hashes), one string at a
time; Fingerprint64 is kernels/fingerprint.py's (lookup tables and crossed columns hash with it
too). The ops are elementwise.
"""

from __future__ import annotations

import struct

import numpy as np

from ..graph import dtypes
from ..graph.registry import not_differentiable, register_op
from .common import STRING, apply_op, check_dtype, convert_to_tensor
from .fingerprint import fingerprint64
from .string_ops import _host

__all__ = ["string_to_hash_bucket_fast", "string_to_hash_bucket_strong", "string_to_hash_bucket"]

M64 = 0xFFFFFFFFFFFFFFFF


def _f64(s, i):
    return struct.unpack_from("<Q", s, i)[0]


def _rot(v, r):
    return ((v >> r) | (v << (64 - r))) & M64


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
