"""Crash safety of Saver.save: a process killed with SIGKILL at any moment of a save leaves
`latest_checkpoint` naming a complete checkpoint that restores to the values of its step.

(1) A child interpreter (`sys.executable -c`) forks savers that loop over saves with increasing
global steps; each is SIGKILLed 0.05-1 s after it starts (20 times), then the parent restores the
latest checkpoint and checks every value equals its step. (2) A save is killed just before each
file-system mutation (rename, replace, unlink, mkdir, rmtree...) that changes what the index and
readers see, for a save of a new step and for a save again to one prefix.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import dflow as tf

REPO = Path(__file__).resolve().parents[2]
KILLS = 20


def build():
    """The saved model: ~3 MB of variables whose values all equal the global step."""
    a = tf.Variable(np.zeros((512, 1024), np.float32), name="a")
    with tf.variable_scope("scope"):
        b = tf.Variable(np.zeros((256, 512), np.float64), name="b")
    step = tf.Variable(np.int64(0), name="global_step")
    return [a, b, step]


def _set_step(sess, variables, value):
    a, b, step = variables
    a.load(np.full(a.shape.as_list(), value, np.float32), sess)
    b.load(np.full(b.shape.as_list(), value, np.float64), sess)
    step.load(np.int64(value), sess)


def saver_main(save_dir):
    """The child: for each line "START" on stdin, forks a process that saves steps START, START+1,
    ... until the parent SIGKILLs it (one interpreter start for all the kills: the forked process
    is a fresh saver with the graph built and the session open, and is killed mid-save)."""
    variables = build()
    sess = tf.Session()  # values come from Variable.load: this process starts no thread pool
    print("ready", flush=True)
    for line in sys.stdin:
        start = int(line)
        pid = os.fork()
        if pid == 0:
            saver = tf.train.Saver(max_to_keep=3)
            state = tf.train.get_checkpoint_state(save_dir)
            if state is not None:  # a restarted trainer adopts the checkpoints it finds (TF1's idiom)
                saver.recover_last_checkpoints(state.all_model_checkpoint_paths)
            for i, step in enumerate(range(start, start + 1_000_000)):
                _set_step(sess, variables, step)
                if i == 0:
                    print(f"saving {os.getpid()} {step}", flush=True)
                saver.save(sess, os.path.join(save_dir, "model"), global_step=step, write_meta_graph=False)
        _, status = os.waitpid(pid, 0)
        print(f"dead {os.WTERMSIG(status) if os.WIFSIGNALED(status) else -1}", flush=True)


def _restored_step(save_dir, variables, sess, saver):
    """Restores the latest checkpoint and returns its step, checking every value equals it."""
    latest = tf.train.latest_checkpoint(save_dir)
    assert latest is not None, os.listdir(save_dir)
    saver.restore(sess, latest)
    a, b, step = sess.run(variables)
    step = int(step)
    assert latest.endswith(f"model-{step}")
    assert (a == step).all() and a.dtype == np.float32
    assert (b == step).all() and b.dtype == np.float64
    for p in tf.train.get_checkpoint_state(save_dir).all_model_checkpoint_paths:
        assert tf.train.checkpoint_exists(p), p  # the index names only complete checkpoints
    return step


def test_sigkill_at_random_moments_of_save(tmp_path):
    save_dir = tmp_path / "ckpt"
    variables = build()
    saver = tf.train.Saver()
    rng = random.Random(1234)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    child = subprocess.Popen([sys.executable, "-c", f"from tests.io.test_kill import saver_main; "
                              f"saver_main({str(save_dir)!r})"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, env=env, cwd=str(REPO))
    sess = tf.Session()
    try:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, os.path.join(save_dir, "model"), global_step=0, write_meta_graph=False)
        assert child.stdout.readline().strip() == "ready"
        last = 0
        for _ in range(KILLS):
            child.stdin.write(f"{last + 1}\n")
            child.stdin.flush()
            _, pid, _ = child.stdout.readline().split()  # "saving PID FIRST_STEP"
            time.sleep(rng.uniform(0.05, 1.0))
            os.kill(int(pid), signal.SIGKILL)
            assert child.stdout.readline().split() == ["dead", str(int(signal.SIGKILL))]
            step = _restored_step(save_dir, variables, sess, saver)
            assert step >= last
            last = step
        assert last > KILLS  # the savers got through saves between the kills
        assert len(tf.train.get_checkpoint_state(save_dir).all_model_checkpoint_paths) <= 3
    finally:
        child.kill()
        child.wait()
        sess.close()
        shutil.rmtree(save_dir, ignore_errors=True)


# ---- a kill before each file-system mutation of one save ----------------------------------------

_MUTATIONS = ["rename", "replace", "unlink", "remove", "rmdir", "mkdir", "makedirs"]


def stepwise_main(save_dir, scenario):
    """In a child: fork a process that SIGKILLs itself just before the K-th file mutation of one
    save, for every K outside the temporary directory (and a few inside it); check the directory
    after each; print the findings as JSON."""
    variables = build()
    saver = tf.train.Saver(max_to_keep=1)
    sess = tf.Session()
    pristine = save_dir + ".pristine"
    _set_step(sess, variables, 1)

    def step(n):  # the global step of the n-th save: none when saving again to one prefix
        return n if scenario == "new_step" else None

    saver.save(sess, os.path.join(pristine, "model"), global_step=step(1), write_meta_graph=False)
    log = save_dir + ".mutations"
    findings, points = [], [0]
    while points:
        k = points.pop(0)
        shutil.rmtree(save_dir, ignore_errors=True)
        shutil.copytree(pristine, save_dir, symlinks=True)  # relative index paths and links hold in the copy
        saver.recover_last_checkpoints(tf.train.get_checkpoint_state(save_dir).all_model_checkpoint_paths)
        pid = os.fork()
        if pid == 0:  # the process to kill (k=0: a dry run that logs the mutations)
            calls = _kill_before(k)
            _set_step(sess, variables, 2)
            saver.save(sess, os.path.join(save_dir, "model"), global_step=step(2), write_meta_graph=False)
            if k == 0:
                with open(log, "w") as f:
                    json.dump(calls, f)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        if k == 0:
            points = _kill_points(log)
            continue
        latest = tf.train.latest_checkpoint(save_dir)
        entry = {"k": k, "killed": os.WIFSIGNALED(status), "latest": latest and os.path.basename(latest)}
        if latest is not None:
            try:
                a = tf.train.load_variable(latest, "a")
                entry["value"] = float(a.flat[0]) if (a == a.flat[0]).all() else "mixed"
                entry["step"] = int(tf.train.load_variable(latest, "global_step"))
            except tf.errors.OpError as e:
                entry["error"] = f"{type(e).__name__}: {e}"
        findings.append(entry)
    print("FINDINGS " + json.dumps(findings), flush=True)


def _kill_points(log):
    """The K to kill before: every mutation of the names the index and readers see (the rename into
    place, the index, the rmtree of old checkpoints), plus the first, middle and last of the runs
    of equivalent ones (writes inside the temporary directory, the files rmtree removes one by one)."""
    with open(log) as f:
        calls = json.load(f)
    in_tmp = [k for k, (name, p) in enumerate(calls, 1) if ".dflow-tmp-" in p and name != "rename"]
    in_rmtree = [k for k, (_, p) in enumerate(calls, 1) if os.sep not in p]  # relative to rmtree's dir_fd
    sampled = {g[i] for g in (in_tmp, in_rmtree) if g for i in (0, len(g) // 2, -1)}
    rest = set(range(1, len(calls) + 1)) - set(in_tmp) - set(in_rmtree)
    return sorted(rest | sampled) + [len(calls) + 1]  # the last one is never reached: the save completes


def _kill_before(k):
    """Makes this process SIGKILL itself just before its k-th file mutation; returns the log of
    the mutations as [(function, path)]."""
    calls = []

    def wrap(real, name):
        def call(*args, **kwargs):
            calls.append((name, os.fspath(args[0]) if args else ""))
            if len(calls) == k:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)
        return call

    for name in _MUTATIONS:
        setattr(os, name, wrap(getattr(os, name), name))
    shutil.rmtree = wrap(shutil.rmtree, "rmtree")
    return calls


def _stepwise(tmp_path, scenario):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    code = f"from tests.io.test_kill import stepwise_main; stepwise_main({str(tmp_path / 'd')!r}, {scenario!r})"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=str(REPO),
                          timeout=120)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("FINDINGS ")]
    assert lines, proc.stderr[-3000:]
    findings = json.loads(lines[-1][len("FINDINGS "):])
    shutil.rmtree(tmp_path, ignore_errors=True)
    assert not findings[-1]["killed"] and len(findings) > 5, findings
    return findings


def _check_findings(findings):
    bad = [f for f in findings if f["latest"] is None or "error" in f or f.get("value") not in (1.0, 2.0)
           or f.get("step") != f.get("value")]
    assert not bad, bad
    assert findings[-1]["value"] == 2.0 and findings[0]["value"] == 1.0


def test_sigkill_before_each_mutation_of_a_save_of_a_new_step(tmp_path):
    _check_findings(_stepwise(tmp_path, "new_step"))


def test_sigkill_before_each_mutation_of_a_save_to_the_same_prefix(tmp_path):
    _check_findings(_stepwise(tmp_path, "same_prefix"))
