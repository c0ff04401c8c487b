"""The eager kernels again, on array_api_strict arrays: no numpy-only call may leak in.

A kernel that takes its namespace from its inputs works on cupy chunks too; one that calls numpy
(or a numpy-only name, or an ndarray-only method) on data does not. array_api_strict is the
strict reference namespace: each case builds an op with its public function on constants, then
calls `get_opdef(op.type).eager(xp, *inputs, **op.attrs)` with numpy and with array_api_strict
arrays, and requires the same values, returned as array_api_strict arrays.

A second pass puts the inputs on array_api_strict's non-CPU device "device1", which refuses
conversion to numpy as a GPU array does: a kernel that copies data to the host fails there.
Kernels that leak are listed below as strict xfails (`LEAKS`, `HOST_COPIES`): the report, until
their modules are fixed.

The hand-picked `CASES` below are the first report. The whole op table of the GPU suite
(tests/gpu/op_cases.py: one case or more per registered op type with an eager kernel, float32,
float64 and int32 where the op takes them, scalar, empty and broadcast shapes) runs here too, its
data inputs on "device1" and its axes and shapes on the host (`test_op_table_kernel_on_device1`,
strict xfails from `op_cases.LEAKS`, which also says which leaks break cupy). Finally, the compiler's fused chunk kernel (one FusedKernel taken from a
compiled plan) runs on array_api_strict chunks (dask's own wrappers, reductions and concatenation
are numpy-only, so the kernel is called directly).
"""

from __future__ import annotations

import array_api_compat
import array_api_compat.numpy as np_xp
import numpy as np
import pytest

import dflow as tf
from dflow.graph.ops import constant_value
from dflow.graph.registry import get_opdef
from dflow.kernels import math_ops
from tests.conftest import rand
from tests.gpu import harness, op_cases

xps = pytest.importorskip("array_api_strict")
# array_api_strict warns when a kernel compares its dtypes with numpy's; the kernels listed below
# as leaking do, and the warning would only repeat what the xfail reasons say
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
DEVICE1 = xps.Device("device1")
STRICT = type(xps.asarray(0))


A = rand((3, 4))
B = rand((3, 4), seed=1)
P = np.abs(rand((3, 4), seed=2)) + 0.5  # positive, for log/sqrt/pow
I1, I2 = rand((3, 4), np.int32, lo=-5, hi=6), rand((3, 4), np.int32, 1, lo=1, hi=6)
M = rand((4, 2), seed=3)
C = tf.constant

UNARY = ["negative", "abs", "sign", "square", "sqrt", "rsqrt", "exp", "log", "log1p", "expm1", "sin",
         "cos", "tan", "tanh", "sigmoid", "reciprocal", "floor", "ceil", "round", "is_finite", "is_nan",
         "is_inf", "relu"]
BINARY = ["add", "subtract", "multiply", "truediv", "floordiv", "floormod", "maximum", "minimum", "pow",
          "squared_difference", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]

CASES = {}
for _n in UNARY:
    CASES[_n] = (lambda n=_n: getattr(math_ops, n)(C(P if n in ("sqrt", "rsqrt", "log", "log1p") else A)))
for _n in BINARY:
    CASES[_n] = (lambda n=_n: getattr(math_ops, n)(C(P), C(B)))
CASES.update({
    "floordiv_int": lambda: tf.floordiv(C(I1), C(I2)),
    "floormod_int": lambda: tf.floormod(C(I1), C(I2)),
    "logical_and": lambda: tf.logical_and(C(A > 0), C(B > 0)),
    "logical_or": lambda: tf.logical_or(C(A > 0), C(B > 0)),
    "logical_xor": lambda: tf.logical_xor(C(A > 0), C(B > 0)),
    "logical_not": lambda: tf.logical_not(C(A > 0)),
    "cast": lambda: tf.cast(C(A), tf.int32),
    "where": lambda: tf.where(C(A > 0), C(A), C(B)),
    "clip_by_value": lambda: tf.clip_by_value(C(A), -0.5, 0.5),
    "add_n": lambda: tf.add_n([C(A), C(B), C(P)]),
    "reduce_sum": lambda: tf.reduce_sum(C(A), axis=1),
    "reduce_sum_all": lambda: tf.reduce_sum(C(A)),
    "reduce_mean": lambda: tf.reduce_mean(C(A), axis=0, keepdims=True),
    "reduce_max": lambda: tf.reduce_max(C(A), axis=[0, 1]),
    "reduce_min": lambda: tf.reduce_min(C(A), axis=-1),
    "reduce_prod": lambda: tf.reduce_prod(C(A), axis=1),
    "reduce_any": lambda: tf.reduce_any(C(A > 1), axis=1),
    "reduce_all": lambda: tf.reduce_all(C(A > -3), axis=0),
    "reduce_logsumexp": lambda: tf.reduce_logsumexp(C(A), axis=1),
    "argmax": lambda: tf.argmax(C(A), axis=1),
    "argmin": lambda: tf.argmin(C(A), axis=0),
    "cumsum": lambda: tf.cumsum(C(A), axis=1),
    "cumsum_exclusive_reverse": lambda: tf.cumsum(C(A), axis=0, exclusive=True, reverse=True),
    "transpose": lambda: tf.transpose(C(A)),
    "concat": lambda: tf.concat([C(A), C(B)], axis=1),
    "stack": lambda: tf.stack([C(A), C(B)], axis=1),
    "unstack": lambda: tf.unstack(C(A), axis=1),
    "split": lambda: tf.split(C(A), 2, axis=1),
    "split_sizes": lambda: tf.split(C(A), [1, 3], axis=1),
    "reshape": lambda: tf.reshape(C(A), [4, -1]),
    "expand_dims": lambda: tf.expand_dims(C(A), 1),
    "squeeze": lambda: tf.squeeze(C(A[:1])),
    "reverse": lambda: tf.reverse(C(A), [1]),
    "tile": lambda: tf.tile(C(A), [2, 1]),
    "pad": lambda: tf.pad(C(A), [[1, 0], [0, 2]]),
    "pad_reflect": lambda: tf.pad(C(A), [[1, 1], [2, 0]], mode="REFLECT"),
    "strided_slice": lambda: C(A)[1:, ::2],
    "gather": lambda: tf.gather(C(A), C(np.array([2, 0], np.int32))),
    "gather_axis1": lambda: tf.gather(C(A), C(np.array([3, 1, 1], np.int32)), axis=1),
    "one_hot": lambda: tf.one_hot(C(np.array([0, 2, 1], np.int32)), 4),
    "top_k": lambda: tf.top_k(C(A), k=2),
    "unsorted_segment_sum": lambda: tf.unsorted_segment_sum(C(A), C(np.array([1, 0, 1], np.int32)), 3),
    "matmul": lambda: tf.matmul(C(A), C(M)),
    "matmul_transpose_b": lambda: tf.matmul(C(A), C(B), transpose_b=True),
    "batch_matmul": lambda: tf.matmul(C(rand((2, 3, 4))), C(rand((2, 4, 5), seed=1))),
    "einsum": lambda: tf.einsum("ij,jk->ik", C(A), C(M)),
    "tensordot": lambda: tf.tensordot(C(A), C(M), axes=1),
    "zeros_like": lambda: tf.zeros_like(C(A)),
    "ones_like": lambda: tf.ones_like(C(A)),
    "fill": lambda: tf.fill(C(np.array([2, 3], np.int32)), C(np.float32(1.5))),
    "range": lambda: tf.range(C(np.int32(1)), C(np.int32(9)), C(np.int32(2))),
    "linspace": lambda: tf.linspace(C(np.float32(0)), C(np.float32(1)), C(np.int32(5))),
    "shape": lambda: tf.shape(C(A)),
    "size": lambda: tf.size(C(A)),
    "identity": lambda: tf.identity(C(A)),
    "invert_permutation": lambda: tf.invert_permutation(C(np.array([2, 0, 1], np.int32))),
})

# Kernels found to call numpy-only names, ndarray-only methods or numpy on data (the report).
# "cupy ok": cupy tolerates it (numpy dtypes, numpy-only names cupy also has, ndarray methods);
# "breaks cupy": the same call fails or computes on the host with cupy arrays.
_NP_DTYPE = "passes a numpy dtype object to xp (the standard wants xp's dtypes; cupy ok)"
_NP_DTYPE_OF = "reads np.dtype(x.dtype) of the data (array-API dtypes are not numpy's; cupy ok)"
LEAKS = {
    "cast": "math_ops.py Cast eager: xp.astype(x, DstT.np_dtype) " + _NP_DTYPE,
    "reduce_mean": "reduction_ops.py:128 " + _NP_DTYPE_OF,
    "argmax": "reduction_ops.py:393 xp.astype(..., output_type.np_dtype) " + _NP_DTYPE,
    "argmin": "reduction_ops.py:393 xp.astype(..., output_type.np_dtype) " + _NP_DTYPE,
    "cumsum_exclusive_reverse": "reduction_ops.py:463 out[(slice(None),) * a + (slice(0, -1),)] is a "
                                "partial multi-axis index (the standard needs a trailing ...; cupy ok)",
    "pad_reflect": "pad_ops.py:141 xp.pad is not in the array API (numpy-only name; cupy has it)",
    "strided_slice": "index_ops.py:52 _ints uses ndarray methods a.reshape(-1).tolist() (cupy ok)",
    "unsorted_segment_sum": "scatter_ops.py:106-122 computes on the host with numpy (np.zeros, np.add.at, "
                            "np.asarray(data), np.asarray(ids)): breaks cupy",
    "matmul": "linalg_ops.py:86 _upcast " + _NP_DTYPE_OF,
    "matmul_transpose_b": "linalg_ops.py:86 _upcast " + _NP_DTYPE_OF,
    "batch_matmul": "linalg_ops.py:86 _upcast " + _NP_DTYPE_OF,
    "tensordot": "linalg_ops.py:86 _upcast " + _NP_DTYPE_OF,
    "einsum": "linalg_ops.py:347 xp.einsum is not in the array API (numpy-only name; cupy has it)",
    "zeros_like": "creation_ops.py:183 xp.full(..., dtype=dtype.np_dtype) " + _NP_DTYPE,
    "ones_like": "creation_ops.py:183 xp.full(..., dtype=dtype.np_dtype) " + _NP_DTYPE,
    "fill": "creation_ops.py:141 xp.full(shape, value) with a 0-d array value (the standard wants a "
            "Python scalar)",
    "range": "creation_ops.py Range eager: as_dtype(start.dtype) cannot read an array-API dtype (cupy ok)",
    "shape": "array_ops.py Shape eager returns a numpy array whatever its input's namespace: with cupy "
             "data, a later elementwise op mixes numpy and cupy (breaks cupy)",
    "size": "array_ops.py Size eager returns a numpy array whatever its input's namespace (breaks cupy "
            "when mixed with data)",
    "invert_permutation": "manip_ops.py:143 computes with numpy and returns a numpy array",
}
# Kernels that pass on the CPU device but copy an input to the host (np.asarray on a "device1"
# array, as on a GPU array).
_AXES = ("reduction_ops.py:42 _host_ints: np.asarray(axis) when the array has no .tolist() (strict "
         "arrays have none; cupy arrays do, so cupy ok)")
_INTS = "creation_ops.py:83 _ints: np.asarray(v) when the array has no .tolist() (strict only; cupy ok)"
HOST_COPIES = {
    **{n: _AXES for n in ("reduce_sum", "reduce_sum_all", "reduce_mean", "reduce_max", "reduce_min",
                          "reduce_prod", "reduce_any", "reduce_all", "reduce_logsumexp", "argmax",
                          "argmin", "cumsum", "cumsum_exclusive_reverse")},
    **{n: _INTS for n in ("transpose", "concat", "split", "split_sizes", "expand_dims", "reverse", "tile",
                          "fill", "invert_permutation", "pad")},
    "reshape": "array_ops.py:223 _reshape_eager: np.asarray(shape) on a device array (breaks cupy)",
    "one_hot": "gather_ops.py xp.arange(depth) without device= lands on the default device (cupy ok: "
               "the current device)",
    "linspace": "creation_ops.py LinSpace eager creates its result on the default device (cupy ok)",
}


def _build(name):
    out = CASES[name]()
    t = out[0] if isinstance(out, (list, tuple)) else out
    return t.op


def _inputs(op):
    values = [constant_value(t) for t in op.inputs]
    assert all(v is not None for v in values), f"{op.name}: inputs must be build-time constants"
    return [np.asarray(v) for v in values]


def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _run(op, xp, arrays):
    return _as_list(get_opdef(op.type).eager(xp, *arrays, **op.attrs))


def _check(name, device=None):
    op = _build(name)
    values = _inputs(op)
    want = _run(op, np_xp, values)
    strict_in = [xps.asarray(v, device=device) if device is not None else xps.asarray(v) for v in values]
    got = _run(op, xps, strict_in)
    assert len(got) == len(want), name
    for g, w in zip(got, want):
        assert isinstance(g, STRICT) or (np.ndim(w) == 0 and isinstance(g, (int, float, bool))), \
            f"{op.type} ({name}) returned {type(g).__name__}, not an array of its inputs' namespace"
        if isinstance(g, STRICT):
            if device is not None:
                assert g.device == device, f"{op.type} ({name}) moved its result to {g.device}"
                g = xps.to_device(g, xps.Device("CPU_DEVICE")) if hasattr(xps, "to_device") else g.to_device(
                    xps.Device("CPU_DEVICE"))
            g = np.asarray(g)
        w = np.asarray(w)
        assert g.dtype == w.dtype, f"{op.type} ({name}): dtype {g.dtype} != {w.dtype}"
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=f"{op.type} ({name})")


def _params(known):
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=known[n])) if n in known else n
            for n in CASES]


@pytest.mark.parametrize("name", _params(LEAKS))
def test_eager_kernel_on_array_api_strict(name):
    _check(name)


@pytest.mark.parametrize("name", _params({**HOST_COPIES, **LEAKS}))
def test_eager_kernel_keeps_data_on_its_device(name):
    _check(name, device=DEVICE1)


def test_every_case_builds_the_expected_op():
    types = {n: _build(n).type for n in CASES}
    assert types["reduce_sum"] == "Sum" and types["concat"] == "ConcatV2" and types["matmul"] == "MatMul"
    assert len(set(types.values())) >= 60


# ---- the compiler's fused chunk kernels on array_api_strict chunks ---------------------------------
def _fused_kernels(build):
    """The FusedKernels of the plan of `build(x)` (one elementwise chain over a fed x)."""
    from dflow.schedule.fusion import FusedKernel

    x = tf.placeholder(tf.float32, [6, 4])
    y = build(x)
    with tf.Session(scheduler="sync", chunks=2) as sess:
        sess.run(y, {x: np.zeros((6, 4), np.float32)})
        (plan,) = sess._plans.values()
    kernels = {id(k): k for t in plan.dsk.values()
               for k in [getattr(t, "kwargs", {}).get("enforce_dtype_function")] if isinstance(k, FusedKernel)}
    assert len(kernels) == 1, "the chain should fuse into one chunk kernel"
    return next(iter(kernels.values()))


def _check_fused(build, ref):
    # dask's elemwise wraps the kernel in `_enforce_dtype`, which calls np.can_cast on the result and
    # refuses array_api_strict chunks (fine for cupy, whose dtypes are numpy's): call the kernel itself
    kernel = _fused_kernels(build)
    chunk = rand((2, 4), seed=5)
    for device in (None, DEVICE1):
        out = kernel(xps.asarray(chunk) if device is None else xps.asarray(chunk, device=device))
        assert type(out) is STRICT and (device is None or out.device == device)
        out = out if device is None else out.to_device(xps.Device("CPU_DEVICE"))
        np.testing.assert_allclose(np.asarray(out), ref(chunk), rtol=1e-5, atol=1e-6)


def test_fused_elementwise_chain_on_strict_chunks():
    def build(x):  # every intermediate has one consumer, so the chain is one kernel
        y = tf.maximum(tf.exp(tf.tanh(x) - tf.sigmoid(x) * tf.abs(x)), x)
        return tf.where(tf.greater(x, tf.negative(x)), tf.sqrt(tf.square(x)), y)

    def ref(x):
        y = np.maximum(np.exp(np.tanh(x) - 1 / (1 + np.exp(-x)) * np.abs(x)), x)
        return np.where(x > -x, np.abs(x), y)

    _check_fused(build, ref)


@pytest.mark.xfail(strict=True, reason="schedule/fusion.py: a 0-d constant (x * 2.0) is inlined as a 0-d "
                   "numpy array (Const) and passed as is to the chunk kernel: array_api_strict refuses to "
                   "mix it with its arrays, and so does cupy (TypeError on numpy operands). Passing "
                   "Python scalars (value.item()) or xp.asarray(value) in the chunk's namespace fixes it")
def test_fused_chain_with_scalar_constants_on_strict_chunks():
    _check_fused(lambda x: tf.tanh(x * 2.0 + 1.0), lambda x: np.tanh(x * 2 + 1))


def test_map_blocks_kernel_keeps_strict_chunks():
    """dflow's own map_blocks chunk kernel passes chunks through in their namespace."""
    from dflow.kernels.py_ops import _BlockCall, _OpRef

    def f(b):
        xp = array_api_compat.array_namespace(b)
        return xp.mean(b, axis=1, keepdims=True) - b

    kernel = _BlockCall(f, "test", np.dtype(np.float32), None, _OpRef(None))
    chunk = xps.asarray(rand((2, 4)), device=DEVICE1)
    out = kernel(chunk)
    assert type(out) is STRICT and out.device == DEVICE1


# ---- the GPU suite's op table on device1 (tests/gpu/op_cases.py) ---------------------------------
def _on_device1(v):
    return xps.asarray(v, device=DEVICE1)


def _is_on_device1(a):
    return type(a) is STRICT and a.device == DEVICE1


def _from_device1(a):
    return np.asarray(a.to_device(xps.Device("CPU_DEVICE")))


def _table_params():
    return [pytest.param(c, dt, id=op_cases.case_id(c, dt),
                         marks=[pytest.mark.xfail(strict=True, reason=op_cases.LEAKS[c.name])]
                         if c.name in op_cases.LEAKS else [])
            for c, dt in op_cases.case_ids()]


@pytest.mark.parametrize("case, dt", _table_params())
def test_op_table_kernel_on_device1(case, dt):
    harness.eager_check(case, dt, _on_device1, xps, _is_on_device1, _from_device1)
