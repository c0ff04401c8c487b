"""TensorFlow's wire formats that tensorboard's compat protos lack, under dflow's own proto package.

`tf.train.Example` (example.proto, feature.proto), the checkpoint index's `BundleHeaderProto` /
`BundleEntryProto` (tensor_bundle.proto, with `TensorSliceProto`) and the `SavedModel` message
(saved_model.proto) are declared here field for field, with TensorFlow's field numbers and types,
so their bytes are TensorFlow's bytes. Their full names live in the package `dflow.proto`, never
`tensorflow.*`: TensorFlow registers its own copies in the same default descriptor pool, and two
files declaring one symbol make the second import fail ("duplicate symbol"). tensorboard's compat
protos do the same for GraphDef, MetaGraphDef and the rest (package `tensorboard`), which these
messages reuse.

The descriptors are built here with `descriptor_pb2` (no generated code, so no protoc or gencode
version to match the installed protobuf runtime).
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from tensorboard.compat.proto import meta_graph_pb2, tensor_shape_pb2, types_pb2, versions_pb2

__all__ = ["BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList", "FeatureLists",
           "Example", "SequenceExample", "TensorSliceProto", "BundleHeaderProto", "BundleEntryProto",
           "SavedModel"]

PACKAGE = "dflow.proto"
_F = descriptor_pb2.FieldDescriptorProto
_TYPES = {"bytes": _F.TYPE_BYTES, "string": _F.TYPE_STRING, "float": _F.TYPE_FLOAT, "int64": _F.TYPE_INT64,
          "int32": _F.TYPE_INT32, "fixed32": _F.TYPE_FIXED32, "bool": _F.TYPE_BOOL}


def _field(msg, name, number, kind, repeated=False, oneof=None, packed=None):
    """Adds a field; `kind` a scalar type name above, or a message/enum's full name (".pkg.Name")."""
    f = msg.field.add(name=name, number=number,
                      label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
    if kind in _TYPES:
        f.type = _TYPES[kind]
    elif kind.startswith("enum:"):
        f.type, f.type_name = _F.TYPE_ENUM, kind[5:]
    else:
        f.type, f.type_name = _F.TYPE_MESSAGE, kind
    if oneof is not None:
        f.oneof_index = oneof
    if packed is not None:
        f.options.packed = packed
    return f


def _map(msg, name, number, value_type):
    """A `map<string, value_type>` field: a nested XEntry message marked as a map entry."""
    entry = msg.nested_type.add(name="".join(p.title() for p in name.split("_")) + "Entry")
    entry.options.map_entry = True
    _field(entry, "key", 1, "string")
    _field(entry, "value", 2, value_type)
    _field(msg, name, number, f".{PACKAGE}.{msg.name}.{entry.name}", repeated=True)


def _build():
    fdp = descriptor_pb2.FileDescriptorProto(name="dflow/proto/tensorflow_formats.proto", package=PACKAGE,
                                             syntax="proto3")
    fdp.dependency.extend([tensor_shape_pb2.DESCRIPTOR.name, types_pb2.DESCRIPTOR.name,
                           versions_pb2.DESCRIPTOR.name, meta_graph_pb2.DESCRIPTOR.name])
    p = f".{PACKAGE}."

    # feature.proto / example.proto
    for name, kind in (("BytesList", "bytes"), ("FloatList", "float"), ("Int64List", "int64")):
        _field(fdp.message_type.add(name=name), "value", 1, kind, repeated=True,
               packed=None if kind == "bytes" else True)
    feature = fdp.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    for number, name in ((1, "bytes_list"), (2, "float_list"), (3, "int64_list")):
        _field(feature, name, number, p + {1: "BytesList", 2: "FloatList", 3: "Int64List"}[number], oneof=0)
    _map(fdp.message_type.add(name="Features"), "feature", 1, p + "Feature")
    _field(fdp.message_type.add(name="FeatureList"), "feature", 1, p + "Feature", repeated=True)
    _map(fdp.message_type.add(name="FeatureLists"), "feature_list", 1, p + "FeatureList")
    _field(fdp.message_type.add(name="Example"), "features", 1, p + "Features")
    seq = fdp.message_type.add(name="SequenceExample")
    _field(seq, "context", 1, p + "Features")
    _field(seq, "feature_lists", 2, p + "FeatureLists")

    # tensor_slice.proto
    tsp = fdp.message_type.add(name="TensorSliceProto")
    extent = tsp.nested_type.add(name="Extent")
    extent.oneof_decl.add(name="has_length")
    _field(extent, "start", 1, "int64")
    _field(extent, "length", 2, "int64", oneof=0)
    _field(tsp, "extent", 1, p + "TensorSliceProto.Extent", repeated=True)

    # tensor_bundle.proto
    header = fdp.message_type.add(name="BundleHeaderProto")
    endian = header.enum_type.add(name="Endianness")
    endian.value.add(name="LITTLE", number=0)
    endian.value.add(name="BIG", number=1)
    _field(header, "num_shards", 1, "int32")
    _field(header, "endianness", 2, "enum:" + p + "BundleHeaderProto.Endianness")
    _field(header, "version", 3, ".tensorboard.VersionDef")
    entry = fdp.message_type.add(name="BundleEntryProto")
    _field(entry, "dtype", 1, "enum:.tensorboard.DataType")
    _field(entry, "shape", 2, ".tensorboard.TensorShapeProto")
    _field(entry, "shard_id", 3, "int32")
    _field(entry, "offset", 4, "int64")
    _field(entry, "size", 5, "int64")
    _field(entry, "crc32c", 6, "fixed32")
    _field(entry, "slices", 7, p + "TensorSliceProto", repeated=True)

    # saved_model.proto
    sm = fdp.message_type.add(name="SavedModel")
    _field(sm, "saved_model_schema_version", 1, "int64")
    _field(sm, "meta_graphs", 2, ".tensorboard.MetaGraphDef", repeated=True)

    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(fdp.name)
    except KeyError:
        pool.Add(fdp)
    return {m.name: message_factory.GetMessageClass(pool.FindMessageTypeByName(PACKAGE + "." + m.name))
            for m in fdp.message_type}


_CLASSES = _build()
BytesList, FloatList, Int64List = _CLASSES["BytesList"], _CLASSES["FloatList"], _CLASSES["Int64List"]
Feature, Features = _CLASSES["Feature"], _CLASSES["Features"]
FeatureList, FeatureLists = _CLASSES["FeatureList"], _CLASSES["FeatureLists"]
Example, SequenceExample = _CLASSES["Example"], _CLASSES["SequenceExample"]
TensorSliceProto = _CLASSES["TensorSliceProto"]
BundleHeaderProto, BundleEntryProto = _CLASSES["BundleHeaderProto"], _CLASSES["BundleEntryProto"]
SavedModel = _CLASSES["SavedModel"]
