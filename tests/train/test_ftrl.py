"""tf.train.FtrlOptimizer against numpy's FTRL-Proximal and a TF 2.21 run."""

import numpy as np

import dflow as tf


def test_ftrl_matches_numpy_and_tensorflow():
    x0 = np.array([0.5, -1.0, 2.0], np.float32)
    with tf.Graph().as_default():
        v = tf.Variable(x0)
        loss = tf.reduce_sum(tf.square(v - tf.constant([1.0, 2.0, 3.0])))
        opt = tf.train.FtrlOptimizer(0.3, l1_regularization_strength=0.01, l2_regularization_strength=0.1)
        step = opt.minimize(loss)
        assert [x.op.name for x in tf.global_variables()] == ["Variable", "Variable/Ftrl", "Variable/Ftrl_1"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(step)
            got = sess.run(v)
    var, acc, lin, t = x0.astype(np.float64), np.full(3, 0.1), np.zeros(3), np.array([1.0, 2.0, 3.0])
    for _ in range(3):
        g = 2 * (var - t)
        new_acc = acc + g * g
        lin = lin + g - (np.sqrt(new_acc) - np.sqrt(acc)) / 0.3 * var
        quadratic = np.sqrt(new_acc) / 0.3 + 2 * 0.1
        var = np.where(np.abs(lin) > 0.01, (0.01 * np.sign(lin) - lin) / quadratic, 0.0)
        acc = new_acc
    np.testing.assert_allclose(got, var, rtol=1e-5)
    # tensorflow 2.21 (tf.compat.v1.train.FtrlOptimizer, same program): [0.86630636, -0.28885293, 2.2879071]
    np.testing.assert_allclose(got, [0.86630636, -0.28885293, 2.2879071], rtol=1e-6)
