"""`tf.contrib.eager` (`import dflow.contrib.eager as tfe`): TF1.5's eager execution API over
dflow/eager (ops run at once on the same op registry as graph mode)."""

from __future__ import annotations

from ..eager import *  # noqa: F403
from ..eager import __all__ as _eager_all
from ..tf1_names import missing_attribute
from ..train import Checkpoint  # TF 1.x's tfe.Checkpoint is tf.train.Checkpoint

__all__ = list(_eager_all) + ["Checkpoint"]

__getattr__ = missing_attribute(__name__)
