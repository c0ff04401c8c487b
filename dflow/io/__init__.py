"""Zarr sources and sinks, checkpoints and graph files."""

from ..platform import io_gfile as gfile
from .graph_io import import_graph_def, read_graph_def, write_graph
from .meta_graph import export_meta_graph, import_meta_graph
from .zarr_io import read_zarr, write_zarr

__all__ = ["read_zarr", "write_zarr", "import_graph_def", "read_graph_def", "write_graph", "export_meta_graph",
           "import_meta_graph", "gfile"]

from ..tf1_names import missing_attribute as _missing_attribute  # noqa: E402

__getattr__ = _missing_attribute(__name__)
