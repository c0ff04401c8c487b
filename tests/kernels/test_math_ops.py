"""Elementwise ops of dflow.kernels.math_ops against numpy, in every local mode (several chunks)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import dflow as tf
from dflow.kernels import math_ops
from tests.conftest import rand, run_modes

HYP = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
FLOATS = [np.float32, np.float64]
INTS = [np.int32, np.int64]
SHAPE = (5, 3)


def assert_matches(got, want):
    """Same dtype and shape as numpy's answer, values equal (floats within a few ulps)."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind == "f":
        rtol = 2e-6 if want.dtype == np.float32 else 1e-13
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


# ---- unary ---------------------------------------------------------------------------------------

def _sigmoid(x):
    return (1 / (1 + np.exp(-x))).astype(x.dtype)


# public name: (numpy reference, dtypes, input domain)
UNARY = {
    "negative": (np.negative, FLOATS + INTS, "any"),
    "abs": (np.abs, FLOATS + INTS, "any"),
    "sign": (np.sign, FLOATS + INTS, "any"),
    "square": (np.square, FLOATS + INTS, "any"),
    "sqrt": (np.sqrt, FLOATS, "pos"),
    "rsqrt": (lambda x: (1 / np.sqrt(x)).astype(x.dtype), FLOATS, "pos"),
    "exp": (np.exp, FLOATS, "any"),
    "log": (np.log, FLOATS, "pos"),
    "log1p": (np.log1p, FLOATS, "pos"),
    "expm1": (np.expm1, FLOATS, "any"),
    "sin": (np.sin, FLOATS, "any"),
    "cos": (np.cos, FLOATS, "any"),
    "tan": (np.tan, FLOATS, "any"),
    "tanh": (np.tanh, FLOATS, "any"),
    "sigmoid": (_sigmoid, FLOATS, "any"),
    "reciprocal": (lambda x: (1 / x).astype(x.dtype), FLOATS, "pos"),
    "floor": (np.floor, FLOATS, "any"),
    "ceil": (np.ceil, FLOATS, "any"),
    "round": (np.round, FLOATS + INTS, "halves"),
    "is_finite": (np.isfinite, FLOATS, "special"),
    "is_nan": (np.isnan, FLOATS, "special"),
    "is_inf": (np.isinf, FLOATS, "special"),
    "logical_not": (np.logical_not, [np.bool_], "any"),
}


def unary_input(domain, dtype, seed=0):
    x = rand(SHAPE, dtype, seed)
    if domain == "pos":
        x = np.abs(x) + np.asarray(0.1, dtype)
    elif domain == "halves":  # exact .5 values: round half to even, as numpy and TF1
        x = (x * 2).round() / 2 if x.dtype.kind == "f" else x
    elif domain == "special":
        x = x.copy()
        x.flat[[0, 4, 7, 11]] = [np.nan, np.inf, -np.inf, np.nan]
    return x


UNARY_CASES = [(name, dt) for name, (_, dts, _) in UNARY.items() for dt in dts]


@pytest.mark.parametrize("name,dtype", UNARY_CASES, ids=[f"{n}-{np.dtype(d).name}" for n, d in UNARY_CASES])
def test_unary_matches_numpy(name, dtype):
    ref, _, domain = UNARY[name]
    xv = unary_input(domain, dtype, seed=len(name))
    x = tf.placeholder(tf.as_dtype(dtype), [None, 3], name="x")
    y = getattr(tf, name)(x)
    assert y.shape.as_list() == [None, 3]
    with np.errstate(all="ignore"):
        assert_matches(run_modes(y, {x: xv}), ref(xv))


@pytest.mark.parametrize("name,dtype", [("sqrt", np.int32), ("exp", np.int64), ("log", np.bool_),
                                        ("floor", np.int32), ("is_nan", np.int32), ("negative", np.bool_),
                                        ("logical_not", np.float32), ("sigmoid", np.int32)])
def test_unary_rejects_dtype(name, dtype):
    x = tf.placeholder(tf.as_dtype(dtype), [3])
    with pytest.raises(TypeError):
        getattr(tf, name)(x)


def test_unary_op_types_and_names():
    x = tf.placeholder(tf.float32, [2], name="x")
    assert tf.exp(x).op.type == "Exp"
    assert [tf.exp(x).op.name, tf.exp(x).op.name] == ["Exp_1", "Exp_2"]  # TF1's default names
    assert tf.sigmoid(x, name="act").op.name == "act"
    assert tf.logical_not(tf.placeholder(tf.bool, [2])).dtype == tf.bool
    assert tf.is_nan(x).dtype == tf.bool


def test_unary_domain_edges():
    x = tf.placeholder(tf.float64, [4], name="x")
    xv = np.array([0.0, -1.0, 1.0, np.inf])
    with np.errstate(all="ignore"):
        got = run_modes([tf.log(x), tf.sqrt(x), tf.rsqrt(x), tf.reciprocal(x), tf.log1p(x - 1.0)], {x: xv})
    np.testing.assert_array_equal(got[0], [-np.inf, np.nan, 0.0, np.inf])
    np.testing.assert_array_equal(got[1], [0.0, np.nan, 1.0, np.inf])
    np.testing.assert_array_equal(got[2], [np.inf, np.nan, 1.0, 0.0])
    np.testing.assert_array_equal(got[3], [np.inf, -1.0, 1.0, 0.0])
    np.testing.assert_array_equal(got[4], [-np.inf, np.nan, np.log1p(0.0), np.inf])


@pytest.mark.parametrize("dtype", FLOATS)
def test_sigmoid_saturates_without_overflow(dtype):
    x = tf.placeholder(tf.as_dtype(dtype), [6], name="x")
    xv = np.array([-1000, -100, -1, 0, 100, 1000], dtype=dtype)
    with np.errstate(over="raise"):  # no overflow in any mode
        got = run_modes(tf.sigmoid(x), {x: xv})
    assert got.dtype == dtype
    assert np.all(np.isfinite(got))
    assert got[0] == 0.0 and got[-1] == 1.0 and got[3] == 0.5
    np.testing.assert_allclose(got[2], 1 / (1 + np.exp(1.0)), rtol=1e-6)


def test_float32_sigmoid_and_log1p_of_whole_arrays_match_float64():
    """Arrays of hundreds of float32 values take the in-place numpy paths (Eigen's log1p, which
    must keep inf, nan and values too small to change 1 + x); float64 numpy is the reference."""
    rng = np.random.default_rng(5)
    v = np.concatenate([rng.standard_normal(380) * 10, [0, 1e-30, -1e-30, 1e-8, -0.5, 30, -30, 88, -88, 100,
                                                         -100, 1e30, np.inf, np.nan, -1, 3e-39]]).astype(np.float32)
    x = tf.placeholder(tf.float32, v.shape, name="x")
    with np.errstate(all="ignore"):
        sig, l1p = run_modes([tf.sigmoid(x), tf.log1p(x)], {x: v}, chunks=128)
        ref_sig = 1 / (1 + np.exp(-v.astype(np.float64)))
        ref_l1p = np.log1p(v.astype(np.float64))
    np.testing.assert_allclose(sig, ref_sig, rtol=1e-6, atol=1e-30)
    ok = v > -1
    np.testing.assert_allclose(l1p[ok], ref_l1p[ok], rtol=1e-6, atol=0)
    assert l1p[v == -1][0] == -np.inf and np.isnan(l1p[np.isnan(v)]).all()


def test_log1p_of_unit_interval_float32_within_a_few_ulps():
    """LogisticLoss's log1p of exp(-|x|) in [0, 1] (corrected log(1 + x), no division by zero):
    within 4 ulps of float64's log1p across 12 decades, exact at 0 and below 2**-24, nan kept."""
    from dflow.kernels.math_ops import _log1p_unit_f32

    rng = np.random.default_rng(11)
    v = np.concatenate([rng.random(20000), 10.0 ** rng.uniform(-12, 0, 20000),
                        [0, 1, 2.0 ** -24, 2.0 ** -23, 1.5 * 2.0 ** -24, 1e-40, np.nan]]).astype(np.float32)
    with np.errstate(all="raise"):  # nothing divides by zero or is invalid (nan aside)
        got = _log1p_unit_f32(v[:-1])
    ref = np.log1p(v[:-1].astype(np.float64))
    ulps = np.abs(got - ref) / np.spacing(ref.astype(np.float32)).astype(np.float64)
    assert ulps.max() <= 4, ulps.max()
    assert got[v[:-1] == 0][0] == 0 and got[-1] == np.float32(1e-40) and got.dtype == np.float32
    assert np.isnan(_log1p_unit_f32(v[-1:]))[0]


# ---- cast ----------------------------------------------------------------------------------------

def test_cast_float_to_int_truncates_toward_zero():
    x = tf.placeholder(tf.float32, [6], name="x")
    xv = np.array([-2.7, -1.5, -0.2, 0.2, 1.5, 2.7], np.float32)
    got = run_modes([tf.cast(x, tf.int32), tf.to_int64(x), tf.cast(x, "int64")], {x: xv})
    assert_matches(got[0], np.array([-2, -1, 0, 0, 1, 2], np.int32))
    assert_matches(got[1], np.array([-2, -1, 0, 0, 1, 2], np.int64))
    assert_matches(got[2], np.array([-2, -1, 0, 0, 1, 2], np.int64))


def test_cast_bool_and_back():
    x = tf.placeholder(tf.float64, [5], name="x")
    b = tf.placeholder(tf.bool, [5], name="b")
    xv = np.array([0.0, -0.0, 2.5, np.nan, -1.0])
    bv = np.array([True, False, True, True, False])
    got = run_modes([tf.cast(x, tf.bool), tf.cast(b, tf.float32), tf.cast(b, tf.int32),
                     tf.cast(tf.cast(x, tf.int64), tf.bool)], {x: np.nan_to_num(xv), b: bv})
    assert_matches(got[0], np.nan_to_num(xv).astype(bool))
    assert_matches(got[1], bv.astype(np.float32))
    assert_matches(got[2], bv.astype(np.int32))
    assert_matches(got[3], np.nan_to_num(xv).astype(np.int64).astype(bool))


def test_cast_helpers_dtypes_and_identity():
    i = tf.placeholder(tf.int32, [4], name="i")
    assert tf.cast(i, tf.int32) is i  # casting to the same dtype adds no op (TF1)
    assert tf.to_float(i).dtype == tf.float32
    assert tf.to_double(i).dtype == tf.float64
    assert tf.to_int64(i).dtype == tf.int64
    assert tf.to_int32(tf.to_float(i)).dtype == tf.int32
    assert tf.cast(i, tf.float32).op.type == "Cast"
    iv = np.arange(-2, 2, dtype=np.int32)
    got = run_modes([tf.to_float(i), tf.to_double(i)], {i: iv})
    assert_matches(got[0], iv.astype(np.float32))
    assert_matches(got[1], iv.astype(np.float64))


# ---- binary --------------------------------------------------------------------------------------

def _pow_ref(x, y):
    return np.power(x, y)


# public name: (numpy reference, dtypes, right-operand domain)
BINARY = {
    "add": (np.add, FLOATS + INTS, "any"),
    "subtract": (np.subtract, FLOATS + INTS, "any"),
    "multiply": (np.multiply, FLOATS + INTS, "any"),
    "realdiv": (np.divide, FLOATS, "nonzero"),
    "floordiv": (np.floor_divide, FLOATS + INTS, "nonzero"),
    "floor_div": (np.floor_divide, FLOATS + INTS, "nonzero"),
    "floormod": (np.remainder, FLOATS + INTS, "nonzero"),
    "mod": (np.remainder, FLOATS + INTS, "nonzero"),
    "truncatediv": (lambda x, y: (np.abs(x) // np.abs(y) * np.sign(x) * np.sign(y)).astype(x.dtype), INTS,
                    "nonzero"),
    "truncatemod": (np.fmod, FLOATS + INTS, "nonzero"),
    "pow": (_pow_ref, FLOATS + INTS, "small"),
    "maximum": (np.maximum, FLOATS + INTS, "any"),
    "minimum": (np.minimum, FLOATS + INTS, "any"),
    "squared_difference": (lambda x, y: np.square(x - y), FLOATS + INTS, "any"),
    "equal": (np.equal, FLOATS + INTS + [np.bool_], "any"),
    "not_equal": (np.not_equal, FLOATS + INTS + [np.bool_], "any"),
    "less": (np.less, FLOATS + INTS, "any"),
    "less_equal": (np.less_equal, FLOATS + INTS, "any"),
    "greater": (np.greater, FLOATS + INTS, "any"),
    "greater_equal": (np.greater_equal, FLOATS + INTS, "any"),
    "logical_and": (np.logical_and, [np.bool_], "any"),
    "logical_or": (np.logical_or, [np.bool_], "any"),
    "logical_xor": (np.logical_xor, [np.bool_], "any"),
}


def binary_inputs(domain, dtype, xshape, yshape, seed=0):
    x = rand(xshape, dtype, seed)
    y = rand(yshape, dtype, seed + 1)
    if dtype in INTS:
        # equal values appear often, so comparisons exercise both outcomes
        x = x // 3
        y = y // 3
    if domain == "nonzero":
        y = np.where(y == 0, np.asarray(1, dtype), y).astype(dtype)
    elif domain == "small":
        y = (np.abs(y) % 4).astype(dtype) if dtype in INTS else y
        x = np.abs(x) + np.asarray(0.5, dtype) if dtype in FLOATS else x
    return x, y


BINARY_CASES = [(name, dt) for name, (_, dts, _) in BINARY.items() for dt in dts]


@pytest.mark.parametrize("name,dtype", BINARY_CASES, ids=[f"{n}-{np.dtype(d).name}" for n, d in BINARY_CASES])
def test_binary_matches_numpy(name, dtype):
    ref, _, domain = BINARY[name]
    xv, yv = binary_inputs(domain, dtype, SHAPE, SHAPE, seed=len(name))
    x = tf.placeholder(tf.as_dtype(dtype), [None, 3], name="x")
    y = tf.placeholder(tf.as_dtype(dtype), SHAPE, name="y")
    z = getattr(tf, name)(x, y)
    assert z.shape.as_list() == list(SHAPE)
    assert_matches(run_modes(z, {x: xv, y: yv}), ref(xv, yv))


@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4),
       name=st.sampled_from(["add", "subtract", "multiply", "maximum", "floormod", "less", "equal",
                             "squared_difference", "realdiv"]),
       dtype=st.sampled_from([np.float32, np.float64, np.int32, np.int64]),
       seed=st.integers(0, 1000))
@HYP
def test_binary_broadcasting(shapes, name, dtype, seed):
    (xshape, yshape), out_shape = shapes
    if name == "realdiv" and dtype in INTS:
        dtype = np.float64
    ref, _, domain = BINARY[name]
    xv, yv = binary_inputs(domain, dtype, xshape, yshape, seed)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.as_dtype(dtype), xshape, name="x")
        y = tf.placeholder(tf.as_dtype(dtype), [None] * len(yshape), name="y")  # rank known, sizes not
        z = getattr(tf, name)(x, y)
        assert z.shape.ndims == len(out_shape)
        got = run_modes(z, {x: xv, y: yv})
    assert_matches(got, ref(xv, yv))


@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=4))
@HYP
def test_binary_static_broadcast_shape(shapes):
    (xshape, yshape), out_shape = shapes
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, xshape)
        y = tf.placeholder(tf.float32, yshape)
        assert tuple((x + y).shape.as_list()) == out_shape
        assert tuple(tf.maximum(y, x).shape.as_list()) == out_shape


def test_floordiv_and_mod_follow_python_signs():
    pairs = [(-7, 3), (7, -3), (-7, -3), (7, 3), (-6, 3), (0, -5), (-1, 4), (1, -4)]
    xv = np.array([a for a, _ in pairs], np.int32)
    yv = np.array([b for _, b in pairs], np.int32)
    x = tf.placeholder(tf.int32, [len(pairs)], name="x")
    y = tf.placeholder(tf.int32, [len(pairs)], name="y")
    xf, yf = tf.cast(x, tf.float64), tf.cast(y, tf.float64)
    got = run_modes([x // y, x % y, tf.floordiv(xf, yf), tf.mod(xf, yf), tf.div(x, y)], {x: xv, y: yv})
    assert got[0].tolist() == [a // b for a, b in pairs]
    assert got[1].tolist() == [a % b for a, b in pairs]
    assert got[2].tolist() == [float(a // b) for a, b in pairs]
    assert got[3].tolist() == [float(a % b) for a, b in pairs]
    assert got[4].tolist() == [a // b for a, b in pairs]  # div of ints is floor division (TF1)
    assert got[0].dtype == np.int32 and got[2].dtype == np.float64


def test_truediv_of_ints_gives_floats():
    for dt, want in [(tf.int32, np.float64), (tf.int64, np.float64), (tf.int16, np.float32),
                     (tf.uint8, np.float32)]:
        with tf.Graph().as_default():
            x = tf.placeholder(dt, [5], name="x")
            y = tf.placeholder(dt, [5], name="y")
            xv = np.array([1, 2, 7, 9, 0], dt.np_dtype)
            yv = np.array([2, 4, 2, 3, 5], dt.np_dtype)
            got = run_modes([tf.truediv(x, y), x / y, tf.divide(x, y)], {x: xv, y: yv})
            for g in got:
                assert_matches(g, (xv.astype(want) / yv.astype(want)))


def test_truediv_of_int_by_zero_is_inf():
    x = tf.placeholder(tf.int32, [3], name="x")
    with np.errstate(all="ignore"):
        got = run_modes(x / tf.constant([0, 0, 2]), {x: np.array([1, 0, -4], np.int32)})
    np.testing.assert_array_equal(got, [np.inf, np.nan, -2.0])


def test_div_of_floats_is_true_division_and_names():
    x = tf.placeholder(tf.float32, [3], name="x")
    assert tf.div(x, x).op.type == "RealDiv"
    assert tf.truediv(x, x).op.name.startswith("truediv")
    xv = np.array([1.0, -3.0, 5.0], np.float32)
    assert_matches(run_modes(tf.div(x, 2.0), {x: xv}), xv / np.float32(2))


def test_scalar_mul_and_operator_overloads():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 3], name="y")
    xv, yv = rand(SHAPE, seed=1), np.abs(rand(SHAPE, seed=2)) + 0.5
    exprs = [tf.scalar_mul(2.0, x), x + y, x - y, x * y, x / y, x // y, x % y, abs(x), -x,
             2.0 - x, 3.0 / y, 1.5 * x, y ** 2.0, 2.0 ** x, x < y, x <= y, x > y, x >= y]
    f2, f3, f15 = np.float32(2), np.float32(3), np.float32(1.5)
    want = [f2 * xv, xv + yv, xv - yv, xv * yv, xv / yv, xv // yv, xv % yv, np.abs(xv), -xv,
            f2 - xv, f3 / yv, f15 * xv, yv ** f2, f2 ** xv, xv < yv, xv <= yv, xv > yv, xv >= yv]
    got = run_modes(exprs, {x: xv, y: yv})
    for g, w in zip(got, want):
        assert_matches(g, w)
    assert (x + y).op.name.startswith("add") and (x * y).op.type == "Mul"


def test_bool_operator_overloads():
    a = tf.placeholder(tf.bool, [6], name="a")
    b = tf.placeholder(tf.bool, [6], name="b")
    av, bv = rand((6,), np.bool_, 3), rand((6,), np.bool_, 4)
    got = run_modes([a & b, a | b, a ^ b, ~a], {a: av, b: bv})
    for g, w in zip(got, [av & bv, av | bv, av ^ bv, ~av]):
        assert_matches(g, w)
    with pytest.raises(TypeError):
        _ = tf.placeholder(tf.int32, [2]) & tf.placeholder(tf.int32, [2])


def test_python_operand_takes_tensor_dtype():
    i = tf.placeholder(tf.int64, [3], name="i")
    assert (i + 1).dtype == tf.int64
    assert (2 * i).dtype == tf.int64
    assert tf.add(1.0, tf.placeholder(tf.float64, [3])).dtype == tf.float64
    with pytest.raises(TypeError):
        i + 1.5  # not representable as int64 (TF1: TypeError)
    got = run_modes([i + 1, 2 * i, i - np.int64(3)], {i: np.array([1, 2, 3])})
    assert_matches(got[0], np.array([2, 3, 4], np.int64))
    assert_matches(got[1], np.array([2, 4, 6], np.int64))
    assert_matches(got[2], np.array([-2, -1, 0], np.int64))


# ---- where and clip ------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [tf.where, tf.where_v2])
def test_where_three_args_broadcasts(fn):
    c = tf.placeholder(tf.bool, [4, 1], name="c")
    x = tf.placeholder(tf.float32, [1, 3], name="x")
    y = tf.placeholder(tf.float32, [4, 3], name="y")
    cv, xv, yv = rand((4, 1), np.bool_, 5), rand((1, 3), seed=6), rand((4, 3), seed=7)
    z = fn(c, x, y)
    assert z.shape.as_list() == [4, 3] and z.dtype == tf.float32
    assert_matches(run_modes(z, {c: cv, x: xv, y: yv}), np.where(cv, xv, yv))


@given(shapes=mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=3),
       dtype=st.sampled_from([np.float32, np.int64, np.bool_]), seed=st.integers(0, 1000))
@HYP
def test_where_broadcasting(shapes, dtype, seed):
    (cshape, xshape, yshape), out_shape = shapes
    cv, xv, yv = rand(cshape, np.bool_, seed), rand(xshape, dtype, seed + 1), rand(yshape, dtype, seed + 2)
    with tf.Graph().as_default():
        c = tf.placeholder(tf.bool, cshape, name="c")
        x = tf.placeholder(tf.as_dtype(dtype), xshape, name="x")
        y = tf.placeholder(tf.as_dtype(dtype), [None] * len(yshape), name="y")
        z = tf.where(c, x, y)
        assert z.shape.ndims == len(out_shape)
        got = run_modes(z, {c: cv, x: xv, y: yv})
    assert_matches(got, np.where(cv, xv, yv))


def test_where_with_scalar_branch_and_int_dtype():
    c = tf.placeholder(tf.bool, [5, 2], name="c")
    x = tf.placeholder(tf.int64, [5, 2], name="x")
    cv, xv = rand((5, 2), np.bool_, 8), rand((5, 2), np.int64, 9)
    got = run_modes(tf.where(c, x, x * 0), {c: cv, x: xv})
    assert_matches(got, np.where(cv, xv, np.int64(0)))


def test_where_errors():
    c = tf.placeholder(tf.bool, [3], name="c")
    with pytest.raises(TypeError):
        tf.where(c, tf.placeholder(tf.float32, [3]), tf.placeholder(tf.int32, [3]))
    with pytest.raises(ValueError):
        tf.where(tf.placeholder(tf.bool, [2]), tf.placeholder(tf.float32, [3]), tf.placeholder(tf.float32, [3]))
    with pytest.raises(ValueError):
        tf.where(c, tf.placeholder(tf.float32, [3]))


def test_where_non_bool_condition_is_type_error():
    v = tf.placeholder(tf.float32, [3])
    with pytest.raises(TypeError):
        tf.where(v, v, v)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_clip_by_value(dtype):
    t = tf.placeholder(tf.as_dtype(dtype), [None, 3], name="t")
    lo = tf.placeholder(tf.as_dtype(dtype), [3], name="lo")
    tv = rand(SHAPE, dtype, 10)
    lov = np.array([-1, 0, -5], dtype)
    got = run_modes([tf.clip_by_value(t, -2, 3), tf.clip_by_value(t, lo, 4)], {t: tv, lo: lov})
    assert_matches(got[0], np.clip(tv, dtype(-2), dtype(3)))
    assert_matches(got[1], np.minimum(np.maximum(tv, lov), dtype(4)))
    assert tf.clip_by_value(t, -2, 3).op.type == "ClipByValue"


def test_clip_by_value_errors():
    t = tf.placeholder(tf.float32, [3], name="t")
    with pytest.raises(ValueError):
        tf.clip_by_value(t, tf.placeholder(tf.float32, [2, 3]), 1.0)  # bounds would grow t
    with pytest.raises(ValueError):
        tf.clip_by_value(t, tf.placeholder(tf.float32, [4]), 1.0)
    with pytest.raises(TypeError):
        tf.clip_by_value(tf.placeholder(tf.bool, [3]), False, True)


# ---- build-time errors ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "less", "equal", "floormod",
                                  "logical_and", "squared_difference", "pow"])
def test_binary_shapes_that_cannot_broadcast(name):
    dt = tf.bool if name.startswith("logical") else tf.float32
    x = tf.placeholder(dt, [2, 3], name="x")
    y = tf.placeholder(dt, [4], name="y")
    with pytest.raises(ValueError, match="x:0|y:0|shape|Dimensions"):
        getattr(tf, name)(x, y)
    with pytest.raises(ValueError):
        getattr(tf, name)(tf.placeholder(dt, [None, 3]), tf.placeholder(dt, [5, 2]))


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "less", "equal", "floordiv",
                                  "realdiv", "pow", "squared_difference"])
def test_binary_dtype_mismatch(name):
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.placeholder(tf.float64, [3], name="y")
    with pytest.raises(TypeError):
        getattr(tf, name)(x, y)
    with pytest.raises(TypeError):
        getattr(tf, name)(tf.placeholder(tf.int32, [3]), tf.placeholder(tf.float32, [3]))


@pytest.mark.parametrize("name,dt", [("logical_and", tf.float32), ("add", tf.bool), ("realdiv", tf.int32),
                                     ("less", tf.bool), ("floormod", tf.bool), ("maximum", tf.bool)])
def test_binary_rejects_dtype(name, dt):
    with pytest.raises(TypeError):
        getattr(tf, name)(tf.placeholder(dt, [3]), tf.placeholder(dt, [3]))


def test_unknown_dims_defer_shape_check_to_run_time():
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.placeholder(tf.float32, [None], name="y")
    z = x + y
    assert z.shape.as_list() == [None]
    with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError):
        s.run(z, {x: np.ones(3, np.float32), y: np.ones(4, np.float32)})


def test_run_time_broadcast_error_on_dask_path():
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.placeholder(tf.float32, [None], name="y")
    with tf.Session(scheduler="sync", chunks=2) as s, pytest.raises(tf.errors.InvalidArgumentError):
        s.run(x + y, {x: np.ones(3, np.float32), y: np.ones(4, np.float32)})


def test_every_public_name_is_covered():
    from tests.test_math import COMPOSITES  # tested there, under tf.math
    from tests.test_math import UNARY as MORE_UNARY

    covered = set(UNARY) | set(BINARY) | set(MORE_UNARY) | set(COMPOSITES) | {
        "cast", "to_float", "to_double", "to_int32", "to_int64", "truediv", "divide", "div", "scalar_mul",
        "where", "where_v2", "clip_by_value"}
    assert set(math_ops.__all__) <= covered, set(math_ops.__all__) - covered


# ---- constants in expressions (0-d constants must stay 0-d) --------------------------------------

def test_scalar_constant_is_0d():
    c = tf.constant(2.0)
    assert c.shape.as_list() == []
    assert tf.constant(3).shape.ndims == 0


def test_scalar_placeholder_with_python_scalar():
    x = tf.placeholder(tf.float32, [], name="x")
    got = run_modes([x * 2.0, tf.maximum(x, 0.0), tf.cast(x, tf.int32) + 1], {x: np.float32(-1.5)})
    assert got[0] == np.float32(-3.0) and np.ndim(got[0]) == 0
    assert np.ndim(got[1]) == 0 and np.ndim(got[2]) == 0


# ---- ReluGrad: Relu's gradient, one op (TF1's gen_nn_ops.relu_grad) ----------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
def test_relu_gradient_is_one_relu_grad_op_matching_numpy(dtype):
    x0 = rand((6, 5), dtype, 3)
    x0[0, :3] = 0  # relu'(0) = 0, as TF
    g0 = rand((6, 5), dtype, 4)
    x = tf.placeholder(dtype, [None, 5])
    g = tf.placeholder(dtype, [None, 5])
    (dx,) = tf.gradients(tf.nn.relu(x), x, grad_ys=g)
    assert dx.op.type == "ReluGrad" and dx.op.inputs[1].op.type == "Relu"
    got = run_modes(dx, {x: x0, g: g0})
    assert_matches(got, g0 * (x0 > 0))


def test_relu_grad_of_an_infinite_gradient_is_nan_where_relu_is_flat():
    # TF's ReluGrad multiplies by the mask: inf * 0 is nan, not 0 (as a where() would give)
    y = tf.placeholder(tf.float32, [3])
    g = tf.placeholder(tf.float32, [3])
    out = math_ops.apply_op("ReluGrad", [g, y])
    got = run_modes(out, {y: np.array([-1, 0, 2], np.float32), g: np.array([np.inf, 1, -np.inf], np.float32)})
    np.testing.assert_array_equal(got, np.array([np.nan, 0, -np.inf], np.float32))


def test_relu_second_order_and_central_differences():
    x0 = rand((4, 3), np.float64, 5)
    x0[np.abs(x0) < 0.1] = 0.5  # away from the kink, where differences are smooth
    x = tf.constant(x0)
    y = tf.nn.relu(x) ** 3
    (dx,) = tf.gradients(tf.reduce_sum(y), x)
    (ddx,) = tf.gradients(tf.reduce_sum(dx), x)
    with tf.Session():
        assert tf.test.compute_gradient_error(x, [4, 3], y, [4, 3], x_init_value=x0) < 1e-5  # O(delta**2) for a cubic
        assert tf.test.compute_gradient_error(x, [4, 3], dx, [4, 3], x_init_value=x0) < 1e-5  # O(delta**2) for a cubic
    got = run_modes(ddx)
    np.testing.assert_allclose(got, 6 * np.maximum(x0, 0), rtol=1e-12)


def test_clip_by_value_with_min_above_max_is_tf1s():
    # TF1 computes max(min(t, hi), lo) (TF 2.21's tf.compat.v1 gives [6, 6, 6]); numpy's clip gives hi
    t = tf.placeholder(tf.float32, [3])
    out, = run_modes([tf.clip_by_value(t, 6.0, 4.0)], {t: np.array([0.0, 5.0, 10.0], np.float32)})
    assert out.tolist() == [6.0, 6.0, 6.0]
