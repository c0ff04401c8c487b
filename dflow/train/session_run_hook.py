"""The hook protocol of monitored training (TF1's `tf.train.SessionRunHook` and friends).

A hook sees a MonitoredSession's life: `begin` (the graph can still change), `after_create_session`
(variables initialized or restored), `before_run`/`after_run` around every `run` (it may add
fetches, feeds and run options, and ask the loop to stop), and `end` (the session is closing
after a loop that did not fail).
"""

from __future__ import annotations

import collections

__all__ = ["SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues"]


class SessionRunHook:
    """Does nothing at each point of a MonitoredSession's life; subclasses override what they need."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """What a hook adds to a `run`: fetches (any structure Session.run takes), feeds, RunOptions."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunContext:
    """The `run` call a hook is called around: the caller's arguments, the raw session, and the
    stop request a hook can make."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        """Asks the loop to stop: `should_stop()` is True after this run."""
        self._stop_requested = True


class SessionRunValues(collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])):
    """What a hook gets back after a `run`: the values of the fetches it asked for."""
