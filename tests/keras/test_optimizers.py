"""tf.keras.optimizers: three steps of each rule against numpy (TF 1.15's OptimizerV2 rules),
hyperparameters as variables, slot names, clipping, constraints, config and lookup."""

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe
from dflow.keras import backend as K
from dflow.keras import optimizers

X0 = np.array([1.0, -2.0, 0.5], np.float32)
SCALE = np.array([1.0, 2.0, 3.0], np.float32)


def _grad(x):  # loss = sum(scale * x**2)
    return 2 * SCALE * x


def _numpy_steps(rule, steps=3, **kw):
    x, state = X0.astype(np.float64), {}
    for t in range(1, steps + 1):
        x = rule(x, _grad(x), t, state, **kw)
    return x


def sgd(x, g, t, s, lr=0.01, momentum=0.0, nesterov=False, decay=0.0):
    lr = lr / (1 + decay * (t - 1))
    if not momentum:
        return x - lr * g
    s["m"] = momentum * s.get("m", 0) - lr * g
    return x + (momentum * s["m"] - lr * g if nesterov else s["m"])


def rmsprop(x, g, t, s, lr=0.001, rho=0.9, eps=1e-7, momentum=0.0, centered=False):
    s["rms"] = rho * s.get("rms", 0) + (1 - rho) * g * g
    denom = s["rms"]
    if centered:
        s["mg"] = rho * s.get("mg", 0) + (1 - rho) * g
        denom = denom - s["mg"] ** 2
    if momentum:
        s["mom"] = momentum * s.get("mom", 0) + lr * g / np.sqrt(denom + eps)
        return x - s["mom"]
    return x - lr * g / (np.sqrt(denom) + eps)


def adagrad(x, g, t, s, lr=0.001, init=0.1, eps=1e-7):
    s["acc"] = s.get("acc", init) + g * g
    return x - lr * g / (np.sqrt(s["acc"]) + eps)


def adadelta(x, g, t, s, lr=0.001, rho=0.95, eps=1e-7):
    s["ag"] = rho * s.get("ag", 0) + (1 - rho) * g * g
    update = np.sqrt(s.get("av", 0) + eps) / np.sqrt(s["ag"] + eps) * g
    s["av"] = rho * s.get("av", 0) + (1 - rho) * update ** 2
    return x - lr * update


def adam(x, g, t, s, lr=0.001, b1=0.9, b2=0.999, eps=1e-7, amsgrad=False):
    s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
    s["v"] = b2 * s.get("v", 0) + (1 - b2) * g * g
    v = s["v"]
    if amsgrad:
        v = s["vhat"] = np.maximum(s.get("vhat", 0), s["v"])
    return x - lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * s["m"] / (np.sqrt(v) + eps)


def adamax(x, g, t, s, lr=0.001, b1=0.9, b2=0.999, eps=1e-7):
    s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
    s["u"] = np.maximum(b2 * s.get("u", 0), np.abs(g))
    return x - lr / (1 - b1 ** t) * s["m"] / (s["u"] + eps)


def nadam(x, g, t, s, lr=0.001, b1=0.9, b2=0.999, eps=1e-7, decay=0.004):
    mu_t = b1 * (1 - 0.5 * 0.96 ** (decay * t))
    mu_next = b1 * (1 - 0.5 * 0.96 ** (decay * (t + 1)))
    sched_new = s.get("cache", 1.0) * mu_t
    s["cache"] = sched_new
    sched_next = sched_new * mu_next
    s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
    s["v"] = b2 * s.get("v", 0) + (1 - b2) * g * g
    m_bar = (1 - mu_t) * g / (1 - sched_new) + mu_next * s["m"] / (1 - sched_next)
    return x - lr * m_bar / (np.sqrt(s["v"] / (1 - b2 ** t)) + eps)


CASES = [
    ("sgd", optimizers.SGD, {}, sgd, {}),
    ("sgd_momentum_decay", optimizers.SGD, dict(lr=0.05, momentum=0.9, decay=0.1), sgd,
     dict(lr=0.05, momentum=0.9, decay=0.1)),
    ("sgd_nesterov", optimizers.SGD, dict(learning_rate=0.05, momentum=0.5, nesterov=True), sgd,
     dict(lr=0.05, momentum=0.5, nesterov=True)),
    ("rmsprop", optimizers.RMSprop, dict(lr=0.01), rmsprop, dict(lr=0.01)),
    ("rmsprop_centered_momentum", optimizers.RMSprop, dict(lr=0.01, momentum=0.5, centered=True), rmsprop,
     dict(lr=0.01, momentum=0.5, centered=True)),
    ("adagrad", optimizers.Adagrad, dict(lr=0.1), adagrad, dict(lr=0.1)),
    ("adadelta", optimizers.Adadelta, dict(lr=1.0), adadelta, dict(lr=1.0)),
    ("adam", optimizers.Adam, dict(lr=0.1), adam, dict(lr=0.1)),
    ("adam_amsgrad", optimizers.Adam, dict(lr=0.1, amsgrad=True), adam, dict(lr=0.1, amsgrad=True)),
    ("adamax", optimizers.Adamax, dict(lr=0.1), adamax, dict(lr=0.1)),
    ("nadam", optimizers.Nadam, dict(lr=0.1), nadam, dict(lr=0.1)),
]


@pytest.mark.parametrize("name,cls,kwargs,rule,rule_kwargs", CASES, ids=[c[0] for c in CASES])
def test_three_steps_match_numpy(name, cls, kwargs, rule, rule_kwargs):
    with tf.Graph().as_default():
        x = tf.Variable(X0, name="dense/kernel")
        opt = cls(**kwargs)
        with tf.name_scope("training"):
            updates = opt.get_updates(tf.reduce_sum(SCALE * x * x), [x])
        sess = K.get_session()
        sess.run(x.initializer)
        for _ in range(3):
            sess.run(updates)
        np.testing.assert_allclose(sess.run(x), _numpy_steps(rule, **rule_kwargs), rtol=1e-5, atol=1e-6)
        assert K.get_value(opt.iterations) == 3


def test_slot_and_hyperparameter_names_follow_tf():
    # TF 1.15 (tf_keras in v1 graph mode): model.fit with Adam gives optimizer.weights
    # ['training/Adam/iter:0', 'training/Adam/dense/kernel/m:0', ..., 'training/Adam/dense/kernel/v:0', ...]
    with tf.Graph().as_default():
        kernel = tf.Variable(np.ones((3, 2), np.float32), name="dense/kernel")
        bias = tf.Variable(np.zeros(2, np.float32), name="dense/bias")
        opt = optimizers.Adam()
        with tf.name_scope("training"):
            opt.get_updates(tf.reduce_sum(kernel) + tf.reduce_sum(bias), [kernel, bias])
        assert [v.name for v in opt.weights] == [
            "training/Adam/iter:0", "training/Adam/dense/kernel/m:0", "training/Adam/dense/bias/m:0",
            "training/Adam/dense/kernel/v:0", "training/Adam/dense/bias/v:0"]
        assert opt.lr.name == "training/Adam/learning_rate:0" and opt.iterations.dtype.base_dtype.name == "int64"
        assert [w.shape for w in opt.get_weights()] == [(), (3, 2), (2,), (3, 2), (2,)]


def test_learning_rate_variable_get_set_and_lr_alias():
    with tf.Graph().as_default():
        opt = optimizers.SGD(lr=0.5)
        assert K.get_value(opt.lr) == pytest.approx(0.5)
        K.set_value(opt.lr, 0.25)
        assert K.get_value(opt.learning_rate) == pytest.approx(0.25)
        opt.lr = 0.125
        assert K.get_value(opt.lr) == pytest.approx(0.125)
        x = tf.Variable(np.float32(1.0))
        step = opt.get_updates(2.0 * x, [x])
        K.get_session().run(x.initializer)
        K.get_session().run(step)
        assert K.get_value(x) == pytest.approx(1.0 - 0.125 * 2.0)
        assert opt.get_config()["learning_rate"] == pytest.approx(0.125)


def test_clipnorm_clipvalue_and_constraint():
    with tf.Graph().as_default():
        x = tf.Variable(np.array([3.0, 4.0], np.float32), constraint=lambda v: tf.clip_by_value(v, -1.0, 2.9))
        by_norm = optimizers.SGD(lr=1.0, clipnorm=1.0).get_gradients(tf.reduce_sum(x * x), [x])[0]
        by_value = optimizers.SGD(lr=1.0, clipvalue=0.5).get_gradients(tf.reduce_sum(x * x), [x])[0]
        step = optimizers.SGD(lr=0.1).get_updates(tf.reduce_sum(x), [x])
        sess = K.get_session()
        sess.run(x.initializer)
        np.testing.assert_allclose(sess.run(by_norm), [0.6, 0.8], rtol=1e-6)
        np.testing.assert_allclose(sess.run(by_value), [0.5, 0.5])
        sess.run(step)
        np.testing.assert_allclose(sess.run(x), [2.9, 2.9])  # [2.9, 3.9] projected after the step


def test_config_round_trip_and_get():
    opt = optimizers.Adam(lr=0.01, beta_1=0.8, amsgrad=True, clipnorm=2.0)
    config = opt.get_config()
    assert config == {"name": "Adam", "clipnorm": 2.0, "learning_rate": 0.01, "decay": 0.0, "beta_1": 0.8,
                      "beta_2": 0.999, "epsilon": 1e-7, "amsgrad": True}
    again = optimizers.deserialize(optimizers.serialize(opt))
    assert isinstance(again, optimizers.Adam) and again.get_config() == config
    # TF 1.15 defaults (tf_keras legacy optimizers' get_config)
    assert optimizers.get("sgd").get_config() == {"name": "SGD", "learning_rate": 0.01, "decay": 0.0,
                                                  "momentum": 0.0, "nesterov": False}
    assert optimizers.get("rmsprop").get_config()["rho"] == 0.9
    assert optimizers.get("adadelta").get_config()["learning_rate"] == 0.001
    assert optimizers.get("nadam").get_config()["decay"] == 0.004
    assert isinstance(optimizers.get({"class_name": "Adagrad", "config": {"lr": 0.2}}), optimizers.Adagrad)
    assert isinstance(optimizers.get(tf.train.GradientDescentOptimizer(0.1)), optimizers.TFOptimizer)


def test_bad_arguments():
    with pytest.raises(ValueError, match="Unknown optimizer: nope"):
        optimizers.get("nope")
    with pytest.raises(ValueError, match="Could not interpret optimizer identifier"):
        optimizers.get(1)
    with pytest.raises(TypeError, match="Unexpected keyword argument passed to optimizer: foo"):
        optimizers.SGD(foo=1)
    with pytest.raises(ValueError, match="clipnorm"):
        optimizers.SGD(clipnorm=-1)
    with tf.Graph().as_default():
        x, y = tf.Variable(1.0), tf.Variable(2.0)
        with pytest.raises(ValueError, match="An operation has `None` for gradient"):
            optimizers.SGD().get_updates(x * 2.0, [x, y])


def test_tf_optimizer_wrapper_steps_and_counts():
    with tf.Graph().as_default():
        x = tf.Variable(np.float32(1.0))
        opt = optimizers.get(tf.train.GradientDescentOptimizer(0.1))
        step = opt.get_updates(x * x, [x])
        sess = K.get_session()
        sess.run(x.initializer)
        sess.run(step)
        assert K.get_value(x) == pytest.approx(0.8) and K.get_value(opt.iterations) == 1


def test_eager_minimize_and_apply_gradients():
    with tfe.eager_mode():
        x = tf.Variable(X0)
        opt = optimizers.Adam(lr=0.1)
        for _ in range(2):
            opt.minimize(lambda: tf.reduce_sum(SCALE * x * x), [x])
        opt.apply_gradients([(tf.constant(_grad(x.numpy())), x)])
        np.testing.assert_allclose(x.numpy(), _numpy_steps(adam, lr=0.1), rtol=1e-5, atol=1e-6)
        assert K.get_value(opt.iterations) == 3
        assert [v.name for v in opt.weights][0] == "Adam/iter:0"
