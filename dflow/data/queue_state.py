"""What a TF1 queue holds in one session: elements, capacity, closing, blocking (no graph here).

A `QueueState` lives in `Session.resources` (dflow/data/queues.py makes it on first use), so
each Session has its own queues, as each has its own variables. Enqueues block while the queue
is full, dequeues while it holds too few elements; both wait on one condition variable, bounded
by the run's operation timeout (`DeadlineExceededError`, TF1's "Timed out waiting for
notification"). `close()` makes dequeues that cannot be served fail with `OutOfRangeError`
(TF1's message, which programs and logs match on) and new enqueues with `CancelledError`;
with `cancel_pending_enqueues` the blocked enqueues fail too. Closing the session wakes every
waiter with `CancelledError`.

The kinds differ only in where an element goes and which one comes out: FIFO (also padding),
random (a seeded draw, keeping `min_after_dequeue` elements until the queue is closed), priority
(the smallest int64 first component; ties in insertion order).
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections import deque

import numpy as np

from ..errors import CancelledError, DeadlineExceededError, OutOfRangeError

KINDS = {"fifo": "FIFOQueue", "padding_fifo": "PaddingFIFOQueue", "random_shuffle": "RandomShuffleQueue",
         "priority": "PriorityQueue"}


class QueueState:
    """One session's queue. Elements are lists of numpy arrays (one per component)."""

    def __init__(self, kind, resource_name, capacity, min_after_dequeue=0, seed=None):
        self.kind = kind
        self.type_name = KINDS[kind]
        self.resource_name = resource_name  # TF1's "_<n>_<op name>", as its messages say
        self.capacity = capacity
        self.min_after_dequeue = min_after_dequeue if kind == "random_shuffle" else 0
        self._rng = np.random.default_rng(seed)
        self._items = [] if kind in ("random_shuffle", "priority") else deque()
        self._order = itertools.count()  # priority ties: insertion order
        self._cond = threading.Condition()
        self.closed = False
        self._cancelled = False  # close(cancel_pending_enqueues=True)
        self._session_closed = False

    def __len__(self):
        return len(self._items)

    # ---- waiting ------------------------------------------------------------------------------
    def _wait(self, ready, timeout, op, admitted=True):
        """Waits (holding the condition) until `ready()`; raises when the session closes, the run's
        operation timeout passes, or (for an admitted enqueue) the pending enqueues are cancelled."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not ready():
            if self._session_closed:
                raise CancelledError(None, op, f"{self._what(op)}: the session was closed while it waited on "
                                     f"{self.type_name} '{self.resource_name}'")
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise DeadlineExceededError(None, op, "Timed out waiting for notification")
            self._cond.wait(left if left is not None else 1.0)

    @staticmethod
    def _what(op):
        return getattr(op, "name", "queue op")

    # ---- enqueue ------------------------------------------------------------------------------
    def enqueue(self, elements, timeout, op):
        """Adds `elements` (a list of elements) one at a time as room frees up (TF1's enqueue_many
        is not atomic either); CancelledError once the queue is closed."""
        with self._cond:
            if self.closed:
                raise CancelledError(None, op, f"{self.type_name} '{self.resource_name}' is closed.")
            for element in elements:
                def room():
                    return self._cancelled or len(self._items) < self.capacity
                self._wait(room, timeout, op)
                if self._cancelled:
                    raise CancelledError(None, op, f"{self.type_name} '{self.resource_name}' is closed.")
                self._put(element)
                self._cond.notify_all()

    def _put(self, element):
        if self.kind == "priority":
            heapq.heappush(self._items, (int(np.asarray(element[0])), next(self._order), element))
        else:
            self._items.append(element)

    # ---- dequeue ------------------------------------------------------------------------------
    def dequeue(self, n, timeout, op, up_to=False):
        """`n` elements (a list), waiting until there are enough; when the queue is closed with
        fewer, OutOfRangeError (TF1's message), or what is left for `up_to` (at least one)."""
        with self._cond:
            def enough():
                return self.closed or len(self._items) - self.min_after_dequeue >= n
            self._wait(enough, timeout, op)
            size = len(self._items)
            if size < n:  # closed
                if not (up_to and size > 0):
                    raise OutOfRangeError(None, op, f"{self.type_name} '{self.resource_name}' is closed and has "
                                          f"insufficient elements (requested {n}, current size {size})")
                n = size
            out = [self._take() for _ in range(n)]
            self._cond.notify_all()
            return out

    def _take(self):
        if self.kind == "priority":
            return heapq.heappop(self._items)[2]
        if self.kind == "random_shuffle":  # TF's draw: a random index swapped with the last one
            i = int(self._rng.integers(len(self._items)))
            self._items[i], self._items[-1] = self._items[-1], self._items[i]
            return self._items.pop()
        return self._items.popleft()

    def give_back(self, elements):
        """Elements a failed run dequeued, put back at the front (past capacity if need be)."""
        with self._cond:
            for element in reversed(elements):
                if self.kind == "priority":
                    self._put(element)
                elif self.kind == "random_shuffle":
                    self._items.append(element)
                else:
                    self._items.appendleft(element)
            self._cond.notify_all()

    # ---- closing ------------------------------------------------------------------------------
    def close_queue(self, cancel_pending_enqueues=False):
        with self._cond:
            self.closed = True
            self._cancelled = self._cancelled or bool(cancel_pending_enqueues)
            self._cond.notify_all()

    def close(self):
        """The session closed (Session.close closes its resources): every waiter fails."""
        with self._cond:
            self._session_closed = True
            self._cond.notify_all()
