"""dflow: the TensorFlow 1.x graph programming model on Dask over chunked arrays.

`import dflow as tf` and write TF1 programs: graphs, placeholders, `Session.run`. The same
program runs in memory, out of core and on a Dask cluster.
"""

from . import (
    bitwise,
    config,
    contrib,
    data,
    debugging,
    dtypes,  # tf.dtypes: graph/dtypes.py and the ops TF1 puts there
    errors,
    estimator,
    feature_column,
    graph_util,
    image,
    initializers,
    io,
    keras,
    layers,
    linalg,
    lookup,
    losses,
    math,
    metrics,
    nn,
    parallel,
    python_io,
    random,
    regularizers,
    saved_model,
    signal,
    sparse,
    spectral,
    strings,
    summary,
    test,
    train,
)
from .data.queues import *  # noqa: F403 - tf.FIFOQueue and the other TF1 queues
from .data.readers import *  # noqa: F403 - tf.TextLineReader and the other TF1 readers
from .devices import ConfigProto, DeviceSpec, GPUOptions, GraphOptions
from .eager import GradientTape, enable_eager_execution, function
from .eager.py_func import py_function
from .graph.dtypes import (
    DType,
    as_dtype,
    bool,  # noqa: A004 - TF1 public name
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
    variant,
)
from .graph.gradients import gradients
from .graph.graph import (
    Graph,
    add_to_collection,
    add_to_collections,
    control_dependencies,
    device,
    get_collection,
    get_collection_ref,
    get_default_graph,
    get_default_session,
    name_scope,
    reset_default_graph,
    set_random_seed,
)
from .graph.indexed_slices import IndexedSlices
from .graph.keys import GraphKeys
from .graph.ops import Operation, Tensor
from .graph.registry import RegisterGradient, def_grad, not_differentiable
from .graph.serialize import GraphDef
from .graph.shape import Dimension, TensorShape
from .graph.tensor_proto import make_ndarray, make_tensor_proto
from .io.graph_io import import_graph_def
from .kernels import matrix_grads  # noqa: E402, F401 - registers the matrix ops' gradients
from .kernels.array_composites import *  # noqa: F403
from .kernels.array_ops import *  # noqa: F403 - each kernel module's __all__ is public
from .kernels.bitcast_ops import *  # noqa: F403
from .kernels.check_ops import *  # noqa: F403
from .kernels.common import constant, convert_to_tensor
from .kernels.complex_ops import *  # noqa: F403
from .kernels.control_flow_ops import *  # noqa: F403
from .kernels.control_ops import *  # noqa: F403
from .kernels.creation_ops import *  # noqa: F403
from .kernels.cross_ops import *  # noqa: F403
from .kernels.csv_ops import *  # noqa: F403
from .kernels.cumulative_ops import *  # noqa: F403
from .kernels.custom_gradient import custom_gradient
from .kernels.data_dependent_ops import *  # noqa: F403
from .kernels.encode_ops import *  # noqa: F403
from .kernels.fft_ops import *  # noqa: F403
from .kernels.file_ops import *  # noqa: F403
from .kernels.functional_ops import *  # noqa: F403
from .kernels.gather_ops import *  # noqa: F403
from .kernels.hash_ops import *  # noqa: F403
from .kernels.histogram_ops import *  # noqa: F403
from .kernels.index_ops import *  # noqa: F403
from .kernels.linalg_ops import *  # noqa: F403
from .kernels.lookup_ops import tables_initializer  # noqa: E402
from .kernels.manip_ops import *  # noqa: F403
from .kernels.math_composites import *  # noqa: F403 - is_non_decreasing, is_strictly_increasing
from .kernels.math_ops import *  # noqa: F403
from .kernels.matrix_functions import *  # noqa: F403 - matrix_square_root
from .kernels.matrix_ops import *  # noqa: F403
from .kernels.pad_ops import *  # noqa: F403
from .kernels.parsing_ops import *  # noqa: F403
from .kernels.py_ops import *  # noqa: F403
from .kernels.random_gamma_poisson_ops import *  # noqa: F403
from .kernels.random_ops import *  # noqa: F403
from .kernels.rearrange_ops import *  # noqa: F403
from .kernels.reduction_ops import *  # noqa: F403
from .kernels.sampling_ops import *  # noqa: F403
from .kernels.scatter_nd_ops import *  # noqa: F403
from .kernels.scatter_ops import *  # noqa: F403
from .kernels.segment_ops import *  # noqa: F403
from .kernels.sequence_ops import *  # noqa: F403
from .kernels.sequence_parsing_ops import *  # noqa: F403
from .kernels.serialization_ops import *  # noqa: F403
from .kernels.set_ops import *  # noqa: F403
from .kernels.sort_ops import *  # noqa: F403
from .kernels.space_ops import *  # noqa: F403
from .kernels.sparse_manip_ops import *  # noqa: F403
from .kernels.sparse_math_ops import *  # noqa: F403
from .kernels.sparse_ops import (
    SparseTensor,
    SparseTensorValue,
    sparse_placeholder,
    sparse_tensor_to_dense,
    sparse_to_dense,
)
from .kernels.special_ops import *  # noqa: F403
from .kernels.state_ops import *  # noqa: F403
from .kernels.string_ops import as_string, string_join, string_to_number
from .kernels.tensor_array_ops import *  # noqa: F403
from .kernels.text_ops import *  # noqa: F403
from .platform import app, flags, gfile
from .platform import tf_logging as logging
from .platform.tf_logging import get_logger
from .run_options import RunMetadata, RunOptions
from .schedule.session import InteractiveSession, Session
from .sparse import sparse_add, sparse_reduce_sum, sparse_tensor_dense_matmul
from .state.initializers import *  # noqa: F403
from .state.scope import *  # noqa: F403
from .state.variables import *  # noqa: F403
from .summary import Event, HistogramProto, SessionLog, Summary, SummaryMetadata
from .train.clip_ops import clip_by_average_norm, clip_by_global_norm, clip_by_norm, global_norm  # noqa: E402

NotDifferentiable = not_differentiable
newaxis = None

# TF1's framework helpers, the rest of its checks, tf.nest and tf.queue
from . import nest, queue, sets  # noqa: E402
from . import rnn as _rnn  # noqa: E402
from .debugging import (  # noqa: E402
    assert_near,
    assert_proper_iterable,
    assert_rank_in,
    assert_same_float_dtype,
    is_non_decreasing,
    is_strictly_increasing,
)
from .framework import *  # noqa: E402,F403

# tf.nn's recurrent names live in dflow/rnn (cells are layers, and dflow.layers uses dflow.nn, so
# dflow.nn cannot import them): the public namespace binds them into nn, as TF assembles tf.nn
for _name in _rnn.__all__:
    setattr(nn, _name, getattr(_rnn, _name))
nn.__all__ = list(nn.__all__) + [n for n in _rnn.__all__ if n not in nn.__all__]
del _name

# tf.io's queue names live in dflow/data (dflow.io is below it: dflow.data reads TFRecords through
# it): bound into io here, as TF assembles tf.io
from . import distributions  # noqa: E402,F401 - tf.distributions
from .data import queues as _queues  # noqa: E402

for _name in ("QueueBase", "PaddingFIFOQueue", "PriorityQueue", "RandomShuffleQueue"):
    setattr(io, _name, getattr(_queues, _name))
io.__all__ = list(io.__all__) + ["QueueBase", "PaddingFIFOQueue", "PriorityQueue", "RandomShuffleQueue"]
del _name

# tf.compat.v1 is this namespace, completed above; a name it lacks raises an AttributeError that says so
from . import compat  # noqa: E402
from .compat.behavior import *  # noqa: E402,F403
from .tf1_names import missing_attribute as _missing_attribute  # noqa: E402
from .version import VERSION  # noqa: E402

__version__ = VERSION  # the TF1 release a program sees as tf.__version__; dflow's own: dflow.version.__version__

compat._install_v1(__name__)
__getattr__ = _missing_attribute(__name__)
