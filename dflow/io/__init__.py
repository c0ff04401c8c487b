"""Zarr sources and sinks, checkpoints and graph files; TFRecord files and `tf.train.Example` parsing
(TF1's `tf.io` names for them); `cleanup` of killed runs' temporaries."""

from ..kernels.csv_ops import decode_csv
from ..kernels.encode_ops import (
    decode_base64,
    decode_compressed,
    deserialize_many_sparse,
    encode_base64,
    serialize_many_sparse,
    serialize_sparse,
)
from ..kernels.file_ops import matching_files, read_file, write_file
from ..kernels.image_codec_ops import (
    decode_and_crop_jpeg,
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    decode_webp,
    encode_jpeg,
    encode_png,
    extract_jpeg_shape,
    is_jpeg,
)
from ..kernels.parsing_ops import (
    FixedLenFeature,
    SparseFeature,
    VarLenFeature,
    parse_example,
    parse_single_example,
)
from ..kernels.sequence_parsing_ops import (
    FixedLenSequenceFeature,
    parse_sequence_example,
    parse_single_sequence_example,
)
from ..kernels.serialization_ops import decode_json_example, parse_tensor, serialize_tensor
from ..kernels.text_ops import decode_raw
from ..platform import io_gfile as gfile
from .cleanup import cleanup
from .graph_io import import_graph_def, read_graph_def, write_graph
from .meta_graph import export_meta_graph, import_meta_graph
from .tfrecord import TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator
from .zarr_io import read_zarr, write_zarr

__all__ = ["read_zarr", "write_zarr", "cleanup", "import_graph_def", "read_graph_def", "write_graph",
           "export_meta_graph", "import_meta_graph", "gfile", "TFRecordCompressionType", "TFRecordOptions",
           "TFRecordWriter", "tf_record_iterator", "FixedLenFeature", "VarLenFeature", "parse_example",
           "parse_single_example", "decode_csv", "decode_raw", "read_file", "write_file", "matching_files", "decode_png",
           "decode_jpeg", "decode_image", "encode_png", "encode_jpeg",
           "serialize_tensor", "parse_tensor", "decode_json_example"]
__all__ += ["decode_base64", "encode_base64", "decode_compressed", "serialize_sparse", "serialize_many_sparse",
            "deserialize_many_sparse"]
__all__ += ["SparseFeature", "FixedLenSequenceFeature", "parse_sequence_example", "parse_single_sequence_example"]
__all__ += ["decode_webp", "decode_gif", "decode_bmp", "is_jpeg", "extract_jpeg_shape", "decode_and_crop_jpeg"]

from ..tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute(__name__)
