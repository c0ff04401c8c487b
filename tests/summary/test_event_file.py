"""dflow's own event-file writer: TF1's file name and first event, TFRecord framing read back by
TensorBoard's reader, the queue and its flush thread, close/reopen, and errors naming the path (a
logdir that is a file, one that cannot be written, a full disk)."""

from __future__ import annotations

import errno
import os
import socket
import threading
import time

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import dflow as tf
from dflow.io import tfrecord
from dflow.summary import event_file
from dflow.summary.event_file import EventFileWriter


def _scalar(tag, value, step):
    return tf.summary.Event(step=step, wall_time=time.time(),
                            summary=tf.Summary(value=[tf.Summary.Value(tag=tag, simple_value=value)]))


def _events(path):
    return list(tf.train.summary_iterator(path))


def test_name_first_event_and_tensorboard_reads_it(tmp_path):
    before = int(time.time())
    w = EventFileWriter(str(tmp_path / "logs"), filename_suffix=".sfx")
    for i in range(3):
        w.add_event(_scalar("loss", 0.5 * i, i))
    w.close()
    (path,) = (tmp_path / "logs").iterdir()
    prefix, host_suffix = path.name[:len("events.out.tfevents.") + 10], path.name[len("events.out.tfevents.") + 11:]
    assert prefix.startswith("events.out.tfevents.") and before <= int(prefix[-10:]) <= time.time()
    assert host_suffix == socket.gethostname() + ".sfx" and str(path) == w.path
    events = _events(path)
    assert events[0].file_version == "brain.Event:2" and events[0].wall_time >= before
    acc = EventAccumulator(str(tmp_path / "logs"), size_guidance={"scalars": 0})
    acc.Reload()
    assert [(e.step, e.value) for e in acc.Scalars("loss")] == [(0, 0.0), (1, 0.5), (2, 1.0)]


def test_records_are_tfrecords(tmp_path):
    w = EventFileWriter(str(tmp_path))
    w.add_event(_scalar("a", 1.0, 7))
    w.close()
    records = list(tf.python_io.tf_record_iterator(w.path))
    assert tf.summary.Event.FromString(records[1]).step == 7 and len(records) == 2


def test_the_thread_flushes_every_flush_secs(tmp_path):
    w = EventFileWriter(str(tmp_path), flush_secs=0.05)
    w.add_event(_scalar("a", 1.0, 1))
    deadline = time.time() + 10
    while len(_events(w.path)) < 2 and time.time() < deadline:
        time.sleep(0.02)
    assert [e.step for e in _events(w.path)] == [0, 1]  # written without flush()
    w.close()


def test_queue_flush_close_reopen(tmp_path):
    w = EventFileWriter(str(tmp_path), max_queue=2, flush_secs=3600)
    for i in range(5):  # more than max_queue: add_event waits for the thread, nothing is lost
        w.add_event(_scalar("a", float(i), i))
    w.flush()
    assert [e.step for e in _events(w.path)[1:]] == list(range(5))
    first = w.path
    w.close()
    w.close()  # a second close does nothing
    w.add_event(_scalar("a", 9.0, 9))  # dropped: closed
    w.reopen()  # the same second: a new file, the first one kept
    assert w.path != first and os.path.exists(first)
    w.add_event(_scalar("a", 10.0, 10))
    w.reopen()  # open: does nothing
    w.close()
    assert [e.step for e in _events(first)[1:]] == list(range(5))
    assert [e.step for e in _events(w.path)] == [0, 10] and _events(w.path)[0].file_version == "brain.Event:2"


def test_add_event_needs_an_event(tmp_path):
    w = EventFileWriter(str(tmp_path))
    with pytest.raises(TypeError, match="Event proto"):
        w.add_event(b"bytes")
    w.close()


def test_a_logdir_that_is_a_file(tmp_path):
    path = tmp_path / "not_a_dir"
    path.write_text("x")
    with pytest.raises(tf.errors.FailedPreconditionError, match="not_a_dir is not a directory"):
        tf.summary.FileWriter(str(path))
    with pytest.raises(tf.errors.FailedPreconditionError, match="not_a_dir"):
        EventFileWriter(str(path / "below"))


def test_a_logdir_that_cannot_be_written(tmp_path, monkeypatch):
    logdir = tmp_path / "ro"
    logdir.mkdir()
    logdir.chmod(0o555)
    if os.access(logdir, os.W_OK):  # root writes anyway: make the file system say no
        def refuse(path, mode="r", *args, **kwargs):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        monkeypatch.setattr(event_file, "open", refuse, raising=False)
    try:
        with pytest.raises(tf.errors.PermissionDeniedError, match=f"{logdir}.*Permission denied"):
            tf.summary.FileWriter(str(logdir))
    finally:
        logdir.chmod(0o755)


def test_a_full_disk_is_raised_naming_the_file(tmp_path, monkeypatch):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    real_open = open

    def full_disk(path, mode="r", *args, **kwargs):  # the event file is written to /dev/full
        return real_open("/dev/full", mode, *args, **kwargs) if "tfevents" in str(path) else \
            real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr(tfrecord, "open", full_disk, raising=False)
    before = set(threading.enumerate())  # writers other tests keep open (FileWriterCache's) are theirs
    with pytest.raises(tf.errors.ResourceExhaustedError, match=r"events\.out\.tfevents.*No space left"):
        tf.summary.FileWriter(str(tmp_path))  # its first event is flushed at once
    assert not [t for t in set(threading.enumerate()) - before if t.name == "dflow-event-writer" and t.is_alive()]


def test_a_failure_in_the_thread_is_raised_by_the_next_call(tmp_path, monkeypatch):
    w = tf.summary.FileWriter(str(tmp_path), flush_secs=3600)

    def broken(record):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(w._writer._file, "write", broken)
    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="x", simple_value=1.0)]), 1)
    with pytest.raises(tf.errors.ResourceExhaustedError, match="tfevents"):
        w.flush()
    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="x", simple_value=2.0)]), 2)  # dropped, no hang
    w.close()
