"""`dflow.config`: device queries with TensorFlow's names (`tf.config.list_physical_devices`).

    dflow.config.list_physical_devices("GPU")   # [] without cupy or a GPU
    dflow.config.experimental.list_physical_devices()
"""

from __future__ import annotations

from types import SimpleNamespace

from .devices import LogicalDevice, PhysicalDevice, list_logical_devices, list_physical_devices

__all__ = ["list_physical_devices", "list_logical_devices", "PhysicalDevice", "LogicalDevice",
           "experimental", "get_visible_devices"]

_memory_growth = {}


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
