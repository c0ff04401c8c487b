"""TF 1.15's `tf.keras.layers.DenseFeatures`: `tf.feature_column.input_layer` as a Keras layer.

`DenseFeatures(feature_columns)(features)` maps a dict {key: Tensor or SparseTensor} through the
dense columns (numeric, bucketized, indicator, embedding) and concatenates them, in the columns'
name order, into float32 [batch, sum of the columns' sizes]. An embedding column's variable is
the layer's (`dense_features/<column>_embedding/embedding_weights:0`), made on the first call and
reused by later ones. The columns are dflow.feature_column's, so `get_config` holds the column
objects themselves (enough for `from_config` in the same program, not for JSON).
"""

from __future__ import annotations

from ... import feature_column as fc
from ...graph.graph import get_collection, name_scope
from ...graph.keys import GraphKeys
from ...graph.shape import TensorShape
from ...kernels.array_ops import reshape
from ...kernels.manip_ops import concat
from ...kernels.sparse_ops import SparseTensor, SparseTensorValue
from ...state.scope import AUTO_REUSE, variable_scope
from ..engine.base_layer import Layer

__all__ = ["DenseFeatures"]


class DenseFeatures(Layer):
    """Dense tensors of `feature_columns` (a list of dense feature columns), concatenated."""

    def __init__(self, feature_columns, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        self._feature_columns = fc._columns(feature_columns)
        self._given_columns = list(feature_columns) if isinstance(feature_columns, (list, tuple)) \
            else [feature_columns]

    def __call__(self, features, *args, **kwargs):
        if not isinstance(features, dict):
            raise ValueError(f"We expected a dictionary here. Instead we got: {features}")
        if any(isinstance(v, (SparseTensor, SparseTensorValue)) for v in features.values()):
            # Keras's call path converts every input to a dense Tensor: sparse features go around it
            with name_scope(self._name_scope()):
                self.built = True
                return self.call(features, *args, **kwargs)
        return super().__call__(features, *args, **kwargs)

    def build(self, input_shape):
        self.built = True

    def call(self, features, cols_to_output_tensors=None):
        if not isinstance(features, dict):
            raise ValueError(f"We expected a dictionary here. Instead we got: {features}")
        before = {id(v) for v in get_collection(GraphKeys.GLOBAL_VARIABLES)}
        outputs = []
        with variable_scope(self.name, reuse=AUTO_REUSE, auxiliary_name_scope=False):
            for c in self._feature_columns:
                with variable_scope(getattr(c, "_var_scope_name", c.name)):
                    if isinstance(c, (fc.EmbeddingColumn, fc.SharedEmbeddingColumn)):
                        t = c.dense_tensor(features, self.trainable,
                                           [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES])
                    else:
                        t = c.dense_tensor(features)
                    t = reshape(t, [-1, c.num_elements])
                outputs.append(t)
                if cols_to_output_tensors is not None:
                    cols_to_output_tensors[c] = t
        known = {id(v) for v in self._trainable_weights + self._non_trainable_weights}
        for v in get_collection(GraphKeys.GLOBAL_VARIABLES):
            if id(v) not in before and id(v) not in known:
                (self._trainable_weights if self.trainable and v.trainable else self._non_trainable_weights).append(v)
        return concat(outputs, 1) if len(outputs) > 1 else outputs[0]

    def compute_output_shape(self, input_shape):
        batch = None
        if isinstance(input_shape, dict) and input_shape:
            first = input_shape[sorted(input_shape)[0]]
            dims = first.as_list() if hasattr(first, "as_list") else list(first or [None])
            batch = dims[0] if dims else None
        return TensorShape([batch, sum(c.num_elements for c in self._feature_columns)])

    def get_config(self):
        config = super().get_config()
        config["feature_columns"] = list(self._given_columns)
        return config
