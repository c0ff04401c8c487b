"""Prints TF1's figures for dflow's CTC tests (tests/test_nn_ctc.py hard-codes them) and the row/col
pooling sequences of fractional pools (not yet provided by dflow). Run with TensorFlow installed:
`python tools/tf_nn_extra_figures.py`."""

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
np.set_printoptions(precision=7, suppress=False, floatmode="maxprec")


def inputs():
    rng = np.random.RandomState(0)
    return rng.randn(6, 2, 5).astype(np.float32)  # [time, batch, classes]; blank 4


def main():
    x = inputs()
    labels = tf.SparseTensor([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]], np.array([1, 1, 2, 3, 0], np.int32), [2, 3])
    seq = np.array([6, 4], np.int32)
    with tf.Session() as s:
        xt = tf.constant(x)
        for merge in (True, False):
            loss = tf.nn.ctc_loss(labels, xt, seq, ctc_merge_repeated=merge)
            g = tf.gradients(tf.reduce_sum(loss * [1.0, 2.0]), xt)[0]
            lv, gv = s.run([loss, g])
            print("ctc_loss merge", merge, repr(lv), "grad[:, 1, :] and grad[2, 0, :]")
            print(repr(gv[:, 1, :]), repr(gv[2, 0, :]))
        lv = s.run(tf.nn.ctc_loss(labels, xt, seq, preprocess_collapse_repeated=True))
        print("collapse", repr(lv))
        dense = tf.constant([[2, 2, 3], [4, 1, 0]])
        v2 = s.run(tf.nn.ctc_loss_v2(dense, xt, [3, 2], seq, blank_index=0))
        print("ctc_loss_v2 dense blank 0", repr(v2))
        (d,), lp = tf.nn.ctc_greedy_decoder(xt, seq)
        print("greedy", s.run([d, lp]))
        (d,), lp = tf.nn.ctc_greedy_decoder(xt, seq, merge_repeated=False)
        print("greedy nomerge", s.run([d, lp]))
        ds, lp = tf.nn.ctc_beam_search_decoder(xt, seq, beam_width=4, top_paths=3)
        print("beam", s.run([ds, lp]))
        ds, lp = tf.nn.ctc_beam_search_decoder(xt, seq, beam_width=4, top_paths=2, merge_repeated=False)
        print("beam nomerge", s.run([ds, lp]))
        img = np.arange(2 * 7 * 9 * 2, dtype=np.float32).reshape(2, 7, 9, 2) % 11
        for fn in (tf.nn.fractional_max_pool, tf.nn.fractional_avg_pool):
            for pr, ov in ((False, False), (True, True)):
                out, rows, cols = fn(img, [1.0, 1.5, 1.7, 1.0], pseudo_random=pr, overlapping=ov, deterministic=True,
                                     seed=7, seed2=3)
                print(fn.__name__, pr, ov, s.run([rows, cols]))


main()
