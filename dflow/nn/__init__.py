"""`dflow.nn`: TF1's `tf.nn`. Activations and softmax (`activations.py`), cross-entropies and
in_top_k (`classification.py`), normalization (`normalization.py`), bias, dense, embeddings and
dropout (`core.py`); pools and convolutions are ops of `kernels/pool_ops.py`, `conv_ops.py` and
`depthwise_ops.py` (blockwise over the batch axis when chunked), re-exported here."""

from __future__ import annotations

from ..kernels.candidate_sampling_ops import (
    fixed_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from ..kernels.conv_ops import (
    atrous_conv2d,
    conv1d,
    conv2d,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    conv2d_transpose,
    convolution,
)
from ..kernels.depthwise_ops import depthwise_conv2d, depthwise_conv2d_native, separable_conv2d
from ..kernels.gather_ops import top_k
from ..kernels.math_ops import relu, sigmoid, tanh
from ..kernels.pool_ops import (
    avg_pool,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    avg_pool_v2,
    max_pool,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    max_pool_v2,
    max_pool_with_argmax,
    pool,
)
from .activations import (
    crelu,
    elu,
    leaky_relu,
    log_softmax,
    relu6,
    selu,
    softmax,
    softplus,
    softsign,
)
from .classification import (
    in_top_k,
    sigmoid_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    sparse_softmax_cross_entropy_with_logits,
    weighted_cross_entropy_with_logits,
)
from .core import (
    bias_add,
    dropout,
    embedding_lookup,
    embedding_lookup_sparse,
    xw_plus_b,
    zero_fraction,
)
from .normalization import (
    batch_norm_with_global_normalization,
    batch_normalization,
    fused_batch_norm,
    l2_loss,
    l2_normalize,
    local_response_normalization,
    lrn,
    moments,
)
from .sampled import compute_accidental_hits, nce_loss, sampled_softmax_loss

__all__ = [
    "relu", "relu6", "elu", "selu", "leaky_relu", "softplus", "softsign", "sigmoid", "tanh",
    "softmax", "log_softmax", "l2_loss", "l2_normalize", "bias_add", "xw_plus_b",
    "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2",
    "sparse_softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits",
    "weighted_cross_entropy_with_logits", "dropout", "moments", "batch_normalization",
    "embedding_lookup", "embedding_lookup_sparse", "top_k",
    # sampled losses and candidate samplers (issue 18)
    "nce_loss", "sampled_softmax_loss", "compute_accidental_hits", "log_uniform_candidate_sampler",
    "uniform_candidate_sampler", "fixed_unigram_candidate_sampler",
    # pooling and normalization (issue 13)
    "max_pool", "avg_pool", "max_pool_with_argmax", "max_pool1d", "avg_pool1d", "max_pool2d", "avg_pool2d",
    "max_pool3d", "avg_pool3d", "max_pool_v2", "avg_pool_v2", "pool", "local_response_normalization", "lrn",
    "fused_batch_norm", "batch_norm_with_global_normalization", "in_top_k", "crelu",
]

__all__ += ["conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "conv2d_transpose", "conv1d",
            "depthwise_conv2d", "depthwise_conv2d_native", "separable_conv2d", "atrous_conv2d", "convolution"]
__all__ += ["zero_fraction"]

from ..kernels.space_ops import depth_to_space, space_to_batch, space_to_depth  # noqa: E402

__all__ += ["space_to_depth", "depth_to_space", "space_to_batch"]

from .conv3d import conv1d_transpose, conv3d, conv3d_transpose, conv_transpose  # noqa: E402
from .statistics import (  # noqa: E402
    compute_average_loss,
    log_poisson_loss,
    normalize_moments,
    relu_layer,
    scale_regularization_loss,
    silu,
    sufficient_statistics,
    swish,
    weighted_moments,
)

__all__ += ["conv3d", "conv3d_transpose", "conv1d_transpose", "conv_transpose", "sufficient_statistics",
            "normalize_moments", "weighted_moments", "log_poisson_loss", "swish", "silu", "relu_layer",
            "compute_average_loss", "scale_regularization_loss"]

from ..kernels.math_composites import approx_max_k, approx_min_k  # noqa: E402 - tf.nn's names too, as TF's

__all__ += ["approx_max_k", "approx_min_k"]

from .ctc import (  # noqa: E402
    collapse_repeated,
    ctc_beam_search_decoder,
    ctc_beam_search_decoder_v2,
    ctc_greedy_decoder,
    ctc_loss,
    ctc_loss_v2,
    ctc_unique_labels,
)

__all__ += ["ctc_loss", "ctc_loss_v2", "ctc_greedy_decoder", "ctc_beam_search_decoder", "ctc_beam_search_decoder_v2",
            "collapse_repeated", "ctc_unique_labels"]

from .conv_extras import (  # noqa: E402
    atrous_conv2d_transpose,
    conv3d_backprop_filter,
    conv3d_backprop_filter_v2,
    depthwise_conv2d_backprop_filter,
    depthwise_conv2d_backprop_input,
    depthwise_conv2d_native_backprop_filter,
    depthwise_conv2d_native_backprop_input,
    safe_embedding_lookup_sparse,
    with_space_to_batch,
)

__all__ += ["depthwise_conv2d_backprop_input", "depthwise_conv2d_backprop_filter",
            "depthwise_conv2d_native_backprop_input", "depthwise_conv2d_native_backprop_filter",
            "conv3d_backprop_filter", "conv3d_backprop_filter_v2", "atrous_conv2d_transpose", "with_space_to_batch",
            "safe_embedding_lookup_sparse"]

from ..kernels.morphology_ops import dilation2d, erosion2d  # noqa: E402

__all__ += ["dilation2d", "erosion2d"]

from ..tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute(__name__)  # a TF1 name dflow lacks says so (docs/tf1_coverage.md)
