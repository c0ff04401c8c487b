"""`dflow run --as-tensorflow`: `import tensorflow ...` gives dflow for the run.

A meta-path finder answers every `tensorflow` module name with the dflow module it stands for:
`tensorflow` and `tensorflow.compat.v1` are `dflow` itself, `tensorflow.compat` is `dflow.compat`,
`tensorflow.X.Y` is the module `dflow.X.Y` reached by attributes (`tensorflow.logging` is
`dflow.logging`). A name dflow lacks (`tensorflow.python...`, `tensorflow.keras`) is a
ModuleNotFoundError that says so. The finder and the module entries go away when the run ends.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import sys
import types

import dflow

__all__ = ["tensorflow_aliases"]

_PREFIX = "tensorflow"


def _resolve(fullname):
    """The dflow module standing for the module name `fullname` (tensorflow or tensorflow.*)."""
    module = dflow
    parts = fullname.split(".")[1:]
    for i, part in enumerate(parts):
        try:
            module = getattr(module, part)
        except AttributeError as e:
            module = e
        if not isinstance(module, types.ModuleType):
            missing = ".".join([_PREFIX, *parts[:i + 1]])
            raise ModuleNotFoundError(f"No module named {missing!r}: `dflow run --as-tensorflow` maps tensorflow to "
                                      f"dflow, which has no module for it", name=fullname)
    return module


class _TensorflowFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != _PREFIX and not fullname.startswith(_PREFIX + "."):
            return None
        _resolve(fullname)  # fails here, naming the module, when dflow lacks it
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = _resolve(spec.name)  # the dflow module itself, never a copy
        spec.loader_state = module.__spec__  # importlib sets module.__spec__ = spec next: undone below
        return module

    def exec_module(self, module):
        """Nothing to run (the module is dflow's, already imported): gives it back its own spec."""
        module.__spec__ = module.__spec__.loader_state


@contextlib.contextmanager
def tensorflow_aliases():
    """Within this block `import tensorflow as tf` (and `tensorflow.compat.v1`, ...) give dflow."""
    finder = _TensorflowFinder()
    shadowed = {name: mod for name, mod in sys.modules.items() if name == _PREFIX or name.startswith(_PREFIX + ".")}
    for name in shadowed:
        del sys.modules[name]
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if n == _PREFIX or n.startswith(_PREFIX + ".")]:
            del sys.modules[name]
        sys.modules.update(shadowed)
