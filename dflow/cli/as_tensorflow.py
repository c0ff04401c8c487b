"""`dflow run --as-tensorflow`: `import tensorflow ...` gives dflow for the run.

A meta-path finder answers every `tensorflow` module name with the dflow module it stands for:
`tensorflow` and `tensorflow.compat.v1` are `dflow` itself, `tensorflow.compat` is `dflow.compat`,
`tensorflow.X.Y` is the module `dflow.X.Y` reached by attributes (`tensorflow.logging` is
`dflow.logging`). TF1 scripts' imports of TensorFlow's internal modules (`from
tensorflow.python.framework import graph_util`, `from tensorflow.python.platform import gfile`,
`from tensorflow.python.ops import array_ops`, `from tensorflow.contrib.learn.python.learn import
learn_runner`, ...) are mapped by the table `PYTHON_MODULES`: a module to a dflow module, or to a
namespace that reads its names from a few dflow modules (`array_ops.concat` is `dflow.concat`).
A module dflow lacks (`tensorflow.tools`, a `tensorflow.python.*` module outside the table) is a
ModuleNotFoundError that names it and says what `--as-tensorflow` maps. The finder and the module
entries go away when the run ends.
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

_OPS = ("dflow", "dflow.nn", "dflow.math", "dflow.train")  # where tensorflow.python.ops.*_ops names live
_TRAIN = ("dflow.train",)

# tensorflow.python.* (and contrib's internal paths) -> a dflow module (a string) or a namespace
# reading its names from these dflow modules in order (a tuple); a package's children are the
# entries below it
PYTHON_MODULES = {
    "tensorflow.python": ("dflow",),
    "tensorflow.python.framework": ("dflow",),
    "tensorflow.python.framework.graph_util": "dflow.graph_util",
    "tensorflow.python.framework.graph_util_impl": "dflow.graph_util",
    "tensorflow.python.framework.ops": ("dflow",),
    "tensorflow.python.framework.dtypes": "dflow.dtypes",
    "tensorflow.python.framework.tensor_shape": ("dflow",),
    "tensorflow.python.framework.constant_op": ("dflow",),
    "tensorflow.python.framework.errors": "dflow.errors",
    "tensorflow.python.framework.errors_impl": "dflow.errors",
    "tensorflow.python.framework.graph_io": _TRAIN,
    "tensorflow.python.framework.importer": ("dflow",),
    "tensorflow.python.framework.sparse_tensor": ("dflow",),
    "tensorflow.python.framework.tensor_util": ("dflow",),
    "tensorflow.python.framework.random_seed": ("dflow",),
    "tensorflow.python.framework.function": ("dflow",),
    "tensorflow.python.platform": ("dflow",),
    "tensorflow.python.platform.gfile": "dflow.gfile",
    "tensorflow.python.platform.tf_logging": "dflow.logging",
    "tensorflow.python.platform.flags": "dflow.flags",
    "tensorflow.python.platform.app": "dflow.app",
    "tensorflow.python.platform.test": "dflow.test",
    "tensorflow.python.ops": ("dflow",),
    **{f"tensorflow.python.ops.{m}": _OPS for m in (
        "array_ops", "math_ops", "control_flow_ops", "state_ops", "variables", "random_ops", "init_ops",
        "variable_scope", "clip_ops", "embedding_ops", "data_flow_ops", "functional_ops", "check_ops",
        "string_ops", "sparse_ops", "logging_ops", "script_ops", "gradients", "gradients_impl", "tensor_array_ops",
        "linalg_ops", "resource_variable_ops", "standard_ops", "partitioned_variables", "template", "special_math_ops",
        "nn", "nn_ops", "nn_impl", "gen_array_ops", "gen_math_ops", "gen_nn_ops")},
    "tensorflow.python.ops.rnn": ("dflow.nn",),
    "tensorflow.python.ops.rnn_cell": ("dflow.nn.rnn_cell",),
    "tensorflow.python.ops.rnn_cell_impl": ("dflow.nn.rnn_cell",),
    "tensorflow.python.ops.losses": "dflow.losses",
    "tensorflow.python.ops.losses.losses": "dflow.losses",
    "tensorflow.python.ops.metrics": "dflow.metrics",
    "tensorflow.python.ops.image_ops": ("dflow.image",),
    "tensorflow.python.ops.summary_ops": ("dflow.summary",),
    "tensorflow.python.training": _TRAIN,
    **{f"tensorflow.python.training.{m}": _TRAIN for m in (
        "saver", "training_util", "moving_averages", "session_run_hook", "basic_session_run_hooks",
        "monitored_session", "optimizer", "gradient_descent", "adam", "momentum", "adagrad", "rmsprop",
        "learning_rate_decay", "queue_runner", "queue_runner_impl", "coordinator", "checkpoint_utils",
        "checkpoint_management", "training")},
    "tensorflow.python.keras": "dflow.keras",
    **{f"tensorflow.python.keras.{m}": f"dflow.keras.{m}" for m in (
        "layers", "models", "backend", "callbacks", "optimizers", "losses", "metrics", "activations", "initializers",
        "regularizers", "constraints", "utils", "preprocessing", "engine")},
    "tensorflow.python.client": ("dflow",),
    "tensorflow.python.client.session": ("dflow",),
    "tensorflow.python.saved_model": "dflow.saved_model",
    **{f"tensorflow.python.saved_model.{m}": f"dflow.saved_model.{m}" for m in (
        "builder", "signature_constants", "tag_constants", "utils", "loader", "signature_def_utils", "main_op")},
    "tensorflow.python.summary": ("dflow.summary",),
    "tensorflow.python.summary.summary": "dflow.summary",
    "tensorflow.python.summary.writer": ("dflow.summary",),
    "tensorflow.python.summary.writer.writer": ("dflow.summary",),
    "tensorflow.python.lib": ("dflow",),
    "tensorflow.python.lib.io": ("dflow",),
    "tensorflow.python.lib.io.file_io": ("dflow.gfile",),
    "tensorflow.python.lib.io.tf_record": "dflow.python_io",
    "tensorflow.python.estimator": "dflow.estimator",
    "tensorflow.python.estimator.estimator": ("dflow.estimator",),
    "tensorflow.python.estimator.model_fn": ("dflow.estimator",),
    "tensorflow.python.estimator.run_config": ("dflow.estimator",),
    "tensorflow.python.data": "dflow.data",
    "tensorflow.python.util": ("dflow",),
    "tensorflow.contrib.learn.python": ("dflow.contrib.learn",),
    "tensorflow.contrib.learn.python.learn": ("dflow.contrib.learn",),
    "tensorflow.contrib.learn.python.learn.learn_runner": "dflow.contrib.learn.learn_runner",
    "tensorflow.contrib.learn.python.learn.experiment": ("dflow.contrib.learn",),
}


def _dflow_module(path):
    module = dflow
    for part in path.split(".")[1:]:
        module = getattr(module, part)
    return module


class _Namespace(types.ModuleType):
    """A TensorFlow module name whose names are read from a few dflow modules (and whose
    submodules are the table's entries below it)."""

    def __init__(self, name, sources):
        super().__init__(name, f"dflow's names for {name} (dflow run --as-tensorflow)")
        self.__sources = sources
        self.__path__ = []  # a package: its submodules are found through the finder

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        child = f"{self.__name__}.{attr}"
        if child in PYTHON_MODULES:
            return _resolve(child)
        for source in self.__sources:
            module = _dflow_module(source)
            if attr in getattr(module, "__dict__", {}) or _has(module, attr):
                return getattr(module, attr)
        raise AttributeError(f"`dflow run --as-tensorflow` maps {self.__name__} onto {', '.join(self.__sources)}, "
                             f"which have no {attr!r}")


def _has(module, attr):
    try:
        getattr(module, attr)
    except AttributeError:
        return False
    return True


_namespaces = {}


def _not_mapped(fullname, why=""):
    return ModuleNotFoundError(
        f"No module named {fullname!r}: `dflow run --as-tensorflow` maps tensorflow to dflow, which has no module for "
        f"it{why}. TensorFlow's internal modules it maps: {', '.join(sorted(k for k in PYTHON_MODULES if k.count('.') == 2))}"
        " and their usual submodules; change the import to a public name (e.g. `tf.graph_util`, `tf.gfile`)",
        name=fullname)


def _resolve(fullname):
    """The dflow module standing for the module name `fullname` (tensorflow or tensorflow.*)."""
    target = PYTHON_MODULES.get(fullname)
    if isinstance(target, str):
        return _dflow_module(target)
    if isinstance(target, tuple):
        if fullname not in _namespaces:
            _namespaces[fullname] = _Namespace(fullname, target)
        return _namespaces[fullname]
    if fullname.startswith(_PREFIX + ".python"):
        raise _not_mapped(fullname)
    module = dflow
    parts = fullname.split(".")[1:]
    for i, part in enumerate(parts):
        why = ""
        try:
            module = getattr(module, part)
        except AttributeError as e:
            module, why = e, f" ({e})"
        if not isinstance(module, types.ModuleType):
            missing = ".".join([_PREFIX, *parts[:i + 1]])
            raise ModuleNotFoundError(f"No module named {missing!r}: `dflow run --as-tensorflow` maps tensorflow to "
                                      f"dflow, which has no module for it{why}", name=fullname)
    return module


class _TensorflowFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != _PREFIX and not fullname.startswith(_PREFIX + "."):
            return None
        _resolve(fullname)  # fails here, naming the module, when dflow lacks it
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = _resolve(spec.name)  # the dflow module itself, never a copy
        spec.loader_state = getattr(module, "__spec__", None)  # importlib sets module.__spec__ = spec: undone below
        return module

    def exec_module(self, module):
        """Nothing to run (the module is dflow's, already imported): gives it back its own spec."""
        if not isinstance(module, _Namespace):
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
        for name, namespace in _namespaces.items():  # importlib set them on their dflow parents: undone
            parent = sys.modules.get(name.rpartition(".")[0])
            child = name.rpartition(".")[2]
            if parent is not None and not isinstance(parent, _Namespace) and parent.__dict__.get(child) is namespace:
                delattr(parent, child)
        _namespaces.clear()
        for name in [n for n in sys.modules if n == _PREFIX or n.startswith(_PREFIX + ".")]:
            del sys.modules[name]
        sys.modules.update(shadowed)
