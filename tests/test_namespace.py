"""The public namespace keeps TF1's names (`import dflow as tf` must find them)."""

import numpy as np
import pytest

import dflow as tf

NAMES = [
    "placeholder", "placeholder_with_default", "constant", "Variable", "get_variable", "variable_scope",
    "name_scope", "Session", "InteractiveSession", "Graph", "get_default_graph", "reset_default_graph",
    "control_dependencies", "group", "no_op", "tuple", "identity", "stop_gradient", "gradients",
    "RegisterGradient", "custom_gradient", "cond", "case", "while_loop", "TensorArray", "reduce_sum",
    "reduce_mean", "reduce_max", "reduce_logsumexp", "matmul", "einsum", "tensordot", "reshape",
    "transpose", "concat", "stack", "unstack", "split", "tile", "pad", "gather", "one_hot", "top_k",
    "where", "cast", "shape", "size", "rank", "zeros", "ones", "fill", "range", "random_normal",
    "random_uniform", "truncated_normal", "set_random_seed", "global_variables_initializer", "assign",
    "assign_add", "scatter_update", "clip_by_value", "clip_by_norm", "clip_by_global_norm", "GraphKeys",
    "float32", "int32", "bool", "errors", "nn", "losses", "train", "io", "test", "regularizers",
    "AUTO_REUSE", "make_template", "unsorted_segment_sum",
]
SUB = {
    "nn": ["softmax", "log_softmax", "relu", "sigmoid_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits_v2", "sparse_softmax_cross_entropy_with_logits", "moments",
           "dropout", "l2_loss"],
    "train": ["GradientDescentOptimizer", "AdamOptimizer", "MomentumOptimizer", "Saver", "latest_checkpoint",
              "exponential_decay", "ExponentialMovingAverage", "get_or_create_global_step"],
    "losses": ["mean_squared_error", "softmax_cross_entropy", "get_total_loss"],
    "io": ["read_zarr", "write_zarr", "cleanup"],
    "errors": ["InvalidArgumentError", "FailedPreconditionError", "NotFoundError", "ResourceExhaustedError",
               "DataLossError", "OutOfRangeError", "UnimplementedError"],
    "test": ["compute_gradient", "compute_gradient_error", "is_gpu_available"],
}


@pytest.mark.parametrize("name", NAMES)
def test_top_level_name(name):
    assert hasattr(tf, name), f"dflow.{name} is missing"


@pytest.mark.parametrize("module,name", [(m, n) for m, names in SUB.items() for n in names])
def test_submodule_name(module, name):
    assert hasattr(getattr(tf, module), name), f"dflow.{module}.{name} is missing"


def test_version_names_read_as_the_tf1_release():
    """A TF1 program's version checks see the TF1 release dflow follows; dflow's own version is
    dflow.version.__version__ (the package's)."""
    import dflow.version

    assert tf.VERSION == tf.__version__ == tf.version.VERSION == tf.compat.v1.VERSION
    assert tf.VERSION.startswith("1.15.")
    assert dflow.version.__version__ != tf.VERSION


def test_tf_dtypes_holds_the_dtypes_and_the_ops_tf1_puts_there():
    # TF 1.15's tf.dtypes: the DType objects, as_dtype, and cast / saturate_cast / complex / as_string
    assert tf.dtypes.float32 is tf.float32 and tf.dtypes.as_dtype("int64") is tf.int64
    assert isinstance(tf.float16, tf.dtypes.DType)
    x = tf.constant([300.0, -5.0, 7.6])
    with tf.Session() as s:
        got = s.run([tf.dtypes.saturate_cast(x, tf.uint8), tf.dtypes.cast(x, tf.int32),
                     tf.dtypes.complex(x, x), tf.dtypes.as_string(tf.constant([1, 2]))])
    assert got[0].tolist() == [255, 0, 7] and got[1].tolist() == [300, -5, 7]
    assert got[2].dtype == np.complex64 and got[3].tolist() == [b"1", b"2"]
    with pytest.raises(AttributeError, match="tf.dtypes.nonexistent is not a TF1 name"):
        tf.dtypes.nonexistent  # noqa: B018
