"""TF1's queues (`tf.FIFOQueue`, `RandomShuffleQueue`, `PaddingFIFOQueue`, `PriorityQueue`) as
graph ops whose effects happen on the host, in the session.

Every queue op (enqueue, dequeue, size, close...) is a host op (`state="host"`), hooked with
`def_host` as the iterators' get_next is (data/iterator.py): when a run needs it, the session's
HostRun calls the hook, which finds this session's `QueueState` in `Session.resources` (made on
first use) and waits on it. An enqueue evaluates its inputs with a nested run first, then puts
them in (blocking while full); a dequeue takes elements (blocking while too few) and feeds them
to the plan. A run that fails after a dequeue hands its elements back (RunTransaction), so a
failed step does not lose them. Blocking is bounded by `ConfigProto(operation_timeout_in_ms)`
(or the run's `timeout_in_ms`): `DeadlineExceededError`. Queue runners (train/queue_runner.py)
call `Session.run(enqueue)` on their own threads while the program's thread dequeues: each run
waits in its own thread, on the queue's condition variable, never on a session lock.
"""

from __future__ import annotations

import itertools
import threading

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes as _dtypes
from ..graph.dtypes import as_dtype
from ..graph.graph import get_default_graph, get_seed
from ..graph.registry import def_host, not_differentiable, register_op
from ..graph.shape import TensorShape, as_shape
from ..kernels.common import apply_op, convert_to_tensor, to_bytes_array
from .queue_state import QueueState

__all__ = ["QueueBase", "FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue"]

_SCALAR = TensorShape([])


# ---- ops ------------------------------------------------------------------------------------------


def _queue_infer(inputs, attrs):
    return _SCALAR, _dtypes.string  # the handle (TF1's is a resource; dflow has none): the queue's name


def _dequeue_infer(inputs, attrs):
    q, n = attrs["queue"], attrs.get("n")
    if attrs.get("many"):
        lead = TensorShape([n if not attrs.get("up_to") else None])
        return [(lead.concatenate(s) if s is not None else TensorShape(None), d) for d, s in zip(q.dtypes, q._shapes)]
    return [(s if s is not None else TensorShape(None), d) for d, s in zip(q.dtypes, q._shapes)]


for _type in ("FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "PriorityQueueV2"):
    register_op(_type, _queue_infer, eager=lambda xp, queue: np.array(queue.name.encode(), dtype=object),
                stateful=True)
register_op("QueueEnqueueV2", lambda inputs, attrs: [], stateful=True, state="host", num_outputs=0)
register_op("QueueEnqueueManyV2", lambda inputs, attrs: [], stateful=True, state="host", num_outputs=0)
register_op("QueueCloseV2", lambda inputs, attrs: [], stateful=True, state="host", num_outputs=0)
for _type in ("QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2"):
    register_op(_type, _dequeue_infer, stateful=True, state="host", num_outputs=None)
register_op("QueueSizeV2", lambda inputs, attrs: (_SCALAR, _dtypes.int32), stateful=True, state="host")
register_op("QueueIsClosedV2", lambda inputs, attrs: (_SCALAR, _dtypes.bool), stateful=True, state="host")
not_differentiable("FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "PriorityQueueV2", "QueueEnqueueV2",
                   "QueueEnqueueManyV2", "QueueCloseV2", "QueueDequeueV2", "QueueDequeueManyV2",
                   "QueueDequeueUpToV2", "QueueSizeV2", "QueueIsClosedV2")

_NUMBERS = threading.Lock()


def queue_state(h, queue, op):
    """This session's state of `queue` (a QueueBase; one chosen by `from_list` is resolved here),
    made on first use and numbered as TF1 numbers its resources ("_0_fifo_queue")."""
    queue = queue._resolve(h, op)
    state = h.resources.get(queue)
    if state is None:
        with _NUMBERS:
            state = h.resources.get(queue)
            if state is None:
                counter = h.resources.setdefault("queue resource numbers", itertools.count())
                state = queue._new_state(f"_{next(counter)}_{queue.name}")
                h.resources[queue] = state
    return queue, state


@def_host("QueueEnqueueV2")
@def_host("QueueEnqueueManyV2")
def _enqueue_host(h, op):
    many = op.type == "QueueEnqueueManyV2"

    def put():
        values = h.evaluate(list(op.inputs[1:])) if len(op.inputs) > 1 else []
        queue, state = queue_state(h, op.get_attr("queue"), op)
        keep = np.asarray(values.pop()) if op.get_attr("keep") else None  # maybe_batch's keep_input
        elements = queue._elements(values, many, op)
        if keep is not None:
            if keep.ndim == 0:
                elements = elements if keep else []
            elif not many or keep.shape != (len(elements),):
                raise InvalidArgumentError(None, op, f"{op.name}: keep_input must be a scalar, or a vector of "
                                           f"the batch size {len(elements)} with enqueue_many, got shape "
                                           f"{list(keep.shape)}")
            else:
                elements = [e for e, k in zip(elements, keep) if k]
        if elements:
            state.enqueue(elements, h.operation_timeout, op)
        return True

    h.decisions[op] = h.txn.once(op, put)


def _dequeue_host(h, op):
    n, many, up_to = op.get_attr("n"), op.get_attr("many"), op.get_attr("up_to")

    def take():
        queue, state = queue_state(h, op.get_attr("queue"), op)
        if many:
            queue._check_many(op)
        elements = state.dequeue(n if many else 1, h.operation_timeout, op, up_to=up_to)
        h.txn.on_failure(lambda: state.give_back(elements))
        return queue._batched(elements, op) if many else elements[0]

    h.feed(op.outputs, h.txn.once(op, take))


for _type in ("QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2"):
    def_host(_type)(_dequeue_host)


@def_host("QueueCloseV2")
def _close_host(h, op):
    _, state = queue_state(h, op.get_attr("queue"), op)
    state.close_queue(op.get_attr("cancel_pending_enqueues"))
    h.decisions[op] = True


@def_host("QueueSizeV2")
def _size_host(h, op):
    _, state = queue_state(h, op.get_attr("queue"), op)
    h.feed(op.outputs, [np.int32(len(state))])


@def_host("QueueIsClosedV2")
def _is_closed_host(h, op):
    _, state = queue_state(h, op.get_attr("queue"), op)
    h.feed(op.outputs, [np.bool_(state.closed)])


# ---- the public classes --------------------------------------------------------------------------


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


class QueueBase:
    """TF1's queue: `enqueue`, `enqueue_many`, `dequeue`, `dequeue_many`, `dequeue_up_to`,
    `close`, `size`, `is_closed`; components have `dtypes`, optional `shapes` and `names`."""

    _kind = "fifo"
    _op_type = "FIFOQueueV2"

    def __init__(self, dtypes, shapes, names, queue_ref):
        self._dtypes = [as_dtype(d) for d in dtypes]
        self._shapes = [as_shape(s) for s in shapes] if shapes is not None else [None] * len(self._dtypes)
        self._names = list(names) if names is not None else None
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    def _init(self, capacity, dtypes, shapes, names, name, default_name, **attrs):
        dtypes = _as_list(dtypes)
        if shapes is not None:
            shapes = _as_list(shapes) if (isinstance(shapes, (list, tuple)) and shapes and
                                          not all(isinstance(d, (int, type(None))) for d in shapes)) else [shapes]
            if len(shapes) != len(dtypes):
                raise ValueError("Queue shapes must have the same length as dtypes")
        if names is not None:
            names = _as_list(names)
            if len(names) != len(dtypes):
                raise ValueError("Queue names must have the same length as dtypes")
        self.capacity = int(capacity)
        self._attrs = attrs
        ref = apply_op(self._op_type, [], {"queue": self}, name=name, default_name=default_name,
                       graph=get_default_graph())
        QueueBase.__init__(self, dtypes, shapes, names, ref)
        self._index = None

    # ---- properties ----
    @property
    def queue_ref(self):
        return self._queue_ref

    @property
    def name(self):
        return self._queue_ref.op.name

    @property
    def dtypes(self):
        return list(self._dtypes)

    @property
    def shapes(self):
        return [s if s is not None else TensorShape(None) for s in self._shapes]

    @property
    def names(self):
        return self._names

    def _new_state(self, resource_name):
        return QueueState(self._kind, resource_name, self.capacity)

    def _resolve(self, h, op):
        return self

    # ---- from_list ----
    @staticmethod
    def from_list(index, queues):
        """A queue that enqueues to and dequeues from `queues[index]` (`index` a scalar int32
        tensor): all queues must have the same dtypes, shapes and names."""
        if not queues or not all(isinstance(q, QueueBase) for q in queues):
            raise TypeError("A list of queues expected")
        first = queues[0]
        for i, q in enumerate(queues[1:], 1):
            if q.dtypes != first.dtypes:
                raise TypeError(f"Queue at index {i} has different component types: {q.dtypes} vs {first.dtypes}")
            if [s.as_list() if s.ndims is not None else None for s in q.shapes] != \
                    [s.as_list() if s.ndims is not None else None for s in first.shapes]:
                raise TypeError(f"Queue at index {i} has different component shapes")
            if q.names != first.names:
                raise TypeError(f"Queue at index {i} has different component names")
        return _SelectedQueue(convert_to_tensor(index, dtype=_dtypes.int32), list(queues))

    # ---- enqueue ----
    def _flat(self, vals, what):
        if isinstance(vals, dict):
            if self._names is None:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names) != sorted(vals.keys()):
                raise ValueError(f"Keys in dictionary to {what}: {sorted(vals.keys())} do not match the names "
                                 f"of the queue: {sorted(self._names)}")
            return [vals[k] for k in self._names]
        vals = _as_list(vals)
        if len(vals) != len(self._dtypes):
            raise ValueError(f"{what}: expected {len(self._dtypes)} components, got {len(vals)}")
        return vals

    def _convert(self, vals, what, many):
        tensors = []
        for i, (v, d, s) in enumerate(zip(self._flat(vals, what), self._dtypes, self._shapes)):
            t = convert_to_tensor(v, dtype=d, name=f"component_{i}")
            if s is not None:
                shape = t.shape
                if many:
                    if shape.ndims == 0:
                        raise ValueError(f"{what}: component {i} must have a batch dimension, got a scalar")
                    shape = shape[1:] if shape.ndims is not None else shape
                shape.assert_is_compatible_with(s)
            tensors.append(t)
        if many:
            sizes = {int(t.shape[0]) for t in tensors if t.shape.ndims and t.shape[0] is not None}
            if len(sizes) > 1:
                raise ValueError(f"{what}: the components have different batch sizes {sorted(sizes)}")
        return tensors

    def enqueue(self, vals, name=None):
        """The op adding one element (a tensor, a list/tuple of them, or a dict by `names`)."""
        return self._enqueue_op(vals, False, name)

    def enqueue_many(self, vals, name=None):
        """The op adding the elements sliced from the first dimension of each component."""
        return self._enqueue_op(vals, True, name)

    def _enqueue_op(self, vals, many, name, keep_input=None):
        """The enqueue op; `keep_input` (a bool scalar, or a vector over the batch with `many`):
        the elements to keep (tf.train.maybe_batch's), evaluated with the values."""
        tensors = self._convert(vals, "enqueue_many" if many else "enqueue", many)
        keep = [] if keep_input is None else [convert_to_tensor(keep_input, dtype=_dtypes.bool, name="keep_input")]
        return apply_op("QueueEnqueueManyV2" if many else "QueueEnqueueV2", [self._queue_ref] + tensors + keep,
                        {"queue": self, "keep": bool(keep)}, name=name,
                        default_name=f"{self._name}_EnqueueMany" if many else f"{self._name}_enqueue",
                        graph=self._queue_ref.graph)

    def _elements(self, values, many, op):
        """The run-time values of an enqueue as a list of elements, checked against the shapes."""
        values = [to_bytes_array(v) if d == _dtypes.string else np.asarray(v, dtype=d.np_dtype)
                  for v, d in zip(values, self._dtypes)]
        for i, (v, s) in enumerate(zip(values, self._shapes)):
            got = v.shape[1:] if many else v.shape
            if s is not None and not s.is_compatible_with(TensorShape(list(got))):
                raise InvalidArgumentError(None, op, f"Shape mismatch in tuple component {i}. Expected "
                                           f"{_dims(s)}, got {list(got)}")
        if not many:
            return [values]
        sizes = {v.shape[0] for v in values}
        if len(sizes) > 1:
            raise InvalidArgumentError(None, op, f"{op.name}: the components of enqueue_many have different "
                                       f"first dimensions {sorted(sizes)}")
        n = sizes.pop() if sizes else 0
        return [[np.array(v[k]) for v in values] for k in range(n)]

    # ---- dequeue ----
    def _outputs(self, out):
        out = _as_list(out) if isinstance(out, (list, tuple)) else [out]
        if self._names is not None:
            return dict(zip(self._names, out))
        return out[0] if len(out) == 1 else out

    def _dequeue(self, op_type, n, name, default):
        out = apply_op(op_type, [self._queue_ref], {"queue": self, "n": n, "many": n is not None,
                                                   "up_to": op_type == "QueueDequeueUpToV2"},
                       name=name, default_name=f"{self._name}_{default}", graph=self._queue_ref.graph)
        return self._outputs(out)

    def dequeue(self, name=None):
        """One element; blocks until there is one, OutOfRangeError once closed and empty."""
        return self._dequeue("QueueDequeueV2", None, name, "Dequeue")

    def dequeue_many(self, n, name=None):
        """`n` elements stacked; blocks until there are `n`, OutOfRangeError once closed with fewer."""
        return self._dequeue("QueueDequeueManyV2", int(n), name, "DequeueMany")

    def dequeue_up_to(self, n, name=None):
        """As dequeue_many, but a closed queue gives what it has left (at least one element)."""
        return self._dequeue("QueueDequeueUpToV2", int(n), name, "DequeueUpTo")

    def _check_many(self, op):
        if any(s is None or not s.is_fully_defined() for s in self._shapes):
            raise InvalidArgumentError(None, op, f"{self._type_name()}'s DequeueMany and DequeueUpTo require the "
                                       "components to have specified shapes.")

    def _type_name(self):
        return self._op_type[:-2]

    def _batched(self, elements, op):
        out = []
        for i, d in enumerate(self._dtypes):
            parts = [e[i] for e in elements]
            if parts:
                out.append(np.stack(parts))
            else:
                shape = [0] + (self._shapes[i].as_list() if self._shapes[i] is not None else [])
                out.append(np.empty(shape, dtype=d.np_dtype))
        return out

    # ---- the rest ----
    def close(self, cancel_pending_enqueues=False, name=None):
        """The op closing the queue: later enqueues fail (CancelledError), dequeues that cannot be
        served fail with OutOfRangeError; with `cancel_pending_enqueues`, blocked enqueues fail too."""
        return apply_op("QueueCloseV2", [self._queue_ref], {"queue": self,
                                                            "cancel_pending_enqueues": bool(cancel_pending_enqueues)},
                        name=name, default_name=f"{self._name}_Close", graph=self._queue_ref.graph)

    def size(self, name=None):
        """The number of elements (int32 scalar)."""
        return apply_op("QueueSizeV2", [self._queue_ref], {"queue": self}, name=name,
                        default_name=f"{self._name}_Size", graph=self._queue_ref.graph)

    def is_closed(self, name=None):
        """Whether the queue is closed (bool scalar)."""
        return apply_op("QueueIsClosedV2", [self._queue_ref], {"queue": self}, name=name,
                        default_name=f"{self._name}_Is_Closed", graph=self._queue_ref.graph)

    def __repr__(self):
        return f"<{type(self).__name__} '{self.name}' dtypes={[d.name for d in self._dtypes]}>"


def _dims(shape):
    return [d if d is not None else -1 for d in shape.as_list()]


class _SelectedQueue(QueueBase):
    """`QueueBase.from_list`: each op resolves `queues[index]` in its run."""

    def __init__(self, index, queues):
        first = queues[0]
        self._dtypes, self._shapes, self._names = list(first._dtypes), list(first._shapes), first._names
        self._queue_ref, self._name, self.capacity = first._queue_ref, first._name, first.capacity
        self._index_tensor = index
        self._queues = queues

    def _resolve(self, h, op):
        (i,) = h.txn.once((self, op), lambda: h.evaluate([self._index_tensor]))
        i = int(i)
        if not 0 <= i < len(self._queues):
            raise InvalidArgumentError(None, op, f"{op.name}: queue index {i} is out of range [0, {len(self._queues)})")
        return self._queues[i]


class FIFOQueue(QueueBase):
    """A first-in first-out queue of `capacity` elements."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None, name="fifo_queue"):
        self._init(capacity, dtypes, shapes, names, name, "fifo_queue")


class PaddingFIFOQueue(QueueBase):
    """A FIFO queue whose `dequeue_many` pads each component to the longest element of the batch
    (zeros, empty strings); `shapes` are required and may have unknown dimensions."""

    _kind = "padding_fifo"
    _op_type = "PaddingFIFOQueueV2"

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None, name="padding_fifo_queue"):
        if shapes is None:
            raise ValueError("shapes must be specified for PaddingFIFOQueue")
        self._init(capacity, dtypes, shapes, names, name, "padding_fifo_queue")

    def _check_many(self, op):
        pass  # padded to the batch's longest element

    def _batched(self, elements, op):
        out = []
        for i, d in enumerate(self._dtypes):
            parts = [e[i] for e in elements]
            rank = self._shapes[i].ndims
            dims = [max((p.shape[k] for p in parts), default=0) for k in range(rank)]
            fill = b"" if d == _dtypes.string else 0
            batch = np.full([len(parts)] + dims, fill, dtype=d.np_dtype)
            for j, p in enumerate(parts):
                batch[(j,) + tuple(slice(0, s) for s in p.shape)] = p
            out.append(batch)
        return out


class RandomShuffleQueue(QueueBase):
    """A queue that dequeues in random order, keeping at least `min_after_dequeue` elements until
    it is closed; `seed` (with the graph seed) makes the order repeat from session to session."""

    _kind = "random_shuffle"
    _op_type = "RandomShuffleQueueV2"

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None, shared_name=None,
                 name="random_shuffle_queue"):
        self.min_after_dequeue = int(min_after_dequeue)
        seed1, seed2 = get_seed(seed)
        self._seed = None if seed1 is None and seed2 is None else [int(seed1), int(seed2)]
        self._init(capacity, dtypes, shapes, names, name, "random_shuffle_queue")

    def _new_state(self, resource_name):
        return QueueState(self._kind, resource_name, self.capacity, self.min_after_dequeue, self._seed)


class PriorityQueue(QueueBase):
    """A queue whose elements come out in ascending order of their first component, an int64
    scalar priority that `enqueue` takes before the `types` components (and `dequeue` returns)."""

    _kind = "priority"
    _op_type = "PriorityQueueV2"

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None, name="priority_queue"):
        types = [_dtypes.int64] + _as_list(types)
        if shapes is not None:
            shapes = [TensorShape([])] + _as_list(shapes)
        self._init(capacity, types, shapes, None if names is None else ["priority"] + _as_list(names), name,
                   "priority_queue")
