"""Devices: `DeviceSpec`, canonical device strings, `ConfigProto` and the physical-device queries.

A device string names where an op runs, TF1's way: "/job:w/replica:0/task:1/device:GPU:0".
Every field is optional; "/gpu:0", "gpu:0" and "/device:GPU:0" are the same device, and
`canonical_device` writes them all as TF1 does ("/device:GPU:0"). Ops placed on a GPU get cupy
chunks (cupy is the optional extra `dflow[gpu]`); the compiler checks placements against the
devices the executor has (`dflow/schedule/placement.py`), honouring `ConfigProto`.

(The module is `devices`, not `device`: importing a submodule `dflow.device` would replace the
public function `dflow.device(...)` with the module.)
"""

from __future__ import annotations

import copy
from collections import namedtuple

__all__ = ["DeviceSpec", "ConfigProto", "GPUOptions", "GraphOptions", "canonical_device",
           "device_type", "is_gpu_device", "PhysicalDevice", "LogicalDevice", "list_physical_devices",
           "list_logical_devices", "gpu_count"]

_FIELDS = ("job", "replica", "task", "device_type", "device_index")


class DeviceSpec:
    """A (partial) device specification (TF1's `tf.DeviceSpec`).

    `job` str, `replica`/`task`/`device_index` int, `device_type` "CPU"/"GPU"/other (upper-cased
    when it is cpu or gpu); None means unspecified, and `device_index` None with a type prints
    as "*" (any device of that type). `str(spec)` is `to_string()`, so a spec can be passed to
    `dflow.device`. `from_string` raises ValueError for an unknown field or a non-integer index.
    """

    __slots__ = _FIELDS

    def __init__(self, job=None, replica=None, task=None, device_type=None, device_index=None):
        self.job = None if job is None else str(job)
        self.replica = _opt_int(replica, "replica")
        self.task = _opt_int(task, "task")
        self.device_type = _norm_type(device_type)
        self.device_index = _opt_int(device_index, "device_index")

    # ---- parsing and printing ----------------------------------------------------------------
    @classmethod
    def from_string(cls, spec):
        """Parses "/job:w/replica:0/task:1/device:GPU:0" (any subset, any order; "/gpu:0" too)."""
        return cls().parse_from_string(spec)

    def parse_from_string(self, spec):
        """Sets the fields named in `spec` (TF1's mutating DeviceSpecV1 method); returns self."""
        if isinstance(spec, DeviceSpec):
            spec = spec.to_string()
        spec = "" if spec is None else str(spec)
        for part in spec.split("/"):
            if not part:
                continue
            bits = part.split(":")
            key = bits[0].lower()
            if key in ("job", "replica", "task") and len(bits) == 2:
                if key == "job":
                    self.job = bits[1]
                else:
                    setattr(self, key, _parse_int(bits[1], spec))
            elif key == "device" and len(bits) == 3:
                self.device_type = _norm_type(bits[1])
                self.device_index = None if bits[2] == "*" else _parse_int(bits[2], spec)
            elif len(bits) == 2 and key in ("cpu", "gpu"):
                # "cpu:0", "gpu:1": the short form of "device:CPU:0"
                self.device_type = _norm_type(bits[0])
                self.device_index = None if bits[1] == "*" else _parse_int(bits[1], spec)
            else:
                raise ValueError(f"Unknown attribute {bits[0]!r} is encountered while parsing the device "
                                 f"spec: {spec!r}.")
        return self

    def to_string(self):
        """The canonical string: "/job:J/replica:R/task:T/device:TYPE:INDEX", unset fields left out."""
        out = ""
        if self.job is not None:
            out += f"/job:{self.job}"
        if self.replica is not None:
            out += f"/replica:{self.replica}"
        if self.task is not None:
            out += f"/task:{self.task}"
        if self.device_type is not None:
            index = "*" if self.device_index is None else self.device_index
            out += f"/device:{self.device_type}:{index}"
        return out

    def __str__(self):
        return self.to_string()

    def __repr__(self):
        return ("<DeviceSpec(job={}, replica={}, task={}, device_type={}, device_index={})>"
                .format(*(getattr(self, f) for f in _FIELDS)))

    # ---- merging -----------------------------------------------------------------------------
    def merge_from(self, dev):
        """Copies the fields set in `dev` (a DeviceSpec or string) into self (TF1, mutating)."""
        dev = dev if isinstance(dev, DeviceSpec) else DeviceSpec.from_string(dev)
        for f in _FIELDS:
            v = getattr(dev, f)
            if v is not None:
                setattr(self, f, v)
        if dev.device_type is not None:
            self.device_index = dev.device_index

    def make_merged_spec(self, dev):
        """A new spec: self's fields overridden by those set in `dev`."""
        out = copy.copy(self)
        out.merge_from(dev)
        return out

    def replace(self, **kwargs):
        """A new spec with the given fields replaced."""
        fields = {f: getattr(self, f) for f in _FIELDS}
        fields.update(kwargs)
        return DeviceSpec(**fields)

    def __copy__(self):
        return DeviceSpec(*(getattr(self, f) for f in _FIELDS))

    def __eq__(self, other):
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self):
        return hash(self.to_string())


def _opt_int(v, what):
    if v is None:
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        raise ValueError(f"DeviceSpec: {what} must be an integer, got {v!r}") from None


def _parse_int(text, spec):
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"invalid literal for int() with base 10: {text!r} (device spec {spec!r})") from None


def _norm_type(t):
    if t is None:
        return None
    t = str(t)
    return t.upper() if t.lower() in ("cpu", "gpu") else t


def canonical_device(device):
    """A device string (or DeviceSpec, or None) in TF1's canonical form; "" for no device.

    "/gpu:0" -> "/device:GPU:0"; "/job:w/task:1/cpu:0" -> "/job:w/task:1/device:CPU:0".
    ValueError for a string that is not a device specification.
    """
    if device is None or device == "":
        return ""
    return DeviceSpec.from_string(device).to_string()


def device_type(device):
    """"GPU", "CPU", another type, or None when `device` (string or DeviceSpec) names none."""
    if not device:
        return None
    spec = device if isinstance(device, DeviceSpec) else DeviceSpec.from_string(device)
    return spec.device_type


def is_gpu_device(device):
    """True when `device` names a GPU ("/gpu:0", "/device:GPU:*", a DeviceSpec...)."""
    return device_type(device) == "GPU"


# ---- ConfigProto -----------------------------------------------------------------------------
class _Options:
    """A small stand-in for a protobuf message: known fields with defaults, set by keyword or
    attribute; an unknown field raises ValueError with protobuf's message."""

    _defaults: dict = {}

    def __init__(self, **kwargs):
        unknown = [k for k in kwargs if k not in self._defaults]
        if unknown:
            raise ValueError(f"Protocol message {type(self).__name__} has no {unknown[0]!r} field.")
        for k, v in self._defaults.items():
            object.__setattr__(self, k, copy.copy(v) if isinstance(v, (dict, list)) else v)
        for k, v in kwargs.items():
            setattr(self, k, v)

    def __setattr__(self, name, value):
        if name not in self._defaults:
            raise AttributeError(f"Protocol message {type(self).__name__} has no field {name!r}")
        default = self._defaults[name]
        if isinstance(default, _Options) and isinstance(value, dict):
            value = type(default)(**value)
        _check_field(type(self).__name__, name, default, value)
        object.__setattr__(self, name, value)

    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)

    def __repr__(self):
        changed = [f"{k}={getattr(self, k)!r}" for k, d in self._defaults.items() if getattr(self, k) != d]
        return f"{type(self).__name__}({', '.join(changed)})"


def _check_field(message, name, default, value):
    """Refuses, when the config is made, a value protobuf would not take for the field (TypeError,
    with protobuf's words) and a negative memory fraction or byte count (ValueError)."""
    import numbers

    if default is None:
        return
    if isinstance(default, bool):
        ok = isinstance(value, (bool, numbers.Integral))
    elif isinstance(default, int):
        ok = isinstance(value, numbers.Integral)
    elif isinstance(default, float):
        ok = isinstance(value, numbers.Real)
    elif isinstance(default, (str, dict, _Options)):
        ok = isinstance(value, type(default))
    else:  # lists (repeated fields)
        ok = isinstance(value, (list, tuple))
    if not ok:
        raise TypeError(f"{value!r} has type {type(value).__name__}, but expected one of: "
                        f"{type(default).__name__} (field {message}.{name})")
    if name in ("per_process_gpu_memory_fraction", "deferred_deletion_bytes") and not value >= 0:
        raise ValueError(f"{message}.{name} must be >= 0, got {value!r}")


class GPUOptions(_Options):
    """TF1's `tf.GPUOptions`: kept for compatibility; dflow reads `visible_device_list`."""

    _defaults = {"per_process_gpu_memory_fraction": 0.0, "allow_growth": False, "allocator_type": "",
                 "deferred_deletion_bytes": 0, "visible_device_list": "", "polling_active_delay_usecs": 0,
                 "polling_inactive_delay_msecs": 0, "force_gpu_compatible": False, "experimental": None}


class GraphOptions(_Options):
    """TF1's `tf.GraphOptions`: accepted, not used."""

    _defaults = {"enable_recv_scheduling": False, "optimizer_options": None, "build_cost_model": 0,
                 "build_cost_model_after": 0, "infer_shapes": False, "place_pruned_graph": False,
                 "enable_bfloat16_sendrecv": False, "timeline_step": 0, "rewrite_options": None}


class ConfigProto(_Options):
    """Session configuration (TF1's `tf.ConfigProto`), passed as `Session(config=...)`.

    dflow reads `allow_soft_placement` (an op placed on a missing GPU runs on the CPU, logged,
    instead of raising InvalidArgumentError), `log_device_placement` (logs each op's device through
    the `dflow.placement` logger), `device_count` ({"GPU": 0} hides the GPUs) and
    `gpu_options.visible_device_list`. Other TF1 fields are accepted and ignored; an unknown field
    raises ValueError. `config.gpu_options.allow_growth = True` works as in TF1.
    """

    _defaults = {"device_count": {}, "intra_op_parallelism_threads": 0, "inter_op_parallelism_threads": 0,
                 "use_per_session_threads": False, "session_inter_op_thread_pool": [],
                 "placement_period": 0, "device_filters": [], "gpu_options": GPUOptions(),
                 "allow_soft_placement": False, "log_device_placement": False,
                 "graph_options": GraphOptions(), "operation_timeout_in_ms": 0, "rpc_options": None,
                 "cluster_def": None, "isolate_session_state": False,
                 "share_cluster_devices_in_session": False, "experimental": None}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # each config owns its nested messages (the defaults are shared class-level instances)
        if "gpu_options" not in kwargs:
            object.__setattr__(self, "gpu_options", GPUOptions())
        if "graph_options" not in kwargs:
            object.__setattr__(self, "graph_options", GraphOptions())
        object.__setattr__(self, "device_count", dict(self.device_count))

    def visible_gpus(self, available):
        """How many of `available` local GPUs this config lets ops use."""
        n = int(available)
        limit = self.device_count.get("GPU")
        if limit is not None:
            n = min(n, int(limit))
        visible = (self.gpu_options.visible_device_list or "").strip()
        if visible:
            n = min(n, len([v for v in visible.split(",") if v.strip()]))
        return max(n, 0)


# ---- physical devices ------------------------------------------------------------------------
PhysicalDevice = namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = namedtuple("LogicalDevice", ["name", "device_type"])


def machine_memory():
    """Bytes of this machine's physical memory, what the CPU device can hold at most (None where
    the OS does not say)."""
    import os

    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def gpu_count():
    """The number of GPUs cupy sees in this process; 0 without cupy, driver or device."""
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 - no cupy, no driver or no device all mean "no GPU"
        return 0


def list_physical_devices(device_type=None):
    """This process's devices as `PhysicalDevice(name="/physical_device:CPU:0", device_type="CPU")`,
    the CPU first, then one per GPU cupy sees; `device_type` ("CPU"/"GPU") filters."""
    devices = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
    devices += [PhysicalDevice(f"/physical_device:GPU:{i}", "GPU") for i in range(gpu_count())]
    want = _norm_type(device_type)
    return [d for d in devices if want is None or d.device_type == want]


def list_logical_devices(device_type=None):
    """As `list_physical_devices`, named as ops name them ("/device:GPU:0")."""
    return [LogicalDevice(d.name.replace("/physical_device:", "/device:"), d.device_type)
            for d in list_physical_devices(device_type)]
