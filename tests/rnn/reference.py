"""numpy references of TF1's cells (rnn_cell_impl's equations), for the rnn tests."""

from __future__ import annotations

import numpy as np


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def basic_rnn(x, h, kernel, bias):
    out = np.tanh(np.concatenate([x, h], 1) @ kernel + bias)
    return out, out


def basic_lstm(x, state, kernel, bias, forget_bias=1.0):
    c, h = state
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ kernel + bias, 4, axis=1)
    c2 = c * sigmoid(f + forget_bias) + sigmoid(i) * np.tanh(j)
    h2 = np.tanh(c2) * sigmoid(o)
    return h2, (c2, h2)


def lstm(x, state, kernel, bias, w_f=None, w_i=None, w_o=None, proj=None, cell_clip=None, proj_clip=None,
         forget_bias=1.0):
    c, m = state
    i, j, f, o = np.split(np.concatenate([x, m], 1) @ kernel + bias, 4, axis=1)
    if w_f is not None:
        c2 = sigmoid(f + forget_bias + w_f * c) * c + sigmoid(i + w_i * c) * np.tanh(j)
    else:
        c2 = sigmoid(f + forget_bias) * c + sigmoid(i) * np.tanh(j)
    if cell_clip is not None:
        c2 = np.clip(c2, -cell_clip, cell_clip)
    m2 = sigmoid(o + w_o * c2) * np.tanh(c2) if w_o is not None else sigmoid(o) * np.tanh(c2)
    if proj is not None:
        m2 = m2 @ proj
        if proj_clip is not None:
            m2 = np.clip(m2, -proj_clip, proj_clip)
    return m2, (c2, m2)


def gru(x, h, gate_kernel, gate_bias, cand_kernel, cand_bias):
    r, u = np.split(sigmoid(np.concatenate([x, h], 1) @ gate_kernel + gate_bias), 2, axis=1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ cand_kernel + cand_bias)
    h2 = u * h + (1 - u) * c
    return h2, h2


def run(step, xs, state, lengths=None):
    """A cell step over time (xs [batch, time, depth]); with lengths, TF1's zeros and copied state
    past each row's end. Returns (outputs [batch, time, out], final state)."""
    outs = []
    for t in range(xs.shape[1]):
        out, new = step(xs[:, t], state)
        if lengths is not None:
            done = (t >= np.asarray(lengths))[:, None]
            out = np.where(done, 0, out)
            new = _map(lambda a, b, done=done: np.where(done, a, b), state, new)
        outs.append(out)
        state = new
    return np.stack(outs, 1), state


def _map(fn, a, b):
    if isinstance(a, tuple):
        return tuple(_map(fn, x, y) for x, y in zip(a, b))
    return fn(a, b)
