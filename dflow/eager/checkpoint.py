"""`tfe.Saver`: eager variables saved and restored with the same Zarr checkpoints as graph mode
(dflow/io/checkpoint.py's Saver, given the variables' slots in place of a Session's variable
store). `tfe.Checkpoint` is `tf.train.Checkpoint` (dflow/train/object_checkpoint.py), which reads
eager variables through the same adapters."""

from __future__ import annotations

import numpy as np

from ..errors import FailedPreconditionError
from ..io.checkpoint import latest_checkpoint
from ..io.saver import Saver as _GraphSaver
from ..state.variables import Variable

__all__ = ["Saver"]


class _Slots:
    """The part of a Session's VariableStore a Saver uses, over eager variables' slots."""

    def __init__(self, variables):
        self._slots = {v.op.name: v._handle._slot for v in variables}

    def saved_value(self, name):
        value = self._slots[name].value
        if value is None:
            raise FailedPreconditionError(None, None, f"Attempting to use uninitialized value {name!r}")
        return np.asarray(value.get() if hasattr(value, "get") and not isinstance(value, np.ndarray) else value)

    def stores(self, shape, dtype):
        return False


class _EagerSession:
    def __init__(self, variables):
        self.variables = _Slots(variables)

    def load_variable(self, name, value, owned=False):
        slot = self.variables._slots[name]
        arr = np.asarray(value) if owned else np.array(value)
        arr.setflags(write=False)
        slot.value = arr

    def run(self, fetch, feed_dict=None):
        return np.asarray(fetch)


def _variables(var_list):
    vs = list(var_list.values()) if isinstance(var_list, dict) else list(var_list)
    for v in vs:
        if not isinstance(v, Variable):
            raise TypeError(f"Saver: var_list entries must be Variables, got {v!r}")
    return vs


class Saver:
    """Saves and restores eager variables (TF1.5's `tfe.Saver(var_list)`): `save(file_prefix)`,
    `restore(file_prefix)`, in graph mode's Zarr checkpoint format."""

    def __init__(self, var_list):
        self._vars = _variables(var_list)
        self._saver = _GraphSaver(var_list=var_list)

    def save(self, file_prefix, global_step=None):
        return self._saver.save(_EagerSession(self._vars), file_prefix, global_step=global_step,
                                write_meta_graph=False)

    def restore(self, file_prefix):
        self._saver.restore(_EagerSession(self._vars), file_prefix)


latest_checkpoint = latest_checkpoint
