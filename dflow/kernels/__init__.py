"""One OpDef per op type, and the public functions that create the ops.

Importing this package registers every op (each module is imported by `dflow/__init__.py`).
Modules: `common` (conversion, op creation, Const), `array_ops` (placeholders, shapes, reshape,
stack), `grad_util` (unbroadcast), `math_ops` (elementwise), `reduction_ops`, `index_ops`
(strided_slice, slice, getitem), `gather_ops` (gather, one_hot, top_k), `creation_ops` (zeros, fill, range...), `manip_ops`
(transpose, concat, split...), `pad_ops` (tile, pad), `pool_ops` (max/avg pooling; its window walks in `pool_windows`), `image_ops`
(bilinear and nearest resizing), `linalg_ops`, `conv_ops` (conv2d, its backprop ops, conv1d,
conv2d_transpose; their im2col kernels in `conv_kernels`), `depthwise_ops` (depthwise and separable convolutions), `scatter_ops` (segment sums),
`data_dependent_ops` (boolean_mask, unique, where), `random_ops`, `state_ops`, `py_ops`,
`string_ops` (as_string, string_join), `sequence_ops` (reverse_sequence), `control_ops`, `tensor_array_ops`,
`check_ops`, `control_flow_ops`, `functional_ops` (map_fn, scan, foldl, foldr), `custom_gradient`. Their
import order is docs/ARCHITECTURE.md's kernel layers."""

from . import (  # noqa: F401  # noqa: F401
    array_ops,
    common,
    control_ops,
    gather_ops,
    grad_util,
    index_ops,
    linalg_ops,
    manip_ops,
    math_ops,
    random_ops,
    reduction_ops,
    state_ops,
    string_ops,
)
