"""The switches TF 2.x gives TF1 programs (`tf.compat.v1.disable_eager_execution()` ...).

dflow is TF1: graph mode by default, eager execution when `enable_eager_execution()` (dflow/eager)
asked for it. The calls that ask for TF1 behaviour are accepted and do nothing, `executing_eagerly`
answers for the mode ops run in now, and `enable_v2_behavior` (which asks for TF2's semantics as a
whole) raises UnimplementedError.
"""

from __future__ import annotations

from ..errors import UnimplementedError
from ..graph.graph import executing_eagerly as _executing_eagerly

__all__ = ["disable_eager_execution", "disable_v2_behavior", "disable_v2_tensorshape", "disable_resource_variables",
           "disable_control_flow_v2", "disable_tensor_equality", "enable_v2_behavior", "executing_eagerly",
           "executing_eagerly_outside_functions", "resource_variables_enabled", "control_flow_v2_enabled"]


def disable_eager_execution():
    """Accepted: dflow builds graphs and runs them in a Session unless eager execution was enabled."""


def disable_v2_behavior():
    """Accepted: dflow's behaviour is TF1's (graph mode, TF1 shapes, variables and control flow)."""


def disable_v2_tensorshape():
    """Accepted: dflow's TensorShape indexes to Dimension objects, as TF1."""


def disable_resource_variables():
    """Accepted: dflow's variables are TF1's reference variables in behaviour."""


def disable_control_flow_v2():
    """Accepted: dflow's cond and while_loop build TF1's control flow."""


def disable_tensor_equality():
    """Accepted: dflow's tensors compare and hash by identity, as TF1's."""


def enable_v2_behavior():
    """Raises UnimplementedError: dflow runs TF1's graph mode only."""
    raise UnimplementedError(None, None, "enable_v2_behavior: dflow provides TF1 (graph mode, and TF1's eager "
                             "execution through tf.enable_eager_execution()); TF2 behaviour is not provided")


def executing_eagerly():
    """True when ops run at once (eager mode, outside any graph entered with `as_default()`)."""
    return _executing_eagerly()


def executing_eagerly_outside_functions():
    """As executing_eagerly."""
    return _executing_eagerly()


def resource_variables_enabled():
    """False: TF1's variables."""
    return False


def control_flow_v2_enabled():
    """False: TF1's control flow."""
    return False
