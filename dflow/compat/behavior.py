"""The switches TF 2.x gives TF1 programs (`tf.compat.v1.disable_eager_execution()` ...).

dflow is TF1's graph mode and nothing else, so the calls that ask for TF1 behaviour are accepted
and do nothing, the queries answer as TF1's graph mode does, and `enable_v2_behavior` (which asks
for TF2's eager semantics) raises UnimplementedError. `enable_eager_execution` is absent: its
AttributeError says it is planned (issue #17).
"""

from __future__ import annotations

from ..errors import UnimplementedError

__all__ = ["disable_eager_execution", "disable_v2_behavior", "disable_v2_tensorshape", "disable_resource_variables",
           "disable_control_flow_v2", "disable_tensor_equality", "enable_v2_behavior", "executing_eagerly",
           "executing_eagerly_outside_functions", "resource_variables_enabled", "control_flow_v2_enabled"]


def disable_eager_execution():
    """Accepted: dflow always builds graphs and runs them in a Session, as TF1."""


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
    raise UnimplementedError(None, None, "enable_v2_behavior: dflow provides TF1's graph mode only (build a graph, "
                             "run it in a Session); TF2 behaviour and eager execution are not provided "
                             "(eager execution is planned in dflow issue #17)")


def executing_eagerly():
    """False: dflow builds graphs (TF1's graph mode)."""
    return False


def executing_eagerly_outside_functions():
    """False, as executing_eagerly."""
    return False


def resource_variables_enabled():
    """False: TF1's variables."""
    return False


def control_flow_v2_enabled():
    """False: TF1's control flow."""
    return False
