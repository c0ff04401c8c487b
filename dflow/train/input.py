"""TF1's queue-based input pipeline: input producers and batching (`tf.train.string_input_producer`,
`batch`, `shuffle_batch`, their `_join` and `maybe_` forms), built as TF1 builds them.

A producer is a FIFOQueue filled by a QueueRunner with `enqueue_many` of its (shuffled) list;
`num_epochs` counts epochs in a local variable `<scope>/limit_epochs/epochs` through
`count_up_to`, so the runner's enqueue fails with OutOfRangeError after the last epoch and the
runner closes the queue. A batch is a queue (FIFO, padding FIFO for `dynamic_pad`, random
shuffle) filled by `num_threads` runner threads, read by `dequeue_many` (or `dequeue_up_to`
with `allow_smaller_final_batch`); the end of the input surfaces as TF1's OutOfRangeError
"FIFOQueue '_1_batch/fifo_queue' is closed and has insufficient elements (requested 32, ...)".
"""

from __future__ import annotations

import numpy as np

from ..data.queues import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from ..graph import dtypes
from ..graph.graph import control_dependencies, get_seed, name_scope
from ..graph.keys import GraphKeys
from ..graph.ops import Tensor
from ..graph.registry import def_host, not_differentiable, register_op
from ..kernels.array_ops import identity, shape
from ..kernels.common import apply_op, convert_to_tensor
from ..kernels.creation_ops import range as _range
from ..kernels.gather_ops import gather
from ..kernels.math_ops import cast, maximum
from ..kernels.sparse_ops import SparseTensor
from ..state.variables import Variable
from ..summary import scalar as _summary_scalar
from .queue_runner import QueueRunner, add_queue_runner

__all__ = ["limit_epochs", "input_producer", "string_input_producer", "range_input_producer",
           "slice_input_producer", "batch", "maybe_batch", "batch_join", "maybe_batch_join", "shuffle_batch",
           "maybe_shuffle_batch", "shuffle_batch_join", "maybe_shuffle_batch_join"]


# ---- the producers' shuffle: a new permutation of the first dimension per run ------------------
# (TF1 uses tf.random_shuffle; this host op keeps one seeded generator per session and op.)

register_op("InputProducerShuffle", lambda inputs, attrs: (inputs[0].shape, inputs[0].dtype), stateful=True,
            state="host")
not_differentiable("InputProducerShuffle")


@def_host("InputProducerShuffle")
def _shuffle_host(h, op):
    def shuffled():
        (value,) = h.evaluate([op.inputs[0]])
        value = np.asarray(value)
        key = ("input producer shuffle", op)
        rng = h.resources.get(key)
        if rng is None:
            rng = h.resources.setdefault(key, np.random.default_rng(op.get_attr("seed")))
        return [value[rng.permutation(len(value))] if value.ndim else value]

    h.feed(op.outputs, h.txn.once(op, shuffled))


def _shuffle(tensor, seed):
    seed1, seed2 = get_seed(seed)
    seeds = None if seed1 is None and seed2 is None else [int(seed1), int(seed2)]
    return apply_op("InputProducerShuffle", [tensor], {"seed": seeds}, default_name="RandomShuffle",
                    graph=tensor.graph)


# ---- producers --------------------------------------------------------------------------------


def limit_epochs(tensor, num_epochs=None, name=None):
    """`tensor`, readable `num_epochs` times; then OutOfRangeError (counted by a local variable
    `limit_epochs/epochs`, which local_variables_initializer() must initialize)."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with name_scope(name, "limit_epochs", [tensor]) as scope:
        zero64 = convert_to_tensor(np.int64(0))
        epochs = Variable(zero64, name="epochs", trainable=False, collections=[GraphKeys.LOCAL_VARIABLES])
        counter = epochs.count_up_to(num_epochs)
        with control_dependencies([counter]):
            return identity(tensor, name=scope)


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None, capacity=32,
                   shared_name=None, summary_name=None, name=None, cancel_op=None):
    """A FIFOQueue of the rows of `input_tensor`, refilled each epoch by a QueueRunner (added to
    QUEUE_RUNNERS); rows shuffled per epoch when `shuffle`."""
    with name_scope(name, "input_producer", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape[1:].merge_with(element_shape if element_shape is not None
                                                          else input_tensor.shape[1:])
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or `element_shape` must be "
                             "specified")
        if shuffle:
            input_tensor = _shuffle(input_tensor, seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        q = FIFOQueue(capacity=capacity, dtypes=[input_tensor.dtype], shapes=[element_shape],
                      shared_name=shared_name, name=name)
        enq = q.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(q, [enq], cancel_op=cancel_op))
        if summary_name is not None:
            _summary_scalar(summary_name, cast(q.size(), dtypes.float32) * (1.0 / capacity))
        return q


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                          name=None, cancel_op=None):
    """A queue of the strings (file names) of `string_tensor`, `num_epochs` times (None: for
    ever), shuffled each epoch when `shuffle`."""
    not_null_err = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, Tensor) and not len(string_tensor):
        raise ValueError(not_null_err)
    with name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        return input_producer(string_tensor, [], num_epochs, shuffle, seed, capacity, shared_name,
                              f"fraction_of_{capacity}_full", scope, cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None, name=None):
    """A queue of the integers 0 .. limit-1 (int32), `num_epochs` times."""
    with name_scope(name, "input_producer", [limit]) as scope:
        range_tensor = _range(limit)
        return input_producer(range_tensor, [], num_epochs, shuffle, seed, capacity, shared_name,
                              f"fraction_of_{capacity}_full", scope)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                         name=None):
    """One row of each tensor of `tensor_list` per dequeue (the same row index for all)."""
    with name_scope(name, "input_producer", list(tensor_list)):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        first = tensor_list[0].shape
        range_size = first[0] if first.ndims and first[0] is not None else shape(tensor_list[0])[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                                     capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [gather(t, index) for t in tensor_list]


# ---- batching -----------------------------------------------------------------------------------


def _as_tensor_list(tensors):
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors)]
    if isinstance(tensors, (list, tuple)):
        return list(tensors)
    return [tensors]


def _as_original_type(original, dequeued):
    dequeued = dequeued if isinstance(dequeued, list) else [dequeued]
    if isinstance(original, dict):
        return dict(zip(sorted(original), dequeued))
    if isinstance(original, (list, tuple)):
        return dequeued
    return dequeued[0]


def _validate(tensor_list, what):
    if not tensor_list:
        raise ValueError(f"Expected at least one tensor in {what}().")
    out = []
    for t in tensor_list:
        if isinstance(t, SparseTensor):
            raise TypeError(f"{what}: SparseTensors are not supported by dflow's queue batching; use tf.data "
                            "(Dataset.batch batches them)")
        out.append(convert_to_tensor(t))
    return out


def _shapes(tensor_list_list, shapes, enqueue_many, dynamic_pad):
    if shapes is not None:
        return shapes
    out = []
    for i, t in enumerate(tensor_list_list[0]):
        s = t.shape
        if enqueue_many:
            if s.ndims == 0:
                raise ValueError(f"Cannot enqueue_many a scalar: tensor {t.name!r}")
            s = s[1:] if s.ndims is not None else s
        for other in tensor_list_list[1:]:
            o = other[i].shape
            s = s.merge_with(o[1:] if enqueue_many and o.ndims is not None else o)
        if not (s.is_fully_defined() or dynamic_pad and s.ndims is not None):
            raise ValueError(f"All shapes must be fully defined: {[str(t.shape) for t in tensor_list_list[0]]}")
        out.append(s)
    return out


def _keep(keep_input, enqueue_many):
    if keep_input is None:
        return None
    keep = convert_to_tensor(keep_input, dtype=dtypes.bool)
    if keep.shape.ndims not in (None, 0, 1) or (keep.shape.ndims == 1 and not enqueue_many):
        raise ValueError("`keep_input` must be a scalar, or a vector when enqueue_many is True")
    return keep


def _enqueue_ops(queue, tensor_list_list, threads, enqueue_many, keep):
    if len(tensor_list_list) == 1:  # one op, run by `threads` threads (TF1's `[op] * threads`)
        ops = [queue._enqueue_op(tensor_list_list[0], enqueue_many, None, keep)] * threads
    else:  # the _join forms: one op (one thread) per list
        ops = [queue._enqueue_op(tl, enqueue_many, None, keep) for tl in tensor_list_list]
    add_queue_runner(QueueRunner(queue, ops))


def _batch(tensors_list, batch_size, keep_input, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
           allow_smaller_final_batch, shared_name, name, what, default_scope, shuffle=None):
    originals = tensors_list[0]
    lists = [_as_tensor_list(t) for t in tensors_list]
    flat = [t for tl in lists for t in tl]
    with name_scope(name, default_scope, flat) as scope:
        lists = [_validate(tl, what) for tl in lists]
        if len({len(tl) for tl in lists}) > 1:
            raise ValueError(f"{what}: all tensor lists must have the same length")
        keep = _keep(keep_input, enqueue_many)
        types = [t.dtype for t in lists[0]]
        for tl in lists[1:]:
            if [t.dtype for t in tl] != types:
                raise TypeError(f"{what}: expected types {[d.name for d in types]}, got "
                                f"{[t.dtype.name for t in tl]}")
        shapes = _shapes(lists, shapes, enqueue_many, dynamic_pad)
        if shuffle is not None:
            min_after_dequeue, seed = shuffle
            queue = RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed,
                                       dtypes=types, shapes=shapes, shared_name=shared_name)
            _enqueue_ops(queue, lists, num_threads, enqueue_many, keep)
            full = cast(maximum(0, queue.size() - min_after_dequeue), dtypes.float32) * \
                (1.0 / (capacity - min_after_dequeue))
            _summary_scalar(f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full", full)
        else:
            cls = PaddingFIFOQueue if dynamic_pad else FIFOQueue
            queue = cls(capacity=capacity, dtypes=types, shapes=shapes, shared_name=shared_name)
            _enqueue_ops(queue, lists, num_threads, enqueue_many, keep)
            _summary_scalar(f"fraction_of_{capacity}_full", cast(queue.size(), dtypes.float32) * (1.0 / capacity))
        if allow_smaller_final_batch:
            dequeued = queue.dequeue_up_to(batch_size, name=scope)
        else:
            dequeued = queue.dequeue_many(batch_size, name=scope)
        return _as_original_type(originals, dequeued)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
          allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of `batch_size` of `tensors` (a list or dict) from a FIFOQueue filled by
    `num_threads` runner threads; `dynamic_pad` pads variable dimensions per batch;
    `allow_smaller_final_batch` gives the last, short batch instead of OutOfRangeError."""
    return _batch([tensors], batch_size, None, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, "batch", "batch")


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
                dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """`batch` of the elements for which `keep_input` is true."""
    return _batch([tensors], batch_size, keep_input, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, "maybe_batch", "batch")


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
               allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches mixing the lists of `tensors_list`, one runner thread enqueuing each."""
    return _batch(list(tensors_list), batch_size, None, 1, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, "batch_join", "batch_join")


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False, shapes=None,
                     dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch(list(tensors_list), batch_size, keep_input, 1, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, "maybe_batch_join", "batch_join")


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None, enqueue_many=False,
                  shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches drawn at random from a RandomShuffleQueue that keeps `min_after_dequeue` elements
    (until its input ends) for mixing."""
    return _batch([tensors], batch_size, None, num_threads, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, shared_name, name, "shuffle_batch", "shuffle_batch",
                  shuffle=(min_after_dequeue, seed))


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input, num_threads=1, seed=None,
                        enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch([tensors], batch_size, keep_input, num_threads, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, shared_name, name, "maybe_shuffle_batch", "shuffle_batch",
                  shuffle=(min_after_dequeue, seed))


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None, enqueue_many=False,
                       shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch(list(tensors_list), batch_size, None, 1, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, shared_name, name, "shuffle_batch_join", "shuffle_batch_join",
                  shuffle=(min_after_dequeue, seed))


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input, seed=None,
                             enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None,
                             name=None):
    return _batch(list(tensors_list), batch_size, keep_input, 1, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, shared_name, name, "maybe_shuffle_batch_join", "shuffle_batch_join",
                  shuffle=(min_after_dequeue, seed))

