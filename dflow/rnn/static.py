"""Unrolled RNNs: `static_rnn` and `static_bidirectional_rnn` (TF 1.15's rnn.py).

The cell is called once per input, in the scope `rnn` (or `scope`), reusing its variables after
the first step. With `sequence_length`, each step zeroes the outputs of rows whose sequence ended
and copies their state through. TF1 wraps each step in conds on the min/max length to skip work;
dflow always computes the step and selects (TF1's `skip_conditionals` path, as dynamic_rnn uses):
the values are the same.
"""

from __future__ import annotations

from ..graph import dtypes
from ..graph.ops import Tensor
from ..graph.shape import TensorShape
from ..kernels.array_ops import shape as shape_op
from ..kernels.array_ops import stack
from ..kernels.common import convert_to_tensor
from ..kernels.manip_ops import concat, unstack
from ..kernels.math_ops import cast
from ..kernels.sequence_ops import reverse_sequence
from ..state.scope import variable_scope
from . import nest
from .cell import assert_like_rnncell, zeros_of
from .step import copy_through, infer_state_dtype

__all__ = ["static_rnn", "static_bidirectional_rnn"]


def _initial_state(cell, initial_state, batch_size, dtype):
    if initial_state is not None:
        return initial_state
    if not dtype:
        raise ValueError("If no initial_state is provided, dtype must be specified")
    return cell.get_initial_state(inputs=None, batch_size=batch_size, dtype=dtype)


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """Runs `cell` over the list `inputs` (each [batch, depth], or nested), one step per entry.

    Returns (outputs, state): the list of outputs and the final state. With `sequence_length`
    (int [batch]) outputs past a row's length are zeros and its state is the state at its length.
    TypeError/ValueError for a non-cell, inputs that are not a non-empty list, unknown depths, no
    dtype without an initial_state.
    """
    assert_like_rnncell("cell", cell)
    if not nest.is_sequence(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    outputs = []
    with variable_scope(scope or "rnn") as varscope:
        flat_inputs = [convert_to_tensor(x) for x in nest.flatten(inputs)]
        first = flat_inputs[0]
        if first.shape.ndims != 1:
            fixed_batch = first.shape.with_rank_at_least(2)[0] if first.shape.ndims is not None else None
            for x in flat_inputs:
                shape = x.shape.with_rank_at_least(2)
                if fixed_batch is not None:
                    fixed_batch = fixed_batch.merge_with(shape[0])
                for i, size in enumerate(shape[1:].as_list()):
                    if size is None:
                        raise ValueError(f"Input size (dimension {i} of inputs) must be accessible via shape "
                                         "inference, but saw value None.")
        else:
            fixed_batch = first.shape[0]
        static_batch = fixed_batch.value if fixed_batch is not None else None
        batch_size = static_batch if static_batch is not None else shape_op(first)[0]
        inputs = nest.pack_sequence_as(inputs, flat_inputs)
        state = _initial_state(cell, initial_state, batch_size, dtype)
        if sequence_length is not None:
            sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
            if sequence_length.shape.ndims not in (None, 1):
                raise ValueError("sequence_length must be a vector of length batch_size")
            out_dtype = infer_state_dtype(dtype, state)
            zero_output = nest.map_structure(lambda s: zeros_of(batch_size, s, out_dtype), cell.output_size)
            sequence_length = cast(sequence_length, dtypes.int32)
        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            output, new_state = cell(input_, state)
            if sequence_length is not None:
                output, new_state = copy_through(time, sequence_length, zero_output, state, output, new_state)
            state = new_state
            outputs.append(output)
        return outputs, state


def reverse_seq(input_seq, lengths):
    """The list `input_seq` reversed in time, each row's first lengths[b] steps only (TF1's
    `_reverse_seq`); all of it without `lengths`."""
    if lengths is None:
        return list(reversed(input_seq))
    flat_steps = [nest.flatten(x) for x in input_seq]
    columns = []
    for parts in zip(*flat_steps):
        shape = TensorShape(None)
        for p in parts:
            shape = shape.merge_with(p.shape)
        joined = stack(list(parts))  # [time, batch, ...]
        reversed_ = unstack(reverse_sequence(joined, lengths, seq_axis=0, batch_axis=1), num=len(parts))
        for r in reversed_:
            r.set_shape(shape)
        columns.append(reversed_)
    return [nest.pack_sequence_as(input_seq[0], list(step)) for step in zip(*columns)]


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None, initial_state_bw=None, dtype=None,
                             sequence_length=None, scope=None):
    """A forward static_rnn (scope `fw`) and one over the reversed inputs (scope `bw`), in scope
    `bidirectional_rnn`. Returns (outputs, state_fw, state_bw); each output is the forward and
    (re-reversed) backward outputs concatenated on the last axis."""
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    if not nest.is_sequence(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    if sequence_length is not None and not isinstance(sequence_length, Tensor):
        sequence_length = convert_to_tensor(sequence_length)
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype, sequence_length,
                                             scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            reversed_inputs = reverse_seq(list(inputs), sequence_length)
            tmp, state_bw = static_rnn(cell_bw, reversed_inputs, initial_state_bw, dtype, sequence_length,
                                       scope=bw_scope)
    output_bw = reverse_seq(tmp, sequence_length)
    outputs = [nest.pack_sequence_as(fw, [concat([a, b], 1) for a, b in zip(nest.flatten(fw), nest.flatten(bw))])
               for fw, bw in zip(output_fw, output_bw)]
    return outputs, state_fw, state_bw
