"""A full disk or a read-only directory under a write is a dflow error in words naming the file (#29):
ResourceExhaustedError 'No space left on device', PermissionDeniedError; never zstd's
'Src size is incorrect' (the frame closed after the failed write) or a bare OSError. The OS is
faked at its boundary: the chunk writer's `open` gives files whose writes fail."""

import errno
import io
import os

import numpy as np
import pytest

import dflow as tf
import dflow.storage.chunks as chunks
from dflow.errors import PermissionDeniedError, ResourceExhaustedError


class _FullDisk(io.FileIO):
    def write(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")


def _open_full(name, mode="r", *args, **kwargs):
    if "w" in mode:
        return _FullDisk(name, "w")
    return open(name, mode, *args, **kwargs)


def _open_denied(name, mode="r", *args, **kwargs):
    if "w" in mode:
        raise PermissionError(errno.EACCES, "Permission denied", name)
    return open(name, mode, *args, **kwargs)


def _files(path):
    return sorted(os.path.relpath(os.path.join(r, f), path) for r, _, fs in os.walk(path) for f in fs)


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.arange(50_000, dtype=np.float32), name="weights")
        yield g, v


@pytest.mark.parametrize("opener, cls, words", [(_open_full, ResourceExhaustedError, "No space left on device"),
                                                (_open_denied, PermissionDeniedError, "Permission denied")])
def test_saver_save_on_a_full_disk_or_a_denied_file_names_it(tmp_path, graph, monkeypatch, opener, cls, words):
    g, v = graph
    saver = tf.train.Saver()
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        first = saver.save(sess, str(tmp_path / "model"), global_step=1)
        before = _files(tmp_path)
        monkeypatch.setattr(chunks, "open", opener, raising=False)
        with pytest.raises(cls, match=words) as info:
            saver.save(sess, str(tmp_path / "model"), global_step=2)
        monkeypatch.undo()
        assert str(tmp_path) in str(info.value)
        assert _files(tmp_path) == before  # the failed save left nothing; the first checkpoint is whole
        saver.restore(sess, first)
        np.testing.assert_array_equal(sess.run(v), np.arange(50_000, dtype=np.float32))


def test_write_zarr_on_a_full_disk_names_the_op_and_the_file(tmp_path, graph, monkeypatch):
    g, v = graph
    with g.as_default():
        w = tf.io.write_zarr(v * 2.0, str(tmp_path / "out.zarr"), name="save_doubled")
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        monkeypatch.setattr(chunks, "open", _open_full, raising=False)
        with pytest.raises(ResourceExhaustedError, match="No space left on device") as info:
            sess.run(w)
        monkeypatch.undo()
    message = str(info.value)
    assert "save_doubled" in message and str(tmp_path) in message, message
    assert not os.path.exists(tmp_path / "out.zarr")


def test_kernel_failure_words_an_os_error_by_its_errno():
    from dflow.errors import kernel_failure

    full = kernel_failure(None, OSError(errno.ENOSPC, "No space left on device", "/data/x.bin"), "Op", "writer")
    assert isinstance(full, ResourceExhaustedError) and "'/data/x.bin'" in str(full) and "writer" in str(full)
    denied = kernel_failure(None, PermissionError(errno.EACCES, "Permission denied", "/ro/y"), "Op", "writer")
    assert isinstance(denied, PermissionDeniedError) and "'/ro/y'" in str(denied)
