"""TF1's `tf.feature_column`: `numeric_column`, the categorical columns (
vocabulary list/file, hash bucket, identity, bucketized, crossed, weighted) and their dense forms
(`indicator_column`, `embedding_column`, `shared_embedding_columns`), `input_layer` (the dense columns as one float [batch, n]
matrix) and `linear_model` (a linear function of the columns, with TF1's variable names
`linear_model/<name>/weights` and `linear_model/bias_weights`).

Columns are taken in the order of their names, as TF1 does, so the layout of `input_layer` and
the variables of `linear_model` do not depend on the order the caller lists them in.
"""

from __future__ import annotations

import collections
import math as _math

import numpy as np

from .errors import NotFoundError
from .graph.dtypes import as_dtype, float32, int64, string
from .graph.graph import add_to_collection, get_collection
from .graph.keys import GraphKeys
from .io.checkpoint import init_from_checkpoint
from .kernels.array_ops import identity, reshape, shape
from .kernels.common import constant, convert_to_tensor
from .kernels.creation_ops import fill, ones_like, zeros_like
from .kernels.gather_ops import gather, one_hot
from .kernels.linalg_ops import matmul
from .kernels.lookup_ops import cross_hashed, string_to_hash_bucket_fast
from .kernels.manip_ops import add_n, concat, expand_dims
from .kernels.math_ops import (
    cast,
    greater,
    greater_equal,
    less,
    logical_and,
    logical_or,
    not_equal,
    sqrt,
    where,
)
from .kernels.parsing_ops import FixedLenFeature, VarLenFeature
from .kernels.reduction_ops import reduce_sum
from .kernels.sparse_ops import SparseTensor, SparseTensorValue, sparse_tensor_to_dense
from .kernels.string_ops import as_string
from .lookup import index_table_from_file, index_table_from_tensor
from .nn.core import bias_add
from .state.initializers import truncated_normal_initializer, zeros_initializer
from .state.scope import get_variable, get_variable_scope, variable_scope
from .tf1_names import missing_attribute

__all__ = ["numeric_column", "input_layer", "linear_model", "make_parse_example_spec",
           "categorical_column_with_vocabulary_list", "categorical_column_with_vocabulary_file",
           "categorical_column_with_hash_bucket", "categorical_column_with_identity", "bucketized_column",
           "crossed_column", "weighted_categorical_column", "indicator_column", "embedding_column",
           "shared_embedding_columns"]


class NumericColumn(collections.namedtuple("NumericColumn",
                                           ["key", "shape", "default_value", "dtype", "normalizer_fn"])):
    """A dense float feature `features[key]` of per-example shape `shape`."""

    @property
    def name(self):
        return self.key

    @property
    def num_elements(self):
        return int(_math.prod(self.shape))

    @property
    def parse_example_spec(self):
        return {self.key: FixedLenFeature(self.shape, self.dtype, self.default_value)}

    def dense_tensor(self, features):
        """features[key] as float32 [batch, num_elements], after `normalizer_fn`."""
        if self.key not in features:
            raise ValueError(f"The feature '{self.key}' of numeric_column is not in features "
                             f"(keys: {sorted(map(str, features))}).")
        value = convert_to_tensor(features[self.key])
        if value.dtype != float32:
            if not (value.dtype.is_floating or value.dtype.is_integer):
                raise ValueError(f"numeric_column {self.key!r}: the feature must be numeric, got {value.dtype.name}")
            value = cast(value, float32)
        if self.normalizer_fn is not None:
            value = self.normalizer_fn(value)
        return reshape(value, [-1, self.num_elements])


def numeric_column(key, shape=(1,), default_value=None, dtype=float32, normalizer_fn=None):
    """A NumericColumn; ValueError for a bad key, shape, dtype or default, TypeError for a
    normalizer_fn that is not callable (TF1's checks)."""
    if not isinstance(key, str) or not key:
        raise ValueError(f"key must be a string. Got: type {type(key)}. Given key: {key}.")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    for d in shape:
        if not isinstance(d, int) or d < 1:
            raise ValueError(f"shape dimensions must be greater than 0. shape: {shape}, key: {key}")
    dtype = as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype.name}, key: {key}")
    if default_value is not None:
        arr = np.asarray(default_value, dtype=dtype.as_numpy_dtype)
        if arr.ndim == 0:
            arr = np.full(shape, arr)
        if arr.shape != shape:
            raise ValueError(f"The shape of default_value must be equal to given shape. default_value: "
                             f"{default_value}, shape: {shape}, key: {key}")
        default_value = tuple(arr.ravel().tolist()) if len(shape) == 1 else arr.tolist()
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    return NumericColumn(key, shape, default_value, dtype, normalizer_fn)


# ---- categorical columns ----------------------------------------------------------------------------
# A categorical column gives, per example, k ids in [0, num_buckets) (`_ids`: int64 [batch, k], a
# float mask [batch, k] of the ids present, 1.0 or the weight). Its feature may be [batch] or
# [batch, k] dense (TF1 treats "" and -1 as missing, as when it turns dense input sparse) or a
# SparseTensor (made dense with those fillers).


def _raw(features, key, what):
    if key not in features:
        raise ValueError(f"The feature '{key}' of {what} is not in features (keys: {sorted(map(str, features))}).")
    value = features[key]
    if isinstance(value, (SparseTensor, SparseTensorValue)):
        value = sparse_tensor_to_dense(value, default_value="" if _as_t(value.values).dtype == string else -1)
    value = convert_to_tensor(value)
    if value.shape.ndims == 1:
        value = expand_dims(value, 1)
    elif value.shape.ndims not in (None, 2):
        raise ValueError(f"{what} {key!r}: the feature must be [batch] or [batch, k], got shape {value.shape}")
    return value


def _as_t(x):
    return convert_to_tensor(x)


def _present(value):
    """1.0 where a dense categorical input holds a value ("" and -1 are missing), else 0.0."""
    return cast(not_equal(value, "" if value.dtype == string else constant(-1, value.dtype)), float32)


class _Categorical:
    """Shared behaviour: `_ids(features)` -> (ids int64 [batch, k], mask float32 [batch, k])."""

    def _ids(self, features):
        value = _raw(features, self.key, type(self).__name__)
        ids = self._transform(value)
        mask = _present(value) * cast(greater_equal(ids, 0), float32)
        return ids, mask

    @property
    def parse_example_spec(self):
        return {self.key: VarLenFeature(self.dtype)}


def _check_key(key):
    if not isinstance(key, str) or not key:
        raise ValueError(f"key must be a string. Got: type {type(key)}. Given key: {key}.")


def _string_or_int(dtype, key):
    dtype = as_dtype(dtype)
    if dtype != string and not dtype.is_integer:
        raise ValueError(f"dtype {dtype!r} of column {key!r} must be string or integer.")
    return dtype


class VocabularyListCategoricalColumn(_Categorical, collections.namedtuple(
        "VocabularyListCategoricalColumn", ["key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets"])):
    name = property(lambda self: self.key)
    num_buckets = property(lambda self: len(self.vocabulary_list) + self.num_oov_buckets)

    def _transform(self, value):
        table = index_table_from_tensor(list(self.vocabulary_list), num_oov_buckets=self.num_oov_buckets,
                                        default_value=self.default_value, dtype=self.dtype,
                                        name=f"{self.key}_lookup")
        return table.lookup(value if value.dtype == string else cast(value, int64))


class VocabularyFileCategoricalColumn(_Categorical, collections.namedtuple(
        "VocabularyFileCategoricalColumn", ["key", "vocabulary_file", "vocabulary_size", "num_oov_buckets",
                                            "default_value", "dtype"])):
    name = property(lambda self: self.key)
    num_buckets = property(lambda self: self.vocabulary_size + self.num_oov_buckets)

    def _transform(self, value):
        table = index_table_from_file(self.vocabulary_file, num_oov_buckets=self.num_oov_buckets,
                                      vocab_size=self.vocabulary_size, default_value=self.default_value,
                                      key_dtype=self.dtype, name=f"{self.key}_lookup")
        return table.lookup(value if value.dtype == string else cast(value, int64))


class HashedCategoricalColumn(_Categorical, collections.namedtuple("HashedCategoricalColumn",
                                                                   ["key", "hash_bucket_size", "dtype"])):
    name = property(lambda self: self.key)
    num_buckets = property(lambda self: self.hash_bucket_size)

    def _transform(self, value):
        if value.dtype != string:
            value = as_string(value)
        return string_to_hash_bucket_fast(value, self.hash_bucket_size, name="lookup")


class IdentityCategoricalColumn(_Categorical, collections.namedtuple("IdentityCategoricalColumn",
                                                                     ["key", "number_buckets", "default_value"])):
    name = property(lambda self: self.key)
    num_buckets = property(lambda self: self.number_buckets)
    dtype = int64

    def _transform(self, value):
        if not value.dtype.is_integer:
            raise ValueError(f"Invalid input, not integer. key: {self.key} dtype: {value.dtype}")
        ids = cast(value, int64)
        if self.default_value is None:
            return ids
        bad = logical_or(less(ids, 0), greater_equal(ids, self.number_buckets))
        return where(logical_and(bad, not_equal(ids, -1)), fill(shape(ids), constant(self.default_value, int64)),
                     ids)


class BucketizedColumn(collections.namedtuple("BucketizedColumn", ["source_column", "boundaries"])):
    """A numeric column cut at `boundaries`: categorical (one id per element, the element's bucket
    plus i·(len(boundaries)+1)) and dense (their one-hot rows, concatenated)."""

    key = property(lambda self: self.source_column.key)
    name = property(lambda self: f"{self.source_column.name}_bucketized")
    num_elements = property(lambda self: self.source_column.num_elements * (len(self.boundaries) + 1))
    num_buckets = num_elements
    parse_example_spec = property(lambda self: self.source_column.parse_example_spec)

    def _bucket(self, features):
        x = self.source_column.dense_tensor(features)  # [batch, n]
        b = constant(np.asarray(self.boundaries, dtype=np.float32))
        return cast(reduce_sum(cast(greater_equal(expand_dims(x, 2), b), int64), axis=2), int64)

    def _ids(self, features):
        ids = self._bucket(features)
        n, per = self.source_column.num_elements, len(self.boundaries) + 1
        ids = ids + constant(np.arange(n, dtype=np.int64) * per)
        return ids, ones_like(cast(ids, float32))

    def dense_tensor(self, features):
        ids = self._bucket(features)
        onehot = one_hot(ids, len(self.boundaries) + 1, dtype=float32)  # [batch, n, buckets]
        return reshape(onehot, [-1, self.num_elements])


class CrossedColumn(collections.namedtuple("CrossedColumn", ["keys", "hash_bucket_size", "hash_key"])):
    """The crossing of string/integer features and bucketized columns, hashed into
    `hash_bucket_size` buckets as TF1's `sparse_cross_hashed` (one value per example per key)."""

    name = property(lambda self: "_X_".join(sorted(k if isinstance(k, str) else k.name for k in self.keys)))
    num_buckets = property(lambda self: self.hash_bucket_size)

    @property
    def parse_example_spec(self):
        spec = {}
        for k in self.keys:
            spec.update({k: VarLenFeature(string)} if isinstance(k, str) else k.parse_example_spec)
        return spec

    def _ids(self, features):
        # TF1's SparseCross takes its sparse inputs (columns' ids, SparseTensor features) before
        # its dense ones (dense features), each in the order given: the hash depends on it
        sparse, dense = [], []
        for k in self.keys:
            if isinstance(k, str):
                is_sparse = isinstance(features.get(k), (SparseTensor, SparseTensorValue))
                (sparse if is_sparse else dense).append(_raw(features, k, "crossed_column"))
            else:
                sparse.append(k._ids(features)[0])
        parts = sparse + dense
        for p in parts:
            if p.shape.ndims == 2 and p.shape.as_list()[1] not in (None, 1):
                raise ValueError(f"crossed_column {self.name}: dflow crosses one value per example per key, got "
                                 f"shape {p.shape}")
        ids = cross_hashed(parts, num_buckets=self.hash_bucket_size, hash_key=self.hash_key)
        return ids, ones_like(cast(ids, float32))


class WeightedCategoricalColumn(collections.namedtuple("WeightedCategoricalColumn",
                                                       ["categorical_column", "weight_feature_key", "dtype"])):
    key = property(lambda self: self.categorical_column.key)
    name = property(lambda self: f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}")
    num_buckets = property(lambda self: self.categorical_column.num_buckets)

    @property
    def parse_example_spec(self):
        spec = dict(self.categorical_column.parse_example_spec)
        spec[self.weight_feature_key] = VarLenFeature(self.dtype)
        return spec

    def _ids(self, features):
        ids, mask = self.categorical_column._ids(features)
        w = _raw(features, self.weight_feature_key, "weighted_categorical_column")
        return ids, mask * cast(w, float32)


_CATEGORICAL = (_Categorical, BucketizedColumn, CrossedColumn, WeightedCategoricalColumn)


def _combine(params, ids, mask, combiner):
    """Σ_k mask·params[ids] per example, divided by Σ mask (mean) or √Σ mask² (sqrtn); 0 for an
    example with no ids (TF1's safe_embedding_lookup_sparse)."""
    safe = where(greater(mask, 0.0), ids, zeros_like(ids))
    rows = gather(params, safe)  # [batch, k, d]
    total = reduce_sum(rows * expand_dims(mask, 2), axis=1)
    if combiner == "sum":
        return total
    den = reduce_sum(mask, axis=1, keepdims=True) if combiner == "mean" else \
        sqrt(reduce_sum(mask * mask, axis=1, keepdims=True))
    return total / where(greater(den, 0.0), den, ones_like(den))


class IndicatorColumn(collections.namedtuple("IndicatorColumn", ["categorical_column"])):
    """The multi-hot [batch, num_buckets] of a categorical column (counts, or summed weights)."""

    key = property(lambda self: self.categorical_column.key)
    name = property(lambda self: f"{self.categorical_column.name}_indicator")
    num_elements = property(lambda self: self.categorical_column.num_buckets)
    parse_example_spec = property(lambda self: self.categorical_column.parse_example_spec)

    def dense_tensor(self, features):
        ids, mask = self.categorical_column._ids(features)
        hot = one_hot(where(greater(mask, 0.0), ids, -ones_like(ids)), self.num_elements, dtype=float32)
        return reduce_sum(hot * expand_dims(mask, 2), axis=1)


class EmbeddingColumn(collections.namedtuple("EmbeddingColumn", [
        "categorical_column", "dimension", "combiner", "initializer", "ckpt_to_load_from", "tensor_name_in_ckpt",
        "max_norm", "trainable"])):
    """A categorical column's ids looked up in `embedding_weights` [num_buckets, dimension] and
    combined per example (mean, sum or sqrtn)."""

    key = property(lambda self: self.categorical_column.key)
    name = property(lambda self: f"{self.categorical_column.name}_embedding")
    num_elements = property(lambda self: self.dimension)
    parse_example_spec = property(lambda self: self.categorical_column.parse_example_spec)

    def dense_tensor(self, features, trainable=True, collections_=None):
        w = get_variable("embedding_weights", shape=[self.categorical_column.num_buckets, self.dimension],
                         dtype=float32, initializer=self.initializer, trainable=self.trainable and trainable,
                         collections=collections_)
        if self.ckpt_to_load_from is not None:
            init_from_checkpoint(self.ckpt_to_load_from, {self.tensor_name_in_ckpt: w})
        ids, mask = self.categorical_column._ids(features)
        return _combine(w, ids, mask, self.combiner)


class SharedEmbeddingColumn(collections.namedtuple("SharedEmbeddingColumn", [
        "categorical_column", "dimension", "combiner", "initializer", "shared_embedding_collection_name",
        "ckpt_to_load_from", "tensor_name_in_ckpt", "max_norm", "trainable"])):
    """An embedding whose `embedding_weights` several categorical columns share: made by the first
    of them `input_layer` reaches (under the scope `shared_embedding_collection_name`), kept in the
    graph collection of that name, and reused by the others."""

    key = property(lambda self: self.categorical_column.key)
    name = property(lambda self: f"{self.categorical_column.name}_shared_embedding")
    _var_scope_name = property(lambda self: self.shared_embedding_collection_name)
    num_elements = property(lambda self: self.dimension)
    parse_example_spec = property(lambda self: self.categorical_column.parse_example_spec)

    def dense_tensor(self, features, trainable=True, collections_=None):
        shape = [self.categorical_column.num_buckets, self.dimension]
        shared = get_collection(self.shared_embedding_collection_name)
        if shared:
            w = shared[0]
            if w.shape.as_list() != shape:
                raise ValueError(f"Shared embedding collection {self.shared_embedding_collection_name} contains "
                                 f"variable {w.op.name} of unexpected shape {w.shape}. Expected shape is {shape}. "
                                 "Please make sure the categorical columns share the same number of buckets.")
        else:
            w = get_variable("embedding_weights", shape=shape, dtype=float32, initializer=self.initializer,
                             trainable=self.trainable and trainable, collections=collections_)
            add_to_collection(self.shared_embedding_collection_name, w)
            if self.ckpt_to_load_from is not None:
                init_from_checkpoint(self.ckpt_to_load_from, {self.tensor_name_in_ckpt: w})
        ids, mask = self.categorical_column._ids(features)
        return _combine(w, ids, mask, self.combiner)


_DENSE = (NumericColumn, BucketizedColumn, IndicatorColumn, EmbeddingColumn, SharedEmbeddingColumn)


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1, num_oov_buckets=0):
    """Ids of a string/integer feature: its position in `vocabulary_list`, else one of
    `num_oov_buckets` hash buckets after it, else `default_value` (-1: missing)."""
    _check_key(key)
    vocab = tuple(vocabulary_list if not isinstance(vocabulary_list, np.ndarray) else vocabulary_list.tolist())
    if not vocab:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, column_name: {key}")
    if len(set(vocab)) != len(vocab):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, column_name: {key}")
    is_str = isinstance(vocab[0], (str, bytes))
    vocab = tuple(v.decode() if isinstance(v, bytes) else v for v in vocab)
    dtype = _string_or_int(dtype if dtype is not None else (string if is_str else int64), key)
    if (dtype == string) != is_str:
        raise ValueError(f"dtype {dtype!r} and vocabulary_list {vocabulary_list} of column {key!r} disagree.")
    if num_oov_buckets and default_value != -1:
        raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
    if num_oov_buckets < 0:
        raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    return VocabularyListCategoricalColumn(key, vocab, dtype, default_value, int(num_oov_buckets))


def categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None, num_oov_buckets=0,
                                            default_value=None, dtype=string):
    """Ids of a feature from a vocabulary file (one entry a line); `vocabulary_size` defaults to
    the file's line count."""
    _check_key(key)
    if not vocabulary_file:
        raise ValueError(f"Missing vocabulary_file in {key}.")
    if vocabulary_size is None:
        try:
            with open(vocabulary_file, "rb") as f:
                vocabulary_size = sum(1 for _ in f)
        except OSError:
            raise NotFoundError(None, None, f"{vocabulary_file}: vocabulary file of column {key!r} not found") \
                from None
    if vocabulary_size < 1:
        raise ValueError(f"Invalid vocabulary_size in {key}.")
    if num_oov_buckets and default_value is not None:
        raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
    return VocabularyFileCategoricalColumn(key, vocabulary_file, int(vocabulary_size), int(num_oov_buckets),
                                           -1 if default_value is None else default_value, _string_or_int(dtype, key))


def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=string):
    """Ids Fingerprint64(value) % hash_bucket_size (integers hashed as their decimal strings)."""
    _check_key(key)
    if hash_bucket_size is None or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be at least 1. hash_bucket_size: {hash_bucket_size}, key: {key}")
    return HashedCategoricalColumn(key, int(hash_bucket_size), _string_or_int(dtype, key))


def categorical_column_with_identity(key, num_buckets, default_value=None):
    """An integer feature as its own id in [0, num_buckets); others become `default_value`."""
    _check_key(key)
    if num_buckets < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and not 0 <= default_value < num_buckets:
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), column_name {key}")
    return IdentityCategoricalColumn(key, int(num_buckets), default_value)


def bucketized_column(source_column, boundaries):
    """`source_column` (a numeric_column) cut at sorted `boundaries`."""
    if not isinstance(source_column, NumericColumn):
        raise ValueError(f"source_column must be a column generated with numeric_column(). Given: {source_column}")
    if len(source_column.shape) > 1:
        raise ValueError(f"source_column must be one-dimensional column. Given: {source_column}")
    b = list(boundaries or [])
    if not b or any(x >= y for x, y in zip(b, b[1:])):
        raise ValueError(f"boundaries must be a sorted list. boundaries: {boundaries}")
    return BucketizedColumn(source_column, tuple(float(x) for x in b))


def crossed_column(keys, hash_bucket_size, hash_key=None):
    """The crossing of `keys` (feature names, bucketized or other categorical columns) in
    `hash_bucket_size` buckets."""
    keys = list(keys)
    if len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    if hash_bucket_size is None or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: {hash_bucket_size}")
    for k in keys:
        if not isinstance(k, (str,) + _CATEGORICAL):
            raise ValueError(f"Unsupported key type. All keys must be either string, or categorical column except "
                             f"HashedCategoricalColumn. Given: {k}")
        if isinstance(k, HashedCategoricalColumn):
            raise ValueError("categorical_column_with_hash_bucket is not supported for crossing. Hashing before "
                             f"crossing will increase probability of collision. Instead, use the feature name as a "
                             f"string. Given: {k}")
    return CrossedColumn(tuple(keys), int(hash_bucket_size), hash_key)


def weighted_categorical_column(categorical_column, weight_feature_key, dtype=float32):
    """`categorical_column` with each id weighted by the feature `weight_feature_key`."""
    if not isinstance(categorical_column, _CATEGORICAL):
        raise ValueError(f"categorical_column must be a categorical column. Given: {categorical_column}")
    return WeightedCategoricalColumn(categorical_column, weight_feature_key, as_dtype(dtype))


def indicator_column(categorical_column):
    """The multi-hot dense form of a categorical column."""
    if not isinstance(categorical_column, _CATEGORICAL):
        raise ValueError(f"Unsupported input type. Input must be a CategoricalColumn. Given: {categorical_column}")
    return IndicatorColumn(categorical_column)


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None, ckpt_to_load_from=None,
                     tensor_name_in_ckpt=None, max_norm=None, trainable=True):
    """A dense `dimension`-wide embedding of a categorical column; `initializer` defaults to
    truncated_normal(0, 1/√dimension) as TF1's."""
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or none of them.")
    if initializer is not None and not callable(initializer):
        raise ValueError(f"initializer must be callable if specified. Embedding of column_name: "
                         f"{categorical_column.name}")
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn', 'sum', got {combiner!r}")
    if not isinstance(categorical_column, _CATEGORICAL):
        raise ValueError(f"categorical_column must be a categorical column. Given: {categorical_column}")
    if initializer is None:
        initializer = truncated_normal_initializer(mean=0.0, stddev=1 / _math.sqrt(dimension))
    return EmbeddingColumn(categorical_column, int(dimension), combiner, initializer, ckpt_to_load_from,
                           tensor_name_in_ckpt, max_norm, trainable)


def shared_embedding_columns(categorical_columns, dimension, combiner="mean", initializer=None,
                             shared_embedding_collection_name=None, ckpt_to_load_from=None, tensor_name_in_ckpt=None,
                             max_norm=None, trainable=True):
    """One embedding column per categorical column (in the order given), all looking up one
    `embedding_weights` variable, `input_layer/<a>_<b>_shared_embedding/embedding_weights` by
    default (the columns' names sorted and joined). The columns must be of one type (weighted
    ones count as their source) and have the same number of buckets."""
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or none of them.")
    if initializer is not None and not callable(initializer):
        raise ValueError("initializer must be callable if specified.")
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn', 'sum', got {combiner!r}")
    if initializer is None:
        initializer = truncated_normal_initializer(mean=0.0, stddev=1 / _math.sqrt(dimension))
    columns = list(categorical_columns)
    if not columns:
        raise ValueError("categorical_columns must not be empty.")
    for c in columns:
        if not isinstance(c, _CATEGORICAL):
            raise ValueError(f"All categorical_columns must be subclasses of _CategoricalColumn. Given: {c}, of "
                             f"type: {type(c)}")
    ordered = sorted(columns, key=lambda c: c.name)

    def source(c):
        return c.categorical_column if isinstance(c, WeightedCategoricalColumn) else c

    c0 = source(ordered[0])
    for c in ordered[1:]:
        if not isinstance(source(c), type(c0)):
            raise ValueError(f"To use shared_embedding_column, all categorical_columns must have the same type, or be "
                             f"weighted_categorical_column of the same type. Given column: {c0} of type: {type(c0)} "
                             f"does not match given column: {source(c)} of type: {type(source(c))}")
        if c.num_buckets != ordered[0].num_buckets:
            raise ValueError(f"To use shared_embedding_column, all categorical_columns must have the same number of "
                             f"buckets. Given column: {c0} with buckets: {ordered[0].num_buckets} does  not match "
                             f"column: {c} with buckets: {c.num_buckets}")
    if not shared_embedding_collection_name:
        shared_embedding_collection_name = "_".join(c.name for c in ordered) + "_shared_embedding"
    return [SharedEmbeddingColumn(c, int(dimension), combiner, initializer, shared_embedding_collection_name,
                                  ckpt_to_load_from, tensor_name_in_ckpt, max_norm, trainable) for c in columns]


def _columns(feature_columns, allowed=_DENSE, what="a _DenseColumn"):
    if isinstance(feature_columns, tuple(_DENSE) + tuple(_CATEGORICAL)) and not isinstance(feature_columns, list):
        feature_columns = [feature_columns]
    columns = list(feature_columns)
    if not columns:
        raise ValueError("feature_columns must not be empty.")
    for c in columns:
        if not isinstance(c, allowed):
            hint = (" You can wrap a categorical column with an embedding_column or indicator_column."
                    if isinstance(c, _CATEGORICAL) else "")
            raise ValueError(f"Items of feature_columns must be {what}.{hint} Given (type {type(c).__name__}): {c}.")
    names = [c.name for c in columns]
    if len(set(names)) != len(names):
        raise ValueError(f"Duplicate feature column name found for columns: {names}")
    return sorted(columns, key=lambda c: c.name)


def input_layer(features, feature_columns, weight_collections=None, trainable=True, cols_to_vars=None,
                cols_to_output_tensors=None):
    """The columns' dense tensors concatenated: float32 [batch, sum of num_elements]; an embedding
    column's variable is `input_layer/<name>/embedding_weights`."""
    columns = _columns(feature_columns)
    collections_ = list(weight_collections or []) + [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    with variable_scope(None, default_name="input_layer", values=list(features.values())):
        outputs = []
        for c in columns:
            with variable_scope(None, default_name=getattr(c, "_var_scope_name", c.name)):
                if isinstance(c, (EmbeddingColumn, SharedEmbeddingColumn)):
                    t = c.dense_tensor(features, trainable, collections_)
                else:
                    t = c.dense_tensor(features)
                t = reshape(t, [-1, c.num_elements])
            outputs.append(t)
            if cols_to_output_tensors is not None:
                cols_to_output_tensors[c] = t
            if cols_to_vars is not None:
                cols_to_vars[c] = [v for v in get_collection(GraphKeys.GLOBAL_VARIABLES)
                                   if v.op.name.startswith(f"{get_variable_scope().name}/{c.name}/")]
        return concat(outputs, 1) if len(outputs) > 1 else outputs[0]


def linear_model(features, feature_columns, units=1, sparse_combiner="sum", weight_collections=None,
                 trainable=True, cols_to_vars=None):
    """sum over columns of x·W_col + bias: float32 [batch, units]; zero-initialized variables
    `linear_model/<name>/weights` ([num_elements or num_buckets, units]) and
    `linear_model/bias_weights` [units]; a categorical column's weights are combined by
    `sparse_combiner` (sum, mean or sqrtn)."""
    columns = _columns(feature_columns, _DENSE + _CATEGORICAL, "a _FeatureColumn")
    if sparse_combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"sparse_combiner must be one of 'mean', 'sqrtn', 'sum', got {sparse_combiner!r}")
    collections_ = list(weight_collections or []) + [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    with variable_scope(None, default_name="linear_model"):
        terms = []
        for c in columns:
            categorical = isinstance(c, _CATEGORICAL)
            rows = c.num_buckets if categorical else c.num_elements
            with variable_scope(None, default_name=c.name):
                w = get_variable("weights", shape=[rows, units], dtype=float32,
                                 initializer=zeros_initializer(), trainable=trainable, collections=collections_)
                if categorical:
                    ids, mask = c._ids(features)
                    terms.append(identity(_combine(w, ids, mask, sparse_combiner), name="weighted_sum"))
                else:
                    terms.append(matmul(c.dense_tensor(features), w, name="weighted_sum"))
            if cols_to_vars is not None:
                cols_to_vars[c] = [w]
        bias = get_variable("bias_weights", shape=[units], dtype=float32, initializer=zeros_initializer(),
                            trainable=trainable, collections=collections_)
        if cols_to_vars is not None:
            cols_to_vars["bias"] = [bias]
        total = add_n(terms, name="weighted_sum_no_bias") if len(terms) > 1 else terms[0]
        return bias_add(total, bias, name="weighted_sum")


def make_parse_example_spec(feature_columns):
    """{key: FixedLenFeature or VarLenFeature} for `tf.parse_example`."""
    spec = {}
    for c in _columns(feature_columns, _DENSE + _CATEGORICAL, "a _FeatureColumn"):
        for k, v in c.parse_example_spec.items():
            if k in spec and spec[k] != v:
                raise ValueError(f"feature_columns contain different parse_spec for key {k}. Given {v} and {spec[k]}")
            spec[k] = v
    return spec


__getattr__ = missing_attribute(__name__)
