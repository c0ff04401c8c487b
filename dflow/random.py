"""`dflow.random`: TF1's `tf.random` namespace, TF's `random.*` spellings of the random ops.

Each name is the very function of the top level or of `tf.nn` (`tf.random.normal is
tf.random_normal`), so seeds and draws are random_ops' (see dflow/kernels/random_ops.py).
Names dflow does not implement (gamma, poisson, the stateless ops) are absent.
"""

from .graph.graph import get_seed, set_random_seed
from .kernels.candidate_sampling_ops import (
    fixed_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from .kernels.random_ops import random_normal, random_uniform
from .kernels.random_ops import truncated_normal as truncated_normal
from .kernels.sampling_ops import categorical, multinomial, random_shuffle
from .tf1_names import missing_attribute as _missing_attribute

normal = random_normal
uniform = random_uniform
shuffle = random_shuffle

__all__ = ["categorical", "fixed_unigram_candidate_sampler", "get_seed", "log_uniform_candidate_sampler",
           "multinomial", "normal", "set_random_seed", "shuffle", "truncated_normal", "uniform",
           "uniform_candidate_sampler"]

__getattr__ = _missing_attribute(__name__)
