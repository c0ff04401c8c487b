"""Tensor element types (`dflow.float32`, …) mirroring TF1's `tf.DType`."""

from __future__ import annotations

import numpy as np

_pybool = type(True)


class DType:
    """An element type: a name and the numpy dtype that holds it (`as_numpy_dtype`)."""

    __slots__ = ("_name", "_np")

    def __init__(self, name, np_dtype):
        self._name = name
        self._np = np.dtype(np_dtype)

    @property
    def name(self):
        return self._name

    @property
    def as_numpy_dtype(self):
        return self._np.type

    @property
    def np_dtype(self):
        return self._np

    @property
    def base_dtype(self):
        return self

    @property
    def real_dtype(self):
        if self.is_complex:
            return as_dtype(np.finfo(self._np).dtype)
        return self

    @property
    def is_floating(self):
        return self._np.kind == "f"

    @property
    def is_integer(self):
        return self._np.kind in "iu"

    @property
    def is_unsigned(self):
        return self._np.kind == "u"

    @property
    def is_bool(self):
        return self._np.kind == "b"

    @property
    def is_complex(self):
        return self._np.kind == "c"

    @property
    def is_numeric(self):
        return self._np.kind in "iufc"

    @property
    def size(self):
        return self._np.itemsize

    @property
    def min(self):
        return np.finfo(self._np).min if self.is_floating else np.iinfo(self._np).min

    @property
    def max(self):
        return np.finfo(self._np).max if self.is_floating else np.iinfo(self._np).max

    def is_compatible_with(self, other):
        return self == as_dtype(other)

    def __eq__(self, other):
        if other is None:
            return False
        try:
            return self._np == as_dtype(other)._np
        except TypeError:
            return False

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self._np)

    def __repr__(self):
        return f"tf.{self._name}"

    def __reduce__(self):
        return (as_dtype, (self._name,))


float16 = DType("float16", np.float16)
half = float16
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
double = float64
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
uint16 = DType("uint16", np.uint16)
uint32 = DType("uint32", np.uint32)
uint64 = DType("uint64", np.uint64)
bool = DType("bool", np.bool_)  # noqa: A001 - TF1's public name
complex64 = DType("complex64", np.complex64)
complex128 = DType("complex128", np.complex128)
string = DType("string", np.object_)  # Python str/bytes elements (names, messages)

_ALL = [float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool,
        complex64, complex128, string]
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update({"half": float16, "float": float32, "double": float64})  # TF1: "float" is float32
_BY_NP = {d.np_dtype: d for d in _ALL}


def as_dtype(type_value):
    """Converts a DType, numpy dtype, Python type or name to a `DType`; TypeError if none fits."""
    if isinstance(type_value, DType):
        return type_value
    if type_value is None:
        raise TypeError("Cannot convert None to a dflow DType.")
    if isinstance(type_value, str) and type_value in _BY_NAME:
        return _BY_NAME[type_value]
    if type_value is float:
        return float32
    if type_value is int:
        return int32
    if type_value is _pybool:
        return bool
    if type_value in (str, bytes):
        return string
    try:
        npd = np.dtype(type_value)
    except TypeError:
        raise TypeError(f"Cannot convert {type_value!r} to a dflow DType.") from None
    if npd in _BY_NP:
        return _BY_NP[npd]
    raise TypeError(f"Cannot convert {type_value!r} to a dflow DType (unsupported dtype {npd}).")


__all__ = [d.name for d in _ALL] + ["half", "double", "DType", "as_dtype"]
