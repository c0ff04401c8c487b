"""`tfe.Saver` and `tfe.Checkpoint`: eager variables saved and restored with the same Zarr
checkpoints as graph mode (dflow/io/checkpoint.py's Saver, given the variables' slots in place of a
Session's variable store)."""

from __future__ import annotations

import numpy as np

from ..errors import FailedPreconditionError
from ..io.checkpoint import latest_checkpoint
from ..io.saver import Saver as _GraphSaver
from ..state.variables import Variable
from .tape import flatten

__all__ = ["Saver", "Checkpoint"]


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


class _Status:
    def assert_consumed(self):
        return self

    def assert_existing_objects_matched(self):
        return self

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None):
        pass

    def initialize_or_restore(self, session=None):
        pass


def _collect(prefix, obj, out, seen):
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, Variable):
        out[prefix] = obj
        return
    if isinstance(obj, (list, tuple)):
        for i, o in enumerate(obj):
            _collect(f"{prefix}/{i}", o, out, seen)
        return
    if isinstance(obj, dict):
        for k, o in obj.items():
            _collect(f"{prefix}/{k}", o, out, seen)
        return
    getter = getattr(obj, "variables", None)  # optimizers, metrics, layers
    if getter is not None:
        vs = getter() if callable(getter) else getter
        for v in flatten(list(vs)):
            if isinstance(v, Variable):
                out[f"{prefix}/{v.op.name}"] = v


class Checkpoint:
    """Object-based checkpoints (TF's `tf.train.Checkpoint(**objects)`): the variables reachable from
    the named objects (variables, lists and dicts of them, optimizers, metrics), saved under their
    paths; `save(prefix)` numbers checkpoints `prefix-1`, `prefix-2`, ..."""

    def __init__(self, **kwargs):
        self._objects = kwargs
        self._count = 0

    def _var_map(self):
        out, seen = {}, set()
        for k, o in self._objects.items():
            _collect(k, o, out, seen)
        return out

    @property
    def save_counter(self):
        return self._count

    def save(self, file_prefix, session=None):
        self._count += 1
        var_map = self._var_map()
        saver = _GraphSaver(var_list=var_map, max_to_keep=None)
        return saver.save(_EagerSession(var_map.values()), f"{file_prefix}-{self._count}", write_meta_graph=False)

    def write(self, file_prefix, session=None):
        var_map = self._var_map()
        return _GraphSaver(var_list=var_map).save(_EagerSession(var_map.values()), file_prefix,
                                                  write_meta_graph=False, write_state=False)

    def restore(self, save_path):
        if save_path is None:
            return _Status()
        var_map = self._var_map()
        _GraphSaver(var_list=var_map).restore(_EagerSession(var_map.values()), save_path)
        try:
            self._count = max(self._count, int(str(save_path).rsplit("-", 1)[1]))
        except (IndexError, ValueError):
            pass
        return _Status()


latest_checkpoint = latest_checkpoint
