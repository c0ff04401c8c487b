"""Crash and resume: a MonitoredTrainingSession job SIGKILLed at random moments and started again
with the same command ends with the same weights as a job never interrupted (issue #16)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import dflow as tf

ROOT = Path(__file__).resolve().parents[2]
LAST_STEP = 60

JOB = textwrap.dedent("""
    import sys

    import numpy as np

    import dflow as tf

    checkpoint_dir, last_step = sys.argv[1], int(sys.argv[2])
    rng = np.random.RandomState(0)
    X = rng.rand(64, 4).astype(np.float32)
    Y = X @ np.array([[1.0], [-1.0], [2.0], [0.5]], np.float32)
    step = tf.train.get_or_create_global_step()
    rows = (step % 4) * 16 + tf.range(16, dtype=tf.int64)  # the minibatch depends on the step only
    x, y = tf.gather(tf.constant(X), rows), tf.gather(tf.constant(Y), rows)
    w = tf.get_variable("w", [4, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    train = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=step)
    with tf.train.MonitoredTrainingSession(checkpoint_dir=checkpoint_dir, save_checkpoint_steps=7,
                                           save_summaries_steps=None, log_step_count_steps=None,
                                           hooks=[tf.train.StopAtStepHook(last_step=last_step)]) as sess:
        while not sess.should_stop():
            _, s = sess.run([train, step])
            print(s, flush=True)
""")


def _run(script, ckpt, kill_after=None, delay=0.0):
    """Runs the job; with `kill_after`, SIGKILLs it `delay` s after it printed that step.
    Returns whether it was killed."""
    proc = subprocess.Popen([sys.executable, str(script), str(ckpt), str(LAST_STEP)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        if kill_after is not None:
            for line in proc.stdout:
                if int(line) >= kill_after:
                    time.sleep(delay)
                    proc.send_signal(signal.SIGKILL)
                    proc.wait(60)
                    return True
        proc.stdout.read()
        assert proc.wait(120) == 0
        return False
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _weights(ckpt):
    names = sorted(name for name, _ in tf.train.list_variables(str(ckpt)))
    return {name: tf.train.load_variable(str(ckpt), name) for name in names}


def _trials(tmp_path, n, seed):
    script = tmp_path / "job.py"
    script.write_text(JOB)
    _run(script, tmp_path / "reference")
    reference = _weights(tmp_path / "reference")
    assert int(reference["global_step"]) == LAST_STEP
    assert "w/Momentum" in reference  # slot variables are checkpointed and restored too
    rnd = random.Random(seed)
    for trial in range(n):
        ckpt = tmp_path / f"trial{trial}"
        kills = 0
        for _ in range(rnd.choice([1, 2])):  # one or two crashes, then a run to the end
            kills += _run(script, ckpt, kill_after=rnd.randrange(1, LAST_STEP - 2), delay=rnd.uniform(0, 0.05))
        _run(script, ckpt)
        got = _weights(ckpt)
        assert kills >= 1 and got.keys() == reference.keys(), (trial, got.keys())
        for name in reference:
            np.testing.assert_allclose(got[name], reference[name], rtol=1e-6, atol=1e-7,
                                       err_msg=f"trial {trial}: {name}")


def test_killed_job_resumes_to_the_same_weights(tmp_path):
    _trials(tmp_path, 2, seed=1)


@pytest.mark.slow
def test_killed_job_resumes_to_the_same_weights_ten_of_ten(tmp_path):
    _trials(tmp_path, 10, seed=int(os.environ.get("DFLOW_CRASH_SEED", "2")))
