"""User functions of a pipeline (`map`, `filter`, `flat_map`, `interleave`): traced once into graph
ops on placeholders, then run per element by a private in-process Session.

The function is traced in the default graph (so it may read tensors built outside it, as TF1's
dataset functions capture them): its arguments are placeholders of the element's dtypes and
shapes; the tensors it reads from outside are `captured`, evaluated once when the iterator starts
and fed with each element. Each thread running the function has its own Session over the graph
(small plans run in process through the ops' eager kernels, whatever the default scheduler).
Variables read by a function see their value when the iterator started (a snapshot).
"""

from __future__ import annotations

import threading

from ..errors import InvalidArgumentError, OpError
from ..graph.graph import Graph, executing_eagerly, get_default_graph, name_scope
from ..graph.ops import Tensor
from ..kernels.array_ops import placeholder
from ..kernels.common import convert_to_tensor
from ..schedule.session import Session
from .structure import ElementSpec, flatten, is_structure, template_of

_IN_PROCESS = 1 << 62  # small_plan_bytes of the function sessions: always in process


class Function:
    """`fn` traced on `spec`'s elements. `outputs`: the flat output tensors (`out_spec` their
    structure), or, when fn returns a dataset (`returns_dataset`), that dataset's node."""

    def __init__(self, fn, spec, what, returns_dataset=False):
        self.what = what
        g = get_default_graph() if not executing_eagerly() else Graph()  # eager mode: a graph of its own
        self.graph = g
        first = g._last_id()
        with g.as_default(), g.control_dependencies(None), name_scope(what):  # ops depend on the arguments only
            self.args = [placeholder(d, s, name=f"arg{i}") for i, (d, s) in enumerate(zip(spec.dtypes, spec.shapes))]
            nested = spec.nested(self.args)
            out = fn(*nested) if isinstance(nested, tuple) and not hasattr(nested, "_fields") else fn(nested)
        self.returns_dataset = returns_dataset
        if returns_dataset:
            node = getattr(out, "_node", None)
            if node is None:
                raise TypeError(f"{what}: the function must return a Dataset, got {type(out).__name__}")
            self.node = node
            self.outputs = node.all_captured()
        else:
            if isinstance(out, list):
                out = convert_to_tensor(out)
            structure = out if is_structure(out) else None
            leaves = flatten(out) if structure is not None else [out]
            with g.as_default(), g.control_dependencies(None), name_scope(what):
                self.outputs = [convert_to_tensor(v) for v in leaves]
            template = template_of(out) if structure is not None else None
            self.out_spec = ElementSpec(template, [t.dtype for t in self.outputs], [t.shape for t in self.outputs])
        new_ops = set(g.get_operations()[first:])
        args = set(self.args)
        captured = []
        for op in new_ops:
            for t in op.inputs:
                if t.op not in new_ops:
                    captured.append(t)
        captured += [t for t in self.outputs if isinstance(t, Tensor) and t.op not in new_ops and t not in args]
        self.captured = list(dict.fromkeys(captured))
        self._local = threading.local()

    def __call__(self, ctx, element):
        """The function's flat outputs (numpy) for one flat element."""
        return self.run_fed(ctx, dict(zip(self.args, element)))

    def run_fed(self, ctx, fed):
        """The function's flat outputs (numpy) with `fed` (tensors of its graph -> values): its
        arguments, or tensors inside it a fused stage computed (csv_batches.py)."""
        sess = getattr(self._local, "session", None)
        if sess is None:
            sess = self._local.session = Session(graph=self.graph, scheduler="sync", small_plan_bytes=_IN_PROCESS)
        feeds = {t: ctx.values[t] for t in self.captured}
        feeds.update(fed)
        if not self.outputs:
            return []
        try:
            return sess.run(self.outputs, feeds)
        except OpError:
            raise
        except (ValueError, TypeError) as e:
            raise InvalidArgumentError(None, None, f"{self.what}: the function failed on an element: {e}") from e

    def dataset_context(self, ctx, element):
        """The inner pipeline's context for one element (flat_map, interleave)."""
        return ctx.with_values(dict(zip(self.outputs, self(ctx, element))))
