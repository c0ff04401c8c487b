"""`dflow.train`: optimizers, the global step, learning-rate schedules, moving averages, clipping."""

from ..io.checkpoint import *  # noqa: F403,E402
from .clip_ops import *  # noqa: F403
from .moving_averages import *  # noqa: F403
from .optimizer import *  # noqa: F403
from .schedules import *  # noqa: F403
