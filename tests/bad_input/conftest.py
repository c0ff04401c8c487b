"""One Session per scheduler shared by the corpus's run-time cases (a processes pool starts once)."""

from __future__ import annotations

import pytest

import dflow as tf

SCHEDULERS = ["sync", "threads", "processes"]


class Env:
    """What a case sees: the shared `graph` and `sess` of its scheduler, a `tmp` directory, and
    `session(graph)` for a case that needs a Session of its own (closed after the case)."""

    def __init__(self, scheduler, graph, sess, tmp):
        self.scheduler = scheduler
        self.graph = graph
        self.sess = sess
        self.tmp = tmp
        self._own = []

    def session(self, graph=None, **kwargs):
        kwargs.setdefault("scheduler", self.scheduler or "sync")
        s = tf.Session(graph=graph, chunks=2, **kwargs)
        self._own.append(s)
        return s

    def close(self):
        for s in self._own:
            s.close()


@pytest.fixture(scope="session")
def shared_sessions():
    made = {}

    def get(scheduler):
        if scheduler not in made:
            graph = tf.Graph()
            with graph.as_default():
                x = tf.placeholder(tf.float32, [None], name="probe_x")
                probe = tf.reduce_sum(x * 2.0, name="probe")
            made[scheduler] = (graph, tf.Session(graph=graph, scheduler=scheduler, chunks=2), x, probe)
        return made[scheduler]

    yield get
    for _, sess, _, _ in made.values():
        sess.close()
