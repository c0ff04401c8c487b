"""Process-wide Session settings (`dflow.config.set_default_session_settings`, what `dflow run` sets)."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf


@pytest.fixture
def settings():
    yield tf.config.set_default_session_settings
    tf.config.set_default_session_settings()


def test_sessions_without_their_own_settings_take_them(settings):
    settings(scheduler="sync", memory_budget="1GB", num_workers=2)
    assert tf.config.default_session_settings() == {"scheduler": "sync", "memory_budget": "1GB", "num_workers": 2}
    x = tf.placeholder(tf.float32, [3])
    with tf.Session() as sess:
        assert sess.scheduler == "sync" and sess.memory_budget == 10**9
        np.testing.assert_allclose(sess.run(tf.reduce_sum(x * 2.0), {x: [1, 2, 3]}), 12.0)
    with tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="2GB") as sess:  # the program's own settings win
        assert sess.scheduler == "threads" and sess.memory_budget == 2 * 10**9


def test_cleared_settings_restore_the_defaults(settings):
    settings(scheduler="sync")
    settings()
    assert tf.config.default_session_settings() == {}
    with tf.Session() as sess:
        assert sess.scheduler == "threads" and sess.memory_budget is None
