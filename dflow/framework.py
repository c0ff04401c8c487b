"""TF1's framework helpers of the top namespace: tensor predicates (`is_tensor`, `get_static_value`,
`is_numeric_tensor`), shape helpers (`dimension_value`, `dimension_at_index`,
`broadcast_static_shape`, `broadcast_dynamic_shape`, `ensure_shape`), gradient helpers
(`AggregationMethod`, `UnconnectedGradients`, `no_gradient`, `hessians`, `grad_pass_through`,
`recompute_grad`), graph contexts (`init_scope`, `colocate_with`, `container`, `op_scope`), the
type specs (`TypeSpec`, `TensorSpec`), the variable enums and partitioners, `switch_case` and a few
aliases (`initialize_all_tables`, `no_regularizer`, `guarantee_const`, `sparse_matmul`).

All are composites of registered ops or plain Python, so their gradients are those ops'.
`ensure_shape` checks the static shape when the graph is built (ValueError) and the runtime
shape through an Assert (InvalidArgumentError naming the tensor, in TF's words).
"""

from __future__ import annotations

import contextlib
import enum

import numpy as np

from .graph import dtypes
from .graph.gradients import gradients
from .graph.graph import get_default_graph, get_seed, name_scope
from .graph.indexed_slices import IndexedSlices
from .graph.ops import Tensor, constant_value
from .graph.registry import not_differentiable
from .graph.shape import Dimension, TensorShape, as_shape, broadcast_static_shape, dimension_value
from .kernels.array_ops import identity, reshape, size, stack
from .kernels.array_ops import shape as _shape_op
from .kernels.check_ops import Assert
from .kernels.common import convert_to_tensor
from .kernels.control_flow_ops import case
from .kernels.creation_ops import ones
from .kernels.custom_gradient import custom_gradient
from .kernels.linalg_ops import matmul
from .kernels.lookup_ops import tables_initializer
from .kernels.manip_ops import concat
from .kernels.math_ops import cast, equal, logical_and, logical_or, maximum, subtract, where
from .kernels.pad_ops import pad
from .kernels.reduction_ops import reduce_all
from .kernels.sparse_ops import SparseTensor, SparseTensorValue

__all__ = ["AggregationMethod", "UnconnectedGradients", "NoGradient", "no_gradient", "is_tensor", "is_symbolic_tensor",
           "get_static_value", "is_numeric_tensor", "dimension_value", "dimension_at_index", "broadcast_static_shape",
           "broadcast_dynamic_shape", "ensure_shape", "hessians", "grad_pass_through", "recompute_grad", "init_scope",
           "colocate_with", "container", "op_scope", "convert_to_tensor_or_indexed_slices",
           "convert_to_tensor_or_sparse_tensor", "TypeSpec", "TensorSpec", "VariableAggregation",
           "VariableSynchronization", "fixed_size_partitioner", "min_max_variable_partitioner",
           "variable_axis_size_partitioner", "switch_case", "initialize_all_tables", "no_regularizer",
           "guarantee_const", "sparse_matmul", "get_seed"]


class AggregationMethod:
    """How `tf.gradients` sums the gradients reaching one tensor (TF1's constants). dflow adds them
    with one AddN whatever the method; another value is a ValueError, as TF1."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


class UnconnectedGradients(enum.Enum):
    """What `tf.gradients` returns for an x that ys do not depend on: None or zeros."""

    NONE = "none"
    ZERO = "zero"


no_gradient = not_differentiable
NoGradient = not_differentiable


def is_tensor(x):
    """True for a graph or eager tensor, a SparseTensor, an IndexedSlices or a Variable (TF's
    tensor-like objects); False for numpy arrays and Python values."""
    return isinstance(x, (Tensor, SparseTensor, IndexedSlices)) or hasattr(x, "_as_graph_element")


def is_symbolic_tensor(x):
    """True for a graph tensor (one whose value exists only when a session runs it)."""
    return isinstance(x, Tensor) and not getattr(x, "_is_eager", False)


def get_static_value(tensor, partial=False):
    """The numpy value of `tensor` when it is known while the graph is built, else None; a value
    that is not a tensor is returned as it is (TF's `tf.get_static_value`)."""
    if not is_tensor(tensor):
        return tensor
    if not isinstance(tensor, Tensor):
        return None
    return constant_value(tensor)


_NUMERIC = ("is_floating", "is_integer", "is_complex")


def is_numeric_tensor(tensor):
    """True for a Tensor of a float, integer or complex dtype (bool and string are not numeric)."""
    return isinstance(tensor, Tensor) and any(getattr(tensor.dtype, k) for k in _NUMERIC)


def dimension_at_index(shape, index):
    """`shape[index]` as a Dimension; an unknown-rank shape gives Dimension(None)."""
    shape = as_shape(shape)
    if shape.ndims is None:
        return Dimension(None)
    return shape.dims[index]


def broadcast_dynamic_shape(shape_x, shape_y):
    """The broadcast of two shape vectors (int32 or int64 tensors) as a tensor; an InvalidArgumentError
    when the session runs it if they cannot broadcast (TF's BroadcastArgs)."""
    with name_scope(None, "BroadcastArgs", [shape_x, shape_y]):
        sx = convert_to_tensor(shape_x, name="s0")
        sy = convert_to_tensor(shape_y, name="s1", dtype=sx.dtype)
        if sx.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"broadcast_dynamic_shape: shapes must be int32 or int64, got {sx.dtype.name}")
        for t in (sx, sy):
            if t.shape.ndims not in (None, 1):
                raise ValueError(f"broadcast_dynamic_shape: {t.name} must be a vector, has shape {t.shape}")
        n = maximum(size(sx, out_type=sx.dtype), size(sy, out_type=sx.dtype))
        px = concat([ones(reshape(n - size(sx, out_type=sx.dtype), [1]), dtype=sx.dtype), sx], 0)
        py = concat([ones(reshape(n - size(sy, out_type=sx.dtype), [1]), dtype=sx.dtype), sy], 0)
        ok = reduce_all(logical_or(logical_or(equal(px, py), equal(px, 1)), equal(py, 1)))
        check = Assert(ok, ["Incompatible shapes: ", sx, " vs. ", sy])
        with get_default_graph().control_dependencies([check]):
            return identity(where(equal(px, 1), py, px), name="r0")


def ensure_shape(x, shape, name=None):
    """`x`, with its static shape merged with `shape`; ValueError now when they conflict, and an
    InvalidArgumentError when the session runs it if the runtime shape does not match."""
    shape = as_shape(shape)
    with name_scope(name, "EnsureShape", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.shape.is_compatible_with(shape):
            raise ValueError(f"ensure_shape: {x.name} has static shape {x.shape}, which is not compatible with the "
                             f"expected shape {shape}")
        merged = x.shape.merge_with(shape)
        want = shape.as_list() if shape.ndims is not None else None
        if want is None or x.shape.is_fully_defined():
            out = identity(x)
        else:
            actual = _shape_op(x)
            conds = [equal(size(actual), len(want))]
            if x.shape.ndims is not None:  # the rank is known and equal: compare the known dims
                conds = [equal(actual[i], d) for i, d in enumerate(want) if d is not None and x.shape[i].value is None]
                ok = reduce_all(stack(conds)) if conds else None
            else:
                ok = _dims_match(actual, want)
            if ok is None:
                out = identity(x)
            else:
                shown = "[" + ",".join("?" if d is None else str(d) for d in want) + "]"
                check = Assert(ok, [f"Shape of tensor {x.op.name} ", actual,
                                    f" is not compatible with expected shape {shown}."])
                with get_default_graph().control_dependencies([check]):
                    out = identity(x)
        out.set_shape(merged)
        return out


def _dims_match(actual, want):
    """A bool tensor: the shape vector `actual` has len(want) entries, equal to want's known ones."""
    n = len(want)
    rank_ok = equal(size(actual), n)
    # pad/trim to n entries so the comparison is defined whatever the runtime rank
    padded = pad(actual, [[0, n]], constant_values=-1)[:n]
    known = [i for i, d in enumerate(want) if d is not None]
    if not known:
        return rank_ok
    dims_ok = reduce_all(stack([equal(padded[i], want[i]) for i in known]))
    return logical_and(rank_ok, dims_ok)


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False, gate_gradients=False,
             aggregation_method=None):
    """The Hessian of sum(ys) with respect to each x in xs, of shape x.shape + x.shape (TF1's
    `tf.hessians`): the gradient of each entry of the gradient. Each x needs a fully defined
    static shape (ValueError otherwise)."""
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    out = []
    with name_scope(name, "hessians", xs):
        grads = gradients(ys, xs)
        for x, g in zip(xs, grads):
            if g is None:
                out.append(None)
                continue
            xshape = x.shape
            if not xshape.is_fully_defined():
                raise ValueError(f"hessians: {x.name} needs a fully defined static shape, has {xshape}")
            n = int(np.prod(xshape.as_list()))
            flat = reshape(convert_to_tensor(g), [-1])
            rows = []
            for i in range(n):
                (r,) = gradients(flat[i], [x], unconnected_gradients="zero")
                rows.append(convert_to_tensor(r))
            h = stack(rows) if rows else reshape(flat, [0] + xshape.as_list())
            out.append(reshape(h, xshape.as_list() + xshape.as_list()))
    return out


def grad_pass_through(f):
    """`f`, whose gradient with respect to its single input is the identity (as if `f` were
    `tf.identity` for backprop), e.g. for a quantizer or a non-differentiable assign."""

    @custom_gradient
    def _wrapped(x):
        return f(x), lambda dy: dy

    def call(x):
        return _wrapped(convert_to_tensor(x))

    return call


def recompute_grad(f):
    """`f` unchanged: TF recomputes its forward pass during backprop to save memory; dflow's plan
    already frees intermediates, and the values and gradients are the same."""
    return f


@contextlib.contextmanager
def init_scope():
    """Clears the control dependencies (as TF1's `init_scope` in graph mode), so that ops made for
    initialization do not wait on the surrounding ones; the name scope is kept."""
    with get_default_graph().control_dependencies(None):
        yield


@contextlib.contextmanager
def colocate_with(op, ignore_existing=False):
    """Accepted and ignored: dflow places ops itself (as TF, where colocation is only a hint)."""
    yield


@contextlib.contextmanager
def container(container_name):
    """Accepted: dflow keeps stateful values per session, so there are no resource containers."""
    yield container_name


@contextlib.contextmanager
def op_scope(values, name, default_name=None):
    """TF1's deprecated spelling of `name_scope(name, default_name, values)`."""
    with name_scope(name, default_name, values) as scope:
        yield scope


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    """An IndexedSlices as it is (its dtype checked); anything else through convert_to_tensor."""
    if isinstance(value, IndexedSlices):
        if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for IndexedSlices "
                             f"with dtype {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def convert_to_tensor_or_sparse_tensor(value, dtype=None, name=None):
    """A SparseTensor (or SparseTensorValue, made a SparseTensor) as it is; else convert_to_tensor."""
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
            raise ValueError(f"Sparse dtype: requested = {dtypes.as_dtype(dtype).name}, actual = "
                             f"{value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


class TypeSpec:
    """The base of value type specifications (TF's `tf.TypeSpec`)."""

    def is_compatible_with(self, spec_or_value):
        raise NotImplementedError

    @property
    def value_type(self):
        raise NotImplementedError


class TensorSpec(TypeSpec):
    """The shape, dtype and optional name of a tensor (TF's `tf.TensorSpec`)."""

    def __init__(self, shape, dtype=dtypes.float32, name=None):
        self._shape = as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._name = name

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    name = property(lambda self: self._name)
    value_type = property(lambda self: Tensor)

    @classmethod
    def from_tensor(cls, tensor, name=None):
        tensor = convert_to_tensor(tensor)
        return cls(tensor.shape, tensor.dtype, name if name is not None else tensor.op.name)

    @classmethod
    def from_spec(cls, spec, name=None):
        return cls(spec.shape, spec.dtype, name if name is not None else spec.name)

    def is_compatible_with(self, spec_or_value):
        if isinstance(spec_or_value, TensorSpec):
            other_shape, other_dtype = spec_or_value.shape, spec_or_value.dtype
        else:
            if not is_tensor(spec_or_value):
                spec_or_value = convert_to_tensor(spec_or_value)
            other_shape, other_dtype = spec_or_value.shape, spec_or_value.dtype
        return self._dtype == other_dtype and self._shape.is_compatible_with(other_shape)

    def most_specific_compatible_type(self, other):
        if self._dtype != other.dtype:
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        a, b = self._shape, other.shape
        if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
            merged = TensorShape(None)
        else:
            merged = TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])
        return TensorSpec(merged, self._dtype, self._name if self._name == other.name else None)

    def __eq__(self, other):
        return (type(self) is type(other) and self._dtype == other._dtype and self._name == other._name
                and self._shape.as_list() == other._shape.as_list() if self._shape.ndims is not None
                else type(self) is type(other) and other._shape.ndims is None and self._dtype == other._dtype
                and self._name == other._name)

    def __hash__(self):
        return hash((self._dtype, self._name, self._shape.ndims))

    def __repr__(self):
        dims = "<unknown>" if self._shape.ndims is None else str(self._shape)
        return f"TensorSpec(shape={dims}, dtype=tf.{self._dtype.name}, name={self._name!r})"


class VariableAggregation(enum.Enum):
    """How a distributed variable's replicas are combined (TF's enum). dflow runs one replica."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3  # TF1's older name: an alias of ONLY_FIRST_REPLICA


class VariableSynchronization(enum.Enum):
    """When a distributed variable is synchronized (TF's enum). dflow runs one replica."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


def fixed_size_partitioner(num_shards, axis=0):
    """A partitioner (shape, dtype) -> partitions list: `num_shards` along `axis` (TF1's).
    dflow's get_variable accepts a partitioner and makes one variable (Dask chunks it instead)."""

    def _partitioner(shape, **unused_args):
        partitions = [1] * len(as_shape(shape))
        partitions[axis] = min(num_shards, as_shape(shape).dims[axis].value)
        return partitions

    return _partitioner


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16, max_shards=None):
    """A partitioner keeping each shard under `max_shard_bytes` along `axis` (TF1's rule)."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be positive. "
                         f"Currently, max_shard_bytes is {max_shard_bytes} and bytes_per_string_element is "
                         f"{bytes_per_string_element}")
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape, dtype):
        shape = as_shape(shape)
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        dtype = dtypes.as_dtype(dtype)
        dims = shape.as_list()
        if dtype == dtypes.string:
            bytes_per_element = bytes_per_string_element
        else:
            bytes_per_element = dtype.size
        total = int(np.prod(dims)) * bytes_per_element
        slices_per_shard = max(1, max_shard_bytes // (total // dims[axis] if dims[axis] else 1)) \
            if total else dims[axis]
        axis_shards = int(np.ceil(1.0 * dims[axis] / slices_per_shard)) if dims[axis] else 1
        if max_shards:
            axis_shards = min(max_shards, axis_shards)
        partitions = [1] * len(dims)
        partitions[axis] = max(1, axis_shards)
        return partitions

    return _partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10, bytes_per_string_element=16):
    """A partitioner with slices of at least `min_slice_size` bytes and at most `max_partitions`
    shards along `axis` (TF1's rule)."""

    def _partitioner(shape, dtype):
        shape = as_shape(shape)
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        dtype = dtypes.as_dtype(dtype)
        dims = shape.as_list()
        elem = bytes_per_string_element if dtype == dtypes.string else dtype.size
        total = int(np.prod(dims)) * elem
        partitions = [1] * len(dims)
        partitions[axis] = max(1, min(max_partitions, dims[axis], int(np.ceil(total / min_slice_size))))
        return partitions

    return _partitioner


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """The branch `branch_fns[branch_index]` (a list, or a dict with keys 0..n-1); an index out of
    range takes `default`, or the last branch when there is none (TF's `tf.switch_case`)."""
    if isinstance(branch_fns, dict):
        keys = sorted(branch_fns)
        if keys != list(range(len(keys))):
            raise ValueError(f"branch indices (keys) must form contiguous range of [0 to {len(keys)}) but found "
                             f"{{{','.join(str(k) for k in sorted(branch_fns))}}}")
        fns = [branch_fns[k] for k in keys]
    else:
        fns = list(branch_fns)
        if fns and isinstance(fns[0], tuple):
            fns = [f for _, f in sorted(fns, key=lambda kv: kv[0])]
    if not fns:
        raise ValueError("Must provide at least one item in branch_fns")
    for f in fns + ([default] if default is not None else []):
        if not callable(f):
            raise TypeError(f"switch_case: each branch must be callable, got {f!r}")
    with name_scope(name, "switch_case", [branch_index]):
        idx = convert_to_tensor(branch_index, name="branch_index")
        if idx.dtype != dtypes.int32:
            raise TypeError(f"branch_index must an int32 tensor, got {idx.dtype.name}")
        if default is None:
            default, fns = fns[-1], fns[:-1]
        return case([(equal(idx, i), f) for i, f in enumerate(fns)], default=default, exclusive=False)


initialize_all_tables = tables_initializer


def no_regularizer(_):
    """A regularizer that adds nothing (TF1's `tf.no_regularizer`): returns None."""
    return None


def guarantee_const(input, name=None):  # noqa: A002 - TF1 signature
    """`input` unchanged (TF's promise to the runtime that it is constant for the run)."""
    return identity(input, name=name or "GuaranteeConst")


def sparse_matmul(a, b, transpose_a=False, transpose_b=False, a_is_sparse=False, b_is_sparse=False, name=None):
    """A float32 matrix product (TF1's SparseMatMul; the *_is_sparse hints do not change the result)."""
    a = convert_to_tensor(a, name="a")
    b = convert_to_tensor(b, name="b")
    for t in (a, b):
        if t.dtype != dtypes.float32:
            raise TypeError(f"sparse_matmul: {t.name} has dtype {t.dtype.name}; SparseMatMul takes float32")
    return matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b, name=name or "SparseMatMul")


# silence "imported but unused" for names re-exported through __all__
_ = (broadcast_static_shape, dimension_value, get_seed, cast, subtract)
