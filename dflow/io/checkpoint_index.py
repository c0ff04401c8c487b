"""The `checkpoint` index file of a checkpoint directory, in TF1's text format: which checkpoint is
the latest and which are kept (`CheckpointState`), written atomically (an owned temporary file,
then `os.replace`), paths relative to the directory as TF1 writes them.
"""

from __future__ import annotations

import logging
import os
import re

from ..errors import DataLossError, FailedPreconditionError
from ..storage import files

_log = logging.getLogger(__name__)

__all__ = ["CheckpointState", "generate_checkpoint_state_proto", "update_checkpoint_state", "get_checkpoint_state"]



class CheckpointState:
    """The contents of a `checkpoint` index file."""

    def __init__(self, model_checkpoint_path, all_model_checkpoint_paths=None, all_model_checkpoint_timestamps=None,
                 last_preserved_timestamp=None):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths or [])
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps or [])
        self.last_preserved_timestamp = last_preserved_timestamp

    def __repr__(self):
        return f"CheckpointState(model_checkpoint_path={self.model_checkpoint_path!r}, " \
               f"all_model_checkpoint_paths={self.all_model_checkpoint_paths!r})"


def generate_checkpoint_state_proto(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                                    all_model_checkpoint_timestamps=None, last_preserved_timestamp=None):
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    return CheckpointState(model_checkpoint_path, paths, all_model_checkpoint_timestamps, last_preserved_timestamp)


def _index_path(save_dir, latest_filename=None):
    return os.path.join(save_dir, latest_filename or "checkpoint")


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None, save_relative_paths=True):
    """Writes the index file atomically (temporary file + os.replace)."""
    state = generate_checkpoint_state_proto(save_dir, model_checkpoint_path, all_model_checkpoint_paths,
                                            all_model_checkpoint_timestamps, last_preserved_timestamp)

    def rel(p):
        # as TF1: a path given relative (to the working directory) is written relative to the index's
        # directory, so `latest_checkpoint(dir)` finds it from any working directory; an absolute one
        # stays absolute unless `save_relative_paths`
        if not os.path.isabs(p):
            return os.path.relpath(os.path.abspath(p), os.path.abspath(save_dir))
        return os.path.relpath(p, save_dir) if save_relative_paths else p

    lines = [f'model_checkpoint_path: "{rel(state.model_checkpoint_path)}"']
    lines += [f'all_model_checkpoint_paths: "{rel(p)}"' for p in state.all_model_checkpoint_paths]
    lines += [f"all_model_checkpoint_timestamps: {t}" for t in state.all_model_checkpoint_timestamps]
    if last_preserved_timestamp is not None:
        lines.append(f"last_preserved_timestamp: {last_preserved_timestamp}")
    path = _index_path(save_dir, latest_filename)
    if files.node_kind(path) not in ("missing", "file"):
        raise FailedPreconditionError(None, None, f"Cannot write the checkpoint index {path!r}: a directory or a "
                                      "link is there")
    files.write_file(path, "\n".join(lines) + "\n", f"Writing the checkpoint index {path!r}")


_LINE = re.compile(r'^(\w+):\s*"?(.*?)"?\s*$')


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState of `checkpoint_dir` (paths made absolute), or None if there is no index."""
    path = _index_path(checkpoint_dir, latest_filename)
    if not os.path.exists(path):
        return None
    model, paths, stamps, preserved = None, [], [], None
    try:
        with open(path) as f:
            for line in f:
                m = _LINE.match(line.strip())
                if not m:
                    continue
                key, value = m.groups()
                if key == "model_checkpoint_path":
                    model = value
                elif key == "all_model_checkpoint_paths":
                    paths.append(value)
                elif key == "all_model_checkpoint_timestamps":
                    stamps.append(float(value))
                elif key == "last_preserved_timestamp":
                    preserved = float(value)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise DataLossError(None, None, f"Unreadable checkpoint index {path!r}: {e}") from None
    if model is None:
        # TF1 too returns None here, with a warning: a damaged index hides every checkpoint it named
        _log.warning("%s: not a valid checkpoint state file (no model_checkpoint_path); no checkpoint is found "
                     "through it", path)
        return None

    def absolute(p):
        return p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)

    return CheckpointState(absolute(model), [absolute(p) for p in paths], stamps, preserved)
