"""String tensors: constants, placeholders and feeds, fetches as bytes, equality, concatenation,
as_string, string_join / tf.strings.join, length, to_number, py_func in and out, printing; in
process and forced through Dask on every local scheduler.

Expected values are TF's, from tensorflow 2.21.0 `tensorflow.compat.v1` (graph mode), hard-coded.
"""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from tests.conftest import run_modes

HELLO = "Hello, TensorFlow!"


def _is_bytes_array(a, expected):
    assert isinstance(a, np.ndarray) and a.dtype == object, a
    assert all(type(v) is bytes for v in a.reshape(-1)), a
    np.testing.assert_array_equal(a, np.asarray(expected, dtype=object))


# ---- constants, feeds, fetches ---------------------------------------------------------------------


def test_string_constants_are_string_tensors():
    s = tf.constant(HELLO)
    assert s.dtype == tf.string and s.shape.as_list() == []
    assert str(s) == 'Tensor("Const:0", shape=(), dtype=string)'
    l = tf.constant(["a", b"bc", "\u00e9"])
    assert l.dtype == tf.string and l.shape.as_list() == [3]
    assert tf.constant(np.array([["x", "y"]])).shape.as_list() == [1, 2]
    assert tf.constant(np.array([b"x"])).dtype == tf.string
    assert tf.constant(np.array(["x"], dtype=object)).dtype == tf.string
    assert tf.constant("a", dtype=tf.string).dtype == tf.string
    assert tf.constant("a", shape=[2]).shape.as_list() == [2]


def test_string_constant_dtype_errors_as_tf1():
    with pytest.raises(TypeError, match="Expected string, but got 1 of type 'int'"):
        tf.constant(1, dtype=tf.string)
    with pytest.raises(TypeError, match="Expected float32"):
        tf.constant("a", dtype=tf.float32)


@pytest.mark.program
def test_hello_tensorflow_program():
    hello = tf.constant(HELLO)
    with tf.Session() as sess:
        out = sess.run(hello)
    assert type(out) is bytes and out == b"Hello, TensorFlow!"


@pytest.mark.program
def test_feeds_of_str_bytes_and_numpy_strings():
    p = tf.placeholder(tf.string, [None])
    q = tf.placeholder(tf.string)
    ident = tf.identity(p)
    with tf.Session() as sess:
        for feed in (["x", b"y"], np.array(["x", "y"]), np.array([b"x", b"y"]), np.array(["x", b"y"], dtype=object)):
            got, got_ident = sess.run([p, ident], {p: feed})
            _is_bytes_array(got, [b"x", b"y"])
            _is_bytes_array(got_ident, [b"x", b"y"])
        scalar = sess.run(tf.identity(q), {q: "\u00e9t\u00e9"})
        assert type(scalar) is bytes and scalar == "\u00e9t\u00e9".encode()
        assert sess.run(q, {q: b"raw"}) == b"raw"


def test_feed_errors_name_the_tensor():
    p = tf.placeholder(tf.string, [None], name="words")
    f = tf.placeholder(tf.float32, [None], name="numbers")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="words:0.*string"):
            sess.run(p, {p: np.array([1, 2])})
        with pytest.raises(tf.errors.InvalidArgumentError, match="numbers:0"):
            sess.run(f, {f: ["a"]})


# ---- equality and concatenation --------------------------------------------------------------------


def test_equal_and_not_equal_on_strings():
    l = tf.constant(["a", "bc", "\u00e9"])
    p = tf.placeholder(tf.string, [3])
    feed = {p: ["a", "b", "\u00e9"]}
    got = run_modes([tf.equal(l, "a"), tf.not_equal(l, p), tf.equal(p, l), tf.equal(tf.constant("x"), "x")], feed)
    np.testing.assert_array_equal(got[0], [True, False, False])
    np.testing.assert_array_equal(got[1], [False, True, False])  # TF 2.21.0: [False  True False]
    np.testing.assert_array_equal(got[2], [True, False, True])
    assert got[3] == np.bool_(True)
    with pytest.raises(TypeError):
        tf.equal(l, tf.constant([1, 2, 3]))


def test_add_concatenates_strings_as_tf1():
    s = tf.constant(HELLO)
    l = tf.constant(["a", "bc", "\u00e9"])
    got = run_modes([s + "!", l + l, tf.add(l, "x"), "<" + l])
    assert got[0] == b"Hello, TensorFlow!!"
    _is_bytes_array(got[1], [b"aa", b"bcbc", "\u00e9\u00e9".encode()])
    _is_bytes_array(got[2], [b"ax", b"bcx", "\u00e9x".encode()])
    _is_bytes_array(got[3], [b"<a", b"<bc", "<\u00e9".encode()])


@pytest.mark.parametrize("build", [lambda s: s * 2, lambda s: s - s, lambda s: s / s, lambda s: -s,
                                   lambda s: tf.reduce_sum(s), lambda s: tf.exp(s), lambda s: s < s,
                                   lambda s: s + 1])
def test_arithmetic_on_strings_fails_when_built(build):
    s = tf.placeholder(tf.string, [2])
    with pytest.raises(TypeError, match="string"):
        build(s)


def test_arithmetic_error_wording_is_tf1s():
    with pytest.raises(TypeError, match=r"^Value passed to parameter 'x' has DataType string not in list of "
                                        r"allowed values: float16, float32, float64, complex64, complex128"):
        tf.exp(tf.constant("a"))
    with pytest.raises(TypeError, match=r"^Value passed to parameter '.*' has DataType string not in list of "
                                        r"allowed values: float16, float32, float64, uint8, int8, uint16"):
        tf.multiply(tf.constant("a"), tf.constant("b"))


# ---- as_string -------------------------------------------------------------------------------------

FLOATS = np.array([1.5, -2.25e-7, 123456789.0, np.inf, np.nan], np.float32)
# TF 2.21.0: tf.as_string(FLOATS, **kwargs)
AS_STRING_FLOATS = [
    ({}, [b"1.500000", b"-0.000000", b"123456792.000000", b"inf", b"nan"]),
    ({"precision": 3}, [b"1.500", b"-0.000", b"123456792.000", b"inf", b"nan"]),
    ({"shortest": True}, [b"1.5", b"-2.25e-07", b"1.23457e+08", b"inf", b"nan"]),
    ({"scientific": True}, [b"1.500000e+00", b"-2.250000e-07", b"1.234568e+08", b"inf", b"nan"]),
    ({"width": 8}, [b"1.500000", b"-0.000000", b"123456792.000000", b"     inf", b"     nan"]),
    ({"width": 8, "fill": "0"}, [b"1.500000", b"-0.000000", b"123456792.000000", b"     inf", b"     nan"]),
    ({"width": 8, "fill": "-"}, [b"1.500000", b"-0.000000", b"123456792.000000", b"inf     ", b"nan     "]),
    ({"precision": 2, "scientific": True}, [b"1.50e+00", b"-2.25e-07", b"1.23e+08", b"inf", b"nan"]),
    ({"width": 6, "precision": 1}, [b"   1.5", b"  -0.0", b"123456792.0", b"   inf", b"   nan"]),
    ({"precision": 1, "shortest": True}, [b"2", b"-2e-07", b"1e+08", b"inf", b"nan"]),
]


@pytest.mark.parametrize("kwargs, expected", AS_STRING_FLOATS)
def test_as_string_floats(kwargs, expected):
    x = tf.placeholder(tf.float32, [5])
    out = tf.as_string(x, **kwargs)
    assert out.dtype == tf.string and out.shape.as_list() == [5]
    _is_bytes_array(run_modes(out, {x: FLOATS}), expected)


@pytest.mark.parametrize("kwargs, expected", [
    ({}, [b"1", b"-23", b"456789"]),
    ({"width": 5}, [b"    1", b"  -23", b"456789"]),
    ({"width": 5, "fill": "0"}, [b"00001", b"-0023", b"456789"]),
    ({"width": 3, "fill": " "}, [b"  1", b"-23", b" 456789"]),
])
def test_as_string_integers(kwargs, expected):
    _is_bytes_array(run_modes(tf.as_string(tf.constant([1, -23, 456789], tf.int64), **kwargs)), expected)


def test_as_string_other_types():
    got = run_modes([tf.as_string(tf.constant([True, False])), tf.as_string(tf.constant(3.25, tf.float64)),
                     tf.as_string(tf.constant([1 + 2j], tf.complex64)), tf.as_string(tf.constant([np.float16(0.1)])),
                     tf.as_string(tf.constant([np.uint8(200)])),
                     tf.as_string(tf.constant([-0.0, 1e300], tf.float64), shortest=True),
                     tf.as_string(tf.constant([1.5, 2.0]), width=8, fill="+")])
    _is_bytes_array(got[0], [b"true", b"false"])
    assert got[1] == b"3.250000"
    _is_bytes_array(got[2], [b"(1.000000,2.000000)"])
    _is_bytes_array(got[3], [b"0.099976"])
    _is_bytes_array(got[4], [b"200"])
    _is_bytes_array(got[5], [b"-0", b"1e+300"])
    _is_bytes_array(got[6], [b"+1.500000", b"+2.000000"])


@pytest.mark.parametrize("value, kwargs, message", [
    (1.5, dict(scientific=True, shortest=True), "Cannot select both scientific and shortest notation"),
    (1.5, dict(fill="ab", width=3), "Fill string must be one or fewer characters"),
    (1.5, dict(fill="x", width=3), 'Fill argument not supported: "x"'),
    (1, dict(precision=2), "precision not supported for datatype int32"),
    (1, dict(shortest=True), "scientific and shortest format not supported for datatype int32"),
])
def test_as_string_refuses_what_tf1_refuses(value, kwargs, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        tf.as_string(tf.constant([value]), **kwargs)


def test_as_string_of_a_string_is_refused():
    with pytest.raises(TypeError, match="string"):
        tf.as_string(tf.constant("a"))


# ---- join, length, to_number -----------------------------------------------------------------------


def test_string_join_broadcasts_scalars():
    l = tf.constant(["a", "bc", "\u00e9"])
    p = tf.placeholder(tf.string, [None])
    joined = tf.strings.join([l, "-", p], separator="|")
    assert joined.shape.as_list() == [3] and joined.op.type == "StringJoin"
    got = run_modes([joined, tf.string_join(["a", "b"], separator=", "), tf.strings.join([p, p])],
                    {p: ["x", "y", "z"]})
    _is_bytes_array(got[0], [b"a|-|x", b"bc|-|y", "\u00e9|-|z".encode()])
    assert got[1] == b"a, b"
    _is_bytes_array(got[2], [b"xx", b"yy", b"zz"])


def test_string_join_shape_errors():
    with pytest.raises(ValueError, match="StringJoin"):
        tf.string_join([tf.constant(["a", "b"]), tf.constant(["a", "b", "c"])])
    with pytest.raises(ValueError, match="StringJoin"):
        tf.string_join([tf.constant([["a", "b"]]), tf.constant(["a", "b"])])
    with pytest.raises(TypeError, match="string"):
        tf.string_join([tf.constant(["a"]), tf.constant([1])])
    p = tf.placeholder(tf.string, [None])
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="StringJoin"):
        sess.run(tf.string_join([p, tf.constant(["a", "b"])]), {p: ["x", "y", "z"]})


def test_length_and_to_number():
    words = tf.constant(["ab", "\u00e9", ""])
    got = run_modes([tf.strings.length(words), tf.strings.length(words, unit="UTF8_CHAR"),
                     tf.strings.to_number(["1.5", "-2", "1e3"]),
                     tf.string_to_number(["7", "-3"], out_type=tf.int64)])
    np.testing.assert_array_equal(got[0], np.array([2, 2, 0], np.int32))
    np.testing.assert_array_equal(got[1], np.array([2, 1, 0], np.int32))
    assert got[2].dtype == np.float32 and got[3].dtype == np.int64
    np.testing.assert_array_equal(got[2], np.array([1.5, -2, 1000], np.float32))
    np.testing.assert_array_equal(got[3], [7, -3])
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="could not correctly convert"):
        sess.run(tf.strings.to_number(["abc"]))


# ---- py_func and printing --------------------------------------------------------------------------


def _question(x):
    assert isinstance(x, bytes) or (x.dtype == object and all(type(v) is bytes for v in x.reshape(-1)))
    return x + b"?"


def _returns_str(x):
    return "str out"


def _returns_unicode_array(x):
    return np.array(["u1", "\u00e9"])


@pytest.mark.program
def test_py_func_takes_and_returns_strings():
    s = tf.constant(HELLO)
    l = tf.constant(["a", "bc"])
    outs = [tf.py_func(_question, [s], tf.string), tf.py_func(_question, [l], tf.string),
            tf.py_func(_returns_str, [s], tf.string), tf.py_func(_returns_unicode_array, [l], tf.string)]
    with tf.Session() as sess:
        got = sess.run(outs)
    assert type(got[0]) is bytes and got[0] == b"Hello, TensorFlow!?"  # TF 2.21.0 gives the same
    _is_bytes_array(got[1], [b"a?", b"bc?"])
    assert type(got[2]) is bytes and got[2] == b"str out"
    _is_bytes_array(got[3], [b"u1", "\u00e9".encode()])


@pytest.mark.program
def test_printing_strings(capfd):
    s = tf.constant(HELLO)
    l = tf.constant(["a", "bc", "\u00e9"])
    printed = tf.Print(s, [s, l], "msg: ")
    with tf.Session() as sess:
        assert sess.run(printed) == b"Hello, TensorFlow!"
        sess.run(tf.print(s, l, output_stream="file:///dev/stderr"))
    err = capfd.readouterr().err
    assert "msg: [Hello, TensorFlow!][a bc \u00e9]" in err  # TF 2.21.0's tf.Print
    assert '"Hello, TensorFlow!" ["a" "bc" "\u00e9"]' in err  # TF 2.21.0's tf.print


@pytest.mark.program
def test_string_pipeline_in_a_program():
    scores = tf.placeholder(tf.float32, [None])
    names = tf.placeholder(tf.string, [None])
    lines = tf.strings.join([names, tf.as_string(scores, precision=2)], separator=": ")
    best = tf.equal(lines, "b: 2.50")
    with tf.Session() as sess:
        got_lines, got_best = sess.run([lines, best], {scores: np.array([1.0, 2.5], np.float32), names: ["a", "b"]})
    _is_bytes_array(got_lines, [b"a: 1.00", b"b: 2.50"])
    np.testing.assert_array_equal(got_best, [False, True])


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_dask_array_feeds_of_strings(scheduler):
    import dask.array as da

    p = tf.placeholder(tf.string, [None])
    joined = tf.strings.join([p, "!"])
    with tf.Session(scheduler=scheduler, **({} if scheduler is None else {"small_plan_bytes": 0})) as sess:
        for values in (np.array(["a", "b", "c", "d"]), np.array([b"a", b"b", b"c", b"d"]),
                       np.array(["a", "b", "c", "d"], dtype=object)):
            got = sess.run(joined, {p: da.from_array(values, chunks=2)})
            _is_bytes_array(got, [b"a!", b"b!", b"c!", b"d!"])


# ---- other ops on strings, as TF1 (TF 2.21.0's answers) --------------------------------------------


def test_shape_ops_select_and_zeros_like_on_strings():
    l = tf.constant(["a", "bc", "d", "e"])
    got = run_modes([tf.gather(l, [2, 0]), tf.reshape(l, [2, 2]), tf.concat([l, l[:1]], 0), tf.stack([l, l])[1],
                     tf.where(tf.equal(l, "a"), l, tf.fill([4], "z")), tf.zeros_like(l), tf.tile(l[:2], [2]),
                     tf.boolean_mask(l, tf.not_equal(l, "bc")), tf.transpose(tf.reshape(l, [2, 2]))])
    _is_bytes_array(got[0], [b"d", b"a"])
    _is_bytes_array(got[1], [[b"a", b"bc"], [b"d", b"e"]])
    _is_bytes_array(got[2], [b"a", b"bc", b"d", b"e", b"a"])
    _is_bytes_array(got[3], [b"a", b"bc", b"d", b"e"])
    _is_bytes_array(got[4], [b"a", b"z", b"z", b"z"])  # TF: [b'a' b'z' b'z' b'z']
    _is_bytes_array(got[5], [b"", b"", b"", b""])  # TF: zeros_like of strings is empty strings
    _is_bytes_array(got[6], [b"a", b"bc", b"a", b"bc"])
    _is_bytes_array(got[7], [b"a", b"d", b"e"])
    _is_bytes_array(got[8], [[b"a", b"d"], [b"bc", b"e"]])


def test_string_conversions_tf1_refuses():
    l = tf.constant(["1", "2"])
    with pytest.raises(TypeError, match="Expected string, but got 1 of type 'int'"):
        tf.ones_like(l)
    with pytest.raises(TypeError, match="Cast string to float32 is not supported"):
        tf.cast(l, tf.float32)  # TF: UnimplementedError "Cast string to float is not supported" at run time
    with pytest.raises(TypeError, match="Cast float32 to string is not supported"):
        tf.cast(tf.constant([1.0]), tf.string)
    with pytest.raises(TypeError, match="Failed to convert elements"):
        tf.constant(["a", 1])
