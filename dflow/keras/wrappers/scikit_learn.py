"""`KerasClassifier` / `KerasRegressor`: a Keras model behind scikit-learn's estimator API
(`fit`, `predict`, `predict_proba`, `score`, `get_params`, `set_params`); scikit-learn itself is
not needed. `build_fn` (a function, a callable object, or None for the subclass's `__call__`)
builds and compiles the model, taking the parameters it names."""

from __future__ import annotations

import copy
import inspect
import types

import numpy as np

from ..models import Sequential
from ..utils.np_utils import to_categorical

__all__ = ["BaseWrapper", "KerasClassifier", "KerasRegressor"]


def _arg_names(fn):
    return list(inspect.signature(fn).parameters)


class BaseWrapper:
    def __init__(self, build_fn=None, **sk_params):
        self.build_fn = build_fn
        self.sk_params = sk_params
        self.check_params(sk_params)

    def _legal_fns(self):
        fns = [Sequential.fit, Sequential.predict, Sequential.predict_classes, Sequential.evaluate]
        if self.build_fn is None:
            fns.append(self.__call__)
        elif not isinstance(self.build_fn, types.FunctionType) and not isinstance(self.build_fn, types.MethodType):
            fns.append(self.build_fn.__call__)
        else:
            fns.append(self.build_fn)
        return fns

    def check_params(self, params):
        """ValueError for a parameter no model method nor build_fn takes."""
        legal = self._legal_fns()
        for name in params:
            if not any(name in _arg_names(fn) for fn in legal if fn is not None):
                if name != "nb_epoch":
                    raise ValueError(f"{name} is not a legal parameter")

    def get_params(self, **params):
        res = copy.deepcopy(self.sk_params)
        res.update({"build_fn": self.build_fn})
        return res

    def set_params(self, **params):
        self.check_params(params)
        self.sk_params.update(params)
        return self

    def filter_sk_params(self, fn, override=None):
        override = override or {}
        res = {name: value for name, value in self.sk_params.items() if name in _arg_names(fn)}
        res.update({name: value for name, value in override.items() if name in _arg_names(fn)})
        return res

    def _build(self):
        if self.build_fn is None:
            return self.__call__(**self.filter_sk_params(self.__call__))
        if not isinstance(self.build_fn, types.FunctionType) and not isinstance(self.build_fn, types.MethodType):
            return self.build_fn(**self.filter_sk_params(self.build_fn.__call__))
        return self.build_fn(**self.filter_sk_params(self.build_fn))

    def fit(self, x, y, **kwargs):
        """Builds a new model and fits it; returns the History."""
        self.model = self._build()
        loss = getattr(self.model, "loss", None)
        loss_name = loss if isinstance(loss, str) else getattr(loss, "__name__", None)
        y = np.asarray(y)
        if loss_name == "categorical_crossentropy" and len(y.shape) != 2:
            y = to_categorical(y)
        fit_args = copy.deepcopy(self.filter_sk_params(Sequential.fit))
        fit_args.update(kwargs)
        return self.model.fit(x, y, **fit_args)


class KerasClassifier(BaseWrapper):
    """Classes are the sorted unique labels of `fit`'s y; predictions map back to them."""

    def fit(self, x, y, sample_weight=None, **kwargs):
        y = np.array(y)
        if len(y.shape) == 2 and y.shape[1] > 1:
            self.classes_ = np.arange(y.shape[1])
        elif (len(y.shape) == 2 and y.shape[1] == 1) or len(y.shape) == 1:
            self.classes_ = np.unique(y)
            y = np.searchsorted(self.classes_, y)
        else:
            raise ValueError("Invalid shape for y: " + str(y.shape))
        self.n_classes_ = len(self.classes_)
        if sample_weight is not None:
            kwargs["sample_weight"] = sample_weight
        return super().fit(x, y, **kwargs)

    def _probabilities(self, x, **kwargs):
        kwargs = self.filter_sk_params(Sequential.predict, kwargs)
        return np.asarray(self.model.predict(x, **kwargs))

    def predict(self, x, **kwargs):
        probs = self._probabilities(x, **kwargs)
        classes = (probs > 0.5).astype("int32").reshape(-1) if probs.shape[-1] == 1 else probs.argmax(-1)
        return self.classes_[classes]

    def predict_proba(self, x, **kwargs):
        probs = self._probabilities(x, **kwargs)
        if probs.shape[1] == 1:  # a sigmoid output: the two classes' probabilities
            probs = np.hstack([1 - probs, probs])
        return probs

    def score(self, x, y, **kwargs):
        """The model's accuracy on (x, y); ValueError when the model reports no accuracy metric."""
        y = np.searchsorted(self.classes_, y)
        kwargs = self.filter_sk_params(Sequential.evaluate, kwargs)
        loss = getattr(self.model, "loss", None)
        loss_name = loss if isinstance(loss, str) else getattr(loss, "__name__", None)
        if loss_name == "categorical_crossentropy" and len(np.shape(y)) != 2:
            y = to_categorical(y)
        outputs = self.model.evaluate(x, y, **kwargs)
        outputs = outputs if isinstance(outputs, list) else [outputs]
        for name, output in zip(self.model.metrics_names, outputs):
            if name in ("accuracy", "acc"):
                return output
        raise ValueError("The model is not configured to compute accuracy. You should pass "
                         "`metrics=[\"accuracy\"]` to the `model.compile()` method.")


class KerasRegressor(BaseWrapper):
    def predict(self, x, **kwargs):
        kwargs = self.filter_sk_params(Sequential.predict, kwargs)
        return np.squeeze(self.model.predict(x, **kwargs))

    def score(self, x, y, **kwargs):
        """The negated loss on (x, y) (larger is better, as scikit-learn wants)."""
        kwargs = self.filter_sk_params(Sequential.evaluate, kwargs)
        loss = self.model.evaluate(x, y, **kwargs)
        return -loss[0] if isinstance(loss, list) else -loss
