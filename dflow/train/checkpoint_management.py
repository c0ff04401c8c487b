"""Checkpoint housekeeping of TF1's `tf.train` (checkpoint_management.py): file times, removal,
waiting for new checkpoints, warm starting from one, and the global step's type check."""

from __future__ import annotations

import os
import re
import time

from tensorboard.compat.proto.cluster_pb2 import ClusterDef, JobDef
from tensorboard.compat.proto.saver_pb2 import SaverDef

from ..graph.graph import get_default_graph
from ..graph.keys import GraphKeys
from ..io.checkpoint import checkpoint_found, init_from_checkpoint, is_complete, latest_checkpoint
from ..io.saver import _remove_checkpoint
from ..state.variables import Variable
from ..storage import files

__all__ = ["get_checkpoint_mtimes", "remove_checkpoint", "checkpoints_iterator", "assert_global_step",
           "warm_start", "SaverDef", "ClusterDef", "JobDef"]


def get_checkpoint_mtimes(checkpoint_prefixes):
    """The modification times (seconds since the epoch) of the checkpoints at these prefixes, in
    order; prefixes with no complete checkpoint are skipped (TF1)."""
    out = []
    for prefix in checkpoint_prefixes:
        prefix = os.fspath(prefix)
        if is_complete(prefix):
            out.append(os.path.getmtime(files.published(prefix)))
        elif checkpoint_found(prefix):
            out.append(os.path.getmtime(prefix + ".index"))
    return out


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=None, meta_graph_suffix="meta"):
    """Deletes the checkpoint at `checkpoint_prefix` (dflow's or TensorFlow's) and its meta graph;
    nothing there is not an error (TF1)."""
    del checkpoint_format_version
    _remove_checkpoint(os.fspath(checkpoint_prefix), meta_graph_suffix)


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yields each new latest checkpoint of `checkpoint_dir` as it appears, at most one per
    `min_interval_secs`; after `timeout` seconds without one, stops unless `timeout_fn()` returns
    False (then waits again)."""
    last = None
    while True:
        start = time.time()
        path = _wait_for_new_checkpoint(checkpoint_dir, last, timeout)
        if path is None:
            if timeout_fn is None or timeout_fn():
                return
            continue
        last = path
        yield path
        remaining = start + min_interval_secs - time.time()
        if remaining > 0:
            time.sleep(remaining)


def _wait_for_new_checkpoint(checkpoint_dir, last, timeout, seconds_to_sleep=1.0):
    stop = None if timeout is None else time.time() + timeout
    while True:
        path = latest_checkpoint(checkpoint_dir)
        if path is not None and path != last:
            return path
        if stop is not None and time.time() + seconds_to_sleep > stop:
            return None
        time.sleep(seconds_to_sleep)


def assert_global_step(global_step_tensor):
    """TypeError unless `global_step_tensor` is an integer scalar (TF1's words)."""
    if not (isinstance(global_step_tensor, Variable) or hasattr(global_step_tensor, "op")):
        raise TypeError(f"Existing \"global_step\" must be a Variable or Tensor: {global_step_tensor}.")
    if not global_step_tensor.dtype.base_dtype.is_integer:
        raise TypeError(f"Existing \"global_step\" does not have integer type: {global_step_tensor.dtype}")
    shape = global_step_tensor.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f"Existing \"global_step\" is not scalar: {shape}")


def warm_start(ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
               var_name_to_prev_var_name=None):
    """Initializes the chosen variables from a checkpoint (their initializers read it, as
    `init_from_checkpoint`): `vars_to_warm_start` is a regex over the trainable variables' names, a
    list of regexes or variables over all global variables, or None (nothing).
    `var_name_to_prev_var_name` renames variables whose checkpoint name differs. Vocabulary
    remapping (`var_name_to_vocab_info`) is not supported: ValueError."""
    if var_name_to_vocab_info:
        raise ValueError("warm_start: dflow does not remap vocabularies (var_name_to_vocab_info); warm start "
                         f"{sorted(var_name_to_vocab_info)} without it or initialize them yourself")
    if vars_to_warm_start is None:
        return
    graph = get_default_graph()
    if isinstance(vars_to_warm_start, str):
        pattern = re.compile(vars_to_warm_start)
        chosen = [v for v in graph.get_collection(GraphKeys.TRAINABLE_VARIABLES) if pattern.match(v.op.name)]
    else:
        candidates = graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
        chosen, seen = [], set()
        for item in vars_to_warm_start:
            found = [item] if isinstance(item, Variable) else \
                [v for v in candidates if re.match(item, v.op.name)]
            for v in found:
                if v.op.name not in seen:
                    seen.add(v.op.name)
                    chosen.append(v)
    renames = dict(var_name_to_prev_var_name or {})
    assignment = {renames.get(v.op.name, v.op.name): v for v in chosen}
    if assignment:
        init_from_checkpoint(ckpt_to_initialize_from, assignment)
