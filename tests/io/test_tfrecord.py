"""TFRecord files (dflow/io/tfrecord.py): `tf.python_io.TFRecordWriter` / `tf_record_iterator` round
trips against the records written, TensorFlow's bytes, the `tfrecord` package's writer, and TF1's
errors for missing and corrupted files."""

from __future__ import annotations

import gzip
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tfrecord.writer import TFRecordWriter as PackageWriter

import dflow as tf

COMPRESSIONS = ["", "GZIP", "ZLIB"]

# TF 2.21 (compat.v1): tf.io.TFRecordWriter(path) writing b"abc" then b""
TF_FILE = (b"\x03\x00\x00\x00\x00\x00\x00\x00\xb0\x99I\x0eabcnW\xf1!"
           b"\x00\x00\x00\x00\x00\x00\x00\x00)\x03\x98\x07\xd8\xea\x82\xa2")


@settings(max_examples=15, deadline=None)
@given(records=st.lists(st.binary(max_size=300), max_size=12), compression=st.sampled_from(COMPRESSIONS))
def test_round_trip_of_random_records(tmp_path_factory, records, compression):
    path = str(tmp_path_factory.mktemp("rt") / "r.tfr")
    with tf.python_io.TFRecordWriter(path, tf.python_io.TFRecordOptions(compression)) as w:
        for r in records:
            w.write(r)
    assert list(tf.python_io.tf_record_iterator(path, compression)) == records
    assert list(tf.io.tf_record_iterator(path, tf.io.TFRecordOptions(compression_type=compression))) == records


def test_uncompressed_bytes_are_tensorflows(tmp_path):
    path = str(tmp_path / "a.tfr")
    with tf.io.TFRecordWriter(path) as w:
        w.write(b"abc")
        w.write("")  # str is encoded as UTF-8, as TF1
    assert open(path, "rb").read() == TF_FILE
    (tmp_path / "tf.tfr").write_bytes(TF_FILE)
    assert list(tf.python_io.tf_record_iterator(str(tmp_path / "tf.tfr"))) == [b"abc", b""]


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_compressed_files_are_one_gzip_or_zlib_stream_of_the_records(tmp_path, compression):
    rng = np.random.default_rng(0)
    records = [rng.bytes(int(n)) for n in rng.integers(0, 50000, 20)]
    path = tmp_path / "c.tfr"
    with tf.io.TFRecordWriter(str(path), compression) as w:
        for r in records:
            w.write(r)
    raw = path.read_bytes()
    plain = gzip.decompress(raw) if compression == "GZIP" else zlib.decompress(raw)
    (tmp_path / "plain.tfr").write_bytes(plain)
    assert list(tf.io.tf_record_iterator(str(tmp_path / "plain.tfr"))) == records
    enum = getattr(tf.python_io.TFRecordCompressionType, compression)
    assert list(tf.io.tf_record_iterator(str(path), enum)) == records
    assert tf.io.TFRecordOptions.get_compression_type_string(tf.io.TFRecordOptions(enum)) == compression
    # read in small buffers: records span the decompressor's output pieces
    from dflow.io.tfrecord import read_records

    assert list(read_records(str(path), compression, buffer_size=7)) == records


def test_a_file_of_the_tfrecord_package_parses_in_a_session(tmp_path):
    path = str(tmp_path / "pkg.tfr")
    w = PackageWriter(path)
    w.write({"x": ([1.5, 2.5], "float"), "n": (7, "int"), "s": (b"hi", "byte")})
    w.write({"x": ([3.0, 4.0], "float"), "n": (8, "int"), "s": (b"yo", "byte")})
    w.close()
    serialized = list(tf.python_io.tf_record_iterator(path))
    s = tf.placeholder(tf.string, [None])
    parsed = tf.parse_example(s, {"x": tf.FixedLenFeature([2], tf.float32), "n": tf.FixedLenFeature([], tf.int64),
                                  "s": tf.FixedLenFeature([], tf.string)})
    with tf.Session() as sess:
        out = sess.run(parsed, {s: serialized})
    np.testing.assert_array_equal(out["x"], [[1.5, 2.5], [3.0, 4.0]])
    np.testing.assert_array_equal(out["n"], [7, 8])
    assert list(out["s"]) == [b"hi", b"yo"]


def test_examples_serialize_with_tf_train_protos():
    ex = tf.train.Example(features=tf.train.Features(feature={
        "f": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0])),
        "i": tf.train.Feature(int64_list=tf.train.Int64List(value=[3])),
        "b": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"z"]))}))
    back = tf.train.Example.FromString(ex.SerializeToString())
    assert list(back.features.feature["f"].float_list.value) == [1.0, 2.0]
    assert list(back.features.feature["i"].int64_list.value) == [3]


# ---- errors (TF 2.21 compat.v1 figures) ------------------------------------------------------------
def test_missing_file_is_not_found(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="nope.tfr; No such file or directory"):
        list(tf.python_io.tf_record_iterator(str(tmp_path / "nope.tfr")))


def test_bad_checksum_is_data_loss(tmp_path):
    path = tmp_path / "bad.tfr"
    path.write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00abcdhello1234")
    # TF: "corrupted record at 0 (Is this even a TFRecord file?)"
    with pytest.raises(tf.errors.DataLossError, match=r"corrupted record at 0 \(Is this even a TFRecord file\?\)"):
        list(tf.python_io.tf_record_iterator(str(path)))
    good = bytearray(TF_FILE)
    good[14] ^= 1  # a byte of the first record's data
    path.write_bytes(bytes(good))
    with pytest.raises(tf.errors.DataLossError, match="corrupted record at 0"):
        list(tf.python_io.tf_record_iterator(str(path)))


def test_truncated_record_is_data_loss_and_a_partial_header_ends_the_file(tmp_path):
    path = tmp_path / "t.tfr"
    path.write_bytes(TF_FILE[:30])  # the second record (at 19) cut inside its header
    assert list(tf.python_io.tf_record_iterator(str(path))) == [b"abc"]
    one = TF_FILE[:19]
    path.write_bytes(one + one[:14])  # the second record cut inside its data
    # TF: "truncated record at 19"
    with pytest.raises(tf.errors.DataLossError, match="truncated record at 19"):
        list(tf.python_io.tf_record_iterator(str(path)))


def test_a_corrupted_compressed_stream_is_data_loss(tmp_path):
    path = tmp_path / "z.tfr"
    with tf.io.TFRecordWriter(str(path), "ZLIB") as w:
        w.write(b"x" * 1000)
    path.write_bytes(path.read_bytes()[:-6])
    with pytest.raises(tf.errors.DataLossError):
        list(tf.io.tf_record_iterator(str(path), "ZLIB"))
    (tmp_path / "empty").touch()  # an empty file holds no records, whatever its compression
    assert list(tf.io.tf_record_iterator(str(tmp_path / "empty"), "ZLIB")) == []


def test_writer_after_close_and_bad_options(tmp_path):
    w = tf.python_io.TFRecordWriter(str(tmp_path / "w.tfr"))
    w.close()
    w.close()  # a second close does nothing
    with pytest.raises(tf.errors.FailedPreconditionError, match="Writer is closed."):
        w.write(b"x")
    with pytest.raises(ValueError, match="compression_type"):
        tf.io.TFRecordOptions("BZ2")
    with tf.io.TFRecordWriter(str(tmp_path / "t.tfr")) as w, pytest.raises(TypeError, match="bytes or str"):
        w.write(5)  # not five NUL bytes
