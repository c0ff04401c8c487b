"""`dflow.summary`: TF1's `tf.summary`, writing real TensorBoard event files.

Summary ops (`scalar`, `histogram`, `image`, `audio`, `text`, `tensor_summary`, `merge`,
`merge_all`) are registered ops whose output is a serialized `Summary` proto (a scalar string
tensor); they run on every scheduler, and a histogram of a chunked array is bucketed chunk by
chunk. `FileWriter` writes them, the graph and run metadata to event files through
dflow's own event-file writer (`event_file`). `Summary`, `Event`, `SessionLog`, `TaggedRunMetadata` and
`SummaryDescription` are TensorBoard's own proto classes, so
`tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=0.5)])` works as in TF1.

Modules: `common` (tags, scopes, collections, protos of numpy values), `summary_ops` (scalar,
tensor, text, merge), `histogram`, `media` (image, audio), `graph_def` (a Graph as TensorBoard's
GraphDef), `event_file` (the event file and its writer thread), `writer` (FileWriter, FileWriterCache).
"""

from tensorboard.compat.proto.event_pb2 import Event, SessionLog, TaggedRunMetadata
from tensorboard.compat.proto.summary_pb2 import (  # noqa: F401
    HistogramProto,
    Summary,
    SummaryDescription,
    SummaryMetadata,
)

from ..graph.graph import get_collection
from ..io.tfrecord import read_records
from .histogram import histogram
from .media import audio, image
from .summary_ops import merge, merge_all, scalar, tensor_summary, text
from .writer import FileWriter, FileWriterCache


def summary_iterator(path):
    """The `Event` protos of an event file, in order (TF1's `tf.train.summary_iterator`); records
    and their CRCs are checked (DataLossError naming the file), a missing file is NotFoundError.
    (TensorBoard's own loader would import TensorFlow where it is installed.)"""
    for record in read_records(path):
        yield Event.FromString(record)


def all_v2_summary_ops():
    """The TF2-style summary ops of the default graph (TF1's `tf.summary.all_v2_summary_ops` in graph
    mode: its `_SUMMARY_V2` collection). dflow builds none, so the list is empty unless a program
    adds to that collection itself."""
    return get_collection("_SUMMARY_V2")


# TF1's tf.summary names (HistogramProto, SummaryMetadata and summary_iterator are TF1's top-level and
# tf.train names, re-exported there)
__all__ = ["scalar", "histogram", "image", "audio", "text", "tensor_summary", "merge", "merge_all", "FileWriter",
           "FileWriterCache", "Summary", "SummaryDescription", "Event", "SessionLog", "TaggedRunMetadata",
           "all_v2_summary_ops"]

from ..tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute(__name__)  # a TF1 name dflow lacks says so (docs/tf1_coverage.md)
