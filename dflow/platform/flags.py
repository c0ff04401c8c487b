"""`tf.flags` / `tf.app.flags`: absl-py's flags, as TF1 wrapped them.

Two differences from absl, both TF1's: `FLAGS` parses `sys.argv` by itself when a flag is read
before anything parsed the command line (absl raises UnparsedFlagAccessError; here an unknown flag
on the command line then raises UnrecognizedFlagError, as TF1), and the DEFINE functions still
accept TF's old keyword names `flag_name`, `default_value`, `docstring`.

    flags.DEFINE_integer("steps", 100, "Training steps.")
    FLAGS = flags.FLAGS
    ... FLAGS.steps ...
"""

from __future__ import annotations

import functools as _functools
import logging as _logging
import sys as _sys

from absl.flags import *  # noqa: F403 - tf.flags is absl.flags' namespace
from absl.flags import FLAGS as _ABSL_FLAGS
from absl.flags import DEFINE_boolean as _DEFINE_boolean
from absl.flags import DEFINE_float as _DEFINE_float
from absl.flags import DEFINE_integer as _DEFINE_integer
from absl.flags import DEFINE_string as _DEFINE_string
from absl.flags import disclaim_key_flags

# the DEFINE wrappers below run in this module: the flags belong to the module that calls them
disclaim_key_flags()

_RENAMED_ARGUMENTS = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _accept_old_names(define):
    """`define` that also takes TF's old keyword names (with a warning, as TF1)."""

    @_functools.wraps(define)
    def wrapper(*args, **kwargs):
        old = [k for k in _RENAMED_ARGUMENTS if k in kwargs]
        for k in old:
            kwargs[_RENAMED_ARGUMENTS[k]] = kwargs.pop(k)
        if old:
            _logging.warning("Use of the keyword argument names (flag_name, default_value, docstring) is "
                             "deprecated, please use (name, default, help) instead.")
        return define(*args, **kwargs)

    return wrapper


class _FlagValuesWrapper:
    """absl's FLAGS, except that reading a flag before the command line was parsed parses `sys.argv`
    (TF1's behaviour; absl raises UnparsedFlagAccessError)."""

    def __init__(self, flags_object):
        self.__dict__["__wrapped"] = flags_object

    def __getattribute__(self, name):
        if name == "__dict__":
            return super().__getattribute__(name)
        return self.__dict__["__wrapped"].__getattribute__(name)

    def __getattr__(self, name):
        wrapped = self.__dict__["__wrapped"]
        if not wrapped.is_parsed():
            wrapped(_sys.argv)
        return wrapped.__getattr__(name)

    def __setattr__(self, name, value):
        return self.__dict__["__wrapped"].__setattr__(name, value)

    def __delattr__(self, name):
        return self.__dict__["__wrapped"].__delattr__(name)

    def __dir__(self):
        return self.__dict__["__wrapped"].__dir__()

    def __getitem__(self, name):
        return self.__dict__["__wrapped"].__getitem__(name)

    def __setitem__(self, name, flag):
        return self.__dict__["__wrapped"].__setitem__(name, flag)

    def __contains__(self, name):
        return self.__dict__["__wrapped"].__contains__(name)

    def __len__(self):
        return self.__dict__["__wrapped"].__len__()

    def __iter__(self):
        return self.__dict__["__wrapped"].__iter__()

    def __str__(self):
        return self.__dict__["__wrapped"].__str__()

    def __call__(self, *args, **kwargs):
        return self.__dict__["__wrapped"].__call__(*args, **kwargs)


DEFINE_string = _accept_old_names(_DEFINE_string)
DEFINE_boolean = _accept_old_names(_DEFINE_boolean)
DEFINE_bool = DEFINE_boolean
DEFINE_float = _accept_old_names(_DEFINE_float)
DEFINE_integer = _accept_old_names(_DEFINE_integer)

FLAGS = _FlagValuesWrapper(_ABSL_FLAGS)


from ..tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute("dflow.flags")  # a TF1 name dflow lacks says so
