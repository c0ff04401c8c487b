"""Where values live outside a run: Zarr chunk IO, values on local disk or on a cluster, and the
decisions about which variables are kept on disk and in what layout.

Below kernels, io and schedule; imports only `dflow.errors`, `dflow.dask_compat`, numpy, zarr.
"""
