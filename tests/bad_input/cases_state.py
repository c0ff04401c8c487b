"""Mistakes with variables, scopes, savers and optimizers' state."""

from __future__ import annotations

import numpy as np

import dflow as tf
from dflow.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError

from .corpus import case


@case(FailedPreconditionError)
def read_of_an_uninitialized_variable(env):
    v = tf.Variable(1.0, name="never_initialized")
    y = v + 1.0
    return lambda: env.sess.run(y), ["never_initialized"]


@case(FailedPreconditionError)
def training_step_before_initializing(env):
    w = tf.Variable(np.ones(3, np.float32), name="weights_uninit")
    loss = tf.reduce_sum(w * w)
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=[w])
    return lambda: env.sess.run(step), ["weights_uninit"]


@case(FailedPreconditionError)
def initializer_reading_an_uninitialized_variable(env):
    a = tf.Variable(1.0, name="first_var")
    b = tf.Variable(a + 1.0, name="second_var")  # TF1: use a.initialized_value()
    return lambda: env.sess.run(b.initializer), ["first_var"]


@case(ValueError, "build")
def assign_of_the_wrong_shape(env):
    v = tf.Variable([1.0, 2.0], name="pair")
    return lambda: tf.assign(v, [1.0, 2.0, 3.0]), ["pair", "(3,)", "(2,)"]


@case(TypeError, "build")
def assign_of_the_wrong_dtype(env):
    v = tf.Variable([1.0, 2.0], name="pair")
    return lambda: tf.assign(v, tf.constant([1, 2])), ["int32", "float32"]


@case(InvalidArgumentError)
def assign_fed_the_wrong_shape(env):
    v = tf.Variable([1.0, 2.0], name="pair_fed")
    p = tf.placeholder(tf.float32, None, name="new_value")
    a = tf.assign(v, p, name="assign_pair")
    env.sess.run(v.initializer)
    return lambda: env.sess.run(a, {p: [1.0, 2.0, 3.0]}), ["assign_pair"]


@case(TypeError, "build")
def assign_add_to_a_constant(env):
    c = tf.constant(1.0, name="not_a_variable")
    return lambda: tf.assign_add(c, 1.0), ["not_a_variable"]


@case(ValueError, "build")
def get_variable_twice_in_one_scope(env):
    with tf.variable_scope("dup_scope"):
        tf.get_variable("w", [1])

    def act():
        with tf.variable_scope("dup_scope"):
            tf.get_variable("w", [1])
    return act, ["dup_scope/w", "already exists"]


@case(ValueError, "build")
def reuse_of_a_variable_that_does_not_exist(env):
    def act():
        with tf.variable_scope("reuse_scope", reuse=True):
            tf.get_variable("missing", [1])
    return act, ["reuse_scope/missing", "does not exist"]


@case(ValueError, "build")
def reuse_with_another_shape(env):
    with tf.variable_scope("shape_scope"):
        tf.get_variable("w", [1])

    def act():
        with tf.variable_scope("shape_scope", reuse=True):
            tf.get_variable("w", [2])
    return act, ["w", "(2,)", "(1,)"]


@case(ValueError, "build")
def reuse_with_another_dtype(env):
    with tf.variable_scope("dtype_scope"):
        tf.get_variable("w", [1])

    def act():
        with tf.variable_scope("dtype_scope", reuse=True):
            tf.get_variable("w", [1], dtype=tf.int32)
    return act, ["w", "int32"]


@case(ValueError, "build")
def get_variable_without_a_shape(env):
    return lambda: tf.get_variable("shapeless", initializer=tf.zeros_initializer()), ["shapeless"]


@case(ValueError, "build")
def variable_without_an_initial_value(env):
    return lambda: tf.Variable(None, name="nothing"), ["initial_value"]


@case(ValueError)
def load_of_the_wrong_shape(env):
    v = tf.Variable([1.0, 2.0], name="loaded")
    env.sess.run(v.initializer)
    return lambda: v.load([1.0, 2.0, 3.0], env.sess), ["loaded"]


@case(InvalidArgumentError)
def two_unordered_assigns_to_one_variable(env):
    v = tf.Variable(0.0, name="raced")
    both = tf.group(tf.assign(v, 1.0, name="first_write"), tf.assign(v, 2.0, name="second_write"))
    env.sess.run(v.initializer)
    return lambda: env.sess.run(both), ["raced", "first_write", "second_write"]


# ---- savers ------------------------------------------------------------------------------------


@case(ValueError, "build")
def saver_with_no_variables(env):
    g = tf.Graph()

    def act():
        with g.as_default():
            tf.train.Saver()
    return act, ["No variables to save"]


@case(ValueError, "build")
def saver_with_two_variables_of_one_name(env):
    a = tf.Variable(1.0, name="twin")
    return lambda: tf.train.Saver([a, a]), ["twin"]


@case(NotFoundError)
def restore_of_a_missing_checkpoint(env):
    v = tf.Variable(1.0, name="restored")
    saver = tf.train.Saver([v])
    path = str(env.tmp / "no_such_model")
    return lambda: saver.restore(env.sess, path), ["no_such_model"]


@case(InvalidArgumentError)
def restore_into_a_variable_of_another_shape(env):
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.ones(3, np.float32), name="weights")
        saver = tf.train.Saver()
    with env.session(g) as s:
        s.run(v.initializer)
        prefix = saver.save(s, str(env.tmp / "model"))
    g2 = tf.Graph()
    with g2.as_default():
        v2 = tf.Variable(np.ones(4, np.float32), name="weights")
        saver2 = tf.train.Saver()
    s2 = env.session(g2)
    s2.run(v2.initializer)
    return lambda: saver2.restore(s2, prefix), ["weights", "3", "4"]


@case(NotFoundError)
def restore_of_a_variable_the_checkpoint_lacks(env):
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(1.0, name="saved_one")
        saver = tf.train.Saver()
    with env.session(g) as s:
        s.run(v.initializer)
        prefix = saver.save(s, str(env.tmp / "model"))
    g2 = tf.Graph()
    with g2.as_default():
        tf.Variable(1.0, name="saved_one")
        tf.Variable(2.0, name="added_later")
        saver2 = tf.train.Saver()
    s2 = env.session(g2)
    return lambda: saver2.restore(s2, prefix), ["added_later"]


@case(InvalidArgumentError)
def restore_into_a_variable_of_another_dtype(env):
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.ones(3, np.float32), name="typed")
        saver = tf.train.Saver()
    with env.session(g) as s:
        s.run(v.initializer)
        prefix = saver.save(s, str(env.tmp / "model"))
    g2 = tf.Graph()
    with g2.as_default():
        tf.Variable(np.ones(3, np.int32), name="typed")
        saver2 = tf.train.Saver()
    s2 = env.session(g2)
    return lambda: saver2.restore(s2, prefix), ["typed"]


@case(FailedPreconditionError)
def save_of_an_uninitialized_variable(env):
    g = tf.Graph()
    with g.as_default():
        tf.Variable(1.0, name="unsaved")
        saver = tf.train.Saver()
    s = env.session(g)
    return lambda: saver.save(s, str(env.tmp / "model")), ["unsaved"]


@case(ValueError, "build")
def restore_of_none(env):
    v = tf.Variable(1.0, name="restored_none")
    saver = tf.train.Saver([v])
    return lambda: saver.restore(None, None), ["save_path"]


@case(tf.errors.DataLossError, "build")
def checkpoint_whose_table_of_contents_is_truncated(env):
    """#29: a dflow checkpoint whose group metadata (zarr.json) was truncated is DataLossError naming
    the file, not 'No complete checkpoint' (NotFound) as if it were never written."""
    import os

    v = tf.Variable(np.ones(3, np.float32), name="saved_weights")
    with tf.Session(graph=env.graph) as sess:
        sess.run(v.initializer)
        prefix = tf.train.Saver().save(sess, str(env.tmp / "model.ckpt"))
    meta = os.path.join(os.path.realpath(prefix), "zarr.json")
    with open(meta, "rb") as f:
        data = f.read()
    with open(meta, "wb") as f:
        f.write(data[: len(data) // 2])
    return lambda: tf.train.list_variables(prefix), ["zarr.json", "not valid JSON"]
