"""What the static and dynamic drivers share: one step with sequence lengths (outputs zeroed and
state copied through past each sequence's end), batch sizes, batch/time transposes."""

from __future__ import annotations

from ..graph.ops import Tensor
from ..kernels.array_ops import shape as shape_op
from ..kernels.common import convert_to_tensor
from ..kernels.manip_ops import reshape, transpose
from ..kernels.math_ops import greater_equal, where
from ..kernels.tensor_array_ops import TensorArray
from . import nest


def infer_state_dtype(explicit_dtype, state):
    """`explicit_dtype`, else the dtype all of `state`'s tensors share (ValueError if they differ)."""
    if explicit_dtype is not None:
        return explicit_dtype
    flat = nest.flatten(state)
    if not flat or not all(isinstance(s, Tensor) for s in flat):
        raise ValueError(f"Unable to infer dtype from empty state or a state of non-tensors: {state!r}")
    dtypes_ = {s.dtype for s in flat}
    if len(dtypes_) > 1:
        raise ValueError(f"State has tensors of different inferred_dtypes. Unable to infer a single "
                         f"representative dtype. Dtypes received: {sorted(d.name for d in dtypes_)}")
    return flat[0].dtype


def best_effort_batch_size(flat_input):
    """The static batch size (dim 1 of time-major inputs) if any input knows it, else a tensor."""
    for x in flat_input:
        shape = x.shape
        if shape.ndims is None:
            continue
        if shape.ndims < 2:
            raise ValueError(f"Expected input tensor {x!r} to have rank at least 2")
        if shape[1].value is not None:
            return shape[1].value
    return shape_op(flat_input[0])[1]


def transpose_batch_time(x):
    """[batch, time, ...] <-> [time, batch, ...]; ValueError for rank < 2 (TF1's words)."""
    x = convert_to_tensor(x)
    rank = x.shape.ndims
    if rank is not None and rank < 2:
        raise ValueError(f"Expected input tensor {x!r} to have rank at least 2, but saw shape: {x.shape}")
    if rank is None:
        raise ValueError(f"dynamic_rnn needs inputs of known rank, got {x.name!r} of unknown rank")
    return transpose(x, [1, 0] + list(range(2, rank)))


def _rows(mask, like):
    """A [batch] bool mask shaped to select whole rows of `like` [batch, ...]."""
    rank = like.shape.ndims
    return mask if rank == 1 else reshape(mask, [-1] + [1] * (rank - 1))


def copy_through(time, sequence_length, zero_output, state, new_output, new_state):
    """TF1's `_rnn_step` without conditionals: rows whose sequence ended (time >= length) get
    zeros for the output and keep their old state; TensorArrays and scalars pass through."""
    done = greater_equal(time, sequence_length)

    def one(old, new):
        if isinstance(old, TensorArray) or (isinstance(old, Tensor) and old.shape.ndims == 0):
            return new
        return where(_rows(done, new), old, new)

    nest.assert_same_structure(state, new_state)
    out = nest.map_structure(one, zero_output, new_output)
    st = nest.map_structure(one, state, new_state)
    return out, st
