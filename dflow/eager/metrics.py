"""`tfe.metrics`: metrics as objects whose state is eager variables (TF1.5's contrib eager metrics):
call the metric to update it, `result()` to read it."""

from __future__ import annotations

from ..graph.dtypes import as_dtype
from ..kernels import math_ops
from ..kernels.array_ops import size
from ..kernels.common import convert_to_tensor
from ..kernels.creation_ops import ones_like
from ..kernels.reduction_ops import reduce_sum
from ..state.variables import Variable

__all__ = ["Metric", "Mean", "Accuracy"]


class Metric:
    """Base class: `call(*args)` updates the state variables, `result()` reads them."""

    def __init__(self, name=None):
        self._name = name or type(self).__name__.lower()
        self._vars = []

    @property
    def name(self):
        return self._name

    @property
    def variables(self):
        return list(self._vars)

    def add_variable(self, name, shape=(), dtype="float64", initializer=0.0):
        v = Variable(convert_to_tensor(initializer, dtype=as_dtype(dtype)), trainable=False, collections=[],
                     name=f"{self._name}/{name}")
        self._vars.append(v)
        return v

    def init_variables(self):
        for v in self._vars:
            v.assign(v.initial_value)

    def __call__(self, *args, **kwargs):
        return self.call(*args, **kwargs)

    def call(self, *args, **kwargs):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError


class Mean(Metric):
    """The (weighted) mean of all values passed in."""

    def __init__(self, name=None, dtype="float64"):
        super().__init__(name)
        self._dtype = as_dtype(dtype)
        self.numer = self.add_variable("numer", dtype=self._dtype)
        self.denom = self.add_variable("denom", dtype=self._dtype)

    def call(self, values, weights=None):
        values = math_ops.cast(convert_to_tensor(values), self._dtype)
        if weights is None:
            self.denom.assign_add(math_ops.cast(size(values), self._dtype))
            self.numer.assign_add(reduce_sum(values))
        else:
            weights = math_ops.cast(convert_to_tensor(weights), self._dtype) * ones_like(values)
            self.numer.assign_add(reduce_sum(values * weights))
            self.denom.assign_add(reduce_sum(weights))
        return values

    def result(self):
        return self.numer.value() / self.denom.value()


class Accuracy(Mean):
    """The fraction of predictions equal to their labels."""

    def call(self, labels, predictions, weights=None):
        matches = math_ops.equal(convert_to_tensor(labels), convert_to_tensor(predictions))
        super().call(matches, weights)
        return predictions
