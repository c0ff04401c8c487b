"""Writes the TensorFlow checkpoints dflow's tests read (tests/fixtures/tf_checkpoints/).

Needs TensorFlow (not part of `make test`): `/tmp/tfenv/bin/python tools/make_tf_checkpoint_fixtures.py`.
Each fixture is a directory written by TensorFlow 1.x's own `tf.train.Saver`:

- mlp/        an MLP trained two steps with Adam: kernels, biases, Adam slots, beta powers,
              global_step; `model.ckpt-2` plus TF's `checkpoint` state file
- dtypes/     one variable of every dtype TF1 writes (float16/32/64, bfloat16, int8/16/32/64,
              uint8/16, bool, complex64/128, string), a scalar and an empty tensor
- partitioned/ `tf.get_variable(..., partitioner=tf.fixed_size_partitioner(3))` and a plain one
- sharded/    `tf.train.Saver(sharded=True)` over variables on three CPU devices: three data shards
- resource/   resource variables (`use_resource=True`)
- v1/         a V1 checkpoint (`write_version=SaverDef.V1`): one `model.ckpt` file

The `checkpoint` state files name the checkpoints by absolute paths, as TF1 writes them, rewritten
to `/home/trainer/runs/<fixture>/...`: a directory copied from the machine that trained it.

`expected.npz` holds every variable's value as TensorFlow reads it back (`NewCheckpointReader`),
keyed `<fixture>/<name>` (strings and bfloat16 are in `expected.json`, with each fixture's
variable table: name, TF dtype name, shape).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys

import numpy as np

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.layers needs tf_keras under TF 2.16+
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()

OUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                                   "tf_checkpoints"))


def _session(cpus=1):
    return tf.Session(config=tf.ConfigProto(device_count={"CPU": cpus}))


def mlp(path):
    rng = np.random.RandomState(0)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    h = tf.layers.dense(x, 8, activation=tf.nn.relu, name="hidden")
    out = tf.layers.dense(h, 1, name="out")
    loss = tf.reduce_mean(tf.square(out - y))
    step = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=step)
    saver = tf.train.Saver(max_to_keep=2)
    with _session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(2):
            sess.run(train, {x: rng.randn(16, 4), y: rng.randn(16, 1)})
        saver.save(sess, os.path.join(path, "model.ckpt"), global_step=step)


def dtypes(path):
    rng = np.random.RandomState(1)
    values = {
        "f16": rng.randn(3, 2).astype(np.float16),
        "f32": rng.randn(2, 3).astype(np.float32),
        "f64": rng.randn(5).astype(np.float64),
        "i8": np.array([-128, 0, 127], np.int8),
        "i16": np.array([[-32768, 1], [2, 32767]], np.int16),
        "i32": np.arange(-3, 3, dtype=np.int32).reshape(2, 3),
        "i64": np.array([-(2 ** 62), 0, 2 ** 62 + 5], np.int64),
        "u8": np.array([0, 7, 255], np.uint8),
        "u16": np.array([0, 65535], np.uint16),
        "flag": np.array([True, False, True, True]),
        "c64": (rng.randn(2, 2) + 1j * rng.randn(2, 2)).astype(np.complex64),
        "c128": (rng.randn(3) + 1j * rng.randn(3)).astype(np.complex128),
        "scalar": np.float32(3.5),
        "empty": np.zeros((0, 3), np.float32),
        "scope/words": np.array([b"hello", b"", b"with\x00nul", "ünï".encode(), b"x" * 300], dtype=object),
    }
    variables = [tf.Variable(v, name=n) for n, v in values.items()]
    variables.append(tf.Variable(tf.cast(tf.constant([1.5, -2.25, 1e30]), tf.bfloat16), name="bf16"))
    with _session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver(variables).save(sess, os.path.join(path, "model.ckpt"))


def partitioned(path):
    emb = tf.get_variable("emb", shape=[10, 4], partitioner=tf.fixed_size_partitioner(3),
                          initializer=tf.random_normal_initializer(seed=2))
    tf.get_variable("plain", shape=[2], initializer=tf.ones_initializer())
    del emb
    with _session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver().save(sess, os.path.join(path, "model.ckpt"))


def sharded(path):
    for i in range(3):
        with tf.device(f"/cpu:{i}"):
            tf.get_variable(f"w{i}", shape=[2, i + 1], initializer=tf.random_uniform_initializer(seed=i))
    with _session(cpus=3) as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver(sharded=True).save(sess, os.path.join(path, "model.ckpt"))


def resource(path):
    tf.get_variable("res/w", shape=[3, 2], use_resource=True, initializer=tf.random_normal_initializer(seed=3))
    tf.get_variable("res/count", shape=[], dtype=tf.int64, use_resource=True, initializer=tf.constant_initializer(41))
    with _session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver().save(sess, os.path.join(path, "model.ckpt"))


def v1(path):
    tf.Variable([1.0, 2.0], name="w")
    with _session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver(write_version=tf.train.SaverDef.V1).save(sess, os.path.join(path, "model.ckpt"))


def _table(prefix, arrays, extra):
    """The checkpoint as TensorFlow reads it back: its table and values."""
    reader = tf.train.NewCheckpointReader(prefix)
    shapes, dtypes_ = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
    table = []
    fixture = os.path.basename(os.path.dirname(prefix))
    for name in sorted(shapes):
        table.append([name, dtypes_[name].name, list(shapes[name])])
        value = reader.get_tensor(name)
        key = f"{fixture}/{name}"
        if dtypes_[name] == tf.string:
            flat = np.asarray(value, dtype=object).reshape(-1)
            extra[key] = {"shape": list(np.shape(value)), "b64": [base64.b64encode(s).decode() for s in flat]}
        elif dtypes_[name] == tf.bfloat16:
            extra[key] = {"shape": list(np.shape(value)), "float": np.asarray(value, np.float32).ravel().tolist()}
        else:
            arrays[key] = np.asarray(value)
    return table


def _as_if_copied(path):
    """TF1 writes absolute paths into the `checkpoint` file: make them another machine's, as in a
    checkpoint directory copied from where it was trained (and free of this checkout's path)."""
    state = os.path.join(path, "checkpoint")
    with open(state) as f:
        text = f.read()
    with open(state, "w") as f:
        f.write(text.replace(os.path.abspath(path), f"/home/trainer/runs/{os.path.basename(path)}"))


def main():
    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    arrays, extra, tables = {}, {}, {}
    for make in (mlp, dtypes, partitioned, sharded, resource, v1):
        path = os.path.join(OUT, make.__name__)
        os.makedirs(path)
        with tf.Graph().as_default():
            tf.set_random_seed(0)
            make(path)
        if make is not v1:
            prefix = tf.train.latest_checkpoint(path)
            tables[make.__name__] = {"prefix": os.path.relpath(prefix, OUT), "variables": _table(prefix, arrays, extra)}
        _as_if_copied(path)
    np.savez(os.path.join(OUT, "expected.npz"), **arrays)
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump({"tables": tables, "values": extra, "tensorflow": tf.__version__}, f, indent=1, sort_keys=True)
    total = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(OUT) for n in ns)
    print(f"wrote {OUT}: {total} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
