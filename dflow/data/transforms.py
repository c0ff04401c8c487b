"""Element-wise and ordering stages: `map`, `filter`, `flat_map`, `interleave`, `repeat`, `take`,
`skip`, `shard`, `cache`. (Batching is batching.py; buffered stages, shuffle and prefetch, are
buffers.py.)"""

from __future__ import annotations

import collections
import os
import pickle
from concurrent.futures import ThreadPoolExecutor

from ..errors import FailedPreconditionError, InvalidArgumentError, OpError
from ..graph.dtypes import bool as tf_bool
from ..storage import files
from .csv_batches import decoded_elements, fused_batches
from .node import ElementError, Node, component, element_bytes, failed, int_arg, int_value

AUTOTUNE = -1


def parallelism(n):
    """`num_parallel_calls`/`cycle_length` as a thread count (AUTOTUNE: the machine's cores)."""
    if n is None:
        return 1
    n = int(n)
    if n == AUTOTUNE:
        return max(1, min(8, os.cpu_count() or 1))
    if n < 1:
        raise ValueError(f"num_parallel_calls must be positive or AUTOTUNE, got {n}")
    return n


class MapNode(Node):
    """`map(fn)`: fn's outputs per element; with `num_parallel_calls` > 1 elements are mapped on a
    thread pool, at most that many ahead, and come out in order (deterministic)."""

    maps_elements = True  # (a batch after it may decode CSV lines a block at a time: csv_batches.py)

    def __init__(self, node, fn, num_parallel_calls=None):
        self.inputs = (node,)
        self.fn = fn
        self.captured = fn.captured
        self.workers = parallelism(num_parallel_calls)
        super().__init__(fn.out_spec)

    def cardinality(self):
        return self.inputs[0].cardinality()

    def held_bytes(self):
        if self.workers == 1:
            return 0
        a, b = element_bytes(self.inputs[0].spec), element_bytes(self.spec)
        return None if a is None or b is None else self.workers * (a + b)

    def describe_buffer(self):
        return f"map on {self.workers} threads"

    def iterate(self, ctx):
        fn = self.fn
        fused = fused_batches(self, ctx) or decoded_elements(self, ctx)  # CSV lines decoded a block at a time
        if fused is not None:
            yield from fused
            return
        if self.workers == 1:
            for e in self.inputs[0].iterate(ctx):
                yield _mapped(fn, ctx, e)
            return
        pending = collections.deque()
        with ThreadPoolExecutor(self.workers, thread_name_prefix="dflow-data-map") as pool:
            try:
                for e in self.inputs[0].iterate(ctx):
                    pending.append(pool.submit(_mapped, fn, ctx, e))
                    if len(pending) >= self.workers:
                        yield pending.popleft().result()
                while pending:
                    yield pending.popleft().result()
            finally:
                for f in pending:
                    f.cancel()


def _mapped(fn, ctx, e):
    """fn's element for `e`, or an ElementError for it (an error upstream or in fn)."""
    if failed(e):
        return e
    try:
        return tuple(component(v) for v in fn(ctx, e))
    except OpError as err:
        return ElementError(err)


class FilterNode(Node):
    def __init__(self, node, predicate):
        out = predicate.out_spec
        if len(out) != 1 or out.dtypes[0] != tf_bool or out.shapes[0].ndims not in (None, 0):
            raise ValueError(f"filter: the predicate must return a scalar bool tensor, got {out.describe()}")
        self.inputs = (node,)
        self.fn = predicate
        self.captured = predicate.captured
        super().__init__(node.spec)

    def iterate(self, ctx):
        for e in self.inputs[0].iterate(ctx):
            if failed(e):
                yield e
                continue
            try:
                (keep,) = self.fn(ctx, e)
            except OpError as err:
                yield ElementError(err)
                continue
            if bool(keep):
                yield e


class FlatMapNode(Node):
    """`flat_map(fn)`, and `interleave(fn, cycle_length, block_length)` (TF's order: up to
    cycle_length inner datasets open, block_length elements from each in turn; an exhausted one is
    replaced by the next input element's dataset in its slot)."""

    def __init__(self, node, fn, cycle_length=1, block_length=1):
        self.inputs = (node,)
        self.fn = fn
        self.captured = fn.captured
        self.cycle = parallelism(cycle_length)
        self.block = int(block_length)
        if self.block < 1:
            raise ValueError(f"interleave: block_length must be positive, got {block_length}")
        super().__init__(fn.node.spec)

    def _inner(self, ctx, e):
        return self.fn.node.iterate(self.fn.dataset_context(ctx, e))

    def iterate(self, ctx):
        source = self.inputs[0].iterate(ctx)
        if self.cycle == 1:
            for e in source:
                if failed(e):
                    yield e
                else:
                    yield from self._inner(ctx, e)
            return
        slots = [None] * self.cycle
        source_done = False
        i = block = 0
        while True:
            if slots[i] is None and not source_done:
                try:
                    e = next(source)
                except StopIteration:
                    source_done = True
                else:
                    if failed(e):
                        yield e
                        continue
                    slots[i] = self._inner(ctx, e)
            if slots[i] is not None:
                try:
                    x = next(slots[i])
                except StopIteration:
                    slots[i] = None
                    i, block = (i + 1) % self.cycle, 0
                    continue
                yield x
                block += 1
                if block == self.block:
                    i, block = (i + 1) % self.cycle, 0
                continue
            if source_done and all(s is None for s in slots):
                return
            i, block = (i + 1) % self.cycle, 0


class RepeatNode(Node):
    def __init__(self, node, count):
        self.inputs = (node,)
        self.count = -1 if count is None else int_arg(self, count)
        super().__init__(node.spec)

    @property
    def row_blocks(self):
        return self.inputs[0].row_blocks

    @property
    def text_blocks(self):
        return self.inputs[0].text_blocks

    def cardinality(self):
        c = self.inputs[0].cardinality()
        return None if c is None or not isinstance(self.count, int) or self.count < 0 else c * self.count

    def iterate(self, ctx):
        yield from self._repeat(ctx, self.inputs[0].iterate)

    def iterate_blocks(self, ctx):
        yield from self._repeat(ctx, self.inputs[0].iterate_blocks)

    def iterate_text_blocks(self, ctx):
        yield from self._repeat(ctx, self.inputs[0].iterate_text_blocks)

    def _repeat(self, ctx, source):
        k, count = 0, int_value(ctx, self.count)
        while count < 0 or k < count:
            empty = True
            for e in source(ctx):
                empty = False
                yield e
            if empty:  # repeating an empty dataset forever would never yield: TF1 ends it too
                return
            k += 1


class TakeNode(Node):
    def __init__(self, node, count):
        self.inputs = (node,)
        self.count = int_arg(self, count)
        super().__init__(node.spec)

    def cardinality(self):
        c = self.inputs[0].cardinality()
        if not isinstance(self.count, int):
            return None
        if self.count < 0:
            return c
        return self.count if c is None else min(c, self.count)

    def iterate(self, ctx):
        count = int_value(ctx, self.count)
        if count == 0:
            return
        k = 0
        for e in self.inputs[0].iterate(ctx):
            yield e
            k += not failed(e)  # an element that failed does not count (TF1)
            if k == count:
                return


class SkipNode(Node):
    def __init__(self, node, count):
        self.inputs = (node,)
        self.count = int_arg(self, count)
        self.row_blocks = node.row_blocks  # skip(1) of a CSV's header keeps its lines in blocks
        self.text_blocks = node.text_blocks
        super().__init__(node.spec)

    def iterate_text_blocks(self, ctx):
        count = int_value(ctx, self.count)
        blocks = self.inputs[0].iterate_text_blocks(ctx)
        if count < 0:
            for _ in blocks:
                pass
            return
        for block in blocks:
            if count >= block.count:
                count -= block.count
                continue
            yield block if count == 0 else block.after(count)
            count = 0

    def iterate_blocks(self, ctx):
        count = int_value(ctx, self.count)
        blocks = self.inputs[0].iterate_blocks(ctx)
        if count < 0:
            for _ in blocks:
                pass
            return
        for block in blocks:
            n = int(block[0].shape[0])
            if count >= n:
                count -= n
                continue
            yield block if count == 0 else tuple(c[count:] for c in block)
            count = 0

    def iterate(self, ctx):
        count = int_value(ctx, self.count)
        if count < 0:
            for e in self.inputs[0].iterate(ctx):
                if failed(e):
                    yield e
            return
        k = 0
        for e in self.inputs[0].iterate(ctx):
            if k >= count or failed(e):  # an element that failed is raised, not skipped (TF1)
                yield e
            else:
                k += 1


class ShardNode(Node):
    def __init__(self, node, num_shards, index):
        num_shards, index = int(num_shards), int(index)
        if num_shards < 1 or not 0 <= index < num_shards:
            raise InvalidArgumentError(None, None, f"shard: index must be in [0, num_shards), got index {index} "
                                       f"and num_shards {num_shards}")
        self.inputs = (node,)
        self.n, self.index = num_shards, index
        super().__init__(node.spec)

    def iterate(self, ctx):
        k = 0
        for e in self.inputs[0].iterate(ctx):
            if failed(e):
                yield e
                continue
            if k % self.n == self.index:
                yield e
            k += 1


class IgnoreErrorsNode(Node):
    """`tf.data.experimental.ignore_errors()`: the elements whose making failed are dropped."""

    def __init__(self, node):
        self.inputs = (node,)
        super().__init__(node.spec)

    def iterate(self, ctx):
        for e in self.inputs[0].iterate(ctx):
            if not failed(e):
                yield e


class CacheNode(Node):
    """`cache(filename)`: the first complete pass is recorded (in memory, or in the file `filename`
    as a pickle stream written under a temporary name and renamed when complete); later passes of
    the same iterator (repeat) replay it, and a completed file serves every iterator."""

    def __init__(self, node, filename=""):
        self.inputs = (node,)
        self.filename = os.fspath(filename) if filename else ""
        super().__init__(node.spec)

    def held_bytes(self):
        if self.filename:
            return 0
        c, eb = self.inputs[0].cardinality(), element_bytes(self.spec)
        return None if c is None or eb is None else c * eb

    def describe_buffer(self):
        return "in-memory cache of the whole dataset"

    def iterate(self, ctx):
        if self.filename:
            yield from self._file(ctx)
            return
        done = ctx.memo.get(self)
        if done is not None:
            yield from done
            return
        recorded = []
        for e in self.inputs[0].iterate(ctx):
            if not failed(e):  # an element that failed is raised once, not replayed
                recorded.append(e)
            yield e
        ctx.memo[self] = recorded

    def _file(self, ctx):
        path = self.filename + ".dflow-cache"
        if os.path.isfile(path):
            with open(path, "rb") as f:
                while True:
                    try:
                        yield pickle.load(f)
                    except EOFError:
                        return
        if files.node_kind(path) not in ("missing", "file"):
            raise FailedPreconditionError(None, None, f"Dataset.cache: {path!r} exists and is not a cache file")
        # named by this process: a later one sweeps it if this one is killed mid-epoch (storage/files.py)
        files.sweep(os.path.dirname(os.path.abspath(path)))
        tmp = files.temp_path(os.path.abspath(path), "tmp")
        complete = False
        try:
            with open(tmp, "wb") as f:
                for e in self.inputs[0].iterate(ctx):
                    if not failed(e):
                        pickle.dump(e, f, protocol=pickle.HIGHEST_PROTOCOL)
                    yield e
            os.replace(tmp, path)
            complete = True
        except OSError as e:
            raise files.os_error(e, f"Dataset.cache: writing {path!r}") from None
        finally:
            if not complete:
                files.remove(tmp)
