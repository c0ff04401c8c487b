"""`dflow.sets`: TF's `tf.sets` (and TF1's `tf.sets.set_*` spellings): set operations along the last
dimension of dense tensors or SparseTensors, results as SparseTensors (kernels/set_ops.py)."""

from .kernels.set_ops import set_operation as _set_operation
from .kernels.set_ops import set_size as size

__all__ = ["intersection", "union", "difference", "size", "set_intersection", "set_union", "set_difference",
           "set_size"]


def intersection(a, b, validate_indices=True):
    """The values in both a's and b's set of each row, sorted (a SparseTensor)."""
    return _set_operation(a, b, "intersection", validate_indices)


def union(a, b, validate_indices=True):
    """The values in a's or b's set of each row, sorted (a SparseTensor)."""
    return _set_operation(a, b, "union", validate_indices)


def difference(a, b, aminusb=True, validate_indices=True):
    """a - b (or b - a when `aminusb` is False) per row, sorted (a SparseTensor)."""
    return _set_operation(a, b, "a-b" if aminusb else "b-a", validate_indices)


set_intersection, set_union, set_difference, set_size = intersection, union, difference, size
