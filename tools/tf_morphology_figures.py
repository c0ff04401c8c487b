"""Prints TF1's tf.nn.dilation2d/erosion2d figures and gradients hard-coded in
tests/kernels/test_morphology_ops.py (run with /tmp/tfenv/bin/python; needs TensorFlow)."""
import inspect

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
print(inspect.signature(tf.nn.dilation2d))
print(inspect.signature(tf.nn.erosion2d))
np.set_printoptions(precision=17, linewidth=200)
rng = np.random.RandomState(0)
x = np.round(rng.randn(1, 4, 5, 2), 2).astype(np.float32)
f = np.round(rng.randn(2, 3, 2), 2).astype(np.float32)
x[0, 1, 1, 0] = x[0, 1, 2, 0]  # a tie
print("x", repr(x.ravel().tolist()))
print("f", repr(f.ravel().tolist()))
xt, ft = tf.constant(x), tf.constant(f)
outs = {}
for pad in ("SAME", "VALID"):
    for st, rt in (((1, 1, 1, 1), (1, 1, 1, 1)), ((1, 2, 1, 1), (1, 1, 2, 1))):
        d = tf.nn.dilation2d(xt, ft, st, rt, pad)
        e = tf.nn.erosion2d(xt, ft, st, rt, pad)
        gx, gf = tf.gradients(tf.reduce_sum(d * tf.cos(d)), [xt, ft])
        ex, ef = tf.gradients(tf.reduce_sum(e * tf.sin(e)), [xt, ft])
        outs[(pad, st[1], rt[2])] = (d, e, gx, gf, ex, ef)
print([n.name for n in tf.get_default_graph().get_operations() if 'rosion' in n.name][:10])
with tf.Session() as s:
    r = s.run(outs)
for k, v in r.items():
    print(k)
    for name, a in zip("d e gx gf ex ef".split(), v):
        print(" ", name, a.shape, repr(a.ravel().tolist()))
