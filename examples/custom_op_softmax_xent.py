"""A custom op from user code: a fused, numerically stable softmax cross-entropy.

The op is defined the way dflow's own ops are (docs/custom_ops.md): one OpDef with
  infer  - static shape and dtype of the output, errors for impossible inputs, at build time;
  eager  - the kernel on whole arrays, for small in-memory plans (any array namespace);
  lower  - the chunked lowering to dask.array: a chunk kernel over blocks of whole rows;
  grad   - the gradient, built from graph ops.
Both kernels take their array namespace from their inputs, so cupy chunks stay on the GPU.

    python examples/custom_op_softmax_xent.py
"""

from __future__ import annotations

import array_api_compat
import numpy as np

import dflow as tf
from dflow.graph.registry import def_grad, register_op
from dflow.graph.shape import TensorShape
from dflow.kernels.common import apply_op, convert_to_tensor

OP = "SoftmaxXentFused"


# ---- the kernel: one formula for any array namespace ------------------------------------------
def xent_rows(xp, labels, logits):
    """Per-row -sum(labels * log_softmax(logits)), shifted by the row max so exp never overflows."""
    shifted = logits - xp.max(logits, axis=-1, keepdims=True)
    log_norm = xp.log(xp.sum(xp.exp(shifted), axis=-1, keepdims=True))
    return xp.sum(labels * (log_norm - shifted), axis=-1)


def chunk_kernel(labels, logits):
    """The chunk kernel: a block of whole rows in, their losses out (numpy or cupy blocks)."""
    return xent_rows(array_api_compat.array_namespace(labels, logits), labels, logits)


# ---- the OpDef -----------------------------------------------------------------------------------
def infer(inputs, attrs):
    labels, logits = inputs
    if logits.dtype != labels.dtype or not logits.dtype.is_floating:
        raise TypeError(f"{OP}: labels and logits must have one floating dtype, got {labels.dtype.name} "
                        f"and {logits.dtype.name}")
    if logits.shape.ndims not in (None, 2) or not labels.shape.is_compatible_with(logits.shape):
        raise ValueError(f"{OP}: labels {labels.shape} and logits {logits.shape} must be one [batch, classes] "
                         "shape")
    shape = labels.shape.merge_with(logits.shape)
    return TensorShape([shape[0] if shape.ndims else None]), logits.dtype


def eager(xp, labels, logits):
    return xent_rows(xp, labels, logits)


def lower(ctx, labels, logits):
    labels, logits = ctx.as_dask(labels), ctx.as_dask(logits)
    logits = logits.rechunk({1: -1})  # a row's classes in one block: the kernel needs whole rows
    labels = labels.rechunk(logits.chunks)
    return ctx.da.map_blocks(chunk_kernel, labels, logits, drop_axis=1, dtype=logits.dtype,
                             meta=np.empty((0,), logits.dtype), name=ctx.name("-xent"))


register_op(OP, infer, eager=eager, lower=lower, replace=True)


@def_grad(OP)
def xent_grad(op, grad):
    labels, logits = op.inputs
    log_softmax = logits - tf.reduce_logsumexp(logits, axis=1, keepdims=True)
    g = tf.expand_dims(grad, 1)
    return [-log_softmax * g, (tf.exp(log_softmax) - labels) * g]


def softmax_xent(labels, logits, name=None):
    """Per-example softmax cross-entropy of [batch, classes] `labels` and `logits` (a [batch] tensor)."""
    return apply_op(OP, [convert_to_tensor(labels), convert_to_tensor(logits)], name=name, default_name=OP)


# ---- use it ----------------------------------------------------------------------------------------
def reference(labels, logits):
    shifted = logits - logits.max(axis=1, keepdims=True)
    return (labels * (np.log(np.exp(shifted).sum(axis=1, keepdims=True)) - shifted)).sum(axis=1)


def main():
    rng = np.random.default_rng(0)
    n, k = 1000, 10
    logits_v = (rng.standard_normal((n, k)) * 300).astype(np.float32)  # exp(300) overflows float32
    labels_v = np.eye(k, dtype=np.float32)[rng.integers(0, k, n)]

    labels = tf.placeholder(tf.float32, [None, k])
    logits = tf.placeholder(tf.float32, [None, k])
    loss = softmax_xent(labels, logits)
    naive = -tf.reduce_sum(labels * tf.log(tf.exp(logits) / tf.reduce_sum(tf.exp(logits), 1, keepdims=True)), 1)
    feed = {labels: labels_v, logits: logits_v}
    want = reference(labels_v.astype(np.float64), logits_v.astype(np.float64))

    with tf.Session() as sess, np.errstate(all="ignore"):  # small: the eager kernel, in memory
        got, bad = sess.run([loss, naive], feed)
    with tf.Session(scheduler="threads", chunks=(100, 5)) as sess:  # chunked: the lowering, 10 row blocks
        got_chunked = sess.run(loss, feed)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(got_chunked, got, rtol=1e-6)
    print(f"fused op: finite {np.isfinite(got).all()}, max |error| {np.abs(got - want).max():.2e}; "
          f"naive formula: {int((~np.isfinite(bad)).sum())} of {n} losses are inf/nan")

    # the gradient rule, checked numerically
    x = tf.placeholder(tf.float64, [4, 3])
    y = softmax_xent(tf.constant(np.eye(3)[[0, 2, 1, 1]]), x)
    with tf.Session():
        err = tf.test.compute_gradient_error(x, [4, 3], y, [4], delta=1e-6)
    assert err < 1e-6, err
    print(f"gradient check: max error {err:.1e}")

    # and it trains: softmax regression on separable data, chunked
    w = tf.Variable(tf.zeros([k, k]))
    features = tf.placeholder(tf.float32, [None, k])
    objective = tf.reduce_mean(softmax_xent(labels, tf.matmul(features, w)))
    step = tf.train.GradientDescentOptimizer(1.0).minimize(objective)
    x_train = labels_v * 2 + rng.standard_normal((n, k)).astype(np.float32) * 0.5
    with tf.Session(scheduler="threads", chunks=(250, k)) as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(objective, {features: x_train, labels: labels_v})
        for _ in range(20):
            sess.run(step, {features: x_train, labels: labels_v})
        last = sess.run(objective, {features: x_train, labels: labels_v})
    assert last < first / 4, (first, last)
    print(f"training: loss {first:.3f} -> {last:.3f}")


if __name__ == "__main__":
    main()
