"""read_file, write_file, matching_files (tf.* and tf.io.*): values, TF1's errors, atomic writes,
in process and through Dask. Expected values are TF 2.21's (`tensorflow.compat.v1`) on the same
files."""

from __future__ import annotations

import os

import pytest

import dflow as tf
from tests.conftest import run_modes


def test_read_and_match(tmp_path):
    (tmp_path / "f1.txt").write_bytes(b"abc\x00")
    (tmp_path / "a.gz").write_bytes(b"")
    (tmp_path / "a.txt").write_bytes(b"")
    name = tf.placeholder(tf.string, [])
    data = tf.read_file(name)
    assert data.dtype == tf.string and data.shape.as_list() == [] and data.op.type == "ReadFile"
    assert run_modes(data, {name: str(tmp_path / "f1.txt")}) == b"abc\x00"
    assert run_modes(tf.io.read_file(str(tmp_path / "a.gz"))) == b""
    found = tf.matching_files([str(tmp_path / "a.*"), str(tmp_path / "f1*")])
    assert run_modes(found).tolist() == [os.fsencode(tmp_path / n) for n in ("a.gz", "a.txt", "f1.txt")]
    assert run_modes(tf.io.matching_files(str(tmp_path / "*.nothing"))).tolist() == []  # TF: [] (no error)
    with pytest.raises(tf.errors.NotFoundError, match="nofile; No such file or directory"):
        run_modes(tf.read_file(str(tmp_path / "nofile")))


def test_write_file_atomically_with_parents(tmp_path):
    target = tmp_path / "new" / "dir" / "w.txt"  # TF creates the missing directories
    op = tf.write_file(str(target), tf.string_join(["x", "yz"]))
    assert isinstance(op, tf.Operation) and op.type == "WriteFile"
    with tf.Session() as sess:
        assert sess.run(op) is None
    assert target.read_bytes() == b"xyz"
    with tf.control_dependencies([tf.io.write_file(str(target), "second")]):
        back = tf.identity(tf.constant(1))
    run_modes(back, modes=["eager"])
    assert target.read_bytes() == b"second"
    assert sorted(os.listdir(target.parent)) == ["w.txt"]  # no temporary left behind


def test_round_trip_in_a_dataset(tmp_path):
    for k in range(3):
        (tmp_path / f"x{k}.bin").write_bytes(bytes([k]) * (k + 1))
    ds = tf.data.Dataset.list_files(str(tmp_path / "x*.bin"), shuffle=False).map(tf.read_file)
    it = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert [sess.run(it) for _ in range(3)] == [b"\x00", b"\x01\x01", b"\x02\x02\x02"]
