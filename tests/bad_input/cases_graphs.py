"""Mistakes with graphs, sessions, control flow and gradients."""

from __future__ import annotations

import dflow as tf
from dflow.errors import InvalidArgumentError

from .corpus import case


@case(ValueError, "build")
def op_mixing_tensors_of_two_graphs(env):
    a = tf.constant(1.0, name="here")
    with tf.Graph().as_default():
        b = tf.constant(2.0, name="there")
    return lambda: tf.add(a, b, name="mixed"), ["there:0"]


@case(RuntimeError, "build")
def adding_an_op_to_a_finalized_graph(env):
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0, name="first")
    g.finalize()

    def act():
        with g.as_default():
            tf.constant(2.0, name="second")
    return act, ["finalized"]


@case(ValueError, "build")
def control_dependency_on_another_graph(env):
    with tf.Graph().as_default():
        other = tf.no_op(name="foreign_dep")

    def act():
        with tf.control_dependencies([other]):
            tf.constant(1.0, name="dependent")
    return act, ["foreign_dep"]


@case(KeyError, "build")
def get_tensor_by_name_that_does_not_exist(env):
    return lambda: tf.get_default_graph().get_tensor_by_name("missing_tensor:0"), ["missing_tensor"]


@case(ValueError, "build")
def get_tensor_by_name_without_an_output_index(env):
    tf.constant(1.0, name="named")
    return lambda: tf.get_default_graph().get_tensor_by_name("named"), ["named"]


@case(ValueError, "build")
def eval_without_a_default_session(env):
    c = tf.constant(1.0, name="lonely")
    return lambda: c.eval(), ["default session"]


@case(ValueError, "build")
def eval_in_a_session_of_another_graph(env):
    c = tf.constant(1.0, name="lonely")
    other = tf.Graph()
    s = env.session(other, scheduler="sync")
    return lambda: c.eval(session=s), ["graph"]


@case(RuntimeError)
def run_after_close(env):
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(1.0, name="closed_c")
    s = env.session(g)
    s.close()
    return lambda: s.run(c), ["closed Session"]


@case(RuntimeError)
def run_after_the_with_block(env):
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(1.0, name="closed_c")
    with env.session(g) as s:
        pass
    return lambda: s.run(c), ["closed Session"]


@case(RuntimeError)
def make_callable_run_after_close(env):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None], name="cx")
        y = x + 1.0
    s = env.session(g)
    call = s.make_callable(y, [x])
    s.close()
    return lambda: call([1.0]), ["closed Session"]


@case(InvalidArgumentError, "build")
def session_of_an_unknown_scheduler(env):
    return lambda: tf.Session(scheduler="quantum"), ["quantum"]


# ---- control flow ------------------------------------------------------------------------------


@case(ValueError, "build")
def cond_branches_of_different_structure(env):
    p = tf.placeholder(tf.bool, [], name="p")
    return lambda: tf.cond(p, lambda: (tf.constant(1.0), tf.constant(2.0)), lambda: tf.constant(1.0),
                           name="branchy"), ["branchy"]


@case(TypeError, "build")
def cond_branches_of_different_dtypes(env):
    p = tf.placeholder(tf.bool, [], name="p")
    return lambda: tf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(1), name="branchy"), \
        ["float32", "int32"]


@case(TypeError, "build")
def cond_branch_that_is_not_callable(env):
    p = tf.placeholder(tf.bool, [], name="p")
    return lambda: tf.cond(p, tf.constant(1.0), lambda: tf.constant(1.0), name="branchy"), ["true_fn"]


@case(ValueError, "build")
def while_loop_body_returning_the_wrong_number_of_values(env):
    i = tf.constant(0, name="i")
    return lambda: tf.while_loop(lambda i: i < 3, lambda i: (i + 1, i), [i], name="loop"), ["2 values", "1 loop"]


@case(ValueError, "build")
def while_loop_shape_that_changes(env):
    x = tf.ones([2], name="grows")
    return lambda: tf.while_loop(lambda x: tf.size(x) < 8, lambda x: tf.concat([x, x], 0), [x], name="loop"), \
        ["shape"]


@case(InvalidArgumentError)
def cond_predicate_fed_a_vector(env):
    p = tf.placeholder(tf.bool, None, name="pred")
    out = tf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(2.0), name="choice")
    return lambda: env.sess.run(out, {p: [True, False]}), ["pred"]


@case(InvalidArgumentError)
def while_loop_body_that_fails(env):
    n = tf.placeholder(tf.int32, [], name="n")
    out = tf.while_loop(lambda i: i < n, lambda i: i + tf.gather([1, 1], i, name="step_gather"), [tf.constant(0)],
                        name="walk")
    return lambda: env.sess.run(out, {n: 5}), ["step_gather"]


# ---- gradients and optimizers ------------------------------------------------------------------


@case(ValueError, "build")
def minimize_with_no_variables(env):
    g = tf.Graph()
    with g.as_default():
        loss = tf.constant(1.0, name="constant_loss")

    def act():
        with g.as_default():
            tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return act, ["No variables to optimize"]


@case(ValueError, "build")
def minimize_a_loss_that_does_not_reach_the_variables(env):
    v = tf.Variable([1.0, 2.0], name="unused_weights")
    loss = tf.reduce_sum(tf.cast(tf.argmax(v), tf.float32), name="argmax_loss")
    return lambda: tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=[v]), \
        ["No gradients provided", "unused_weights"]


@case(ValueError, "build")
def apply_gradients_of_an_empty_list(env):
    return lambda: tf.train.GradientDescentOptimizer(0.1).apply_gradients([]), ["No variables provided"]


@case(TypeError, "build")
def gradients_of_a_string_tensor(env):
    s = tf.constant(["a"], name="text")
    x = tf.constant(1.0, name="xx")
    return lambda: tf.gradients(s, x), ["text:0"]


@case(ValueError, "build")
def minimize_a_loss_of_an_integer_dtype(env):
    v = tf.Variable(1, name="int_weight")
    loss = tf.identity(v * 2, name="int_loss")
    return lambda: tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=[v]), ["int"]
