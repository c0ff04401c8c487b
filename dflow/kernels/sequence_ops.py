"""`reverse_sequence` (TF1's ReverseSequence): each batch row's first `seq_lengths[b]` steps reversed.

The op is a permutation along the sequence axis, so its gradient is the same op on the incoming
gradient. On Dask the sequence axis is gathered into one chunk and the batch axis keeps its
chunks: one task per batch chunk, with the lengths of those rows.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..graph.registry import def_grad, register_op
from ..graph.shape import TensorShape
from .common import INT, apply_op, check_dtype, convert_to_tensor

__all__ = ["reverse_sequence"]

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _infer(inputs, attrs):
    x, lengths = inputs
    check_dtype(lengths, INT, "ReverseSequence", "seq_lengths")
    seq, batch = attrs["seq_dim"], attrs["batch_dim"]
    if lengths.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {lengths.shape.ndims} for 'ReverseSequence' "
                         f"(seq_lengths has shape {lengths.shape})")
    if x.shape.ndims is not None:
        rank = x.shape.ndims
        if not 0 <= seq < rank or not 0 <= batch < rank:
            raise ValueError(f"ReverseSequence: seq_dim {seq} and batch_dim {batch} must be in [0, {rank}) for an "
                             f"input of shape {x.shape}")
        if seq == batch:
            raise ValueError(f"ReverseSequence: seq_dim == batch_dim == {seq}")
        n, m = x.shape.as_list()[batch], lengths.shape.as_list()[0] if lengths.shape.ndims else None
        if n is not None and m is not None and n != m:
            raise ValueError(f"Dimensions must be equal, but are {n} and {m} for 'ReverseSequence' with input "
                             f"shapes: {x.shape}, {lengths.shape}.")
    return TensorShape(x.shape), x.dtype


def _reverse(xp, x, lengths, *, seq_dim, batch_dim):
    lengths = np.asarray(lengths).astype(np.int64).reshape(-1)
    steps = x.shape[seq_dim]
    for b, n in enumerate(lengths):
        if n < 0:
            raise InvalidArgumentError(None, None, f"seq_lens({b}) < 0")
        if n > steps:
            raise InvalidArgumentError(None, None, f"seq_lens({b}) > input.dims({seq_dim})")
    t = np.arange(steps)
    idx = np.where(t[None, :] < lengths[:, None], lengths[:, None] - 1 - t[None, :], t[None, :])  # [batch, steps]
    if batch_dim > seq_dim:
        idx = idx.T
    shape = [1] * x.ndim
    shape[batch_dim], shape[seq_dim] = len(lengths), steps
    idx = xp.broadcast_to(xp.asarray(idx.reshape(shape)), tuple(x.shape))
    take = getattr(xp, "take_along_axis", np.take_along_axis)
    return take(x, idx, axis=seq_dim)


def _lower(ctx, x, lengths, *, seq_dim, batch_dim):
    da = ctx.da
    x = ctx.as_dask(x)
    x = x.rechunk({seq_dim: -1})
    lengths = ctx.as_dask(lengths).rechunk((x.chunks[batch_dim],))
    ind = _LETTERS[:x.ndim]
    return da.blockwise(_block, ind, x, ind, lengths, ind[batch_dim], seq_dim=seq_dim, batch_dim=batch_dim,
                        dtype=x.dtype, meta=np.empty((0,) * x.ndim, dtype=x.dtype))


def _block(x, lengths, *, seq_dim, batch_dim):
    return _reverse(np, x, lengths, seq_dim=seq_dim, batch_dim=batch_dim)


register_op("ReverseSequence", _infer, eager=_reverse, lower=_lower)


@def_grad("ReverseSequence")
def _reverse_sequence_grad(op, g):
    return [apply_op("ReverseSequence", [g, op.inputs[1]], dict(op._attrs)), None]


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None, seq_dim=None,  # noqa: A002
                     batch_dim=None):
    """Reverses the first `seq_lengths[b]` entries along `seq_axis` of each slice b of `batch_axis`.

    input: a tensor of rank >= 2; seq_lengths: int32/int64 [input.shape[batch_axis]], each in
    [0, input.shape[seq_axis]] (InvalidArgumentError at run time otherwise). batch_axis
    defaults to 0. ValueError for mismatched shapes or axes.
    """
    seq = seq_axis if seq_axis is not None else seq_dim
    batch = batch_axis if batch_axis is not None else batch_dim
    if seq is None:
        raise TypeError("reverse_sequence() missing required argument: 'seq_axis'")
    batch = 0 if batch is None else batch
    x = convert_to_tensor(input, name="input")
    lengths = convert_to_tensor(seq_lengths, name="seq_lengths")
    rank = x.shape.ndims
    if rank is not None:
        seq, batch = seq % rank if seq < 0 else seq, batch % rank if batch < 0 else batch
    return apply_op("ReverseSequence", [x, lengths], {"seq_dim": int(seq), "batch_dim": int(batch)}, name=name,
                    default_name="ReverseSequence")
