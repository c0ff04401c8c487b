"""One OpDef per op type, and the public functions that create the ops.

Importing this package registers every op. Modules: `common` (conversion, op creation, Const),
`math_ops` (elementwise), `array_ops` (placeholders, shapes, reshape, stack), `manip_ops` (the rest
of array manipulation), `reduction_ops`, `linalg_ops`, `random_ops`.
"""

from . import array_ops, common, control_ops, grad_util, math_ops, state_ops  # noqa: F401
from . import index_ops, linalg_ops, manip_ops, random_ops, reduction_ops  # noqa: F401
