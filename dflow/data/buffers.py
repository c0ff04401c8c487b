"""Buffered stages: `shuffle` (TF's buffer algorithm, seeded) and `prefetch` (a background thread
filling a bounded queue). Memory is bounded by their buffers: `buffer_size` elements each."""

from __future__ import annotations

import queue
import secrets
import threading

import numpy as np

from ..errors import InvalidArgumentError
from ..kernels.cores import busy_thread
from .node import Node, failed, int_arg, int_value, rng, rows_of
from .transforms import AUTOTUNE

_AUTOTUNE_PREFETCH = 4  # elements prefetched for buffer_size=AUTOTUNE


class ShuffleNode(Node):
    """`shuffle`: a buffer of `buffer_size` elements; each output is a uniformly chosen element of
    the buffer, whose slot the next input element takes; at the end the buffer drains in random
    order. Seeded: the same (seed, seed2) gives the same order in every session and scheduler;
    with `reshuffle_each_iteration`, each restart (a `repeat` epoch) draws a new order."""

    def __init__(self, node, buffer_size, seeds, reshuffle_each_iteration=True):
        self.size = int_arg(self, buffer_size)
        if isinstance(self.size, int) and self.size < 1:
            raise InvalidArgumentError(None, None, f"shuffle: buffer_size must be positive, got {buffer_size}")
        self.inputs = (node,)
        self.seeds = seeds  # (graph seed, op seed), or (None, None): drawn per iterator
        self.reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        self._token = secrets.randbits(32)
        super().__init__(node.spec)

    @property
    def row_blocks(self):
        return self.inputs[0].row_blocks

    def cardinality(self):
        return self.inputs[0].cardinality()

    def held_bytes(self):
        eb = self.max_element_bytes()
        return None if not isinstance(self.size, int) or eb is None else self.size * eb

    def describe_buffer(self):
        return f"shuffle buffer of {self.size} elements"

    def generator(self, ctx):
        """The random generator of this start of the stage."""
        k = ctx.start(self) if self.reshuffle else 0
        if self.seeds[0] is None and self.seeds[1] is None:
            return rng(ctx.seed, self._token, k)
        return rng(self.seeds[0], self.seeds[1], k)

    def iterate(self, ctx):
        if self.row_blocks:  # one algorithm per pipeline, whoever consumes it
            yield from rows_of(self.iterate_blocks(ctx))
            return
        r = self.generator(ctx)
        draws, j = r.random(1024), 0
        buf, size = [], int_value(ctx, self.size)
        if size < 1:
            raise InvalidArgumentError(None, None, f"shuffle: buffer_size must be positive, got {size}")
        for e in self.inputs[0].iterate(ctx):
            if failed(e):  # raised when the buffer meets it (TF1's fill)
                yield e
                continue
            if len(buf) < size:
                buf.append(e)
                continue
            if j == len(draws):
                draws, j = r.random(1024), 0
            i = int(draws[j] * size)
            j += 1
            out, buf[i] = buf[i], e
            yield out
        while buf:
            if j == len(draws):
                draws, j = r.random(1024), 0
            i = int(draws[j] * len(buf))
            j += 1
            buf[i], buf[-1] = buf[-1], buf[i]
            yield buf.pop()


    def iterate_blocks(self, ctx):
        """The buffer algorithm on blocks of rows: the buffer is an array of `buffer_size` rows;
        each piece of m new rows (m = buffer_size / 4, at least 1: TF's one-at-a-time for small
        buffers) takes m distinct random slots, whose rows are output and replaced by the piece.
        At the end the buffer drains in a random order."""
        r = self.generator(ctx)
        size = int_value(ctx, self.size)
        if size < 1:
            raise InvalidArgumentError(None, None, f"shuffle: buffer_size must be positive, got {size}")
        step = max(1, size // 4)
        buf, filled = None, 0
        for block in self.inputs[0].iterate_blocks(ctx):
            n, start = int(block[0].shape[0]), 0
            if buf is None and n:
                buf = tuple(np.empty((size,) + c.shape[1:], c.dtype) for c in block)
            while start < n:
                if filled < size:  # filling the buffer
                    take = min(size - filled, n - start)
                    for b, c in zip(buf, block):
                        b[filled:filled + take] = c[start:start + take]
                    filled, start = filled + take, start + take
                    continue
                take = min(step, n - start)
                slots = r.choice(size, take, replace=False) if take > 1 else r.integers(size, size=1)
                yield tuple(b[slots] for b in buf)
                for b, c in zip(buf, block):
                    b[slots] = c[start:start + take]
                start += take
        if filled:
            order = r.permutation(filled)
            yield tuple(b[:filled][order] for b in buf)


class PrefetchNode(Node):
    """`prefetch`: the upstream pipeline runs on a background thread, at most `buffer_size`
    elements ahead of the consumer; errors come out where they would have."""

    def __init__(self, node, buffer_size):
        n = int(buffer_size)
        if n == AUTOTUNE:
            n = _AUTOTUNE_PREFETCH
        if n < 0:
            raise InvalidArgumentError(None, None, f"prefetch: buffer_size must be >= 0 or AUTOTUNE, got {buffer_size}")
        self.size = n
        self.inputs = (node,)
        super().__init__(node.spec)

    def cardinality(self):
        return self.inputs[0].cardinality()

    def held_bytes(self):
        eb = self.max_element_bytes()  # (batches of an unknown last size: at most the full batch)
        return None if eb is None else (self.size + 1) * eb

    def describe_buffer(self):
        return f"prefetch of {self.size} elements"

    def iterate(self, ctx):
        if self.size == 0:
            yield from self.inputs[0].iterate(ctx)
            return
        q = queue.Queue(maxsize=self.size)
        stop = threading.Event()

        def put(item):
            while not stop.is_set():
                try:
                    q.put(item, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        def fill():
            try:
                for e in self.inputs[0].iterate(ctx):
                    if not put((0, e)):
                        return
                put((1, None))
            except BaseException as ex:  # noqa: BLE001 - handed to the consumer, raised there
                put((2, ex))

        t = threading.Thread(target=fill, name="dflow-data-prefetch", daemon=True)
        with busy_thread():  # its core is not BLAS's (cores.py)
            t.start()
            try:
                while True:
                    kind, v = q.get()
                    if kind == 0:
                        yield v
                    elif kind == 1:
                        return
                    else:
                        raise v
            finally:
                stop.set()
