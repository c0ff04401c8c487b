"""MultiRNNCell's stacking and the wrappers (dflow/rnn/wrappers.py): DropoutWrapper with constant and
fed keep probabilities, its state filter and variational masks; ResidualWrapper; DeviceWrapper."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf

from . import reference as ref

rnn_cell = tf.nn.rnn_cell


def _init(sess):
    sess.run(tf.global_variables_initializer())


def test_multi_rnn_cell_feeds_each_cell_the_previous_output():
    rng = np.random.RandomState(0)
    a, b = rnn_cell.BasicRNNCell(3), rnn_cell.GRUCell(2)
    cell = rnn_cell.MultiRNNCell([a, b])
    x = tf.placeholder(tf.float64, [4, 5])
    out, (sa, sb) = cell(x, cell.zero_state(4, tf.float64))
    with tf.Session() as sess:
        _init(sess)
        xv = rng.randn(4, 5)
        o, (va, vb) = sess.run([out, (sa, sb)], {x: xv})
        ka, ba = sess.run(a.weights)
        gk, gb, ck, cb = sess.run(b.weights)
    ha, _ = ref.basic_rnn(xv, np.zeros((4, 3)), ka, ba)
    hb, _ = ref.gru(ha, np.zeros((4, 2)), gk, gb, ck, cb)
    np.testing.assert_allclose(va, ha, rtol=1e-10)
    np.testing.assert_allclose(o, hb, rtol=1e-10)
    np.testing.assert_allclose(vb, hb, rtol=1e-10)


def test_dropout_wrapper_with_a_fed_keep_prob():
    rng = np.random.RandomState(1)
    keep = tf.placeholder(tf.float32, [])
    inner = rnn_cell.BasicLSTMCell(50)
    cell = rnn_cell.DropoutWrapper(inner, output_keep_prob=keep, state_keep_prob=keep)
    x = tf.placeholder(tf.float32, [8, 3])
    s0 = cell.zero_state(8, tf.float32)
    out, st = cell(x, s0)
    plain_out, plain_st = inner(x, s0)  # the same variables, no dropout
    with tf.Session() as sess:
        _init(sess)
        xv = rng.randn(8, 3)
        o1, s1, p, ps = sess.run([out, st, plain_out, plain_st], {x: xv, keep: 1.0})
        np.testing.assert_allclose(o1, p, rtol=1e-6)
        o, s, p, ps = sess.run([out, st, plain_out, plain_st], {x: xv, keep: 0.5})
    kept = o != 0
    assert 0.3 < kept.mean() < 0.7
    np.testing.assert_allclose(o[kept], 2 * p[kept], rtol=1e-5)
    np.testing.assert_allclose(s.c, ps.c, rtol=1e-6)  # TF1: an LSTM's memory c is never dropped
    assert 0.3 < (s.h != 0).mean() < 0.7 and not np.array_equal(s.h != 0, kept)


def test_dropout_wrapper_constant_probabilities():
    cell = rnn_cell.DropoutWrapper(rnn_cell.GRUCell(4), input_keep_prob=1.0, output_keep_prob=1.0)
    x = tf.ones([2, 3])
    n_ops = len(tf.get_default_graph().get_operations())
    cell(x, tf.zeros([2, 4]))
    names = [op.name for op in tf.get_default_graph().get_operations()[n_ops:]]
    assert not [n for n in names if "dropout" in n]  # keep_prob 1: no dropout op, as TF1
    cell = rnn_cell.DropoutWrapper(rnn_cell.GRUCell(4), output_keep_prob=0.5)
    out, _ = cell(x, tf.zeros([2, 4]))
    assert "dropout" in out.name
    with pytest.raises(ValueError, match="Parameter output_keep_prob must be between 0 and 1"):
        rnn_cell.DropoutWrapper(rnn_cell.GRUCell(4), output_keep_prob=1.5)
    with pytest.raises(ValueError, match="dtype must be provided"):
        rnn_cell.DropoutWrapper(rnn_cell.GRUCell(4), output_keep_prob=0.5, variational_recurrent=True)
    with pytest.raises(ValueError, match="input_size must be provided"):
        rnn_cell.DropoutWrapper(rnn_cell.GRUCell(4), input_keep_prob=0.5, variational_recurrent=True,
                                dtype=tf.float32)


def test_variational_dropout_keeps_one_mask_over_time():
    cell = rnn_cell.DropoutWrapper(rnn_cell.GRUCell(40), output_keep_prob=0.5, variational_recurrent=True,
                                   dtype=tf.float32, seed=3)
    x = tf.placeholder(tf.float32, [4, 6, 2])
    outs, _ = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float32)
    with tf.Session() as sess:
        _init(sess)
        o = np.stack(sess.run(outs, {x: np.random.RandomState(2).randn(4, 6, 2)}))
    mask = o != 0
    assert np.all(mask == mask[:1, :1])  # the same columns dropped for every step and row
    assert 0.2 < mask.mean() < 0.8


def test_dropout_state_filter_visitor():
    cell = rnn_cell.DropoutWrapper(rnn_cell.BasicLSTMCell(30), state_keep_prob=0.5,
                                   dropout_state_filter_visitor=lambda s: rnn_cell.LSTMStateTuple(c=True, h=False)
                                   if isinstance(s, rnn_cell.LSTMStateTuple) else True)
    _, st = cell(tf.ones([4, 2]), rnn_cell.LSTMStateTuple(tf.ones([4, 30]), tf.ones([4, 30])))
    with tf.Session() as sess:
        _init(sess)
        c, h = sess.run(st)
    assert (c == 0).any() and not (h == 0).any()


def test_residual_and_device_wrappers():
    inner = rnn_cell.GRUCell(3)
    cell = rnn_cell.DeviceWrapper(rnn_cell.ResidualWrapper(inner), "/cpu:0")
    x = tf.placeholder(tf.float32, [2, 3])
    out, st = cell(x, cell.zero_state(2, tf.float32))
    assert out.op.device.lower().endswith("cpu:0")
    assert [v.name for v in cell.trainable_weights] == [v.name for v in inner.trainable_weights]
    assert inner.trainable_weights[0].name == "gru_cell/gates/kernel:0"  # wrappers add no scope
    with tf.Session() as sess:
        _init(sess)
        xv = np.random.RandomState(3).randn(2, 3)
        o, s = sess.run([out, st], {x: xv})
    np.testing.assert_allclose(o, xv + s, rtol=1e-6, atol=1e-6)  # float32 outputs near zero
    with pytest.raises(ValueError, match="incompatible"):
        rnn_cell.ResidualWrapper(rnn_cell.GRUCell(4))(x, tf.zeros([2, 4]))


def test_dropout_in_dynamic_rnn_draws_a_new_mask_each_step_and_run():
    cell = rnn_cell.DropoutWrapper(rnn_cell.BasicRNNCell(40, activation=lambda v: v * 0 + 1), output_keep_prob=0.5)
    x = tf.placeholder(tf.float32, [2, 4, 3])
    out, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    with tf.Session() as sess:
        _init(sess)
        a = sess.run(out, {x: np.ones((2, 4, 3))})
        b = sess.run(out, {x: np.ones((2, 4, 3))})
    assert set(np.unique(a)) <= {0.0, 2.0}
    assert not np.array_equal(a[:, 0], a[:, 1]) and not np.array_equal(a, b)
