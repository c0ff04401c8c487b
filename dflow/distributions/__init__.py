"""`tf.distributions` (TF 1.x): probability distributions composed of dflow's ops, so they work in
graphs, eagerly and through Dask, with gradients (through reparameterized samples too)."""

from ..tf1_names import missing_attribute as _missing_attribute
from .continuous import Laplace, Normal, StudentT, Uniform
from .discrete import Bernoulli, Categorical, DirichletMultinomial, Multinomial
from .distribution import (
    FULLY_REPARAMETERIZED,
    NOT_REPARAMETERIZED,
    Distribution,
    RegisterKL,
    ReparameterizationType,
    kl_divergence,
)
from .gamma_family import Beta, Dirichlet, Exponential, Gamma

__all__ = ["Bernoulli", "Beta", "Categorical", "Dirichlet", "DirichletMultinomial", "Distribution", "Exponential", "FULLY_REPARAMETERIZED",
           "Gamma", "Laplace", "Multinomial", "NOT_REPARAMETERIZED", "Normal", "RegisterKL",
           "ReparameterizationType", "StudentT", "Uniform", "kl_divergence"]

__getattr__ = _missing_attribute(__name__)
