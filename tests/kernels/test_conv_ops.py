"""Convolutions (conv_ops, depthwise_ops) against direct numpy references written here (a loop over
output positions), TF's figures for two cases, central-difference gradients (first and second
order), static shapes, build-time errors, and every scheduler with inputs chunked along N."""

from __future__ import annotations

import re

import dask.array as da
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import dflow as tf
from dflow.test import compute_gradient_error
from tests.conftest import ALL_MODES, make_session, rand, run_modes

HYP = settings(max_examples=30, deadline=None)


# ---- numpy references ----------------------------------------------------------------------------


def ref_pads(n, k, s, d, padding):
    """(out, before, after) for one spatial dim, by TF's rule (SAME: the odd cell after)."""
    eff = (k - 1) * d + 1
    if padding == "SAME":
        out = int(np.ceil(n / s))
        total = max((out - 1) * s + eff - n, 0)
        return out, total // 2, total - total // 2
    if padding == "VALID":
        return (n - eff) // s + 1, 0, 0
    b, a = padding
    return (n + b + a - eff) // s + 1, b, a


def _geometry(x_shape, k, strides, padding, dilations):
    hp = padding if isinstance(padding, str) else padding[0]
    wp = padding if isinstance(padding, str) else padding[1]
    return (ref_pads(x_shape[1], k[0], strides[0], dilations[0], hp),
            ref_pads(x_shape[2], k[1], strides[1], dilations[1], wp))


def ref_conv2d(x, w, strides=(1, 1), padding="SAME", dilations=(1, 1), depthwise=False):
    """NHWC conv2d (or depthwise conv) by looping over output positions, in float64."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    kh, kw = w.shape[:2]
    (oh, t, b), (ow, le, r) = _geometry(x.shape, (kh, kw), strides, padding, dilations)
    xp = np.pad(x, [(0, 0), (t, b), (le, r), (0, 0)])
    out = np.zeros((x.shape[0], oh, ow, w.shape[2] * w.shape[3] if depthwise else w.shape[3]))
    for i in range(oh):
        for j in range(ow):
            hs, ws = i * strides[0], j * strides[1]
            patch = xp[:, hs:hs + (kh - 1) * dilations[0] + 1:dilations[0],
                       ws:ws + (kw - 1) * dilations[1] + 1:dilations[1]]
            if depthwise:
                out[:, i, j] = np.einsum("nhwc,hwcm->ncm", patch, w).reshape(x.shape[0], -1)
            else:
                out[:, i, j] = np.tensordot(patch, w, 3)
    return out


def ref_conv2d_transpose(dy, w, in_shape, strides=(1, 1), padding="SAME", dilations=(1, 1)):
    """The adjoint of ref_conv2d in its input: each output position's dy spread over its window."""
    dy, w = dy.astype(np.float64), w.astype(np.float64)
    kh, kw = w.shape[:2]
    (oh, t, b), (ow, le, r) = _geometry(in_shape, (kh, kw), strides, padding, dilations)
    assert dy.shape[1:3] == (oh, ow)
    dx = np.zeros((in_shape[0], in_shape[1] + t + b, in_shape[2] + le + r, in_shape[3]))
    for i in range(oh):
        for j in range(ow):
            hs, ws = i * strides[0], j * strides[1]
            dx[:, hs:hs + (kh - 1) * dilations[0] + 1:dilations[0], ws:ws + (kw - 1) * dilations[1] + 1:dilations[1]] \
                += np.einsum("no,hwco->nhwc", dy[:, i, j], w)
    return dx[:, t:t + in_shape[1], le:le + in_shape[2]]


def nchw(v):
    return np.transpose(v, (0, 3, 1, 2))


def nhwc(v):
    return np.transpose(v, (0, 2, 3, 1))


def run(fetches, feed=None, graph=None):
    with make_session("eager", graph=graph) as s:
        return s.run(fetches, feed)


# ---- values against numpy ---------------------------------------------------------------------------


@st.composite
def conv_cases(draw, depthwise=False):
    n, h, w, c = (draw(st.integers(1, 3)), draw(st.integers(1, 7)), draw(st.integers(1, 7)), draw(st.integers(1, 3)))
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    o = draw(st.integers(1, 3))
    strides = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilations = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = draw(st.sampled_from(["SAME", "VALID", "EXPLICIT"]))
    if padding == "EXPLICIT":
        padding = [(draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(2)]
    fmt = draw(st.sampled_from(["NHWC", "NCHW"]))
    return (n, h, w, c), k + (c, o), strides, padding, dilations, fmt, draw(st.integers(0, 2**16))


def _window_fits(x_shape, w_shape, strides, padding, dilations):
    dims = _geometry(x_shape, w_shape[:2], strides, padding, dilations)
    return all(out >= 1 for out, _, _ in dims)


def _tf_padding(padding, fmt):
    if isinstance(padding, str):
        return padding
    pairs = [[0, 0], list(padding[0]), list(padding[1]), [0, 0]]
    return [pairs[0], pairs[3], pairs[1], pairs[2]] if fmt == "NCHW" else pairs


def _tf_seq(v, fmt):
    return [1, 1, *v] if fmt == "NCHW" else [1, *v, 1]


@HYP
@given(case=conv_cases())
def test_conv2d_matches_numpy(case):
    x_shape, w_shape, strides, padding, dilations, fmt, seed = case
    x, w = rand(x_shape, np.float64, seed), rand(w_shape, np.float64, seed + 1)
    fits = _window_fits(x_shape, w_shape, strides, padding, dilations)
    with tf.Graph().as_default():
        args = (nchw(x) if fmt == "NCHW" else x, w, _tf_seq(strides, fmt), _tf_padding(padding, fmt))
        kw = dict(data_format=fmt, dilations=_tf_seq(dilations, fmt))
        if not fits:
            with pytest.raises(ValueError, match="Negative dimension size"):
                tf.nn.conv2d(*args, **kw)
            return
        y = tf.nn.conv2d(*args, **kw)
        got = run(y)
    want = ref_conv2d(x, w, strides, padding, dilations)
    assert y.shape.as_list() == list((nchw(want) if fmt == "NCHW" else want).shape)
    np.testing.assert_allclose(nhwc(got) if fmt == "NCHW" else got, want, rtol=1e-10, atol=1e-10)


@HYP
@given(case=conv_cases())
def test_conv2d_backprop_input_and_transpose_match_numpy(case):
    x_shape, w_shape, strides, padding, dilations, fmt, seed = case
    assume(_window_fits(x_shape, w_shape, strides, padding, dilations))
    (oh, _, _), (ow, _, _) = _geometry(x_shape, w_shape[:2], strides, padding, dilations)
    dy, w = rand((x_shape[0], oh, ow, w_shape[3]), np.float64, seed), rand(w_shape, np.float64, seed + 1)
    in_shape = nchw(np.empty(x_shape)).shape if fmt == "NCHW" else x_shape
    with tf.Graph().as_default():
        dx = tf.nn.conv2d_backprop_input(in_shape, w, nchw(dy) if fmt == "NCHW" else dy, _tf_seq(strides, fmt),
                                         _tf_padding(padding, fmt), data_format=fmt,
                                         dilations=_tf_seq(dilations, fmt))
        assert dx.shape.as_list() == list(in_shape)
        got = run(dx)
    want = ref_conv2d_transpose(dy, w, x_shape, strides, padding, dilations)
    np.testing.assert_allclose(nhwc(got) if fmt == "NCHW" else got, want, rtol=1e-10, atol=1e-10)


@HYP
@given(case=conv_cases())
def test_conv2d_backprop_filter_matches_numpy(case):
    # the filter gradient of sum(dy * conv2d(x, w)) is linear in w: read it off a basis of w
    x_shape, w_shape, strides, padding, dilations, fmt, seed = case
    assume(_window_fits(x_shape, w_shape, strides, padding, dilations))
    (oh, _, _), (ow, _, _) = _geometry(x_shape, w_shape[:2], strides, padding, dilations)
    x, dy = rand(x_shape, np.float64, seed), rand((x_shape[0], oh, ow, w_shape[3]), np.float64, seed + 1)
    want = np.zeros(w_shape)
    for idx in np.ndindex(w_shape):
        e = np.zeros(w_shape)
        e[idx] = 1
        want[idx] = np.sum(dy * ref_conv2d(x, e, strides, padding, dilations))
    with tf.Graph().as_default():
        dw = tf.nn.conv2d_backprop_filter(nchw(x) if fmt == "NCHW" else x, list(w_shape),
                                          nchw(dy) if fmt == "NCHW" else dy, _tf_seq(strides, fmt),
                                          _tf_padding(padding, fmt), data_format=fmt,
                                          dilations=_tf_seq(dilations, fmt))
        assert dw.shape.as_list() == list(w_shape)
        got = run(dw)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


@HYP
@given(case=conv_cases(), m=st.integers(1, 2))
def test_depthwise_conv2d_matches_numpy(case, m):
    x_shape, w_shape, strides, padding, dilations, fmt, seed = case
    w_shape = w_shape[:3] + (m,)
    padding = padding if isinstance(padding, str) else "SAME"
    assume(_window_fits(x_shape, w_shape, strides, padding, dilations))
    x, w = rand(x_shape, np.float64, seed), rand(w_shape, np.float64, seed + 1)
    with tf.Graph().as_default():
        y = tf.nn.depthwise_conv2d_native(nchw(x) if fmt == "NCHW" else x, w, _tf_seq(strides, fmt), padding,
                                          data_format=fmt, dilations=_tf_seq(dilations, fmt))
        got = run(y)
    want = ref_conv2d(x, w, strides, padding, dilations, depthwise=True)
    np.testing.assert_allclose(nhwc(got) if fmt == "NCHW" else got, want, rtol=1e-10, atol=1e-10)


def test_float32_and_float16_keep_their_dtype():
    x, w = rand((2, 6, 6, 3), np.float64), rand((3, 3, 3, 4), np.float64, 1)
    want = ref_conv2d(x, w, (2, 2), "SAME")
    for dtype, tol in ((np.float32, 1e-5), (np.float16, 2e-2)):
        y = tf.nn.conv2d(x.astype(dtype), w.astype(dtype), [1, 2, 2, 1], "SAME")
        got = run(y)
        assert got.dtype == dtype and y.dtype == tf.as_dtype(dtype)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)


def test_composites_match_numpy():
    x, w = rand((2, 9, 8, 3), np.float64), rand((3, 3, 3, 2), np.float64, 1)
    pw = rand((1, 1, 6, 4), np.float64, 2)
    x1, w1 = rand((2, 11, 3), np.float64, 3), rand((3, 3, 5), np.float64, 4)
    ys = [tf.nn.atrous_conv2d(x, w[..., :2], 2, "SAME"),
          tf.nn.separable_conv2d(x, w, pw, [1, 1, 1, 1], "VALID"),
          tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME", rate=[2, 1]),
          tf.nn.conv1d(x1, w1, 2, "SAME"),
          tf.nn.conv1d(np.transpose(x1, (0, 2, 1)), w1, 1, "VALID", data_format="NCW"),
          tf.nn.convolution(x, w[..., :2], "SAME", strides=[2, 1], dilation_rate=None),
          tf.nn.convolution(x1, w1, "VALID", dilation_rate=[2])]
    got = run(ys)
    dw = ref_conv2d(x, w, padding="VALID", depthwise=True)
    one_d = ref_conv2d(x1[:, None], w1[None], (1, 2), "SAME")[:, 0]
    want = [ref_conv2d(x, w[..., :2], padding="SAME", dilations=(2, 2)),
            np.tensordot(dw, pw[0, 0], 1),
            ref_conv2d(x, w, padding="SAME", dilations=(2, 1), depthwise=True),
            one_d,
            np.transpose(ref_conv2d(x1[:, None], w1[None], padding="VALID")[:, 0], (0, 2, 1)),
            ref_conv2d(x, w[..., :2], (2, 1), "SAME"),
            ref_conv2d(x1[:, None], w1[None], padding="VALID", dilations=(1, 2))[:, 0]]
    for y, g, v in zip(ys, got, want):
        assert y.shape.as_list() == list(v.shape), y
        np.testing.assert_allclose(g, v, rtol=1e-10, atol=1e-10, err_msg=y.name)
    assert ys[3].op.type == "Squeeze" and ys[3].name.startswith("conv1d")


# TF 2.21.0 (tensorflow.compat.v1, graph mode, CPU): conv2d SAME stride 2 and conv2d_transpose
TF_X = (np.arange(50, dtype=np.float32).reshape(1, 5, 5, 2) % 7 - 3) / 4
TF_W = (np.arange(54, dtype=np.float32).reshape(3, 3, 2, 3) % 5 - 2) / 3
TF_V = np.arange(27, dtype=np.float32).reshape(1, 3, 3, 3) % 4 - 1.5
TF_CONV = np.array([[[-0.5833333, 0.6666666, -0.16666669], [-0.08333337, -1.6666667, 0.50000006],
                     [-0.08333334, 0.6666667, -0.6666666]],
                    [[0.3333333, -0.9166667, -0.5], [0.33333328, 0.5000001, -0.16666669],
                     [-0.3333333, 0.50000006, -0.33333334]],
                    [[0.4166667, -0.25000003, 0.75], [-0.8333333, 0.58333325, -0.08333334],
                     [0.8333333, -0.75, -0.6666667]]], np.float32)[None]
TF_TRANSPOSE_ROWS_0_1 = np.array([[[1.1666666, -1.1666667], [0.6666667, -0.8333333], [-0.3333333, 1.0],
                                   [-0.6666667, 2.1666667], [-1.6666667, 1.6666667], [-0.6666667, -0.16666667]],
                                  [[-1.1666667, 0.6666667], [-0.8333333, 0.16666667], [1.0, -1.8333335],
                                   [2.1666667, -0.8333334], [1.6666667, -0.8333334], [-0.16666667, -0.5]]], np.float32)
TF_TRANSPOSE_ROW_5 = np.array([[2.1666667, -0.6666667], [-0.16666667, -0.5], [-1.6666667, 2.8333335],
                               [-1.1666667, 1.1666667], [-1.0000001, -0.16666669], [-0.8333333, 0.16666667]],
                              np.float32)


def test_values_from_tensorflow():
    y = tf.nn.conv2d(TF_X, TF_W, strides=[1, 2, 2, 1], padding="SAME")
    t = tf.nn.conv2d_transpose(TF_V, TF_W, output_shape=[1, 6, 6, 2], strides=[1, 2, 2, 1], padding="SAME")
    assert t.op.type == "Conv2DBackpropInput" and t.op.name == "conv2d_transpose"
    got_y, got_t = run([y, t])
    np.testing.assert_allclose(got_y, TF_CONV, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got_t[0, :2], TF_TRANSPOSE_ROWS_0_1, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got_t[0, 5], TF_TRANSPOSE_ROW_5, rtol=1e-6, atol=1e-6)


# ---- gradients --------------------------------------------------------------------------------------


GRAD_CASES = [  # x shape (NHWC), filter shape, strides, padding, dilations, data_format
    ((2, 5, 6, 2), (3, 3, 2, 3), (2, 2), "SAME", (1, 1), "NHWC"),
    ((1, 7, 6, 2), (2, 3, 2, 2), (1, 2), "VALID", (2, 1), "NHWC"),
    ((2, 5, 4, 3), (3, 2, 3, 2), (2, 1), "SAME", (1, 1), "NCHW"),
    ((1, 4, 5, 1), (2, 2, 1, 2), (1, 1), [(1, 0), (2, 1)], (1, 1), "NHWC"),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_conv2d_gradients_against_central_differences(case):
    x_shape, w_shape, strides, padding, dilations, fmt = case
    x_shape = nchw(np.empty(x_shape)).shape if fmt == "NCHW" else x_shape
    x = tf.constant(rand(x_shape, np.float64))
    w = tf.constant(rand(w_shape, np.float64, 1))
    y = tf.nn.conv2d(x, w, _tf_seq(strides, fmt), _tf_padding(padding, fmt), data_format=fmt,
                     dilations=_tf_seq(dilations, fmt))
    with make_session("eager"):
        err = compute_gradient_error([x, w], [x_shape, w_shape], y, y.shape.as_list())
    assert err < 1e-7


@pytest.mark.parametrize("case", GRAD_CASES[:3], ids=str)
def test_second_order_gradients(case):
    # d/dw and d/dx of the input gradient of sum(conv2d(x, w)^2): Conv2DBackpropInput's rule (and
    # through it Conv2D's and Conv2DBackpropFilter's)
    x_shape, w_shape, strides, padding, dilations, fmt = case
    x_shape = nchw(np.empty(x_shape)).shape if fmt == "NCHW" else x_shape
    x = tf.constant(rand(x_shape, np.float64))
    w = tf.constant(rand(w_shape, np.float64, 1))
    y = tf.nn.conv2d(x, w, _tf_seq(strides, fmt), padding, data_format=fmt, dilations=_tf_seq(dilations, fmt))
    gx, gw = tf.gradients(tf.reduce_sum(tf.square(y)), [x, w])
    with make_session("eager"):
        assert compute_gradient_error([x, w], [x_shape, w_shape], gx, x_shape) < 1e-6
        assert compute_gradient_error([x, w], [x_shape, w_shape], gw, list(w_shape)) < 1e-6


def test_transpose_and_depthwise_gradients():
    v = tf.constant(rand((2, 3, 3, 3), np.float64))
    w = tf.constant(rand((3, 3, 2, 3), np.float64, 1))
    t = tf.nn.conv2d_transpose(v, w, [2, 6, 5, 2], [1, 2, 2, 1], "SAME")
    x = tf.constant(rand((2, 5, 6, 2), np.float64, 2))
    dw = tf.constant(rand((3, 2, 2, 2), np.float64, 3))
    pw = tf.constant(rand((1, 1, 4, 3), np.float64, 4))
    d = tf.nn.depthwise_conv2d(x, dw, [1, 2, 1, 1], "SAME")
    s = tf.nn.separable_conv2d(x, dw, pw, [1, 1, 1, 1], "VALID")
    with make_session("eager"):
        assert compute_gradient_error([v, w], [[2, 3, 3, 3], [3, 3, 2, 3]], t, [2, 6, 5, 2]) < 1e-7
        assert compute_gradient_error([x, dw], [[2, 5, 6, 2], [3, 2, 2, 2]], d, d.shape.as_list()) < 1e-7
        assert compute_gradient_error([x, dw, pw], [[2, 5, 6, 2], [3, 2, 2, 2], [1, 1, 4, 3]], s,
                                      s.shape.as_list()) < 1e-7
        gx, gw = tf.gradients(tf.reduce_sum(tf.square(d)), [x, dw])
        assert compute_gradient_error([x, dw], [[2, 5, 6, 2], [3, 2, 2, 2]], gw, [3, 2, 2, 2]) < 1e-6
        assert compute_gradient_error([x, dw], [[2, 5, 6, 2], [3, 2, 2, 2]], gx, [2, 5, 6, 2]) < 1e-6


def test_bias_add_nchw_and_gradient():
    v, b = rand((2, 3, 4, 5), np.float64), rand((3,), np.float64, 1)
    y = tf.nn.bias_add(v, b, data_format="NCHW")
    y2 = tf.nn.bias_add(v, rand((5,), np.float64, 2))
    np.testing.assert_allclose(run(y), v + b[:, None, None])
    vt, bt = tf.constant(v), tf.constant(b)
    out = tf.nn.bias_add(vt, bt, data_format="NCHW")
    with make_session("eager"):
        assert compute_gradient_error([vt, bt], [[2, 3, 4, 5], [3]], out, [2, 3, 4, 5]) < 1e-7
    assert y2.shape.as_list() == [2, 3, 4, 5]


# ---- static shapes and build-time errors -----------------------------------------------------------


def test_static_shapes_with_unknown_batch():
    p = tf.placeholder(tf.float32, [None, 28, 28, 1])
    w = tf.zeros([5, 5, 1, 32])
    assert tf.nn.conv2d(p, w, [1, 1, 1, 1], "SAME").shape.as_list() == [None, 28, 28, 32]
    y = tf.nn.conv2d(p, w, [1, 2, 2, 1], "VALID")
    assert y.shape.as_list() == [None, 12, 12, 32]
    gx, gw = tf.gradients(tf.reduce_sum(y), [p, w])
    assert gx.shape.as_list() == [None, 28, 28, 1] and gw.shape.as_list() == [5, 5, 1, 32]
    q = tf.placeholder(tf.float32, [None, 1, None, 28])
    assert tf.nn.conv2d(q, w, 2, "SAME", data_format="NCHW").shape.as_list() == [None, 32, None, 14]
    assert tf.nn.conv2d(tf.placeholder(tf.float32), w, 1, "SAME").shape.as_list() == [None, None, None, 32]
    d = tf.nn.depthwise_conv2d(p, tf.zeros([3, 3, 1, 4]), [1, 1, 1, 1], "SAME")
    assert d.shape.as_list() == [None, 28, 28, 4]
    t = tf.nn.conv2d_transpose(tf.placeholder(tf.float32, [None, 7, 7, 8]), tf.zeros([3, 3, 4, 8]),
                               tf.stack([tf.shape(p)[0], 14, 14, 4]), [1, 2, 2, 1])
    assert t.shape.as_list() == [None, 14, 14, 4]
    assert tf.nn.conv1d(tf.placeholder(tf.float32, [None, 10, 3]), tf.zeros([3, 3, 4]), 2, "SAME").shape.as_list() \
        == [None, 5, 4]


def test_unknown_batch_runs_with_several_batch_sizes():
    p = tf.placeholder(tf.float64, [None, None, None, 2])
    w = rand((3, 3, 2, 4), np.float64, 1)
    y = tf.nn.conv2d(p, w, [1, 2, 2, 1], "SAME")
    gw = tf.gradients(tf.reduce_sum(y), p)[0]
    for n, h, wd in ((1, 6, 6), (5, 7, 4), (0, 6, 6)):  # sizes known only at run time; an empty batch
        x = rand((n, h, wd, 2), np.float64)
        for mode in ("eager", "threads"):
            with make_session(mode) as s:
                got, g = s.run([y, gw], {p: x})
            np.testing.assert_allclose(got, ref_conv2d(x, w, (2, 2), "SAME"), rtol=1e-10)
            assert g.shape == x.shape


@pytest.mark.parametrize("build, match", [
    (lambda: tf.nn.conv2d(tf.zeros([1, 5, 5, 3]), tf.zeros([3, 3, 4, 8]), [1, 1, 1, 1], "SAME"),
     r"Depth of input \(3\) is not a multiple of input depth of filter \(4\)"),
    (lambda: tf.nn.conv2d(tf.zeros([1, 6, 6, 4]), tf.zeros([3, 3, 2, 8]), [1, 1, 1, 1], "SAME"), "grouped"),
    (lambda: tf.nn.conv2d(tf.zeros([5, 5, 3]), tf.zeros([3, 3, 3, 8]), [1, 1, 1, 1], "SAME"),
     "Shape must be rank 4 but is rank 3"),
    (lambda: tf.nn.conv2d(tf.zeros([1, 5, 5, 3]), tf.zeros([3, 3, 8]), [1, 1, 1, 1], "SAME"),
     "Shape must be rank 4 but is rank 3"),
    (lambda: tf.nn.conv2d(tf.zeros([1, 4, 4, 3]), tf.zeros([5, 5, 3, 8]), [1, 1, 1, 1], "VALID"),
     "Negative dimension size caused by subtracting 5 from 4"),
    (lambda: tf.nn.conv2d(tf.zeros([1, 4, 4, 3]), tf.zeros([3, 3, 3, 8]), [1, 1, 1, 1], "FOO"),
     "Attr 'padding' of 'Conv2D' Op passed string 'FOO'"),
    (lambda: tf.nn.conv2d(tf.zeros([1, 4, 4, 3]), tf.zeros([3, 3, 3, 8]), [2, 1, 1, 1], "SAME"),
     "does not yet support strides in the batch and depth dimensions"),
    (lambda: tf.nn.conv2d(tf.zeros([1, 4, 4, 3]), tf.zeros([3, 3, 3, 8]), [1, 1, 1], "SAME"),
     "strides should be of length 1, 2 or 4"),
    (lambda: tf.nn.conv2d(tf.zeros([1, 4, 4, 3]), tf.zeros([3, 3, 3, 8]), 1, "SAME", data_format="NWHC"),
     "data_format"),
    (lambda: tf.nn.conv2d_transpose(tf.zeros([1, 3, 3, 5]), tf.zeros([3, 3, 2, 4]), [1, 6, 6, 2], [1, 2, 2, 1]),
     "input channels does not match filter's input channels, 5 != 4"),
    (lambda: tf.nn.conv2d_transpose(tf.zeros([1, 3, 3, 4]), tf.zeros([3, 3, 2, 4]), [1, 6, 6, 3], [1, 2, 2, 1]),
     "output_shape does not match filter's output channels, 3 != 2"),
    (lambda: tf.nn.conv2d_transpose(tf.zeros([1, 3, 3, 4]), tf.zeros([3, 3, 2, 4]), [1, 6, 6], [1, 2, 2, 1]),
     r"output_shape must have shape \(4,\)"),
    (lambda: tf.nn.conv2d_transpose(tf.zeros([1, 3, 3, 4]), tf.zeros([3, 3, 2, 4]), [1, 9, 9, 2], [1, 2, 2, 1]),
     "out_backprop has shape"),
    (lambda: tf.nn.atrous_conv2d(tf.zeros([1, 4, 4, 3]), tf.zeros([3, 3, 3, 8]), 0, "SAME"),
     "rate 0 cannot be less than one"),
    (lambda: tf.nn.separable_conv2d(tf.zeros([1, 4, 4, 3]), tf.zeros([3, 3, 3, 2]), tf.zeros([2, 1, 6, 4]),
                                    [1, 1, 1, 1], "SAME"), "pointwise_filter must be 1x1"),
    (lambda: tf.nn.depthwise_conv2d(tf.zeros([1, 8, 8, 3]), tf.zeros([3, 3, 3, 2]), [1, 2, 2, 1], "SAME", rate=2),
     "strides > 1 not supported in conjunction with dilation_rate > 1"),
    (lambda: tf.nn.convolution(tf.zeros([1, 4, 4, 4, 3]), tf.zeros([3, 3, 3, 3, 8]), "SAME"),
     "1-D and 2-D convolutions"),
])
def test_build_time_errors(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_dtype_errors():
    with pytest.raises(TypeError, match="does not match type float32"):
        tf.nn.conv2d(tf.zeros([1, 4, 4, 3]), tf.zeros([3, 3, 3, 8], tf.float64), 1, "SAME")
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.nn.conv2d(tf.zeros([1, 4, 4, 3], tf.int32), tf.zeros([3, 3, 3, 8], tf.int32), 1, "SAME")


def test_run_time_shape_mismatch_is_an_invalid_argument_error():
    shape = tf.placeholder(tf.int32, [4])
    t = tf.nn.conv2d_transpose(tf.zeros([1, 3, 3, 4]), tf.zeros([3, 3, 2, 4]), shape, [1, 2, 2, 1])
    assert t.shape.as_list() == [1, None, None, 2]
    np.testing.assert_array_equal(run(t, {shape: [1, 5, 6, 2]}).shape, [1, 5, 6, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Conv2DBackpropInput.*out_backprop has batch and spatial"):
        run(t, {shape: [1, 9, 9, 2]})


# ---- every scheduler, inputs chunked along N ----------------------------------------------------------


def _training_graph(fmt="NHWC"):
    """A small conv net's outputs and gradients, fed x; returns (graph, x placeholder, fetches)."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float64, [None, 2, 8, 7] if fmt == "NCHW" else [None, 8, 7, 2])
        w1, w2 = tf.constant(rand((3, 3, 2, 4), np.float64, 1)), tf.constant(rand((3, 2, 4, 3), np.float64, 2))
        dw = tf.constant(rand((2, 2, 3, 1), np.float64, 3))
        h = tf.nn.relu(tf.nn.conv2d(x, w1, 2, "SAME", data_format=fmt))
        y = tf.nn.conv2d(h, w2, 1, "VALID", data_format=fmt, dilations=[1, 1, 1, 1])
        z = tf.nn.depthwise_conv2d(y, dw, [1, 1, 1, 1], "SAME", data_format=fmt)
        t = tf.nn.conv2d_transpose(z, w2, tf.shape(h), [1, 1, 1, 1], "VALID", data_format=fmt)
        loss = tf.reduce_sum(tf.square(z)) + tf.reduce_sum(t)
        grads = tf.gradients(loss, [x, w1, w2, dw])
    return g, x, [loss, z, t] + grads


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_local_modes_agree_with_chunks_along_n(fmt):
    g, x, fetches = _training_graph(fmt)
    xv = rand((5, 2, 8, 7) if fmt == "NCHW" else (5, 8, 7, 2), np.float64, 7)
    base = run(fetches, {x: xv}, graph=g)
    for chunks in ((2, -1, -1, -1), 2):  # along N only; and every axis in 2s (rechunked to N only)
        got = run_modes(fetches, {x: xv}, chunks=chunks, graph=g)
        for a, b in zip(got, base):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("mode", [m for m in ALL_MODES if m not in ("eager", "sync", "threads")])
def test_process_and_distributed_modes(mode, sess_factory):
    g, x, fetches = _training_graph()
    xv = rand((5, 8, 7, 2), np.float64, 7)
    base = run(fetches, {x: xv}, graph=g)
    with sess_factory(mode, graph=g, chunks=(2, -1, -1, -1)) as s:
        got = s.run(fetches, {x: xv})
    for a, b in zip(got, base):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_dask_feed_chunked_along_n():
    g, x, fetches = _training_graph()
    xv = rand((9, 8, 7, 2), np.float64, 8)
    base = run(fetches, {x: xv}, graph=g)
    with make_session("threads", graph=g) as s:
        got = s.run(fetches, {x: da.from_array(xv, chunks=(2, 8, 7, 2))})
    for a, b in zip(got, base):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def _projections(text):
    """{op type: largest projected MiB per task} from Session.explain's table."""
    out = {}
    for m in re.finditer(r"^\s+(\w+) \S+\s+([\d.]+) (B|KiB|MiB|GiB)", text, re.M):
        mib = float(m.group(2)) * {"B": 2**-20, "KiB": 2**-10, "MiB": 1, "GiB": 1024}[m.group(3)]
        out[m.group(1)] = max(out.get(m.group(1), 0), mib)
    return out


def test_tasks_hold_one_batch_chunk():
    # 8 chunks of 8 images: a conv task holds a chunk (~0.25 MiB in, ~0.5 MiB out, Conv2D's ~1.2 MiB
    # of im2col columns), never the batch (8x)
    x = tf.placeholder(tf.float64, [None, 16, 16, 8])
    w = tf.constant(rand((3, 3, 8, 16), np.float64))
    y = tf.nn.conv2d(x, w, 1, "SAME")
    gx, gw = tf.gradients(tf.reduce_sum(tf.square(y)), [x, w])
    xv = rand((64, 16, 16, 8), np.float64)
    with make_session("threads") as s:
        chunked = _projections(s.explain([y, gx, gw], {x: da.from_array(xv, chunks=(8, 16, 16, 8))}))
        whole = _projections(s.explain([y, gx, gw], {x: da.from_array(xv, chunks=(64, 16, 16, 8))}))
        got = s.run([y, gx, gw], {x: da.from_array(xv, chunks=(8, 16, 16, 8))})
    for op in ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"):
        assert chunked[op] < 2.0 and whole[op] > 4 * chunked[op], (op, chunked, whole)
    # the forward conv's columns (9 taps x 8 channels x 8 bytes a cell) are counted for what they are
    assert 1.2 < chunked["Conv2D"] < 2.0, chunked
    np.testing.assert_allclose(got[0], ref_conv2d(xv, run(w)), rtol=1e-10)
