"""numpy references of Keras's recurrent cells (TF 1.15's math: gates i, f, c, o for LSTM, z, r, h
for GRU; hard_sigmoid = clip(0.2x + 0.5, 0, 1))."""

import numpy as np


def hard_sigmoid(x):
    return np.clip(0.2 * x + 0.5, 0.0, 1.0)


def simple_step(x, states, w):
    kernel, rec, bias = w
    h = np.tanh(x @ kernel + states[0] @ rec + bias)
    return h, [h]


def lstm_step(x, states, w):
    kernel, rec, bias = w
    h, c = states
    z = x @ kernel + h @ rec + bias
    u = h.shape[-1]
    i, f, g, o = (z[:, k * u:(k + 1) * u] for k in range(4))
    c = hard_sigmoid(f) * c + hard_sigmoid(i) * np.tanh(g)
    h = hard_sigmoid(o) * np.tanh(c)
    return h, [h, c]


def gru_step(x, states, w, reset_after=False):
    kernel, rec, bias = w
    h = states[0]
    u = h.shape[-1]
    b_in, b_rec = (bias[0], bias[1]) if reset_after else (bias, np.zeros_like(bias))
    xz = x @ kernel + b_in
    sl = [slice(k * u, (k + 1) * u) for k in range(3)]
    z = hard_sigmoid(xz[:, sl[0]] + h @ rec[:, sl[0]] + b_rec[sl[0]])
    r = hard_sigmoid(xz[:, sl[1]] + h @ rec[:, sl[1]] + b_rec[sl[1]])
    if reset_after:
        hh = np.tanh(xz[:, sl[2]] + r * (h @ rec[:, sl[2]] + b_rec[sl[2]]))
    else:
        hh = np.tanh(xz[:, sl[2]] + (r * h) @ rec[:, sl[2]])
    h = z * h + (1 - z) * hh
    return h, [h]


def run(step, x, w, states, go_backwards=False, lengths=None):
    """(outputs [b, t, u], final states) of `step` over x [b, t, d]; rows stop at `lengths`
    (later steps keep the previous output and states, as a Keras mask does)."""
    b, t = x.shape[:2]
    order = range(t - 1, -1, -1) if go_backwards else range(t)
    prev = np.zeros((b, states[0].shape[-1]))
    outs = []
    for k in order:
        out, new = step(x[:, k], states, w)
        if lengths is not None:
            m = (k < np.asarray(lengths))[:, None]
            out = np.where(m, out, prev)
            new = [np.where(m, n, s) for n, s in zip(new, states)]
        prev, states = out, new
        outs.append(out)
    return np.stack(outs, 1), states
