"""`tf.contrib.seq2seq` as TF 1.15 shipped it: sequence_loss and tile_batch, decoding helpers,
BasicDecoder and dynamic_decode, attention (Bahdanau, Luong, AttentionWrapper).

TF 2.x has no contrib, so the reference is TF 1.15's contrib/seq2seq sources; tests compare with
numpy loops written from them (tests/contrib/test_seq2seq.py).
"""

from __future__ import annotations

from ...tf1_names import missing_attribute
from .attention_wrapper import (
    AttentionMechanism,
    AttentionWrapper,
    AttentionWrapperState,
    BahdanauAttention,
    BahdanauMonotonicAttention,
    LuongAttention,
    LuongMonotonicAttention,
    hardmax,
    monotonic_attention,
    safe_cumprod,
)
from .beam_search_decoder import (
    BeamSearchDecoder,
    BeamSearchDecoderOutput,
    BeamSearchDecoderState,
    FinalBeamSearchDecoderOutput,
    gather_tree,
)
from .decoder import BasicDecoder, BasicDecoderOutput, Decoder, dynamic_decode
from .helper import (
    CustomHelper,
    GreedyEmbeddingHelper,
    Helper,
    InferenceHelper,
    SampleEmbeddingHelper,
    ScheduledEmbeddingTrainingHelper,
    ScheduledOutputTrainingHelper,
    TrainingHelper,
)
from .loss import sequence_loss, tile_batch

__all__ = ["sequence_loss", "tile_batch", "Helper", "CustomHelper", "TrainingHelper", "GreedyEmbeddingHelper",
           "SampleEmbeddingHelper", "ScheduledEmbeddingTrainingHelper", "Decoder", "BasicDecoder",
           "BasicDecoderOutput", "dynamic_decode", "AttentionMechanism", "AttentionWrapper",
           "AttentionWrapperState", "BahdanauAttention", "LuongAttention", "hardmax", "monotonic_attention",
           "safe_cumprod", "InferenceHelper", "ScheduledOutputTrainingHelper", "BahdanauMonotonicAttention", "LuongMonotonicAttention", "BeamSearchDecoder", "BeamSearchDecoderOutput", "BeamSearchDecoderState",
           "FinalBeamSearchDecoderOutput", "gather_tree"]

__getattr__ = missing_attribute(__name__)  # a TF1 name dflow lacks says so (docs/tf1_coverage.md)
