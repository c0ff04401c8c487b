"""`tf.estimator` (TF1): `Estimator` with `EstimatorSpec`, `ModeKeys` and `RunConfig`; canned
linear and DNN classifiers and regressors over `tf.feature_column`; `inputs.numpy_input_fn` and `inputs.pandas_input_fn`.

The rooms: model_fn.py (what a model function returns), run_config.py, estimator.py (train,
evaluate, predict through monitored sessions), inputs.py, head.py (logits to loss, metrics and
predictions), canned.py (the canned models); export.py + export_output.py (serving input
receivers and signatures for `export_saved_model`); exporter.py and training.py
(`train_and_evaluate` with its specs and exporters).
"""

from ..tf1_names import missing_attribute as _missing_attribute
from . import export, inputs
from .canned import (
    DNNClassifier,
    DNNLinearCombinedClassifier,
    DNNLinearCombinedRegressor,
    DNNRegressor,
    LinearClassifier,
    LinearRegressor,
)
from .estimator import Estimator, WarmStartSettings
from .exporter import BestExporter, Exporter, FinalExporter, LatestExporter
from .model_fn import EstimatorSpec, ModeKeys
from .run_config import RunConfig
from .training import EvalSpec, TrainSpec, train_and_evaluate

__all__ = ["Estimator", "EstimatorSpec", "ModeKeys", "RunConfig", "WarmStartSettings", "LinearClassifier",
           "LinearRegressor", "DNNClassifier", "DNNRegressor", "inputs", "DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor",
           "export", "Exporter", "LatestExporter", "BestExporter", "FinalExporter", "TrainSpec", "EvalSpec",
           "train_and_evaluate"]

__getattr__ = _missing_attribute(__name__)
