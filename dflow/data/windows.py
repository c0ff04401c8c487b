"""`window`: a dataset whose elements are datasets (windows of up to `size` input elements), for
`flat_map`/`interleave` to turn back into tensors (`flat_map(lambda w: w.batch(size))`).

A `WindowNode`'s element is a tuple of input elements (flat tuples), not tensors: only stages that
pass elements through (take, skip, repeat, shuffle, prefetch, shard) may follow it, and
`flat_map`/`interleave`, whose function receives one `Dataset` per component (nested as the input's
elements) built on `WindowComponentNode`s. Those read the current window from the inner pipeline's
context (`IterContext.with_values`, keyed by the `WindowFunction`), as a flat_map's inner pipeline
reads the function's outputs.
"""

from __future__ import annotations

import collections

from ..errors import InvalidArgumentError
from .node import Node, element_bytes, failed, int_arg, int_value
from .structure import ElementSpec


def _positive(what, v):
    if v < 1:
        raise InvalidArgumentError(None, None, f"window: {what} must be greater than zero, got {v}")
    return v


class WindowNode(Node):
    """`window(size, shift, stride, drop_remainder)`: window k holds the input elements at
    k*shift + j*stride for j < size (those that exist); with `drop_remainder` only full windows.
    Holds at most (size - 1) * stride + 1 input elements."""

    def __init__(self, node, size, shift=None, stride=1, drop_remainder=False):
        self.inputs = (node,)
        self.size = int_arg(self, size)
        self.shift = self.size if shift is None else int_arg(self, shift)
        self.stride = int_arg(self, stride)
        for what, v in (("size", self.size), ("shift", self.shift), ("stride", self.stride)):
            if isinstance(v, int):
                _positive(what, v)
        self.drop = bool(drop_remainder)
        super().__init__(node.spec)  # the spec of the windows' elements

    def held_bytes(self):
        eb = element_bytes(self.spec)
        if eb is None or not isinstance(self.size, int) or not isinstance(self.stride, int):
            return None
        return 2 * ((self.size - 1) * self.stride + 1) * eb  # the span + one window

    def describe_buffer(self):
        return f"window of {self.size}"

    def iterate(self, ctx):
        size, shift, stride = (_positive(w, int_value(ctx, v)) for w, v in
                               (("size", self.size), ("shift", self.shift), ("stride", self.stride)))
        span = (size - 1) * stride + 1
        source = self.inputs[0].iterate(ctx)
        buf, base, start, exhausted = collections.deque(), 0, 0, False
        while True:
            while not exhausted and base + len(buf) < start + span:
                try:
                    e = next(source)
                except StopIteration:
                    exhausted = True
                    continue
                if failed(e):  # raised in place of the window being gathered, whose elements are dropped (TF)
                    yield e
                    buf.clear()
                    base = start
                    continue
                buf.append(e)
            while buf and base < start:
                buf.popleft()
                base += 1
            if not buf or base != start:
                return
            window = tuple(buf[j] for j in range(0, min(len(buf), span), stride))
            if self.drop and len(window) < size:
                return
            yield window
            start += shift


class WindowComponentNode(Node):
    """Component `index` of the elements of the current window (a window's dataset): the window
    the context holds under `key` (its `WindowFunction`)."""

    def __init__(self, key, spec, index):
        self.key = key
        self.index = index
        super().__init__(ElementSpec(None, [spec.dtypes[index]], [spec.shapes[index]]))

    def iterate(self, ctx):
        rows = ctx.values.get(self.key)
        if rows is None:
            raise InvalidArgumentError(None, None, "window: a window's dataset was used outside the flat_map or "
                                       "interleave function it was given to")
        for e in rows:
            yield (e[self.index],)


class WindowFunction:
    """A `flat_map`/`interleave` function over windows, traced once on window datasets: the
    `FlatMapNode` protocol (`node`, `captured`, `dataset_context`) of `functions.Function`."""

    def __init__(self, fn, spec, make_dataset):
        parts = [make_dataset(WindowComponentNode(self, spec, i)) for i in range(len(spec))]
        nested = spec.nested(parts)
        out = fn(*nested) if isinstance(nested, tuple) and not hasattr(nested, "_fields") else fn(nested)
        node = getattr(out, "_node", None)
        if node is None:
            raise TypeError(f"flat_map over windows: the function must return a Dataset, got {type(out).__name__}")
        self.node = node
        self.captured = node.all_captured()

    def dataset_context(self, ctx, element):
        return ctx.with_values({self: element})
