"""`dflow.random`: TF1's `tf.random` namespace, TF's `random.*` spellings of the random ops.

Each name is the very function of the top level or of `tf.nn` (`tf.random.normal is
tf.random_normal`), so seeds and draws are random_ops' (see dflow/kernels/random_ops.py).
The stateless ops (`stateless_*`) are dflow/kernels/stateless_random_ops.py's.
"""

from .graph.graph import get_seed, set_random_seed
from .kernels.candidate_sampling_ops import (
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from .kernels.random_gamma_poisson_ops import random_gamma, random_poisson
from .kernels.random_ops import random_normal, random_uniform
from .kernels.random_ops import truncated_normal as truncated_normal
from .kernels.sampling_ops import categorical, multinomial, random_shuffle
from .kernels.stateless_random_ops import (
    stateless_categorical,
    stateless_multinomial,
    stateless_random_binomial,
    stateless_random_gamma,
    stateless_random_normal,
    stateless_random_poisson,
    stateless_random_uniform,
    stateless_truncated_normal,
)
from .tf1_names import missing_attribute as _missing_attribute

normal = random_normal
uniform = random_uniform
shuffle = random_shuffle
gamma = random_gamma
poisson = random_poisson
stateless_uniform = stateless_random_uniform
stateless_normal = stateless_random_normal
stateless_binomial = stateless_random_binomial
stateless_gamma = stateless_random_gamma
stateless_poisson = stateless_random_poisson

__all__ = ["all_candidate_sampler", "categorical", "fixed_unigram_candidate_sampler", "get_seed", "log_uniform_candidate_sampler",
           "multinomial", "normal", "set_random_seed", "shuffle", "truncated_normal", "uniform",
           "uniform_candidate_sampler", "gamma", "poisson", "stateless_uniform", "stateless_normal",
           "stateless_truncated_normal", "stateless_categorical", "stateless_multinomial", "stateless_binomial",
           "stateless_gamma", "stateless_poisson"]

__getattr__ = _missing_attribute(__name__)
