"""Prints TF1's tf.metrics top-k figures and variable names hard-coded in tests/test_metrics_topk.py
(run with /tmp/tfenv/bin/python; needs TensorFlow)."""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
np.set_printoptions(precision=17)
labels = np.array([[0, 2, -1], [1, 1, 3], [4, -1, -1], [3, 0, 2]], np.int64)
preds = np.array([[.1, .5, .2, .9, .0], [.3, .8, .1, .2, .6], [.9, .1, .2, .3, .4], [.2, .2, .7, .1, .0]], np.float32)
pidx = tf.constant(np.array([[3, 1], [1, 4], [0, 4], [2, 0]], np.int32))
w = np.array([1., 0.5, 2., 0.], np.float32)
sl = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [3, 0]], np.array([0, 2, 1, 4, 3, 2], np.int64), [4, 3])
res = {}
res['ap3'] = tf.metrics.average_precision_at_k(labels, preds, 3)
res['ap2w'] = tf.metrics.average_precision_at_k(labels, preds, 2, weights=w)
res['sap2'] = tf.metrics.sparse_average_precision_at_k(sl, preds, 2)
res['p2'] = tf.metrics.precision_at_k(labels, preds, 2)
res['p2c1'] = tf.metrics.precision_at_k(labels, preds, 2, class_id=1)
res['sp3w'] = tf.metrics.sparse_precision_at_k(sl, preds, 3, weights=w)
res['ptk'] = tf.metrics.precision_at_top_k(labels, pidx)
res['ptkc3'] = tf.metrics.precision_at_top_k(sl, pidx, class_id=3)
res['r2'] = tf.metrics.recall_at_k(labels, preds, 2)
res['r2c2w'] = tf.metrics.recall_at_k(sl, preds, 2, class_id=2, weights=w)
res['rtk'] = tf.metrics.recall_at_top_k(labels, pidx, k=2)
res['r1_1d'] = tf.metrics.recall_at_k(np.array([1, 0, 4, 2], np.int64), preds, 1)
res['p1c0_never'] = tf.metrics.precision_at_k(labels, preds, 1, class_id=3)
for v in tf.local_variables():
    print(v.name, v.dtype.base_dtype.name)
for k, (v, u) in res.items():
    print(k, v.name, u.name)
with tf.Session() as s:
    s.run(tf.local_variables_initializer())
    for k,(v,u) in res.items():
        print(k, repr(s.run(v)), repr(s.run(u)), repr(s.run(u)), repr(s.run(v)))
