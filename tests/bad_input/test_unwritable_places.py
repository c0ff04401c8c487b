"""Writers pointed where they cannot write (#29): a path that is a file, or a read-only directory,
is a dflow error naming the path (FailedPreconditionError 'is a file' / 'not a directory',
PermissionDeniedError), never FileExistsError or PermissionError, and nothing is written."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

import dflow as tf
from dflow.errors import FailedPreconditionError, PermissionDeniedError


@pytest.fixture
def read_only_dir(tmp_path):
    """A directory this process cannot write into: chmod 0o555, or (as root, which ignores
    permission bits) /sys, where creating anything is refused."""
    ro = tmp_path / "read_only"
    ro.mkdir()
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
    try:
        (ro / "probe").write_text("x")
    except PermissionError:
        yield str(ro)
        ro.chmod(0o755)
        return
    os.unlink(ro / "probe")
    ro.chmod(0o755)
    try:
        os.mkdir("/sys/dflow-probe")
    except PermissionError:
        yield "/sys"
        return
    except OSError:
        pass
    else:
        os.rmdir("/sys/dflow-probe")
    pytest.skip("no read-only directory here (root on a writable /sys)")


def _graph():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.ones(3, np.float32), name="weights")
        step = tf.train.get_or_create_global_step()
        train = tf.group(tf.assign_add(v, tf.ones([3])), tf.assign_add(step, 1))
    return g, train


def _saver_save(directory, fmt="zarr"):
    g, _ = _graph()
    with g.as_default():
        saver = tf.train.Saver(**({} if fmt == "zarr" else {"format": fmt}))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            saver.save(sess, os.path.join(directory, "model.ckpt"))


def _file_writer(directory):
    w = tf.summary.FileWriter(directory)
    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=1.0)]), 0)
    w.close()


def _monitored_session(directory):
    g, train = _graph()
    with g.as_default():
        with tf.train.MonitoredTrainingSession(checkpoint_dir=directory) as mts:
            mts.run(train)


def _estimator(directory):
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(features["x"] * w - labels))
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, tf.train.get_or_create_global_step()))

    est = tf.estimator.Estimator(model_fn, model_dir=directory)
    est.train(lambda: ({"x": tf.constant([[1.0]])}, tf.constant([[2.0]])), steps=1)


WRITERS = {
    "saver": _saver_save,
    "saver_tensorflow_format": lambda d: _saver_save(d, "tensorflow"),
    "file_writer": _file_writer,
    "monitored_training_session": _monitored_session,
    "estimator": _estimator,
}


def _files(path):
    return sorted(os.path.join(r, f) for r, _, fs in os.walk(path) for f in fs)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("writer", sorted(WRITERS))
@pytest.mark.parametrize("where", ["the path", "a parent of the path"])
def test_a_file_in_the_way_is_failed_precondition_naming_it(tmp_path, writer, where):
    blocker = tmp_path / "a_file"
    blocker.write_bytes(b"the user's file")
    target = blocker if where == "the path" else blocker / "logs"
    with pytest.raises(FailedPreconditionError) as info:
        WRITERS[writer](str(target))
    message = str(info.value)
    assert str(blocker) in message and ("is a file" in message or "not a directory" in message), message
    assert _files(tmp_path) == [str(blocker)] and blocker.read_bytes() == b"the user's file"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("writer", sorted(WRITERS))
@pytest.mark.parametrize("where", ["in it", "below it"])
def test_a_read_only_directory_is_permission_denied_naming_it(read_only_dir, writer, where):
    target = read_only_dir if where == "in it" else os.path.join(read_only_dir, "dflow-logs")
    with pytest.raises(PermissionDeniedError) as info:
        WRITERS[writer](target)
    message = str(info.value)
    assert read_only_dir in message and ("ermission denied" in message or "not permitted" in message), message
