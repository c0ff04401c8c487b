"""`dflow.train`: optimizers, the global step, learning-rate schedules, moving averages, clipping."""

from ..io.checkpoint import *  # noqa: F403,E402
from ..io.graph_io import write_graph as write_graph  # noqa: E402
from ..io.meta_graph import export_meta_graph as export_meta_graph  # noqa: E402
from ..io.meta_graph import import_meta_graph as import_meta_graph  # noqa: E402
from ..summary import summary_iterator as summary_iterator  # noqa: E402
from ..tf1_names import missing_attribute as _missing_attribute  # noqa: E402
from .clip_ops import *  # noqa: F403
from .moving_averages import *  # noqa: F403
from .optimizer import *  # noqa: F403
from .schedules import *  # noqa: F403

__getattr__ = _missing_attribute(__name__)
