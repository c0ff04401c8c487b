"""A corpus of user mistakes (issue #14): each raises a dflow error (or the TypeError/ValueError
TF1 raises while the graph is built) naming the op or tensor, never hangs, changes nothing on
disk, and leaves the shared Session usable. Run-time cases run on the sync, threads and
processes schedulers; build-time cases once. The cases are in the modules beside this one."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from dflow.errors import OpError

from . import cases_data, cases_feeds, cases_graphs, cases_shapes, cases_state  # noqa: F401 - register cases
from .conftest import SCHEDULERS, Env
from .corpus import CASES, tree

TF1_BUILD_ERRORS = (TypeError, ValueError, RuntimeError, KeyError)

PARAMS = [pytest.param(c, s, id=f"{c.id}-{s}") for c in CASES if c.when == "run" for s in SCHEDULERS] + \
    [pytest.param(c, None, id=f"{c.id}-build") for c in CASES if c.when == "build"]


def test_the_corpus_has_at_least_100_mistakes():
    assert len(CASES) >= 100, len(CASES)
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case, scheduler", PARAMS)
def test_mistake(case, scheduler, shared_sessions, tmp_path):
    if scheduler is not None:
        graph, sess, probe_x, probe = shared_sessions(scheduler)
    else:
        graph, sess, probe_x, probe = tf.Graph(), None, None, None
    env = Env(scheduler, graph, sess, tmp_path)
    try:
        with graph.as_default():
            act, names = case.fn(env)
            before = tree(tmp_path)
            with pytest.raises(case.error, match=case.match) as info:
                act()
        err = info.value
        assert isinstance(err, OpError) or (isinstance(err, TF1_BUILD_ERRORS)), type(err)
        message = str(err)
        for name in names:
            assert name in message, f"{name!r} not named in: {message}"
        assert "Traceback" not in message or "py_func" in case.id, message
        assert tree(tmp_path) == before, "the mistake changed files on disk"
        if sess is not None:  # the shared session still runs
            assert sess.run(probe, {probe_x: np.ones(3, np.float32)}) == 6.0
    finally:
        env.close()
