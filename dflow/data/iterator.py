"""Iterators: graph ops whose values come from a pipeline iterated on the host.

`get_next()` is an `IteratorGetNext` op with `state="host"`: when a run needs it, the session's
HostRun calls its hook, which pulls the next element from this session's `IteratorState` (kept in
`Session.resources`, beside the variables) and feeds it to the plan, as a while loop's results
are fed. The pull goes through the run's RunTransaction: if the run fails, the element is handed
back and the next run gets it again, so a failed run does not advance the iterator. The pipeline
runs in the session's process whatever the scheduler; only its elements enter the plan.

An initializer (`MakeIterator`, an op without outputs, also `state="host"`) evaluates the graph
tensors its dataset captured (placeholders fed through `feed_dict` included) and, if the run
succeeds, replaces the session's state of that iterator with a fresh one.
"""

from __future__ import annotations

import secrets
import threading
import weakref

import numpy as np

from ..errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    OpError,
    OutOfRangeError,
    ResourceExhaustedError,
)
from ..graph.dtypes import string
from ..graph.graph import executing_eagerly, get_default_graph
from ..graph.registry import def_host, not_differentiable, register_op
from ..kernels.common import apply_op, constant, convert_to_tensor, to_bytes_array
from .node import IterContext, buffered_bytes, failed
from .structure import ElementSpec, flatten, is_structure, pack


def _get_next_infer(inputs, attrs):
    spec = attrs["iterator"].spec
    return [(s, d) for d, s in zip(spec.dtypes, spec.shapes)]


register_op("IteratorGetNext", _get_next_infer, stateful=True, state="host", num_outputs=None)
register_op("MakeIterator", lambda inputs, attrs: [], stateful=True, state="host", num_outputs=0)
not_differentiable("IteratorGetNext", "MakeIterator")  # elements are data, as in TF1


@def_host("IteratorGetNext")
def _get_next_host(h, op):
    iterator = op.get_attr("iterator")
    if op.inputs:  # a feedable iterator: its string handle names the iterator to pull from
        (handle,) = h.evaluate([op.inputs[0]])
        iterator = _by_handle(handle, iterator.spec, op)

    def pull():
        state = h.resources.get(iterator)
        if state is None:
            state = iterator._start_one_shot(h, op)
            h.resources[iterator] = state
        return state.pull(h.txn, op)

    h.feed(op.outputs, h.txn.once(op, pull))


@def_host("MakeIterator")
def _make_iterator_host(h, op):
    iterator = op.get_attr("iterator")
    new = IteratorState.start(op.get_attr("node"), h, op)

    def install():
        old = h.resources.get(iterator)
        h.resources[iterator] = new
        if old is not None:
            old.close()

    h.txn.on_success(install)
    h.txn.on_failure(new.close)
    h.decisions[op] = True


def _mib(n):
    return f"{n / (1 << 20):.1f} MiB"


class IteratorState:
    """One session's position in one iterator: the running pipeline, and elements that failed
    runs handed back (given out again first)."""

    def __init__(self, node, values, seed):
        self.spec = node.spec
        self._it = node.iterate(IterContext(values, seed))
        self._returned = []
        self._done = False
        self._lock = threading.Lock()  # runs of one session on several threads pull in turn

    @classmethod
    def start(cls, node, h, op=None):
        """A fresh state of `node`'s pipeline: its captured tensors evaluated in this run. With a
        session `memory_budget`, a pipeline whose buffers cannot fit in it is refused."""
        if h.memory_budget:
            total, parts, _ = buffered_bytes(node)
            if total > h.memory_budget:
                what = ", ".join(f"{name} ({_mib(b)})" for name, b in parts)
                raise ResourceExhaustedError(None, op, f"{getattr(op, 'name', 'iterator')}: the input pipeline's "
                                             f"buffers hold up to {_mib(total)} ({what}), over the session's "
                                             f"memory_budget of {_mib(h.memory_budget)}; use smaller buffers, "
                                             "batches or chunks")
        captured = node.all_captured()
        values = dict(zip(captured, h.evaluate(captured))) if captured else {}
        return cls(node, values, secrets.randbits(32))

    def pull(self, txn, op):
        with self._lock:
            return self._pull(txn, op)

    def _pull(self, txn, op):
        if self._returned:
            e = self._returned.pop()
        else:
            if self._done:
                raise OutOfRangeError(None, op, "End of sequence")
            try:
                e = next(self._it)
            except StopIteration:
                self._done = True
                raise OutOfRangeError(None, op, "End of sequence") from None
            except OpError:
                self._done = True
                raise
            except Exception as ex:  # noqa: BLE001 - a user function or generator failed
                self._done = True
                raise InvalidArgumentError(None, op, f"{op.name}: the input pipeline failed: "
                                           f"{type(ex).__name__}: {ex}") from ex
            if failed(e):  # this element's error; the next get_next goes on (TF1)
                raise e.error
            e = self._checked(e, op)
        txn.on_failure(lambda: self._give_back(e))
        return e

    def _give_back(self, e):
        with self._lock:
            self._returned.append(e)

    def _checked(self, e, op):
        out = []
        for i, (v, d, s) in enumerate(zip(e, self.spec.dtypes, self.spec.shapes)):
            v = to_bytes_array(v) if isinstance(v, bytes) else np.asarray(v)  # |S would drop trailing NULs
            if d == string and v.dtype.kind in "SU":  # numpy's fixed-width strings: TF1's value is bytes
                v = to_bytes_array(v)
            if v.dtype != d.np_dtype or not s.is_compatible_with(v.shape):
                raise InvalidArgumentError(None, op, f"{op.name}: component {i} of the element has dtype {v.dtype} "
                                           f"and shape {list(v.shape)}; the iterator expects {d.name} {s}")
            out.append(v)
        return out

    def close(self):
        self._it.close()


_HANDLES = weakref.WeakValueDictionary()  # string handle -> Iterator


def _by_handle(handle, spec, op):
    handle = np.asarray(handle).item() if np.ndim(handle) == 0 else handle  # a 0-d object array of bytes
    key = handle.encode() if isinstance(handle, str) else bytes(handle)
    target = _HANDLES.get(key)
    if target is None:
        raise InvalidArgumentError(None, op, f"{op.name}: {key!r} is not the string handle of an iterator")
    if not target.spec.compatible(spec):
        raise InvalidArgumentError(None, op, f"{op.name}: the iterator of handle {key!r} gives "
                                   f"{target.spec.describe()}, expected {spec.describe()}")
    return target


class Iterator:
    """TF1's `tf.data.Iterator`: `get_next()`, an `initializer` (initializable and reinitializable
    iterators) or a dataset iterated from the start in each session (one-shot); feedable
    iterators (`from_string_handle`) pull from the iterator whose `string_handle()` is fed."""

    def __init__(self, spec, one_shot=None, initializer=None, handle=None):
        self.spec = spec
        self._one_shot = one_shot  # the node a one-shot iterator iterates
        self._initializer = initializer
        self._handle_input = handle  # a feedable iterator's string handle tensor
        self._handle = f"dflow-iterator-{secrets.token_hex(8)}".encode()
        _HANDLES[self._handle] = self

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """A reinitializable iterator of elements of these types and shapes; `make_initializer(ds)`
        makes the op that starts it on `ds`."""
        template = pack(output_types, [None] * len(flatten(output_types))) if is_structure(output_types) else None
        return Iterator(ElementSpec.of(template, output_types, output_shapes))

    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer (use make_initializer(dataset))")
        return self._initializer

    @property
    def output_types(self):
        return self.spec.output_types

    @property
    def output_shapes(self):
        return self.spec.output_shapes

    @property
    def output_classes(self):
        return self.spec.output_classes

    def get_next(self, name=None):
        """The next element as (nested) tensors; running them pulls it. OutOfRangeError at the end."""
        inputs = [] if self._handle_input is None else [self._handle_input]
        out = apply_op("IteratorGetNext", inputs, {"iterator": self}, name=name, default_name="IteratorGetNext",
                       graph=get_default_graph())
        return self.spec.nested([out] if len(self.spec) == 1 else list(out))

    def make_initializer(self, dataset, name=None):
        """The op (re)starting this iterator on `dataset` (whose types must match)."""
        spec = dataset._node.spec
        if not spec.compatible(self.spec):
            raise TypeError(f"Expected output types {self.spec.output_types} and shapes {self.spec.output_shapes} "
                            f"but got dataset with output types {spec.output_types} and shapes "
                            f"{spec.output_shapes}.")
        return apply_op("MakeIterator", [], {"iterator": self, "node": dataset._node}, name=name,
                        default_name="make_initializer", graph=get_default_graph())

    def string_handle(self, name=None):
        """A scalar string tensor naming this iterator, to feed to `from_string_handle`'s placeholder."""
        return constant(self._handle, dtype=string, name=name or "IteratorToStringHandle")

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None, output_classes=None):
        """A feedable iterator: each run pulls from the iterator whose `string_handle()` value
        `string_handle` (a scalar string tensor, usually a placeholder) has in that run."""
        handle = convert_to_tensor(string_handle)
        if handle.dtype != string:
            raise TypeError(f"from_string_handle: expected a string tensor, got {handle.dtype.name}")
        template = pack(output_types, [None] * len(flatten(output_types))) if is_structure(output_types) else None
        return Iterator(ElementSpec.of(template, output_types, output_shapes), handle=handle)

    def _start_one_shot(self, h, op):
        if self._one_shot is None:
            raise FailedPreconditionError(None, op, "GetNext() failed because the iterator has not been "
                                          "initialized. Ensure that you have run the initializer operation for "
                                          "this iterator before getting the next element.")
        return IteratorState.start(self._one_shot, h, op)


# ---- eager iteration ------------------------------------------------------------------------------


class _NoTransaction:
    """Eager pulls are not part of a run: nothing to hand back on failure."""

    @staticmethod
    def on_failure(fn):
        pass


class _EagerOp:
    name = "Iterator"
    type = "IteratorGetNext"


class EagerIterator:
    """Python iteration over a dataset in eager mode (`for x in dataset`, TF1.5's
    `tfe.Iterator(dataset)`): elements are eager tensors, the pipeline runs on the host as a
    session's iterator does; the tensors the dataset captured are read when iteration starts."""

    def __init__(self, dataset):
        if not executing_eagerly():
            raise RuntimeError("dataset.__iter__() is only supported when eager execution is enabled.")
        node = dataset._node
        captured = node.all_captured()
        values = {t: np.asarray(t) for t in captured}
        self._state = IteratorState(node, values, secrets.randbits(32))
        self._spec = node.spec

    @property
    def output_types(self):
        return self._spec.output_types

    @property
    def output_shapes(self):
        return self._spec.output_shapes

    @property
    def output_classes(self):
        return self._spec.output_classes

    def __iter__(self):
        return self

    def __next__(self):
        try:
            element = self._state.pull(_NoTransaction, _EagerOp)
        except OutOfRangeError:
            raise StopIteration from None
        tensors = [constant(v) for v in element]
        return self._spec.nested(tensors)

    next = __next__

    def get_next(self, name=None):
        """The next element; OutOfRangeError at the end (as TF1.5's eager iterator)."""
        try:
            return self.__next__()
        except StopIteration:
            raise OutOfRangeError(None, None, "End of sequence") from None
