"""tf.contrib.rnn (dflow/contrib/rnn.py): the re-exported cells and drivers, OutputProjectionWrapper
and the stacked bidirectional RNNs."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf

rnn = tf.contrib.rnn


def test_output_projection_wrapper_projects_the_output():
    inner = rnn.GRUCell(4)
    cell = rnn.OutputProjectionWrapper(inner, 2)
    assert cell.output_size == 2 and cell.state_size == 4
    x = tf.placeholder(tf.float64, [None, 3, 5])
    out, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float64)
    assert out.shape.as_list() == [None, 3, 2]
    assert [v.name for v in tf.trainable_variables()] == [
        "rnn/output_projection_wrapper/gru_cell/gates/kernel:0", "rnn/output_projection_wrapper/gru_cell/gates/bias:0",
        "rnn/output_projection_wrapper/gru_cell/candidate/kernel:0",
        "rnn/output_projection_wrapper/gru_cell/candidate/bias:0",
        "rnn/output_projection_wrapper/kernel:0", "rnn/output_projection_wrapper/bias:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv = np.random.RandomState(0).randn(2, 3, 5)
        o, s = sess.run([out, state], {x: xv})
        kernel, bias = sess.run(tf.trainable_variables()[-2:])
    np.testing.assert_allclose(o[:, -1], s @ kernel + bias, rtol=1e-10)
    np.testing.assert_array_equal(bias, 0)
    with pytest.raises(ValueError, match="output_size must be > 0"):
        rnn.OutputProjectionWrapper(inner, 0)


def test_stack_bidirectional_dynamic_rnn_feeds_each_layer_both_directions():
    x = tf.placeholder(tf.float32, [2, 4, 3])
    fws, bws = [rnn.GRUCell(2), rnn.GRUCell(3)], [rnn.BasicLSTMCell(2), rnn.GRUCell(1)]
    out, states_fw, states_bw = rnn.stack_bidirectional_dynamic_rnn(fws, bws, x, dtype=tf.float32,
                                                                    sequence_length=[4, 2])
    assert out.shape.as_list() == [2, 4, 4] and len(states_fw) == 2 and isinstance(states_bw[0], rnn.LSTMStateTuple)
    names = [v.name for v in tf.trainable_variables()]
    assert names[0] == "stack_bidirectional_rnn/cell_0/bidirectional_rnn/fw/gru_cell/gates/kernel:0"
    assert "stack_bidirectional_rnn/cell_1/bidirectional_rnn/fw/gru_cell/gates/kernel:0" in names
    assert tf.trainable_variables()[names.index(
        "stack_bidirectional_rnn/cell_1/bidirectional_rnn/fw/gru_cell/gates/kernel:0")].shape.as_list() == [4 + 3, 6]
    # the same stack, static, on the same variables
    with tf.variable_scope(tf.get_variable_scope(), reuse=True):
        souts, sfw, sbw = rnn.stack_bidirectional_rnn(fws, bws, tf.unstack(x, axis=1), dtype=tf.float32,
                                                      sequence_length=[4, 2])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv = np.random.RandomState(1).randn(2, 4, 3)
        d, s = sess.run([out, souts], {x: xv})
        dfw, sfwv = sess.run([states_fw[1], sfw[1]], {x: xv})
    np.testing.assert_allclose(d, np.stack(s, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dfw, sfwv, rtol=1e-5)
    assert np.all(d[1, 2:] == 0)
    with pytest.raises(ValueError, match="same depth"):
        rnn.stack_bidirectional_dynamic_rnn([rnn.GRUCell(2)], [rnn.GRUCell(2)] * 2, x, dtype=tf.float32)


def test_lstm_block_cell_is_lstm_cell_under_the_same_names():
    x = tf.placeholder(tf.float64, [None, 4, 3])
    block = rnn.LSTMBlockCell(5, use_peephole=True, cell_clip=0.5, forget_bias=0.7)
    b_out, b_state = tf.nn.dynamic_rnn(block, x, dtype=tf.float64)
    assert [v.name for v in tf.global_variables()] == [
        "rnn/lstm_cell/kernel:0", "rnn/lstm_cell/bias:0", "rnn/lstm_cell/w_i_diag:0", "rnn/lstm_cell/w_f_diag:0",
        "rnn/lstm_cell/w_o_diag:0"]
    with tf.variable_scope(tf.get_variable_scope(), reuse=True):  # LSTMCell reads the block cell's variables
        cell = rnn.LSTMCell(5, use_peepholes=True, cell_clip=0.5, forget_bias=0.7)
        c_out, c_state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float64)
    assert len(tf.global_variables()) == 5
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv = np.random.RandomState(2).randn(2, 4, 3)
        a, b = sess.run([(b_out, b_state), (c_out, c_state)], {x: xv})
    np.testing.assert_allclose(a[0], b[0], rtol=1e-10)
    np.testing.assert_allclose(a[1].c, b[1].c, rtol=1e-10)
    assert np.abs(a[1].c).max() <= 0.5
