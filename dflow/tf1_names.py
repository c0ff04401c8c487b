"""TF1's public names, and the AttributeError for a name dflow lacks.

`tf1_names.txt` beside this module lists TF1's public names by module (dumped from
`tensorflow.compat.v1`, plus hand-written tf.contrib and tf.estimator sections; see its header and
tools/tf1_coverage.py). A dflow module that mirrors a TF1 module ends with

    __getattr__ = missing_attribute(__name__)

so `dflow.nn.foo` raises an AttributeError saying whether `tf.nn.foo` is a TF1 name dflow does not
provide or no TF1 name at all, pointing to `dflow coverage` (docs/tf1_coverage.md), instead of Python's "Did you
mean ...?". It is still an AttributeError (`hasattr` is False, `from dflow import foo` an
ImportError). The list is read on the first miss only. This module imports nothing of dflow.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import NamedTuple

COVERAGE_PAGE = "docs/tf1_coverage.md"  # in the source tree; the installed package has the command below


def coverage_hint(tf_module):
    """Where a user, pip-installed or not, reads which names of `tf_module` ('tf.nn') dflow provides."""
    return (f"`python -m dflow.cli coverage {tf_module}` (or `dflow coverage {tf_module}`) lists what dflow provides "
            f"of it ({COVERAGE_PAGE} in dflow's source)")
_DATA = Path(__file__).with_name("tf1_names.txt")

# TF1 names whose absence has a plan: said in their AttributeError
PLANNED = {}


class Reference(NamedTuple):
    tf_version: str
    dumped: str
    modules: dict  # TF module path ("" is the top level, "nn", "contrib.layers") -> (frozenset of names, by hand)


@cache
def reference() -> Reference:
    """The parsed reference list; every section's own path is also a name of its parent module."""
    header, names, by_hand, current = {}, {}, {}, None
    text = _DATA.read_text() if _DATA.exists() else ""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("#"):
            key, _, value = line[1:].partition(":")
            header.setdefault(key.strip(), value.strip())
        elif line.startswith("["):
            current, _, mark = line[1:].partition("]")
            names.setdefault(current, set())
            by_hand[current] = mark.strip() == "by hand"
        elif line and current is not None:
            names[current].add(line)
    for path in list(names):
        parts = path.split(".") if path else []
        for i in range(len(parts)):
            names.setdefault(".".join(parts[:i]), set()).add(parts[i])
    modules = {p: (frozenset(n), by_hand.get(p, False)) for p, n in names.items()}
    return Reference(header.get("tensorflow", "?"), header.get("dumped", "?"), modules)


def tf_path(module_name):
    """The TF module a dflow module mirrors: 'dflow' -> '', 'dflow.contrib.layers' -> 'contrib.layers'."""
    return module_name.partition(".")[2]


def missing_message(module_name, name):
    """Why `module_name.name` does not exist, in TF1's terms."""
    path = tf_path(module_name)
    tf_name = "tf." + (f"{path}.{name}" if path else name)
    tf_module = "tf." + path if path else "tf"
    modules = reference().modules
    if path in modules and name in modules[path][0]:
        plan = PLANNED.get(tf_name[3:])
        why = f": {plan}" if plan else ""
        return (f"dflow does not provide {tf_name}, a TF1 name (module {module_name!r} has no attribute "
                f"{name!r}){why}. {coverage_hint(tf_module)}.")
    if path in modules:
        elsewhere = sorted("tf." + (f"{p}.{name}" if p else name) for p, (n, _) in modules.items() if name in n)
        hint = f"; TF1 has {', '.join(elsewhere[:3])}" if elsewhere else ""
        return (f"module {module_name!r} has no attribute {name!r}, and {tf_name} is not a TF1 name either "
                f"(TF {reference().tf_version}'s tf.compat.v1 and TF 1.15's contrib and estimator{hint}). "
                f"{coverage_hint(tf_module)}.")
    return f"module {module_name!r} has no attribute {name!r} ({coverage_hint('tf')})"


def missing_attribute(module_name):
    """A module `__getattr__` for `module_name` whose AttributeError explains a missing TF1 name."""

    def __getattr__(name):
        if name.startswith("_"):  # dunders and private names: the plain error, without reading the list
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        raise AttributeError(missing_message(module_name, name))

    return __getattr__
