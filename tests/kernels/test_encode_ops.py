"""Base64, zlib/gzip, fingerprints, sparse tensors as strings and timestamp
(dflow/kernels/encode_ops.py). Bytes hard-coded below are TF 2.21's (`tensorflow.compat.v1`) on the
same inputs."""

from __future__ import annotations

import gzip
import zlib

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes


def test_base64_is_web_safe_and_pads_on_request():
    out = run_modes([tf.io.encode_base64([b"\xff\xfe hi"], pad=True), tf.encode_base64([b"\xff\xfe hi"]),
                     tf.decode_base64([b"__4gaGk", b"__4gaGk="])])
    assert out[0].tolist() == [b"__4gaGk="] and out[1].tolist() == [b"__4gaGk"]  # TF's
    assert out[2].tolist() == [b"\xff\xfe hi"] * 2
    p = tf.placeholder(tf.string, [None])
    data = [bytes(range(k)) for k in range(9)]
    np.testing.assert_array_equal(run_modes(tf.io.decode_base64(tf.io.encode_base64(p)), {p: data}),
                                  np.array(data, object))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid character found in base64"):
        run_modes(tf.io.decode_base64([b"ab$c"]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid character"):
        run_modes(tf.io.decode_base64([b"a"]))


def test_decode_compressed():
    out = run_modes([tf.io.decode_compressed([zlib.compress(b"abc"), zlib.compress(b"")], "ZLIB"),
                     tf.decode_compressed(gzip.compress(b"xyz"), "GZIP"), tf.io.decode_compressed([b"raw"])])
    assert out[0].tolist() == [b"abc", b""] and out[1] == b"xyz" and out[2].tolist() == [b"raw"]
    with pytest.raises(tf.errors.DataLossError, match="ZLIB data is corrupt"):
        run_modes(tf.io.decode_compressed([b"garbage"], "ZLIB"))
    with pytest.raises(ValueError, match="compression_type"):
        tf.io.decode_compressed([b"x"], "BZIP2")


def test_fingerprint_matches_tf():
    out = run_modes([tf.fingerprint([b"abc", b""]), tf.fingerprint(np.array([[1, 2], [3, 4]], np.int32)),
                     tf.fingerprint(np.array([[b"a", b"bc"], [b"x", b""]], object))])
    assert out[0].tolist() == [[105, 243, 231, 116, 160, 179, 165, 36], [79, 64, 144, 47, 59, 106, 225, 154]]
    assert out[1].tolist() == [[76, 18, 253, 133, 168, 204, 240, 10], [254, 162, 60, 240, 103, 244, 53, 255]]
    assert out[2].tolist() == [[85, 27, 103, 37, 147, 177, 144, 87], [148, 230, 180, 30, 126, 89, 65, 150]]
    assert tf.fingerprint(np.zeros((5, 2), np.float32)).shape.as_list() == [5, 8]
    with pytest.raises(ValueError, match="rank >= 1"):
        tf.fingerprint(3)
    with pytest.raises(ValueError, match="farmhash64"):
        tf.fingerprint([b"a"], method="md5")


SP = tf.SparseTensorValue([[0, 1], [2, 0]], np.array([5, 6], np.int32), [3, 4])
TF_MANY = [  # TF 2.21's tf.io.serialize_many_sparse of SP
    [b'\x08\t\x12\x08\x12\x02\x08\x01\x12\x02\x08\x01"\x08\x01\x00\x00\x00\x00\x00\x00\x00',
     b'\x08\x03\x12\x04\x12\x02\x08\x01"\x04\x05\x00\x00\x00',
     b'\x08\t\x12\x04\x12\x02\x08\x01"\x08\x04\x00\x00\x00\x00\x00\x00\x00'],
    [b'\x08\t\x12\x06\x12\x00\x12\x02\x08\x01', b'\x08\x03\x12\x02\x12\x00',
     b'\x08\t\x12\x04\x12\x02\x08\x01"\x08\x04\x00\x00\x00\x00\x00\x00\x00'],
]


def test_serialize_many_sparse_writes_tf_bytes_and_round_trips():
    sp = tf.SparseTensor.from_value(SP)
    many = tf.io.serialize_many_sparse(sp)
    out = run_modes(many)
    assert out.shape == (3, 3) and out[:2].tolist() == TF_MANY
    back = tf.io.deserialize_many_sparse(many, tf.int32, rank=2)
    i, v, s = run_modes([back.indices, back.values, back.dense_shape])
    assert i.tolist() == [[0, 1], [2, 0]] and v.tolist() == [5, 6] and s.tolist() == [3, 4]
    one = run_modes(tf.serialize_sparse(sp))
    assert one.shape == (3,)
    assert [run_modes(tf.parse_tensor(one[k], dt)).tolist() for k, dt in enumerate([tf.int64, tf.int32, tf.int64])] \
        == [[[0, 1], [2, 0]], [5, 6], [3, 4]]


def test_deserialize_many_sparse_of_strings_and_bad_bytes():
    sp = tf.SparseTensor([[0, 0], [1, 2]], [b"a", b"bc"], [2, 3])
    back = tf.deserialize_many_sparse(tf.serialize_many_sparse(sp), tf.string)
    assert run_modes(back.values).tolist() == [b"a", b"bc"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="has dtype int32, expected float32"):
        run_modes(tf.io.deserialize_many_sparse(TF_MANY, tf.float32).values)
    with pytest.raises(tf.errors.InvalidArgumentError, match="could not parse"):
        run_modes(tf.io.deserialize_many_sparse([[b"\xff", b"", b""]], tf.int32).values)
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected rank 3"):
        run_modes(tf.io.deserialize_many_sparse(TF_MANY, tf.int32, rank=3).values)
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.serialize_sparse(np.zeros(3))


def test_timestamp_is_read_each_run():
    t = tf.timestamp()
    with tf.Session() as s:
        a, b = s.run(t), s.run(t)
    assert a.dtype == np.float64 and 1.7e9 < a <= b


def test_make_tensor_proto_and_make_ndarray():
    p = tf.make_tensor_proto([1.0, 2.0], dtype=tf.float32)
    assert p.dtype == 1 and p.tensor_shape.dim[0].size == 2
    np.testing.assert_array_equal(tf.make_ndarray(p), np.array([1, 2], np.float32))
    np.testing.assert_array_equal(tf.make_ndarray(tf.make_tensor_proto(3, shape=[2, 2])), np.full((2, 2), 3))
    assert tf.make_ndarray(tf.make_tensor_proto([b"a", b"b"])).tolist() == [b"a", b"b"]
    with pytest.raises(TypeError, match="shape"):
        tf.make_tensor_proto([1, 2], shape=[1, 2], verify_shape=True)
    with pytest.raises(ValueError, match="Too many elements"):
        tf.make_tensor_proto([1, 2, 3], shape=[2])
    with pytest.raises(TypeError, match="int32"):
        tf.make_tensor_proto([1.5], dtype=tf.int32)


def test_tf_io_binds_the_queues():
    assert tf.io.PaddingFIFOQueue is tf.PaddingFIFOQueue and tf.io.RandomShuffleQueue is tf.RandomShuffleQueue
    assert tf.io.PriorityQueue is tf.PriorityQueue and tf.io.QueueBase is tf.QueueBase
