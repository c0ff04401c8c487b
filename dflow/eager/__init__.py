"""Eager execution (TF1's `tf.contrib.eager`, `tfe`): ops that run at once on the same op registry
as graph mode, gradient tapes over the same gradient rules, and functions traced into graphs.

Graph mode stays the default; `enable_eager_execution()` (at program start) or the `eager_mode()`
context switches. See docs/ARCHITECTURE.md, "Eager execution".
"""

from ..data.iterator import EagerIterator as Iterator
from ..kernels.custom_gradient import custom_gradient
from ..state.variables import Variable
from . import metrics
from .backprop import (
    gradients_function,
    implicit_gradients,
    implicit_value_and_gradients,
    val_and_grad_function,
    value_and_gradients_function,
)
from .checkpoint import Saver
from .context import (
    EagerGraph,
    eager_mode,
    enable_eager_execution,
    executing_eagerly,
    graph_mode,
    in_eager_mode,
    in_graph_mode,
    run,
)
from .function import Function, defun, function  # noqa: F401 - tf.function, exported by dflow
from .gpus import num_gpus
from .lazy import LazyTensor
from .py_func import py_func
from .tape import GradientTape
from .tensor import EagerTensor

ResourceVariable = Variable

__all__ = ["EagerGraph", "EagerTensor", "GradientTape", "Iterator", "LazyTensor", "Saver", "defun", "ResourceVariable", "Variable", "custom_gradient",
           "eager_mode", "enable_eager_execution", "executing_eagerly", "gradients_function", "graph_mode",
           "implicit_gradients", "implicit_value_and_gradients", "in_eager_mode", "in_graph_mode", "metrics",
           "num_gpus", "py_func", "run", "val_and_grad_function", "value_and_gradients_function"]
