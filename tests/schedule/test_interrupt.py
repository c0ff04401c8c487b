"""The processes scheduler when a run is cut short (#29): a worker process killed mid-run is an
AbortedError saying a worker process died (the next run gets a fresh pool and works), and Ctrl-C
(SIGINT) raises KeyboardInterrupt within about a second, whatever the running tasks' length (it
took 11-25 s: the run waited for them), the session's next run working."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import dflow as tf
from dflow.errors import AbortedError

# a run of long tasks: each a matmul of a 5000-10000-row chunk, 40-80 GFLOP (seconds of a core)
_LONG_RUN = """
import sys, time
import numpy as np
import dflow as tf

def graph():
    x = tf.placeholder(tf.float32, [None, 2000], name="x")
    y = tf.tanh(tf.matmul(x, tf.ones([2000, 2000]) * 0.001))
    return x, tf.reduce_sum(y, name="total")
"""


def _long_graph():
    namespace = {}
    exec(_LONG_RUN, namespace)
    return namespace["graph"]()


@pytest.mark.timeout(180)
def test_a_worker_killed_mid_run_says_a_worker_process_died_and_the_next_run_works():
    g = tf.Graph()
    with g.as_default():
        x, total = _long_graph()
    big = np.ones((20000, 2000), np.float32)
    with tf.Session(graph=g, scheduler="processes", chunks=10000, num_workers=2) as sess:
        assert sess.run(total, {x: big[:8]}) > 0  # the pool is up
        (pool,) = sess._executor._pools.values()
        victim = next(iter(pool._processes.values()))
        killer = threading.Timer(1.5, os.kill, (victim.pid, signal.SIGKILL))
        killer.start()
        try:
            with pytest.raises(AbortedError, match="worker process of the processes scheduler died") as info:
                sess.run(total, {x: big})
        finally:
            killer.cancel()
        assert "run it again" in str(info.value)
        assert sess.run(total, {x: big[:8]}) == pytest.approx(sess.run(total, {x: big[:8]}))


_CHILD = _LONG_RUN + """
def main():
    x, total = graph()
    sess = tf.Session(scheduler="processes", chunks=5000, num_workers=2)
    small = np.ones((8, 2000), np.float32)
    expected = sess.run(total, {x: small})
    print("READY", flush=True)
    try:
        sess.run(total, {x: np.ones((40000, 2000), np.float32)})
        print("FINISHED", flush=True)
    except KeyboardInterrupt:
        print("INTERRUPTED", flush=True)
    t = time.monotonic()
    assert sess.run(total, {x: small}) == expected
    print("NEXT RUN OK", round(time.monotonic() - t, 2), flush=True)

if __name__ == "__main__":
    main()
"""


@pytest.mark.timeout(240)
def test_ctrl_c_stops_a_processes_run_within_a_second_or_two(tmp_path):
    script = tmp_path / "long_run.py"
    script.write_text(textwrap.dedent(_CHILD))
    root = os.path.dirname(os.path.dirname(tf.__file__))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # the child takes Ctrl-C as a program started from a terminal does: a test run started in the
    # background (nohup, `cmd &` in a script, some CI runners) hands its children SIGINT ignored
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert child.stdout.readline().strip() == "READY", child.stderr.read()
        time.sleep(6.0)  # the long run is under way: its tasks are running in the workers
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline().strip()
        stopped = time.monotonic() - sent
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert line == "INTERRUPTED", (line, err[-2000:])
    assert stopped < 2.5, f"Ctrl-C took {stopped:.1f} s to stop the run"
    assert "NEXT RUN OK" in out, err[-2000:]


@pytest.mark.timeout(120)
def test_a_session_sharing_a_pool_dropped_by_another_gets_a_fresh_one():
    """After one Session's Ctrl-C kills and drops the shared pool, another Session on it runs on."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        y = tf.reduce_sum(x * 2.0)
    v = np.arange(6, dtype=np.float32)
    with tf.Session(graph=g, scheduler="processes", small_plan_bytes=0, num_workers=2) as s1, \
            tf.Session(graph=g, scheduler="processes", small_plan_bytes=0, num_workers=2) as s2:
        assert s1.run(y, {x: v}) == 30.0 and s2.run(y, {x: v}) == 30.0
        (pool,) = s1._executor._pools.values()
        assert next(iter(s2._executor._pools.values())) is pool
        s1._executor._drop_pool(pool)  # what a Ctrl-C in s1's run does once it killed the workers
        assert s2.run(y, {x: v}) == 30.0 and s1.run(y, {x: v}) == 30.0
        assert next(iter(s2._executor._pools.values())) is not pool
