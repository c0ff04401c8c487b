"""Static shapes: `Dimension` and `TensorShape`, with unknown dims and unknown rank (TF1).

A static shape is what is known when the graph is built. `None` marks an unknown dim; a shape
of unknown rank has `dims is None`. Merging two shapes keeps what either knows and raises
`ValueError` when they contradict.
"""

from __future__ import annotations

import numbers


class Dimension:
    """One dim of a static shape: an int or unknown (`value is None`)."""

    __slots__ = ("_value",)

    def __init__(self, value):
        if isinstance(value, Dimension):
            value = value.value
        if value is None:
            self._value = None
        else:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                try:
                    if int(value) != value:
                        raise TypeError
                except (TypeError, ValueError):
                    raise TypeError(f"Dimension value must be an integer or None, got {value!r}") from None
            value = int(value)
            if value < 0:
                raise ValueError(f"Dimension {value} must be >= 0")
            self._value = value

    @property
    def value(self):
        return self._value

    def is_compatible_with(self, other):
        other = as_dimension(other)
        return self._value is None or other.value is None or self._value == other.value

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")

    def merge_with(self, other):
        other = as_dimension(other)
        self.assert_is_compatible_with(other)
        return Dimension(self._value if self._value is not None else other.value)

    def _arith(self, other, fn):
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return Dimension(None)
        return Dimension(fn(self._value, other.value))

    def __add__(self, other):
        return self._arith(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other):
        return self._arith(other, lambda a, b: a - b)

    def __mul__(self, other):
        return self._arith(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return self._arith(other, lambda a, b: a // b)

    def __eq__(self, other):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other.value is None:
            return None
        return self._value == other.value

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is None or eq is NotImplemented else not eq

    def __hash__(self):
        return hash(self._value)

    def __int__(self):
        if self._value is None:
            raise TypeError("Cannot convert an unknown Dimension to int")
        return self._value

    __index__ = __int__

    def __repr__(self):
        return f"Dimension({self._value})"

    def __str__(self):
        return "?" if self._value is None else str(self._value)


def as_dimension(value):
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(dim):
    """The int (or None) of a Dimension or plain value, as `tf.compat.dimension_value`."""
    return dim.value if isinstance(dim, Dimension) else dim


class TensorShape:
    """A static shape: a list of `Dimension`s, or unknown rank (`dims is None`)."""

    __slots__ = ("_dims",)

    def __init__(self, dims):
        if isinstance(dims, TensorShape):
            self._dims = None if dims._dims is None else list(dims._dims)
        elif dims is None:
            self._dims = None
        else:
            try:
                it = iter(dims)
            except TypeError:
                self._dims = [as_dimension(dims)]  # a single int, as TF1 allows
            else:
                self._dims = [as_dimension(d) for d in it]

    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    @property
    def ndims(self):
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return [d.value for d in self._dims]

    def as_tuple(self):
        """The dims as a tuple of ints and Nones, or None for unknown rank."""
        return None if self._dims is None else tuple(d.value for d in self._dims)

    def is_fully_defined(self):
        return self._dims is not None and all(d.value is not None for d in self._dims)

    def assert_is_fully_defined(self):
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d.value
        return n

    def is_compatible_with(self, other):
        if type(other) is tuple and self._dims is not None:  # a value's shape (a feed's, each run)
            return len(other) == len(self._dims) and \
                all(d._value is None or d._value == n for d, n in zip(self._dims, other))
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a.is_compatible_with(b) for a, b in zip(self._dims, other._dims))

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are incompatible")

    def merge_with(self, other):
        other = as_shape(other)
        if self._dims is None:
            return TensorShape(other)
        if other._dims is None:
            return TensorShape(self)
        if len(self._dims) != len(other._dims):
            raise ValueError(f"Shapes {self} and {other} are not compatible (ranks differ)")
        try:
            return TensorShape([a.merge_with(b) for a, b in zip(self._dims, other._dims)])
        except ValueError:
            raise ValueError(f"Shapes {self} and {other} are not compatible") from None

    def with_rank(self, rank):
        try:
            return self.merge_with(unknown_shape(rank))
        except ValueError:
            raise ValueError(f"Shape {self} must have rank {rank}") from None

    def with_rank_at_least(self, rank):
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def concatenate(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __bool__(self):
        return self._dims is not None

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(d for d in self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else Dimension(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims if self._dims is not None and other._dims is not None \
            else self._dims is None and other._dims is None

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(self.as_tuple())

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape([{', '.join(repr(d) for d in self._dims)}])"  # TF1: [Dimension(2), Dimension(None)]

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join(str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"

    def __reduce__(self):
        return (TensorShape, (self.as_tuple(),))


def as_shape(shape):
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank=None):
    return TensorShape(None) if rank is None else TensorShape([None] * rank)


def scalar():
    return TensorShape([])


def broadcast_static_shape(a, b):
    """The numpy broadcast of two static shapes; ValueError if they cannot broadcast."""
    a, b = as_shape(a), as_shape(b)
    if a.ndims is None or b.ndims is None:
        return TensorShape(None)
    da_, db_ = a.as_list()[::-1], b.as_list()[::-1]
    out = []
    for i in range(max(len(da_), len(db_))):
        x = da_[i] if i < len(da_) else 1
        y = db_[i] if i < len(db_) else 1
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None or y is None:
            # one side unknown, the other known and != 1: the result is the known one (TF1)
            out.append(x if y is None else y)
        elif x == y:
            out.append(x)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: {a} and {b}")
    return TensorShape(out[::-1])


# TensorFlow counts a tensor's elements in an int64: a shape whose product exceeds this cannot
# exist (TF1 refuses it with "more than 2**63 - 1 entries/elements").
MAX_ELEMENTS = 2**63 - 1


def too_many_elements(dims):
    """Whether known `dims` (ints, or None for unknown) multiply past MAX_ELEMENTS. A shape with an
    unknown dim is never refused: the unknown dim may be 0."""
    n = 1
    for d in dims:
        if d is None:
            return False
        n *= int(d)
    return n > MAX_ELEMENTS


def check_static_size(shape, what):
    """ValueError (TF1's wording, at graph-build time) for a fully known static shape of more than
    2**63 - 1 elements; `what` names the op ("Placeholder 'x'"). The ops TF1 checks so are those
    whose shape is an attr: placeholders and variables."""
    if shape.dims is not None and too_many_elements([d.value for d in shape.dims]):
        dims = ",".join(str(d.value) for d in shape.dims)
        raise ValueError(f"Shape [{dims}] is too large (more than 2**63 - 1 entries) for {what}")
