"""linalg_ops: to be filled."""

__all__ = []
