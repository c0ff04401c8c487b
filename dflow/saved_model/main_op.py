"""TF1's `tf.saved_model.main_op`: the op a loaded SavedModel runs after restoring its variables."""

from __future__ import annotations

from ..kernels.control_ops import group
from ..kernels.lookup_ops import tables_initializer
from ..state.variables import global_variables_initializer, local_variables_initializer

__all__ = ["main_op"]


def main_op():
    """An op initializing the global and local variables and the lookup tables, as TF1's. TF1's `main_op_with_restore` is not provided: dflow's
    Saver restores without a restore op."""
    return group(global_variables_initializer(), local_variables_initializer(), tables_initializer())

