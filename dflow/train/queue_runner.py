"""`tf.train.QueueRunner`: threads that run a queue's enqueue ops until its input ends.

Each thread calls `sess.run(enqueue_op)` in a loop (concurrent runs of one Session, as TF1's
runners do); when an enqueue fails with OutOfRangeError (its input producer ran out of epochs)
or CancelledError (the queue was closed), the thread ends, and the last one to end runs the
close op, so the consumers' dequeues get OutOfRangeError once the queue is drained. A
coordinator's stop request runs the cancel op (close with cancel_pending_enqueues), which wakes
enqueues blocked on a full queue. Any other error is handed to the coordinator.
"""

from __future__ import annotations

import threading

from ..errors import CancelledError, OutOfRangeError
from ..graph.graph import get_default_graph
from ..graph.keys import GraphKeys
from ..platform import tf_logging as logging
from .coordinator import start_queue_runners

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]


class QueueRunner:
    """Holds a queue, its enqueue ops (one thread each), its close and cancel ops."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if queue_runner_def is not None:
            raise ValueError("QueueRunner: queue_runner_def (a MetaGraph's QueueRunnerDef) is not supported by dflow")
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        self._queue_closed_exception_types = tuple(queue_closed_exception_types or (OutOfRangeError, CancelledError))
        self._lock = threading.Lock()
        self._runs_per_session = {}
        self._exceptions_raised = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self):
        return self._enqueue_ops

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self):
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self):
        """Exceptions the threads raised when they ran without a coordinator."""
        return self._exceptions_raised

    @property
    def name(self):
        return self._queue.name

    def _run(self, sess, enqueue_op, coord=None):
        decremented = False
        try:
            while True:
                if coord is not None and coord.should_stop():
                    break
                try:
                    sess.run(enqueue_op)
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        if self._runs_per_session[sess] == 0:
                            try:
                                sess.run(self._close_op)
                            except Exception as e:  # noqa: BLE001 - TF1 ignores it too (logged)
                                logging.vlog(1, "Ignored exception: %s", str(e))
                    return
        except Exception as e:  # noqa: BLE001 - handed to the coordinator, or kept and re-raised
            if coord is not None:
                coord.request_stop(e)
            else:
                logging.error("Exception in QueueRunner: %s", str(e))
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, cancel_op, coord):
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception as e:  # noqa: BLE001 - the session may be closing
            logging.vlog(1, "Ignored exception: %s", str(e))

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """The threads running the enqueue ops (and, with a coordinator, one waiting to cancel);
        started if `start`. None of them twice for one session while they run."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []  # already running for this session
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord), daemon=daemon,
                                    name=f"QueueRunnerThread-{self.name}-{op.name}") for op in self._enqueue_ops]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop, args=(sess, self._cancel_op, coord),
                                            daemon=daemon, name=f"QueueRunnerThread-{self.name}-close_on_stop"))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            if start:
                t.start()
        return threads


def add_queue_runner(qr, collection=GraphKeys.QUEUE_RUNNERS):
    """Adds `qr` to the graph's QUEUE_RUNNERS collection (started by start_queue_runners)."""
    get_default_graph().add_to_collection(collection, qr)
