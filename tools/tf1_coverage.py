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
          "logging", "gfile", "saved_model", "compat", "debugging", "graph_util", "dtypes", "bitwise",
          "distributions"]

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
    "keras": "Input Model Sequential activations applications backend callbacks constraints datasets estimator "
             "experimental initializers layers losses metrics mixed_precision models optimizers preprocessing "
             "regularizers utils wrappers",
    "keras.layers": "AbstractRNNCell Activation ActivityRegularization Add AdditiveAttention AlphaDropout Attention "
                    "Average AveragePooling1D AveragePooling2D AveragePooling3D AvgPool1D AvgPool2D AvgPool3D "
                    "BatchNormalization Bidirectional Concatenate Conv1D Conv2D Conv2DTranspose Conv3D "
                    "Conv3DTranspose ConvLSTM2D Convolution1D Convolution2D Convolution2DTranspose Convolution3D "
                    "Convolution3DTranspose Cropping1D Cropping2D Cropping3D CuDNNGRU CuDNNLSTM Dense DenseFeatures "
                    "DepthwiseConv2D Dot Dropout ELU Embedding Flatten GRU GRUCell GaussianDropout GaussianNoise "
                    "GlobalAveragePooling1D GlobalAveragePooling2D GlobalAveragePooling3D GlobalAvgPool1D "
                    "GlobalAvgPool2D GlobalAvgPool3D GlobalMaxPool1D GlobalMaxPool2D GlobalMaxPool3D "
                    "GlobalMaxPooling1D GlobalMaxPooling2D GlobalMaxPooling3D Input InputLayer InputSpec LSTM "
                    "LSTMCell Lambda Layer LayerNormalization LeakyReLU LocallyConnected1D LocallyConnected2D "
                    "Masking MaxPool1D MaxPool2D MaxPool3D MaxPooling1D MaxPooling2D MaxPooling3D Maximum Minimum "
                    "Multiply PReLU Permute RNN ReLU RepeatVector Reshape SeparableConv1D SeparableConv2D "
                    "SeparableConvolution1D SeparableConvolution2D SimpleRNN SimpleRNNCell Softmax SpatialDropout1D "
                    "SpatialDropout2D SpatialDropout3D StackedRNNCells Subtract ThresholdedReLU TimeDistributed "
                    "UpSampling1D UpSampling2D UpSampling3D Wrapper ZeroPadding1D ZeroPadding2D ZeroPadding3D add "
                    "average concatenate deserialize dot maximum minimum multiply serialize subtract",
    "keras.models": "Model Sequential clone_model load_model model_from_config model_from_json model_from_yaml "
                    "save_model",
    "keras.callbacks": "BaseLogger CSVLogger Callback EarlyStopping History LambdaCallback LearningRateScheduler "
                       "ModelCheckpoint ProgbarLogger ReduceLROnPlateau RemoteMonitor TensorBoard TerminateOnNaN",
    "keras.optimizers": "Adadelta Adagrad Adam Adamax Nadam Optimizer RMSprop SGD deserialize get serialize",
    "keras.losses": "BinaryCrossentropy CategoricalCrossentropy CategoricalHinge CosineSimilarity Hinge Huber KLD "
                    "KLDivergence LogCosh Loss MAE MAPE MSE MSLE MeanAbsoluteError MeanAbsolutePercentageError "
                    "MeanSquaredError MeanSquaredLogarithmicError Poisson Reduction SparseCategoricalCrossentropy "
                    "SquaredHinge binary_crossentropy categorical_crossentropy categorical_hinge cosine "
                    "cosine_proximity cosine_similarity deserialize get hinge kld kullback_leibler_divergence logcosh "
                    "mae mape mean_absolute_error mean_absolute_percentage_error mean_squared_error "
                    "mean_squared_logarithmic_error mse msle poisson serialize sparse_categorical_crossentropy "
                    "squared_hinge",
    "keras.metrics": "AUC Accuracy BinaryAccuracy BinaryCrossentropy CategoricalAccuracy CategoricalCrossentropy "
                     "CategoricalHinge CosineSimilarity FalseNegatives FalsePositives Hinge KLD KLDivergence "
                     "LogCoshError MAE MAPE MSE MSLE Mean MeanAbsoluteError MeanAbsolutePercentageError MeanIoU "
                     "MeanRelativeError MeanSquaredError MeanSquaredLogarithmicError MeanTensor Metric Poisson "
                     "Precision Recall RootMeanSquaredError SensitivityAtSpecificity SparseCategoricalAccuracy "
                     "SparseCategoricalCrossentropy SparseTopKCategoricalAccuracy SpecificityAtSensitivity "
                     "SquaredHinge Sum TopKCategoricalAccuracy TrueNegatives TruePositives binary_accuracy "
                     "binary_crossentropy categorical_accuracy categorical_crossentropy cosine cosine_proximity "
                     "deserialize get hinge kld kullback_leibler_divergence mae mape mean_absolute_error "
                     "mean_absolute_percentage_error mean_squared_error mean_squared_logarithmic_error mse msle "
                     "poisson serialize sparse_categorical_accuracy sparse_categorical_crossentropy "
                     "sparse_top_k_categorical_accuracy squared_hinge top_k_categorical_accuracy",
    "keras.activations": "deserialize elu exponential get hard_sigmoid linear relu selu serialize sigmoid softmax "
                         "softplus softsign tanh",
    "keras.initializers": "Constant Identity Initializer Ones Orthogonal RandomNormal RandomUniform TruncatedNormal "
                          "VarianceScaling Zeros constant deserialize get glorot_normal glorot_uniform he_normal "
                          "he_uniform identity lecun_normal lecun_uniform ones orthogonal serialize zeros",
    "keras.regularizers": "L1L2 Regularizer deserialize get l1 l1_l2 l2 serialize",
    "keras.constraints": "Constraint MaxNorm MinMaxNorm NonNeg RadialConstraint UnitNorm deserialize get max_norm "
                         "min_max_norm non_neg radial_constraint serialize unit_norm",
    "keras.utils": "CustomObjectScope GeneratorEnqueuer HDF5Matrix OrderedEnqueuer Progbar Sequence SequenceEnqueuer "
                   "convert_all_kernels_in_model custom_object_scope deserialize_keras_object get_custom_objects "
                   "get_file get_source_inputs model_to_dot multi_gpu_model normalize plot_model "
                   "serialize_keras_object to_categorical",
    "keras.preprocessing.sequence": "TimeseriesGenerator make_sampling_table pad_sequences skipgrams",
    "keras.preprocessing.text": "Tokenizer hashing_trick one_hot text_to_word_sequence tokenizer_from_json",
    "keras.datasets": "boston_housing cifar10 cifar100 fashion_mnist imdb mnist reuters",
    "keras.estimator": "model_to_estimator",
    "keras.backend": "abs all any arange argmax argmin backend batch_dot batch_flatten batch_get_value "
                     "batch_normalization batch_set_value bias_add binary_crossentropy cast cast_to_floatx "
                     "categorical_crossentropy clear_session clip concatenate constant conv1d conv2d "
                     "conv2d_transpose conv3d cos count_params ctc_batch_cost ctc_decode ctc_label_dense_to_sparse "
                     "cumprod cumsum depthwise_conv2d dot dropout dtype elu epsilon equal eval exp expand_dims eye "
                     "flatten floatx foldl foldr function gather get_session get_uid get_value gradients greater "
                     "greater_equal hard_sigmoid identity image_data_format in_test_phase in_top_k in_train_phase "
                     "int_shape is_keras_tensor is_sparse l2_normalize learning_phase learning_phase_scope less "
                     "less_equal local_conv1d local_conv2d log manual_variable_initialization map_fn max maximum "
                     "mean min minimum moving_average_update name_scope ndim normalize_batch_in_training not_equal "
                     "one_hot ones ones_like permute_dimensions placeholder pool2d pool3d pow print_tensor prod "
                     "random_binomial random_normal random_normal_variable random_uniform random_uniform_variable "
                     "relu repeat repeat_elements reset_uids reshape resize_images resize_volumes reverse rnn round "
                     "separable_conv2d set_epsilon set_floatx set_image_data_format set_learning_phase set_session "
                     "set_value shape sigmoid sign sin softmax softplus softsign sparse_categorical_crossentropy "
                     "spatial_2d_padding spatial_3d_padding sqrt square squeeze stack std stop_gradient sum switch "
                     "tanh temporal_padding tile to_dense transpose truncated_normal update update_add update_sub "
                     "var variable zeros zeros_like",
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
    "contrib.seq2seq": "AttentionMechanism AttentionWrapper AttentionWrapperState BahdanauAttention "
                       "BahdanauMonotonicAttention BasicDecoder BasicDecoderOutput BeamSearchDecoder "
                       "BeamSearchDecoderOutput BeamSearchDecoderState CustomHelper Decoder "
                       "FinalBeamSearchDecoderOutput GreedyEmbeddingHelper Helper InferenceHelper "
                       "LuongAttention LuongMonotonicAttention SampleEmbeddingHelper "
                       "ScheduledEmbeddingTrainingHelper ScheduledOutputTrainingHelper TrainingHelper "
                       "dynamic_decode gather_tree hardmax monotonic_attention safe_cumprod "
                       "sequence_loss tile_batch",
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
        grad = "not differentiable" if opdef.grad is registry.no_gradient else ("yes" if opdef.grad else "no")
        lowering = "own" if opdef.lower else ("eager kernel on chunks" if opdef.traits.elementwise else
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
