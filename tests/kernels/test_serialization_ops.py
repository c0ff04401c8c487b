"""serialize_tensor / parse_tensor / decode_json_example against TensorFlow's bytes.

The hex strings are `tf.io.serialize_tensor(tf.constant(v)).numpy().hex()` in TF 2.21 eager (the
same kernel as TF1's graph-mode tf.serialize_tensor); the JSON Example bytes are TF 2.21's
`tf.io.decode_json_example`; the error texts TF 2.21 compat.v1 graph mode's."""

import numpy as np
import pytest

import dflow as tf
from dflow.proto import Example
from tests.conftest import run_modes

TF_BYTES = {
    "float32": (np.array([[1.5, -2.0, 3.25], [0.0, 4.0, 5.0]], np.float32),
                "08011208120208021202080322180000c03f000000c00000504000000000000080400000a040"),
    "int64": (np.array([1, -2, 3 << 40], np.int64),
              "080912041202080322180100000000000000feffffffffffffff0000000000030000"),
    "string": (np.array([b"ab", b"", b"\xff\x00z"], object), "08071204120208034202616242004203ff007a"),
    "bool": (np.array([True, False, True]), "080a1204120208032203010001"),
    "scalar": (np.float32(7.5), "0801120022040000f040"),
    "int32 scalar": (np.int32(3), "08031200220403000000"),
    "float64": (np.array([1.0, 2.0]), "08021204120208022210000000000000f03f0000000000000040"),
    "uint8": (np.array([1, 2, 255], np.uint8), "080412041202080322030102ff"),
    "empty": (np.zeros((0, 3), np.float32), "08011206120012020803"),
    "string scalar": (np.array(b"hello", object), "08071200420568656c6c6f"),
    "float16": (np.array([1.5, 2], np.float16), "08131204120208022204003e0040"),
    "complex64": (np.array([1 + 2j], np.complex64), "080812041202080122080000803f00000040"),
    "int8": (np.array([-1, 2], np.int8), "08061204120208022202ff02"),
    "uint64": (np.array([1, 2], np.uint64), "0817120412020802221001000000000000000200000000000000"),
}


@pytest.mark.parametrize("case", list(TF_BYTES))
def test_serialize_tensor_writes_tensorflows_bytes_and_parse_tensor_reads_them(case):
    value, hex_bytes = TF_BYTES[case]
    x = tf.constant(value)
    s = tf.serialize_tensor(x)
    assert s.dtype == tf.string and s.shape.as_list() == []
    back = tf.parse_tensor(s, x.dtype)
    assert back.dtype == x.dtype and back.shape.ndims is None
    from_tf = tf.io.parse_tensor(bytes.fromhex(hex_bytes), x.dtype)
    got_bytes, got, got_tf = run_modes([s, back, from_tf])
    assert got_bytes.hex() == hex_bytes
    as_array = (lambda v: np.asarray(v, dtype=object)) if x.dtype == tf.string else np.asarray  # b"" when 0-d
    for g in (as_array(got), as_array(got_tf)):
        assert g.shape == np.shape(value) and g.dtype == np.asarray(value).dtype
        np.testing.assert_array_equal(g, value)


def test_eager_and_through_a_dataset():
    v = np.arange(6, dtype=np.int64).reshape(2, 3)
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensor_slices(v).map(tf.io.serialize_tensor).map(
            lambda s: tf.parse_tensor(s, tf.int64))
        nxt = tf.data.make_one_shot_iterator(ds).get_next()
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(nxt), v[0])
            np.testing.assert_array_equal(sess.run(nxt), v[1])


def test_parse_tensor_errors_name_the_op():
    good = bytes.fromhex(TF_BYTES["float32"][1])
    p = tf.placeholder(tf.string, name="p")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Type mismatch between parsed tensor \(float\) and dtype \(int32\)") as e:
            sess.run(tf.parse_tensor(p, tf.int32, name="as_int"), {p: good})
        assert "as_int" in str(e.value)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse `serialized` as TensorProto, "
                                                                   "base64: //8="):
            sess.run(tf.parse_tensor(p, tf.float32), {p: b"\xff\xff"})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Expected `serialized` to be a scalar, got shape: "
                                                                   r"\[2\]"):
            sess.run(tf.parse_tensor(p, tf.float32), {p: [good, good]})
        truncated = bytes.fromhex("0801120412020803" + "0000c03f")  # 3 floats announced, 1 given
        with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse"):
            sess.run(tf.parse_tensor(p, tf.float32), {p: truncated})
    with pytest.raises(ValueError, match="rank 0"):
        tf.parse_tensor(tf.constant([b"a", b"b"]), tf.float32)
    with pytest.raises(TypeError):
        tf.parse_tensor(tf.constant(1.0), tf.float32)


def test_no_gradient_as_tf1():
    x = tf.constant([1.0, 2.0])
    assert tf.gradients(tf.reduce_sum(tf.parse_tensor(tf.serialize_tensor(x), tf.float32)), x) == [None]


# TF 2.21 tf.io.decode_json_example of JSON_EXAMPLES[0] and of "{}" (TF writes the repeated floats
# unpacked, protobuf's Python writer packs them: the same Example, compared as messages)
JSON_EXAMPLES = ['{"features": {"feature": {"a": {"floatList": {"value": [1.5, 2]}}}}}', "{}"]
JSON_TF_BYTES = [b"\n\x13\n\x11\n\x01a\x12\x0c\x12\n\r\x00\x00\xc0?\r\x00\x00\x00@", b""]


def test_decode_json_example_matches_tensorflow_and_parses():
    j = tf.constant(JSON_EXAMPLES)
    out = tf.decode_json_example(j)
    assert out.shape.as_list() == [2] and out.dtype == tf.string
    parsed = tf.parse_example(out, {"a": tf.FixedLenFeature([2], tf.float32, default_value=[0.0, 0.0])})
    got, feats = run_modes([out, parsed])
    assert [Example.FromString(b) for b in got] == [Example.FromString(b) for b in JSON_TF_BYTES]
    np.testing.assert_array_equal(feats["a"], [[1.5, 2.0], [0.0, 0.0]])
    ex = tf.io.decode_json_example('{"features": {"feature": {"c": {"int64List": {"value": ["3", 4]}}, '
                                   '"b": {"bytesList": {"value": ["aGk="]}}}}}')
    one = tf.parse_single_example(ex, {"c": tf.VarLenFeature(tf.int64), "b": tf.FixedLenFeature([], tf.string)})
    with tf.Session() as sess:
        v = sess.run(one)
    assert v["c"].values.tolist() == [3, 4] and v["b"] == b"hi"


def test_decode_json_example_bad_json_names_the_op():
    p = tf.placeholder(tf.string, [None])
    bad = tf.decode_json_example(p, name="from_json")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Error while parsing JSON") as e:
            sess.run(bad, {p: ['{"feat": 3}']})
        assert "from_json" in str(e.value)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Error while parsing JSON"):
            sess.run(bad, {p: ["not json"]})
