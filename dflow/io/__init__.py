"""Zarr sources and sinks, checkpoints and graph files."""

from .zarr_io import read_zarr, write_zarr

__all__ = ["read_zarr", "write_zarr"]
