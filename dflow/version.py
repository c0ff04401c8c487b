"""dflow's version (a bottom-level module: anything may read it)."""

__version__ = "0.1.0"
