"""`tf.train.Checkpoint` and `tf.train.CheckpointManager` (TF 1.15's object-based checkpoints): the variables reachable from named
objects (variables, optimizers and their slots, Keras models and layers, lists, dicts, other
Checkpoints) saved under their object paths in TensorFlow's format (train/trackable.py), so
TensorFlow restores dflow's checkpoints and dflow TensorFlow's.

Eagerly `save`/`write`/`restore` act at once. In graph mode they take a session (`session=`, else
the default one): `save` reads the values from it; `restore` returns a status whose
`run_restore_ops(sess)` or `initialize_or_restore(sess)` loads them, as TF1's restore ops would.
The status's assertions say what did not match: `assert_consumed` (every saved value and every
live object matched), `assert_existing_objects_matched` (every live object), `assert_nontrivial_match`.
A checkpoint without an object graph (a `tf.train.Saver`'s) is restored by variable names, as TF's.
"""

from __future__ import annotations

import collections
import logging
import os
import time

import numpy as np

from ..errors import FailedPreconditionError
from ..graph import dtypes
from ..graph.graph import executing_eagerly, get_default_graph
from ..graph.ops import get_default_session
from ..io.checkpoint_index import get_checkpoint_state, update_checkpoint_state
from ..io.saver import _remove_checkpoint
from ..kernels.state_ops import assign_add
from ..state.variables import Variable
from . import trackable

_log = logging.getLogger("tensorflow")

__all__ = ["Checkpoint", "CheckpointManager"]


def _session(session, what):
    """The session a graph-mode checkpoint reads or loads through: `session`, else the default one."""
    if executing_eagerly():
        return None
    session = session if session is not None else get_default_session()
    if session is None:
        raise ValueError(f"Checkpoint.{what} in graph mode needs a session: pass session=sess or run it in a "
                         "`with sess.as_default():` block")
    return session


def _initialize(session, variables):
    """Runs the initializers of those of `variables` that have no value in `session`."""
    todo = []
    for v in variables:
        try:
            session.variables.saved_value(v.op.name)
        except FailedPreconditionError:
            todo.append(v.initializer)
    if todo:
        session.run(todo)


class Checkpoint:
    """`Checkpoint(**objects)`: `save(prefix)` writes `prefix-N` (N the `save_counter`, counted
    in the checkpoint) and records it in the directory's `checkpoint` file; `write(prefix)` writes
    just `prefix`; `restore(path)` returns a status (see the module). Objects may also be
    attached later as attributes (`ckpt.model = model`)."""

    def __init__(self, **kwargs):
        object.__setattr__(self, "_deps", {})
        object.__setattr__(self, "_save_counter", None)
        object.__setattr__(self, "_counter_op", None)
        for name, obj in sorted(kwargs.items()):
            setattr(self, name, obj)

    def __setattr__(self, name, value):
        if not name.startswith("_"):
            if not trackable.is_trackable(value):
                raise ValueError(f"`Checkpoint` was expecting a trackable object (an object derived from "
                                 f"`TrackableBase`), got {value!r}. If you believe this object should be trackable "
                                 "(i.e. it is part of the TensorFlow Python API and manages state), please open an "
                                 "issue.")
            self._deps[name] = value
        object.__setattr__(self, name, value)

    def _trackable_children(self):
        out = list(self._deps.items())
        if self._save_counter is not None:
            out.append(("save_counter", self._save_counter))
        return out

    @property
    def save_counter(self):
        """An int64 variable counting `save()` calls (made on first use; restored with the rest)."""
        if self._save_counter is None:
            counter = Variable(np.int64(0), name="save_counter", trainable=False, dtype=dtypes.int64)
            object.__setattr__(self, "_save_counter", counter)
        return self._save_counter

    def write(self, file_prefix, session=None):
        """Writes the checkpoint at `file_prefix` (no counter, no `checkpoint` file); returns it."""
        return trackable.write(self, os.fspath(file_prefix), _session(session, "write"))

    def save(self, file_prefix, session=None):
        """Adds one to `save_counter`, writes `file_prefix-<save_counter>` and makes it the
        directory's latest checkpoint; returns its path."""
        session = _session(session, "save")
        number = self._count(session)
        path = self.write(f"{os.fspath(file_prefix)}-{number}", session=session)
        update_checkpoint_state(os.path.dirname(os.path.abspath(path)), path, [path])
        return path

    def _count(self, session):
        """save_counter += 1; its new value."""
        counter = self.save_counter
        if session is None:
            counter.assign_add(np.int64(1))
            return int(counter.numpy())
        _initialize(session, [counter])
        if self._counter_op is None or self._counter_op.graph is not get_default_graph():
            with counter.graph.as_default():
                object.__setattr__(self, "_counter_op", assign_add(counter, np.int64(1)))
        return int(session.run(self._counter_op))

    def restore(self, save_path):
        """Matches the checkpoint at `save_path` to these objects and restores what matched (at
        once eagerly; by the status's run_restore_ops/initialize_or_restore in graph mode).
        `save_path=None`: a status that only initializes. NotFoundError / DataLossError from the
        files as the Saver's."""
        if save_path is None:
            return InitializationOnlyStatus(self)
        save_path = os.fspath(save_path)
        _ = self.save_counter  # restored with the rest, as TF's
        reader, proto = trackable.read_object_graph(save_path)
        if proto is None:
            keys = {v.op.name: v for v in trackable.ObjectGraph(self).variables() if reader.has_tensor(v.op.name)}
            status = NameBasedSaverStatus(self, save_path, keys)
        else:
            status = CheckpointLoadStatus(self, save_path, trackable.Match(self, proto))
        if executing_eagerly():
            trackable.restore(status._keys, save_path)  # noqa: SLF001
        return status


class _Status:
    """Shared by the statuses: the root, the path and the {key: variable} to restore."""

    def __init__(self, root, save_path, keys):
        self._root, self._save_path, self._keys = root, save_path, keys

    def expect_partial(self):
        """Silences the warnings about unmatched values (dflow gives none); returns self."""
        return self

    def run_restore_ops(self, session=None):
        """Graph mode: loads the matched variables' values into `session` (default: the default
        session). Eagerly the restore already happened."""
        session = _session(session, "restore")
        if session is not None and self._keys:
            trackable.restore(self._keys, self._save_path, session)

    def initialize_or_restore(self, session=None):
        """Graph mode: run_restore_ops, then initializes the objects' variables the checkpoint
        had no value for."""
        session = _session(session, "restore")
        if session is None:
            return
        self.run_restore_ops(session)
        restored = {id(v) for v in self._keys.values()}
        _initialize(session, [v for v in trackable.ObjectGraph(self._root).variables() if id(v) not in restored])


def _describe(objects):
    return ", ".join(getattr(o, "name", None) or type(o).__name__ for o in objects)


class CheckpointLoadStatus(_Status):
    """What `restore` matched, with TF's assertions (AssertionError)."""

    def __init__(self, root, save_path, match):
        super().__init__(root, save_path, match.keys)
        self._match = match

    def assert_consumed(self):
        """Every saved object and every live object matched; returns self."""
        unmatched = self._match.unmatched_nodes()
        if unmatched:
            node = self._match.proto.nodes[unmatched[0]]
            keys = [a.checkpoint_key for a in node.attributes]
            raise AssertionError(f"Unresolved object in checkpoint {self._save_path!r}: node {unmatched[0]} "
                                 f"({', '.join(keys) or 'an object with values below it'}) and "
                                 f"{len(unmatched) - 1} more matched no Python object")
        return self.assert_existing_objects_matched()

    def assert_existing_objects_matched(self):
        """Every live object (variable, or object holding some) had a value; returns self."""
        missing = self._match.unmatched_objects(self._root)
        if missing:
            raise AssertionError("Some Python objects were not bound to checkpointed values, likely due to changes "
                                 f"in the Python program: {_describe(missing)} (checkpoint {self._save_path!r})")
        return self

    def assert_nontrivial_match(self):
        """Something besides the root matched; returns self."""
        if len(self._match.by_node) <= 1:
            raise AssertionError("Nothing except the root object matched a checkpointed value. Typically this means "
                                 f"that the checkpoint {self._save_path!r} does not match the Python program.")
        return self


_NAME_BASED = ("Restoring a name-based tf.train.Saver checkpoint using the object-based restore API. This mode uses "
               "global names to match variables, and so is somewhat fragile. Prefer re-encoding training checkpoints "
               "in the object-based format: run save() on the object-based saver (the same one this message is coming "
               "from) and use that checkpoint in the future.")


class NameBasedSaverStatus(_Status):
    """A Saver's checkpoint (no object graph), restored by the variables' names."""

    def assert_consumed(self):
        raise AssertionError(_NAME_BASED)

    def assert_existing_objects_matched(self):
        raise AssertionError(_NAME_BASED)

    def assert_nontrivial_match(self):
        if not self._keys:
            raise AssertionError(_NAME_BASED)
        return self


class InitializationOnlyStatus(_Status):
    """`restore(None)`: nothing to restore; `initialize_or_restore` initializes."""

    def __init__(self, root):
        super().__init__(root, None, {})

    def _no_checkpoint(self, *args, **kwargs):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    assert_consumed = assert_existing_objects_matched = assert_nontrivial_match = _no_checkpoint

    def run_restore_ops(self, session=None):
        raise AssertionError("No checkpoint specified, so no restore ops are available (save_path=None to "
                             "Saver.restore).")

    def initialize_or_restore(self, session=None):
        session = _session(session, "restore")
        if session is not None:
            _initialize(session, trackable.ObjectGraph(self._root).variables())



class CheckpointManager:
    """Numbered saves of a Checkpoint in `directory` (`<checkpoint_name>-N`), keeping the last
    `max_to_keep` (None: all; the older ones deleted, except one every
    `keep_checkpoint_every_n_hours`), recorded with their times in the directory's `checkpoint`
    file, from which a new manager picks up `checkpoints` and `latest_checkpoint`."""

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt"):
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got {max_to_keep}.")
        self._checkpoint = checkpoint
        self._max_to_keep, self._keep_every_hours = max_to_keep, keep_checkpoint_every_n_hours
        self._directory = os.fspath(directory)
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._maybe_delete = collections.OrderedDict()
        state = get_checkpoint_state(self._directory)
        now = time.time()
        if state is None:
            self._latest_checkpoint, self._last_preserved = None, now - 1.0
            return
        self._latest_checkpoint = state.model_checkpoint_path
        self._last_preserved = min(state.last_preserved_timestamp or 0.0, now)
        stamps = list(state.all_model_checkpoint_timestamps or []) or \
            [self._last_preserved] * len(state.all_model_checkpoint_paths)
        for path, stamp in zip(state.all_model_checkpoint_paths, stamps):
            stamp = min(stamp, now)
            if stamp > self._last_preserved:
                self._maybe_delete[path] = stamp

    directory = property(lambda self: self._directory)
    checkpoint = property(lambda self: self._checkpoint)

    @property
    def latest_checkpoint(self):
        """The newest checkpoint's prefix, or None."""
        return self._latest_checkpoint

    @property
    def checkpoints(self):
        """The managed checkpoints' prefixes, oldest first."""
        return list(self._maybe_delete)

    def save(self, checkpoint_number=None):
        """Adds one to the checkpoint's `save_counter` and writes `<prefix>-N`, N being
        `checkpoint_number` (an int or an integer variable/tensor, e.g. the global step) or the
        counter; deletes what falls out of `max_to_keep`; returns the new prefix."""
        session = _session(None, "save")
        number = self._checkpoint._count(session)  # noqa: SLF001 - the counter is the Checkpoint's
        if checkpoint_number is not None:
            if isinstance(checkpoint_number, (int, np.integer)):
                number = int(checkpoint_number)
            elif session is not None:
                number = int(session.run(checkpoint_number))
            else:
                number = int(np.asarray(getattr(checkpoint_number, "numpy", lambda: checkpoint_number)()))
        path = self._checkpoint.write(f"{self._prefix}-{number}", session=session)
        self._maybe_delete.pop(path, None)
        self._maybe_delete[path] = time.time()
        self._latest_checkpoint = path
        self._sweep()
        update_checkpoint_state(self._directory, path, list(self._maybe_delete),
                                all_model_checkpoint_timestamps=list(self._maybe_delete.values()),
                                last_preserved_timestamp=self._last_preserved)
        return path

    def _sweep(self):
        if not self._max_to_keep:
            return
        while len(self._maybe_delete) > self._max_to_keep:
            path, stamp = self._maybe_delete.popitem(last=False)
            if self._keep_every_hours and stamp - self._keep_every_hours * 3600.0 >= self._last_preserved:
                self._last_preserved = stamp  # kept for good
                continue
            _log.info("CheckpointManager: deleting %s", path)
            _remove_checkpoint(path)
