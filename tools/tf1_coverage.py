"""Writes docs/tf1_coverage.md: which of TF1's public names `import dflow as tf` provides.

    python tools/tf1_coverage.py --write    rewrite docs/tf1_coverage.md from the code as it is
    python tools/tf1_coverage.py --check    exit 1 (with a diff) if the checked-in page is stale
    python tools/tf1_coverage.py            print the page

The reference is dflow/tf1_names.txt (read through dflow.tf1_names, which also words the
AttributeError of a missing name). It was dumped once from TensorFlow's `tensorflow.compat.v1`
with `TF_PYTHON tools/tf1_coverage.py --dump` (an interpreter that has TensorFlow; dflow is not
imported then), which keeps the hand-written tf.contrib and tf.estimator sections below.

A name counts as provided when `dflow.<module>.<name>` resolves; the page is a function of the
public namespace and of the op registry alone, so tests/test_coverage.py regenerates it in a fresh
interpreter and compares.
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import os
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "tf1_coverage.md"
DATA = ROOT / "dflow" / "tf1_names.txt"

# the modules of tensorflow.compat.v1 dumped ("" is the top level, which is compat.v1 itself)
DUMPED = ["", "nn", "nn.rnn_cell", "train", "layers", "losses", "metrics", "image", "math", "io", "data",
          "summary", "errors", "initializers", "random", "linalg", "strings", "sparse", "test", "app", "flags",
          "logging", "gfile", "saved_model", "compat", "debugging", "graph_util", "dtypes", "bitwise"]

# Modules TF 2.x no longer has (tf.contrib, tf.estimator), written by hand from TF 1.15's API docs:
# the names TF1 tutorials and models use most, not every name.
BY_HAND = {
    "estimator": "BaselineClassifier BaselineRegressor BestExporter BoostedTreesClassifier BoostedTreesRegressor "
                 "DNNClassifier DNNLinearCombinedClassifier DNNLinearCombinedRegressor DNNRegressor Estimator "
                 "EstimatorSpec EvalSpec Exporter FinalExporter LatestExporter LinearClassifier LinearRegressor "
                 "ModeKeys RunConfig TrainSpec VocabInfo WarmStartSettings classifier_parse_example_spec export "
                 "inputs regressor_parse_example_spec train_and_evaluate",
    "estimator.inputs": "numpy_input_fn pandas_input_fn",
    "estimator.export": "ClassificationOutput PredictOutput RegressionOutput ServingInputReceiver "
                        "TensorServingInputReceiver build_parsing_serving_input_receiver_fn "
                        "build_raw_serving_input_receiver_fn",
    "contrib": "all_reduce autograph bayesflow checkpoint cloud cluster_resolver compiler "
               "constrained_optimization copy_graph crf cudnn_rnn data deprecated distribute distributions eager "
               "estimator factorization feature_column ffmpeg framework gan graph_editor grid_rnn image "
               "input_pipeline integrate keras kernel_methods labeled_tensor layers learn legacy_seq2seq "
               "linear_optimizer lookup losses memory_stats metrics mixed_precision model_pruning nccl nn opt "
               "optimizer_v2 periodic_resample predictor proto quantization quantize rate receptive_field "
               "recurrent reduce_slice_ops remote_fused_graph resampler rnn rpc saved_model seq2seq signal slim "
               "snapshot solvers sparsemax specs staging stat_summarizer stateless summary tensor_forest "
               "tensorboard testing text tfprof timeseries tpu training util",
    "contrib.layers": "apply_regularization avg_pool2d batch_norm bias_add conv2d conv2d_in_plane conv2d_transpose "
                      "convolution convolution2d convolution2d_transpose dropout embed_sequence flatten "
                      "fully_connected group_norm instance_norm l1_l2_regularizer l1_regularizer l2_regularizer "
                      "layer_norm linear max_pool2d maxout model_variable one_hot_encoding optimize_loss "
                      "recompute_grad repeat separable_conv2d softmax stack sum_regularizer "
                      "summarize_activations unit_norm variable variance_scaling_initializer xavier_initializer "
                      "xavier_initializer_conv2d",
    "contrib.slim": "add_arg_scope arg_scope assign_from_checkpoint_fn avg_pool2d batch_norm conv2d "
                    "conv2d_transpose dropout evaluation flatten fully_connected get_model_variables "
                    "get_trainable_variables get_variables get_variables_by_name get_variables_to_restore "
                    "l1_regularizer l2_regularizer layer_norm learning losses max_pool2d metrics model_variable "
                    "one_hot_encoding repeat separable_conv2d softmax stack variable "
                    "variance_scaling_initializer xavier_initializer",
    "contrib.eager": "Checkpoint Checkpointable GradientTape Iterator Metric Network Saver Sequential Variable "
                     "async_clear_error async_wait custom_gradient defun eager_mode enable_eager_execution "
                     "executing_eagerly execution_mode gradients_function graph_mode implicit_gradients "
                     "implicit_value_and_gradients in_eager_mode in_graph_mode list_devices make_template metrics "
                     "num_gpus py_func restore_variables_on_create run set_execution_mode "
                     "value_and_gradients_function",
    "contrib.framework": "add_arg_scope arg_scope assign_from_checkpoint assign_from_checkpoint_fn "
                         "filter_variables get_global_step get_model_variables get_name_scope "
                         "get_or_create_global_step get_unique_variable get_variables get_variables_by_name "
                         "get_variables_to_restore init_from_checkpoint is_tensor list_variables load_variable "
                         "local_variable model_variable nest variable with_shape",
    "contrib.rnn": "AttentionCellWrapper BasicLSTMCell BasicRNNCell CoupledInputForgetGateLSTMCell DeviceWrapper "
                   "DropoutWrapper GRUBlockCell GRUCell LSTMBlockCell LSTMCell LSTMStateTuple LayerNormBasicLSTMCell "
                   "MultiRNNCell OutputProjectionWrapper RNNCell ResidualWrapper stack_bidirectional_dynamic_rnn "
                   "stack_bidirectional_rnn static_bidirectional_rnn static_rnn",
    "contrib.learn": "DNNClassifier DNNRegressor Estimator Experiment LinearClassifier LinearRegressor ModeKeys "
                     "ModelFnOps RunConfig SKCompat datasets infer_real_valued_columns_from_input learn_runner "
                     "preprocessing",
    "contrib.learn.datasets": "load_dataset mnist",
    "contrib.learn.learn_runner": "run tune",
    "contrib.summary": "SummaryWriter all_summary_ops always_record_summaries audio create_db_writer "
                       "create_file_writer create_summary_file_writer eval_dir flush generic graph histogram "
                       "image import_event initialize never_record_summaries "
                       "record_summaries_every_n_global_steps scalar should_record_summaries "
                       "summary_writer_initializer_op",
    "contrib.graph_editor": "ControlOutputs SubGraphView Transformer bypass connect copy copy_op_handler "
                            "copy_with_input_replacements detach detach_inputs detach_outputs "
                            "get_backward_walk_ops get_forward_walk_ops get_generating_ops get_consuming_ops "
                            "get_ops_ios get_tensors get_walks_intersection_ops get_walks_union_ops graph_replace "
                            "make_view reroute_inputs reroute_outputs reroute_ts select_ops select_ts sgv "
                            "sgv_scope swap_inputs swap_outputs swap_ts transform_op_if_inside_handler",
    "contrib.losses": "absolute_difference add_loss compute_weighted_loss cosine_distance get_losses "
                      "get_regularization_losses get_total_loss hinge_loss log_loss mean_pairwise_squared_error "
                      "mean_squared_error sigmoid_cross_entropy softmax_cross_entropy "
                      "sparse_softmax_cross_entropy",
    "contrib.metrics": "accuracy aggregate_metric_map aggregate_metrics confusion_matrix f1_score streaming_accuracy "
                       "streaming_auc streaming_mean streaming_mean_absolute_error streaming_mean_iou "
                       "streaming_mean_squared_error streaming_precision streaming_recall "
                       "streaming_root_mean_squared_error",
    "contrib.opt": "AdamWOptimizer LazyAdamOptimizer MovingAverageOptimizer ScipyOptimizerInterface",
    "contrib.training": "HParams bucket_by_sequence_length create_train_op train",
    "contrib.seq2seq": "AttentionWrapper BahdanauAttention BasicDecoder BeamSearchDecoder GreedyEmbeddingHelper "
                       "LuongAttention TrainingHelper dynamic_decode sequence_loss tile_batch",
}


def dump():
    """The reference file's text from the TensorFlow this interpreter has (run under TF_PYTHON)."""
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.layers as TF1 had it
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf_root
    import tensorflow.compat.v1 as tf

    lines = ["# TF1's public names, by module: the reference of docs/tf1_coverage.md and of dflow's",
             "# AttributeError for a name it lacks. Written by `tools/tf1_coverage.py --dump`.",
             f"# tensorflow: {tf_root.__version__}",
             f"# dumped: {datetime.date.today().isoformat()}",
             "# source: tensorflow.compat.v1 (its top level and the modules below), public names only;",
             "# sections marked 'by hand' list names of TF 1.15 modules TF 2.x lacks, from TF 1.15's API docs.",
             ""]
    for path in DUMPED:
        module = tf
        for part in filter(None, path.split(".")):
            module = getattr(module, part)
        names = sorted(n for n in dir(module) if not n.startswith("_"))
        lines += [f"[{path}]", *names, ""]
    for path, names in BY_HAND.items():
        lines += [f"[{path}] by hand", *sorted(names.split()), ""]
    return "\n".join(lines)


def _resolve(dflow, path):
    """dflow's module (or namespace object) for TF module `path` ("" is the top level), or None."""
    obj = dflow
    for part in filter(None, path.split(".")):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _codes(names):
    return ", ".join(f"`{n}`" for n in names) if names else "none"


def _dflow_only(module, tf_names):
    """The public names of a dflow module that TF1's module lacks: its `__all__`; else a package's
    every name (a namespace of re-exports, as dflow itself) or a module's own definitions."""
    public = getattr(module, "__all__", None)
    if public is None and not hasattr(module, "__dict__"):
        return []
    if public is None:
        own = hasattr(module, "__path__")
        public = [n for n, v in vars(module).items() if not n.startswith("_") and not isinstance(v, types.ModuleType)
                  and (own or getattr(v, "__module__", None) == module.__name__)]
    return sorted(n for n in public if n not in tf_names)


def render():
    """The page's text, from the reference list, dflow's public namespace and its op registry."""
    sys.path.insert(0, str(ROOT))
    import dflow
    from dflow.graph import registry
    from dflow.tf1_names import reference

    ref = reference()
    rows, sections = [], []
    total_tf = total_have = 0
    for path, (names, by_hand) in ref.modules.items():
        tf_name = "tf" + (f".{path}" if path else "")
        module = _resolve(dflow, path)
        have = sorted(n for n in names if module is not None and hasattr(module, n))
        lack = sorted(names - set(have))
        total_tf += len(names)
        total_have += len(have)
        mark = " (by hand)" if by_hand else ""
        where = f"`dflow.{path}`" if path else "`dflow`"
        rows.append(f"| [`{tf_name}`](#{tf_name.replace('.', '')}){mark} | {len(names)} | {len(have)} | "
                    f"{len(lack)} | {where if module is not None else 'absent'} |")
        sections += [f"## {tf_name}", ""]
        if by_hand:
            sections += ["Written by hand from TF 1.15's API docs (TF 2.x has no such module): the names TF1 "
                         "programs use most, not every name.", ""]
        if module is None:
            sections += [f"dflow has no `{tf_name}` module: all {len(names)} names are missing.", "",
                         f"**Missing ({len(lack)}):** {_codes(lack)}", ""]
            continue
        sections += [f"**Provided ({len(have)}):** {_codes(have)}", "",
                     f"**Missing ({len(lack)}):** {_codes(lack)}", ""]
        extra = _dflow_only(module, names)
        if extra:
            sections += [f"**dflow only ({len(extra)}):** {_codes(extra)}", ""]

    ops = registry.registered_op_types()
    op_rows = []
    for name in ops:
        opdef = registry.get_opdef(name)
        grad = "not differentiable" if opdef.grad is registry._no_grad else ("yes" if opdef.grad else "no")
        lowering = "own" if opdef.lower else ("eager kernel on chunks" if opdef.elementwise else
                                               "eager kernel on dask.array" if opdef.eager else "host or feed")
        op_rows.append(f"| `{name}` | {grad} | {lowering} |")

    head = ["# TF1 coverage: what `import dflow as tf` provides",
            "",
            "<!-- Generated by `python tools/tf1_coverage.py --write`; tests/test_coverage.py fails when "
            "it is stale. Do not edit by hand. -->",
            "",
            f"The reference is TF1's public API as `tensorflow.compat.v1` of TensorFlow {ref.tf_version} "
            f"exposes it (dumped {ref.dumped}; `dflow/tf1_names.txt`), plus tf.contrib and tf.estimator names "
            "from TF 1.15's docs added by hand. A name counts as provided when `dflow.<module>.<name>` exists; "
            "its arguments and semantics follow TF1 as the tests and docstrings state. A name dflow lacks "
            "raises an AttributeError that names it and points here. `import dflow.compat.v1 as tf` is the "
            "same namespace as `import dflow as tf`.",
            "",
            f"In all: **{total_have} of {total_tf}** reference names are provided.",
            "",
            "| TF1 module | TF1 names | provided | missing | dflow module |",
            "| --- | ---: | ---: | ---: | --- |",
            *rows,
            ""]
    tail = ["## Op types",
            "",
            f"{len(ops)} op types are registered (`dflow.graph.registry`). Gradient: a rule is registered "
            "(yes), the op is declared not differentiable, or neither (no). Dask lowering: the op's own, "
            "or its eager kernel run on chunks (elementwise) or on whole values.",
            "",
            "| op type | gradient | Dask lowering |",
            "| --- | --- | --- |",
            *op_rows,
            ""]
    return "\n".join(head + sections + tail)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="rewrite docs/tf1_coverage.md")
    mode.add_argument("--check", action="store_true", help="fail if docs/tf1_coverage.md is stale")
    mode.add_argument("--dump", action="store_true", help="rewrite dflow/tf1_names.txt (needs TensorFlow)")
    args = parser.parse_args(argv)
    if args.dump:
        DATA.write_text(dump())
        return 0
    page = render()
    if args.write:
        PAGE.write_text(page)
        return 0
    if args.check:
        old = PAGE.read_text() if PAGE.exists() else ""
        if old == page:
            return 0
        diff = difflib.unified_diff(old.splitlines(), page.splitlines(), "docs/tf1_coverage.md (checked in)",
                                    "docs/tf1_coverage.md (from the code)", lineterm="", n=0)
        print("\n".join(list(diff)[:60]))
        print("docs/tf1_coverage.md is stale: rewrite it with `python tools/tf1_coverage.py --write`")
        return 1
    print(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
