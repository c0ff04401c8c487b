"""`dflow.train`: optimizers, the global step, learning-rate schedules, moving averages, clipping,
checkpoints, monitored training (MonitoredTrainingSession, hooks, Coordinator); the
`tf.train.Example` protocol buffers."""

from .. import proto as _example_pb2  # TF's Example protos, under dflow's own proto package
from ..io.checkpoint import *  # noqa: F403,E402
from ..io.graph_io import write_graph as write_graph  # noqa: E402
from ..io.meta_graph import export_meta_graph as export_meta_graph  # noqa: E402
from ..io.meta_graph import import_meta_graph as import_meta_graph  # noqa: E402
from ..io.saver import *  # noqa: F403,E402
from ..summary import summary_iterator as summary_iterator  # noqa: E402
from ..tf1_names import missing_attribute as _missing_attribute  # noqa: E402
from .basic_hooks import *  # noqa: F403
from .checkpoint_management import *  # noqa: F403
from .clip_ops import *  # noqa: F403
from .coordinator import *  # noqa: F403
from .input import *  # noqa: F403
from .monitored_session import *  # noqa: F403
from .moving_averages import *  # noqa: F403
from .object_checkpoint import *  # noqa: F403
from .optimizer import *  # noqa: F403
from .proximal_optimizers import *  # noqa: F403
from .queue_runner import *  # noqa: F403
from .schedules import *  # noqa: F403
from .session_run_hook import *  # noqa: F403
from .supervisor import *  # noqa: F403

# tf.train.Example and its parts (protocol buffers; `SerializeToString`, `FromString`)
BytesList, Example, Feature = _example_pb2.BytesList, _example_pb2.Example, _example_pb2.Feature
FeatureList, FeatureLists, Features = _example_pb2.FeatureList, _example_pb2.FeatureLists, _example_pb2.Features
FloatList, Int64List, SequenceExample = _example_pb2.FloatList, _example_pb2.Int64List, _example_pb2.SequenceExample

__getattr__ = _missing_attribute(__name__)
