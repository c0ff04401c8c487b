"""`dflow explain SCRIPT`: the script runs as under `dflow run`, and each distinct Session.run's plan
is printed on stderr once, before that run."""

from __future__ import annotations

import io
import re

import numpy as np

import dflow as tf
from dflow.cli.explain import explaining

from .test_run import dflow_cli

SCRIPT = """\
import sys
import numpy as np
import dflow as tf

x = tf.placeholder(tf.float32, [None, 2], name="x")
w = tf.Variable(np.ones((2, 1), np.float32), name="w")
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0), name="loss")
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(int(sys.argv[1])):
        sess.run(train, {x: [[1.0, 2.0], [3.0, 4.0]]})
    print("w", sess.run(w).ravel().round(5).tolist(), sess.scheduler)
"""


def test_explain_prints_each_distinct_plan_once_and_runs_the_script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SCRIPT)
    out = dflow_cli("explain", str(path), "3", "--scheduler", "threads", "--always-dask", "--memory-budget", "1GB", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    w = np.ones((2, 1), np.float32)
    for _ in range(3):
        w = w - 0.1 * x.T @ (x @ w - 1.0)
    assert out.stdout.splitlines() == [f"w {w.ravel().round(5).tolist()} threads"]  # the script's stdout
    # three distinct runs (init, train ×3, w): three plans, each named by its fetches
    assert re.findall(r"dflow explain: Session.run #(\d+)", out.stderr) == ["1", "2", "3"]
    plans = re.findall(r"Plan for \[(.*?)\] on the threads scheduler", out.stderr)
    assert plans == ["init", "GradientDescent", "w:0"]
    assert out.stderr.count("budget: 953.7 MiB") == 3 and "projected peak" in out.stderr


def test_explain_reports_a_plan_it_cannot_show_and_goes_on():
    report = io.StringIO()
    x = tf.placeholder(tf.float32, [], name="x")
    y = tf.cond(x > 0, lambda: x * 2, lambda: x - 1)  # decided on the host, when x is known
    with explaining(report), tf.Session() as sess:
        assert sess.run(y, {x: 3.0}) == 6.0
        assert sess.run(y, {x: -3.0}) == -4.0  # the same fetches and feeds: no second report
    text = report.getvalue()
    assert text.count("dflow explain: Session.run #") == 1
    assert "(no plan to show: InvalidArgumentError" in text and "decided when the graph runs" in text
    assert tf.Session.run.__name__ == "run" and tf.Session.run.__qualname__ == "Session.run"  # restored
