"""`tf.contrib.learn` as TF 1.x programs drive it: `RunConfig`, `Experiment` and
`learn_runner.run` over dflow's core Estimator (dflow/estimator), plus the core names TF 1.x also
re-exported here (`Estimator`, `ModeKeys`, the canned DNN/Linear models). The old contrib
Estimator API (`fit`, `ModelFnOps`, `SKCompat`, `datasets`) is not provided: its AttributeError
says so."""

from __future__ import annotations

from ...estimator import (
           DNNClassifier,
           DNNRegressor,
           Estimator,
           LinearClassifier,
           LinearRegressor,
           ModeKeys,
)
from ...tf1_names import missing_attribute
from . import learn_runner
from .experiment import Experiment, RunConfig

__all__ = ["Experiment", "RunConfig", "learn_runner", "Estimator", "ModeKeys", "DNNClassifier", "DNNRegressor",
           "LinearClassifier", "LinearRegressor"]

__getattr__ = missing_attribute(__name__)
