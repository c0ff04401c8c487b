"""Placeholder until the optimizers module lands (issue 31): `get` refuses every identifier."""


def get(identifier):
    raise ValueError(f"Unknown optimizers identifier: {identifier!r}")
