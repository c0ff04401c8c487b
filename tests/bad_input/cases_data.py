"""Mistakes with Zarr files, tf.data iterators and py_func."""

from __future__ import annotations

import numpy as np
import zarr

import dflow as tf
from dflow.errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    OutOfRangeError,
)

from .corpus import case


def _array(env, name="data.zarr", value=None):
    value = np.arange(12, dtype=np.float32).reshape(4, 3) if value is None else value
    path = str(env.tmp / name)
    z = zarr.open_array(path, mode="w", shape=value.shape, chunks=(2,) + value.shape[1:], dtype=value.dtype)
    z[...] = value
    return path


@case(NotFoundError, "build")
def read_zarr_of_a_missing_path(env):
    path = str(env.tmp / "nothing_here.zarr")
    return lambda: tf.io.read_zarr(path), ["nothing_here.zarr"]


@case(NotFoundError, "build")
def read_zarr_of_a_plain_directory(env):
    (env.tmp / "plain_dir").mkdir()
    (env.tmp / "plain_dir" / "notes.txt").write_text("hello")
    return lambda: tf.io.read_zarr(str(env.tmp / "plain_dir")), ["plain_dir"]


@case(NotFoundError, "build")
def read_zarr_of_a_missing_array_in_a_group(env):
    zarr.open_group(str(env.tmp / "grp.zarr"), mode="w").create_array("present", shape=(2,), dtype="f4")
    return lambda: tf.io.read_zarr(str(env.tmp / "grp.zarr"), "absent"), ["absent"]


@case(InvalidArgumentError)
def zarr_array_fed_to_a_placeholder_of_another_dtype(env):
    path = _array(env, value=np.arange(6, dtype=np.float64).reshape(2, 3))
    x = tf.placeholder(tf.int32, [None, 3], name="ints")
    y = x * 2
    return lambda: env.sess.run(y, {x: zarr.open_array(path, mode="r")}), ["ints:0", "float64"]


@case(InvalidArgumentError)
def zarr_array_fed_to_a_placeholder_of_another_shape(env):
    path = _array(env)
    x = tf.placeholder(tf.float32, [None, 5], name="wide")
    y = x * 2
    return lambda: env.sess.run(y, {x: zarr.open_array(path, mode="r")}), ["wide:0"]


@case(ValueError, "build")
def read_zarr_used_with_the_wrong_shape(env):
    path = _array(env)
    data = tf.io.read_zarr(path, name="source")
    return lambda: tf.matmul(data, tf.ones([4, 2]), name="project"), ["project", "[4,3]"]


@case(InvalidArgumentError, "build")
def read_zarr_of_a_dtype_tensorflow_lacks(env):
    zarr.open_array(str(env.tmp / "dates.zarr"), mode="w", shape=(3,), dtype="M8[s]")
    return lambda: tf.io.read_zarr(str(env.tmp / "dates.zarr")), ["dates.zarr", "datetime64"]


@case(TypeError, "build")
def read_zarr_of_ints_added_to_a_float(env):
    path = _array(env, value=np.arange(6, dtype=np.int32).reshape(2, 3))
    data = tf.io.read_zarr(path, name="int_source")
    return lambda: tf.add(data, tf.constant(1.5, name="half"), name="shifted"), ["shifted", "int32", "float32"]


# ---- tf.data -----------------------------------------------------------------------------------


@case(FailedPreconditionError)
def get_next_before_the_initializer(env):
    it = tf.data.Dataset.range(3).make_initializable_iterator()
    nxt = it.get_next(name="next_element")
    return lambda: env.sess.run(nxt), ["next_element", "not been initialized"]


@case(OutOfRangeError)
def get_next_past_the_end(env):
    it = tf.data.Dataset.range(2).make_one_shot_iterator()
    nxt = it.get_next(name="last_element")
    env.sess.run(nxt)
    env.sess.run(nxt)
    return lambda: env.sess.run(nxt), ["last_element", "End of sequence"]


@case(InvalidArgumentError)
def initializer_with_its_placeholder_unfed(env):
    n = tf.placeholder(tf.int64, [], name="how_many")
    it = tf.data.Dataset.range(n).make_initializable_iterator()
    return lambda: env.sess.run(it.initializer), ["how_many"]


@case(ValueError, "build")
def from_tensor_slices_of_unequal_lengths(env):
    return lambda: tf.data.Dataset.from_tensor_slices((np.ones(3), np.ones(4))), ["3", "4"]


@case(InvalidArgumentError)
def dataset_map_whose_function_fails(env):
    ds = tf.data.Dataset.from_tensor_slices(np.array([1.0, -1.0], np.float32))
    ds = ds.map(lambda x: tf.check_numerics(tf.log(x), "log of an element", name="checked_log"))
    nxt = ds.make_one_shot_iterator().get_next()
    env.sess.run(nxt)
    return lambda: env.sess.run(nxt), ["checked_log", "NaN"]


@case(ValueError, "build")
def one_shot_iterator_over_a_placeholder(env):
    n = tf.placeholder(tf.int64, [], name="count")
    ds = tf.data.Dataset.range(n)
    return lambda: ds.make_one_shot_iterator(), ["count", "placeholder"]


@case(TypeError, "build")
def batch_of_a_float_size(env):
    ds = tf.data.Dataset.range(4)
    return lambda: ds.batch(2.5), ["Batch", "2.5"]


# ---- py_func -----------------------------------------------------------------------------------


def _fails(x):
    raise ValueError("the user's function failed on purpose")


def _wrong_dtype(x):
    return np.array(["text"])


def _two_values(x):
    return x, x


@case(InvalidArgumentError)
def py_func_that_raises(env):
    x = tf.placeholder(tf.float32, [None], name="px")
    y = tf.py_func(_fails, [x], tf.float32, name="user_fn")
    return lambda: env.sess.run(y, {x: [1.0]}), ["user_fn", "on purpose"]


@case(InvalidArgumentError)
def py_func_returning_the_wrong_dtype(env):
    x = tf.placeholder(tf.float32, [None], name="px")
    y = tf.py_func(_wrong_dtype, [x], tf.float32, name="user_fn")
    return lambda: env.sess.run(y, {x: [1.0]}), ["user_fn"]


@case(InvalidArgumentError)
def py_func_returning_two_values_for_one(env):
    x = tf.placeholder(tf.float32, [None], name="px")
    y = tf.py_func(_two_values, [x], tf.float32, name="user_fn")
    return lambda: env.sess.run(y, {x: [1.0]}), ["user_fn", "2"]


# ---- Zarr arrays read through zarr-python changed under the graph (#29) -----------------------


def _gzip_array(env, name, value=None, dtype="f4"):
    """A Zarr array whose codec (gzip) dflow's chunk streamer does not read: zarr-python reads it."""
    value = np.arange(12).reshape(4, 3) if value is None else value
    path = str(env.tmp / name)
    z = zarr.create_array(path, shape=value.shape, chunks=(2, 3), dtype=dtype,
                          compressors=zarr.codecs.GzipCodec(), overwrite=True)
    z[...] = value
    return path


@case(NotFoundError)
def read_zarr_of_a_gzip_array_deleted_before_the_run(env):
    import shutil

    path = _gzip_array(env, "gone_gzip.zarr")
    y = tf.reduce_sum(tf.io.read_zarr(path), name="sum_of_gone")
    shutil.rmtree(path)
    return lambda: env.sess.run(y), ["gone_gzip.zarr", "is gone"]


@case(FailedPreconditionError)
def read_zarr_of_a_gzip_array_rewritten_with_another_dtype(env):
    path = _gzip_array(env, "retyped_gzip.zarr")
    y = tf.reduce_sum(tf.io.read_zarr(path), name="sum_of_retyped")
    _gzip_array(env, "retyped_gzip.zarr", dtype="f8")
    return lambda: env.sess.run(y), ["retyped_gzip.zarr", "changed since the graph read it", "float64"]


@case(FailedPreconditionError)
def from_zarr_of_a_gzip_array_reshaped_while_iterating(env):
    path = _gzip_array(env, "reshaped_gzip.zarr", np.arange(24).reshape(8, 3))
    nxt = tf.data.Dataset.from_zarr(path, read_ahead=0).make_one_shot_iterator().get_next(name="zarr_row")
    env.sess.run(nxt)
    _gzip_array(env, "reshaped_gzip.zarr", np.arange(32).reshape(8, 4))
    return lambda: [env.sess.run(nxt) for _ in range(8)], ["reshaped_gzip.zarr", "shape (8, 4)", "zarr_row"]


# ---- damaged JSON metadata names its file (#29) ------------------------------------------------


def _damage_json(path):
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])  # truncated mid-document


@case(tf.errors.DataLossError, "build")
def read_zarr_of_an_array_whose_metadata_is_truncated(env):
    import os

    path = _array(env, "truncated_meta.zarr")
    _damage_json(os.path.join(path, "zarr.json"))
    return lambda: tf.io.read_zarr(path), [os.path.join("truncated_meta.zarr", "zarr.json"), "not valid JSON"]


@case(tf.errors.DataLossError, "build")
def from_zarr_of_an_array_whose_metadata_is_truncated(env):
    import os

    path = _array(env, "truncated_meta2.zarr")
    _damage_json(os.path.join(path, "zarr.json"))
    return lambda: tf.data.Dataset.from_zarr(path), [os.path.join("truncated_meta2.zarr", "zarr.json"),
                                                      "not valid JSON"]


@case(tf.errors.DataLossError, "build")
def keras_load_model_of_a_file_whose_config_is_not_json(env):
    import h5py

    path = str(env.tmp / "model.h5")
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    model.compile("sgd", "mse")
    model.save(path)
    with h5py.File(path, "r+") as f:
        f.attrs["model_config"] = '{"class_name": "Sequential", "config": '
    return lambda: tf.keras.models.load_model(path), ["model.h5", "model_config", "not valid JSON"]
