"""`dflow.dtypes`: TF1's `tf.dtypes` namespace: the DType objects and `as_dtype` (graph/dtypes.py)
with the ops TF1 also places here: `cast`, `saturate_cast`, `complex` and `as_string`. The graph
layer keeps the dtypes themselves; this namespace only adds the ops above it."""

from .graph.dtypes import *  # noqa: F403 - the namespace is the dtypes module's names
from .graph.dtypes import __all__ as _DTYPE_NAMES
from .kernels.array_composites import saturate_cast
from .kernels.complex_ops import complex  # noqa: A004 - TF1 public name
from .kernels.math_ops import cast
from .kernels.string_ops import as_string
from .tf1_names import missing_attribute

__all__ = list(_DTYPE_NAMES) + ["cast", "saturate_cast", "complex", "as_string"]

__getattr__ = missing_attribute(__name__)
