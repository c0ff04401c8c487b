"""`RunOptions` and `RunMetadata`: TF1's per-run options and results of `Session.run`, as plain
Python objects with TF1's field names (no protobuf).

`Session.run(fetches, feed_dict, options=RunOptions(trace_level=RunOptions.FULL_TRACE),
run_metadata=RunMetadata())` fills `run_metadata.step_stats` the way TF1 does:
`step_stats.dev_stats[i].node_stats[j]` with `node_name`, `all_start_micros` (wall clock, µs since
the epoch), `all_end_rel_micros` (duration, µs) and `thread_id`. What a node is depends on the
path: on the in-process path one op (a fused elementwise chain is one node named after its last
op, the chain in `timeline_label`); on Dask one task (a chunk of an op or fused chain: its key in
`timeline_label`), timed on the local schedulers from its dispatch to a worker to its result's
arrival (the schedulers keep at most one task per worker in flight, so that is its run time plus
the hand-over), on a distributed cluster by the worker itself.

`timeout_in_ms`: a run past it raises `DeadlineExceededError` and commits nothing (no variable,
no Zarr write is published). The in-process path checks before each op and after the last; the
local Dask schedulers before dispatching each task and when the last one finishes (a running
kernel is never interrupted: it finishes, then the run fails); on a distributed cluster the
deadline is checked when the run returns. The other RunOptions fields are accepted and ignored.
On the processes scheduler the first run's task timings include starting the worker processes.

This module sits in the bottom layer (beside `devices.ConfigProto`): it imports nothing of dflow,
so the session (schedule) and the public namespace both use it.
"""

from __future__ import annotations


class RunOptions:
    """Options of one `Session.run` (TF1's `tf.RunOptions`)."""

    # TF1's RunOptions.TraceLevel values
    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    class TraceLevel:
        NO_TRACE = 0
        SOFTWARE_TRACE = 1
        HARDWARE_TRACE = 2
        FULL_TRACE = 3

    def __init__(self, trace_level=0, timeout_in_ms=0, inter_op_thread_pool=0, output_partition_graphs=False,
                 debug_options=None, report_tensor_allocations_upon_oom=False, experimental=None):
        if trace_level not in (0, 1, 2, 3):
            raise ValueError(f"RunOptions: unknown trace_level {trace_level!r} (expected NO_TRACE, SOFTWARE_TRACE, "
                             "HARDWARE_TRACE or FULL_TRACE)")
        if int(timeout_in_ms) < 0:
            raise ValueError(f"RunOptions: timeout_in_ms must be >= 0, got {timeout_in_ms}")
        self.trace_level = int(trace_level)
        self.timeout_in_ms = int(timeout_in_ms)
        self.inter_op_thread_pool = inter_op_thread_pool
        self.output_partition_graphs = bool(output_partition_graphs)
        self.debug_options = debug_options
        self.report_tensor_allocations_upon_oom = bool(report_tensor_allocations_upon_oom)
        self.experimental = experimental

    def __repr__(self):
        return f"RunOptions(trace_level={self.trace_level}, timeout_in_ms={self.timeout_in_ms})"


class NodeExecStats:
    """The timing of one node (an op, or a Dask task) in a run (TF1's `NodeExecStats`)."""

    __slots__ = ("node_name", "all_start_micros", "op_start_rel_micros", "op_end_rel_micros",
                 "all_end_rel_micros", "timeline_label", "thread_id")

    def __init__(self, node_name="", all_start_micros=0, all_end_rel_micros=0, timeline_label="", thread_id=0):
        self.node_name = node_name
        self.all_start_micros = int(all_start_micros)
        self.op_start_rel_micros = 0
        self.op_end_rel_micros = int(all_end_rel_micros)
        self.all_end_rel_micros = int(all_end_rel_micros)
        self.timeline_label = timeline_label
        self.thread_id = thread_id

    def __repr__(self):
        return (f"NodeExecStats(node_name={self.node_name!r}, all_start_micros={self.all_start_micros}, "
                f"all_end_rel_micros={self.all_end_rel_micros})")


class DeviceStepStats:
    """The nodes run on one device (TF1's `DeviceStepStats`)."""

    def __init__(self, device="", node_stats=None):
        self.device = device
        self.node_stats = list(node_stats or [])

    def __repr__(self):
        return f"DeviceStepStats(device={self.device!r}, {len(self.node_stats)} node_stats)"


class StepStats:
    """Per-device node timings of one run (TF1's `StepStats`)."""

    def __init__(self, dev_stats=None):
        self.dev_stats = list(dev_stats or [])

    def __repr__(self):
        return f"StepStats({self.dev_stats!r})"


class RunMetadata:
    """What a traced `Session.run` reports (TF1's `tf.RunMetadata`): `step_stats`; `partition_graphs`
    and `cost_graph` stay empty (dflow has no partitioned graphs)."""

    def __init__(self):
        self.step_stats = StepStats()
        self.partition_graphs = []
        self.cost_graph = None

    def Clear(self):  # noqa: N802 - protobuf's method name
        self.__init__()

    def HasField(self, name):  # noqa: N802 - protobuf's method name
        return name == "step_stats" and bool(self.step_stats.dev_stats)

    def __repr__(self):
        return f"RunMetadata(step_stats={self.step_stats!r})"


__all__ = ["RunOptions", "RunMetadata", "StepStats", "DeviceStepStats", "NodeExecStats"]
