"""TF1's top-k metrics of `tf.metrics` (re-exported by dflow/metrics.py): precision_at_k,
recall_at_k, precision_at_top_k, recall_at_top_k, average_precision_at_k and the deprecated
sparse_* spellings, as streaming `(value, update_op)` pairs.

Built as TF1 builds them, from set operations (kernels/set_ops.py): per row, the true positives
are |top-k ids ∩ labels|, the false positives |top-k ids - labels|, the false negatives
|labels - top-k ids|; `class_id` first keeps only that id on both sides. Labels are int64 ids,
dense ([..., num_labels], or without the last dim) or a SparseTensor; a dense label outside
[0, num_classes) (e.g. -1 padding) is never a hit, so it counts as a false negative, as in TF1.
Totals are float64 local variables named as TF1 names them (`precision_at_2/true_positive_at_2`,
`average_precision_at_3/max_1`, `.../total`). precision and recall divide plainly (0/0 = nan
before any update, as TF1); average precision divides with div_no_nan. Weights multiply each
row's counts (a scalar or one per row).
"""

from __future__ import annotations

import numpy as np

from .graph import dtypes
from .graph.graph import add_to_collections, name_scope
from .graph.keys import GraphKeys
from .kernels.array_ops import shape, size
from .kernels.common import convert_to_tensor
from .kernels.creation_ops import fill, ones_like, zeros, zeros_like
from .kernels.gather_ops import top_k
from .kernels.manip_ops import concat, expand_dims
from .kernels.math_ops import (
    add,
    cast,
    divide,
    divide_no_nan,
    equal,
    greater_equal,
    minimum,
    multiply,
    where,
)
from .kernels.pad_ops import tile
from .kernels.reduction_ops import cumsum, reduce_sum
from .kernels.set_ops import set_operation, set_size
from .kernels.sparse_manip_ops import sparse_concat, sparse_reshape, sparse_retain
from .kernels.sparse_ops import SparseTensor, SparseTensorValue
from .kernels.state_ops import assign_add
from .state.scope import variable_scope
from .state.variables import Variable

__all__ = ["average_precision_at_k", "sparse_average_precision_at_k", "precision_at_k", "sparse_precision_at_k",
           "precision_at_top_k", "recall_at_k", "recall_at_top_k"]


_ONE64 = np.ones(1, np.int64)


def _variable(name):
    """A float64 scalar zero in LOCAL_VARIABLES and METRIC_VARIABLES (metrics.metric_variable's)."""
    return Variable(lambda: zeros([], dtypes.float64), trainable=False,
                    collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES], name=name)


def _publish(value, update_op, metrics_collections, updates_collections):
    if metrics_collections:
        add_to_collections(metrics_collections, value)
    if updates_collections:
        add_to_collections(updates_collections, update_op)
    return value, update_op


def _at_k_name(name, k=None, class_id=None):
    name = f"{name}_at_{int(k)}" if k is not None else f"{name}_at_k"
    return name if class_id is None else f"{name}_class{int(class_id)}"


def _ids(x, what):
    """A SparseTensor as is, a dense id tensor cast to int64."""
    if isinstance(x, SparseTensorValue):
        return SparseTensor.from_value(x)
    if isinstance(x, SparseTensor):
        return x
    t = convert_to_tensor(x, name=what)
    if not t.dtype.is_integer:
        raise TypeError(f"{what}: expected integer class ids, got {t.dtype.name}")
    return t if t.dtype == dtypes.int64 else cast(t, dtypes.int64)


def _maybe_expand_labels(labels, predictions):
    """Labels of predictions' rank: a last dim of 1 added where labels lack it (TF1's rule)."""
    pr = predictions.shape.ndims
    if isinstance(labels, SparseTensor):
        lr = labels.dense_shape.shape[0].value
        if pr is not None and lr is not None and pr == lr - 1:
            return sparse_reshape(labels, concat([labels.dense_shape, _ONE64], 0))
        return labels
    lr = labels.shape.ndims
    if lr is None or pr is None or pr == lr:
        return labels
    if pr == lr + 1:
        return expand_dims(labels, -1)
    raise ValueError(f"Unexpected labels shape {labels.shape} for predictions shape {predictions.shape}.")


def _select_class_id(ids, selected_id):
    """The SparseTensor of `ids` keeping only `selected_id` (TF1's _select_class_id)."""
    if isinstance(ids, SparseTensor):
        return sparse_retain(ids, equal(ids.values, selected_id))
    ids_shape = shape(ids, out_type=dtypes.int64)
    filled = fill(concat([ids_shape[:-1], _ONE64], 0), cast(selected_id, dtypes.int64))
    result = set_operation(filled, ids, "intersection")
    return SparseTensor(result.indices, result.values, ids_shape)


def _check_weights(weights, values, dtype=dtypes.float64):
    """`weights` cast to float64; ValueError (TF1's assert_broadcastable) unless a scalar or of
    values' rank with dims 1 or equal."""
    weights = cast(convert_to_tensor(weights), dtype)
    ws, vs = weights.shape, values.shape
    if ws.ndims not in (None, 0) and vs.ndims is not None:
        bad = ws.ndims != vs.ndims or any(w is not None and v is not None and w not in (1, v)
                                          for w, v in zip(ws.as_list(), vs.as_list()))
        if bad:
            raise ValueError(f"weights can not be broadcast to values. values.shape={vs}, weights.shape={ws}.")
    return weights


def _count_at_k(kind, labels, predictions_idx, class_id=None, weights=None):
    """float64 per-row count: "tp" |pred ∩ labels|, "fp" |pred - labels|, "fn" |labels - pred|."""
    if class_id is not None:
        labels, predictions_idx = _select_class_id(labels, class_id), _select_class_id(predictions_idx, class_id)
    op = {"tp": "intersection", "fp": "a-b", "fn": "b-a"}[kind]
    if isinstance(labels, SparseTensor) and not isinstance(predictions_idx, SparseTensor):
        # TF's set ops want the sparse operand second: swap and mirror the difference
        op = {"intersection": "intersection", "a-b": "b-a", "b-a": "a-b"}[op]
        counts = set_size(set_operation(labels, predictions_idx, op))
    else:
        counts = set_size(set_operation(predictions_idx, labels, op))
    counts = cast(counts, dtypes.float64)
    if weights is not None:
        counts = multiply(counts, _check_weights(weights, counts))
    return counts


def _streaming_count(kind, labels, predictions_idx, k, class_id, weights):
    prefix = {"tp": "true_positive", "fp": "false_positive", "fn": "false_negative"}[kind]
    var = _variable(_at_k_name(prefix, k, class_id))
    with name_scope(None, _at_k_name(prefix, k, class_id)):
        batch = reduce_sum(_count_at_k(kind, labels, predictions_idx, class_id, weights))
        return var, assign_add(var, batch, name="update")


def _ratio_at_top_k(what, labels, predictions_idx, k, class_id, weights, metrics_collections,
                    updates_collections, name):
    """precision or recall over `predictions_idx`, or over top_k(predictions, k) when given a
    ("top_k", predictions) pair (made inside the metric's scope, as TF1 does)."""
    other = "fp" if what == "precision" else "fn"
    with variable_scope(name, _at_k_name(what, k, class_id), (labels, weights)) as vs:
        scope = vs.original_name_scope
        if isinstance(predictions_idx, tuple):
            predictions_idx = top_k(convert_to_tensor(predictions_idx[1]), k)[1]
        predictions_idx = convert_to_tensor(predictions_idx)
        labels = _maybe_expand_labels(_ids(labels, "labels"), predictions_idx)
        top_k_idx = cast(predictions_idx, dtypes.int64)
        tp, tp_update = _streaming_count("tp", labels, top_k_idx, k, class_id, weights)
        n, n_update = _streaming_count(other, labels, top_k_idx, k, class_id, weights)
        update = divide(tp_update, add(tp_update, n_update), name="update")
        value = divide(tp, add(tp, n), name=scope)
        return _publish(value, update, metrics_collections, updates_collections)


def precision_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    """Precision of given top-k class ids `predictions_idx` [..., k] against `labels` over the stream."""
    return _ratio_at_top_k("precision", labels, predictions_idx, k, class_id, weights, metrics_collections,
                           updates_collections, name)


def recall_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None, metrics_collections=None,
                    updates_collections=None, name=None):
    """Recall of given top-k class ids `predictions_idx` [..., k] against `labels` over the stream."""
    return _ratio_at_top_k("recall", labels, predictions_idx, k, class_id, weights, metrics_collections,
                           updates_collections, name)


def _at_k(what, labels, predictions, k, class_id, weights, metrics_collections, updates_collections, name):
    return _ratio_at_top_k(what, labels, ("top_k", predictions), k, class_id, weights, metrics_collections,
                           updates_collections, name)


def precision_at_k(labels, predictions, k, class_id=None, weights=None, metrics_collections=None,
                   updates_collections=None, name=None):
    """Precision@k: how often the k highest `predictions` [..., num_classes] are among `labels`."""
    return _at_k("precision", labels, predictions, k, class_id, weights, metrics_collections,
                 updates_collections, name)


def recall_at_k(labels, predictions, k, class_id=None, weights=None, metrics_collections=None,
                updates_collections=None, name=None):
    """Recall@k: how often `labels` are among the k highest `predictions` [..., num_classes]."""
    return _at_k("recall", labels, predictions, k, class_id, weights, metrics_collections,
                 updates_collections, name)


def _expand_and_tile(labels, k):
    """Labels [..., L] as [..., k, L]: each row repeated k times (TF1's _expand_and_tile, dim=-1)."""
    if isinstance(labels, SparseTensor):
        ds = labels.dense_shape
        expanded = sparse_reshape(labels, concat([ds[:-1], _ONE64, ds[-1:]], 0))
        return expanded if k == 1 else sparse_concat(-2, [expanded] * k)
    expanded = expand_dims(labels, -2)
    if k == 1:
        return expanded
    ones = ones_like(shape(labels))
    return tile(expanded, concat([ones[:-1], [k], ones[-1:]], 0))


def _num_relevant(labels, k):
    """min(number of labels, k) per row: a SparseTensor's set size, a dense tensor's ids >= 0."""
    if isinstance(labels, SparseTensor):
        return minimum(set_size(labels), k)
    num = reduce_sum(where(greater_equal(labels, 0), ones_like(labels), zeros_like(labels)), axis=-1)
    return minimum(num, k)


def _average_precision_per_row(labels, predictions_idx):
    predictions_idx = cast(predictions_idx, dtypes.int64)
    if predictions_idx.shape.ndims == 0:
        raise ValueError("The rank of predictions_idx must be at least 1.")
    k = predictions_idx.shape.as_list()[-1]
    if k is None:
        raise ValueError("The last dimension of predictions_idx must be set.")
    labels = _maybe_expand_labels(labels, predictions_idx)
    relevant = _count_at_k("tp", _expand_and_tile(labels, k), expand_dims(predictions_idx, -1))
    tp_per_k = cumsum(relevant, axis=-1)
    retrieved_per_k = cumsum(ones_like(relevant), axis=-1)
    precision_sum = reduce_sum(multiply(divide(tp_per_k, retrieved_per_k), relevant), axis=-1)
    return divide(precision_sum, cast(_num_relevant(labels, k), dtypes.float64))


def average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None,
                           updates_collections=None, name=None):
    """Mean average precision@k over the stream: per row, the mean over its relevant items
    (min(#labels, k)) of precision at each hit's rank; a row without labels is nan (TF1)."""
    if k < 1:
        raise ValueError(f"Invalid k={k}.")
    with variable_scope(name, _at_k_name("average_precision", k), (predictions, labels, weights)) as vs:
        scope = vs.original_name_scope
        _, predictions_idx = top_k(convert_to_tensor(predictions), k)
        ap = _average_precision_per_row(_ids(labels, "labels"), predictions_idx)
        if weights is not None:
            weights = multiply(_check_weights(weights, ap), ones_like(ap))
            ap = multiply(ap, weights)
        # TF1 names the max variable max_1 (its name scope `max` is taken when the variable is made)
        max_var = _variable("max_1")
        with name_scope(None, "max"):
            batch_max = cast(size(ap), dtypes.float64) if weights is None else reduce_sum(weights)
            max_update = assign_add(max_var, batch_max, name="update")
        total_var = _variable("total")
        with name_scope(None, "total"):
            total_update = assign_add(total_var, reduce_sum(ap), name="update")
        value = divide_no_nan(total_var, max_var, name="mean")
        update = divide_no_nan(total_update, max_update, name=scope)
        return _publish(value, update, metrics_collections, updates_collections)


sparse_average_precision_at_k = average_precision_at_k
sparse_precision_at_k = precision_at_k
