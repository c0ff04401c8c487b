"""`dflow.sparse`: TF1's `tf.sparse` namespace, as far as dflow's minimal SparseTensor goes
(kernels/sparse_ops.py): the tensor itself, `placeholder` and `to_dense`. The other sparse ops are not done
(their names raise the AttributeError that says so)."""

from .kernels.sparse_ops import SparseTensor, sparse_placeholder, sparse_tensor_to_dense


def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor of a SparseTensor, `default_value` (0, or b"" for strings) elsewhere."""
    return sparse_tensor_to_dense(sp_input, default_value, validate_indices, name)


placeholder = sparse_placeholder

__all__ = ["SparseTensor", "placeholder", "to_dense"]

from .tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute(__name__)  # a TF1 name dflow lacks says so (docs/tf1_coverage.md)
