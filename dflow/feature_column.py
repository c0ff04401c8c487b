"""TF1's `tf.feature_column` for dense numeric inputs: `numeric_column`, `input_layer` (the columns
as one float [batch, n] matrix) and `linear_model` (a linear function of them, with TF1's variable
names `linear_model/<key>/weights` and `linear_model/bias_weights`).

Columns are taken in the order of their names, as TF1 does, so the layout of `input_layer` and
the variables of `linear_model` do not depend on the order the caller lists them in.
"""

from __future__ import annotations

import collections
import math as _math

import numpy as np

from .graph.dtypes import as_dtype, float32
from .graph.graph import name_scope
from .graph.keys import GraphKeys
from .kernels.array_ops import reshape
from .kernels.common import convert_to_tensor
from .kernels.linalg_ops import matmul
from .kernels.manip_ops import add_n, concat
from .kernels.math_ops import cast
from .kernels.parsing_ops import FixedLenFeature
from .nn.core import bias_add
from .state.initializers import zeros_initializer
from .state.scope import get_variable, variable_scope
from .tf1_names import missing_attribute

__all__ = ["numeric_column", "input_layer", "linear_model", "make_parse_example_spec"]


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


def _columns(feature_columns):
    if isinstance(feature_columns, NumericColumn):
        feature_columns = [feature_columns]
    columns = list(feature_columns)
    if not columns:
        raise ValueError("feature_columns must not be empty.")
    for c in columns:
        if not isinstance(c, NumericColumn):
            raise ValueError(f"Items of feature_columns must be a feature column (dflow has numeric_column). "
                             f"Given (type {type(c).__name__}): {c}.")
    names = [c.name for c in columns]
    if len(set(names)) != len(names):
        raise ValueError(f"Duplicate feature column name found for columns: {names}")
    return sorted(columns, key=lambda c: c.name)


def input_layer(features, feature_columns, weight_collections=None, trainable=True, cols_to_vars=None,
                cols_to_output_tensors=None):
    """The columns' dense tensors concatenated: float32 [batch, sum of num_elements]."""
    columns = _columns(feature_columns)
    with variable_scope(None, default_name="input_layer"):
        outputs = []
        for c in columns:
            with name_scope(c.name):
                t = c.dense_tensor(features)
            outputs.append(t)
            if cols_to_output_tensors is not None:
                cols_to_output_tensors[c] = t
            if cols_to_vars is not None:
                cols_to_vars[c] = []
        return concat(outputs, 1) if len(outputs) > 1 else outputs[0]


def linear_model(features, feature_columns, units=1, sparse_combiner="sum", weight_collections=None,
                 trainable=True, cols_to_vars=None):
    """sum over columns of x·W_col + bias: float32 [batch, units]; zero-initialized variables
    `linear_model/<key>/weights` [num_elements, units] and `linear_model/bias_weights` [units]."""
    columns = _columns(feature_columns)
    collections_ = list(weight_collections or []) + [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    with variable_scope(None, default_name="linear_model"):
        terms = []
        for c in columns:
            with variable_scope(None, default_name=c.name):
                w = get_variable("weights", shape=[c.num_elements, units], dtype=float32,
                                 initializer=zeros_initializer(), trainable=trainable, collections=collections_)
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
    """{key: FixedLenFeature} for `tf.parse_example`."""
    spec = {}
    for c in _columns(feature_columns):
        spec.update(c.parse_example_spec)
    return spec


__getattr__ = missing_attribute(__name__)
