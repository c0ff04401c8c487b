"""Mistakes in feeds and fetches."""

from __future__ import annotations

import dask.array as da
import numpy as np

import dflow as tf
from dflow.errors import InvalidArgumentError

from .corpus import case


def _x(shape=(None,), dtype=None):
    x = tf.placeholder(dtype or tf.float32, list(shape), name="x")
    return x, tf.identity(x * 2 if (dtype or tf.float32) != tf.string else x, name="y")


@case(InvalidArgumentError)
def feed_of_the_wrong_rank(env):
    x, y = _x()
    return lambda: env.sess.run(y, {x: np.ones((2, 2), np.float32)}), [x.name]


@case(InvalidArgumentError)
def feed_of_the_wrong_static_dim(env):
    x, y = _x((None, 3))
    return lambda: env.sess.run(y, {x: np.ones((2, 4), np.float32)}), [x.name, "(2, 4)"]


@case(InvalidArgumentError)
def feed_of_a_scalar_for_a_vector(env):
    x, y = _x((3,))
    return lambda: env.sess.run(y, {x: 1.0}), [x.name]


@case(InvalidArgumentError)
def feed_of_a_string_for_a_float(env):
    x, y = _x()
    return lambda: env.sess.run(y, {x: ["a", "b"]}), [x.name]


@case(TypeError)
def feed_of_a_python_int_too_large_for_int32(env):
    # TF1's TypeError: numpy would wrap 2**40 to 0 silently
    x, y = _x((), tf.int32)
    return lambda: env.sess.run(y, {x: 2 ** 40}), ["Type of feed value 1099511627776"]


@case(InvalidArgumentError)
def feed_of_a_float_for_a_string(env):
    x, y = _x((None,), tf.string)
    return lambda: env.sess.run(y, {x: np.ones(2)}), [x.name]


@case(InvalidArgumentError)
def feed_of_a_ragged_list(env):
    x, y = _x((None, None))
    return lambda: env.sess.run(y, {x: [[1.0], [1.0, 2.0]]}), [x.name]


@case(InvalidArgumentError)
def feed_of_none(env):
    x, y = _x()
    return lambda: env.sess.run(y, {x: None}), [x.name]


@case(InvalidArgumentError)
def feed_of_a_dict_value(env):
    x, y = _x()
    return lambda: env.sess.run(y, {x: {"a": 1.0}}), [x.name]


@case(InvalidArgumentError)
def feed_of_a_dask_array_of_the_wrong_shape(env):
    x, y = _x((None, 3))
    return lambda: env.sess.run(y, {x: da.ones((4, 2), chunks=2, dtype=np.float32)}), [x.name]


@case(InvalidArgumentError)
def feed_of_a_dask_array_of_unknown_chunk_sizes(env):
    x, y = _x()
    d = da.arange(6, chunks=3).astype(np.float32)
    return lambda: env.sess.run(y, {x: d[d > 2]}), [x.name, "compute_chunk_sizes"]


@case(InvalidArgumentError)
def feed_of_a_float_dask_array_for_an_int(env):
    x, y = _x((None,), tf.int32)
    return lambda: env.sess.run(y, {x: da.ones(4, chunks=2)}), [x.name]


@case(TypeError)
def feed_key_that_names_no_tensor(env):
    _, y = _x()
    return lambda: env.sess.run(y, {"no_such_tensor:0": [1.0]}), ["no_such_tensor:0"]


@case(TypeError)
def feed_key_that_is_an_operation(env):
    x, y = _x()
    return lambda: env.sess.run(y, {y.op: [1.0]}), [y.op.name]


@case(TypeError)
def feed_key_of_another_graph(env):
    _, y = _x()
    with tf.Graph().as_default():
        other = tf.placeholder(tf.float32, [None], name="elsewhere")
    return lambda: env.sess.run(y, {other: [1.0]}), ["elsewhere:0"]


@case(TypeError)
def feed_key_that_is_a_number(env):
    _, y = _x()
    return lambda: env.sess.run(y, {3: [1.0]}), ["3"]


@case(TypeError)
def feed_dict_given_as_a_list(env):
    x, y = _x()
    return lambda: env.sess.run(y, [(x, [1.0])]), ["feed_dict", "list"]


@case(TypeError)
def feed_dict_given_as_a_tuple(env):
    x, y = _x()
    return lambda: env.sess.run(y, ((x, [1.0]),)), ["feed_dict", "tuple"]


@case(InvalidArgumentError)
def placeholder_not_fed(env):
    x, y = _x()
    return lambda: env.sess.run(y), [x.name]


@case(InvalidArgumentError)
def second_placeholder_not_fed(env):
    a = tf.placeholder(tf.float32, [2], name="a")
    b = tf.placeholder(tf.float32, [2], name="b")
    total = tf.add(a, b, name="total")
    return lambda: env.sess.run(total, {a: [1.0, 2.0]}), [b.name]


@case(InvalidArgumentError)
def placeholder_with_default_fed_the_wrong_shape(env):
    p = tf.placeholder_with_default(tf.zeros([2, 2]), [2, 2], name="pwd")
    y = p + 1.0
    return lambda: env.sess.run(y, {p: np.ones((3, 3), np.float32)}), [p.name]


@case(TypeError)
def fetch_of_none(env):
    return lambda: env.sess.run(None), ["None"]


@case(TypeError)
def fetch_of_a_number(env):
    return lambda: env.sess.run(3), ["3"]


@case(ValueError)
def fetch_of_a_name_that_does_not_exist(env):
    return lambda: env.sess.run("no_such_op:0"), ["no_such_op:0"]


@case(ValueError)
def fetch_of_a_tensor_of_another_graph(env):
    with tf.Graph().as_default():
        z = tf.constant(1.0, name="foreign")
    return lambda: env.sess.run(z), ["foreign:0"]


@case(ValueError)
def fetch_of_an_op_of_another_graph(env):
    with tf.Graph().as_default():
        z = tf.no_op(name="foreign_op")
    return lambda: env.sess.run(z), ["foreign_op"]


@case(ValueError)
def fetch_in_a_dict_of_another_graph(env):
    x, y = _x()
    with tf.Graph().as_default():
        z = tf.constant(1.0, name="foreign_in_dict")
    return lambda: env.sess.run({"a": y, "b": z}, {x: [1.0]}), ["foreign_in_dict:0"]


@case(TypeError)
def run_options_of_the_wrong_type(env):
    x, y = _x()
    return lambda: env.sess.run(y, {x: [1.0]}, options={"timeout_in_ms": 5}), ["RunOptions"]


@case(InvalidArgumentError)
def make_callable_with_too_few_arguments(env):
    x, y = _x()
    call = env.sess.make_callable(y, [x])
    return lambda: call(), ["1", "0"]


@case(InvalidArgumentError)
def feed_of_a_negative_shape_to_zeros(env):
    n = tf.placeholder(tf.int32, [], name="n")
    z = tf.zeros(tf.stack([n, 2]), name="zeros_n")
    return lambda: env.sess.run(z, {n: -3}), ["zeros_n"]


@case(TypeError)
def fetch_of_a_set(env):
    x, y = _x()
    return lambda: env.sess.run({y}, {x: [1.0]}), ["set"]
