"""The op table: one entry per TensorFlow op type, both directions side by side.

    read(node, ctx)  -> [serialize.NodeDef]   a TF NodeDef (proto) as dflow ops
    write(node, ctx) -> [node_def_pb2.NodeDef] a dflow NodeDef as TF ops

Most entries are `Op(tf, dflow, attrs, types)`: the op keeps its name (or is renamed), the listed
attrs pass through as plain values, TF's type attrs (`T`, `Tidx`, ...) are dropped on reading (dflow
infers dtypes) and recomputed on writing from the dtypes of the inputs (`types={"T": 0}`: the
dtype of input 0; "o0": of output 0). Ops dflow builds from others (BiasAdd, Relu6, Softmax,
FusedBatchNorm, ...) expand into several dflow nodes on reading: the last one carries the TF node's
name, helpers are named under it, and other outputs are remapped (`ctx.alias`). Resource variables
read as dflow's reference variables (VarHandleOp -> VariableV2, ReadVariableOp -> Identity,
AssignVariableOp -> Assign). The ctx objects are in dflow/io/tf_graph.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from tensorboard.compat.proto import node_def_pb2

from ..graph.dtypes import as_dtype
from ..graph.shape import TensorShape
from .tf_graph_values import attr_to_tf

__all__ = ["READ", "WRITE", "supported_tf_ops", "Op"]


@dataclass
class Op:
    """One TF op type. tf: its names, newest first (the first is written); dflow: the dflow op type;
    attrs: attrs kept as they are ({tf name: dflow name} or names); types: TF type attrs and where
    their dtype comes from; defaults: dflow attrs TF lacks; read/write: custom converters."""
    tf: tuple
    dflow: str | None = None
    attrs: dict = field(default_factory=dict)
    types: dict = field(default_factory=dict)
    defaults: dict = field(default_factory=dict)
    tf_defaults: dict = field(default_factory=dict)
    count: tuple | None = None  # (TF attr, offset): the number of data inputs + offset (N of ConcatV2)
    read: Callable | None = None
    write: Callable | None = None


def _tup(v):
    return tuple(v) if isinstance(v, list) else v


def _plain_read(spec):
    def read(node, ctx):
        attrs = dict(spec.defaults)
        for tf_name, df_name in spec.attrs.items():
            if tf_name in node.attr:
                attrs[df_name] = _tup(ctx.attr(node, tf_name))
        return [ctx.node(node.name, spec.dflow, ctx.inputs(node), attrs, node.device)]
    return read


def _plain_write(spec):
    def write(node, ctx):
        attrs = {tf_name: node.attr[df] for tf_name, df in spec.attrs.items() if df in node.attr}
        attrs.update(spec.tf_defaults)
        attrs.update(ctx.types(node, spec.types))
        if spec.count:
            attrs[spec.count[0]] = len(ctx.data_inputs(node)) + spec.count[1]
        return [ctx.tf_node(node, spec.tf[0], node.input, attrs)]
    return write


TABLE: list[Op] = []


def op(tf, dflow=None, attrs=(), types=None, **kw):
    tf = (tf,) if isinstance(tf, str) else tuple(tf)
    attrs = dict(attrs) if isinstance(attrs, dict) else {a: a for a in attrs}
    spec = Op(tf, dflow or tf[0], attrs, {"T": 0} if types is None else types, **kw)
    TABLE.append(spec)
    return spec


# ---- elementwise, same names and one type attr T ---------------------------------------------------

for _name in ("Sub", "Mul", "RealDiv", "FloorDiv", "FloorMod", "TruncateDiv", "TruncateMod", "Maximum", "Minimum",
              "Pow", "SquaredDifference", "Atan2", "Abs", "Neg", "Exp", "Expm1", "Log", "Log1p", "Sqrt", "Rsqrt",
              "Square", "Reciprocal", "Sigmoid", "Tanh", "Relu", "Sign", "Floor", "Ceil", "Round", "Sin", "Cos",
              "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "IsNan", "IsInf",
              "IsFinite", "Less", "LessEqual", "Greater", "GreaterEqual", "StopGradient", "Identity", "ClipByValue",
              "ReluGrad"):
    op(_name)
op(("AddV2", "Add"), "Add")
op(("Equal",), attrs=(), tf_defaults={"incompatible_shape_error": True})
op(("NotEqual",), tf_defaults={"incompatible_shape_error": True})
for _name in ("LogicalAnd", "LogicalOr", "LogicalNot", "NoOp"):
    op(_name, types={})
op(("Inv",), "Reciprocal")


def _read_div(node, ctx):  # TF1's Div: true division of floats, truncating of integers
    dt = ctx.attr(node, "T")
    kind = "RealDiv" if dt.is_floating or dt.is_complex else "TruncateDiv"
    return [ctx.node(node.name, kind, ctx.inputs(node), {}, node.device)]


op("Div", "RealDiv", read=_read_div, write=False)


def _read_like(node, ctx):
    return [ctx.node(node.name, node.op, ctx.inputs(node), {"dtype": ctx.attr(node, "T")}, node.device)]
op("SelectV2", types={"T": 1})
op("AddN", count=("N", 0))
op("ZerosLike", read=_read_like)
op("OnesLike", read=_read_like)

# ---- shapes, slicing, joining -------------------------------------------------------------------

op("Reshape", types={"T": 0, "Tshape": 1})
op("ExpandDims", types={"T": 0, "Tdim": 1})
op("Squeeze", attrs=("squeeze_dims",))
op("ConcatV2", types={"T": 0, "Tidx": -1}, count=("N", -1))
op("Pack", attrs=("axis",), count=("N", 0))
op("Unpack", attrs=("num", "axis"))
op("StridedSlice", attrs=("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"),
   types={"T": 0, "Index": 1})
op("Slice", types={"T": 0, "Index": 1})
op("Transpose", types={"T": 0, "Tperm": 1})
op("Pad", types={"T": 0, "Tpaddings": 1})
op("PadV2", types={"T": 0, "Tpaddings": 1})
op("MirrorPad", attrs=("mode",), types={"T": 0, "Tpaddings": 1})
op("Tile", types={"T": 0, "Tmultiples": 1})
op("Shape", attrs=("out_type",))
op("Size", attrs=("out_type",))
op("Rank")
op("Fill", types={"T": 1, "index_type": 0})
op("Range", types={"Tidx": 0})
op("LinSpace", types={"T": 0, "Tidx": 2})
op("ReverseV2", types={"T": 0, "Tidx": 1})
op("BroadcastTo", types={"T": 0, "Tidx": 1})
op("Split", attrs=("num_split",), types={"T": 1})
op("SplitV", attrs=("num_split",), types={"T": 0, "Tlen": 1})
op("Where", types={"T": 0})
op("OneHot", attrs=("axis",), types={"T": 2, "TI": 0})
op("GatherNd", types={"Tparams": 0, "Tindices": 1}, defaults={"batch_dims": 0})  # TF's GatherNd: batch_dims 0
op("UnsortedSegmentSum", types={"T": 0, "Tindices": 1, "Tnumsegments": 2})
op("Cumsum", attrs=("exclusive", "reverse"), types={"T": 0, "Tidx": 1})
op("TopKV2", attrs=("sorted",))
op("Einsum", attrs=("equation",), count=("N", 0))
op("InvertPermutation")
op("Unique", attrs=("out_idx",))
op("DynamicPartition", attrs=("num_partitions",))
op("DynamicStitch", attrs=("N",), types={"T": "o0"})
op("ReverseSequence", attrs=("seq_dim", "batch_dim"), types={"T": 0, "Tlen": 1})
op("SparseToDense", attrs=("validate_indices",), types={"T": 2, "Tindices": 0})
op("ConjugateTranspose", types={"T": 0, "Tperm": 1})
op("CheckNumerics", attrs=("message",))
op("ScatterAdd", types={"T": 0, "Tindices": 1}, tf_defaults={"use_locking": False})
op("ScatterSub", types={"T": 0, "Tindices": 1}, tf_defaults={"use_locking": False})
op("ScatterUpdate", types={"T": 0, "Tindices": 1}, tf_defaults={"use_locking": True})
op("StringJoin", attrs=("separator",), types={}, count=("N", 0))
op("StringLength", attrs=("unit",), types={})
op("StringToNumber", attrs=("out_type",), types={})
op("AsString", attrs=("precision", "scientific", "shortest", "width", "fill"))

# ---- reductions ---------------------------------------------------------------------------------

for _name in ("Mean", "Sum", "Max", "Min", "Prod", "All", "Any"):
    op(_name, attrs=("keep_dims",), types={"T": 0, "Tidx": 1} if _name not in ("All", "Any") else {"Tidx": 1})
op("ArgMax", attrs=("output_type",), types={"T": 0, "Tidx": 1})
op("ArgMin", attrs=("output_type",), types={"T": 0, "Tidx": 1})

# ---- nn -----------------------------------------------------------------------------------------

_CONV = ("strides", "padding", "explicit_paddings", "data_format", "dilations")
op("Conv2D", attrs=_CONV, tf_defaults={"use_cudnn_on_gpu": True})
op("DepthwiseConv2dNative", attrs=_CONV)
op("MaxPool", attrs=("ksize", "strides", "padding", "data_format"))
op("AvgPool", attrs=("ksize", "strides", "padding", "data_format"))
# the gradients' ops; Conv2DBackpropInput is also the forward op of conv2d_transpose (deconvolution)
op("Conv2DBackpropInput", attrs=_CONV, types={"T": 1}, tf_defaults={"use_cudnn_on_gpu": True})
op("Conv2DBackpropFilter", attrs=_CONV, types={"T": 0}, tf_defaults={"use_cudnn_on_gpu": True})
op("DepthwiseConv2dNativeBackpropInput", attrs=_CONV, types={"T": 1})
op("DepthwiseConv2dNativeBackpropFilter", attrs=_CONV, types={"T": 0})
op("MaxPoolGrad", attrs=("ksize", "strides", "padding", "data_format"))
op("MaxPoolWithArgmax", attrs=("ksize", "strides", "padding", "Targmax", "include_batch_in_index"),
   defaults={"data_format": "NHWC"})
op("ResizeBilinear", attrs=("align_corners", "half_pixel_centers"))
op("ResizeNearestNeighbor", attrs=("align_corners", "half_pixel_centers"))

# ---- random -------------------------------------------------------------------------------------

for _name in ("RandomUniform", "RandomStandardNormal", "TruncatedNormal"):
    op(_name, attrs=("dtype", "seed", "seed2"), types={"T": 0})
op("RandomUniformInt", attrs={"Tout": "dtype", "seed": "seed", "seed2": "seed2"}, types={"T": 0})


# ---- dflow ops TensorFlow builds from others: written as those ops ---------------------------------


def _expansion(build):
    """A writer emitting TF nodes for a dflow-only op: build(node, ctx, emit, const) returns the
    last node's inputs and op type; the last node takes the dflow node's name."""
    def write(node, ctx):
        out = []
        dt = as_dtype(node.output_dtypes[0])

        def emit(op_type, inputs, attrs=None, types=None):
            name = f"{node.name}/_dflow_{op_type.lower()}{len(out)}"
            out.append(ctx.tf_node(node, op_type, inputs, dict(attrs or {}, **(types or {})), name=name))
            return name

        def const(value):
            value = np.asarray(value)
            return emit("Const", [], {"value": value, "dtype": as_dtype(value.dtype)})

        op_type, inputs, attrs = build(node, ctx, emit, const, dt)
        out.append(ctx.tf_node(node, op_type, inputs, attrs))
        return out
    return write


def _logsumexp(node, ctx, emit, const, dt):
    x, axis = ctx.data_inputs(node)
    keep = bool(node.attr.get("keep_dims", False))
    tidx = {"Tidx": ctx.dtype_of(axis)}
    top = emit("StopGradient", [emit("Max", [x, axis], {"keep_dims": True, "T": dt}, tidx)], {"T": dt})
    total = emit("Sum", [emit("Exp", [emit("Sub", [x, top], {"T": dt})], {"T": dt}), axis],
                 {"keep_dims": keep, "T": dt}, tidx)
    if not keep:  # the max, shaped as the sum
        top = emit("Reshape", [top, emit("Shape", [total], {"T": dt, "out_type": as_dtype("int32")})],
                   {"T": dt, "Tshape": as_dtype("int32")})
    return "AddV2", [emit("Log", [total], {"T": dt}), top], {"T": dt}


def _logistic_loss(node, ctx, emit, const, dt):
    """sigmoid_cross_entropy_with_logits: max(x, 0) - x * z + log1p(exp(-|x|)) (TF1's formula)."""
    x, z = ctx.data_inputs(node)[:2]  # (logits, labels), as the eager kernel takes them
    zero = const(np.zeros((), dt.np_dtype))
    relu = emit("Maximum", [x, zero], {"T": dt})
    xz = emit("Mul", [x, z], {"T": dt})
    soft = emit("Log1p", [emit("Exp", [emit("Neg", [emit("Abs", [x], {"T": dt})], {"T": dt})], {"T": dt})], {"T": dt})
    return "AddV2", [emit("Sub", [relu, xz], {"T": dt}), soft], {"T": dt}


def _logical_xor(node, ctx, emit, const, dt):
    a, b = ctx.data_inputs(node)
    both = emit("LogicalAnd", [a, b])
    return "LogicalAnd", [emit("LogicalOr", [a, b]), emit("LogicalNot", [both])], {}


def _sequence_mask(node, ctx, emit, const, dt):
    lengths, maxlen = ctx.data_inputs(node)[:2]
    lt = ctx.dtype_of(lengths)
    steps = emit("Range", [const(np.zeros((), lt.np_dtype)), maxlen, const(np.ones((), lt.np_dtype))],
                 {"Tidx": lt})
    expanded = emit("ExpandDims", [lengths, const(np.array(-1, np.int32))], {"T": lt, "Tdim": as_dtype("int32")})
    mask = emit("Less", [steps, expanded], {"T": lt})
    if dt == as_dtype("bool"):
        return "Identity", [mask], {"T": dt}
    return "Cast", [mask], {"SrcT": as_dtype("bool"), "DstT": dt, "Truncate": False}


def _label_check(node, ctx, emit, const, dt):
    """sparse labels in [0, depth), as TF's own cross-entropy kernel checks them: an Assert that
    the labels' Identity depends on."""
    labels, depth = ctx.data_inputs(node)[:2]
    lt = ctx.dtype_of(labels)
    ok = emit("LogicalAnd", [emit("GreaterEqual", [labels, const(np.zeros((), lt.np_dtype))], {"T": lt}),
                             emit("Less", [labels, depth], {"T": lt})])
    flat = emit("Reshape", [ok, const(np.array([-1], np.int32))], {"T": as_dtype("bool"), "Tshape": as_dtype("int32")})
    every = emit("All", [flat, const(np.array(0, np.int32))], {"keep_dims": False, "Tidx": as_dtype("int32")})
    message = emit("Const", [], {"value": np.array(b"Received a label value outside the valid range [0, depth)",
                                                   dtype=object), "dtype": as_dtype("string")})
    check = emit("Assert", [every, message, labels], {"T": [as_dtype("string"), lt], "summarize": 3})
    return "Identity", [labels, "^" + check], {"T": lt}


op("SparseLabelCheck", read=False, write=_expansion(_label_check))
op("ReduceLogSumExp", read=False, write=_expansion(_logsumexp))
op("LogisticLoss", read=False, write=_expansion(_logistic_loss))
op("LogicalXor", read=False, write=_expansion(_logical_xor))
op("SequenceMask", read=False, write=_expansion(_sequence_mask))


# ---- ops with their own converters ----------------------------------------------------------------


def _read_const(node, ctx):
    return [ctx.node(node.name, "Const", [], {"value": ctx.attr(node, "value"), "dtype": ctx.attr(node, "dtype")},
                     node.device)]


def _write_const(node, ctx):
    value = np.asarray(node.attr["value"])
    controls = [i for i in node.input if i.startswith("^")]  # (a pivot in a cond branch or loop body)
    return [ctx.tf_node(node, "Const", controls, {"value": value, "dtype": node.attr["dtype"]})]


op("Const", read=_read_const, write=_write_const, types={})


def _read_placeholder(node, ctx):
    shape = ctx.attr(node, "shape", TensorShape(None))
    return [ctx.node(node.name, "Placeholder", [], {"dtype": ctx.attr(node, "dtype"), "shape": shape,
                                                    "chunks": None}, node.device)]


op("Placeholder", read=_read_placeholder, attrs=("dtype", "shape"), types={})
op("PlaceholderWithDefault", attrs=("shape",), types={"dtype": 0})


def _read_variable(node, ctx):
    return [ctx.node(node.name, "VariableV2", [], {"shape": ctx.attr(node, "shape"),
                                                   "dtype": ctx.attr(node, "dtype"), "chunks": None}, node.device)]


op(("VariableV2", "Variable"), read=_read_variable, attrs=("shape", "dtype"), types={},
   tf_defaults={"container": "", "shared_name": ""})


def _var_shape(ctx, inp):
    src = ctx.tf_nodes.get(inp.lstrip("^").split(":")[0])
    while src is not None and src.op in ("Identity", "RefIdentity"):
        src = ctx.tf_nodes.get(src.input[0].split(":")[0])
    if src is None or "shape" not in src.attr:
        return None
    shape = ctx.attr(src, "shape")
    return tuple(shape.as_list()) if shape.is_fully_defined() else None


def _read_assign(node, ctx, dflow_op="Assign"):
    inputs = ctx.inputs(node)
    attrs = {}
    if dflow_op == "Assign":
        attrs = {"validate_shape": ctx.attr(node, "validate_shape", True), "var_shape": _var_shape(ctx, inputs[0])}
    return [ctx.node(node.name, dflow_op, inputs, attrs, node.device)]


op("Assign", read=_read_assign, attrs=("validate_shape",), types={"T": 1}, tf_defaults={"use_locking": True})
op("AssignAdd", read=lambda n, c: _read_assign(n, c, "AssignAdd"), types={"T": 1},
   tf_defaults={"use_locking": False})
op("AssignSub", read=lambda n, c: _read_assign(n, c, "AssignSub"), types={"T": 1},
   tf_defaults={"use_locking": False})


def _read_is_initialized(node, ctx):
    var = ctx.inputs(node)[0].split(":")[0]
    return [ctx.node(node.name, "IsVariableInitialized", ["^" + var], {"var": var}, node.device)]


def _write_is_initialized(node, ctx):
    return [ctx.tf_node(node, "IsVariableInitialized", [node.attr["var"]],
                        {"dtype": ctx.dtype_of(node.attr["var"] + ":0")})]


op("IsVariableInitialized", read=_read_is_initialized, write=_write_is_initialized, types={})

# resource variables, read as reference variables
op("VarHandleOp", "VariableV2", read=_read_variable, write=False)
op("ReadVariableOp", "Identity", write=False)
op("AssignVariableOp", read=_read_assign, write=False)
op("AssignAddVariableOp", read=lambda n, c: _read_assign(n, c, "AssignAdd"), write=False)
op("AssignSubVariableOp", read=lambda n, c: _read_assign(n, c, "AssignSub"), write=False)
op("VarIsInitializedOp", read=_read_is_initialized, write=False)


def _read_assert(node, ctx):
    """TF's Assert(condition, data...): dflow's with a template naming each data tensor in order."""
    inputs = ctx.inputs(node)
    n = len([i for i in inputs if not i.startswith("^")]) - 1
    return [ctx.node(node.name, "Assert", inputs, {"template": list(range(n)),
                                                   "summarize": int(ctx.attr(node, "summarize", 3))}, node.device)]


def _write_assert(node, ctx):
    """dflow's template (literal strings and indices of data tensors) as TF's data list: each
    literal string a Const of its own."""
    data = ctx.data_inputs(node)
    cond, tensors = data[0], data[1:]
    out, items = [], []
    for k, part in enumerate(node.attr.get("template", list(range(len(tensors))))):
        if isinstance(part, str):
            name = f"{node.name}/_dflow_message{k}"
            out.append(ctx.tf_node(node, "Const", [], {"value": np.array(part.encode(), dtype=object),
                                                       "dtype": as_dtype("string")}, name=name))
            items.append(name)
        else:
            items.append(tensors[int(part)])
    controls = [i for i in node.input if i.startswith("^")]
    out.append(ctx.tf_node(node, "Assert", [cond] + items + controls,
                           {"T": [ctx.dtype_of(i) if i in tensors else as_dtype("string") for i in items],
                            "summarize": int(node.attr.get("summarize", 3))}))
    return out


op("Assert", read=_read_assert, write=_write_assert, types={})


def _read_identity_n(node, ctx):
    return [ctx.node(node.name, "IdentityN", ctx.inputs(node), {}, node.device)]


def _write_identity_n(node, ctx):
    return [ctx.tf_node(node, "IdentityN", node.input, {"T": [ctx.dtype_of(i) for i in ctx.data_inputs(node)]})]


op("IdentityN", read=_read_identity_n, write=_write_identity_n, types={})


def _read_cast(node, ctx):
    return [ctx.node(node.name, "Cast", ctx.inputs(node), {"DstT": ctx.attr(node, "DstT")}, node.device)]


op("Cast", read=_read_cast, attrs=("DstT",), types={"SrcT": 0}, tf_defaults={"Truncate": False})


def _read_matmul(node, ctx, a="transpose_a", b="transpose_b"):
    attrs = {"transpose_a": ctx.attr(node, a, False), "transpose_b": ctx.attr(node, b, False),
             "adjoint_a": False, "adjoint_b": False}
    return [ctx.node(node.name, "MatMul" if a == "transpose_a" else "BatchMatMulV2", ctx.inputs(node), attrs,
                     node.device)]


def _write_matmul(node, ctx):
    ta = bool(node.attr.get("transpose_a") or node.attr.get("adjoint_a"))
    tb = bool(node.attr.get("transpose_b") or node.attr.get("adjoint_b"))
    if node.op == "MatMul":
        attrs = {"transpose_a": ta, "transpose_b": tb}
    else:
        attrs = {"adj_x": ta, "adj_y": tb}
    attrs["T"] = ctx.dtype_of(node.input[0])
    return [ctx.tf_node(node, node.op, node.input, attrs)]


op("MatMul", read=_read_matmul, write=_write_matmul)
op(("BatchMatMulV2", "BatchMatMul", "BatchMatMulV3"), read=lambda n, c: _read_matmul(n, c, "adj_x", "adj_y"),
   write=_write_matmul)


def _read_gather(node, ctx):
    inputs = ctx.inputs(node)
    axis = 0
    if node.op == "GatherV2":
        axis = int(ctx.const_input(node, 2, "axis"))
        inputs = inputs[:2]
    return [ctx.node(node.name, "GatherV2", inputs, {"axis": axis, "batch_dims": ctx.attr(node, "batch_dims", 0)},
                     node.device)]


def _write_gather(node, ctx):
    axis = ctx.tf_const(node.name + "/axis", np.array(node.attr.get("axis", 0), np.int32))
    data = ctx.data_inputs(node)
    inputs = data[:2] + [axis.name] + [i for i in node.input if i.startswith("^")]
    attrs = {"Tparams": ctx.dtype_of(data[0]), "Tindices": ctx.dtype_of(data[1]), "Taxis": as_dtype("int32"),
             "batch_dims": node.attr.get("batch_dims", 0)}
    return [axis, ctx.tf_node(node, "GatherV2", inputs, attrs)]


op(("GatherV2", "ResourceGather", "Gather"), read=_read_gather, write=_write_gather)


def _read_bias_add(node, ctx):
    x, b = ctx.inputs(node)[:2]
    if ctx.attr(node, "data_format", "NHWC") == "NCHW":
        shape = ctx.const(node.name + "/_dflow_bias_shape", np.array([1, -1, 1, 1], np.int32), node)
        b_node = ctx.node(node.name + "/_dflow_bias", "Reshape", [b, shape.name + ":0"], {}, node.device)
        return [shape, b_node, ctx.node(node.name, "Add", [x, b_node.name + ":0"], {}, node.device)]
    return [ctx.node(node.name, "Add", ctx.inputs(node), {}, node.device)]


op(("BiasAdd", "BiasAddV1"), "Add", read=_read_bias_add, write=False)


def _read_select(node, ctx):
    return [ctx.node(node.name, "SelectV2", ctx.inputs(node), {}, node.device)]


op("Select", "SelectV2", read=_read_select, write=False)


def _read_div_no_nan(node, ctx):  # x / y, 0 where y == 0
    x, y = ctx.inputs(node)[:2]
    dt = ctx.attr(node, "T", as_dtype("float32"))
    zero = ctx.const(f"{node.name}/_dflow_zero", np.array(0, dt.np_dtype), node)
    is_zero = ctx.node(f"{node.name}/_dflow_is_zero", "Equal", [y, zero.name + ":0"], {}, node.device)
    safe = ctx.node(f"{node.name}/_dflow_safe", "SelectV2", [is_zero.name + ":0", ctx.const(
        f"{node.name}/_dflow_one", np.array(1, dt.np_dtype), node).name + ":0", y], {}, node.device)
    one = ctx.const(f"{node.name}/_dflow_one", np.array(1, dt.np_dtype), node)
    div = ctx.node(f"{node.name}/_dflow_div", "RealDiv", [x, safe.name + ":0"], {}, node.device)
    out = ctx.node(node.name, "SelectV2", [is_zero.name + ":0", zero.name + ":0", div.name + ":0"], {}, node.device)
    return [zero, one, is_zero, safe, div, out]


op("DivNoNan", read=_read_div_no_nan, write=False)

# ---- activations dflow builds from other ops ------------------------------------------------------


def _chain(node, ctx, build):
    """Expands `node` with build(x, k, emit) where k(value) is a constant of the node's dtype and
    emit(op, inputs, attrs) adds a helper node; the last node emitted takes the TF node's name."""
    out = []
    dt = ctx.attr(node, "T", as_dtype("float32"))

    def k(value):
        c = ctx.const(f"{node.name}/_dflow_c{len(out)}", np.asarray(value, dt.np_dtype), node)
        out.append(c)
        return c.name + ":0"

    def emit(op_type, inputs, attrs=None):
        n = ctx.node(f"{node.name}/_dflow_{op_type.lower()}{len(out)}", op_type, inputs, attrs or {}, node.device)
        out.append(n)
        return n.name + ":0"

    build(ctx.inputs(node)[0], k, emit)
    out[-1].name = node.name
    return out


def _softplus(x, k, emit):  # relu(x) + log1p(exp(-|x|)), no overflow
    emit("Add", [emit("Relu", [x]), emit("Log1p", [emit("Exp", [emit("Neg", [emit("Abs", [x])])])])])


def _elu(x, k, emit, alpha=1.0, scale=1.0):
    neg = emit("Expm1", [emit("Minimum", [x, k(0)])])
    if alpha != 1.0:
        neg = emit("Mul", [neg, k(alpha)])
    y_parts = (x, neg)
    if scale != 1.0:
        y_parts = (emit("Mul", [x, k(scale)]), emit("Mul", [neg, k(scale)]))
    emit("SelectV2", [emit("Greater", [x, k(0)]), *y_parts])


def _softmax(x, k, emit, log=False):
    axis = k(-1)
    shifted = emit("Sub", [x, emit("StopGradient", [emit("Max", [x, axis], {"keep_dims": True})])])
    e = emit("Exp", [shifted])
    total = emit("Sum", [e, axis], {"keep_dims": True})
    if log:
        emit("Sub", [shifted, emit("Log", [total])])
    else:
        emit("RealDiv", [e, total])


def _int_axis_const(ctx, node):
    return ctx.const(f"{node.name}/_dflow_axis", np.array(-1, np.int32), node)


def _read_softmax(node, ctx, log=False):
    out = []
    dt = ctx.attr(node, "T", as_dtype("float32"))
    axis = _int_axis_const(ctx, node)
    out.append(axis)

    def k(value):
        if value == -1:
            return axis.name + ":0"
        c = ctx.const(f"{node.name}/_dflow_c{len(out)}", np.asarray(value, dt.np_dtype), node)
        out.append(c)
        return c.name + ":0"

    def emit(op_type, inputs, attrs=None):
        n = ctx.node(f"{node.name}/_dflow_{op_type.lower()}{len(out)}", op_type, inputs, attrs or {}, node.device)
        out.append(n)
        return n.name + ":0"

    _softmax(ctx.inputs(node)[0], k, emit, log)
    out[-1].name = node.name
    return out


op("Relu6", read=lambda n, c: _chain(n, c, lambda x, k, e: e("Minimum", [e("Relu", [x]), k(6)])), write=False)
op("Elu", read=lambda n, c: _chain(n, c, _elu), write=False)
op("Selu", read=lambda n, c: _chain(n, c, lambda x, k, e: _elu(x, k, e, 1.6732632423543772, 1.0507009873554805)),
   write=False)
op("Softplus", read=lambda n, c: _chain(n, c, _softplus), write=False)
op("Softsign", read=lambda n, c: _chain(n, c, lambda x, k, e: e("RealDiv", [x, e("Add", [k(1), e("Abs", [x])])])),
   write=False)
op("LeakyRelu", read=lambda n, c: _chain(n, c, lambda x, k, e: e("Maximum", [x, e("Mul", [
    x, k(c.attr(n, "alpha", 0.2))])])), write=False)
op("Softmax", read=_read_softmax, write=False)
op("LogSoftmax", read=lambda n, c: _read_softmax(n, c, log=True), write=False)


def _read_fused_batch_norm(node, ctx):
    """y = (x - mean) * scale / sqrt(var + eps) + offset, channels last or first.

    Inference form (is_training=false): mean and var are the given moving statistics, returned as
    outputs 1 and 2. Training form (what `tf.layers.batch_normalization(training=...)` writes on
    4-d input): the batch's moments over every axis but the channels; output 1 is the batch mean,
    output 2 the batch variance with Bessel's correction (n / (n - 1)) that TF's moving average
    takes, blended with the given running values when `exponential_avg_factor` is not 1 (V3);
    outputs 3 and 4 (TF's reserve spaces, read only by its own gradient) are the mean and the
    biased variance used to normalize."""
    training = ctx.attr(node, "is_training", True)
    x, scale, offset, mean, var = ctx.inputs(node)[:5]
    eps = ctx.attr(node, "epsilon", 1e-4)
    dt = ctx.attr(node, "U", None) or ctx.attr(node, "T", as_dtype("float32"))
    channels_first = ctx.attr(node, "data_format", "NHWC") in ("NCHW", "NCDHW")
    out = []

    def emit(op_type, inputs, attrs=None):
        n = ctx.node(f"{node.name}/_dflow_{op_type.lower()}{len(out)}", op_type, inputs, attrs or {}, node.device)
        out.append(n)
        return n.name + ":0"

    def const(suffix, value):
        c = ctx.const(f"{node.name}/_dflow_{suffix}", value, node)
        out.append(c)
        return c.name + ":0"

    eps_c = const("eps", np.asarray(eps, dt.np_dtype))
    if training:
        axes = const("axes", np.array([0, 2, 3] if channels_first else [0, 1, 2], np.int32))
        batch_mean = emit("Mean", [x, axes], {"keep_dims": True})
        biased = emit("Mean", [emit("SquaredDifference", [x, batch_mean]), axes], {"keep_dims": True})
        normalized = emit("Mul", [emit("Sub", [x, batch_mean]), emit("Rsqrt", [emit("Add", [biased, eps_c])])])
        if channels_first:
            shp = const("shape", np.array([1, -1, 1, 1], np.int32))
            scale, offset = emit("Reshape", [scale, shp]), emit("Reshape", [offset, shp])
        emit("Add", [emit("Mul", [normalized, scale]), offset])
        y = out[-1]
        flat = const("flat", np.array([-1], np.int32))
        mean1, biased1 = emit("Reshape", [batch_mean, flat]), emit("Reshape", [biased, flat])
        count = emit("Cast", [emit("Size", [x], {"out_type": as_dtype("int32")})], {"DstT": dt})
        channels = emit("Cast", [emit("Size", [mean1], {"out_type": as_dtype("int32")})], {"DstT": dt})
        n = emit("RealDiv", [count, channels])
        one = const("one", np.asarray(1, dt.np_dtype))
        unbiased = emit("Mul", [biased1, emit("RealDiv", [n, emit("Maximum", [emit("Sub", [n, one]), one])])])
        factor = float(ctx.attr(node, "exponential_avg_factor", 1.0))
        if factor != 1.0:
            f = const("factor", np.asarray(factor, dt.np_dtype))
            keep = const("keep", np.asarray(1.0 - factor, dt.np_dtype))
            mean1 = emit("Add", [emit("Mul", [mean, keep]), emit("Mul", [mean1, f])])
            unbiased = emit("Add", [emit("Mul", [var, keep]), emit("Mul", [unbiased, f])])
        out.remove(y)
        out.append(y)
        y.name = node.name
        for i, src in ((1, mean1), (2, unbiased), (3, mean1), (4, biased1)):
            ctx.alias(node.name, i, src)
        return out
    mul = emit("Mul", [emit("Rsqrt", [emit("Add", [var, eps_c])]), scale])
    shift = emit("Sub", [offset, emit("Mul", [mean, mul])])
    if channels_first:
        shp = const("shape", np.array([1, -1, 1, 1], np.int32))
        mul = emit("Reshape", [mul, shp])
        shift = emit("Reshape", [shift, shp])
    emit("Add", [emit("Mul", [x, mul]), shift])
    out[-1].name = node.name
    for i, src in ((1, mean), (2, var), (3, mean), (4, var)):
        ctx.alias(node.name, i, src)
    return out


op(("FusedBatchNormV3", "FusedBatchNormV2", "FusedBatchNorm"), read=_read_fused_batch_norm, write=False)


def _read_sparse_xent(node, ctx):
    """loss = -sum(onehot(labels) * log_softmax(logits), -1); output 1 (backprop) = softmax - onehot."""
    logits, labels = ctx.inputs(node)[:2]
    dt = ctx.attr(node, "T", as_dtype("float32"))
    n = node.name
    parts = [ctx.const(f"{n}/_dflow_axis", np.array(-1, np.int32), node),
             ctx.const(f"{n}/_dflow_begin", np.array([-1], np.int32), node),
             ctx.const(f"{n}/_dflow_end", np.array([0], np.int32), node),
             ctx.const(f"{n}/_dflow_one", np.array([1], np.int32), node),
             ctx.const(f"{n}/_dflow_on", np.array(1, dt.np_dtype), node),
             ctx.const(f"{n}/_dflow_off", np.array(0, dt.np_dtype), node)]
    axis, begin, end, one, on, off = (p.name + ":0" for p in parts)
    shape = ctx.node(f"{n}/_dflow_shape", "Shape", [logits], {"out_type": as_dtype("int32")}, node.device)
    depth = ctx.node(f"{n}/_dflow_depth", "StridedSlice", [shape.name + ":0", begin, end, one],
                     {"begin_mask": 0, "end_mask": 1, "ellipsis_mask": 0, "new_axis_mask": 0,
                      "shrink_axis_mask": 1}, node.device)
    hot = ctx.node(f"{n}/_dflow_onehot", "OneHot", [labels, depth.name + ":0", on, off], {"axis": -1}, node.device)
    tf_like = node_def_pb2.NodeDef(name=f"{n}/_dflow_lsm", op="LogSoftmax", input=[logits], device=node.device)
    tf_like.attr["T"].CopyFrom(attr_to_tf(dt))
    soft = _read_softmax(tf_like, ctx, log=True)
    lsm = soft[-1].name + ":0"
    prod = ctx.node(f"{n}/_dflow_prod", "Mul", [hot.name + ":0", lsm], {}, node.device)
    total = ctx.node(f"{n}/_dflow_sum", "Sum", [prod.name + ":0", axis], {"keep_dims": False}, node.device)
    loss = ctx.node(n, "Neg", [total.name + ":0"], {}, node.device)
    probs = ctx.node(f"{n}/_dflow_probs", "Exp", [lsm], {}, node.device)
    grad = ctx.node(f"{n}/_dflow_backprop", "Sub", [probs.name + ":0", hot.name + ":0"], {}, node.device)
    ctx.alias(n, 1, grad.name + ":0")
    return parts + [shape, depth, hot] + soft + [prod, total, loss, probs, grad]


op("SparseSoftmaxCrossEntropyWithLogits", read=_read_sparse_xent, write=False)

# ---- the lookup tables ----------------------------------------------------------------------------

READ: dict = {}
WRITE: dict = {}
for _spec in TABLE:
    for _i, _name in enumerate(_spec.tf):
        if _spec.read is not False:  # False: a dflow-only op, written as TF's ops, never read
            READ.setdefault(_name, _spec.read or _plain_read(_spec))
    if _spec.write is not False and _spec.dflow not in WRITE:
        WRITE[_spec.dflow] = _spec.write or _plain_write(_spec)


def supported_tf_ops():
    """The TF op types dflow reads, sorted."""
    return sorted(READ)
