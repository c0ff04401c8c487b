"""DType properties and conversions, and TF1's dtype rules for constants and binary operators."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import dflow as tf
from dflow.graph import dtypes
from tests.conftest import run_modes

# name: (numpy type, floating, integer, unsigned, bool, complex, size, real dtype)
TABLE = {
    "float16": (np.float16, True, False, False, False, False, 2, "float16"),
    "float32": (np.float32, True, False, False, False, False, 4, "float32"),
    "float64": (np.float64, True, False, False, False, False, 8, "float64"),
    "int8": (np.int8, False, True, False, False, False, 1, "int8"),
    "int16": (np.int16, False, True, False, False, False, 2, "int16"),
    "int32": (np.int32, False, True, False, False, False, 4, "int32"),
    "int64": (np.int64, False, True, False, False, False, 8, "int64"),
    "uint8": (np.uint8, False, True, True, False, False, 1, "uint8"),
    "uint16": (np.uint16, False, True, True, False, False, 2, "uint16"),
    "uint32": (np.uint32, False, True, True, False, False, 4, "uint32"),
    "uint64": (np.uint64, False, True, True, False, False, 8, "uint64"),
    "bool": (np.bool_, False, False, False, True, False, 1, "bool"),
    "complex64": (np.complex64, False, False, False, False, True, 8, "float32"),
    "complex128": (np.complex128, False, False, False, False, True, 16, "float64"),
}


@pytest.mark.parametrize("name", list(TABLE))
def test_dtype_properties(name):
    np_type, floating, integer, unsigned, is_bool, is_complex, size, real = TABLE[name]
    d = getattr(tf, name)
    assert d.name == name and d.as_numpy_dtype is np_type and d.np_dtype == np.dtype(np_type)
    assert (d.is_floating, d.is_integer, d.is_unsigned, d.is_bool, d.is_complex) == (
        floating, integer, unsigned, is_bool, is_complex)
    assert d.is_numeric == (not is_bool)
    assert d.size == size and d.real_dtype.name == real and d.base_dtype is d
    if floating:
        assert d.min == np.finfo(np_type).min and d.max == np.finfo(np_type).max
    elif integer:
        assert d.min == np.iinfo(np_type).min and d.max == np.iinfo(np_type).max
    assert d.as_numpy_dtype(1) == np_type(1)
    assert tf.as_dtype(name) is d and tf.as_dtype(np_type) is d and tf.as_dtype(np.dtype(np_type)) is d
    assert tf.as_dtype(d) is d
    assert pickle.loads(pickle.dumps(d)) == d
    assert getattr(tf.dtypes, name) is d


def test_as_dtype_from_python_types_and_aliases():
    assert tf.as_dtype(float) is tf.float32
    assert tf.as_dtype(bool) is tf.bool
    assert tf.as_dtype("double") is tf.float64 and tf.double is tf.float64
    assert tf.as_dtype("half") is tf.float16 and tf.half is tf.float16
    assert tf.as_dtype(np.bool_) is tf.bool
    for bad in ("foo", "float31", np.dtype("datetime64[s]")):
        with pytest.raises(TypeError):
            tf.as_dtype(bad)


def test_as_dtype_none_is_refused():
    with pytest.raises(TypeError):
        tf.as_dtype(None)


def test_dtype_equality_and_hash():
    assert tf.float32 == np.float32 and tf.float32 == "float32" and tf.float32 == np.dtype("float32")
    assert tf.float32 != tf.float64 and not (tf.float32 == tf.float64)
    assert tf.float32 != None and tf.float32 != 3  # noqa: E711 - comparing with None is the test
    assert len({tf.float32, tf.as_dtype("float32"), tf.float64}) == 2
    assert tf.float32.is_compatible_with(tf.float32) and not tf.float32.is_compatible_with(tf.float64)
    assert repr(tf.float32) == "tf.float32"
    assert dtypes.as_dtype is tf.as_dtype


# ---- TF1 conversion rules -----------------------------------------------------------------------


def test_constant_dtypes():
    assert tf.constant(1.5).dtype == tf.float32  # Python floats -> float32
    assert tf.constant(3).dtype == tf.int32  # Python ints -> int32 ...
    assert tf.constant(2**40).dtype == tf.int64  # ... or int64 when they do not fit
    assert tf.constant(True).dtype == tf.bool
    assert tf.constant([1.0, 2.0]).dtype == tf.float32
    assert tf.constant(np.array([1.0, 2.0])).dtype == tf.float64  # numpy keeps its dtype
    assert tf.constant(np.int16(3)).dtype == tf.int16
    assert tf.constant(3, dtype=tf.float64).dtype == tf.float64
    assert tf.constant(3.0).shape.as_list() == []
    with pytest.raises(TypeError):
        tf.constant(1.5, dtype=tf.int32)
    assert tf.constant("a").dtype == tf.string  # strings are string tensors (object arrays of bytes)


def test_binary_operand_takes_the_tensor_dtype():
    x = tf.placeholder(tf.float32, [2])
    assert (x + 1.0).dtype == tf.float32  # a Python float does not promote float32
    assert (x + 1).dtype == tf.float32
    assert (x * np.float64(2)).dtype == tf.float32
    assert (np.array([1.0, 2.0]) - x).dtype == tf.float32
    h = tf.placeholder(tf.float16, [2])
    assert (h * 2.0).dtype == tf.float16
    u = tf.placeholder(tf.uint8, [2])
    assert (u + 3).dtype == tf.uint8
    i = tf.placeholder(tf.int32, [2])
    assert (i * 3).dtype == tf.int32 and (i + np.int64(1)).dtype == tf.int32
    got = run_modes((x + 0.1, i + 1), {x: np.array([1, 2], np.float32), i: np.array([1, 2], np.int32)})
    assert got[0].dtype == np.float32 and got[1].dtype == np.int32
    np.testing.assert_array_equal(got[0], np.array([1, 2], np.float32) + np.float32(0.1))


def test_mismatched_tensor_dtypes_raise_type_error():
    x = tf.placeholder(tf.float32, [2])
    d = tf.constant(1.0, tf.float64)
    i = tf.placeholder(tf.int32, [2])
    with pytest.raises(TypeError):
        _ = x + d
    with pytest.raises(TypeError):
        _ = d * x
    with pytest.raises(TypeError):
        _ = x + i
    with pytest.raises(TypeError):
        _ = i < x
    with pytest.raises(TypeError):
        tf.add(tf.constant(1, tf.int64), i)


def test_int_tensor_with_non_integral_float_raises_type_error():
    i = tf.placeholder(tf.int32, [2])
    with pytest.raises(TypeError):
        _ = i + 1.5
    with pytest.raises(TypeError):
        _ = 1.5 * i
    with pytest.raises(TypeError):
        _ = i < 1.5


def test_int_tensor_with_integral_float_raises_type_error():
    i = tf.placeholder(tf.int32, [2])
    with pytest.raises(TypeError):
        _ = i + 1.0


@pytest.mark.parametrize("dtype, want", [
    (tf.int8, tf.float32), (tf.uint8, tf.float32), (tf.int16, tf.float32), (tf.uint16, tf.float32),
    (tf.int32, tf.float64), (tf.int64, tf.float64), (tf.float16, tf.float16),
    (tf.float32, tf.float32), (tf.float64, tf.float64),
])
def test_truediv_dtypes(dtype, want):
    a = tf.placeholder(dtype, [3])
    b = tf.placeholder(dtype, [3])
    q = a / b
    assert q.dtype == want and q.name == "truediv:0" and q.op.type == "RealDiv"
    av = np.array([7, -3, 5]).astype(dtype.np_dtype) if not dtype.is_unsigned else np.array(
        [7, 3, 5], dtype.np_dtype)
    bv = np.array([2, 4, 3], dtype.np_dtype)
    got = run_modes(q, {a: av, b: bv})
    assert got.dtype == want.np_dtype
    np.testing.assert_allclose(got, av.astype(want.np_dtype) / bv.astype(want.np_dtype), rtol=1e-3)


def test_floordiv_and_div_keep_integers():
    i = tf.placeholder(tf.int32, [3])
    assert (i // 2).dtype == tf.int32 and (i // 2).op.type == "FloorDiv"
    d = tf.div(i, i)
    assert (d.name, d.op.type, d.dtype) == ("div:0", "FloorDiv", tf.int32)
    assert tf.divide(tf.placeholder(tf.float32), 2.0).dtype == tf.float32
    assert tf.truediv(i, i).dtype == tf.float64


# ---- TF1's name table and Python/numpy types (issue #13) ------------------------------------------

# tensorflow 2.21.0, tensorflow.python.framework.dtypes._STRING_TO_TF: name -> DType name
TF_NAMES = {
    "bfloat16": "bfloat16", "bool": "bool", "complex128": "complex128", "complex64": "complex64",
    "double": "float64", "float": "float32", "float16": "float16", "float32": "float32", "float64": "float64",
    "half": "float16", "int16": "int16", "int32": "int32", "int64": "int64", "int8": "int8", "string": "string",
    "uint16": "uint16", "uint32": "uint32", "uint64": "uint64", "uint8": "uint8", "qint8": "qint8",
    "qint16": "qint16", "qint32": "qint32", "quint8": "quint8", "quint16": "quint16", "resource": "resource",
    "variant": "variant", "int4": "int4", "uint4": "uint4", "int2": "int2", "uint2": "uint2",
    "float8_e5m2": "float8_e5m2", "float8_e4m3fn": "float8_e4m3fn", "float8_e4m3fnuz": "float8_e4m3fnuz",
    "float8_e4m3b11fnuz": "float8_e4m3b11fnuz", "float8_e5m2fnuz": "float8_e5m2fnuz",
    "float4_e2m1fn": "float4_e2m1fn",
}
TF_NAMES.update({f"{k}_ref": f"{v}_ref" for k, v in list(TF_NAMES.items())})  # every name has a _ref twin
NO_NUMPY_TYPE = {"bfloat16", "qint8", "qint16", "qint32", "quint8", "quint16", "resource", "int4", "uint4",
                 "int2", "uint2", "float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
                 "float8_e5m2fnuz", "float4_e2m1fn"}


@pytest.mark.parametrize("name", sorted(TF_NAMES))
def test_as_dtype_accepts_tf1_names(name):
    want = TF_NAMES[name]
    if want.removesuffix("_ref") in NO_NUMPY_TYPE:
        with pytest.raises(TypeError, match="dflow does not provide it"):
            tf.as_dtype(name)
        return
    d = tf.as_dtype(name)
    assert d.name == want
    if want.endswith("_ref"):
        base = getattr(tf, want.removesuffix("_ref"))
        assert d.base_dtype is base and d.is_ref_dtype and d != base and base._as_ref is d
        assert d.np_dtype == base.np_dtype
    else:
        assert d is getattr(tf, want) and not d.is_ref_dtype


def test_placeholder_float_is_float32():
    x = tf.placeholder("float", [None, 784])
    w = tf.Variable(tf.zeros([784, 10]))
    assert x.dtype == tf.float32 and tf.matmul(x, w).dtype == tf.float32  # the tutorials' first lines
    assert tf.placeholder("double").dtype == tf.float64 and tf.placeholder("half").dtype == tf.float16


# tensorflow 2.21.0: tf.as_dtype(t).name, or TypeError
PYTHON_AND_NUMPY_TYPES = [
    (float, "float32"), (bool, "bool"), (object, "string"),
    (int, TypeError), (str, TypeError), (bytes, TypeError), (complex, TypeError), (list, TypeError),
    (np.float64, "float64"), (np.int64, "int64"), (np.longlong, "int64"), (np.float16, "float16"),
    (np.uint16, "uint16"), (np.bool_, "bool"), (np.object_, "string"), (np.str_, "string"),
    (np.bytes_, "string"), (np.dtype("U3"), "string"), (np.dtype("S3"), "string"), (np.dtype("O"), "string"),
    (np.dtype("complex64"), "complex64"), (np.dtype("datetime64[s]"), TypeError),
]


@pytest.mark.parametrize("value, want", PYTHON_AND_NUMPY_TYPES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_as_dtype_maps_python_and_numpy_types_as_tf1(value, want):
    if want is TypeError:
        with pytest.raises(TypeError, match="Cannot convert"):
            tf.as_dtype(value)
    else:
        assert tf.as_dtype(value).name == want


def test_unknown_names_give_a_clear_type_error():
    for name in ("float31", "int", "str", "object", "float8"):  # not in TF's table either
        with pytest.raises(TypeError, match="expected a name such as 'float32'"):
            tf.as_dtype(name)
    with pytest.raises(TypeError, match="use dflow.int32 or dflow.int64"):
        tf.as_dtype(int)
    with pytest.raises(TypeError, match="bfloat16 has no numpy element type"):
        tf.placeholder("bfloat16")


def test_ref_dtypes_pickle_and_hash():
    r = tf.as_dtype("float32_ref")
    assert pickle.loads(pickle.dumps(r)) is r and r.name == "float32_ref"
    assert len({r, tf.float32}) == 2 and repr(r) == "tf.float32_ref"
