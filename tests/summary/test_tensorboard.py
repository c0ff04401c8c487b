"""TensorBoard itself reads dflow's event files: `tensorboard --logdir` started on loopback lists
the run's scalar tags through its HTTP API. Slow (TensorBoard starts in seconds): `-m slow`."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest

import dflow as tf


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read().decode())


@pytest.mark.slow
def test_tensorboard_lists_the_runs_scalar_tags(tmp_path):
    logdir = tmp_path / "logs"
    x = tf.placeholder(tf.float32, [None])
    tf.summary.scalar("loss", tf.reduce_mean(x))
    tf.summary.scalar("max", tf.reduce_max(x), family="stats")  # its tag: stats/stats/max, as TF1
    tf.summary.histogram("values", x)
    merged = tf.summary.merge_all()
    with tf.Session() as sess, tf.summary.FileWriter(str(logdir / "run1"), sess.graph) as writer:
        for i in range(3):
            writer.add_summary(sess.run(merged, {x: np.arange(4, dtype=np.float32) + i}), i)

    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--host", "127.0.0.1",
                             "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    try:
        deadline, tags, err = time.time() + 90, {}, None
        while time.time() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"tensorboard exited with {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
            try:
                tags = _get(f"http://127.0.0.1:{port}/data/plugin/scalars/tags")
                if tags.get("run1", {}).keys() >= {"loss", "stats/stats/max"}:
                    break
            except OSError as e:  # not listening yet, or still loading
                err = e
            time.sleep(0.5)
        assert set(tags.get("run1", {})) == {"loss", "stats/stats/max"}, (tags, err)
        scalars = _get(f"http://127.0.0.1:{port}/data/plugin/scalars/scalars?run=run1&tag=loss")
        assert [(s[1], s[2]) for s in scalars] == [(0, 1.5), (1, 2.5), (2, 3.5)]
        assert "run1" in _get(f"http://127.0.0.1:{port}/data/plugin/histograms/tags")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
