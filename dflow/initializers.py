"""`dflow.initializers`: TF1's `tf.initializers` namespace, short names of the initializers.

`tf.initializers.zeros is tf.zeros_initializer` and so on; `global_variables`, `local_variables`
and `variables` are the init-op builders of dflow/state/variables.py.
"""

from .kernels.lookup_ops import tables_initializer as tables_initializer
from .state import initializers as _i
from .state.variables import (
           global_variables_initializer,
           local_variables_initializer,
           variables_initializer,
)
from .tf1_names import missing_attribute as _missing_attribute

constant = _i.constant_initializer
global_variables = global_variables_initializer
glorot_normal = _i.glorot_normal_initializer
glorot_uniform = _i.glorot_uniform_initializer
he_normal = _i.he_normal
he_uniform = _i.he_uniform
identity = _i.identity_initializer
lecun_normal = _i.lecun_normal
lecun_uniform = _i.lecun_uniform
local_variables = local_variables_initializer
ones = _i.ones_initializer
orthogonal = _i.orthogonal_initializer
random_normal = _i.random_normal_initializer
random_uniform = _i.random_uniform_initializer
truncated_normal = _i.truncated_normal_initializer
uniform_unit_scaling = _i.uniform_unit_scaling_initializer
variables = variables_initializer
variance_scaling = _i.variance_scaling_initializer
zeros = _i.zeros_initializer

__all__ = ["constant", "global_variables", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform", "identity",
           "lecun_normal", "lecun_uniform", "local_variables", "ones", "orthogonal", "random_normal",
           "random_uniform", "tables_initializer", "truncated_normal", "uniform_unit_scaling", "variables",
           "variance_scaling", "zeros"]

__getattr__ = _missing_attribute(__name__)
