"""Connectionist temporal classification: TF1's CTCLoss, CTCGreedyDecoder and CTCBeamSearchDecoder.

Host numpy kernels, one whole-array task each (the time recursion runs over every step of a
sequence, and the decoders' outputs are SparseTensors of data-dependent size). Inputs are time
major logits [max_time, batch, num_classes]; the blank is the last class.

CTCLoss is Graves' forward-backward recursion in log space, written after TF's
ctc_loss_calculator (the same rules for `ctc_merge_repeated` and for labels that need more steps
than the sequence has); its second output is the gradient of the loss with respect to the logits
(softmax minus the posterior of each class), which the gradient rule scales by the incoming
gradient, as TF1's `_CTCLossGrad`. The beam search is TF's prefix search with the default scorer:
same beam updates, same pruning, same `merge_repeated` on the output label sequences.
"""

from __future__ import annotations

import heapq

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import dtypes
from ..graph.registry import def_grad, not_differentiable, register_op
from ..graph.shape import TensorShape
from .manip_ops import expand_dims
from .math_ops import multiply
from .numpy_kernels import numpy_op
from .whole_task import lower_whole

__all__: list[str] = []

_NAN = float("nan")
_I64 = np.dtype(np.int64)
_NEG_INF = -np.inf


def _logsumexp(a, axis=None):
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


def _check_time(x, seq_len, what):
    if x.ndim != 3:
        raise InvalidArgumentError(None, None, f"{what}: inputs must be 3-D [max_time, batch, num_classes], got "
                                   f"shape {list(x.shape)}")
    seq_len = np.asarray(seq_len, np.int64).reshape(-1)
    if seq_len.size != x.shape[1]:
        raise InvalidArgumentError(None, None, f"{what}: len(sequence_length) != batch_size: {seq_len.size} vs. "
                                   f"{x.shape[1]}")
    for b, n in enumerate(seq_len):
        if n > x.shape[0] or n < 0:
            raise InvalidArgumentError(None, None, f"{what}: sequence_length({b}) <= {x.shape[0]} (max_time) and "
                                       f">= 0, got {n}")
    return seq_len


# ---- CTCLoss --------------------------------------------------------------------------------------


def _label_rows(indices, values, batch):
    """Each batch row's label sequence from a SparseTensor's indices ([N, 2], row-major) and values."""
    idx = np.asarray(indices, np.int64).reshape(-1, 2)
    rows = [[] for _ in range(batch)]
    for (b, _), v in zip(idx, np.asarray(values).reshape(-1)):
        if not 0 <= b < batch:
            raise InvalidArgumentError(None, None, f"CTCLoss: labels index batch {b} is out of [0, {batch})")
        rows[b].append(int(v))
    return rows


def _ctc_one(logp, labels, merge, blank):
    """(-log p(labels | logp), d loss / d logits) of one sequence; logp [T, C] log-softmax."""
    t_steps, num_classes = logp.shape
    lp = [blank]
    for c in labels:
        lp += [c, blank]
    lp = np.asarray(lp)
    u_n = len(lp)
    grad = np.exp(logp)
    if t_steps == 0:
        return (0.0 if not labels else np.inf), np.zeros_like(logp)
    y = logp[:, lp]  # [T, U]
    not_blank = lp != blank
    stay = np.ones(u_n, bool) if merge else ~not_blank
    skip = np.zeros(u_n, bool)
    skip[2:] = not_blank[2:] & ~(merge & (lp[2:] == lp[:-2]))
    alpha = np.full((t_steps, u_n), _NEG_INF)
    alpha[0, 0] = y[0, 0]
    if u_n > 1:
        alpha[0, 1] = y[0, 1]
    for t in range(1, t_steps):
        prev = alpha[t - 1]
        terms = np.stack([np.where(stay, prev, _NEG_INF),
                          np.concatenate([[_NEG_INF], prev[:-1]]),
                          np.where(skip, np.concatenate([[_NEG_INF, _NEG_INF], prev[:-2]]), _NEG_INF)])
        alpha[t] = _logsumexp(terms, axis=0) + y[t]
    beta = np.full((t_steps, u_n), _NEG_INF)
    beta[-1, -1] = 0.0
    if u_n > 1:
        beta[-1, -2] = 0.0
    skip_from = np.zeros(u_n, bool)
    skip_from[:-2] = skip[2:]
    for t in range(t_steps - 2, -1, -1):
        nxt = beta[t + 1] + y[t + 1]
        terms = np.stack([np.where(stay, nxt, _NEG_INF),
                          np.concatenate([nxt[1:], [_NEG_INF]]),
                          np.where(skip_from, np.concatenate([nxt[2:], [_NEG_INF, _NEG_INF]]), _NEG_INF)])
        beta[t] = _logsumexp(terms, axis=0)
    log_p = _logsumexp(alpha[0] + beta[0])
    if not np.isfinite(log_p):
        return np.inf, np.zeros_like(logp)
    post = alpha + beta - log_p  # log posterior of each state at each step
    for c in np.unique(lp):
        grad[:, c] -= np.exp(_logsumexp(post[:, lp == c], axis=1))
    return -float(log_p), grad


def _ctc_loss(np_, inputs, label_indices, label_values, seq_len, *, preprocess_collapse_repeated,
              ctc_merge_repeated, ignore_longer_outputs_than_inputs):
    seq_len = _check_time(inputs, seq_len, "CTCLoss")
    t_max, batch, num_classes = inputs.shape
    blank = num_classes - 1
    x = inputs.astype(np.float64)
    logp = x - _logsumexp(x, axis=2)[..., None]
    loss = np.zeros(batch, inputs.dtype)
    grad = np.zeros(inputs.shape, inputs.dtype)
    for b, labels in enumerate(_label_rows(label_indices, label_values, batch)):
        if preprocess_collapse_repeated:
            labels = [c for i, c in enumerate(labels) if i == 0 or c != labels[i - 1]]
        for c in labels:
            if not 0 <= c < blank:
                raise InvalidArgumentError(None, None, f"CTCLoss: label {c} in batch {b} is out of [0, {blank}) "
                                           f"(num_classes - 1 = {blank} is the blank)")
        n = int(seq_len[b])
        required = len(labels) + (sum(labels[i] == labels[i - 1] for i in range(1, len(labels)))
                                  if ctc_merge_repeated else 0)
        if required > n:
            if ignore_longer_outputs_than_inputs:
                continue
            raise InvalidArgumentError(None, None, f"CTCLoss: not enough time for target transition sequence "
                                       f"(required: {required}, available: {n}) in batch {b}; you can turn this "
                                       "error into a warning by using the flag ignore_longer_outputs_than_inputs")
        loss[b], g = _ctc_one(logp[:n, b], labels, ctc_merge_repeated, blank)
        grad[:n, b] = g
    return loss, grad


def _ctc_loss_infer(inputs, attrs):
    x, idx, vals, seq = inputs
    if not x.dtype.is_floating:
        raise TypeError(f"CTCLoss: inputs must be float, got {x.dtype.name}")
    if x.shape.ndims not in (None, 3):
        raise ValueError(f"Shape must be rank 3 but is rank {x.shape.ndims} for 'CTCLoss' (inputs {x.shape})")
    if seq.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {seq.shape.ndims} for 'CTCLoss' (sequence_length)")
    batch = x.shape[1].value if x.shape.ndims == 3 else None
    return [(TensorShape([batch]), x.dtype), (TensorShape(x.shape if x.shape.ndims else None), x.dtype)]


numpy_op("CTCLoss", _ctc_loss_infer, _ctc_loss, lambda x, i, v, s, **k: [(x[1],), x],
         out_dtypes=lambda d, *rest, **k: [d, d], n_out=2)


@def_grad("CTCLoss")
def _ctc_loss_grad(op, grad_loss, _):
    # the loss's gradient is the op's second output, scaled by each row's incoming gradient
    return [multiply(expand_dims(grad_loss, -1), op.outputs[1]), None, None, None]


# ---- decoders -------------------------------------------------------------------------------------


def _sparse_of(paths, batch):
    """(indices, values, dense_shape) of a SparseTensor holding one label sequence per batch row."""
    idx = [(b, i) for b, p in enumerate(paths) for i in range(len(p))]
    vals = [c for p in paths for c in p]
    width = max((len(p) for p in paths), default=0)
    return (np.asarray(idx, np.int64).reshape(-1, 2), np.asarray(vals, np.int64),
            np.asarray([batch, width], np.int64))


def _greedy(np_, inputs, seq_len, *, merge_repeated, blank_index):
    seq_len = _check_time(inputs, seq_len, "CTCGreedyDecoder")
    t_max, batch, num_classes = inputs.shape
    blank = num_classes - 1 if blank_index < 0 else blank_index
    paths, scores = [], np.zeros((batch, 1), inputs.dtype)
    for b in range(batch):
        n = int(seq_len[b])
        best = np.argmax(inputs[:n, b], axis=1) if n else np.zeros(0, np.int64)
        scores[b, 0] = -np.sum(np.max(inputs[:n, b], axis=1)) if n else 0.0
        path, prev = [], -1
        for c in best:
            if c != blank and not (merge_repeated and c == prev):
                path.append(int(c))
            prev = c
        paths.append(path)
    return (*_sparse_of(paths, batch), scores)


def _decoder_infer(inputs, attrs, top_paths=1):
    x = inputs[0]
    if not x.dtype.is_floating:
        raise TypeError(f"CTC decoder: inputs must be float, got {x.dtype.name}")
    if x.shape.ndims not in (None, 3):
        raise ValueError(f"Shape must be rank 3 but is rank {x.shape.ndims} for the CTC decoder (inputs {x.shape})")
    batch = x.shape[1].value if x.shape.ndims == 3 else None
    return ([(TensorShape([None, 2]), dtypes.int64)] * top_paths + [(TensorShape([None]), dtypes.int64)] * top_paths
            + [(TensorShape([2]), dtypes.int64)] * top_paths + [(TensorShape([batch, top_paths]), x.dtype)])


numpy_op("CTCGreedyDecoder", _decoder_infer, _greedy,
         lambda x, s, **k: [(_NAN, 2), (_NAN,), (2,), (x[1], 1)],
         out_dtypes=lambda d, s, **k: [_I64, _I64, _I64, d], n_out=4)
not_differentiable("CTCGreedyDecoder")


class _Beam:
    """A prefix in the beam: its label, parent, children and (blank, label, total) log probabilities
    at the previous step (old) and this one (new)."""

    __slots__ = ("label", "parent", "children", "old", "new")

    def __init__(self, label, parent):
        self.label, self.parent, self.children = label, parent, {}
        self.old = [_NEG_INF] * 3
        self.new = [_NEG_INF] * 3

    def active(self):
        return self.new[2] != _NEG_INF

    def labels(self, merge_repeated):
        out, prev, node = [], -1, self
        while node.parent is not None:
            if not merge_repeated or node.label != prev:
                out.append(node.label)
            prev, node = node.label, node.parent
        return out[::-1]


def _lse(a, b):
    if a == _NEG_INF:
        return b
    if b == _NEG_INF:
        return a
    m = max(a, b)
    return m + np.log1p(np.exp(-abs(a - b)))


def _bottom(leaves):
    return min(leaves, key=lambda e: e.new[2])


def _candidate(p, leaves, beam_width):
    """Whether a prefix of total `p` enters the beam: possible, and the beam not full or its bottom lower."""
    return p[2] > _NEG_INF and (len(leaves) < beam_width or p[2] > _bottom(leaves).new[2])


def _beam_one(x, beam_width, blank):
    """The beam after TF's prefix search over the log probabilities x [T, C] of one sequence."""
    root = _Beam(-1, None)
    root.new = [0.0, _NEG_INF, 0.0]
    leaves = [root]
    for step in x:
        branches = sorted(leaves, key=lambda e: -e.new[2])
        for e in branches:
            e.old = list(e.new)
        leaves = []
        for e in branches:  # the prefixes of the beam, extended by this step
            if e.parent is not None:
                if e.parent.active():
                    prev = e.parent.old[0] if e.label == e.parent.label else e.parent.old[2]
                    e.new[1] = _lse(e.new[1], prev)
                e.new[1] += step[e.label]
            e.new[0] = e.old[2] + step[blank]
            e.new[2] = _lse(e.new[0], e.new[1])
            leaves.append(e)
            if len(leaves) > beam_width:
                leaves.remove(_bottom(leaves))
        for e in branches:  # new prefixes: one more label
            if not _candidate(e.old, leaves, beam_width):
                continue
            for c in range(len(step)):
                if c == blank:
                    continue
                child = e.children.get(c)
                if child is None:
                    child = e.children[c] = _Beam(c, e)
                if child.active():
                    continue
                child.new[0] = _NEG_INF
                prev = e.old[0] if c == e.label else e.old[2]
                child.new[1] = step[c] + prev
                child.new[2] = child.new[1]
                if _candidate(child.new, leaves, beam_width):
                    if len(leaves) == beam_width:
                        low = _bottom(leaves)
                        low.new = [_NEG_INF] * 3
                        leaves.remove(low)
                    leaves.append(child)
                else:
                    child.old = [_NEG_INF] * 3
                    child.new = [_NEG_INF] * 3
    return heapq.nlargest(len(leaves), leaves, key=lambda e: e.new[2])


def _beam_search(np_, inputs, seq_len, *, beam_width, top_paths, merge_repeated):
    seq_len = _check_time(inputs, seq_len, "CTCBeamSearchDecoder")
    t_max, batch, num_classes = inputs.shape
    if top_paths > beam_width:
        raise InvalidArgumentError(None, None, f"CTCBeamSearchDecoder: top_paths ({top_paths}) must be <= "
                                   f"beam_width ({beam_width})")
    x = inputs.astype(np.float64)
    logp = x - _logsumexp(x, axis=2)[..., None]
    paths = [[[] for _ in range(batch)] for _ in range(top_paths)]
    scores = np.full((batch, top_paths), _NEG_INF, inputs.dtype)
    for b in range(batch):
        best = _beam_one(logp[:int(seq_len[b]), b], beam_width, num_classes - 1)
        if len(best) < top_paths:
            raise InvalidArgumentError(None, None, f"CTCBeamSearchDecoder: less leaves in the beam search than "
                                       f"requested ({len(best)} < top_paths {top_paths}) in batch {b}")
        for p, e in enumerate(best[:top_paths]):
            paths[p][b] = e.labels(merge_repeated)
            scores[b, p] = e.new[2]
    parts = [_sparse_of(p, batch) for p in paths]
    return tuple([q[0] for q in parts] + [q[1] for q in parts] + [q[2] for q in parts] + [scores])


register_op("CTCBeamSearchDecoder", lambda inputs, attrs: _decoder_infer(inputs, attrs, attrs["top_paths"]),
            eager=lambda xp, x, s, **attrs: _beam_search(np, np.asarray(x), np.asarray(s), **attrs),
            lower=lower_whole(lambda xp, x, s, **attrs: _beam_search(np, x, s, **attrs)), num_outputs=None)
not_differentiable("CTCBeamSearchDecoder")
