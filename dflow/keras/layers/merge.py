"""Keras's merge layers as TF 1.15 shipped them: `Add`, `Subtract`, `Multiply`, `Average`,
`Maximum`, `Minimum`, `Concatenate(axis)`, `Dot(axes, normalize)`, and their functions `add`,
`subtract`, ... (each takes a list of tensors). Element-wise merges broadcast as Keras does:
inputs of lower rank get axes of size 1 inserted after the batch axis; incompatible shapes are a
ValueError with Keras's wording."""

from __future__ import annotations

import operator
from functools import reduce

from ... import nn
from ...graph.dtypes import bool as bool_
from ...graph.shape import TensorShape
from ...kernels.creation_ops import ones_like
from ...kernels.linalg_ops import einsum
from ...kernels.manip_ops import concat, expand_dims
from ...kernels.math_ops import maximum as _maximum
from ...kernels.math_ops import minimum as _minimum
from ...kernels.reduction_ops import reduce_all
from ..engine.base_layer import Layer, shape_list

__all__ = ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "Dot", "add", "subtract",
           "multiply", "average", "maximum", "minimum", "concatenate", "dot"]


def _as_list(shape):
    return shape.as_list() if isinstance(shape, TensorShape) else (list(shape) if shape is not None else None)


def _any_mask(inputs, mask):
    """Whether a merge has masks to combine: `mask` a list (one per input) with an entry not None;
    ValueError when it is not a list or its length differs from the inputs'."""
    if mask is None:
        return False
    if not isinstance(mask, (list, tuple)):
        raise ValueError(f"`mask` should be a list. Received: {mask}")
    if len(mask) != len(inputs):
        raise ValueError("The lists `inputs` and `mask` should have the same length.")
    return any(m is not None for m in mask)


class _Merge(Layer):
    """The element-wise merges: at least 2 inputs, shapes that broadcast (Keras's rules)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    @staticmethod
    def _broadcast_shape(shape1, shape2):
        """Keras's `_compute_elemwise_op_output_shape`: the trailing dims of the two (batch excluded)."""
        if shape1 is None or shape2 is None:
            return None
        if len(shape1) < len(shape2):
            return _Merge._broadcast_shape(shape2, shape1)
        if not shape2:
            return shape1
        out = list(shape1[:-len(shape2)])
        for i, j in zip(shape1[-len(shape2):], shape2):
            if i is None or j is None:
                out.append(None)
            elif i == 1:
                out.append(j)
            elif j == 1 or i == j:
                out.append(i)
            else:
                raise ValueError(f"Operands could not be broadcast together with shapes {tuple(shape1)} "
                                 f"{tuple(shape2)}")
        return out

    def _check_inputs(self, input_shape):
        if not isinstance(input_shape, list):
            raise ValueError("A merge layer should be called on a list of inputs.")
        if len(input_shape) < 2:
            raise ValueError(f"A merge layer should be called on a list of at least 2 inputs. "
                             f"Got {len(input_shape)} inputs.")

    def build(self, input_shape):
        self._check_inputs(input_shape)
        shapes = [_as_list(s) for s in input_shape]
        batch_sizes = {s[0] for s in shapes if s is not None and s[0] is not None}
        if len(batch_sizes) > 1:
            raise ValueError(f"Can not merge tensors with different batch sizes. Got tensors with shapes : "
                             f"{[tuple(s) for s in shapes]}")
        out = shapes[0][1:] if shapes[0] is not None else None
        for s in shapes[1:]:
            out = self._broadcast_shape(out, s[1:] if s is not None else None)
        self.built = True

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError("A merge layer should be called on a list of inputs.")
        ranks = [x.shape.ndims for x in inputs]
        if None not in ranks and len(set(ranks)) > 1:
            top = max(ranks)
            expanded = []
            for x, r in zip(inputs, ranks):
                for _ in range(top - r):
                    x = expand_dims(x, 1)
                expanded.append(x)
            inputs = expanded
        return self._merge_function(list(inputs))

    def compute_output_shape(self, input_shape):
        shapes = [_as_list(s) for s in input_shape]
        out = shapes[0][1:] if shapes[0] is not None else None
        for s in shapes[1:]:
            out = self._broadcast_shape(out, s[1:] if s is not None else None)
        batch = [s[0] for s in shapes if s is not None and s[0] is not None]
        return TensorShape(None) if out is None else TensorShape([batch[0] if batch else None] + list(out))

    def compute_mask(self, inputs, mask=None):
        if not _any_mask(inputs, mask):
            return None
        masks = [expand_dims(m, 0) for m in mask if m is not None]
        return reduce_all(concat(masks, axis=0), axis=0, keepdims=False)


class Add(_Merge):
    """The sum of the inputs."""

    def _merge_function(self, inputs):
        return reduce(operator.add, inputs)


class Subtract(_Merge):
    """inputs[0] - inputs[1] (exactly two inputs)."""

    def build(self, input_shape):
        super().build(input_shape)
        if len(input_shape) != 2:
            raise ValueError("A `Subtract` layer should be called on exactly 2 inputs")

    def _merge_function(self, inputs):
        if len(inputs) != 2:
            raise ValueError("A `Subtract` layer should be called on exactly 2 inputs")
        return inputs[0] - inputs[1]


class Multiply(_Merge):
    """The element-wise product of the inputs."""

    def _merge_function(self, inputs):
        return reduce(operator.mul, inputs)


class Average(_Merge):
    """The element-wise mean of the inputs."""

    def _merge_function(self, inputs):
        return reduce(operator.add, inputs) / len(inputs)


class Maximum(_Merge):
    """The element-wise maximum of the inputs."""

    def _merge_function(self, inputs):
        return reduce(_maximum, inputs)


class Minimum(_Merge):
    """The element-wise minimum of the inputs."""

    def _merge_function(self, inputs):
        return reduce(_minimum, inputs)


class Concatenate(_Merge):
    """The inputs joined along `axis`; all other dimensions must match."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def build(self, input_shape):
        if not isinstance(input_shape, list) or len(input_shape) < 2:
            raise ValueError("A `Concatenate` layer should be called on a list of at least 2 inputs")
        shapes = [_as_list(s) for s in input_shape]
        if all(s is None for s in shapes):
            return
        known = [s for s in shapes if s is not None]
        reduced = set()
        for s in known:
            dims = list(s)
            del dims[self.axis]
            reduced.add(tuple(dims))
        if len(reduced) > 1:
            raise ValueError(f"A `Concatenate` layer requires inputs with matching shapes except for the concat "
                             f"axis. Got inputs shapes: {[tuple(s) for s in shapes]}")
        self.built = True

    def _merge_function(self, inputs):
        return concat(inputs, axis=self.axis)

    def call(self, inputs):
        return concat(list(inputs), axis=self.axis)

    def compute_output_shape(self, input_shape):
        shapes = [_as_list(s) for s in input_shape]
        out = list(shapes[0])
        for s in shapes[1:]:
            if out[self.axis] is None or s[self.axis] is None:
                out[self.axis] = None
                break
            out[self.axis] += s[self.axis]
        return TensorShape(out)

    def compute_mask(self, inputs, mask=None):
        if not _any_mask(inputs, mask):
            return None
        masks = []
        for x, m in zip(inputs, mask):
            if m is None:
                masks.append(ones_like(x, dtype=bool_))
            elif m.shape.ndims < x.shape.ndims:
                masks.append(expand_dims(m, -1))
            else:
                masks.append(m)
        return reduce_all(concat(masks, axis=self.axis), axis=-1, keepdims=False)

    def get_config(self):
        config = super().get_config()
        config["axis"] = self.axis
        return config


_LETTERS = "cdefghijklmnopqrstuvwxyz"  # "b" is the batch axis


class Dot(_Merge):
    """The dot product of two batches of tensors along `axes` (an int, or one per input; the
    batch axis 0 is never contracted); `normalize` L2-normalizes both along those axes first (the
    cosine proximity). Two [batch, n] inputs give [batch, 1]."""

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)):
                raise TypeError("Invalid type for `axes` - should be a list or an int.")
            if len(axes) != 2:
                raise ValueError("Invalid format for `axes` - should contain two elements.")
            if not isinstance(axes[0], int) or not isinstance(axes[1], int):
                raise ValueError("Invalid format for `axes` - list elements should be \"int\".")
        self.axes = axes
        self.normalize = normalize
        self.supports_masking = True

    def _axes_for(self, shape1, shape2):
        if isinstance(self.axes, int):
            if self.axes < 0:
                return [self.axes % len(shape1), self.axes % len(shape2)]
            return [self.axes] * 2
        return [a % len(s) if a < 0 else a for a, s in zip(self.axes, (shape1, shape2))]

    def build(self, input_shape):
        if not isinstance(input_shape, list) or len(input_shape) != 2:
            raise ValueError("A `Dot` layer should be called on a list of 2 inputs.")
        shape1, shape2 = _as_list(input_shape[0]), _as_list(input_shape[1])
        if shape1 is None or shape2 is None:
            return
        axes = self._axes_for(shape1, shape2)
        if shape1[axes[0]] != shape2[axes[1]]:
            raise ValueError(f"Dimension incompatibility {shape1[axes[0]]} != {shape2[axes[1]]}. Layer shapes: "
                             f"{tuple(shape1)}, {tuple(shape2)}")
        self.built = True

    def call(self, inputs):
        if len(inputs) != 2:
            raise ValueError("A `Dot` layer should be called on exactly 2 inputs")
        x1, x2 = inputs
        axes = self._axes_for(x1.shape.as_list(), x2.shape.as_list())
        if self.normalize:
            x1 = nn.l2_normalize(x1, axis=axes[0])
            x2 = nn.l2_normalize(x2, axis=axes[1])
        return _batch_dot(x1, x2, axes)

    def compute_output_shape(self, input_shape):
        shape1, shape2 = list(shape_list(input_shape[0])), list(shape_list(input_shape[1]))
        axes = self._axes_for(shape1, shape2)
        shape1.pop(axes[0])
        shape2.pop(axes[1])
        shape2.pop(0)
        out = shape1 + shape2
        return TensorShape(out + [1] if len(out) == 1 else out)

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self):
        config = super().get_config()
        config.update({"axes": self.axes, "normalize": self.normalize})
        return config


def _batch_dot(x, y, axes):
    """Keras's batch_dot: per example, contract x's axis axes[0] with y's axes[1]; a rank-1 result
    gets a trailing axis of 1."""
    nx, ny = x.shape.ndims, y.shape.ndims
    xs = ["b"] + [_LETTERS[i] for i in range(nx - 1)]
    ys = ["b"] + [_LETTERS[nx - 1 + i] for i in range(ny - 1)]
    ys[axes[1]] = xs[axes[0]]
    out = [c for i, c in enumerate(xs) if i != axes[0]] + [c for i, c in enumerate(ys) if i not in (0, axes[1])]
    result = einsum(f"{''.join(xs)},{''.join(ys)}->{''.join(out)}", x, y)
    return expand_dims(result, 1) if len(out) == 1 else result


def _functional(layer_class, name, doc):
    """The functional form of a merge layer: `name(inputs, **kwargs)` builds the layer and calls it."""
    def apply(inputs, **kwargs):
        return layer_class(**kwargs)(inputs)

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = doc
    return apply


add = _functional(Add, "add", "Functional form of `Add`: the sum of a list of tensors.")
subtract = _functional(Subtract, "subtract", "Functional form of `Subtract`: inputs[0] - inputs[1].")
multiply = _functional(Multiply, "multiply", "Functional form of `Multiply`.")
average = _functional(Average, "average", "Functional form of `Average`.")
maximum = _functional(Maximum, "maximum", "Functional form of `Maximum`.")
minimum = _functional(Minimum, "minimum", "Functional form of `Minimum`.")


def concatenate(inputs, axis=-1, **kwargs):
    """Functional form of `Concatenate`."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes, normalize=False, **kwargs):
    """Functional form of `Dot`."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)
