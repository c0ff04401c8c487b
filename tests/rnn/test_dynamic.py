"""dynamic_rnn, bidirectional_dynamic_rnn and raw_rnn (dflow/rnn/dynamic.py): against the numpy cells
and against static_rnn on the same variables, with ragged sequence lengths, on every local mode;
gradients of the final state and of the outputs against static_rnn's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dflow as tf

from ..conftest import LOCAL_MODES
from . import reference as ref

rnn_cell = tf.nn.rnn_cell


def _lstm_ref(sess, cell, xs, lengths=None):
    kernel, bias = sess.run(cell.weights)
    n = kernel.shape[1] // 4
    zero = (np.zeros((xs.shape[0], n)), np.zeros((xs.shape[0], n)))
    return ref.run(lambda x, s: ref.basic_lstm(x, s, kernel, bias), xs, zero, lengths)


@pytest.mark.parametrize("mode", LOCAL_MODES)
@pytest.mark.parametrize("lengths", [None, [5, 1, 3], [2, 1, 2]], ids=["no-lengths", "ragged", "all-short"])
def test_dynamic_rnn_matches_numpy(sess_factory, mode, lengths):
    rng = np.random.RandomState(0)
    x = tf.placeholder(tf.float64, [None, 5, 2])
    seq = None if lengths is None else tf.placeholder(tf.int32, [None])
    cell = rnn_cell.BasicLSTMCell(4)
    out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=seq, dtype=tf.float64)
    assert out.shape.as_list() == [None, 5, 4] and state.h.shape.as_list() == [None, 4]
    sess = sess_factory(mode)
    sess.run(tf.global_variables_initializer())
    xv = rng.randn(3, 5, 2)
    feeds = {x: xv} if lengths is None else {x: xv, seq: lengths}
    o, s = sess.run([out, state], feeds)
    want_o, want_s = _lstm_ref(sess, cell, xv, lengths)
    np.testing.assert_allclose(o, want_o, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(s.c, want_s[0], rtol=1e-10)
    np.testing.assert_allclose(s.h, want_s[1], rtol=1e-10)
    if lengths is not None:
        for row, n in enumerate(lengths):
            assert np.all(o[row, n:] == 0)


def test_dynamic_rnn_equals_static_rnn_time_major_and_initial_state():
    rng = np.random.RandomState(1)
    x = tf.placeholder(tf.float32, [6, 4, 3])  # time-major
    lengths = tf.placeholder(tf.int32, [4])
    cell = rnn_cell.MultiRNNCell([rnn_cell.GRUCell(5), rnn_cell.LSTMCell(3, use_peepholes=True, num_proj=2)])
    init = cell.zero_state(4, tf.float32)
    init = (init[0] + 0.5, rnn_cell.LSTMStateTuple(init[1].c - 0.25, init[1].h + 0.1))
    with tf.variable_scope("model"):
        d_out, d_state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, initial_state=init, time_major=True)
    with tf.variable_scope("model", reuse=True):
        s_outs, s_state = tf.nn.static_rnn(cell, tf.unstack(x), sequence_length=lengths, initial_state=init)
    assert len(tf.trainable_variables()) == 2 + 4 + 4  # one set of variables, shared
    assert tf.trainable_variables()[0].name == "model/rnn/multi_rnn_cell/cell_0/gru_cell/gates/kernel:0"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feeds = {x: rng.randn(6, 4, 3), lengths: [6, 0, 3, 4]}
        d = sess.run([d_out, d_state], feeds)
        s = sess.run([s_outs, s_state], feeds)
    np.testing.assert_allclose(d[0], np.stack(s[0]), rtol=1e-5, atol=1e-6)
    for a, b in zip(_flat(d[1]), _flat(s[1])):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d[1][0][1], 0.5)  # a row of length 0 keeps its initial state


def _flat(x):
    return [leaf for item in x for leaf in _flat(item)] if isinstance(x, tuple) else [x]


def test_bidirectional_dynamic_rnn_equals_static():
    rng = np.random.RandomState(2)
    x = tf.placeholder(tf.float32, [3, 4, 2])
    fw, bw = rnn_cell.GRUCell(3), rnn_cell.BasicLSTMCell(2)
    (of, ob), (sf, sb) = tf.nn.bidirectional_dynamic_rnn(fw, bw, x, sequence_length=[4, 2, 3], dtype=tf.float32)
    with tf.variable_scope(tf.get_variable_scope(), reuse=True):
        outs, ssf, ssb = tf.nn.static_bidirectional_rnn(fw, bw, tf.unstack(x, axis=1), sequence_length=[4, 2, 3],
                                                        dtype=tf.float32)
    assert len(tf.trainable_variables()) == 6
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv = rng.randn(3, 4, 2)
        d = sess.run([of, ob, sf, sb], {x: xv})
        s = sess.run([outs, ssf, ssb], {x: xv})
    np.testing.assert_allclose(np.concatenate(d[:2], 2), np.stack(s[0], 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d[2], s[1], rtol=1e-5)
    np.testing.assert_allclose(d[3].h, s[2].h, rtol=1e-5)


def test_raw_rnn_reproduces_dynamic_rnn():
    rng = np.random.RandomState(3)
    x = tf.placeholder(tf.float32, [5, 2, 3])  # time-major
    lengths = tf.constant([5, 3])
    cell = rnn_cell.BasicLSTMCell(4)
    inputs_ta = tf.TensorArray(tf.float32, size=5, element_shape=[2, 3]).unstack(x)

    def loop_fn(time, cell_output, cell_state, loop_state):
        emit = cell_output
        state = cell.zero_state(2, tf.float32) if cell_output is None else cell_state
        finished = time >= lengths
        next_input = tf.cond(tf.reduce_all(finished), lambda: tf.zeros([2, 3]), lambda: inputs_ta.read(time))
        return finished, next_input, state, emit, None

    emit_ta, final_state, loop_state = tf.nn.raw_rnn(cell, loop_fn)
    raw_out = emit_ta.stack()
    with tf.variable_scope(tf.get_variable_scope(), reuse=True):
        d_out, d_state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, time_major=True, dtype=tf.float32)
    assert loop_state is None and len(tf.trainable_variables()) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv = rng.randn(5, 2, 3)
        r, rs, d, ds = sess.run([raw_out, final_state, d_out, d_state], {x: xv})
    np.testing.assert_allclose(r, d, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rs.c, ds.c, rtol=1e-5)


def test_final_state_gradient_equals_static_rnn():
    """A loss on the final state trains through the host loop's reverse pass (WhileGrad)."""
    rng = np.random.RandomState(4)
    x = tf.placeholder(tf.float64, [3, 4, 2])
    cell = rnn_cell.BasicLSTMCell(3)
    _, d_state = tf.nn.dynamic_rnn(cell, x, sequence_length=[4, 2, 3], dtype=tf.float64)
    with tf.variable_scope(tf.get_variable_scope(), reuse=True):
        _, s_state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), sequence_length=[4, 2, 3], dtype=tf.float64)
    w = rng.randn(3, 3)
    d_grads = tf.gradients(tf.reduce_sum(d_state.h * w), cell.weights)
    s_grads = tf.gradients(tf.reduce_sum(s_state.h * w), cell.weights)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv = rng.randn(3, 4, 2)
        for a, b in zip(sess.run(d_grads, {x: xv}), sess.run(s_grads, {x: xv})):
            np.testing.assert_allclose(a, b, rtol=1e-9)


def test_outputs_gradient_equals_static_rnn():
    """A loss on the outputs (read from the output TensorArray's stack) reaches the weights and the
    inputs (through the input TensorArray's unstack) as static_rnn's does."""
    rng = np.random.RandomState(5)
    x = tf.placeholder(tf.float64, [3, 4, 2])
    cell = rnn_cell.GRUCell(3)
    d_out, _ = tf.nn.dynamic_rnn(cell, x, sequence_length=[4, 2, 3], dtype=tf.float64)
    with tf.variable_scope(tf.get_variable_scope(), reuse=True):
        s_outs, _ = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), sequence_length=[4, 2, 3], dtype=tf.float64)
    w = rng.randn(3, 4, 3)
    wrt = cell.weights + [x]
    d_grads = tf.gradients(tf.reduce_sum(d_out * w), wrt)
    s_grads = tf.gradients(tf.reduce_sum(tf.stack(s_outs, 1) * w), wrt)
    assert all(g is not None for g in d_grads)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv = rng.randn(3, 4, 2)
        for a, b in zip(sess.run(d_grads, {x: xv}), sess.run(s_grads, {x: xv})):
            np.testing.assert_allclose(a, b, rtol=1e-9)


def test_dynamic_rnn_bad_arguments():
    cell = rnn_cell.GRUCell(2)
    x = tf.placeholder(tf.float32, [2, 3, 1])
    with pytest.raises(ValueError, match="you must give a dtype"):
        tf.nn.dynamic_rnn(cell, x)
    with pytest.raises(ValueError, match="depth of inputs"):
        tf.nn.dynamic_rnn(cell, tf.placeholder(tf.float32, [2, 3, None]), dtype=tf.float32)
    with pytest.raises(ValueError, match="sequence_length must be a vector"):
        tf.nn.dynamic_rnn(cell, x, sequence_length=[[1, 2]], dtype=tf.float32)
    with pytest.raises(ValueError, match="rank at least"):
        tf.nn.dynamic_rnn(cell, tf.zeros([2]), dtype=tf.float32)
    seq = tf.placeholder(tf.int32, [None])
    out, _ = tf.nn.dynamic_rnn(rnn_cell.GRUCell(2), x, sequence_length=seq, dtype=tf.float32, scope="r2")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError, match="Expected shape for Tensor"):
            sess.run(out, {x: np.zeros((2, 3, 1)), seq: [1, 2, 3]})


@settings(max_examples=12, deadline=None)
@given(batch=st.integers(1, 4), time=st.integers(1, 5), depth=st.integers(1, 3), units=st.integers(1, 4),
       time_major=st.booleans(), data=st.data())
def test_dynamic_gru_matches_numpy_over_shapes(batch, time, depth, units, time_major, data):
    lengths = data.draw(st.lists(st.integers(0, time), min_size=batch, max_size=batch))
    rng = np.random.RandomState(batch * 100 + time * 10 + depth)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [time, batch, depth] if time_major else [batch, time, depth])
        cell = rnn_cell.GRUCell(units)
        out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float64, time_major=time_major)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            xv = rng.randn(batch, time, depth)
            o, s = sess.run([out, state], {x: xv.transpose(1, 0, 2) if time_major else xv})
            w = sess.run(cell.weights)
    want_o, want_s = ref.run(lambda xt, h: ref.gru(xt, h, *w), xv, np.zeros((batch, units)), lengths)
    np.testing.assert_allclose(o.transpose(1, 0, 2) if time_major else o, want_o, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(s, want_s, rtol=1e-10, atol=1e-14)


class _OldStyleCell(rnn_cell.RNNCell):
    """A cell as old TF1 tutorials wrote them: get_variable in its own __call__."""

    def __init__(self, n):
        super().__init__()
        self.n = n

    @property
    def state_size(self):
        return self.n

    @property
    def output_size(self):
        return self.n

    def __call__(self, inputs, state, scope=None):
        with tf.variable_scope(scope or "old_cell"):
            w = tf.get_variable("w", [inputs.shape[1].value + self.n, self.n], dtype=inputs.dtype)
            h = tf.tanh(tf.matmul(tf.concat([inputs, state], 1), w))
        return h, h


def test_an_old_style_cell_in_dynamic_and_static_rnn():
    rng = np.random.RandomState(6)
    x = tf.placeholder(tf.float64, [2, 3, 2])
    cell = _OldStyleCell(3)
    d_out, _ = tf.nn.dynamic_rnn(cell, x, sequence_length=[3, 1], dtype=tf.float64)
    with tf.variable_scope(tf.get_variable_scope(), reuse=True):
        s_outs, _ = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), sequence_length=[3, 1], dtype=tf.float64)
    assert [v.name for v in tf.global_variables()] == ["rnn/old_cell/w:0"]
    grads = tf.gradients(tf.reduce_sum(d_out), tf.global_variables())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv = rng.randn(2, 3, 2)
        d, s, g = sess.run([d_out, s_outs, grads], {x: xv})
        w = sess.run(tf.global_variables()[0])
    np.testing.assert_allclose(d, np.stack(s, 1), rtol=1e-10)
    want, _ = ref.run(lambda xt, h: (np.tanh(np.concatenate([xt, h], 1) @ w),) * 2, xv, np.zeros((2, 3)), [3, 1])
    np.testing.assert_allclose(d, want, rtol=1e-10)
    assert g[0].shape == (5, 3) and np.abs(g[0]).sum() > 0


def test_lstm_cell_without_state_tuple_in_dynamic_rnn():
    x = tf.placeholder(tf.float32, [None, 4, 2])
    cell = rnn_cell.LSTMCell(3, num_proj=2, state_is_tuple=False)
    out, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    assert out.shape.as_list() == [None, 4, 2] and state.shape.as_list() == [None, 5]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        o, s = sess.run([out, state], {x: np.ones((3, 4, 2))})
    np.testing.assert_allclose(o[:, -1], s[:, 3:], rtol=1e-6)
