"""Placeholder until the metrics module lands (issue 31): `get` refuses every identifier."""


def get(identifier):
    raise ValueError(f"Unknown metrics identifier: {identifier!r}")
