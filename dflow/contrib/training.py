"""`tf.contrib.training`: `HParams`, the hyperparameter set TF 1.x programs parse from a
`--hparams "lr=0.1,layers=[64,32]"` flag (the seed's learn_runner skeleton). The input-pipeline
helpers of this module (`bucket_by_sequence_length`, ...) are not provided: their AttributeError
says so."""

from __future__ import annotations

import json
import re

from ..tf1_names import missing_attribute

__all__ = ["HParams"]

_ASSIGN = re.compile(r"\s*([A-Za-z_]\w*)\s*=\s*(\[[^\]]*\]|[^,\[]*)\s*(?:,|$)")


def _convert(name, value_text, like):
    """`value_text` (a string) as the type of the default `like`."""
    kind = type(like)
    try:
        if kind is bool:
            low = value_text.strip().lower()
            if low in ("true", "1"):
                return True
            if low in ("false", "0"):
                return False
            raise ValueError(value_text)
        if kind is int:
            return int(value_text)
        if kind is float:
            return float(value_text)
        if kind is str:
            return value_text
    except ValueError:
        raise ValueError(f"Could not parse hparam '{name}' of type '{kind.__name__}' with value '{value_text}'") \
            from None
    raise ValueError(f"Unknown hyperparameter type for {name}")


class HParams:
    """Named hyperparameters with defaults; `parse("a=1,b=[1,2]")` overrides them, converting
    each value to its default's type (int, float, bool, str, or a list of one of these)."""

    def __init__(self, hparam_def=None, model_structure=None, **kwargs):
        if hparam_def is not None:
            raise ValueError("HParams(hparam_def=...) reads an HParamDef proto, which dflow does not provide")
        self._model_structure = model_structure
        self._types = {}
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name, value):
        if getattr(self, name, None) is not None or name in self._types:
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"Multi-valued hyperparameters cannot be empty: {name}")
            self._types[name] = (type(value[0]), True)
        else:
            self._types[name] = (type(value), False)
        setattr(self, name, list(value) if isinstance(value, (list, tuple)) else value)

    def set_hparam(self, name, value):
        if name not in self._types:
            raise ValueError(f"Unknown hyperparameter name: {name}")
        kind, is_list = self._types[name]
        if is_list != isinstance(value, (list, tuple)):
            raise ValueError(f"Must {'' if is_list else 'not '}pass a list for multi-valued parameter: {name}.")
        setattr(self, name, list(value) if is_list else value)

    def del_hparam(self, name):
        if name in self._types:
            delattr(self, name)
            del self._types[name]

    def parse(self, values):
        """Overrides hyperparameters from "name=value,name=[v1,v2]" (values of unknown names are
        a ValueError); returns self."""
        if not values:
            return self
        pos, updates = 0, {}
        while pos < len(values):
            m = _ASSIGN.match(values, pos)
            if not m or m.end() == pos:
                raise ValueError(f"Malformed hyperparameter value: {values[pos:]!r}")
            name, text = m.group(1), m.group(2).strip()
            if name not in self._types:
                raise ValueError(f"Unknown hyperparameter type for {name}")
            kind, is_list = self._types[name]
            if text.startswith("["):
                if not is_list:
                    raise ValueError(f"Must not pass a list for single-valued parameter: {name}")
                items = [t.strip() for t in text[1:-1].split(",") if t.strip()]
                updates[name] = [_convert(name, t, kind()) for t in items]
            else:
                if is_list:
                    raise ValueError(f"Must pass a list for multi-valued parameter: {name}.")
                updates[name] = _convert(name, text, kind())
            pos = m.end()
        for name, value in updates.items():
            setattr(self, name, value)
        return self

    def override_from_dict(self, values_dict):
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def values(self):
        return {n: getattr(self, n) for n in self._types}

    def get(self, key, default=None):
        return getattr(self, key) if key in self._types else default

    def to_json(self, indent=None, separators=None, sort_keys=False):
        return json.dumps(self.values(), indent=indent, separators=separators, sort_keys=sort_keys)

    def parse_json(self, values_json):
        return self.override_from_dict(json.loads(values_json))

    def __contains__(self, key):
        return key in self._types

    def __str__(self):
        return str(sorted(self.values().items()))

    def __repr__(self):
        return f"{type(self).__name__}({self!s})"


__getattr__ = missing_attribute(__name__)
