"""Mistakes in shapes and dtypes: at build time (TF1's ValueError/TypeError) and at run time
(InvalidArgumentError naming the op and the shapes it got)."""

from __future__ import annotations

import numpy as np

import dflow as tf
from dflow.errors import InvalidArgumentError

from .corpus import case


@case(ValueError, "build")
def matmul_of_mismatched_inner_dims(env):
    a, b = tf.ones([2, 3]), tf.ones([4, 5])
    return (lambda: tf.matmul(a, b, name="mm")), ["mm", "[2,3]", "[4,5]"]


@case(ValueError, "build")
def matmul_of_a_vector(env):
    a, b = tf.ones([3]), tf.ones([3, 2])
    return (lambda: tf.matmul(a, b, name="mm")), ["mm", "rank"]


@case(ValueError, "build")
def add_of_shapes_that_do_not_broadcast(env):
    a, b = tf.ones([2, 3], name="a"), tf.ones([4, 5], name="b")
    return (lambda: tf.add(a, b, name="sum")), ["sum", "a:0", "b:0"]


@case(TypeError, "build")
def add_of_float_and_int(env):
    a, b = tf.ones([2], tf.float32, name="f"), tf.ones([2], tf.int32, name="i")
    return (lambda: tf.add(a, b, name="mixed")), ["mixed", "int32", "float32"]


@case(TypeError, "build")
def multiply_of_string_and_float(env):
    s, f = tf.constant(["a"], name="s"), tf.constant([1.0], name="f")
    return (lambda: tf.multiply(s, f, name="prod")), ["prod"]


@case(ValueError, "build")
def reshape_to_a_different_size(env):
    a = tf.ones([2, 3], name="a")
    return (lambda: tf.reshape(a, [7], name="rs")), ["rs", "6", "7"]


@case(ValueError, "build")
def reshape_with_two_unknown_dims(env):
    a = tf.ones([2, 3], name="a")
    return (lambda: tf.reshape(a, [-1, -1], name="rs")), ["rs"]


@case(ValueError, "build")
def concat_of_different_ranks(env):
    a, b = tf.ones([2, 3]), tf.ones([2])
    return (lambda: tf.concat([a, b], 0, name="cat")), ["cat"]


@case(ValueError, "build")
def concat_of_mismatched_dims(env):
    a, b = tf.ones([2, 3]), tf.ones([2, 4])
    return (lambda: tf.concat([a, b], 0, name="cat")), ["cat"]


@case(ValueError, "build")
def concat_axis_out_of_range(env):
    a, b = tf.ones([2, 3]), tf.ones([2, 3])
    return (lambda: tf.concat([a, b], 5, name="cat")), ["cat"]


@case(ValueError, "build")
def reduce_sum_axis_out_of_range(env):
    a = tf.ones([2, 3], name="a")
    return (lambda: tf.reduce_sum(a, axis=4, name="total")), ["total"]


@case(ValueError, "build")
def transpose_with_a_short_perm(env):
    a = tf.ones([2, 3, 4], name="a")
    return (lambda: tf.transpose(a, [1, 0], name="tr")), ["tr"]


@case(ValueError, "build")
def squeeze_of_a_dim_that_is_not_one(env):
    a = tf.ones([2, 3], name="a")
    return (lambda: tf.squeeze(a, [0], name="sq")), ["sq"]


@case(ValueError, "build")
def expand_dims_axis_out_of_range(env):
    a = tf.ones([2, 3], name="a")
    return (lambda: tf.expand_dims(a, 5, name="ed")), ["ed"]


@case(ValueError, "build")
def tile_with_the_wrong_number_of_multiples(env):
    a = tf.ones([2, 3], name="a")
    return (lambda: tf.tile(a, [2, 2, 2], name="tl")), ["tl"]


@case(ValueError, "build")
def stack_of_mismatched_shapes(env):
    a, b = tf.ones([2]), tf.ones([3])
    return (lambda: tf.stack([a, b], name="st")), ["st"]


@case(ValueError, "build")
def split_into_unequal_parts(env):
    a = tf.ones([5, 2], name="a")
    return (lambda: tf.split(a, 2, name="sp")), ["sp"]


@case(ValueError, "build")
def conv2d_with_mismatched_channels(env):
    images, kernel = tf.ones([1, 8, 8, 3]), tf.ones([3, 3, 4, 2])
    return (lambda: tf.nn.conv2d(images, kernel, [1, 1, 1, 1], "SAME", name="conv")), ["conv"]


@case(ValueError, "build")
def cross_entropy_of_mismatched_shapes(env):
    labels, logits = tf.ones([4, 3]), tf.ones([4, 5])
    return (lambda: tf.nn.softmax_cross_entropy_with_logits_v2(
        labels=labels, logits=logits, name="xent")), ["xent"]


@case(ValueError, "build")
def set_shape_that_contradicts(env):
    a = tf.placeholder(tf.float32, [None, 3], name="a")
    return (lambda: a.set_shape([2, 4])), ["3", "4"]


@case(TypeError, "build")
def placeholder_of_an_unknown_dtype(env):
    return (lambda: tf.placeholder("float128x", [2], name="p")), ["float128x"]


@case(TypeError, "build")
def cast_to_an_unknown_dtype(env):
    a = tf.ones([2])
    return (lambda: tf.cast(a, "no_such_type", name="c")), ["no_such_type"]


@case(ValueError, "build")
def zeros_of_a_negative_dim(env):
    return (lambda: tf.zeros([2, -3], name="z")), ["-3"]


@case(TypeError, "build")
def constant_of_a_value_it_cannot_hold(env):
    return (lambda: tf.constant([1.5, 2.0], dtype=tf.int32, name="c")), ["int32"]


@case(TypeError, "build")
def one_hot_of_float_indices(env):
    idx = tf.constant([0.0, 1.0])
    return (lambda: tf.one_hot(idx, 3, name="oh")), ["oh"]


@case(ValueError, "build")
def boolean_mask_of_the_wrong_shape(env):
    a, m = tf.ones([4, 2]), tf.constant([True, False, True])
    return (lambda: tf.boolean_mask(a, m, name="bm")), ["bm"]


@case(ValueError, "build")
def where_of_mismatched_shapes(env):
    c, a, b = tf.constant([True, False]), tf.ones([3]), tf.ones([3])
    return (lambda: tf.where(c, a, b, name="wh")), ["wh"]


@case(TypeError, "build")
def gather_with_float_indices(env):
    a, idx = tf.ones([4]), tf.constant([0.5])
    return (lambda: tf.gather(a, idx, name="ga")), ["ga"]


# ---- run time: shapes only known when the graph runs -------------------------------------------

def _two(shape_a=(None, None), shape_b=(None, None)):
    return tf.placeholder(tf.float32, list(shape_a), name="a"), tf.placeholder(tf.float32, list(shape_b), name="b")


@case(InvalidArgumentError)
def matmul_fed_mismatched_inner_dims(env):
    a, b = _two()
    mm = tf.matmul(a, b, name="mm")
    return lambda: env.sess.run(mm, {a: np.ones((2, 3)), b: np.ones((4, 5))}), ["mm", "[2,3]", "[4,5]"]


@case(InvalidArgumentError)
def add_fed_shapes_that_do_not_broadcast(env):
    a, b = _two()
    s = tf.add(a, b, name="sum")
    return lambda: env.sess.run(s, {a: np.ones((2, 3)), b: np.ones((4, 5))}), ["sum", "(2, 3)", "(4, 5)"]


@case(InvalidArgumentError)
def reshape_fed_a_different_size(env):
    a, _ = _two()
    rs = tf.reshape(a, [7], name="rs")
    return lambda: env.sess.run(rs, {a: np.ones((2, 3))}), ["rs", "[2,3]"]


@case(InvalidArgumentError)
def concat_fed_mismatched_dims(env):
    a, b = _two()
    cat = tf.concat([a, b], 0, name="cat")
    return lambda: env.sess.run(cat, {a: np.ones((2, 3)), b: np.ones((2, 4))}), ["cat"]


@case(InvalidArgumentError)
def gather_of_an_index_out_of_range(env):
    idx = tf.placeholder(tf.int32, [None], name="idx")
    g = tf.gather(tf.constant([1.0, 2.0, 3.0]), idx, name="ga")
    return lambda: env.sess.run(g, {idx: [0, 5]}), ["ga", "5"]


@case(InvalidArgumentError)
def slice_past_the_end(env):
    a, _ = _two()
    sl = tf.slice(a, [0, 0], [3, 3], name="sl")
    return lambda: env.sess.run(sl, {a: np.ones((2, 2))}), ["sl"]


@case(InvalidArgumentError)
def one_hot_depth_fed_negative(env):
    d = tf.placeholder(tf.int32, [], name="depth")
    oh = tf.one_hot([0, 1], d, name="oh")
    return lambda: env.sess.run(oh, {d: -1}), ["oh"]


@case(InvalidArgumentError)
def range_with_a_zero_delta(env):
    d = tf.placeholder(tf.int32, [], name="delta")
    r = tf.range(0, 5, d, name="rg")
    return lambda: env.sess.run(r, {d: 0}), ["rg"]


@case(InvalidArgumentError)
def check_numerics_of_a_nan(env):
    a, _ = _two((None,))
    c = tf.check_numerics(tf.log(a), "log of the inputs", name="checked")
    return lambda: env.sess.run(c, {a: [-1.0, 2.0]}), ["checked", "Tensor had NaN values"]


@case(InvalidArgumentError)
def assert_that_fails(env):
    a, _ = _two((None,))
    check = tf.Assert(tf.reduce_all(a > 0), [a], name="positive")
    with tf.control_dependencies([check]):
        out = tf.identity(a, name="guarded")
    return lambda: env.sess.run(out, {a: [1.0, -1.0]}), ["positive"]


@case(InvalidArgumentError)
def assert_equal_that_fails(env):
    a, b = _two((None,), (None,))
    check = tf.assert_equal(a, b, name="same")
    return lambda: env.sess.run(check, {a: [1.0], b: [2.0]}), ["same"]


@case(InvalidArgumentError)
def string_to_number_of_a_word(env):
    s = tf.placeholder(tf.string, [None], name="words")
    n = tf.string_to_number(s, name="parsed")
    return lambda: env.sess.run(n, {s: ["1.5", "abc"]}), ["parsed", "abc"]


@case(InvalidArgumentError)
def scatter_update_index_out_of_range(env):
    v = tf.Variable(np.zeros(3, np.float32), name="scattered")
    up = tf.scatter_update(v, [7], [1.0], name="scatter")
    env.sess.run(v.initializer)
    return lambda: env.sess.run(up), ["scatter"]


@case(InvalidArgumentError)
def unsorted_segment_sum_id_out_of_range(env):
    ids = tf.placeholder(tf.int32, [None], name="ids")
    s = tf.unsorted_segment_sum(tf.ones([3]), ids, 2, name="segsum")
    return lambda: env.sess.run(s, {ids: [0, 1, 4]}), ["segsum"]


@case(InvalidArgumentError)
def split_sizes_that_do_not_add_up(env):
    a, _ = _two((None,))
    sizes = tf.placeholder(tf.int32, [2], name="sizes")
    parts = tf.split(a, sizes, name="parts")
    return lambda: env.sess.run(parts, {a: np.ones(5), sizes: [2, 2]}), ["parts"]


@case(ValueError, "build")
def concat_of_no_tensors(env):
    return (lambda: tf.concat([], 0, name="cat")), ["ConcatV2", "length 0"]


@case(InvalidArgumentError)
def empty_shape_whose_other_dims_overflow(env):
    # TF1 makes this empty tensor; numpy and dask cannot represent it (numpy's "array is too big"
    # came from inside the Fill's kernel): refused at plan time, saying why (#29)
    z = tf.reduce_sum(tf.zeros([2**40, 2**30, 0], name="empty_huge"), name="empty_sum")
    return lambda: env.sess.run(z), ["empty_huge", "no elements", "2**63 - 1"]
