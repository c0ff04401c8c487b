"""One OpDef per op type, and the public functions that create the ops.

Importing this package registers every op. Modules: `common` (conversion, op creation, Const),
`math_ops` (elementwise), `array_ops` (placeholders, shapes, reshape, stack), `creation_ops`
(zeros, fill, range...), `manip_ops` (transpose, concat, split...), `pad_ops` (tile, pad),
`index_ops` (slicing, gather, one_hot, top_k), `scatter_ops` (segment sums, index gradients),
`reduction_ops`, `linalg_ops`, `random_ops`, `state_ops`, `control_ops`, `grad_util`.
"""

from . import (  # noqa: F401  # noqa: F401
    array_ops,
    common,
    control_ops,
    grad_util,
    index_ops,
    linalg_ops,
    manip_ops,
    math_ops,
    random_ops,
    reduction_ops,
    state_ops,
)
