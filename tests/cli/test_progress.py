"""`dflow run`'s progress bar: one tqdm bar per local scheduler call, only for calls past its delay."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

import dflow as tf
from dflow.cli.progress import TaskProgress


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_bar_counts_the_calls_tasks(scheduler):
    x = tf.placeholder(tf.float32, [8, 8])
    y = tf.reduce_sum(tf.matmul(x, x) + 1.0)
    out = io.StringIO()
    with TaskProgress(delay=0, file=out), tf.Session(scheduler=scheduler, small_plan_bytes=0) as sess:
        assert sess.run(y, {x: np.ones((8, 8))}) == pytest.approx(8 * 8 * 9)
    totals = {int(t) for t in re.findall(r"\d+/(\d+) ?\[", out.getvalue())}
    assert len(totals) == 1 and totals.pop() > 0, out.getvalue()  # one bar, its total fixed from the start


def test_short_calls_print_nothing():
    out = io.StringIO()
    with TaskProgress(delay=60, file=out), tf.Session(scheduler="sync") as sess:
        sess.run(tf.constant(1.0) + 2.0)
    assert out.getvalue() == ""
