"""Adadelta, the proximal optimizers, AdagradDA, the cosine schedules and checkpoint housekeeping,
against TF1's figures (tensorflow.compat.v1 runs of the same programs, recorded here)."""

import os

import numpy as np
import pytest

import dflow as tf

# 3 steps on loss = sum(w * w * c), w0 = [1, -2, 3], c = [0.5, 1, 2]: (TF1's w, TF1's variable names)
TF1_THREE_STEPS = {
    "adadelta": ([0.99864346, -1.99864328, 2.99864316], ["Variable/Adadelta:0", "Variable/Adadelta_1:0"],
                 lambda g: tf.train.AdadeltaOptimizer(1.0)),
    "adadelta_rho": ([0.85156995, -1.84866667, 2.84791112], ["Variable/Adadelta:0", "Variable/Adadelta_1:0"],
                     lambda g: tf.train.AdadeltaOptimizer(0.5, rho=0.9, epsilon=1e-3)),
    "proximal_gd": ([0.60869128, -0.89436573, 0.55373502], [],
                    lambda g: tf.train.ProximalGradientDescentOptimizer(0.1, l1_regularization_strength=0.3,
                                                                        l2_regularization_strength=0.2)),
    "proximal_adagrad": ([0.68576604, -1.73835087, 2.75789571], ["Variable/ProximalAdagrad:0"],
                         lambda g: tf.train.ProximalAdagradOptimizer(0.1, l1_regularization_strength=0.3,
                                                                     l2_regularization_strength=0.2)),
    "proximal_adagrad_plain": ([0.78751278, -1.77629662, 2.77441263], ["Variable/ProximalAdagrad:0"],
                               lambda g: tf.train.ProximalAdagradOptimizer(0.1)),
    "adagrad_da": ([-0.07454974, 0.08896083, -0.09303002], ["Variable/AdagradDA:0", "Variable/AdagradDA_1:0"],
                   lambda g: tf.train.AdagradDAOptimizer(0.1, g, l1_regularization_strength=0.01,
                                                         l2_regularization_strength=0.02)),
    "adagrad_da_plain": ([-0.07748705, 0.08979412, -0.09331600], ["Variable/AdagradDA:0", "Variable/AdagradDA_1:0"],
                         lambda g: tf.train.AdagradDAOptimizer(0.1, g)),
}


@pytest.mark.parametrize("name", sorted(TF1_THREE_STEPS))
def test_three_steps_match_tf1(name, mode, sess_factory):
    expected, slots, make = TF1_THREE_STEPS[name]
    w = tf.Variable([1.0, -2.0, 3.0])
    c = tf.constant([0.5, 1.0, 2.0])
    gs = tf.train.get_or_create_global_step()
    op = make(gs).minimize(tf.reduce_sum(w * w * c), global_step=gs)
    assert [v.name for v in tf.global_variables()] == ["Variable:0", "global_step:0"] + slots
    s = sess_factory(mode)
    s.run(tf.global_variables_initializer())
    for _ in range(3):
        s.run(op)
    np.testing.assert_allclose(s.run(w), expected, rtol=2e-5, atol=2e-6)


def test_bad_accumulator_values():
    with pytest.raises(ValueError, match="initial_accumulator_value"):
        tf.train.ProximalAdagradOptimizer(0.1, initial_accumulator_value=0.0)
    with pytest.raises(ValueError, match="initial_gradient_squared_accumulator_value"):
        tf.train.AdagradDAOptimizer(0.1, tf.train.get_or_create_global_step(),
                                    initial_gradient_squared_accumulator_value=-1.0)


# TF1's values at steps 0, 5, 10, 17, 35, 99, 150
STEPS = [0, 5, 10, 17, 35, 99, 150]
TF1_SCHEDULES = {
    "linear_cosine": ([0.1001, 0.09451520, 0.08789754, 0.07732080, 0.04735469, 0.00010025, 0.0001],
                      lambda s: tf.train.linear_cosine_decay(0.1, s, 100)),
    "linear_cosine_args": ([0.111, 0.09597339, 0.06645086, 0.02258405, 0.02691186, 0.01195663, 0.011],
                           lambda s: tf.train.linear_cosine_decay(0.1, s, 100, num_periods=2, alpha=0.1, beta=0.01)),
    "sgdr": ([0.1, 0.05, 0.1, 0.07269952, 0.09619398, 0.07093298, 0.1],
             lambda s: tf.train.cosine_decay_restarts(0.1, s, 10)),
    "sgdr_t1": ([0.1, 0.055, 0.055, 0.01927483, 0.015625, 0.01000430, 0.01000275],
                lambda s: tf.train.cosine_decay_restarts(0.1, s, 10, t_mul=1.0, m_mul=0.5, alpha=0.1)),
    "sgdr_t3": ([0.1, 0.05, 0.09, 0.07844152, 0.00602886, 0.02148639, 0.07191747],
                lambda s: tf.train.cosine_decay_restarts(0.1, s, 10, t_mul=3.0, m_mul=0.9)),
}


@pytest.mark.parametrize("name", sorted(TF1_SCHEDULES))
def test_schedules_match_tf1(name):
    expected, make = TF1_SCHEDULES[name]
    step = tf.placeholder(tf.int64, [])
    lr = make(step)
    with tf.Session() as s:
        got = [s.run(lr, {step: st}) for st in STEPS]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)


def test_noisy_linear_cosine_decay_is_noisy_around_linear_cosine():
    step = tf.placeholder(tf.int64, [])
    noisy = tf.train.noisy_linear_cosine_decay(0.1, step, 100, initial_variance=1e-4)
    plain = tf.train.linear_cosine_decay(0.1, step, 100)
    with tf.Session() as s:
        draws = np.array([s.run([noisy, plain], {step: 10}) for _ in range(20)])
    assert np.std(draws[:, 0]) > 0 and np.allclose(draws[:, 0], draws[:, 1], atol=0.01)
    assert tf.train.piecewise_constant_decay is tf.train.piecewise_constant
    with pytest.raises(ValueError, match="global_step is required"):
        tf.train.cosine_decay_restarts(0.1, None, 10)


def test_checkpoint_housekeeping(tmp_path):
    w = tf.Variable([1.0, 2.0], name="w")
    saver = tf.train.Saver()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        first = saver.save(s, str(tmp_path / "model"), global_step=1)
        second = saver.save(s, str(tmp_path / "model"), global_step=2)
    times = tf.train.get_checkpoint_mtimes([first, str(tmp_path / "nothing"), second])
    assert len(times) == 2 and all(t > 0 for t in times)
    assert list(tf.train.checkpoints_iterator(str(tmp_path), timeout=0)) == [second]
    tf.train.remove_checkpoint(first)
    assert not tf.train.checkpoint_exists(first) and not os.path.exists(first + ".meta")
    assert tf.train.checkpoint_exists(second)
    tf.train.remove_checkpoint(str(tmp_path / "nothing"))  # nothing there: no error (TF1)
    del w


def test_warm_start_initializes_from_checkpoint(tmp_path):
    with tf.Graph().as_default():
        tf.Variable([1.0, 2.0], name="dense/kernel")
        tf.Variable([5.0], name="old_bias")
        saver = tf.train.Saver()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            path = saver.save(s, str(tmp_path / "model"))
    with tf.Graph().as_default():
        k = tf.Variable([0.0, 0.0], name="dense/kernel")
        b = tf.Variable([0.0], name="bias")
        other = tf.Variable([7.0], name="other")
        tf.train.warm_start(path, ["dense/", "bias"], var_name_to_prev_var_name={"bias": "old_bias"})
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert s.run(k).tolist() == [1.0, 2.0] and s.run(b).tolist() == [5.0] and s.run(other).tolist() == [7.0]
        with pytest.raises(ValueError, match="vocabularies"):
            tf.train.warm_start(path, var_name_to_vocab_info={"dense/kernel": None})


def test_assert_global_step_and_protos():
    tf.train.assert_global_step(tf.train.get_or_create_global_step())
    with pytest.raises(TypeError, match="integer type"):
        tf.train.assert_global_step(tf.Variable(1.0))
    with pytest.raises(TypeError, match="not scalar"):
        tf.train.assert_global_step(tf.Variable([1, 2]))
    d = tf.train.SaverDef(filename_tensor_name="save/Const:0", max_to_keep=3)
    assert tf.train.SaverDef.FromString(d.SerializeToString()).max_to_keep == 3
    job = tf.train.JobDef(name="worker", tasks={0: "localhost:2222"})
    assert tf.train.ClusterDef(job=[job]).job[0].tasks[0] == "localhost:2222"

