"""TF1's `tf.saved_model.main_op`: the op a loaded SavedModel runs after restoring its variables."""

from __future__ import annotations

from ..kernels.control_ops import group
from ..state.variables import global_variables_initializer, local_variables_initializer

__all__ = ["main_op"]


def main_op():
    """An op initializing the global and local variables, as TF1's (which also initializes lookup
    tables, which dflow does not have). TF1's `main_op_with_restore` is not provided: dflow's
    Saver restores without a restore op."""
    return group(global_variables_initializer(), local_variables_initializer())

