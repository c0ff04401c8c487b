"""TensorFlow's object-based checkpoint format: the object graph of a root (a `tf.train.Checkpoint`,
a Keras model), its variables saved under their object paths, and the walk that matches a saved
graph to live objects. One writer and one reader, shared by `tf.train.Checkpoint` and Keras's
`save_weights(save_format='tf')`.

The format (TF's `tracking/util.py`): nodes numbered breadth-first from the root (node 0); a
variable is saved under `<path>/.ATTRIBUTES/VARIABLE_VALUE`, where the path joins the local names
from the root (a name's "." written "..", its "/" written ".S"); an optimizer's slot for a variable
under `<variable's path>/.OPTIMIZER_SLOT/<optimizer's path>/<slot name>/.ATTRIBUTES/VARIABLE_VALUE`,
its node appended after the breadth-first ones and listed in the optimizer's `slot_variables`; the
serialized `TrackableObjectGraph` under `_CHECKPOINTABLE_OBJECT_GRAPH` (tensorboard's copy of the
proto: the same wire format), in a V2 checkpoint (io/tf_checkpoint.py).

An object's children: a Variable has none; a `tf.train` optimizer its non-slot variables
(`beta1_power`, ...) by name; a list or tuple its items as "0", "1", ...; a dict its items by key;
any other object that has `_trackable_children()` the (name, child) pairs it returns (Keras layers
and models, `tf.train.Checkpoint`).
"""

from __future__ import annotations

import collections
import os

import numpy as np
from tensorboard.compat.proto import trackable_object_graph_pb2

from ..eager.checkpoint import _EagerSession, _Slots
from ..errors import DataLossError, FailedPreconditionError
from ..io.checkpoint import CheckpointReader
from ..io.saver import Saver
from ..io.tf_checkpoint import write_tf_checkpoint
from ..state.variables import Variable
from .optimizer import Optimizer

__all__: list[str] = []

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"  # TensorFlow's key for the object graph
VARIABLE_VALUE = "VARIABLE_VALUE"


def is_trackable(obj):
    """Whether `obj` can be a node of an object graph."""
    return isinstance(obj, (Variable, Optimizer, list, tuple, dict)) or callable(
        getattr(obj, "_trackable_children", None))


def children(obj):
    """The (local name, child) pairs of `obj` (see the module); children that are not trackable
    (numbers, strings, None) are left out."""
    if isinstance(obj, Variable):
        return []
    custom = getattr(obj, "_trackable_children", None)
    if callable(custom):
        pairs = list(custom())
    elif isinstance(obj, Optimizer):
        pairs = sorted(obj._non_slot.items())  # noqa: SLF001 - the optimizer's own state
    elif isinstance(obj, (list, tuple)):
        pairs = [(str(i), o) for i, o in enumerate(obj)]
    elif isinstance(obj, dict):
        pairs = [(str(k), o) for k, o in obj.items()]
    else:
        pairs = []
    return [(name, child) for name, child in pairs if is_trackable(child)]


def _escape(name):
    return name.replace(".", "..").replace("/", ".S")


def _slots(optimizer):
    """{slot name: {variable op name: slot variable}} of a tf.train optimizer, else {}."""
    return optimizer._slots if isinstance(optimizer, Optimizer) else {}  # noqa: SLF001


class ObjectGraph:
    """The object graph of `root` as it will be saved: `objects` (node id order), `paths` and
    `keys` {checkpoint key: variable}."""

    def __init__(self, root):
        self.objects, self.paths, self._ids = [root], {id(root): ()}, {id(root): 0}
        self.proto = trackable_object_graph_pb2.TrackableObjectGraph()
        self.keys = {}
        queue = collections.deque([root])
        protos = [self.proto.nodes.add()]
        while queue:  # breadth first, as TensorFlow numbers the nodes
            obj = queue.popleft()
            node = protos[self._ids[id(obj)]]
            for name, child in children(obj):
                if id(child) not in self._ids:
                    self._ids[id(child)] = len(self.objects)
                    self.objects.append(child)
                    self.paths[id(child)] = self.paths[id(obj)] + (name,)
                    protos.append(self.proto.nodes.add())
                    queue.append(child)
                node.children.add(node_id=self._ids[id(child)], local_name=name)
        for obj in list(self.objects):
            if isinstance(obj, Variable):
                self._attribute(obj, "/".join(_escape(n) for n in self.paths[id(obj)]))
        for opt in [o for o in self.objects if _slots(o)]:
            opt_path = "/".join(_escape(n) for n in self.paths[id(opt)])
            for slot_name, by_var in sorted(_slots(opt).items()):
                for original in [o for o in self.objects if isinstance(o, Variable)]:
                    slot = by_var.get(original.op.name)
                    if slot is None or id(slot) in self._ids:
                        continue
                    self._ids[id(slot)] = len(self.objects)
                    self.objects.append(slot)
                    self.proto.nodes.add()
                    var_path = "/".join(_escape(n) for n in self.paths[id(original)])
                    self._attribute(slot, f"{var_path}/.OPTIMIZER_SLOT/{opt_path}/{_escape(slot_name)}")
                    self.proto.nodes[self._ids[id(opt)]].slot_variables.add(
                        original_variable_node_id=self._ids[id(original)], slot_name=slot_name,
                        slot_variable_node_id=self._ids[id(slot)])
        self._mark_values()

    def _attribute(self, variable, path):
        key = f"{path}/.ATTRIBUTES/{VARIABLE_VALUE}"
        self.proto.nodes[self._ids[id(variable)]].attributes.add(name=VARIABLE_VALUE, full_name=variable.op.name,
                                                                 checkpoint_key=key)
        self.keys[key] = variable

    def _mark_values(self):
        """`has_checkpoint_values` on every node whose subtree (or slots) holds a value, as TF."""
        nodes = self.proto.nodes
        has = [bool(n.attributes) for n in nodes]
        changed = True
        while changed:
            changed = False
            for i, n in enumerate(nodes):
                if not has[i] and (any(has[c.node_id] for c in n.children)
                                   or any(has[s.slot_variable_node_id] for s in n.slot_variables)):
                    has[i] = changed = True
        for i, n in enumerate(nodes):
            n.has_checkpoint_values.value = has[i]

    def variables(self):
        return [o for o in self.objects if isinstance(o, Variable)]


def _reader(session, variables):
    """The value store the variables are read from: the session's, or the eager variables' own."""
    if session is None:
        return _Slots(variables)
    return session.variables


def write(root, prefix, session=None):
    """Writes `root`'s variables and object graph at `prefix` (TensorFlow's V2 layout; atomic);
    returns the prefix. Graph mode reads the values from `session`; an uninitialized variable is
    FailedPreconditionError naming it, with nothing written."""
    prefix = os.fspath(prefix)
    graph = ObjectGraph(root)
    store = _reader(session, graph.variables())
    values = {}
    for key, variable in graph.keys.items():
        try:
            values[key] = store.saved_value(variable.op.name)
        except FailedPreconditionError:
            raise FailedPreconditionError(None, variable.op, f"Checkpoint: variable {variable.name!r} is "
                                          f"uninitialized; nothing was written to {prefix!r}") from None
    values[OBJECT_GRAPH_KEY] = np.array(graph.proto.SerializeToString(), dtype=object)
    os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
    write_tf_checkpoint(prefix, values)
    return prefix


def read_object_graph(prefix):
    """(reader, TrackableObjectGraph or None when the checkpoint has none, e.g. a Saver's)."""
    reader = CheckpointReader(os.fspath(prefix))
    if not reader.has_tensor(OBJECT_GRAPH_KEY):
        return reader, None
    raw = reader.get_tensor(OBJECT_GRAPH_KEY)
    raw = raw.item() if isinstance(raw, np.ndarray) else raw
    proto = trackable_object_graph_pb2.TrackableObjectGraph()
    try:
        proto.ParseFromString(raw if isinstance(raw, bytes) else bytes(raw))
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError, worded for the user
        raise DataLossError(None, None, f"Checkpoint {prefix!r}: its object graph ({OBJECT_GRAPH_KEY}) is not a "
                            f"TrackableObjectGraph ({e})") from None
    return reader, proto


class Match:
    """A saved object graph matched against live objects from `root`: `by_node` {node id: object},
    `keys` {checkpoint key: variable} to restore, and what stayed unmatched on either side."""

    def __init__(self, root, proto):
        self.proto = proto
        self.by_node = {0: root}
        queue = collections.deque([0])
        while queue:  # children by local name, from the root
            node_id = queue.popleft()
            live = dict(children(self.by_node[node_id]))
            for ref in proto.nodes[node_id].children:
                child = live.get(ref.local_name)
                if child is not None and ref.node_id not in self.by_node:
                    self.by_node[ref.node_id] = child
                    queue.append(ref.node_id)
        for node_id, obj in list(self.by_node.items()):  # then the matched optimizers' slots
            for slot in proto.nodes[node_id].slot_variables:
                original = self.by_node.get(slot.original_variable_node_id)
                if not isinstance(original, Variable):
                    continue
                variable = _slots(obj).get(slot.slot_name, {}).get(original.op.name)
                if variable is not None:
                    self.by_node.setdefault(slot.slot_variable_node_id, variable)
        self.keys = {}
        for node_id, obj in self.by_node.items():
            for attr in proto.nodes[node_id].attributes:
                if attr.name == VARIABLE_VALUE and isinstance(obj, Variable):
                    self.keys[attr.checkpoint_key] = obj

    def unmatched_nodes(self):
        """Saved nodes holding values (their own or below) that no live object took."""
        return [i for i, n in enumerate(self.proto.nodes)
                if i not in self.by_node and (n.attributes or n.slot_variables or n.has_checkpoint_values.value)]

    def unmatched_objects(self, root):
        """Live objects (variables, and objects holding some) the checkpoint has no value for."""
        matched = {id(o) for o in self.by_node.values()}
        return [o for o in ObjectGraph(root).objects
                if id(o) not in matched and not (isinstance(o, (list, tuple, dict)) and not children(o))]


def restore(keys, prefix, session=None):
    """Restores `keys` {checkpoint key: variable} from `prefix` through dflow's Saver (shapes and
    dtypes checked, nothing half-restored): into `session`, or into eager variables when None."""
    if not keys:
        return
    target = session if session is not None else _EagerSession(list(keys.values()))
    Saver(var_list=keys, max_to_keep=None).restore(target, os.fspath(prefix))
