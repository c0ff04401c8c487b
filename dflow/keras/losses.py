"""Placeholder until the losses module lands (issue 31): `get` refuses every identifier."""


def get(identifier):
    raise ValueError(f"Unknown losses identifier: {identifier!r}")
