"""dflow's error hierarchy, mirroring TensorFlow 1.x (`tf.errors`).

Every error a user's program can cause is one of these, naming the tensor or op, what was
expected and what came. `OpError(node_def, op, message)` keeps TF1's signature; `str(e)` is the
message. This module imports nothing else of dflow, so every layer may raise these.
"""

from __future__ import annotations

import errno
import linecache
import os
import sys
import sysconfig

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A failure while building or running a graph, tied (where known) to one op."""

    error_code = UNKNOWN

    def __init__(self, node_def=None, op=None, message="", error_code=None):
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message
        if error_code is not None:
            self.error_code = error_code

    def __str__(self):
        return self.message

    def __reduce__(self):  # picklable across process and distributed schedulers (the op stays here)
        state = {k: v for k, v in vars(self).items() if k not in ("node_def", "op", "message")}
        return (type(self), (self.node_def, None, self.message), state or None)


def _subclass(name, code, doc):
    cls = type(name, (OpError,), {"error_code": code, "__doc__": doc})
    cls.__module__ = __name__
    return cls


CancelledError = _subclass("CancelledError", CANCELLED, "An operation or run was cancelled.")
UnknownError = _subclass("UnknownError", UNKNOWN, "An error with no better category.")
InvalidArgumentError = _subclass(
    "InvalidArgumentError", INVALID_ARGUMENT, "An op got an invalid argument (a bad feed, shape or value)."
)
DeadlineExceededError = _subclass("DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired.")
NotFoundError = _subclass("NotFoundError", NOT_FOUND, "A requested entity (file, array, variable) was not found.")
AlreadyExistsError = _subclass("AlreadyExistsError", ALREADY_EXISTS, "An entity to create already exists.")
PermissionDeniedError = _subclass("PermissionDeniedError", PERMISSION_DENIED, "Permission denied.")
ResourceExhaustedError = _subclass(
    "ResourceExhaustedError", RESOURCE_EXHAUSTED, "A resource (memory budget, disk) would be exhausted."
)
FailedPreconditionError = _subclass(
    "FailedPreconditionError", FAILED_PRECONDITION, "The system is not in a state the op needs (closed session, uninitialized variable)."
)
AbortedError = _subclass("AbortedError", ABORTED, "An operation was aborted.")
OutOfRangeError = _subclass("OutOfRangeError", OUT_OF_RANGE, "An iteration or index went past its valid range.")
UnimplementedError = _subclass("UnimplementedError", UNIMPLEMENTED, "The operation is not implemented or supported.")
InternalError = _subclass("InternalError", INTERNAL, "An invariant of dflow itself was broken (a bug).")
UnavailableError = _subclass("UnavailableError", UNAVAILABLE, "A service (scheduler, store) is unavailable.")
DataLossError = _subclass("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption (checksum mismatch, malformed file).")
UnauthenticatedError = _subclass("UnauthenticatedError", UNAUTHENTICATED, "Missing valid credentials.")

_BY_CODE = {cls.error_code: cls for cls in (
    CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError, NotFoundError, AlreadyExistsError,
    PermissionDeniedError, ResourceExhaustedError, FailedPreconditionError, AbortedError, OutOfRangeError,
    UnimplementedError, InternalError, UnavailableError, DataLossError, UnauthenticatedError)}


def exception_type_from_error_code(error_code):
    """The OpError subclass of a canonical error code (3 -> InvalidArgumentError); KeyError for an
    unknown code, as TF."""
    return _BY_CODE[error_code]


def error_code_from_exception_type(cls):
    """The canonical error code of an OpError subclass (NotFoundError -> 5); KeyError for anything
    else, as TF."""
    if isinstance(cls, type) and issubclass(cls, OpError):
        return cls.error_code
    raise KeyError(cls)




def kernel_failure(op, exc, op_type=None, op_name=None, where="", shapes=None):
    """The InvalidArgumentError for a kernel or lowering of `op` that raised `exc` (the one wording
    of the in-process plan, the fused chunk kernels, the Dask lowering and its tasks).

    An OpError the kernel raised itself (check_numerics, Assert, an index out of range) keeps its
    class and words and gets its op, as TF1 gives it: `.op` (in this process), `.node_def` (a dict
    naming the op: it survives pickling from a worker, where the session puts `.op` back, see
    `attach_op`) and the line "[[node NAME]]". `op` may be None where only the op's type and name
    travel (a fused kernel on a worker). `shapes`: the input shapes the op got, named in the message
    (a run-time shape error)."""
    op_type = op_type or getattr(op, "type", "?")
    op_name = op_name or getattr(op, "name", "?")
    if isinstance(exc, OpError):
        if exc.node_def is None and op_name != "?":
            exc.node_def = {"name": op_name, "op": op_type}
            exc.message = f"{exc.message}\n\t [[node {op_name}]]"
            exc.args = (exc.message,)
        if exc.op is None and op is not None:
            exc.op = op
        return with_origin(exc)
    if isinstance(exc, MemoryError):  # an allocation that cannot succeed (TF1: OOM)
        err = ResourceExhaustedError({"name": op_name, "op": op_type}, op, f"{op_type} op {op_name!r} failed{where}: "
                                     f"{exc}")
        err.over_allocation = isinstance(exc, OverAllocation)  # the session runs the plan on Dask instead
        return err
    if isinstance(exc, OSError) and (isinstance(exc, PermissionError) or exc.errno in _OS_ERRNO_CLASS):
        # the machine's state, not the op's input: a full disk or a read-only directory, in words
        cls = PermissionDeniedError if isinstance(exc, PermissionError) else _OS_ERRNO_CLASS[exc.errno]
        target = f" writing {exc.filename!r}" if exc.filename else where
        return with_origin(cls({"name": op_name, "op": op_type}, op, f"{op_type} op {op_name!r} failed{target}: "
                               f"{exc.strerror or exc}"))
    got = ""
    if shapes is not None:
        got = " with input shapes: " + ", ".join(_shape_text(s) for s in shapes)
    return with_origin(InvalidArgumentError({"name": op_name, "op": op_type}, op,
                                            f"{op_type} op {op_name!r} failed{where}{got}: {type(exc).__name__}: {exc}"))


_OS_ERRNO_CLASS = {errno.ENOSPC: ResourceExhaustedError, errno.EDQUOT: ResourceExhaustedError,
                   errno.EROFS: PermissionDeniedError, errno.EACCES: PermissionDeniedError}


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
# not the user's code: dflow, the standard library and installed packages (pytest, runpy, dask...)
_LIBRARY_DIRS = tuple(sorted({_PACKAGE_DIR} | {os.path.join(p, "") for p in (
    sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib"),
    sysconfig.get_paths().get("purelib"), sysconfig.get_paths().get("platlib")) if p}))
_ORIGIN_FRAMES = 8  # the innermost user frames an op keeps


def user_frames(limit=_ORIGIN_FRAMES):
    """Where the caller is in the user's code: (file, line, function) of the innermost `limit`
    frames outside dflow, the standard library and installed packages, innermost first (what an op
    keeps of its creation); frames of `<string>` code (python -c, exec) count as the user's."""
    out = []
    frame = sys._getframe(1)
    while frame is not None and len(out) < limit:
        code = frame.f_code
        filename = code.co_filename
        if not filename.startswith(_LIBRARY_DIRS) and not filename.startswith("<frozen"):
            out.append((filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    return tuple(out)


def origin_text(op_name, frames):
    """TF1's "Original stack trace for 'name':" block: the frames outermost first, each with its
    line's text (read when the error is worded, not when the op was made)."""
    lines = [f"Original stack trace for {op_name!r}:"]
    for filename, lineno, name in reversed(frames):
        lines.append(f'  File "{filename}", line {lineno}, in {name}')
        text = linecache.getline(filename, lineno).strip()
        if text:
            lines.append(f"    {text}")
    return "\n".join(lines)


def with_origin(exc):
    """`exc` with the creation trace of its op appended (once), when the op kept one."""
    op = getattr(exc, "op", None)
    frames = getattr(op, "_origin", None) if op is not None else None
    if not isinstance(exc, OpError) or not frames or getattr(exc, "_origin_added", False):
        return exc
    exc.message = f"{exc.message}\n\n{origin_text(op.name, frames)}"
    exc.args = (exc.message,)
    exc._origin_added = True
    return exc


def _shape_text(shape):
    """A shape as TF1 writes it in messages: [2,3]; None for an input without a shape."""
    if shape is None:
        return "?"
    return "[" + ",".join("?" if d is None or d != d else str(int(d)) for d in shape) + "]"


class OverAllocation(MemoryError):
    """An in-process kernel's output over the run's allocation limit (its memory budget: see
    kernels.common `check_allocation`): the session runs the plan through Dask, chunked, instead."""


def attach_op(exc, graph):
    """Puts `.op` back on an OpError that crossed a process boundary (pickling keeps `node_def`,
    not the op): the op of `graph` its node_def names."""
    if isinstance(exc, OpError) and exc.op is None and isinstance(exc.node_def, dict):
        try:
            exc.op = graph.get_operation_by_name(exc.node_def.get("name"))
        except (KeyError, ValueError, TypeError):
            pass
    return with_origin(exc)


def raise_kernel_failure(op, exc, **kwargs):
    """Raises `kernel_failure(op, exc, ...)` from `exc`; an OpError is raised as it is (`raise e from e`
    would make the error its own cause, a cycle that pickling to the parent process cannot follow)."""
    err = kernel_failure(op, exc, **kwargs)
    if err is exc:
        raise exc
    raise err from exc


__all__ = [
    "OpError",
    "CancelledError",
    "UnknownError",
    "InvalidArgumentError",
    "DeadlineExceededError",
    "NotFoundError",
    "AlreadyExistsError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "FailedPreconditionError",
    "AbortedError",
    "OutOfRangeError",
    "UnimplementedError",
    "InternalError",
    "UnavailableError",
    "DataLossError",
    "UnauthenticatedError",
    "exception_type_from_error_code",
    "error_code_from_exception_type",
]
