"""Tensor element types (`dflow.float32`, …) mirroring TF1's `tf.DType`."""

from __future__ import annotations

import numpy as np

_pybool = type(True)


class DType:
    """An element type: a name and the numpy dtype that holds it (`as_numpy_dtype`)."""

    __slots__ = ("_name", "_np", "_base")

    def __init__(self, name, np_dtype, base=None):
        self._name = name
        self._np = np.dtype(np_dtype)
        self._base = base  # a `_ref` type (TF1's reference dtypes): the value type it refers to

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
        return self if self._base is None else self._base

    @property
    def is_ref_dtype(self):
        return self._base is not None

    @property
    def _as_ref(self):
        return self if self._base is not None else _REF[self._name]

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
            other = as_dtype(other)
        except TypeError:
            return False
        # by name too: string and variant both hold numpy objects
        return self._np == other._np and self.base_dtype._name == other.base_dtype._name and \
            (self._base is None) == (other._base is None)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((self._np, self._base is None))

    def __repr__(self):
        return f"tf.{self._name}"

    def __str__(self):
        return f"<dtype: '{self._name}'>"

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
# TF1's variant: an opaque value in a 0-d object array (a TensorArray's state, its `flow`, and the
# gradient of one); never what numpy's object dtype converts to (that is string)
variant = DType("variant", np.object_)

_ALL = [float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool,
        complex64, complex128, string, variant]
# TF1's reference types (a RefVariable's dtype, `float32_ref`): accepted by name; dflow's values
# never carry them (Variable.dtype is the value type), but TF1 code may name them.
_REF = {d.name: DType(d.name + "_ref", d.np_dtype, base=d) for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update({"half": float16, "float": float32, "double": float64})  # TF1: "float" is float32
_BY_NAME.update({alias + "_ref": _REF[_BY_NAME[alias].name] for alias in list(_BY_NAME)})
_BY_NAME.update({r.name: r for r in _REF.values()})
_BY_NP = {d.np_dtype: d for d in _ALL if d is not variant}
# TF1's as_dtype maps these Python types (and only these: int, str, bytes, complex raise)
_BY_PYTHON = {float: float32, _pybool: bool, object: string}
# names TF1 accepts whose element types numpy (so dflow) cannot hold
_UNSUPPORTED = {"bfloat16", "qint8", "qint16", "qint32", "quint8", "quint16", "resource",
                "int2", "int4", "uint2", "uint4", "float4_e2m1fn", "float8_e4m3b11fnuz",
                "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz"}


def as_dtype(type_value):
    """Converts a DType, TF1 dtype name, numpy dtype or type, or Python type to a `DType`.

    Accepts what TF1's `tf.as_dtype` accepts that numpy can hold: the names of `_STRING_TO_TF`
    ("float" is float32, "double" float64, "half" float16, `*_ref` names), numpy dtypes and types
    (`U`/`S`/object ones are `string`), and the Python types float, bool and object. TypeError for
    anything else, as TF1 (Python `int`, `str`, `bytes`, `complex` included), and for TF1 types
    numpy has no element type for (bfloat16, quantized, float8, resource).
    """
    if isinstance(type_value, DType):
        return type_value
    if type_value is None:
        raise TypeError("Cannot convert None to a dflow DType.")
    if isinstance(type_value, str):
        d = _BY_NAME.get(type_value)
        if d is not None:
            return d
        base = type_value[:-4] if type_value.endswith("_ref") else type_value
        if base in _UNSUPPORTED:
            raise TypeError(f"Cannot convert {type_value!r} to a dflow DType: TF1's {base} has no numpy "
                            "element type, so dflow does not provide it.")
        raise TypeError(f"Cannot convert {type_value!r} to a dflow DType (expected a name such as 'float32', "
                        "'float', 'double', 'int64', 'string').")
    if isinstance(type_value, type) and not issubclass(type_value, np.generic):
        d = _BY_PYTHON.get(type_value)
        if d is not None:
            return d
        hint = {int: "dflow.int32 or dflow.int64", str: "dflow.string", bytes: "dflow.string",
                complex: "dflow.complex64 or dflow.complex128"}.get(type_value)
        raise TypeError(f"Cannot convert {type_value!r} to a dflow DType (TF1 maps only the Python types "
                        "float, bool and object)" + (f"; use {hint}." if hint else "."))
    try:
        npd = np.dtype(type_value)
    except TypeError:
        raise TypeError(f"Cannot convert {type_value!r} to a dflow DType.") from None
    if npd.kind in "USO":
        return string
    if npd in _BY_NP:
        return _BY_NP[npd]
    raise TypeError(f"Cannot convert {type_value!r} to a dflow DType (unsupported dtype {npd}).")


__all__ = [d.name for d in _ALL] + ["half", "double", "DType", "as_dtype"]
