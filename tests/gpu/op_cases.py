"""One case per registered op type: a small graph built through the op's public function.

`CASES` is the table the GPU suite (tests/gpu/test_ops_on_gpu.py: eager kernels on cupy, Dask
lowerings on cupy-backed dask arrays, gradients) and its CPU proxy
(tests/kernels/test_array_api_strict.py: eager kernels on array_api_strict's non-CPU device) both
read. A `Case` names the op type it exists for, builds a graph from input tensors (placeholders on
the GPU, constants in the proxy) and says how to compare:

- `inputs(dtype)`: the input arrays (numpy) for one of the case's `dtypes`;
- `build(*tensors)`: the graph, through the public function (the op of `op_type` is found in it:
  gradient kernels such as MaxPoolGrad are built by `tf.gradients` of their forward op);
- `grad`: whether `tf.gradients(sum(outputs), float inputs)` is compared too;
- `exact`: compare bit for bit (integer, boolean and index outputs) instead of allclose;
- edge shapes (scalar, empty, broadcasting) are cases of their own (`Add/bcast`, `Exp/empty`).

`NOT_ON_GPU` lists the op types with an eager kernel that by design never run on a GPU (host
resources, strings, Python callbacks, file and Zarr I/O, summaries, per-run state), with the
reason; `test_the_table_covers_every_registered_op` (tests/gpu/test_op_table.py) keeps the table
and the registry in step: a newly registered op type fails it until it has a case or a reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import array_api_compat
import numpy as np

import dflow as tf
from dflow.kernels.common import apply_op
from tests.conftest import rand

F32, F64, I32 = "float32", "float64", "int32"
FLOATS = (F32, F64)
ALL = (F32, F64, I32)


@dataclass(frozen=True)
class Case:
    op_type: str
    name: str
    build: Callable
    inputs: Callable  # dtype name -> list of numpy arrays
    dtypes: tuple = FLOATS
    grad: bool = False
    exact: bool = False
    rtol: float = 1e-5


def idx(values, dt=np.int32):
    return np.asarray(values, dtype=dt)


CASES: list[Case] = []


def case(op_type, build, inputs, dtypes=FLOATS, grad=False, exact=False, name=None, rtol=1e-5):
    CASES.append(Case(op_type, name or op_type, build, inputs, tuple(dtypes), grad, exact, rtol))


# ---- elementwise math: every unary op on a matrix, a scalar and an empty array ---------------------
# (op type, public function, input domain, dtypes, differentiable)
_DOMAINS = {"any": {}, "pos": dict(lo=0.5, hi=3.0), "unit": dict(lo=-0.9, hi=0.9), "ge1": dict(lo=1.2, hi=3.0)}
UNARY = [
    ("Abs", tf.abs, "any", ALL, True), ("Acos", tf.acos, "unit", FLOATS, True),
    ("Acosh", tf.acosh, "ge1", FLOATS, True), ("Asin", tf.asin, "unit", FLOATS, True),
    ("Asinh", tf.asinh, "any", FLOATS, True), ("Atan", tf.atan, "any", FLOATS, True),
    ("Atanh", tf.atanh, "unit", FLOATS, True), ("Ceil", tf.ceil, "any", FLOATS, False),
    ("Cos", tf.cos, "any", FLOATS, True), ("Cosh", tf.cosh, "any", FLOATS, True),
    ("Exp", tf.exp, "any", FLOATS, True), ("Expm1", tf.expm1, "any", FLOATS, True),
    ("Floor", tf.floor, "any", FLOATS, False), ("Log", tf.log, "pos", FLOATS, True),
    ("Log1p", tf.log1p, "pos", FLOATS, True), ("Neg", tf.negative, "any", ALL, True),
    ("Reciprocal", tf.reciprocal, "pos", FLOATS, True), ("Relu", tf.nn.relu, "any", ALL, True),
    ("Round", tf.round, "any", FLOATS, False), ("Rsqrt", tf.rsqrt, "pos", FLOATS, True),
    ("Sigmoid", tf.sigmoid, "any", FLOATS, True), ("Sign", tf.sign, "any", ALL, False),
    ("Sin", tf.sin, "any", FLOATS, True), ("Sinh", tf.sinh, "any", FLOATS, True),
    ("Sqrt", tf.sqrt, "pos", FLOATS, True), ("Square", tf.square, "any", ALL, True),
    ("Tan", tf.tan, "unit", FLOATS, True), ("Tanh", tf.tanh, "any", FLOATS, True),
]
_EDGE = {"": (3, 4), "/scalar": (), "/empty": (0, 4)}
for _t, _f, _d, _dts, _g in UNARY:
    for _suffix, _shape in _EDGE.items():
        case(_t, lambda x, f=_f: f(x), lambda dt, s=_shape, d=_d: [rand(s, dt, 1, **_DOMAINS[d])],
             _dts, grad=_g, name=_t + _suffix)

_SPECIAL = np.array([[0.5, np.inf, -np.inf, np.nan], [1.0, -2.0, 0.0, 3.0]])
for _t, _f in [("IsFinite", tf.is_finite), ("IsInf", tf.is_inf), ("IsNan", tf.is_nan)]:
    case(_t, lambda x, f=_f: f(x), lambda dt: [_SPECIAL.astype(dt)], exact=True)

# binary: a matrix with a matrix, broadcasting (3, 1) with (1, 4), a scalar with a matrix
# (op type, public function, domain of x, domain of y, dtypes, differentiable)
BINARY = [
    ("Add", tf.add, "any", "any", ALL, True), ("Sub", tf.subtract, "any", "any", ALL, True),
    ("Mul", tf.multiply, "any", "any", ALL, True), ("RealDiv", tf.truediv, "any", "pos", FLOATS, True),
    ("Maximum", tf.maximum, "any", "any", ALL, True), ("Minimum", tf.minimum, "any", "any", ALL, True),
    ("Pow", tf.pow, "pos", "any", FLOATS, True),
    ("SquaredDifference", tf.squared_difference, "any", "any", ALL, True),
    ("Atan2", tf.atan2, "any", "pos", FLOATS, True),
    ("FloorDiv", tf.floordiv, "any", "pos", ALL, False), ("FloorMod", tf.floormod, "any", "pos", ALL, False),
    ("Equal", tf.equal, "any", "any", ALL, False), ("NotEqual", tf.not_equal, "any", "any", ALL, False),
    ("Less", tf.less, "any", "any", ALL, False), ("LessEqual", tf.less_equal, "any", "any", ALL, False),
    ("Greater", tf.greater, "any", "any", ALL, False),
    ("GreaterEqual", tf.greater_equal, "any", "any", ALL, False),
]
_BSHAPES = {"": ((3, 4), (3, 4)), "/bcast": ((3, 1), (1, 4)), "/scalar": ((), (3, 4))}


def _binary_inputs(dt, shapes, dx, dy):
    x = rand(shapes[0], dt, 2, **_DOMAINS[dx])
    y = rand(shapes[1], dt, 3, **_DOMAINS[dy])
    if np.dtype(dt).kind == "i" and dy == "pos":
        y = np.abs(y) + 1  # integer divisors: never zero
    return [x, y]


for _t, _f, _dx, _dy, _dts, _g in BINARY:
    for _suffix, _shapes in _BSHAPES.items():
        case(_t, lambda x, y, f=_f: f(x, y), lambda dt, s=_shapes, a=_dx, b=_dy: _binary_inputs(dt, s, a, b),
             _dts, grad=_g, exact=not _g, name=_t + _suffix)

_INT_PAIR = lambda dt: [rand((3, 4), I32, 4, lo=-9, hi=10), rand((3, 4), I32, 5, lo=1, hi=5) * idx([[1], [-1], [1]])]
case("TruncateDiv", tf.truncatediv, _INT_PAIR, (I32,), exact=True)
case("TruncateMod", tf.truncatemod, _INT_PAIR, (I32,), exact=True)

_BOOLS = lambda dt: [rand((3, 4), seed=6) > 0, rand((3, 4), seed=7) > 0]
case("LogicalAnd", tf.logical_and, _BOOLS, (F32,), exact=True)
case("LogicalOr", tf.logical_or, _BOOLS, (F32,), exact=True)
case("LogicalXor", tf.logical_xor, _BOOLS, (F32,), exact=True)
case("LogicalNot", tf.logical_not, lambda dt: _BOOLS(dt)[:1], (F32,), exact=True)
case("SelectV2", tf.where, lambda dt: [rand((3, 4), seed=8) > 0, rand((3, 4), dt, 1), rand((3, 4), dt, 2)],
     ALL, grad=True)
case("SelectV2", lambda c, x, y: tf.where_v2(c, x, y) if hasattr(tf, "where_v2") else tf.where(c, x, y),
     lambda dt: [rand((3, 1), seed=8) > 0, rand((1, 4), dt, 1), rand((3, 4), dt, 2)], ALL, grad=True,
     name="SelectV2/bcast")
case("ClipByValue", lambda x: tf.clip_by_value(x, -0.5, 0.5), lambda dt: [rand((3, 4), dt, 1)], FLOATS, grad=True)
# (through an identity: a cast of a constant is folded when the graph is built)
case("Cast", lambda x: tf.cast(tf.identity(x), tf.int32), lambda dt: [rand((3, 4), dt, 1) * 3], FLOATS, exact=True)
case("Cast", lambda x: tf.cast(tf.identity(x), tf.float64), lambda dt: [rand((3, 4), dt, 1)], (F32, I32),
     grad=True, name="Cast/to_float64")
case("ReluGrad", lambda x, w: tf.gradients(tf.reduce_sum(tf.nn.relu(x) * w), x)[0],
     lambda dt: [rand((3, 4), dt, 1), rand((3, 4), dt, 2)])

# ---- reductions and scans ----------------------------------------------------------------------
_M = lambda dt: [rand((3, 4), dt, 1)]
# (indices, ids, masks and lengths are inputs of their own: data on the device, as in TF's GPU
# kernels; axes, shapes, paddings and sizes are graph constants, kept on the host as TF does)
_MI = lambda *ix: (lambda dt: [rand((3, 4), dt, 1)] + [idx(i) for i in ix])
for _t, _f in [("Sum", tf.reduce_sum), ("Mean", tf.reduce_mean), ("Max", tf.reduce_max),
               ("Min", tf.reduce_min), ("Prod", tf.reduce_prod)]:
    case(_t, lambda x, f=_f: f(x, axis=1), _M, ALL, grad=True)
    case(_t, lambda x, f=_f: f(x), _M, ALL, grad=True, name=_t + "/all")
    if _t in ("Sum", "Prod"):  # the identities of an empty reduction
        case(_t, lambda x, f=_f: f(x, axis=0, keepdims=True), lambda dt: [rand((0, 4), dt, 1)], FLOATS,
             name=_t + "/empty")
case("ReduceLogSumExp", lambda x: tf.reduce_logsumexp(x, axis=1), _M, grad=True)
case("All", lambda x: tf.reduce_all(x > -1, axis=1), _M, (F32,), exact=True)
case("Any", lambda x: tf.reduce_any(x > 1, axis=0), _M, (F32,), exact=True)
case("ArgMax", lambda x: tf.argmax(x, axis=1), _M, ALL, exact=True)
case("ArgMin", lambda x: tf.argmin(x, axis=0), _M, ALL, exact=True)
case("Cumsum", lambda x: tf.cumsum(x, axis=1), _M, ALL, grad=True)
case("Cumsum", lambda x: tf.cumsum(x, axis=0, exclusive=True, reverse=True), _M, grad=True,
     name="Cumsum/exclusive_reverse")
case("Cumprod", lambda x: tf.cumprod(x, axis=1), _M, FLOATS, grad=True)

# ---- shapes, copies and rearrangement ----------------------------------------------------------
case("Identity", tf.identity, _M, ALL, grad=True)
case("IdentityN", lambda x, y: tf.identity_n([x, y]), lambda dt: [rand((3, 4), dt, 1), rand((2,), dt, 2)],
     ALL, grad=True)
case("StopGradient", tf.stop_gradient, _M, ALL)
case("PlaceholderWithDefault", lambda x: tf.placeholder_with_default(x, [3, 4]), _M, ALL, grad=True)
case("Pack", lambda x, y: tf.stack([x, y], axis=1), lambda dt: [rand((3, 4), dt, 1), rand((3, 4), dt, 2)],
     ALL, grad=True)
case("Unpack", lambda x: tf.unstack(x, axis=1), _M, ALL, grad=True)
case("Reshape", lambda x: tf.reshape(x, [4, -1]), _M, ALL, grad=True)
case("Reshape", lambda x: tf.reshape(x, [0, 3]), lambda dt: [rand((0, 3), dt)], FLOATS, name="Reshape/empty")
case("Shape", lambda x: tf.shape(x) * 2, _M, ALL, exact=True)
case("Size", lambda x: tf.size(x) + 1, _M, ALL, exact=True)
case("Rank", lambda x: tf.rank(x) + 1, _M, FLOATS, exact=True)
case("ExpandDims", lambda x: tf.expand_dims(x, 1), _M, ALL, grad=True)
case("Squeeze", lambda x: tf.squeeze(x), lambda dt: [rand((1, 4), dt)], ALL, grad=True)
case("Transpose", tf.transpose, _M, ALL, grad=True)
case("ConjugateTranspose", tf.linalg.adjoint, lambda dt: [rand((3, 4), seed=1) + 1j * rand((3, 4), seed=2)],
     ("complex64",))  # a real input makes a plain Transpose
case("ReverseV2", lambda x: tf.reverse(x, [1]), _M, ALL, grad=True)
case("ConcatV2", lambda x, y: tf.concat([x, y], axis=1), lambda dt: [rand((3, 4), dt, 1), rand((3, 2), dt, 2)],
     ALL, grad=True)
case("Split", lambda x: tf.split(x, 2, axis=1), _M, ALL, grad=True)
case("SplitV", lambda x: tf.split(x, [1, 3], axis=1), _M, ALL, grad=True)
case("AddN", lambda x, y, z: tf.add_n([x, y, z]), lambda dt: [rand((3, 4), dt, i) for i in range(3)], ALL,
     grad=True)
case("BroadcastTo", lambda x: tf.broadcast_to(x, [3, 4]), lambda dt: [rand((1, 4), dt)], ALL, grad=True)
case("InvertPermutation", tf.invert_permutation, lambda dt: [idx([2, 0, 3, 1], dt)], (I32,), exact=True)
case("Tile", lambda x: tf.tile(x, [2, 1]), _M, ALL, grad=True)
case("Pad", lambda x: tf.pad(x, [[1, 0], [0, 2]]), _M, ALL, grad=True)
case("PadV2", lambda x: tf.pad(x, [[1, 0], [0, 2]], constant_values=2), _M, ALL, grad=True)
case("MirrorPad", lambda x: tf.pad(x, [[1, 1], [2, 0]], mode="REFLECT"), _M, ALL, grad=True)
case("Slice", lambda x: tf.slice(x, [1, 0], [2, 3]), _M, ALL, grad=True)
case("StridedSlice", lambda x: x[1:, ::2], _M, ALL, grad=True)
case("StridedSliceGrad", lambda x: tf.gradients(tf.reduce_sum(x[1:, ::2] * 3.0), x)[0], _M)
case("Roll", lambda x: tf.roll(x, shift=1, axis=1), _M, ALL, grad=True)
case("ReverseSequence", lambda x, n: tf.reverse_sequence(x, n, seq_axis=1, batch_axis=0), _MI([2, 4, 1]),
     ALL, grad=True)
case("OnesLike", tf.ones_like, _M, ALL)
case("ZerosLike", tf.zeros_like, _M, ALL)
case("Fill", lambda v: tf.fill([2, 3], v), lambda dt: [np.asarray(1.5 if dt != I32 else 3, dt)], ALL)
# (TF keeps a range's bounds in host memory: graph constants here)
case("Range", lambda x: tf.range(1, 9, 2, dtype=x.dtype) * x, lambda dt: [rand((4,), dt, 1)], ALL)
case("LinSpace", lambda a, b: tf.linspace(a, b, 5), lambda dt: [np.asarray(0, dt), np.asarray(1, dt)], FLOATS)
case("Const", lambda x: x + tf.constant(np.arange(12, dtype=np.float32).reshape(3, 4)), _M, (F32,))

# ---- gathers, scatters, segments, data-dependent shapes -----------------------------------------
case("GatherV2", lambda x, i: tf.gather(x, i), _MI([2, 0, 2]), ALL, grad=True)
case("GatherV2", lambda x, i: tf.gather(x, i, axis=1), _MI([3, 1]), ALL, grad=True, name="GatherV2/axis1")
case("GatherNd", tf.gather_nd, _MI([[0, 1], [2, 3]]), ALL, grad=True)
case("OneHot", lambda i: tf.one_hot(i, 4), lambda dt: [idx([0, 2, 1, 3], dt)], (I32,))
case("TopKV2", lambda x: tf.nn.top_k(x, k=2), _M, ALL, grad=True)
for _k in ("Sum", "Max", "Min", "Prod"):
    case("UnsortedSegment" + _k, lambda x, i, k=_k: getattr(tf, "unsorted_segment_" + k.lower())(x, i, 3),
         _MI([1, 0, 1]), ALL, grad=True)
case("ScatterNd", lambda i, u: tf.scatter_nd(i, u, [5, 4]), lambda dt: [idx([[1], [3]]), rand((2, 4), dt)], ALL,
     grad=True)
for _k in ("add", "sub", "update", "max", "min"):
    case("TensorScatter" + _k.capitalize(), lambda x, i, u, k=_k: getattr(tf, "tensor_scatter_nd_" + k)(x, i, u),
         lambda dt: [rand((3, 4), dt, 1), idx([[0], [2]]), rand((2, 4), dt, 2)], ALL,
         grad=_k in ("add", "sub", "update"))
_MASK = lambda dt: [rand((3, 4), dt, 1), idx([True, False, True], bool)]
case("BooleanMask", tf.boolean_mask, _MASK, ALL, grad=True)
case("BooleanMaskGrad", lambda x, m: tf.gradients(tf.reduce_sum(tf.boolean_mask(x, m) * 2.0), x)[0], _MASK)
case("Where", lambda x: tf.where(x > 0), _M, ALL, exact=True)
case("Unique", lambda x: tf.unique(x), lambda dt: [idx([3, 1, 3, 2, 1], dt)], ALL, exact=True)
case("UniqueWithCounts", lambda x: tf.unique_with_counts(x), lambda dt: [idx([3, 1, 3, 2, 1], dt)], ALL,
     exact=True)
case("ListDiff", lambda x, y: tf.setdiff1d(x, y), lambda dt: [idx([1, 2, 3, 4, 5], dt), idx([2, 4], dt)], ALL,
     exact=True)
case("DynamicPartition", lambda x, p: tf.dynamic_partition(x, p, 2), _MI([1, 0, 1]), ALL, grad=True)
case("DynamicStitch", lambda i, j, x, y: tf.dynamic_stitch([i, j], [x, y]),
     lambda dt: [idx([0, 2]), idx([1]), rand((2, 4), dt, 1), rand((1, 4), dt, 2)], ALL, grad=True)
case("SequenceMask", lambda n: tf.sequence_mask(n, 5), lambda dt: [idx([1, 3, 0], dt)], (I32,), exact=True)
case("SparseToDense", lambda i, v: tf.sparse_to_dense(i, [3, 4], v), lambda dt: [idx([[0, 1], [2, 3]]), rand((2,), dt)],
     ALL)
_SP_IDX = [[2, 1], [0, 3], [0, 0], [1, 2]]  # the sparse family's index ops (kernels/sparse_index_ops.py)


def _sp(i, v, shape=(3, 4)):
    return tf.SparseTensor(i, v, list(shape))


case("SparseIndexOrder", lambda i, v: tf.sparse_reorder(_sp(i, v)).values,
     lambda dt: [idx(_SP_IDX, np.int64), rand((4,), dt)], ALL, grad=True)
case("SparseReshape", lambda i, v: tf.sparse_reshape(_sp(i, v), [2, -1]).indices,
     lambda dt: [idx(_SP_IDX, np.int64), rand((4,), dt)], ALL, exact=True)
case("SparseSliceSelect", lambda i, v: tf.sparse_slice(_sp(i, v), [0, 1], [2, 3]).values,
     lambda dt: [idx(_SP_IDX, np.int64), rand((4,), dt)], ALL, grad=True)
case("SparseFillEmptyRowsMap", lambda i, v: tf.sparse_fill_empty_rows(_sp(i, v, (5, 4)), 0)[0].values,
     lambda dt: [idx(_SP_IDX, np.int64), rand((4,), dt)], ALL, grad=True)
case("SparseUnion", lambda i, v: tf.sparse_maximum(_sp(i, v), _sp(i[:2], v[:2] + 1)).values,
     lambda dt: [idx(_SP_IDX, np.int64), rand((4,), dt)], ALL)
case("Bincount", lambda x: tf.bincount(x, minlength=6), lambda dt: [idx([1, 3, 3, 0, 5], dt)], (I32,), exact=True)
case("HistogramFixedWidth", lambda x: tf.histogram_fixed_width(x, [-2.0, 2.0], nbins=5), _M, FLOATS, exact=True)
case("LowerBound", lambda s, v: tf.searchsorted(s, v, side="left"),
     lambda dt: [np.sort(rand((2, 5), dt, 1), axis=1), rand((2, 3), dt, 2)], ALL, exact=True)
case("UpperBound", lambda s, v: tf.searchsorted(s, v, side="right"),
     lambda dt: [np.sort(rand((2, 5), dt, 1), axis=1), rand((2, 3), dt, 2)], ALL, exact=True)
case("GatherNdLinear", lambda x, i: tf.gradients(tf.reduce_sum(tf.gather_nd(x, i)), x)[0], _MI([[0, 1], [2, 3]]))

# ---- linear algebra ----------------------------------------------------------------------------
_AB = lambda dt: [rand((3, 4), dt, 1), rand((4, 2), dt, 2)]
case("MatMul", tf.matmul, _AB, ALL, grad=True)
case("MatMul", lambda a, b: tf.matmul(a, b, transpose_b=True), lambda dt: [rand((3, 4), dt, 1), rand((2, 4), dt, 2)],
     ALL, grad=True, name="MatMul/transpose_b")
case("BatchMatMulV2", tf.matmul, lambda dt: [rand((2, 3, 4), dt, 1), rand((2, 4, 5), dt, 2)], ALL, grad=True)
case("Einsum", lambda a, b: tf.einsum("ij,jk->ik", a, b), _AB, ALL, grad=True)
case("Tensordot", lambda a, b: tf.tensordot(a, b, axes=1), _AB, ALL, grad=True)
_SPD = lambda dt: [(lambda a: (a @ a.T + 4 * np.eye(4)).astype(dt))(rand((4, 4), F64, 1))]
_SQ = lambda dt: [rand((4, 4), dt, 1) + 4 * np.eye(4, dtype=dt)]
case("MatrixInverse", tf.matrix_inverse, _SQ, grad=True, rtol=1e-4)
case("MatrixDeterminant", tf.matrix_determinant, _SQ, grad=True, rtol=1e-4)
case("LogMatrixDeterminant", lambda a: tf.linalg.slogdet(a), _SQ, rtol=1e-4)
case("Cholesky", tf.cholesky, _SPD, grad=True, rtol=1e-4)
case("MatrixSolve", tf.matrix_solve, lambda dt: _SQ(dt) + [rand((4, 2), dt, 2)], grad=True, rtol=1e-4)
case("MatrixTriangularSolve", lambda a, b: tf.matrix_triangular_solve(a, b, lower=True),
     lambda dt: [np.tril(_SQ(dt)[0]), rand((4, 2), dt, 2)], grad=True, rtol=1e-4)
case("Qr", lambda a: tf.qr(a), lambda dt: [rand((4, 3), dt, 1)], rtol=1e-4)
case("Svd", lambda a: tf.svd(a, compute_uv=False), lambda dt: [rand((4, 3), dt, 1)], rtol=1e-4)
case("SelfAdjointEigV2", lambda a: tf.self_adjoint_eig(a)[0], _SPD, rtol=1e-4)
case("MatrixExponential", tf.linalg.expm, lambda dt: [rand((3, 3), dt, 1) * 0.3], rtol=1e-4)
case("MatrixBandPart", lambda a: tf.matrix_band_part(a, 1, 0), _SQ, ALL, grad=True)
case("MatrixDiag", tf.matrix_diag, lambda dt: [rand((2, 3), dt, 1)], ALL, grad=True)
case("MatrixDiagPart", tf.matrix_diag_part, _SQ, ALL, grad=True)
case("MatrixSetDiag", tf.matrix_set_diag, lambda dt: _SQ(dt) + [rand((4,), dt, 2)], ALL, grad=True)
case("Diag", tf.diag, lambda dt: [rand((3,), dt, 1)], ALL, grad=True)
case("DiagPart", tf.diag_part, _SQ, ALL, grad=True)

# ---- convolutions, pooling, images ------------------------------------------------------------
_IMG = lambda dt: [rand((2, 6, 6, 3), dt, 1)]
_CONV = lambda dt: [rand((2, 6, 6, 3), dt, 1), rand((3, 3, 3, 4), dt, 2)]
_conv = lambda x, w: tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
_dconv = lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "VALID")
_DW = lambda dt: [rand((2, 6, 6, 3), dt, 1), rand((3, 3, 3, 2), dt, 2)]
case("Conv2D", _conv, _CONV, grad=True, rtol=1e-4)
case("Conv2DBackpropInput", lambda x, w: tf.gradients(tf.reduce_sum(_conv(x, w) ** 2), x)[0], _CONV, rtol=1e-4)
case("Conv2DBackpropFilter", lambda x, w: tf.gradients(tf.reduce_sum(_conv(x, w) ** 2), w)[0], _CONV, rtol=1e-4)
case("DepthwiseConv2dNative", _dconv, _DW, grad=True, rtol=1e-4)
case("DepthwiseConv2dNativeBackpropInput", lambda x, w: tf.gradients(tf.reduce_sum(_dconv(x, w) ** 2), x)[0],
     _DW, rtol=1e-4)
case("DepthwiseConv2dNativeBackpropFilter", lambda x, w: tf.gradients(tf.reduce_sum(_dconv(x, w) ** 2), w)[0],
     _DW, rtol=1e-4)
_mp = lambda x: tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
_ap = lambda x: tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
case("MaxPool", _mp, _IMG, grad=True)
case("AvgPool", _ap, _IMG, grad=True)
case("MaxPoolGrad", lambda x: tf.gradients(tf.reduce_sum(_mp(x) ** 2), x)[0], _IMG)
case("AvgPoolGrad", lambda x: tf.gradients(tf.reduce_sum(_ap(x) ** 2), x)[0], _IMG)
case("MaxPoolGradGrad", lambda x: tf.gradients(tf.reduce_sum(tf.gradients(tf.reduce_sum(_mp(x) ** 2), x)[0] ** 2),
                                               x)[0], _IMG)
case("MaxPoolWithArgmax", lambda x: tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), _IMG)
case("ResizeBilinear", lambda x: tf.image.resize_bilinear(x, [9, 4]), _IMG, grad=True)
case("ResizeNearestNeighbor", lambda x: tf.image.resize_nearest_neighbor(x, [9, 4]), _IMG, grad=True)
case("ResizeBilinearGrad", lambda x: tf.gradients(tf.reduce_sum(tf.image.resize_bilinear(x, [9, 4]) ** 2), x)[0],
     _IMG)
case("ResizeNearestNeighborGrad",
     lambda x: tf.gradients(tf.reduce_sum(tf.image.resize_nearest_neighbor(x, [9, 4]) ** 2), x)[0], _IMG)
_RGB = lambda dt: [rand((2, 4, 4, 3), dt, 1, lo=0.0, hi=1.0)]
case("RGBToHSV", tf.image.rgb_to_hsv, _RGB, rtol=1e-4)
case("HSVToRGB", tf.image.hsv_to_rgb, _RGB, rtol=1e-4)
case("AdjustHue", lambda x: tf.image.adjust_hue(x, 0.2), _RGB, (F32,), rtol=1e-4)
case("AdjustSaturation", lambda x: tf.image.adjust_saturation(x, 1.5), _RGB, (F32,), rtol=1e-4)
case("DrawBoundingBoxesV2", lambda x: tf.image.draw_bounding_boxes(x, tf.constant([[[0.1, 0.1, 0.8, 0.6]]] * 2)),
     _RGB, (F32,))
case("NonMaxSuppressionV3", lambda b, s: tf.image.non_max_suppression(b, s, 2, 0.5),
     lambda dt: [idx([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3]], dt), idx([0.9, 0.8, 0.7], dt)], (F32,),
     exact=True)

# ---- losses, checks, gradient helpers, chunk functions ------------------------------------------
case("LogisticLoss", lambda z, y: tf.nn.sigmoid_cross_entropy_with_logits(logits=z, labels=y),
     lambda dt: [rand((3, 4), dt, 1), rand((3, 4), dt, 2, lo=0.0, hi=1.0)], grad=True)
case("SparseLabelCheck", lambda z, y: tf.nn.sparse_softmax_cross_entropy_with_logits(logits=z, labels=y),
     _MI([0, 3, 1]), grad=True)
case("CheckNumerics", lambda x: tf.check_numerics(x, "bad"), _M, grad=True)
_unknown = lambda x: tf.placeholder_with_default(x, [None, None])  # shapes known only at run time
case("SumToShape", lambda x, y: tf.gradients(tf.reduce_sum((_unknown(x) + _unknown(y)) ** 2), x)[0],
     lambda dt: [rand((3, 1), dt, 1), rand((1, 4), dt, 2)])
# no gradient rule makes it (unbroadcast uses SumToShape): TF graphs imported by dflow carry it
case("BroadcastGradientArgs", lambda x, y: apply_op("BroadcastGradientArgs", [tf.shape(_unknown(x)),
                                                                               tf.shape(_unknown(y))]),
     lambda dt: [rand((3, 1), dt, 1), rand((1, 4), dt, 2)], exact=True)

def _blockwise(block):
    """A chunk function in the chunk's namespace (numpy or cupy), elementwise as map_blocks needs."""
    xp = array_api_compat.array_namespace(block)
    return xp.tanh(block) * 2 - block


case("MapBlocks", lambda x: tf.map_blocks(_blockwise, x, dtype=x.dtype), _M)

# ---- issue 28: special functions (kernels/special_ops.py) and shuffles (kernels/space_ops.py) ----
for _t, _f, _lo in [("Erf", tf.erf, -2.0), ("Erfc", tf.erfc, -2.0), ("Lgamma", tf.lgamma, 0.5),
                    ("Digamma", tf.digamma, 0.5), ("Rint", tf.rint, -3.0)]:
    case(_t, lambda x, f=_f: f(x), lambda dt, lo=_lo: [rand((3, 4), dt, 1, lo=lo, hi=3.0)], grad=_t != "Rint")
for _t, _f in [("Igamma", tf.igamma), ("Igammac", tf.igammac), ("Zeta", tf.zeta), ("Polygamma", tf.polygamma)]:
    case(_t, lambda a, x, f=_f: f(a, x), lambda dt: [np.array([[1.0], [2.0], [3.0]], dt), rand((1, 4), dt, 2, lo=0.5, hi=3.0)],
         grad=True)
case("Betainc", tf.betainc, lambda dt: [rand((3, 4), dt, 1, lo=0.5, hi=3.0), rand((3, 4), dt, 2, lo=0.5, hi=3.0),
                                        rand((3, 4), dt, 3, lo=0.1, hi=0.9)], grad=True)
_SP = lambda dt: [rand((2, 4, 6, 2), dt, 1)]  # noqa: E731
case("SpaceToDepth", lambda x: tf.space_to_depth(x, 2), _SP, ALL, grad=True)
case("DepthToSpace", lambda x: tf.depth_to_space(x, 2), lambda dt: [rand((2, 2, 3, 8), dt, 1)], ALL, grad=True)
case("SpaceToBatchND", lambda x: tf.space_to_batch_nd(x, [2, 3], [[0, 0], [0, 0]]), _SP, ALL, grad=True)
case("BatchToSpaceND", lambda x: tf.batch_to_space_nd(x, [2, 1], [[0, 1], [0, 0]]), _SP, ALL, grad=True)
_EIP = lambda x: tf.extract_image_patches(x, [1, 3, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1], "SAME")  # noqa: E731
case("ExtractImagePatches", _EIP, _SP, ALL, grad=True)
case("ExtractImagePatchesGrad", lambda x: tf.gradients(tf.reduce_sum(_EIP(x) ** 2), x)[0], _SP)
case("RepeatIndices", lambda x: tf.repeat(x, [1, 0, 2, 3], axis=1), lambda dt: [rand((3, 4), dt, 1)], ALL)
case("UnravelIndex", lambda i: tf.unravel_index(i, [7, 6]), lambda dt: [np.array([22, 41, 37], dt)], (I32,),
     exact=True)
case("Cross", tf.cross, lambda dt: [rand((2, 4, 3), dt, 1), rand((2, 4, 3), dt, 2)], ALL, grad=True)
case("Bitcast", lambda x: tf.bitcast(x, tf.uint8), lambda dt: [rand((3, 4), dt, 1)], ALL, exact=True)
case("IgammaGradA", lambda a, x: tf.gradients(tf.igamma(a, x), a)[0],
     lambda dt: [np.array([[1.0], [2.0], [3.0]], dt), rand((1, 4), dt, 2, lo=0.5, hi=3.0)], rtol=1e-4)

# ---- op types that by design never run on a GPU ------------------------------------------------
_HOST_RES = "a host resource (queue, reader, iterator, table): Python objects the session keeps"
_STRINGS = "string data: object arrays of bytes, which cupy has no dtype for"
_STATE = ("per-run variable state: values are kept by the session's store; exercised on the GPU by "
          "tests/gpu/test_gpu_programs.py (training under tf.device, checkpoints of GPU variables)")
_RANDOM = ("a random draw from the session's per-run counter (needs the run context, and has no data "
           "input to take a namespace from); exercised on the GPU by the initializers of "
           "tests/gpu/test_gpu_programs.py")
NOT_ON_GPU = {
    **{t: _HOST_RES for t in ("FIFOQueueV2", "PaddingFIFOQueueV2", "PriorityQueueV2", "RandomShuffleQueueV2",
                              "FixedLengthRecordReaderV2", "IdentityReaderV2", "TFRecordReaderV2",
                              "TextLineReaderV2", "WholeFileReaderV2", "HashTableV2",
                              "MutableDenseHashTableV2", "MutableHashTableV2")},
    **{t: _STRINGS for t in ("AsString", "StringJoin", "StringLength", "StringToNumber", "StringToHashBucket",
                             "StringToHashBucketFast", "StringToHashBucketStrong", "DecodeCSV", "ParseExample",
                             "DecodeJSONExample", "ParseTensor", "SerializeTensor", "DecodeRaw", "ReduceJoin",
                             "RegexFullMatch", "RegexReplace", "StringLower", "StringSplit", "StringStrip",
                             "StringUpper", "Substr", "CrossHashed")},
    **{t: "image codecs (PNG/JPEG bytes) run on the host (Pillow)" for t in (
        "DecodeImage", "DecodeJpeg", "DecodePng", "EncodeJpeg", "EncodePng")},
    **{t: "file I/O on the host" for t in ("MatchingFiles", "ReadFile", "WriteFile")},
    "ZarrSource": "a Zarr read: chunks come from the store as numpy; the GPU suite streams them to the GPU "
                  "through placement (tests/gpu/test_gpu_programs.py::test_zarr_streams_to_the_gpu...)",
    **{t: "a summary: serialized protos written on the host" for t in (
        "HistogramSummary", "AudioSummaryV2", "ImageSummary", "MergeSummary", "ScalarSummary", "TensorSummaryV2")},
    **{t: "a Python callback: its arguments are copied to the host by design (py_ops._to_host); "
          "tests/gpu/test_gpu_programs.py moves data across it" for t in ("PyFunc", "PyFuncStateless",
                                                                           "EagerPyFunc")},
    **{t: "prints or asserts on the host" for t in ("Assert", "Print", "PrintV2")},
    "NoOp": "no data",
    **{t: _STATE for t in ("VariableV2", "Assign", "AssignAdd", "AssignSub", "ScatterAdd", "ScatterSub",
                           "ScatterUpdate", "ScatterNdAdd", "ScatterNdSub", "ScatterNdUpdate",
                           "ScatterMul", "ScatterDiv", "ScatterMax", "ScatterMin", "ScatterNdMax", "ScatterNdMin",
                           "IsVariableInitialized", "ReportUninitializedVariables")},
    **{t: _RANDOM for t in ("RandomStandardNormal", "RandomUniform", "RandomUniformInt", "TruncatedNormal",
                            "CandidateSampler", "RandomGamma", "RandomPoissonV2")},
    **{t: "a stateless draw: its seed and parameters are read on the host and the counter-based streams "
          "made by numpy (stateless_random_ops)" for t in (
        "StatelessRandomUniform", "StatelessRandomNormal", "StatelessRandomUniformInt", "StatelessTruncatedNormal",
        "StatelessRandomBinomial", "StatelessRandomGammaV2", "StatelessRandomPoisson")},
    "RandomGammaGrad": "a gamma draw's reparameterized gradient: numpy's incomplete gamma on the host (no cupy "
                       "kernel yet; random_gamma_poisson_ops)",
    **{t: "TensorArray: its flow is a 0-d object array holding a tuple of numpy arrays (host-run loops)"
       for t in ("TensorArrayConcatV3", "TensorArrayGatherV3", "TensorArrayGradClear", "TensorArrayGradConcat",
                 "TensorArrayGradFromConcat", "TensorArrayGradFromRead", "TensorArrayGradFromStack",
                 "TensorArrayGradGather", "TensorArrayGradPick", "TensorArrayGradScatter",
                 "TensorArrayGradStack", "TensorArrayReadV3", "TensorArrayScatterV3", "TensorArraySizeV3",
                 "TensorArraySplitV3", "TensorArrayStack", "TensorArrayUnstack", "TensorArrayV3",
                 "TensorArrayWriteV3")},
}


def case_ids():
    """pytest ids and params: one per (case, dtype)."""
    return [(c, dt) for c in CASES for dt in c.dtypes]


def case_id(c, dt):
    return f"{c.name}-{dt}"

# ---- what the CPU proxy found (tests/kernels/test_array_api_strict.py) --------------------------
# Op types whose output is a host value by design (TF1 keeps them in host memory): the proxy
# requires a numpy array from them.
HOST_OUTPUTS = {"Shape", "Size", "Rank", "BroadcastGradientArgs"}

# Cases whose eager kernel leaks numpy-only calls or host copies when its data inputs are on
# array_api_strict's "device1" (strict xfails there, until their modules are fixed). "cupy ok":
# cupy tolerates it (numpy dtypes, numpy-only names cupy also has, arrays made on the current
# device); "breaks cupy": the same call fails or computes on the host with cupy arrays.
_NP_DTYPE = "passes a numpy dtype object to xp (the standard wants xp's dtypes; cupy ok)"
_NP_DTYPE_OF = "reads np.dtype(x.dtype) of the data (array-API dtypes are not numpy's; cupy ok)"
_NO_DEVICE = "made without device= next to device data (lands on the default device; cupy ok: the current device)"
_NUMPY_OP = ("numpy_kernels.py:57 numpy_op: the kernel runs numpy on np.asarray of every input, on the "
             "host, and so does its Dask lowering (_run_whole): breaks cupy")
_F16 = "conv_kernels.py:164 xp.float16 is not in the array API (cupy has it; cupy ok)"
_UPCAST = "linalg_ops.py:87 _upcast " + _NP_DTYPE_OF
LEAKS = {
    "ClipByValue": "math_ops.py:409 xp.minimum/xp.maximum of data with lo/hi as 0-d numpy arrays (graph "
                   "constants): the standard takes Python scalars or arrays of its namespace, and cupy's "
                   "ufuncs refuse numpy arrays: breaks cupy",
    "Cast": "math_ops.py:131 xp.astype(x, DstT.np_dtype) " + _NP_DTYPE,
    "Cast/to_float64": "math_ops.py:131 xp.astype(x, DstT.np_dtype) " + _NP_DTYPE,
    "Mean": "reduction_ops.py:136 _mean " + _NP_DTYPE_OF,
    "Mean/all": "reduction_ops.py:136 _mean " + _NP_DTYPE_OF,
    "ArgMax": "reduction_ops.py:414 _without_nan " + _NP_DTYPE_OF,
    "ArgMin": "reduction_ops.py:414 _without_nan " + _NP_DTYPE_OF,
    "Cumsum/exclusive_reverse": "reduction_ops.py:506 out[(slice(None),) * a + (slice(0, -1),)] is a partial "
                                "multi-axis index (the standard needs a trailing ...; cupy ok)",
    "InvertPermutation": "common.py:326 host_ints: np.asarray(v) of device data when the array has no "
                         ".tolist() (strict arrays have none; cupy arrays do, so cupy ok)",
    "PadV2": "pad_ops.py:140 xp.full(shape, value) with a 0-d array value (the standard wants a Python "
             "scalar; to be seen on a GPU)",
    "MirrorPad": "pad_ops.py:159 xp.pad is not in the array API (numpy-only name; cupy has it)",
    "StridedSliceGrad": "scatter_ops.py:46 _ssg_eager: the zeros dy is scattered into are " + _NO_DEVICE,
    "ReverseSequence": "sequence_ops.py:44 np.asarray(lengths) of device data: breaks cupy",
    "OnesLike": "creation_ops.py:209 xp.full(..., dtype=dtype.np_dtype) " + _NP_DTYPE,
    "ZerosLike": "creation_ops.py:209 xp.full(..., dtype=dtype.np_dtype) " + _NP_DTYPE,
    "Fill": "creation_ops.py:139 _fill_eager reads value.dtype.itemsize (array-API dtypes have none; cupy ok)",
    "Range": "creation_ops.py:266 xp.arange(..., dtype=dtype.np_dtype) " + _NP_DTYPE,
    "LinSpace": "creation_ops.py LinSpace eager: its result is " + _NO_DEVICE,
    "Const": "common.py:190 Const eager xp.asarray(value): " + _NO_DEVICE,
    "GatherNd": "data_dependent_ops.py:464 _linear: the bounds xp.asarray(...) are " + _NO_DEVICE,
    "GatherNdLinear": "data_dependent_ops.py:464 _linear: the bounds xp.asarray(...) are " + _NO_DEVICE,
    "OneHot": "gather_ops.py:203 the classes xp.arange(depth) are " + _NO_DEVICE,
    "UnsortedSegmentSum": "scatter_ops.py:95-110 computes on the host with numpy (np.zeros, np.add.at, "
                          "np.asarray(ids)): breaks cupy",
    "BooleanMaskGrad": "data_dependent_ops.py:187 _unmask_block: the zeros it fills are " + _NO_DEVICE,
    "Unique": "data_dependent_ops.py:271 xp.astype(..., out_idx.np_dtype) " + _NP_DTYPE,
    "DynamicStitch": "data_dependent_ops.py:374 the xp.zeros row concatenated with the data is " + _NO_DEVICE,
    "SequenceMask": "data_dependent_ops.py:580 reads lengths.dtype.kind (array-API dtypes have none; cupy ok)",
    "SparseToDense": "sparse_ops.py:124 _index_rows: np.asarray(indices) of device data: breaks cupy",
    **{n: _UPCAST for n in ("MatMul", "MatMul/transpose_b", "BatchMatMulV2", "Tensordot")},
    "Einsum": "linalg_ops.py:373 xp.einsum is not in the array API (numpy-only name; cupy has it)",
    **{n: _F16 for n in ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2dNative",
                         "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter")},
    **{n: "color_ops.py:85 runs numpy on np.asarray(x) on the host: breaks cupy"
       for n in ("RGBToHSV", "HSVToRGB", "AdjustHue", "AdjustSaturation")},
    **{n: _NUMPY_OP for n in (
        "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd", "ScatterNd", "TensorScatterAdd",
        "TensorScatterSub", "TensorScatterUpdate", "TensorScatterMax", "TensorScatterMin", "UniqueWithCounts",
        "ListDiff", "Bincount", "HistogramFixedWidth", "LowerBound", "UpperBound", "MatrixInverse",
        "MatrixDeterminant", "LogMatrixDeterminant", "Cholesky", "MatrixSolve", "MatrixTriangularSolve", "Qr",
        "Svd", "SelfAdjointEigV2", "MatrixExponential", "MatrixBandPart", "MatrixDiag", "MatrixDiagPart",
        "MatrixSetDiag", "Diag", "DiagPart", "DrawBoundingBoxesV2", "NonMaxSuppressionV3")},
    **{n: _NUMPY_OP for n in ("SpaceToDepth", "DepthToSpace", "SpaceToBatchND", "BatchToSpaceND",
                              "ExtractImagePatches", "ExtractImagePatchesGrad", "UnravelIndex", "RepeatIndices")},
    **{n: _NUMPY_OP for n in ("SparseIndexOrder", "SparseReshape", "SparseSliceSelect", "SparseFillEmptyRowsMap",
                              "SparseUnion")},
    **{n: _NUMPY_OP for n in ("SparseSetOperation", "SparseSetSize", "EditDistance")},
    **{n: _NUMPY_OP for n in ("CTCLoss", "CTCGreedyDecoder")},
    "CTCBeamSearchDecoder": "ctc_ops.py: the beam search runs numpy on the host (whole_task.lower_whole): breaks cupy",
    **{n: "special_ops.py: the kernel runs numpy in float64 on np.asarray(x) on the host (no special "
          "functions in the array API): breaks cupy"
       for n in ("Erf", "Erfc", "Lgamma", "Digamma", "Rint", "Igamma", "Igammac", "Zeta", "Polygamma", "Betainc",
                 "IgammaGradA")},
    "Bitcast": ("bitcast_ops.py _eager: the array API has no bit views, so a strict array goes through "
                "np.asarray on the host; numpy and cupy arrays are viewed in place (cupy ok)"),
}
# the cases a GPU run is expected to fail, as strict xfails there (eager kernels; the numpy_op
# lowerings too): a fix shows as XPASS(strict) and the entry goes
BREAKS_CUPY = {n: why for n, why in LEAKS.items() if "breaks cupy" in why}
NUMPY_OP_CASES = {n for n, why in LEAKS.items() if why == _NUMPY_OP}

# ---- complex numbers (complex_ops): float parts in, a complex tensor through each part op --------
_C64 = ("complex64",)


def _cz(dt):
    return [rand((3, 4), seed=1) + 1j * rand((3, 4), seed=2)]


case("Complex", lambda x, y: tf.abs(tf.complex(x, y)), lambda dt: [rand((3, 4), dt, 1), rand((1, 4), dt, 2)], FLOATS, grad=True)
case("Real", tf.real, _cz, _C64)
case("Imag", tf.imag, _cz, _C64)
case("Conj", tf.conj, _cz, _C64)
case("Angle", tf.angle, _cz, _C64)
case("ComplexAbs", tf.abs, _cz, _C64)

# ---- the FFT family (fft_ops): np.fft kernels on the host (see NOT_ON_GPU for cupy) -----------------
for _t, _f in [("FFT", tf.fft), ("IFFT", tf.ifft), ("FFT2D", tf.fft2d), ("IFFT2D", tf.ifft2d), ("FFT3D", tf.fft3d),
               ("IFFT3D", tf.ifft3d)]:
    case(_t, lambda x, f=_f: tf.abs(f(tf.complex(x, x * 0.5))), lambda dt: [rand((2, 3, 4), dt, 1)], FLOATS,
         grad=True, rtol=1e-4)
for _t, _f, _k in [("RFFT", tf.signal.rfft, 1), ("RFFT2D", tf.signal.rfft2d, 2), ("RFFT3D", tf.signal.rfft3d, 3)]:
    case(_t, lambda x, f=_f: tf.real(f(x)), lambda dt: [rand((2, 3, 4), dt, 1)], FLOATS, grad=True, rtol=1e-4)
for _t, _f, _k in [("IRFFT", tf.signal.irfft, 1), ("IRFFT2D", tf.signal.irfft2d, 2),
                   ("IRFFT3D", tf.signal.irfft3d, 3)]:
    case(_t, lambda x, f=_f, k=_k: f(tf.complex(x, x * 0.5), [2, 3, 6][3 - k:]), lambda dt: [rand((2, 3, 4), dt, 1)],
         FLOATS, grad=True, rtol=1e-4)

# ---- issue 28: tf.bitwise (kernels/bitwise_ops.py), Bessel/ndtri/erfinv (kernels/bessel_ndtri_ops.py),
# CumulativeLogsumexp (kernels/cumulative_ops.py) ----
_BITS = lambda dt: [rand((3, 4), "int32", 1, lo=0, hi=64), rand((1, 4), "int32", 2, lo=0, hi=8)]  # noqa: E731
for _t, _f in [("BitwiseAnd", tf.bitwise.bitwise_and), ("BitwiseOr", tf.bitwise.bitwise_or),
               ("BitwiseXor", tf.bitwise.bitwise_xor), ("LeftShift", tf.bitwise.left_shift),
               ("RightShift", tf.bitwise.right_shift)]:
    case(_t, lambda x, y, f=_f: f(x, y), _BITS, (I32,), exact=True)
case("Invert", tf.bitwise.invert, lambda dt: [rand((3, 4), "int32", 1)], (I32,), exact=True)
for _t, _f, _lo, _hi in [("BesselI0", tf.math.bessel_i0, -3.0, 3.0), ("BesselI0e", tf.math.bessel_i0e, -3.0, 3.0),
                         ("BesselI1", tf.math.bessel_i1, -3.0, 3.0), ("BesselI1e", tf.math.bessel_i1e, -3.0, 3.0),
                         ("Ndtri", tf.math.ndtri, 0.1, 0.9), ("Erfinv", tf.math.erfinv, -0.9, 0.9)]:
    case(_t, lambda x, f=_f: f(x), lambda dt, lo=_lo, hi=_hi: [rand((3, 4), dt, 1, lo=lo, hi=hi)], grad=True)
case("NextAfter", tf.math.nextafter, lambda dt: [rand((3, 4), dt, 1), rand((3, 4), dt, 2)], exact=True)
case("CumulativeLogsumexp", lambda x: tf.math.cumulative_logsumexp(x, axis=1), lambda dt: [rand((3, 4), dt, 1)],
     grad=True)
LEAKS.update({n: "bessel_ndtri_ops.py: the kernel runs numpy in float64 on np.asarray(x) on the host (no special "
                 "functions in the array API): breaks cupy"
              for n in ("BesselI0", "BesselI0e", "BesselI1", "BesselI1e", "Ndtri", "Erfinv", "NextAfter")})
LEAKS["CumulativeLogsumexp"] = ("cumulative_ops.py _logsumexp_along: np.logaddexp.accumulate on np.asarray(x) "
                                "on the host (not in the array API): breaks cupy")
BREAKS_CUPY.update({n: why for n, why in LEAKS.items() if "breaks cupy" in why})
# tf.sets and tf.edit_distance (kernels/set_ops.py): integer sets, no gradient
case("SparseSetOperation", lambda a, b: tf.sets.union(a, b).values,
     lambda dt: [idx([[1, 2, 2], [3, 4, 5]], dt), idx([[2, 6, 6], [5, 5, 5]], dt)], (I32,), exact=True)
case("SparseSetSize", lambda i, v: tf.sets.size(_sp(i, v)),
     lambda dt: [idx([[0, 0], [0, 3], [1, 2], [2, 1]], np.int64), idx([1, 2, 2, 3], dt)],
     (I32,), exact=True)
case("EditDistance", lambda i, v: tf.edit_distance(_sp(i, v), _sp(i[:2], v[:2])),
     lambda dt: [idx(_SP_IDX, np.int64), idx([1, 2, 2, 3], dt)], (I32,), exact=True)
# ---- issue 28's tf.image family: the NMS variants and the sampled crop (box_ops.py), host codecs ----
_NMS_IN = lambda dt: [idx([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3]], dt), idx([0.9, 0.8, 0.7], dt)]
case("NonMaxSuppressionV5", lambda b, s: tf.image.non_max_suppression_with_scores(b, s, 2, 0.5)[0], _NMS_IN,
     (F32,), exact=True)
case("NonMaxSuppressionWithOverlaps",
     lambda o, s: tf.image.non_max_suppression_overlaps(o, s, 2, 0.5),
     lambda dt: [idx([[1, 0.7, 0], [0.7, 1, 0], [0, 0, 1]], dt), idx([0.9, 0.8, 0.7], dt)], (F32,), exact=True)
case("SampleDistortedBoundingBoxV2",
     lambda b: tf.image.sample_distorted_bounding_box([8, 8, 3], b, seed=1, area_range=(1.0, 1.0))[1],
     lambda dt: [idx([[[0.0, 0.0, 1.0, 1.0]]], dt)], (F32,), exact=True)
LEAKS.update({n: _NUMPY_OP for n in ("NonMaxSuppressionV5", "NonMaxSuppressionWithOverlaps",
                                     "SampleDistortedBoundingBoxV2")})
BREAKS_CUPY.update({n: _NUMPY_OP for n in ("NonMaxSuppressionV5", "NonMaxSuppressionWithOverlaps",
                                           "SampleDistortedBoundingBoxV2")})
NUMPY_OP_CASES |= {"NonMaxSuppressionV5", "NonMaxSuppressionWithOverlaps", "SampleDistortedBoundingBoxV2"}
NOT_ON_GPU.update({t: "image codecs (GIF/BMP/JPEG bytes) run on the host (Pillow)" for t in (
    "DecodeGif", "DecodeBmp", "ExtractJpegShape", "DecodeAndCropJpeg", "AdjustJpegQuality")})
NOT_ON_GPU.update({t: _STRINGS for t in ("EncodeBase64", "DecodeBase64", "DecodeCompressed", "SerializeManySparse",
                                         "DeserializeManySparse")})
NOT_ON_GPU["Fingerprint"] = "FarmHash of each row's bytes on the host (kernels/fingerprint.py is Python)"
NOT_ON_GPU["Timestamp"] = "the host's wall clock"
NOT_ON_GPU.update({t: _STRINGS for t in ("StringNGrams", "UnsortedSegmentJoin", "StringFormat", "UnicodeTranscode")})
NOT_ON_GPU["ParseSequenceExample"] = _STRINGS
NOT_ON_GPU["ExtractGlimpse"] = "a numpy task that draws its noise on the host (box_ops._glimpse)"
NOT_ON_GPU["CombinedNonMaxSuppression"] = _NUMPY_OP
NOT_ON_GPU["DecodeWebP"] = "image codecs (WebP bytes) run on the host (Pillow)"
# tf.linalg's LU, matrix functions and tridiagonal solve (kernels/lu_ops.py, matrix_functions.py,
# tridiagonal_ops.py): numpy kernels over whole matrices
case("Lu", lambda a: tf.linalg.lu(a).lu, _SQ, rtol=1e-4)
case("MatrixSquareRoot", tf.linalg.sqrtm, _SQ, grad=True, rtol=1e-4)
case("MatrixLogarithm", lambda a: tf.real(tf.linalg.logm(tf.cast(a, "complex128"))), _SQ, rtol=1e-4)
case("TridiagonalSolve", lambda d, b: tf.linalg.tridiagonal_solve(d, b),
     lambda dt: [rand((3, 4), dt, 1) + np.array([[0.0], [4.0], [0.0]], dt), rand((4, 2), dt, 2)], grad=True,
     rtol=1e-4)
LEAKS.update({n: _NUMPY_OP for n in ("Lu", "MatrixSquareRoot", "MatrixLogarithm", "TridiagonalSolve")})
BREAKS_CUPY.update({n: _NUMPY_OP for n in ("Lu", "MatrixSquareRoot", "MatrixLogarithm", "TridiagonalSolve")})
case("CTCLoss", lambda x: tf.nn.ctc_loss(tf.SparseTensor([[0, 0], [1, 0]], np.array([1, 2], np.int32), [2, 1]), x,
                                        np.array([3, 2], np.int32)),
     lambda dt: [idx(np.linspace(-1, 1, 3 * 2 * 4).reshape(3, 2, 4), dt)], (F32,))
case("CTCGreedyDecoder", lambda x: tf.nn.ctc_greedy_decoder(x, np.array([3, 2], np.int32))[1],
     lambda dt: [idx(np.linspace(-1, 1, 3 * 2 * 4).reshape(3, 2, 4), dt)], (F32,))
case("CTCBeamSearchDecoder", lambda x: tf.nn.ctc_beam_search_decoder(x, np.array([3, 2], np.int32), beam_width=3)[1],
     lambda dt: [idx(np.linspace(-1, 1, 3 * 2 * 4).reshape(3, 2, 4), dt)], (F32,))
# ---- issue 28's tf.nn morphology (kernels/morphology_ops.py): whole-array numpy kernels -------------
_dil = lambda x, f: tf.nn.dilation2d(x, f, [1, 1, 1, 1], [1, 1, 2, 1], "SAME")
_DIL_IN = lambda dt: [rand((1, 4, 5, 2), dt, 1), rand((2, 2, 2), dt, 2)]
case("Dilation2D", _dil, _DIL_IN, grad=True)
case("Dilation2DBackpropInput", lambda x, f: tf.gradients(tf.reduce_sum(_dil(x, f) ** 2), x)[0], _DIL_IN)
case("Dilation2DBackpropFilter", lambda x, f: tf.gradients(tf.reduce_sum(_dil(x, f) ** 2), f)[0], _DIL_IN)
LEAKS.update({n: _NUMPY_OP for n in ("Dilation2D", "Dilation2DBackpropInput", "Dilation2DBackpropFilter")})
BREAKS_CUPY.update({n: why for n, why in LEAKS.items() if "breaks cupy" in why})
