"""`tf.app`: `run(main, argv)` and `flags`, TF1's entry point on absl's `app.run`.

`tf.app.run()` parses the flags of `argv` (default `sys.argv`) leaving the ones no DEFINE knows in
the list it hands to `main` (absl itself would stop on them), calls `main(argv)` (default: the
`main` of the `__main__` module) and exits with its result through `sys.exit`, as TF1.
"""

from __future__ import annotations

import sys as _sys

from absl.app import run as _absl_run

from . import flags

__all__ = ["run", "flags"]


def _parse_flags_tolerate_undef(argv):
    """Parses the known flags of `argv`; returns the rest (the program name first) for `main`."""
    return flags.FLAGS(_sys.argv if argv is None else argv, known_only=True)


def run(main=None, argv=None):
    """Runs `main(argv)` after parsing the flags, then `sys.exit`s with its result (TF1's tf.app.run)."""
    main = main or _sys.modules["__main__"].main
    _absl_run(main=main, argv=argv, flags_parser=_parse_flags_tolerate_undef)


from ..tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute("dflow.app")  # a TF1 name dflow lacks says so
