"""TF1's cells (dflow/rnn/cells.py, cell.py): outputs and gradients against the numpy cells of
reference.py with the weights read back from the variables; TF1's variable names, shapes and
initializers; sizes and zero states."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from dflow.test import compute_gradient_error

from . import reference as ref

rnn_cell = tf.nn.rnn_cell


def _values(sess, cell):
    return {v.name.split("/", 1)[1][:-2] if "/" in v.name else v.name: sess.run(v) for v in cell.weights}


def _step_two(cell, x_shape, state_fn, rng, dtype=tf.float64):
    """Two steps of `cell` on placeholders; returns (session, weights by name, feeds, fetches)."""
    x1 = tf.placeholder(dtype, x_shape)
    x2 = tf.placeholder(dtype, x_shape)
    s0 = state_fn(x_shape[0])
    o1, s1 = cell(x1, s0)
    o2, s2 = cell(x2, s1)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    feeds = {x1: rng.randn(*x_shape), x2: rng.randn(*x_shape)}
    return sess, feeds, (o1, s1, o2, s2), (x1, x2)


@pytest.mark.parametrize("forget_bias", [1.0, 0.5])
def test_basic_lstm_matches_numpy(forget_bias):
    rng = np.random.RandomState(0)
    cell = rnn_cell.BasicLSTMCell(4, forget_bias=forget_bias)
    sess, feeds, (o1, s1, o2, s2), (x1, x2) = _step_two(cell, [3, 5], lambda b: cell.zero_state(b, tf.float64), rng)
    with sess:
        w = _values(sess, cell)
        out = sess.run([o1, s1, o2, s2], feeds)
    zero = (np.zeros((3, 4)), np.zeros((3, 4)))
    r1, rs1 = ref.basic_lstm(feeds[x1], zero, w["kernel"], w["bias"], forget_bias)
    r2, rs2 = ref.basic_lstm(feeds[x2], rs1, w["kernel"], w["bias"], forget_bias)
    np.testing.assert_allclose(out[0], r1, rtol=1e-10)
    np.testing.assert_allclose(out[2], r2, rtol=1e-10)
    np.testing.assert_allclose(out[3].c, rs2[0], rtol=1e-10)
    np.testing.assert_allclose(out[3].h, rs2[1], rtol=1e-10)
    assert isinstance(out[3], rnn_cell.LSTMStateTuple)


@pytest.mark.parametrize("kwargs", [
    {},
    {"use_peepholes": True},
    {"num_proj": 3},
    {"use_peepholes": True, "num_proj": 3, "cell_clip": 0.2, "proj_clip": 0.1, "forget_bias": 0.3},
], ids=["plain", "peepholes", "projection", "all"])
def test_lstm_cell_matches_numpy(kwargs):
    rng = np.random.RandomState(1)
    cell = rnn_cell.LSTMCell(4, initializer=tf.random_uniform_initializer(-0.8, 0.8), **kwargs)
    sess, feeds, (o1, s1, o2, s2), (x1, x2) = _step_two(cell, [3, 5], lambda b: cell.zero_state(b, tf.float64), rng)
    with sess:
        w = _values(sess, cell)
        out = sess.run([o2, s2], feeds)
    extra = dict(w_f=w.get("w_f_diag"), w_i=w.get("w_i_diag"), w_o=w.get("w_o_diag"), proj=w.get("projection/kernel"),
                 cell_clip=kwargs.get("cell_clip"), proj_clip=kwargs.get("proj_clip"),
                 forget_bias=kwargs.get("forget_bias", 1.0))
    m = kwargs.get("num_proj", 4)
    state = (np.zeros((3, 4)), np.zeros((3, m)))
    _, state = ref.lstm(feeds[x1], state, w["kernel"], w["bias"], **extra)
    r2, rs2 = ref.lstm(feeds[x2], state, w["kernel"], w["bias"], **extra)
    np.testing.assert_allclose(out[0], r2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out[1].c, rs2[0], rtol=1e-10, atol=1e-12)
    assert out[0].shape == (3, m) and cell.output_size == m and cell.state_size == (4, m)
    if "cell_clip" in kwargs:
        assert np.abs(out[1].c).max() <= 0.2 + 1e-12 and np.abs(out[0]).max() <= 0.1 + 1e-12


def test_gru_and_basic_rnn_match_numpy():
    rng = np.random.RandomState(2)
    gru = rnn_cell.GRUCell(4, bias_initializer=tf.random_normal_initializer())
    sess, feeds, (o1, s1, o2, s2), (x1, x2) = _step_two(gru, [2, 3], lambda b: tf.zeros([b, 4], tf.float64), rng)
    with sess:
        w = _values(sess, gru)
        out = sess.run(o2, feeds)
    h1, _ = ref.gru(feeds[x1], np.zeros((2, 4)), w["gates/kernel"], w["gates/bias"], w["candidate/kernel"],
                    w["candidate/bias"])
    h2, _ = ref.gru(feeds[x2], h1, w["gates/kernel"], w["gates/bias"], w["candidate/kernel"], w["candidate/bias"])
    np.testing.assert_allclose(out, h2, rtol=1e-10)

    tf.reset_default_graph()
    cell = rnn_cell.BasicRNNCell(4)
    sess, feeds, (o1, s1, o2, s2), (x1, x2) = _step_two(cell, [2, 3], lambda b: tf.zeros([b, 4], tf.float64), rng)
    with sess:
        w = _values(sess, cell)
        out = sess.run(o2, feeds)
    h1, _ = ref.basic_rnn(feeds[x1], np.zeros((2, 4)), w["kernel"], w["bias"])
    np.testing.assert_allclose(out, ref.basic_rnn(feeds[x2], h1, w["kernel"], w["bias"])[0], rtol=1e-10)


def test_state_not_tuple_concatenates_c_and_h():
    rng = np.random.RandomState(3)
    for cell in (rnn_cell.BasicLSTMCell(4, state_is_tuple=False), rnn_cell.LSTMCell(4, num_proj=2, state_is_tuple=False)):
        tf.reset_default_graph()
        proj = getattr(cell, "_num_proj", None) or 4
        assert cell.state_size == 4 + proj
        x = tf.placeholder(tf.float64, [2, 3])
        s0 = tf.placeholder(tf.float64, [2, 4 + proj])
        out, s1 = cell(x, s0)
        assert s1.shape.as_list() == [2, 4 + proj]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = _values(sess, cell)
            xv, sv = rng.randn(2, 3), rng.randn(2, 4 + proj)
            o, s = sess.run([out, s1], {x: xv, s0: sv})
        step = ref.basic_lstm if proj == 4 else (lambda x_, st, k, b, w=w: ref.lstm(x_, st, k, b, proj=w["projection/kernel"]))
        r, (c, h) = step(xv, (sv[:, :4], sv[:, 4:]), w["kernel"], w["bias"])
        np.testing.assert_allclose(o, r, rtol=1e-10)
        np.testing.assert_allclose(s, np.concatenate([c, h], 1), rtol=1e-10)


@pytest.mark.parametrize("make", [
    lambda: rnn_cell.BasicLSTMCell(3),
    lambda: rnn_cell.LSTMCell(3, use_peepholes=True, num_proj=2, initializer=tf.random_uniform_initializer(-1, 1)),
    lambda: rnn_cell.GRUCell(3),
    lambda: rnn_cell.MultiRNNCell([rnn_cell.BasicRNNCell(3), rnn_cell.ResidualWrapper(rnn_cell.GRUCell(3))]),
], ids=["basic_lstm", "lstm", "gru", "multi"])
def test_cell_gradients_against_central_differences(make):
    """d(outputs of two steps)/d(inputs, initial state) and /d(kernels) against central differences."""
    rng = np.random.RandomState(4)
    cell = make()
    x = tf.placeholder(tf.float64, [2, 2])
    state = cell.zero_state(2, tf.float64)
    o1, s1 = cell(x, state)
    o2, _ = cell(tf.tanh(x), s1)
    y = tf.concat([o1, o2], 1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with sess.as_default():
            # (delta 1e-5: central differences of float64 then err ~1e-10; the default 1e-3 left
            # err near 1e-6 for some random kernels)
            err = compute_gradient_error(x, [2, 2], y, y.shape.as_list(), x_init_value=rng.randn(2, 2), delta=1e-5)
            assert err < 1e-6
            xv = rng.randn(2, 2)
            loss = tf.reduce_sum(y * tf.constant(rng.randn(*y.shape.as_list())))
            kernels = [v for v in cell.trainable_weights if "kernel" in v.name or "diag" in v.name]
            assert kernels
            grads = sess.run(tf.gradients(loss, kernels), {x: xv})
            for v, g in zip(kernels, grads):
                np.testing.assert_allclose(g, _numeric_grad(sess, loss, v, {x: xv}), rtol=1e-5, atol=1e-8)


def _numeric_grad(sess, loss, var, feeds, eps=1e-6):
    base = sess.run(var)
    out = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        vals = []
        for d in (eps, -eps):
            w = base.copy()
            w[idx] += d
            var.load(w, sess)
            vals.append(sess.run(loss, feeds))
        out[idx] = (vals[0] - vals[1]) / (2 * eps)
    var.load(base, sess)
    return out


# ---- names, shapes, initializers ------------------------------------------------------------------


def _names():
    return [(v.name, v.shape.as_list()) for v in tf.global_variables()]


def test_variable_names_as_tf1():
    # figures from TF 2.21's tf.compat.v1.nn.rnn_cell (tf_keras legacy cells, TF_USE_LEGACY_KERAS=1)
    x = tf.placeholder(tf.float32, [None, 5, 3])
    tf.nn.dynamic_rnn(rnn_cell.BasicLSTMCell(4), x, dtype=tf.float32)
    assert _names() == [("rnn/basic_lstm_cell/kernel:0", [7, 16]), ("rnn/basic_lstm_cell/bias:0", [16])]
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, 5, 3])
    tf.nn.dynamic_rnn(rnn_cell.LSTMCell(4, use_peepholes=True, num_proj=2), x, dtype=tf.float32)
    assert _names() == [("rnn/lstm_cell/kernel:0", [5, 16]), ("rnn/lstm_cell/bias:0", [16]),
                        ("rnn/lstm_cell/w_f_diag:0", [4]), ("rnn/lstm_cell/w_i_diag:0", [4]),
                        ("rnn/lstm_cell/w_o_diag:0", [4]), ("rnn/lstm_cell/projection/kernel:0", [4, 2])]
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, 5, 3])
    cell = rnn_cell.MultiRNNCell([rnn_cell.DropoutWrapper(rnn_cell.BasicLSTMCell(4), output_keep_prob=0.5),
                                  rnn_cell.ResidualWrapper(rnn_cell.GRUCell(4))])
    tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    assert _names() == [("rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel:0", [7, 16]),
                        ("rnn/multi_rnn_cell/cell_0/basic_lstm_cell/bias:0", [16]),
                        ("rnn/multi_rnn_cell/cell_1/gru_cell/gates/kernel:0", [8, 8]),
                        ("rnn/multi_rnn_cell/cell_1/gru_cell/gates/bias:0", [8]),
                        ("rnn/multi_rnn_cell/cell_1/gru_cell/candidate/kernel:0", [8, 4]),
                        ("rnn/multi_rnn_cell/cell_1/gru_cell/candidate/bias:0", [4])]
    assert len(cell.trainable_weights) == 6 and len(tf.trainable_variables()) == 6
    assert cell.state_size == (rnn_cell.LSTMStateTuple(4, 4), 4) and cell.output_size == 4


def test_direct_calls_and_scope_reuse_as_tf1():
    x = tf.placeholder(tf.float32, [2, 3])
    cell = rnn_cell.BasicLSTMCell(4)
    _, s = cell(x, cell.zero_state(2, tf.float32))
    cell(x, s)  # the second call reuses
    with tf.variable_scope("foo"):
        tf.nn.static_rnn(cell, [x, x], dtype=tf.float32)  # the cell keeps its first scope (TF1)
    assert _names() == [("basic_lstm_cell/kernel:0", [7, 16]), ("basic_lstm_cell/bias:0", [16])]
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [2, 3])
    rnn_cell.GRUCell(2)(x, tf.zeros([2, 2]), scope="my_gru")
    assert [n for n, _ in _names()] == ["my_gru/gates/kernel:0", "my_gru/gates/bias:0", "my_gru/candidate/kernel:0",
                                        "my_gru/candidate/bias:0"]
    with tf.variable_scope("shared"):
        tf.nn.static_rnn(rnn_cell.BasicRNNCell(2), [x], dtype=tf.float32)
    with tf.variable_scope("shared", reuse=True):
        tf.nn.static_rnn(rnn_cell.BasicRNNCell(2), [x], dtype=tf.float32)  # a new cell object reuses by name
    assert [n for n, _ in _names()][4:] == ["shared/rnn/basic_rnn_cell/kernel:0", "shared/rnn/basic_rnn_cell/bias:0"]


def test_initializers_as_tf1():
    x = tf.placeholder(tf.float32, [2, 30])
    lstm = rnn_cell.BasicLSTMCell(20)
    gru = rnn_cell.GRUCell(20)
    lstm(x, lstm.zero_state(2, tf.float32))
    gru(x, tf.zeros([2, 20]))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel, bias = sess.run(lstm.weights)
        gk, gb, ck, cb = sess.run(gru.weights)
    limit = np.sqrt(6 / (50 + 80))  # glorot_uniform, get_variable's default
    assert np.abs(kernel).max() <= limit and np.abs(kernel).max() > 0.8 * limit and abs(kernel.mean()) < 0.02
    np.testing.assert_array_equal(bias, 0)
    np.testing.assert_array_equal(gb, 1)  # TF1: the GRU's gate bias starts at one
    np.testing.assert_array_equal(cb, 0)
    assert np.abs(gk).max() <= np.sqrt(6 / (50 + 40)) and np.abs(ck).max() <= np.sqrt(6 / (50 + 20))


def test_zero_state_sizes_and_state_tuple():
    cell = rnn_cell.MultiRNNCell([rnn_cell.LSTMCell(3, num_proj=2), rnn_cell.GRUCell(5)])
    z = cell.zero_state(4, tf.float32)
    assert z[0].c.shape.as_list() == [4, 3] and z[0].h.shape.as_list() == [4, 2] and z[1].shape.as_list() == [4, 5]
    assert z[0].dtype == tf.float32
    b = tf.placeholder(tf.int32, [])
    zt = rnn_cell.BasicLSTMCell(3).zero_state(b, tf.float64)
    assert zt.c.shape.as_list() == [None, 3] and zt.c.name.startswith("BasicLSTMCellZeroState")
    with tf.Session() as sess:
        assert sess.run(zt, {b: 2}).h.shape == (2, 3)
    with pytest.raises(TypeError, match="Inconsistent internal state"):
        rnn_cell.LSTMStateTuple(tf.zeros([1]), tf.zeros([1], tf.int32)).dtype  # noqa: B018
    flat = rnn_cell.MultiRNNCell([rnn_cell.BasicRNNCell(2), rnn_cell.GRUCell(3)], state_is_tuple=False)
    assert flat.state_size == 5 and flat.zero_state(2, tf.float32).shape.as_list() == [2, 5]
    with pytest.raises(ValueError, match="state_is_tuple is not set"):
        rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(2)], state_is_tuple=False)


def test_bad_cells_say_what_is_wrong():
    with pytest.raises(ValueError, match="Expected inputs.shape\\[-1\\] to be known"):
        rnn_cell.GRUCell(2)(tf.placeholder(tf.float32, [2, None]), tf.zeros([2, 2]))
    with pytest.raises(ValueError, match="expected ndim=2"):
        rnn_cell.GRUCell(2)(tf.placeholder(tf.float32, [2, 3, 4]), tf.zeros([2, 2]))
    with pytest.raises(ValueError, match="at least one cell"):
        rnn_cell.MultiRNNCell([])
    with pytest.raises(TypeError, match="not an RNNCell"):
        tf.nn.static_rnn(lambda x, s: (x, s), [tf.zeros([1, 1])], dtype=tf.float32)
    with pytest.raises(NotImplementedError, match="partition"):
        rnn_cell.LSTMCell(2, num_unit_shards=2)


def test_contrib_rnn_is_the_same_cells():
    import dflow.contrib.rnn as contrib_rnn

    assert contrib_rnn is tf.contrib.rnn and tf.compat.v1.nn.rnn_cell is tf.nn.rnn_cell
    for name in ("BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell", "DropoutWrapper", "LSTMStateTuple",
                 "RNNCell", "ResidualWrapper"):
        assert getattr(tf.contrib.rnn, name) is getattr(tf.nn.rnn_cell, name)
    assert tf.contrib.rnn.static_rnn is tf.nn.static_rnn
    with pytest.raises(AttributeError, match="dflow does not provide tf.contrib.rnn.GRUBlockCell, a TF1 name"):
        tf.contrib.rnn.GRUBlockCell  # noqa: B018
    with pytest.raises(AttributeError, match="dflow does not provide tf.nn.rnn_cell.Foo|not a TF1 name"):
        tf.nn.rnn_cell.Foo  # noqa: B018
