"""A run-time op failure ends with where the user's code made the op (TF1's "Original stack
trace for 'name':"), trimmed to user frames, on every scheduler and eagerly."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe


def _bad_matmul():
    a = tf.placeholder(tf.float32, [None, 3])
    b = tf.placeholder(tf.float32, [None, None])
    product = tf.matmul(a, b)  # the line the message quotes
    return a, b, product


@pytest.mark.parametrize("scheduler", [None, "sync", "threads", "processes"])
def test_a_run_time_failure_says_where_the_op_was_made(scheduler):
    a, b, product = _bad_matmul()
    session = tf.Session(scheduler=scheduler) if scheduler else tf.Session()
    with session, pytest.raises(tf.errors.InvalidArgumentError) as caught:
        session.run(product, {a: np.ones((2, 3)), b: np.ones((4, 2))})
    message = str(caught.value)
    assert "Original stack trace for 'MatMul':" in message
    assert f'File "{__file__}", line' in message and "in _bad_matmul" in message
    assert "product = tf.matmul(a, b)  # the line the message quotes" in message
    trace = message[message.index("Original stack trace"):]
    assert "dflow" + "/" not in trace.replace(__file__, "")  # dflow's own frames are left out
    assert message.count("Original stack trace") == 1


def test_an_eager_kernel_failure_says_where_too():
    with tfe.eager_mode(), pytest.raises(tf.errors.InvalidArgumentError) as caught:
        tf.gather(np.ones(3), [5])  # out of range
    message = str(caught.value)
    assert "Original stack trace for 'GatherV2':" in message and "tf.gather(np.ones(3), [5])" in message
