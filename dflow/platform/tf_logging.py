"""`tf.logging`: TF1's log functions on the standard `logging` module's `tensorflow` logger.

As TF1: the logger is named "tensorflow" (so `logging.getLogger("tensorflow")` configures it), its
level is unset (WARNING through the root logger) until `set_verbosity`, and when nothing configured
the root logger it writes `INFO:tensorflow:message` lines to stderr. Under `tf.app.run` absl's
handler sits on the root logger, and the lines come out in absl's format (`I1125 13:40:00.1 ...]`).
The logger's own handler stands aside while the root logger has handlers (the record reaches them),
so a line is never written twice (TF1 wrote both formats under app.run). `log_every_n` /
`log_first_n` count per calling line.
"""

from __future__ import annotations

import logging as _logging
import sys as _sys
import threading
from logging import DEBUG, ERROR, FATAL, INFO, WARN

__all__ = ["DEBUG", "ERROR", "FATAL", "INFO", "WARN", "TaskLevelStatusMessage", "debug", "error", "fatal", "flush",
           "get_verbosity", "info", "log", "log_every_n", "log_first_n", "log_if", "set_verbosity", "vlog", "warn",
           "warning"]  # and get_logger, which is tf.get_logger (TF1 has no tf.logging.get_logger)

_logger = None
_logger_lock = threading.Lock()
_log_counter_per_token = {}


_OWN_FILES = (__file__, _logging.__file__)


def _caller():
    """(code, frame) of the nearest frame outside this module and the logging package."""
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_filename in _OWN_FILES:
        f = f.f_back
    return (f.f_code, f) if f is not None else (None, None)


def _find_caller(stack_info=False, stacklevel=1):
    """The user's line, not this module's (the logger's records name where tf.logging was called)."""
    code, frame = _caller()
    sinfo = None
    if stack_info:
        import traceback

        sinfo = "".join(traceback.format_stack())
    if code is None:
        return "(unknown file)", 0, "(unknown function)", sinfo
    return code.co_filename, frame.f_lineno, code.co_name, sinfo


class _StderrUnlessRootHandles(_logging.StreamHandler):
    """TF1's default handler, silent while the record will reach a root handler (absl's under
    tf.app.run, or the user's basicConfig) anyway."""

    def emit(self, record):
        logger = _logging.getLogger("tensorflow")
        if logger.propagate and _logging.getLogger().handlers:
            return
        super().emit(record)


def get_logger():
    """The `tensorflow` logger (a `logging.Logger`), given a stderr handler the first time if the
    root logger has none."""
    global _logger
    if _logger is not None:
        return _logger
    with _logger_lock:
        if _logger is None:
            logger = _logging.getLogger("tensorflow")
            logger.findCaller = _find_caller
            if not _logging.getLogger().handlers:
                interactive = hasattr(_sys, "ps1") or bool(_sys.flags.interactive)
                if interactive:
                    logger.setLevel(INFO)
                handler = _StderrUnlessRootHandles(_sys.stdout if interactive else _sys.stderr)
                handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT, None))
                logger.addHandler(handler)
            _logger = logger
    return _logger


def log(level, msg, *args, **kwargs):
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs):
    get_logger().debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    get_logger().info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    get_logger().warning(msg, *args, **kwargs)


def warn(msg, *args, **kwargs):
    get_logger().warning(msg, *args, **kwargs)


def error(msg, *args, **kwargs):
    get_logger().error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs):
    """Logs at FATAL (CRITICAL); as TF1's, it does not end the program."""
    get_logger().fatal(msg, *args, **kwargs)


def vlog(level, msg, *args, **kwargs):
    """Logs `msg` at the numeric `level` (TF1's vlog is `log`)."""
    get_logger().log(level, msg, *args, **kwargs)


def TaskLevelStatusMessage(msg):  # noqa: N802 - TF1 name
    error(msg)


def flush():
    """NotImplementedError, as TF1's (its handlers flush every record)."""
    raise NotImplementedError()


def _next_count(token):
    _log_counter_per_token[token] = 1 + _log_counter_per_token.get(token, -1)
    return _log_counter_per_token[token]


def _file_and_line():
    code, frame = _caller()
    return ("<unknown>", 0) if code is None else (code.co_filename, frame.f_lineno)


def log_if(level, msg, condition, *args):
    """Logs `msg % args` at `level` only if `condition` holds."""
    if condition:
        vlog(level, msg, *args)


def log_every_n(level, msg, n, *args):
    """Logs `msg % args` at `level` on the 1st, (n+1)th, (2n+1)th ... call from this line."""
    count = _next_count(_file_and_line())
    log_if(level, msg, not (count % n), *args)


def log_first_n(level, msg, n, *args):
    """Logs `msg % args` at `level` on the first `n` calls from this line only."""
    count = _next_count(_file_and_line())
    log_if(level, msg, count < n, *args)


def get_verbosity():
    """The logger's effective level."""
    return get_logger().getEffectiveLevel()


def set_verbosity(v):
    """Sets the threshold: messages below level `v` (DEBUG, INFO, WARN, ERROR, FATAL) are dropped."""
    get_logger().setLevel(v)


from ..tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute("dflow.logging")  # a TF1 name dflow lacks says so
