"""`dflow inspect-checkpoint`: a saved checkpoint's variables, dtypes, shapes, checksums and values."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dflow as tf
from dflow.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def checkpoint(tmp_path):
    """(checkpoint directory, prefix, {name: value}) of a checkpoint saved by a Saver."""
    rng = np.random.default_rng(0)
    values = {"w": rng.standard_normal((3, 4)).astype(np.float32), "layer/b": np.arange(5, dtype=np.float64)}
    w = tf.Variable(values["w"], name="w")
    with tf.variable_scope("layer"):
        tf.get_variable("b", dtype=tf.float64, initializer=values["layer/b"])
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = saver.save(sess, str(tmp_path / "ckpt" / "model"), global_step=7)
    assert w.name == "w:0"
    return tmp_path / "ckpt", prefix, values


def sha(value):
    return "sha256:" + hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()


def test_lists_variables_dtypes_shapes_checksums(checkpoint, capsys):
    directory, prefix, values = checkpoint
    assert main(["inspect-checkpoint", str(directory)]) == 0  # a directory: its latest checkpoint
    out = capsys.readouterr().out.splitlines()
    assert out == [f"checkpoint {prefix}: 2 variables",
                   f"layer/b (float64) [5] {sha(values['layer/b'])}",
                   f"w (float32) [3,4] {sha(values['w'])}"]


def test_prints_values_and_verifies(checkpoint, capsys):
    _, prefix, values = checkpoint
    assert main(["inspect-checkpoint", prefix, "--tensor_name", "layer/b", "--verify"]) == 0
    out = capsys.readouterr().out
    assert "tensor_name:  layer/b\n[0. 1. 2. 3. 4.]\n" in out and "verified" in out
    assert main(["inspect-checkpoint", prefix, "--all-tensors"]) == 0
    out = capsys.readouterr().out
    assert "tensor_name:  w\n" + np.array2string(values["w"], threshold=1000) in out
    assert main(["inspect-checkpoint", prefix, "--tensor-name", "nope"]) == 1
    assert "no variable 'nope'" in capsys.readouterr().err


def test_errors(checkpoint, tmp_path, capsys):
    assert main(["inspect-checkpoint", str(tmp_path / "missing")]) == 1
    assert "NotFoundError" in capsys.readouterr().err
    directory, prefix, _ = checkpoint
    chunk = next(p for p in Path(os.path.realpath(prefix)).rglob("*") if p.is_file() and p.parent.name == "c")
    data = bytearray(chunk.read_bytes())
    data[-1] ^= 0xFF
    chunk.write_bytes(bytes(data))
    assert main(["inspect-checkpoint", prefix]) == 0  # the table alone reads no data
    capsys.readouterr()
    assert main(["inspect-checkpoint", prefix, "--verify"]) == 1
    assert "DataLossError" in capsys.readouterr().err


def test_in_a_subprocess(checkpoint, tmp_path):
    directory, prefix, values = checkpoint
    out = subprocess.run([sys.executable, "-m", "dflow.cli", "inspect-checkpoint", str(directory)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert f"w (float32) [3,4] {sha(values['w'])}" in out.stdout.splitlines()
