"""Running one case of the op table (tests/gpu/op_cases.py) in a namespace, and comparing.

- `eager_check(case, dt, to_device, xp, is_device_array, to_host)`: builds the case on constants,
  finds the op of the case's type, computes its inputs with numpy (a Session), then calls its eager
  kernel on numpy and with its data inputs moved by `to_device` (cupy on a GPU; array_api_strict's
  "device1" in the CPU proxy; axes, shapes and index constants of the graph stay host numpy
  arrays, as TF keeps them in host memory); the results must be arrays of the device and equal
  numpy's.
- `session_check(case, dt, to_dask, is_device_chunk)`: builds the case on placeholders, runs the
  forward outputs and the gradients of their sum w.r.t. the float inputs through the Dask lowering
  (scheduler "sync", every plan on Dask, chunks of 2) with the inputs fed as dask arrays made by
  `to_dask` (cupy-backed on a GPU, numpy-backed in the CPU run of this harness), compares with the
  same graph fed numpy, and requires every float chunk the tasks computed to pass `is_device_chunk`.
"""

from __future__ import annotations

import array_api_compat.numpy as np_xp
import dask
import dask.array as da
import numpy as np
from dask.callbacks import Callback

import dflow as tf
from dflow.graph.registry import get_opdef

from .op_cases import HOST_OUTPUTS


def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def build(case, dt, placeholders):
    """(graph, input tensors, output tensors, the op of case.op_type) for `case` at dtype `dt`."""
    arrays = case.inputs(dt)
    graph = tf.Graph()
    with graph.as_default():
        if placeholders:
            xs = [tf.placeholder(tf.as_dtype(a.dtype), a.shape, name=f"in{i}") for i, a in enumerate(arrays)]
        else:
            xs = [tf.constant(a, name=f"in{i}") for i, a in enumerate(arrays)]
        outs = [t for t in _as_list(case.build(*xs)) if t is not None]
    ops = [op for op in graph.get_operations() if op.type == case.op_type]
    assert ops, f"{case.name}: the graph has no {case.op_type} op (types: " \
                f"{sorted({op.type for op in graph.get_operations()})})"
    return graph, xs, arrays, outs, ops[-1]


def op_inputs(graph, op):
    """The values of `op`'s inputs, computed with numpy in a Session."""
    if not op.inputs:
        return []
    with tf.Session(graph=graph) as sess:
        return [np.asarray(v) for v in sess.run(list(op.inputs))]


_SHAPE_READERS = ("Shape", "Size", "Rank")


def data_inputs(op, xs):
    """For each input of `op`: whether it is data (computed from the case's inputs `xs`) rather
    than a constant of the graph (an axis, a shape) or a shape read from data (Shape, Size, Rank),
    which stay host numpy arrays as TF keeps such values in host memory."""
    sources = {x.op for x in xs}
    seen, out = {}, []

    def reaches(o):
        if o not in seen:
            seen[o] = False  # (no cycles in a graph; guards the recursion)
            seen[o] = o in sources or (o.type not in _SHAPE_READERS and any(reaches(t.op) for t in o.inputs))
        return seen[o]

    for t in op.inputs:
        out.append(reaches(t.op))
    return out


def run_kernel(op, xp, arrays):
    return _as_list(get_opdef(op.type).eager(xp, *arrays, **op.attrs))


def assert_close(got, want, case, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if case.exact or got.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        tol = case.rtol if got.dtype == np.float64 else max(case.rtol, 1e-5)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=what)


def eager_check(case, dt, to_device, xp, is_device_array, to_host):
    """The case's eager kernel on device arrays equals numpy's and returns device arrays."""
    graph, xs, _, _, op = build(case, dt, placeholders=False)
    values = op_inputs(graph, op)
    want = run_kernel(op, np_xp, values)
    with np.errstate(all="ignore"):
        got = run_kernel(op, xp, [to_device(v) if data else v for v, data in zip(values, data_inputs(op, xs))])
    assert len(got) == len(want), case.name
    for i, (g, w) in enumerate(zip(got, want)):
        what = f"{op.type} ({case.name}, {dt}) output {i}"
        if op.type in HOST_OUTPUTS:  # a shape, on the host as TF1 keeps it
            assert isinstance(g, (np.ndarray, np.generic)), f"{what} is a {type(g).__name__}, not a host array"
            assert_close(g, w, case, what)
            continue
        assert is_device_array(g), f"{what} is a {type(g).__module__}.{type(g).__name__}, not on the device"
        assert_close(to_host(g), w, case, what)


def _fetches(case, dt):
    """The case on placeholders: (graph, placeholders, arrays, forward outputs, gradients)."""
    graph, xs, arrays, outs, _ = build(case, dt, placeholders=True)
    grads = []
    if case.grad and np.dtype(dt).kind == "f":
        with graph.as_default():
            floats = [o for o in outs if o.dtype.is_floating]
            wrt = [x for x in xs if x.dtype.is_floating]
            total = tf.add_n([tf.reduce_sum(o) for o in floats])
            # (a gather's gradient is IndexedSlices: compared dense)
            grads = [tf.convert_to_tensor(g) for g in tf.gradients(total, wrt) if g is not None]
            assert grads, f"{case.name}: no gradient reaches the float inputs"
    return graph, xs, arrays, outs, grads


class ChunkRecorder(Callback):
    """The results of the dask tasks computed while active (dask's local schedulers)."""

    def __init__(self):
        super().__init__()
        self.results = []

    def _posttask(self, key, result, dsk, state, worker_id):
        self.results.append((key, result))


def dask_feeds(xs, arrays, to_dask):
    return {x: to_dask(a) for x, a in zip(xs, arrays)}


def session_check(case, dt, to_dask, is_device_chunk):
    """Forward and gradient of the case through the Dask lowering on `to_dask` feeds equal the
    same graph fed numpy; every float chunk computed passes `is_device_chunk`."""
    graph, xs, arrays, outs, grads = _fetches(case, dt)
    fetches = outs + grads
    with tf.Session(graph=graph) as sess:
        want = sess.run(fetches, dict(zip(xs, arrays)))
    recorder = ChunkRecorder()
    with tf.Session(graph=graph, scheduler="sync", chunks=2, small_plan_bytes=0) as sess, recorder, \
            dask.config.set({"array.slicing.split_large_chunks": False}):
        got = sess.run(fetches, dask_feeds(xs, arrays, to_dask))
    for i, (g, w) in enumerate(zip(got, want)):
        kind = "output" if i < len(outs) else "gradient"
        assert_close(g, w, case, f"{case.op_type} ({case.name}, {dt}) {kind} {i}")
    host = [(k, type(r).__name__) for k, r in recorder.results
            if hasattr(r, "dtype") and getattr(r, "ndim", 0) and np.dtype(r.dtype).kind == "f"
            and r.size > 1 and not is_device_chunk(r)]
    assert not host, f"{case.name} ({dt}): float chunks computed off the device: {host[:5]}"


def numpy_dask(a):
    return da.from_array(a, chunks=2) if a.ndim else da.from_array(a)
