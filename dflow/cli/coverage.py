"""`dflow coverage [MODULE]`: which of TF1's public names `import dflow as tf` provides, from the
installed package alone (the reference list dflow/tf1_names.txt and dflow's namespace), so a
pip-installed user can read what the missing-name AttributeError points to.

    dflow coverage                    # one line per TF1 module: names provided of names listed
    dflow coverage tf.contrib.summary # that module's names, provided (+) and missing (-)
"""

from __future__ import annotations

import sys

import dflow

from ..tf1_names import reference

__all__ = ["coverage_command", "module_coverage"]


def _resolve(path):
    """dflow's module for TF module `path` ("" is the top level), or None."""
    obj = dflow
    for part in filter(None, path.split(".")):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return None
    return obj


def _has(module, name):
    try:
        getattr(module, name)
    except AttributeError:
        return False
    return True


def module_coverage(path):
    """(provided, missing) sorted name lists of TF module `path` ('nn', 'contrib.summary', '')."""
    names, _ = reference().modules[path]
    module = _resolve(path)
    have = sorted(n for n in names if module is not None and _has(module, n))
    return have, sorted(set(names) - set(have))


def coverage_command(module=None, out=None):
    out = out or sys.stdout
    modules = reference().modules
    if module is None:
        print(f"TF1's public names (TensorFlow {reference().tf_version}'s tf.compat.v1, plus tf.contrib and "
              "tf.estimator from TF 1.15's docs) that dflow provides:", file=out)
        for path in sorted(modules):
            have, lack = module_coverage(path)
            name = "tf" + (f".{path}" if path else "")
            print(f"  {name:<32} {len(have):>4} of {len(have) + len(lack):>4}", file=out)
        print("`dflow coverage MODULE` (e.g. tf.nn) lists a module's names.", file=out)
        return 0
    path = module[3:] if module.startswith("tf.") else ("" if module == "tf" else module)
    if path not in modules:
        print(f"dflow coverage: {module!r} is not a TF1 module of dflow's reference list; `dflow coverage` "
              "lists them", file=sys.stderr)
        return 1
    have, lack = module_coverage(path)
    name = "tf" + (f".{path}" if path else "")
    print(f"{name}: dflow provides {len(have)} of its {len(have) + len(lack)} TF1 names", file=out)
    for n in have:
        print(f"  + {name}.{n}", file=out)
    for n in lack:
        print(f"  - {name}.{n}  (missing)", file=out)
    return 0
