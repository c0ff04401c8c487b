"""`dflow.python_io`: TF1's `tf.python_io`, the TFRecord writer, iterator and options of
dflow/io/tfrecord.py (also under `tf.io`)."""

from .io.tfrecord import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]

from .tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute(__name__)  # a TF1 name dflow lacks says so (docs/tf1_coverage.md)
