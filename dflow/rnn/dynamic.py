"""RNNs over time in a while loop: `dynamic_rnn`, `bidirectional_dynamic_rnn`, `raw_rnn`
(TF 1.15's rnn.py).

dynamic_rnn is built as TF1 builds it: the inputs go into TensorArrays (one per input, unstacked
over time), a `while_loop` carries (time, output TensorArrays, state), each iteration reads the
step's input, calls the cell (with sequence lengths: zero outputs and copied state past each
row's end) and writes the output; the outputs are stacked after the loop. The loop stops at the
longest sequence (min(time, max(1, max length))), as TF1's; the steps after it are zeros.

The host runs the loop (dflow/schedule/host.py): one cached plan per iteration. A cell called
for the first time makes its variables inside the loop body, as in TF1; the loop captures them,
so their gradients come out of the loop's reverse pass.
"""

from __future__ import annotations

from ..graph import dtypes
from ..graph.graph import control_dependencies, name_scope
from ..graph.ops import Tensor
from ..graph.shape import TensorShape
from ..kernels.array_ops import identity, stack
from ..kernels.array_ops import shape as shape_op
from ..kernels.check_ops import Assert
from ..kernels.common import convert_to_tensor
from ..kernels.control_flow_ops import while_loop
from ..kernels.creation_ops import zeros
from ..kernels.manip_ops import concat, reshape, reverse
from ..kernels.math_ops import (
    cast,
    equal,
    less,
    logical_not,
    logical_or,
    maximum,
    minimum,
    subtract,
    where,
)
from ..kernels.reduction_ops import reduce_all, reduce_max
from ..kernels.sequence_ops import reverse_sequence
from ..kernels.tensor_array_ops import TensorArray
from ..state.scope import variable_scope
from . import nest
from .cell import assert_like_rnncell, zeros_of
from .step import best_effort_batch_size, copy_through, infer_state_dtype, transpose_batch_time

__all__ = ["dynamic_rnn", "bidirectional_dynamic_rnn", "raw_rnn"]


def _sizes(size):
    return [size] if isinstance(size, int) else TensorShape(size).as_list()


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None, parallel_iterations=None,
                swap_memory=False, time_major=False, scope=None):
    """Runs `cell` over the time axis of `inputs` ([batch, time, depth], or [time, batch, depth]
    with `time_major`; nested inputs share batch and time) in a while loop.

    Returns (outputs, state): outputs [batch, time] + output_size (time-major with `time_major`),
    zeros past each row's `sequence_length`; state the final state, each row's state at its
    length. `parallel_iterations` and `swap_memory` are accepted (the loop runs one step at a time).
    TypeError for a non-cell; ValueError for unknown depths, mismatched batch or time, no dtype
    without initial_state; InvalidArgumentError at run time for a sequence_length not [batch].
    """
    assert_like_rnncell("cell", cell)
    with variable_scope(scope or "rnn"):
        flat_input = [convert_to_tensor(x) for x in nest.flatten(inputs)]
        if not time_major:
            flat_input = [transpose_batch_time(x) for x in flat_input]
        if sequence_length is not None:
            sequence_length = cast(sequence_length, dtypes.int32)
            if sequence_length.shape.ndims not in (None, 1):
                raise ValueError(f"sequence_length must be a vector of length batch_size, but saw shape: "
                                 f"{sequence_length.shape}")
            sequence_length = identity(sequence_length, name="sequence_length")
        batch_size = best_effort_batch_size(flat_input)
        if initial_state is not None:
            state = initial_state
        else:
            if not dtype:
                raise ValueError("If there is no initial_state, you must give a dtype.")
            state = cell.get_initial_state(inputs=None, batch_size=batch_size, dtype=dtype)
        if sequence_length is not None:
            expected = stack([convert_to_tensor(batch_size, dtype=dtypes.int32)])
            got = shape_op(sequence_length)
            check = Assert(reduce_all(equal(got, expected)),
                           [f"Expected shape for Tensor {sequence_length.name} is ", expected, " but saw shape: ", got])
            with control_dependencies([check]):
                sequence_length = identity(sequence_length, name="CheckSeqLen")
        inputs = nest.pack_sequence_as(inputs, flat_input)
        outputs, final_state = _dynamic_rnn_loop(cell, inputs, state, sequence_length, dtype)
        if not time_major:
            outputs = nest.map_structure(transpose_batch_time, outputs)
        return outputs, final_state


def _dynamic_rnn_loop(cell, inputs, state, sequence_length, dtype):
    flat_input = nest.flatten(inputs)
    flat_output_size = nest.flatten(cell.output_size)
    time_steps = shape_op(flat_input[0])[0]
    batch_size = best_effort_batch_size(flat_input)
    got_shapes = [x.shape.with_rank_at_least(3) for x in flat_input]
    const_time, const_batch = got_shapes[0].as_list()[:2]
    for shape in got_shapes:
        if not shape[2:].is_fully_defined():
            raise ValueError("Input size (depth of inputs) must be accessible via shape inference, but saw value "
                             "None.")
        if shape[0].value != const_time:
            raise ValueError("Time steps is not the same for all the elements in the input in a batch.")
        if shape[1].value != const_batch:
            raise ValueError("Batch_size is not the same for all the elements in the input.")
    if const_time is not None:
        time_steps = const_time
    out_dtype = infer_state_dtype(dtype, state)
    zero_output = nest.map_structure(lambda s: zeros_of(batch_size, s, out_dtype), cell.output_size)
    if sequence_length is not None:
        loop_bound = minimum(time_steps, maximum(1, reduce_max(sequence_length)))
    else:
        loop_bound = time_steps
    time = convert_to_tensor(0, dtype=dtypes.int32, name="time")
    with name_scope("dynamic_rnn") as base_name:
        pass
    input_ta = [TensorArray(x.dtype, size=time_steps, element_shape=x.shape[1:],
                            tensor_array_name=base_name + f"input_{i}").unstack(x)
                for i, x in enumerate(flat_input)]
    output_ta = [TensorArray(out_dtype, size=0, dynamic_size=True,
                             element_shape=TensorShape([const_batch]).concatenate(_sizes(size)),
                             tensor_array_name=base_name + f"output_{i}")
                 for i, size in enumerate(flat_output_size)]

    def read(t):
        step = [ta.read(t) for ta in input_ta]
        for x, shape in zip(step, got_shapes):
            x.set_shape(shape[1:])
        return nest.pack_sequence_as(inputs, step)

    def time_step(t, output_ta_t, state):
        output, new_state = cell(read(t), state)
        if sequence_length is not None:
            output, new_state = copy_through(t, sequence_length, zero_output, state, output, new_state)
        output_ta_t = [ta.write(t, out) for ta, out in zip(output_ta_t, nest.flatten(output))]
        return t + 1, output_ta_t, new_state

    _, final_ta, final_state = while_loop(lambda t, *_: less(t, loop_bound), time_step,
                                          loop_vars=(time, output_ta, state), maximum_iterations=time_steps)
    final_outputs = []
    for ta, size in zip(final_ta, flat_output_size):
        out = ta.stack()
        if sequence_length is not None:  # the steps after the longest sequence: zeros
            rest = subtract(time_steps, loop_bound)
            pad_shape = stack([rest, convert_to_tensor(batch_size, dtype=dtypes.int32)] + _sizes(size))
            out = concat([out, zeros(pad_shape, dtype=out_dtype)], 0)
        out.set_shape([const_time, const_batch] + _sizes(size))
        final_outputs.append(out)
    return nest.pack_sequence_as(cell.output_size, final_outputs), final_state


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None, initial_state_fw=None,
                              initial_state_bw=None, dtype=None, parallel_iterations=None, swap_memory=False,
                              time_major=False, scope=None):
    """A forward dynamic_rnn (scope `fw`) and one over the inputs reversed in time, each row up to
    its length (scope `bw`), in scope `bidirectional_rnn`.

    Returns ((output_fw, output_bw), (state_fw, state_bw)); output_bw is reversed back.
    """
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def rev(x):
        if sequence_length is not None:
            return reverse_sequence(x, sequence_length, seq_axis=time_axis, batch_axis=batch_axis)
        return reverse(x, axis=[time_axis])

    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(cell_fw, inputs, sequence_length=sequence_length,
                                              initial_state=initial_state_fw, dtype=dtype,
                                              parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                                              time_major=time_major, scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            inputs_reverse = nest.map_structure(rev, inputs)
            tmp, state_bw = dynamic_rnn(cell_bw, inputs_reverse, sequence_length=sequence_length,
                                        initial_state=initial_state_bw, dtype=dtype,
                                        parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                                        time_major=time_major, scope=bw_scope)
    output_bw = nest.map_structure(rev, tmp)
    return (output_fw, output_bw), (state_fw, state_bw)


def raw_rnn(cell, loop_fn, parallel_iterations=None, swap_memory=False, scope=None):
    """An RNN whose every step's input, finish flags and emitted output come from
    `loop_fn(time, cell_output, cell_state, loop_state)` -> (elements_finished, next_input,
    next_cell_state, emit_output, next_loop_state) (TF1's protocol; at time 0 cell_output and
    cell_state are None and next_cell_state is the initial state).

    Returns (emit_ta, final_state, final_loop_state): TensorArrays of the emitted outputs
    (zeros for finished rows), the final state (frozen per row once finished), the loop state
    (None when loop_fn gave none).
    """
    assert_like_rnncell("cell", cell)
    if not callable(loop_fn):
        raise TypeError("loop_fn must be a callable")
    with variable_scope(scope or "rnn"):
        time = convert_to_tensor(0, dtype=dtypes.int32)
        (elements_finished, next_input, initial_state, emit_structure,
         init_loop_state) = loop_fn(time=time, cell_output=None, cell_state=None, loop_state=None)
        elements_finished = convert_to_tensor(elements_finished)
        flat_input = [convert_to_tensor(x) for x in nest.flatten(next_input)]
        next_input = nest.pack_sequence_as(next_input, flat_input)
        loop_state = init_loop_state if init_loop_state is not None else convert_to_tensor(0, dtype=dtypes.int32)
        static_batch = None
        for x in flat_input:
            dim = x.shape.with_rank_at_least(1)[0]
            static_batch = dim.value if static_batch is None else static_batch
        batch_size = static_batch if static_batch is not None else shape_op(flat_input[0])[0]
        nest.assert_same_structure(initial_state, cell.state_size)
        state = nest.pack_sequence_as(initial_state, [convert_to_tensor(s) for s in nest.flatten(initial_state)])
        flat_state = nest.flatten(state)
        if emit_structure is not None:
            flat_emit = [convert_to_tensor(e) for e in nest.flatten(emit_structure)]
            flat_emit_size = [e.shape[1:].as_list() for e in flat_emit]
            flat_emit_dtypes = [e.dtype for e in flat_emit]
        else:
            emit_structure = cell.output_size
            flat_emit_size = [_sizes(s) for s in nest.flatten(emit_structure)]
            flat_emit_dtypes = [flat_state[0].dtype] * len(flat_emit_size)
        flat_emit_ta = [TensorArray(dt, size=0, dynamic_size=True,
                                    element_shape=TensorShape([static_batch]).concatenate(size),
                                    name=f"rnn_output_{i}")
                        for i, (dt, size) in enumerate(zip(flat_emit_dtypes, flat_emit_size))]
        emit_ta = nest.pack_sequence_as(emit_structure, flat_emit_ta)
        zero_emit = nest.pack_sequence_as(emit_structure, [zeros_of(batch_size, size, dt)
                                                           for size, dt in zip(flat_emit_size, flat_emit_dtypes)])
        def condition(unused_time, elements_finished, *_):
            return logical_not(reduce_all(elements_finished))

        def body(time, elements_finished, current_input, emit_ta, state, loop_state):
            next_output, cell_state = cell(current_input, state)
            nest.assert_same_structure(state, cell_state)
            nest.assert_same_structure(cell.output_size, next_output)
            next_time = time + 1
            (next_finished, next_input, next_state, emit_output,
             next_loop_state) = loop_fn(next_time, next_output, cell_state, loop_state)
            nest.assert_same_structure(state, next_state)
            nest.assert_same_structure(current_input, next_input)
            nest.assert_same_structure(emit_ta, emit_output)
            loop_state = loop_state if next_loop_state is None else next_loop_state

            def copy(current, candidate):
                def one(cur, cand):
                    if isinstance(cur, TensorArray) or (isinstance(cur, Tensor) and cur.shape.ndims == 0):
                        return cand
                    cand = convert_to_tensor(cand)
                    mask = elements_finished if cand.shape.ndims == 1 else \
                        _row_mask(elements_finished, cand.shape.ndims)
                    return where(mask, cur, cand)
                return nest.map_structure(one, current, candidate)

            emit_output = copy(zero_emit, emit_output)
            next_state = copy(state, next_state)
            emit_ta = nest.map_structure(lambda ta, e: ta.write(time, e), emit_ta, emit_output)
            elements_finished = logical_or(elements_finished, next_finished)
            return next_time, elements_finished, next_input, emit_ta, next_state, loop_state

        returned = while_loop(condition, body,
                              loop_vars=[time, elements_finished, next_input, emit_ta, state, loop_state])
        emit_ta, final_state, final_loop_state = returned[-3:]
        if init_loop_state is None:
            final_loop_state = None
        return emit_ta, final_state, final_loop_state


def _row_mask(mask, rank):
    return reshape(mask, [-1] + [1] * (rank - 1))
