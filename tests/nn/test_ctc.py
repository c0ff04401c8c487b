"""tf.nn's CTC functions against TF1's figures (printed by tools/tf_nn_extra_figures.py, TF 2.21's
compat.v1, inputs np.random.RandomState(0).randn(6, 2, 5) float32), on every local mode."""

import numpy as np
import pytest

import dflow as tf
from dflow.errors import InvalidArgumentError
from tests.conftest import run_modes

X = np.random.RandomState(0).randn(6, 2, 5).astype(np.float32)  # [time, batch, classes], blank 4
SEQ = np.array([6, 4], np.int32)


def _labels():
    return tf.SparseTensor([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]], np.array([1, 1, 2, 3, 0], np.int32), [2, 3])


# TF1: tf.nn.ctc_loss(labels, X, SEQ, ctc_merge_repeated=m) and the gradient of sum(loss * [1, 2])
TF_LOSS = {True: [6.9355497, 4.770308], False: [7.138959, 5.590488]}
TF_GRAD_B1 = {True: [[0.1207852, 0.829962, 0.2758712, -0.5848915, -0.641727],
                     [0.1309477, 1.0533558, 0.1925776, -1.23555, -0.1413314],
                     [-0.0530229, 0.1888353, 0.1495952, -0.0862442, -0.199163],
                     [-1.5378369, 0.733009, 0.7128329, 0.1454075, -0.0534119]] + [[0.0] * 5] * 2,
              False: [[1.2078518e-01, 8.2996196e-01, 2.7587125e-01, -3.0568641e-01, -9.2093164e-01],
                      [-6.7035645e-02, 1.0533558e+00, 1.9257756e-01, -7.4033296e-01, -4.3856400e-01],
                      [6.8085268e-04, 1.8883531e-01, 1.4959520e-01, 4.9423036e-01, -8.3334130e-01],
                      [-1.3109974e+00, 7.3300898e-01, 7.1283293e-01, 1.4540754e-01, -2.8025180e-01]] + [[0.0] * 5] * 2}
TF_GRAD_T2_B0 = {True: [0.0053588, 0.0943343, 0.1633957, 0.032772, -0.2958604],
                 False: [0.0053588, -0.0086123, 0.1467529, 0.032772, -0.1762713]}


@pytest.mark.parametrize("merge", [True, False])
def test_ctc_loss_and_gradient_match_tf1(merge):
    x = tf.constant(X)
    loss = tf.nn.ctc_loss(_labels(), x, SEQ, ctc_merge_repeated=merge)
    g = tf.gradients(tf.reduce_sum(loss * [1.0, 2.0]), x)[0]
    lv, gv = run_modes([loss, g])
    np.testing.assert_allclose(lv, TF_LOSS[merge], rtol=1e-5)
    np.testing.assert_allclose(gv[:, 1, :], TF_GRAD_B1[merge], atol=2e-6)
    np.testing.assert_allclose(gv[2, 0, :], TF_GRAD_T2_B0[merge], atol=2e-6)


def test_ctc_loss_options_match_tf1():
    x = tf.constant(X)
    with tf.Session() as s:
        collapsed = s.run(tf.nn.ctc_loss(_labels(), x, SEQ, preprocess_collapse_repeated=True))
        batch_major = s.run(tf.nn.ctc_loss(_labels(), tf.transpose(x, [1, 0, 2]), SEQ, time_major=False))
        v2 = s.run(tf.nn.ctc_loss_v2(tf.constant([[2, 2, 3], [4, 1, 0]]), x, [3, 2], SEQ, blank_index=0))
    np.testing.assert_allclose(collapsed, [6.5726304, 4.770308], rtol=1e-5)  # TF1
    np.testing.assert_allclose(batch_major, TF_LOSS[True], rtol=1e-5)
    np.testing.assert_allclose(v2, [8.789848, 4.3539057], rtol=1e-5)  # TF1's ctc_loss_v2, dense labels, blank 0


def test_ctc_loss_bad_input_names_the_op():
    x = tf.constant(X)
    short = tf.nn.ctc_loss(_labels(), x, np.array([6, 1], np.int32))
    out_of_range = tf.nn.ctc_loss(tf.SparseTensor([[0, 0]], np.array([4], np.int32), [2, 1]), x, SEQ)
    ignored = tf.nn.ctc_loss(_labels(), x, np.array([6, 1], np.int32), ignore_longer_outputs_than_inputs=True)
    with tf.Session() as s:
        with pytest.raises(InvalidArgumentError, match="Not enough time|not enough time"):
            s.run(short)
        with pytest.raises(InvalidArgumentError, match="label 4"):
            s.run(out_of_range)
        np.testing.assert_allclose(s.run(ignored), [TF_LOSS[True][0], 0.0], rtol=1e-5)
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.nn.ctc_loss(np.zeros((2, 3), np.int32), x, SEQ)


def _dense(sp):
    out = np.full(sp.dense_shape, -1)
    for (i, j), v in zip(sp.indices, sp.values):
        out[i, j] = v
    return out.tolist()


def test_greedy_decoder_matches_tf1():
    x = tf.constant(X)
    (d,), lp = tf.nn.ctc_greedy_decoder(x, SEQ)
    (d2,), _ = tf.nn.ctc_greedy_decoder(x, SEQ, merge_repeated=False)
    dv, lpv, dv2 = run_modes([d, lp, d2])
    assert _dense(dv) == [[3, 1, 1, 3, 1], [1, 3, 1, -1, -1]]  # TF1
    assert _dense(dv2) == [[3, 1, 1, 3, 1], [1, 1, 3, 1, -1]]  # TF1, merge_repeated=False
    np.testing.assert_allclose(lpv, [[-8.680761], [-5.2072372]], rtol=1e-6)
    assert dv.values.dtype == np.int64 and dv.indices.dtype == np.int64


def test_greedy_decoder_blank_index_rotates_classes():
    x = np.roll(X, 1, axis=2)  # class 4 (the blank) moved to 0, the others shifted up by one
    (d,), lp = tf.nn.ctc_greedy_decoder(tf.constant(x), SEQ, blank_index=0)
    with tf.Session() as s:
        dv, lpv = s.run([d, lp])
    assert _dense(dv) == [[4, 2, 2, 4, 2], [2, 4, 2, -1, -1]]
    np.testing.assert_allclose(lpv, [[-8.680761], [-5.2072372]], rtol=1e-6)


def test_beam_search_decoder_matches_tf1():
    x = tf.constant(X)
    ds, lp = tf.nn.ctc_beam_search_decoder(x, SEQ, beam_width=4, top_paths=3)
    got = run_modes(ds + [lp])
    assert [_dense(d) for d in got[:3]] == [  # TF1
        [[3, 1, 3, 1], [1, 2, -1, -1]],
        [[3, 1, 3], [1, 3, 1]],
        [[3, 1, 0, 3, 1], [1, 3, 2, -1, -1]]]
    np.testing.assert_allclose(got[3], [[-3.772682, -3.913275, -4.3032117], [-2.7661338, -2.879486, -2.9073968]],
                               rtol=1e-5)
    ds2, lp2 = tf.nn.ctc_beam_search_decoder_v2(x, SEQ, beam_width=4, top_paths=2)
    with tf.Session() as s:
        got2 = s.run(ds2 + [lp2])
    assert [_dense(d) for d in got2[:2]] == [_dense(d) for d in got[:2]]
    with pytest.raises(InvalidArgumentError, match="top_paths"):
        with tf.Session() as s:
            s.run(tf.nn.ctc_beam_search_decoder(x, SEQ, beam_width=2, top_paths=3)[1])


def test_collapse_repeated_and_unique_labels():
    labels, lengths = tf.nn.collapse_repeated([[1, 1, 2, 2, 3], [4, 4, 4, 0, 0]], [5, 2])
    y, idx = tf.nn.ctc_unique_labels([[3, 1, 3, 2], [5, 5, 0, 0]])
    lv, nv, yv, iv = run_modes([labels, lengths, y, idx])
    assert lv.tolist() == [[1, 2, 3], [4, 0, 0]] and nv.tolist() == [3, 1]
    assert yv.tolist() == [[3, 1, 2, 0], [5, 0, 0, 0]] and iv.tolist() == [[0, 1, 0, 2], [0, 0, 1, 1]]
