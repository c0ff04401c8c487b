"""The compiler (graph -> Plan), plan cache, executors and `Session`."""

from .session import InteractiveSession, Session

__all__ = ["Session", "InteractiveSession"]
