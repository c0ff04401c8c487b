"""`tf.estimator` (TF1): `Estimator` with `EstimatorSpec`, `ModeKeys` and `RunConfig`; canned
linear and DNN classifiers and regressors over `tf.feature_column`; `inputs.numpy_input_fn`.

The rooms: model_fn.py (what a model function returns), run_config.py, estimator.py (train,
evaluate, predict through monitored sessions), inputs.py, head.py (logits to loss, metrics and
predictions), canned.py (the canned models).
"""

from ..tf1_names import missing_attribute as _missing_attribute
from . import inputs
from .canned import DNNClassifier, DNNRegressor, LinearClassifier, LinearRegressor
from .estimator import Estimator, WarmStartSettings
from .model_fn import EstimatorSpec, ModeKeys
from .run_config import RunConfig

__all__ = ["Estimator", "EstimatorSpec", "ModeKeys", "RunConfig", "WarmStartSettings", "LinearClassifier",
           "LinearRegressor", "DNNClassifier", "DNNRegressor", "inputs"]

__getattr__ = _missing_attribute(__name__)
