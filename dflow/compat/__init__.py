"""`dflow.compat`: TF's `tf.compat`, whose `v1` is dflow's own TF1 namespace.

`import dflow.compat.v1 as tf` (as `import tensorflow.compat.v1 as tf`, the way most TF1 code runs
today) gives the `dflow` module itself: `dflow.compat.v1.placeholder is dflow.placeholder`. This
package imports nothing above it; dflow/__init__ calls `_install_v1(__name__)` once its namespace
is complete. Also TF's bytes/text helpers (`as_bytes`, `as_text`, `as_str`, `as_str_any`,
`path_to_str`), type tuples and the shape helpers `dimension_value`, `dimension_at_index`.
"""

from __future__ import annotations

import codecs
import importlib
import importlib.abc
import importlib.util
import numbers
import sys
import types

import numpy as np

from ..framework import dimension_at_index, dimension_value
from ..tf1_names import missing_attribute

__all__ = ["as_bytes", "as_text", "as_str", "as_str_any", "path_to_str", "bytes_or_text_types", "integral_types",
           "real_types", "complex_types", "dimension_value", "dimension_at_index"]

bytes_or_text_types = (bytes, str)
integral_types = (numbers.Integral, np.integer)
real_types = (numbers.Real, np.integer, np.floating)
complex_types = (numbers.Complex, np.number)


def as_bytes(bytes_or_text, encoding="utf-8"):
    """`bytes` from bytes, bytearray or str (str encoded with `encoding`); TypeError otherwise."""
    encoding = codecs.lookup(encoding).name  # LookupError for an unknown encoding, as TF
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text, encoding="utf-8"):
    """`str` from str or bytes (bytes decoded with `encoding`); TypeError otherwise."""
    encoding = codecs.lookup(encoding).name
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value, encoding="utf-8"):
    """`str(value)`, except that bytes are decoded with `encoding`."""
    return as_str(value, encoding=encoding) if isinstance(value, bytes) else str(value)


def path_to_str(path):
    """The `str` of an `os.PathLike`; any other input unchanged."""
    return as_str_any(path.__fspath__()) if hasattr(path, "__fspath__") else path


class _LateSubmodules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`dflow.compat.v1.X` for a module `dflow.X` imported after the namespace was installed (the
    `dflow` command's `dflow.cli`, `dflow.demo`): that module itself. Without this finder the import
    system would load a second copy from dflow's path, `dflow.compat.v1` being dflow."""

    def __init__(self, dflow_name):
        self.prefix, self.target = f"{__name__}.v1.", dflow_name

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(self.prefix):
            return None
        if importlib.util.find_spec(f"{self.target}.{fullname[len(self.prefix):]}") is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module(f"{self.target}.{spec.name[len(self.prefix):]}")
        spec.loader_state = module.__spec__  # importlib sets module.__spec__ = spec next: undone below
        return module

    def exec_module(self, module):
        """Nothing to run (the module is already imported): gives it back its own spec."""
        module.__spec__ = module.__spec__.loader_state


def _install_v1(dflow_name):
    """Makes `dflow.compat.v1` (attribute and importable module) the namespace `dflow_name`, and its
    submodules `dflow.compat.v1.nn`, ... the same module objects (never a second copy)."""
    if not any(isinstance(f, _LateSubmodules) for f in sys.meta_path):
        sys.meta_path.insert(0, _LateSubmodules(dflow_name))
    namespace = sys.modules[dflow_name]
    globals()["v1"] = namespace
    sys.modules[f"{__name__}.v1"] = namespace
    for name, value in vars(namespace).items():
        if not name.startswith("_") and isinstance(value, types.ModuleType) and \
                value.__name__.startswith(f"{dflow_name}."):  # dflow.nn, and dflow.dtypes (dflow.graph.dtypes)
            sys.modules[f"{__name__}.v1.{name}"] = value


__getattr__ = missing_attribute(__name__)
