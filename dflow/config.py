"""`dflow.config`: device queries with TensorFlow's names (`tf.config.list_physical_devices`).

    dflow.config.list_physical_devices("GPU")   # [] without cupy or a GPU
    dflow.config.experimental.list_physical_devices()
"""

from __future__ import annotations

from types import SimpleNamespace

from .devices import LogicalDevice, PhysicalDevice, list_logical_devices, list_physical_devices

__all__ = ["list_physical_devices", "list_logical_devices", "PhysicalDevice", "LogicalDevice",
           "experimental", "get_visible_devices", "set_default_session_settings", "default_session_settings"]

_memory_growth = {}
_session_settings = {}  # process-wide Session settings (set by `dflow run`)


def set_default_session_settings(scheduler=None, memory_budget=None, num_workers=None, small_plan_bytes=None):
    """dflow's own: process-wide settings for every Session created afterwards that does not give
    them itself (`scheduler` only where it gives neither `scheduler` nor `target`). This is how
    `dflow run SCRIPT --scheduler ... --workers ... --memory-budget ... [--always-dask]` runs an
    unchanged TF1 script on a cluster (`--always-dask`: small_plan_bytes=0, every plan through Dask).
    None leaves a setting unset; calling with no arguments clears them all."""
    _session_settings.clear()
    given = {"scheduler": scheduler, "memory_budget": memory_budget, "num_workers": num_workers,
             "small_plan_bytes": small_plan_bytes}
    _session_settings.update({k: v for k, v in given.items() if v is not None})


def default_session_settings():
    """The settings `set_default_session_settings` gave (a copy; {} when none)."""
    return dict(_session_settings)


def get_visible_devices(device_type=None):
    """The physical devices ops may use (all of them: dflow hides GPUs per session, through
    `ConfigProto(device_count={"GPU": 0})`)."""
    return list_physical_devices(device_type)


def _set_memory_growth(device, enable):
    """Recorded only: cupy's memory pool already grows on demand."""
    _memory_growth[getattr(device, "name", str(device))] = bool(enable)


def _get_memory_growth(device):
    return _memory_growth.get(getattr(device, "name", str(device)), True)


experimental = SimpleNamespace(
    list_physical_devices=list_physical_devices,
    list_logical_devices=list_logical_devices,
    get_visible_devices=get_visible_devices,
    set_memory_growth=_set_memory_growth,
    get_memory_growth=_get_memory_growth,
)
