"""The string ops of kernels/text_ops.py and kernels/hash_ops.py: string_split / strings.split,
substr, strip, regex_replace / regex_full_match, reduce_join, lower / upper, decode_raw, and the
hash buckets; in process and through Dask on the local schedulers, eagerly, and in Dataset.map.

Expected values are TF's, from tensorflow 2.21.0 `tensorflow.compat.v1` (graph mode), hard-coded;
the hashes were checked for strings of each length class of FarmHash (0-16, 17-32, 33-64, > 64).
"""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe
from dflow.kernels.hash_ops import fingerprint64, legacy_hash64, siphash24
from tests.conftest import run_modes


def _sparse(sp):
    return sp.indices.tolist(), sp.values.tolist(), sp.dense_shape.tolist()


def test_string_split_as_tf1():
    p = tf.placeholder(tf.string, [None])
    sp = tf.string_split(p)
    assert isinstance(sp, tf.SparseTensor) and sp.values.dtype == tf.string
    out = run_modes(sp, {p: ["a b  c", "", "d"]})
    assert _sparse(out) == ([[0, 0], [0, 1], [0, 2], [2, 0]], [b"a", b"b", b"c", b"d"], [3, 3])
    out = run_modes(tf.string_split(["a,b,,c"], delimiter=",", skip_empty=False))
    assert _sparse(out) == ([[0, 0], [0, 1], [0, 2], [0, 3]], [b"a", b"b", b"", b"c"], [1, 4])
    # each character of the delimiter separates; an empty one splits into bytes
    assert _sparse(run_modes(tf.string_split(["a,b;c"], delimiter=",;")))[1] == [b"a", b"b", b"c"]
    assert _sparse(run_modes(tf.string_split(["a b"], delimiter="")))[1] == [b"a", b" ", b"b"]
    with pytest.raises(ValueError, match="Shape must be rank 1"):
        tf.string_split([["a"]])


def test_strings_split_v2():
    out = run_modes(tf.strings.split(["a  b", "c"]))
    assert _sparse(out) == ([[0, 0], [0, 1], [1, 0]], [b"a", b"b", b"c"], [2, 2])
    out = run_modes(tf.strings.split(["a<>b<>c"], sep="<>", maxsplit=1))
    assert _sparse(out) == ([[0, 0], [0, 1]], [b"a", b"b<>c"], [1, 2])
    with pytest.raises(ValueError, match="RaggedTensor"):
        tf.strings.split(["a"], result_type="RaggedTensor")


def test_substr_as_tf1():
    p = tf.placeholder(tf.string, [2])
    assert run_modes(tf.substr(p, 1, 3), {p: ["hello", "ab"]}).tolist() == [b"ell", b"b"]
    assert run_modes(tf.substr("hello", -3, 2)) == b"ll"
    assert run_modes(tf.strings.substr("h\u00e9llo", 1, 2, unit="UTF8_CHAR")) == "\u00e9l".encode()
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"pos 3 out of range for string b'ab' at index 1"):
        run_modes(tf.substr(["hello", "ab"], [1, 3], [2, 1]))


def test_strip_regex_case():
    x = tf.constant([" a b \n", "\t"])
    assert run_modes(tf.string_strip(x)).tolist() == [b"a b", b""]
    assert run_modes(tf.strings.strip(x)).tolist() == [b"a b", b""]
    y = tf.constant(["aabb", "ab"])
    assert run_modes(tf.regex_replace(y, "a+", "X")).tolist() == [b"Xbb", b"Xb"]
    assert run_modes(tf.strings.regex_replace(y, "a", "X", replace_global=False)).tolist() == [b"Xabb", b"Xb"]
    assert run_modes(tf.regex_replace(["abc"], "(b)", r"[\1]")).tolist() == [b"a[b]c"]
    assert run_modes(tf.regex_replace(["abc"], "b", r"<\0>")).tolist() == [b"a<b>c"]
    assert run_modes(tf.strings.regex_full_match(["abc", "ab"], "a.c")).tolist() == [True, False]
    assert run_modes(tf.strings.lower(["Ab\u00c9"])).tolist() == ["ab\u00c9".encode()]
    assert run_modes(tf.strings.upper(["ab\u00e9"], encoding="utf-8")).tolist() == ["AB\u00c9".encode()]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid pattern"):
        tf.regex_replace(y, "(", "x")


def test_reduce_join_as_tf1():
    x = tf.constant([["a", "b"], ["c", "d"]])
    assert run_modes(tf.reduce_join(x, 0)).tolist() == [b"ac", b"bd"]
    assert run_modes(tf.reduce_join(x, -1)).tolist() == [b"ab", b"cd"]
    assert run_modes(tf.reduce_join(x)) == b"abcd"
    out = tf.strings.reduce_join(x, 1, separator="-", keepdims=True)
    assert out.shape.as_list() == [2, 1]
    assert run_modes(out).tolist() == [[b"a-b"], [b"c-d"]]
    with pytest.raises(ValueError, match="Invalid reduction dimension 2"):
        tf.reduce_join(x, 2)


def test_decode_raw_as_tf1():
    p = tf.placeholder(tf.string, [None])
    v = tf.decode_raw(p, tf.int16)
    assert v.shape.as_list() == [None, None] and v.dtype == tf.int16
    out = run_modes(v, {p: [b"\x01\x00\x02\x00", b"\x03\x00\x04\x01"]})
    np.testing.assert_array_equal(out, [[1, 2], [3, 260]])
    assert run_modes(tf.decode_raw([b"\x01\x00\x02\x00"], tf.int16, little_endian=False)).tolist() == [[256, 512]]
    assert run_modes(tf.io.decode_raw(b"\x01\x00\x02\x00", tf.uint8)).tolist() == [1, 0, 2, 0]
    x = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(run_modes(tf.decode_raw(x.tobytes(), tf.float32)), x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="DecodeRaw requires input strings to all be the same "
                                                             "size, but element 1 has size 4 != 1"):
        run_modes(tf.decode_raw([b"\x01\x00\x02\x00", b"\x01"], tf.int16))


# TF 2.21's figures (string_to_hash_bucket_* with num_buckets 1000 and 2**62)
WORDS = ["", "a", "hello", "The quick brown fox jumps over the lazy dog", "x" * 100]


def test_hash_buckets_are_tf_s():
    p = tf.placeholder(tf.string, [None])
    fast = tf.string_to_hash_bucket_fast(p, 1000)
    assert fast.dtype == tf.int64
    assert run_modes(fast, {p: WORDS}).tolist() == [263, 939, 296, 284, 719]
    long = tf.strings.to_hash_bucket_fast(["x" * 17, "y" * 33, "z" * 64, "w" * 65], 2 ** 62)
    assert run_modes(long).tolist() == [2082709914559524773, 3999049019338133246, 294799756062990872,
                                        3272011567211491968]
    strong = tf.string_to_hash_bucket_strong(["", "a", "hello", "x" * 100], 1000, key=[1, 2])
    assert run_modes(strong).tolist() == [435, 646, 622, 463]
    legacy = tf.string_to_hash_bucket(["", "a", "hello", "abcdefgh", "abcdefghi", "x" * 100], 2 ** 62)
    assert run_modes(legacy).tolist() == [105434511174508091, 2996632905371535868, 1331861223480393034,
                                          3429851175771700306, 2154505082538699157, 1482511825497849095]
    assert fingerprint64(b"") == 0x9AE16A3B2F90404F and siphash24(1, 2, b"a") % 1000 == 646
    assert legacy_hash64(b"a") % 1000 == 868
    with pytest.raises(ValueError, match="Key must have size 2"):
        tf.string_to_hash_bucket_strong(["a"], 10, key=[1])


def test_eager_and_in_dataset_map():
    with tfe.eager_mode():
        assert tf.substr(["hello"], 1, 2).numpy().tolist() == [b"el"]
        assert tf.string_to_hash_bucket_fast(["hello"], 1000).numpy().tolist() == [296]
        sp = tf.string_split(["a b"])
        assert sp.values.numpy().tolist() == [b"a", b"b"]
    ds = tf.data.Dataset.from_tensor_slices(["  A,b ", " c,D"]).map(
        lambda s: tf.strings.lower(tf.string_strip(s))).map(
        lambda s: (tf.regex_replace(s, ",", ";"), tf.string_to_hash_bucket_fast(s, 1000)))
    a, b = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        first = sess.run([a, b])
        second = sess.run([a, b])
    assert first[0] == b"a;b" and second[0] == b"c;d"
    assert first[1] == fingerprint64(b"a,b") % 1000
