"""Pooling ops (dflow/kernels/pool_ops.py): values against naive numpy loops, TF's figures,
gradients against central differences, static shapes, build-time errors and chunked runs along N
on every scheduler."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import dflow as tf
from dflow.kernels.common import apply_op
from tests.conftest import ALL_MODES

SETTINGS = settings(max_examples=25, deadline=None)


# ---- naive references (loops over output positions; small shapes only) ----------------------------


def _geometry(n, k, s, padding):
    if padding == "SAME":
        out = -(-n // s)
        return out, max((out - 1) * s + k - n, 0) // 2
    return (n - k) // s + 1, 0


def ref_pool(x, ksize, strides, padding, kind, nchw=False):
    """Pooled x (NHWC or NCHW) by explicit loops; SAME averages over the in-image cells only."""
    if nchw:
        x = x.transpose(0, 2, 3, 1)
    n, h, w, c = x.shape
    (oh, ph), (ow, pw) = _geometry(h, ksize[0], strides[0], padding), _geometry(w, ksize[1], strides[1], padding)
    out = np.zeros((n, oh, ow, c), x.dtype)
    for i, j in itertools.product(range(oh), range(ow)):
        y0, x0 = i * strides[0] - ph, j * strides[1] - pw
        win = x[:, max(y0, 0):y0 + ksize[0], max(x0, 0):x0 + ksize[1], :]
        out[:, i, j, :] = win.max(axis=(1, 2)) if kind == "max" else win.mean(axis=(1, 2))
    return out.transpose(0, 3, 1, 2) if nchw else out


def ref_argmax(x, ksize, strides, padding, include_batch=False):
    """Flat NHWC index of the first maximum (row-major window order) of every window."""
    n, h, w, c = x.shape
    (oh, ph), (ow, pw) = _geometry(h, ksize[0], strides[0], padding), _geometry(w, ksize[1], strides[1], padding)
    out = np.zeros((n, oh, ow, c), np.int64)
    for b, i, j, ch in itertools.product(range(n), range(oh), range(ow), range(c)):
        best, where = -np.inf, None
        for dy, dx in itertools.product(range(ksize[0]), range(ksize[1])):
            y, xx = i * strides[0] - ph + dy, j * strides[1] - pw + dx
            if 0 <= y < h and 0 <= xx < w and (where is None or x[b, y, xx, ch] > best):
                best, where = x[b, y, xx, ch], (y, xx)
        out[b, i, j, ch] = (((b if include_batch else 0) * h + where[0]) * w + where[1]) * c + ch
    return out


def distinct(shape, seed):
    """Random values without ties (a permutation), so max-pool gradients are smooth."""
    rng = np.random.default_rng(seed)
    return (rng.permutation(int(np.prod(shape))).reshape(shape) / 7.0 - 3.0).astype(np.float64)


def run(fetches, feed=None):
    with tf.Session() as s:
        return s.run(fetches, feed)


# ---- values ------------------------------------------------------------------------------------------


@SETTINGS
@given(n=st.integers(1, 3), h=st.integers(1, 7), w=st.integers(1, 7), c=st.integers(1, 3),
       kh=st.integers(1, 3), kw=st.integers(1, 3), sh=st.integers(1, 3), sw=st.integers(1, 3),
       padding=st.sampled_from(["SAME", "VALID"]), nchw=st.booleans(), kind=st.sampled_from(["max", "avg"]),
       seed=st.integers(0, 1000))
def test_pool_matches_loops(n, h, w, c, kh, kw, sh, sw, padding, nchw, kind, seed):
    assume(padding == "SAME" or (kh <= h and kw <= w))
    x = np.random.default_rng(seed).standard_normal((n, c, h, w) if nchw else (n, h, w, c))
    fmt = "NCHW" if nchw else "NHWC"
    fn = tf.nn.max_pool if kind == "max" else tf.nn.avg_pool
    ksize = [1, 1, kh, kw] if nchw else [1, kh, kw, 1]
    strides = [1, 1, sh, sw] if nchw else [1, sh, sw, 1]
    y = fn(x, ksize, strides, padding, data_format=fmt)
    want = ref_pool(x, (kh, kw), (sh, sw), padding, kind, nchw)
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_allclose(run(y), want, rtol=1e-12)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_max_pool_with_argmax_matches_loops(padding):
    x = distinct((2, 5, 6, 3), 1).astype(np.float32)
    for inc in (False, True):
        v, a = tf.nn.max_pool_with_argmax(x, [1, 3, 2, 1], [1, 2, 2, 1], padding, include_batch_in_index=inc)
        vv, aa = run([v, a])
        assert a.dtype == tf.int64 and aa.dtype == np.int64
        np.testing.assert_array_equal(aa, ref_argmax(x, (3, 2), (2, 2), padding, inc))
        np.testing.assert_array_equal(vv, ref_pool(x, (3, 2), (2, 2), padding, "max"))
        np.testing.assert_array_equal(x.reshape(-1)[aa.reshape(-1) if inc else
                                                    (aa + np.arange(2)[:, None, None, None] * x[0].size).reshape(-1)],
                                      vv.reshape(-1))


def test_tf_figures():
    # TensorFlow 2.21.0 (tf.compat.v1, graph mode): x = sin(1.3 * arange(2*4*5*3)).reshape(2, 4, 5, 3)
    x = np.sin(np.arange(2 * 4 * 5 * 3, dtype=np.float32).reshape(2, 4, 5, 3) * 1.3).astype(np.float32)
    _, a = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    _, ab = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME", include_batch_in_index=True)
    avg = tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
    t = tf.constant(np.zeros((1, 4, 4, 1), np.float32))
    tie_grad = tf.gradients(tf.reduce_sum(tf.nn.max_pool(t, [1, 3, 3, 1], [1, 1, 1, 1], "SAME")), t)[0]
    aa, abb, av, tg = run([a, ab, avg, tie_grad])
    assert aa[1, :, :, 0].tolist() == [[18, 9, 27], [33, 39, 57]]
    assert abb[1, :, :, 0].tolist() == [[78, 69, 87], [93, 99, 117]]
    np.testing.assert_allclose(av[0, :, :, 0], [[-0.16473092, -0.10765101, -0.31553757],
                                                [0.14766666, 0.00018976, -0.14681980]], rtol=1e-5, atol=1e-7)
    # ties: every window's gradient goes to its first (row-major) maximum
    assert tg[0, :, :, 0].tolist() == [[4, 2, 2, 0], [2, 1, 1, 0], [2, 1, 1, 0], [0, 0, 0, 0]]


def test_integer_max_pool_and_1d_3d_pool():
    x = np.arange(2 * 5 * 3, dtype=np.int32).reshape(2, 5, 3) * np.int32(-1)
    y1 = tf.nn.max_pool1d(x, 2, 2, "SAME")
    x3 = np.random.default_rng(0).standard_normal((1, 4, 4, 4, 2))
    y3 = tf.nn.avg_pool3d(x3, [2, 2, 2], [2, 2, 2], "VALID")
    yp = tf.nn.pool(x3[:, 0], [2, 2], "MAX", "SAME", strides=[2, 1])
    a1, a3, ap = run([y1, y3, yp])
    assert a1.dtype == np.int32
    np.testing.assert_array_equal(a1, ref_pool(x[:, :, None, :], (2, 1), (2, 1), "SAME", "max")[:, :, 0, :])
    want3 = x3.reshape(1, 2, 2, 2, 2, 2, 2, 2).mean(axis=(2, 4, 6))
    np.testing.assert_allclose(a3, want3)
    np.testing.assert_allclose(ap, ref_pool(x3[:, 0], (2, 2), (2, 1), "SAME", "max"))


# ---- gradients ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind,padding,fmt", [("max", "SAME", "NHWC"), ("max", "VALID", "NCHW"),
                                              ("avg", "SAME", "NHWC"), ("avg", "VALID", "NCHW"),
                                              ("argmax", "SAME", "NHWC")])
def test_gradient_against_central_differences(kind, padding, fmt):
    shape = (2, 5, 4, 2) if fmt == "NHWC" else (2, 2, 5, 4)
    x0 = distinct(shape, 3)
    p = tf.placeholder(tf.float64, shape)
    ksize = [1, 3, 2, 1] if fmt == "NHWC" else [1, 1, 3, 2]
    strides = [1, 2, 1, 1] if fmt == "NHWC" else [1, 1, 2, 1]
    if kind == "argmax":
        y = tf.nn.max_pool_with_argmax(p, ksize, strides, padding)[0]
    else:
        y = (tf.nn.max_pool if kind == "max" else tf.nn.avg_pool)(p, ksize, strides, padding, data_format=fmt)
    with tf.Session():
        err = tf.test.compute_gradient_error(p, shape, y, y.shape.as_list(), x_init_value=x0, delta=1e-6)
    assert err < 1e-6


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_second_order_gradients(kind):
    # the gradient ops are linear in the incoming gradient; their gradients are each other's op
    x0 = distinct((1, 4, 5, 2), 5)
    x = tf.constant(x0)
    fn = tf.nn.max_pool if kind == "max" else tf.nn.avg_pool
    y = fn(x, [1, 2, 3, 1], [1, 2, 2, 1], "SAME")
    g = tf.placeholder(tf.float64, y.shape)
    (dx,) = tf.gradients(y, x, grad_ys=g)
    with tf.Session():
        err = tf.test.compute_gradient_error(g, y.shape.as_list(), dx, list(x0.shape), delta=1e-6)
        gg = tf.placeholder(tf.float64, x0.shape)
        (ddx,) = tf.gradients(dx, g, grad_ys=gg)
        err2 = tf.test.compute_gradient_error(gg, list(x0.shape), ddx, y.shape.as_list(), delta=1e-6)
    assert err < 1e-8 and err2 < 1e-8


# ---- static shapes and errors ------------------------------------------------------------------------


def test_static_shapes_with_unknown_batch():
    ph = tf.placeholder(tf.float32, [None, 28, 28, 3])
    assert tf.nn.max_pool(ph, [1, 3, 3, 1], [1, 2, 2, 1], "SAME").shape.as_list() == [None, 14, 14, 3]
    assert tf.nn.avg_pool(ph, [1, 3, 3, 1], [1, 2, 2, 1], "VALID").shape.as_list() == [None, 13, 13, 3]
    assert tf.nn.max_pool(ph, 2, 2, "VALID").shape.as_list() == [None, 14, 14, 3]
    nchw = tf.placeholder(tf.float32, [None, 3, None, 9])
    assert tf.nn.avg_pool(nchw, [1, 1, 2, 2], [1, 1, 2, 2], "SAME", data_format="NCHW").shape.as_list() == \
        [None, 3, None, 5]
    v, a = tf.nn.max_pool_with_argmax(ph, [1, 2, 2, 1], [1, 2, 2, 1], "SAME", Targmax=tf.int32)
    assert v.shape.as_list() == a.shape.as_list() == [None, 14, 14, 3] and a.dtype == tf.int32
    g = tf.gradients(tf.nn.avg_pool(ph, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"), ph)[0]
    assert g.shape.as_list() == [None, 28, 28, 3]
    feed = np.random.default_rng(0).standard_normal((5, 28, 28, 3)).astype(np.float32)
    assert run(g, {ph: feed}).shape == (5, 28, 28, 3)


def test_build_time_errors():
    x = tf.placeholder(tf.float32, [1, 2, 2, 1])
    with pytest.raises(ValueError, match="Negative dimension size"):
        tf.nn.max_pool(x, [1, 3, 3, 1], [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="batch or channel"):
        tf.nn.max_pool(x, [2, 1, 1, 1], [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="padding"):
        tf.nn.avg_pool(x, [1, 1, 1, 1], [1, 1, 1, 1], "FULL")
    with pytest.raises(ValueError, match="rank 4"):
        tf.nn.max_pool(tf.placeholder(tf.float32, [2, 3]), 2, 2, "SAME")
    with pytest.raises(ValueError, match="length"):
        tf.nn.max_pool(x, [1, 2, 2], [1, 1, 1, 1], "SAME")
    with pytest.raises(TypeError, match="AvgPool"):
        tf.nn.avg_pool(tf.placeholder(tf.int32, [1, 2, 2, 1]), 1, 1, "SAME")
    with pytest.raises(ValueError, match="NHWC"):
        tf.nn.max_pool_with_argmax(x, 1, 1, "SAME", data_format="NCHW")
    with pytest.raises(NotImplementedError, match="dilation"):
        tf.nn.pool(x, [2, 2], "MAX", "SAME", dilation_rate=[2, 2])


# ---- chunked along N, on every scheduler --------------------------------------------------------------


@pytest.mark.parametrize("mode", ALL_MODES)
def test_chunked_along_batch_on_every_mode(mode, sess_factory):
    x0 = distinct((5, 6, 7, 3), 11).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 6, 7, 3])
    m = tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
    a = tf.nn.avg_pool(x, [1, 2, 3, 1], [1, 2, 1, 1], "VALID")
    _, arg = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME", include_batch_in_index=True)
    nchw = tf.nn.max_pool(tf.transpose(x, [0, 3, 1, 2]), [1, 1, 2, 3], [1, 1, 2, 2], "VALID", data_format="NCHW")
    loss = tf.reduce_sum(m * m) + tf.reduce_sum(a) + tf.reduce_sum(nchw)
    (dx,) = tf.gradients(loss, x)
    (ddx,) = tf.gradients(tf.reduce_sum(dx * dx), x)
    with sess_factory("eager") as s:
        want = s.run([m, a, arg, dx, ddx, nchw], {x: x0})
    with sess_factory(mode, chunks=(2, 3, 3, 3)) as s:  # N chunks of 2; H, W chunked too
        got = s.run([m, a, arg, dx, ddx, nchw], {x: x0})
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(want[0], ref_pool(x0, (3, 3), (2, 2), "SAME", "max"))
    np.testing.assert_array_equal(want[2], ref_argmax(x0, (2, 2), (2, 2), "SAME", True))
    np.testing.assert_array_equal(want[5], ref_pool(x0, (2, 3), (2, 2), "VALID", "max").transpose(0, 3, 1, 2))


def test_lowering_is_one_task_per_batch_chunk(sess_factory):
    x0 = np.random.default_rng(0).standard_normal((6, 8, 8, 2)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 8, 8, 2])
    y = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID", name="pooled")
    (dx,) = tf.gradients(tf.reduce_sum(y), x)
    s = sess_factory("sync", chunks=(2, 4, 4, 2))
    plan, _ = s._plan_for([y, dx], {x: x0})
    for prefix in ("pooled-", "gradients.pooled_grad.MaxPoolGrad-"):
        keys = sorted(k[1:] for k in plan.dsk if isinstance(k, tuple) and k[0].startswith(prefix))
        assert keys == [(0, 0, 0, 0), (1, 0, 0, 0), (2, 0, 0, 0)], (prefix, keys)
    got, gdx = s.run([y, dx], {x: x0})
    np.testing.assert_array_equal(got, ref_pool(x0, (2, 2), (2, 2), "VALID", "max"))
    assert gdx.sum() == 6 * 4 * 4 * 2


# ---- the kernels take their namespace from their inputs (as tests/kernels/test_array_api_strict.py) ----


@pytest.mark.parametrize("device", [None, "device1"])
def test_kernels_on_array_api_strict(device):
    xps = pytest.importorskip("array_api_strict")
    import array_api_compat.numpy as np_xp

    from dflow.graph.registry import get_opdef

    x = distinct((2, 5, 4, 3), 9).astype(np.float32)
    x = tf.constant(x)
    y = tf.nn.max_pool(x, [1, 3, 2, 1], [1, 2, 1, 1], "SAME")
    a = tf.nn.avg_pool(x, [1, 3, 2, 1], [1, 2, 1, 1], "SAME")
    ops = [y.op, a.op, tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")[0].op,
           tf.gradients(tf.reduce_sum(y * y), x)[0].op, tf.gradients(tf.reduce_sum(a * a), x)[0].op]
    ops.append(tf.gradients(tf.reduce_sum(ops[3].outputs[0] ** 2), ops[3].inputs[2])[0].op)  # MaxPoolGradGrad
    assert [op.type for op in ops] == ["MaxPool", "AvgPool", "MaxPoolWithArgmax", "MaxPoolGrad", "AvgPoolGrad",
                                       "MaxPoolGradGrad"]
    with tf.Session() as s:
        values = {op: s.run(list(op.inputs)) for op in ops}
    dev = xps.Device(device) if device else None
    for op in ops:
        arrays = [np.asarray(v) for v in values[op]]
        want = get_opdef(op.type).eager(np_xp, *arrays, **op.attrs)
        # data on the device; AvgPoolGrad's shape input stays a host value (the lowering reads it so)
        got = get_opdef(op.type).eager(xps, *[v if v.dtype.kind == "i" else xps.asarray(v, device=dev) if dev
                                               else xps.asarray(v) for v in arrays], **op.attrs)
        for w, g in zip(want if isinstance(want, tuple) else [want], got if isinstance(got, tuple) else [got]):
            assert isinstance(g, type(xps.asarray(0))), op.type
            g = g.to_device(xps.Device("CPU_DEVICE")) if dev else g
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, err_msg=op.type)


def ref_max_pool_grad(x, g, ksize, strides, padding):
    """g of each window added at the window's first maximum (TF's MaxPoolGrad), by loops."""
    arg = ref_argmax(x, ksize, strides, padding)
    dx = np.zeros(x.size, g.dtype)
    np.add.at(dx, (arg + np.arange(x.shape[0])[:, None, None, None] * x[0].size).reshape(-1), g.reshape(-1))
    return dx.reshape(x.shape)


@SETTINGS
@given(h=st.integers(1, 6), w=st.integers(1, 6), k=st.integers(1, 3), s=st.integers(1, 3),
       padding=st.sampled_from(["SAME", "VALID"]), seed=st.integers(0, 1000))
def test_max_pool_gradient_with_ties_goes_to_first_max(h, w, k, s, padding, seed):
    assume(padding == "SAME" or k <= min(h, w))
    rng = np.random.default_rng(seed)
    x0 = rng.integers(0, 3, (2, h, w, 2)).astype(np.float32)  # many ties
    x0[0, 0, 0, 0] = -np.inf  # a window of -inf only still sends its gradient to an image cell
    if h > 1:
        x0[0, 1, 0, 0] = -np.inf
    x = tf.constant(x0)
    y = tf.nn.max_pool(x, [1, k, k, 1], [1, s, s, 1], padding)
    g0 = rng.standard_normal(y.shape.as_list()).astype(np.float32)
    (dx,) = tf.gradients(y, x, grad_ys=tf.constant(g0))
    _, arg = tf.nn.max_pool_with_argmax(x, [1, k, k, 1], [1, s, s, 1], padding)
    rdx, rarg = run([dx, arg])
    np.testing.assert_allclose(rdx, ref_max_pool_grad(x0, g0, (k, k), (s, s), padding), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(rarg, ref_argmax(x0, (k, k), (s, s), padding))


def test_max_pool_grad_takes_tf1s_orig_input_orig_output_grad():
    x = tf.placeholder(tf.float32, [None, 6, 6, 2])
    y = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    (dx,) = tf.gradients(tf.reduce_sum(y * y), x)
    assert dx.op.type == "MaxPoolGrad" and [t.op.type for t in dx.op.inputs[:2]] == ["Placeholder", "MaxPool"]
    (ddy,) = tf.gradients(tf.reduce_sum(dx * dx), dx.op.inputs[2])
    assert ddy.op.type == "MaxPoolGradGrad" and ddy.op.inputs[1] is y
    attrs = {k: dx.op.get_attr(k) for k in ("ksize", "strides", "padding", "data_format")}
    with pytest.raises(ValueError, match="orig_output has shape"):
        apply_op("MaxPoolGrad", [x, tf.zeros([1, 2, 2, 2]), tf.zeros([1, 3, 3, 2])], attrs)
    with pytest.raises(TypeError, match="one dtype"):
        apply_op("MaxPoolGrad", [x, tf.zeros([1, 3, 3, 2], tf.float64), tf.zeros([1, 3, 3, 2])], attrs)


@pytest.mark.parametrize("h,w,c", [(26, 26, 16), (11, 11, 32), (7, 4, 3), (2, 9, 1)])
def test_max_pool_grad_of_2x2_pools_on_whole_rows(h, w, c):
    # the 2x2/2 NHWC kernel on window rows (pool_ops._max_pool_grad_pairs): ties in every pattern,
    # -inf windows, odd sizes whose last row/column no window reads, a batch larger than one
    rng = np.random.default_rng(h * w * c)
    x0 = rng.integers(0, 2, (3, h, w, c)).astype(np.float32)
    x0[1, :2, :2, :] = -np.inf
    for padding in ("VALID", "SAME") if h % 2 == 0 and w % 2 == 0 else ("VALID",):
        x = tf.constant(x0)
        y = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], padding)
        g0 = rng.standard_normal(y.shape.as_list()).astype(np.float32)
        (dx,) = tf.gradients(y, x, grad_ys=tf.constant(g0))
        np.testing.assert_array_equal(run(dx), ref_max_pool_grad(x0, g0, (2, 2), (2, 2), padding))
