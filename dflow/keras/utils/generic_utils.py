"""Keras's (de)serialization of named objects: `{"class_name": ..., "config": ...}` dicts, strings
looked up in a module's table, and the custom-object scope `load_model`/`from_config` consult."""

from __future__ import annotations

import contextlib

__all__ = ["get_custom_objects", "custom_object_scope", "CustomObjectScope", "serialize_keras_object",
           "deserialize_keras_object", "get_registered_name"]

_GLOBAL_CUSTOM_OBJECTS = {}
_SCOPES = []


def get_custom_objects():
    """The global {name: object} table user classes and functions can be registered in."""
    return _GLOBAL_CUSTOM_OBJECTS


@contextlib.contextmanager
def custom_object_scope(*tables):
    _SCOPES.append({k: v for table in tables for k, v in (table or {}).items()})
    try:
        yield
    finally:
        _SCOPES.pop()


CustomObjectScope = custom_object_scope


def _lookup(name, module_objects, custom_objects):
    for table in [custom_objects or {}] + _SCOPES[::-1] + [_GLOBAL_CUSTOM_OBJECTS, module_objects or {}]:
        if name in table:
            return table[name]
    return None


def get_registered_name(obj):
    return getattr(obj, "__name__", type(obj).__name__)


def serialize_keras_object(instance):
    """None, a function's name, or `{"class_name", "config"}` of an object with get_config."""
    if instance is None:
        return None
    if hasattr(instance, "get_config"):
        return {"class_name": type(instance).__name__, "config": instance.get_config()}
    if hasattr(instance, "__name__"):
        return instance.__name__
    raise ValueError(f"Cannot serialize {instance!r}: it has no get_config() and no __name__")


_RAISE = object()


def get_identified(identifier, deserialize, what, none=None, from_name=lambda obj: obj):
    """What a Keras module's `get` returns: `none` for None (a ValueError when `none` is `_RAISE`),
    the deserialized object for a config dict, `from_name(deserialized)` for a name, a callable as
    it is; ValueError naming `what` for anything else."""
    if identifier is None and none is not _RAISE:
        return none
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return from_name(deserialize(identifier))
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret {what} identifier: {identifier!r}")


def deserialize_keras_object(identifier, module_objects=None, custom_objects=None,
                             printable_module_name="object"):
    """The object a config dict or a name stands for; ValueError naming what is unknown."""
    if isinstance(identifier, dict):
        class_name, config = identifier.get("class_name"), identifier.get("config", {})
        cls = _lookup(class_name, module_objects, custom_objects)
        if cls is None:
            raise ValueError(f"Unknown {printable_module_name}: {class_name}")
        if hasattr(cls, "from_config"):
            if "custom_objects" in getattr(cls.from_config, "__code__", type("", (), {"co_varnames": ()})).co_varnames:
                return cls.from_config(config, custom_objects=custom_objects)
            with custom_object_scope(custom_objects):
                return cls.from_config(config)
        return cls(**config)
    if isinstance(identifier, str):
        obj = _lookup(identifier, module_objects, custom_objects)
        if obj is None:
            raise ValueError(f"Unknown {printable_module_name}: {identifier}")
        return obj
    raise ValueError(f"Could not interpret serialized {printable_module_name}: {identifier!r}")
