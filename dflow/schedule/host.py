"""Host decisions: what must be known on the host before a plan can be compiled.

A Program stops at an undecided host op (cond, while loop, while-loop gradient); a Dask lowering
stops at a tensor whose value it needs on the host (a reshape's shape computed in the same run, a
py_func output of unknown rank). Either way the compiler returns a `HostDecision` and the
session's `HostRun` settles it with nested runs (their variable commits dropped: only the
outermost run commits), then compiles again:

- a cond: its predicate is computed and the plan is specialised to the taken branch, cached per
  choice;
- a while loop (and its gradient): run here, one cached plan run per iteration; its results are
  fed to the outer plan;
- needed values: computed first; shape-like values (small integer tensors) become host constants
  of the plan, which is cached per value; others (a whole py_func output) are fed to it.

- host state: a hook may change state the session holds outside variables (`HostRun.resources`:
  a dataset iterator's position, dflow/data). It does so through the run's `RunTransaction`, which
  undoes the change if the run fails, so such state is transactional like a variable.

Each host op type's hook is registered on its OpDef (`def_host`); nothing here switches on
`op.type` in the session.
"""

from __future__ import annotations

import numpy as np

from ..errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    OpError,
    OutOfRangeError,
    UnimplementedError,
    raise_kernel_failure,
)
from ..graph.dtypes import variant
from ..graph.registry import def_host
from ..kernels import (
    control_flow_ops,  # noqa: F401 - registers Cond, While, WhileGrad (hooked below)
    state_ops,  # noqa: F401 - registers CountUpTo (hooked below)
)
from ..kernels.common import convert_to_tensor


class HostDecision:
    """What the compiler returns when the session must decide on the host first: a host op
    (`op`), or `tensors` whose values are needed (`constant`: as host constants of the plan)."""

    kind = "host"

    def __init__(self, op=None, tensors=(), constant=False, why=""):
        self.op = op
        self.tensors = list(tensors)
        self.constant = constant
        self.why = why


class RunTransaction:
    """The host-side effects of one `Session.run` outside variables (an iterator's position): a
    host hook makes its change at once and registers how to undo it (`on_failure`) or what to do
    once every task succeeded (`on_success`). Nested runs share their outer run's transaction."""

    def __init__(self):
        self._memo = {}
        self._undo = []
        self._done = []

    def once(self, key, make):
        """`make()` at most once per run for `key`: a host op met again by a nested run of the same
        run (a cond's predicate reading it) gets the same value."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def on_failure(self, fn):
        self._undo.append(fn)

    def on_success(self, fn):
        self._done.append(fn)

    def finish(self, succeeded):
        """Applies the run's outcome: success callbacks in order, or undos last to first."""
        fns = self._done if succeeded else self._undo[::-1]
        self._memo, self._undo, self._done = {}, [], []
        for fn in fns:
            fn()


class HostRun:
    """One run's host side: its feeds and values so far, its decisions, the session's host state
    (`resources`), its `memory_budget` (bytes or None) and the run's `txn`, and its `runner` (a
    `session.SessionRunner`: nested runs and plans, feed specs, variables; never the Session)."""

    def __init__(self, feeds, values, decisions, runner, *, resources=None, txn=None, memory_budget=None,
                 operation_timeout=None):
        self.feeds = feeds
        self.values = values
        self.decisions = decisions
        self.runner = runner
        self.resources = resources if resources is not None else {}
        self.txn = txn if txn is not None else RunTransaction()
        self.memory_budget = memory_budget
        # seconds a blocking hook (a queue's dequeue) may wait: ConfigProto(operation_timeout_in_ms)
        # or the run's RunOptions(timeout_in_ms); None waits for ever, as TF1
        self.operation_timeout = operation_timeout
        self.loop_records = {}  # while op -> its recorded run and captured arrays (host.loop_record)

    def settle(self, decision):
        """Settles one HostDecision, updating feeds, values or decisions."""
        if decision.op is not None:
            try:
                decision.op._opdef.host(self, decision.op)
            except OpError as e:  # a hook's own error (an iterator not initialized) names its op
                raise_kernel_failure(decision.op, e)
            return
        known = [t for t in decision.tensors if t in self.decisions or not decision.constant and t in self.feeds]
        if known:  # already settled, and the lowering still cannot go on: a limitation, not a loop
            raise UnimplementedError(None, known[0].op, decision.why)
        out = self.evaluate(decision.tensors)
        if decision.constant:
            for t, v in zip(decision.tensors, out):
                self.decisions[t] = _frozen(v)
        else:
            self.feed(decision.tensors, out)

    def evaluate(self, tensors, feeds=None, values=None):
        """The values of `tensors` computed by a nested run (its commits dropped)."""
        out, _ = self.runner.execute(list(tensors), self.feeds if feeds is None else feeds,
                                     self.values if values is None else values, self.decisions, txn=self.txn)
        return out

    def feed(self, tensors, arrays):
        self.feeds, self.values = self.with_feeds(self.feeds, self.values, tensors, arrays)

    def with_feeds(self, feeds, values, tensors, arrays):
        feeds, values = dict(feeds), dict(values)
        for t, v in zip(tensors, arrays):
            spec, v = self.runner.feed_spec(t, v)
            feeds[t], values[t] = spec, v
        return feeds, values


def _frozen(v):
    a = np.array(v, copy=True)
    a.setflags(write=False)
    return a


def decision_key(decisions):
    """A hashable key of decisions (cond choices and host constants) for the plan cache."""
    if not decisions:
        return ()
    key = []
    for k, v in decisions.items():
        if isinstance(v, np.ndarray):
            key.append((id(k), v.dtype.str, v.shape, v.tobytes()))
        else:
            key.append((id(k), v))
    return tuple(key)


@def_host("Cond")
def _decide_cond(h, op):
    (choice,) = h.evaluate([op.inputs[0]])
    h.decisions[op] = _predicate(op, op.inputs[0], choice)


def _predicate(op, t, value):
    """A cond's or loop's predicate value as a bool; anything but a scalar is refused (TF1)."""
    value = np.asarray(value)
    if value.shape != ():
        raise InvalidArgumentError(None, op, f"{op.type} op {op.name!r}: the predicate {t.name!r} must be a "
                                   f"scalar, but it has shape {list(value.shape)}")
    return bool(value)


@def_host("CountUpTo")
def _count_up_to(h, op):
    """Reads and increments the variable at once, under its lock (once per run), as TF1's CountUpTo."""
    name, limit = op.get_attr("var"), op.get_attr("limit")

    def count():
        variables = h.runner.variables
        (lock,) = h.runner.variable_locks([name])
        with lock:
            if name not in variables:
                raise FailedPreconditionError(None, op, f"Attempting to use uninitialized value {name}")
            old = np.asarray(variables.host_value(name))
            if old >= limit:
                raise OutOfRangeError(None, op, f"Reached limit of {limit}")
            variables.commit_all({name: old + old.dtype.type(1)})
        return old

    h.feed(op.outputs, [h.txn.once(op, count)])


@def_host("While")
def _decide_while(h, op):
    h.feed(op.outputs, loop_record(h, op)[0] if _gradients_of(op) else run_while(h, op))


@def_host("WhileGrad")
def _decide_while_grad(h, op):
    h.feed(op.outputs, run_while_grad(h, op))


def _gradients_of(op):
    """The WhileGrad ops built for loop `op` (each takes the loop's inputs as its own)."""
    return [c for c in op.inputs[0].consumers() if c.op_def.host is _decide_while_grad and c.get_attr("forward") is op]


def loop_record(h, op):
    """(outputs, steps, saved) of loop `op` run once per HostRun for the loop and its gradients:
    `steps` holds each iteration's loop values and the values of the body tensors its gradients
    read (`saved`), so the reverse pass neither runs the loop again nor recomputes the body."""
    if op not in h.loop_records:
        saved = list(dict.fromkeys(t for g in _gradients_of(op) for t in g.get_attr("saved")))
        steps = []
        outs = run_while(h, op, record=steps, saved=saved)
        h.loop_records[op] = (outs, steps, saved)
    return h.loop_records[op]


def loop_constants(h, op):
    """The TensorArrays a loop reads from outside (captured flows), computed once per HostRun and
    fed to every iteration (and to the reverse pass) instead of being recomputed by each: an
    array unstacked from a long sequence would cost its length per iteration."""
    key = ("constants", op)
    if key not in h.loop_records:
        n = op.get_attr("n_loop_vars")
        flows = [t for t in op.inputs[n:] if t.dtype == variant]
        h.loop_records[key] = (flows, h.evaluate(flows) if flows else [])
    return h.loop_records[key]


def _run_cached(h, elements, feeds, values, fed, plan, specs):
    """(outputs, plan, specs): `elements` run with the plan of the last step while the feed specs
    of `fed` stay the same, planned again when they change; a plan that needs host decisions (a
    cond or loop inside the body) takes the general path and is not kept."""
    new_specs = tuple(feeds[t] for t in fed)
    if plan is None or new_specs != specs:
        plan, specs = h.runner.plan(elements, feeds, h.decisions), new_specs
        if plan.kind == "host":
            return h.evaluate(elements, feeds, values), None, specs
    out, _ = h.runner.run_plan(plan, elements, values)
    return out, plan, specs


def run_while_grad(h, op):
    """The reverse pass of a while loop: the body's VJP applied once per recorded iteration, last
    to first (its body intermediates fed from the record), accumulating the captured tensors'
    gradients. One cached plan runs every step while the values keep their shapes."""
    fwd = op.get_attr("forward")
    _, steps, saved = loop_record(h, fwd)
    phs = list(fwd.get_attr("loop_vars"))
    idx = list(op.get_attr("var_index"))
    g_phs = list(op.get_attr("grad_vars"))
    vjp = list(op.get_attr("vjp"))
    mine = [saved.index(t) for t in op.get_attr("saved")]
    n_in = op.get_attr("n_forward_inputs")
    g = [np.asarray(v) for v in h.evaluate(list(op.inputs[n_in:]))]
    cap_acc = None
    plan, specs, v = None, None, None
    constants, constant_values = loop_constants(h, fwd)
    fed = phs + g_phs + list(op.get_attr("saved")) + list(constants)
    for state, inner in reversed(steps):
        values = list(state) + g + [inner[k] for k in mine] + list(constant_values)
        if plan is not None and plan.kind == "eager" and _same_specs(values, specs):
            v.update(zip(fed, values))  # as the last step's feeds: no new specs, the same plan
            out, _ = h.runner.run_plan(plan, vjp, v, fast=True)
            g = [np.asarray(x) for x in out[:len(idx)]]
            cap_acc = [_add_into(a, np.asarray(c)) for a, c in zip(cap_acc, out[len(idx):])]
            continue
        f, v = h.with_feeds(h.feeds, h.values, fed, values)
        out, plan, specs = _run_cached(h, vjp, f, v, fed, plan, specs)
        g = [np.asarray(x) for x in out[:len(idx)]]
        caps = [np.asarray(x) for x in out[len(idx):]]
        cap_acc = [_owned(c) for c in caps] if cap_acc is None else [_add_into(a, c) for a, c in zip(cap_acc, caps)]
    if cap_acc is None:
        n_caps = len(op.outputs) - len(idx)
        cap_acc = [np.zeros(t.shape.as_list() if t.shape.is_fully_defined() else (), t.dtype.np_dtype)
                   for t in op.outputs[len(idx):len(idx) + n_caps]]
    return g + cap_acc


def _owned(v):
    """A fresh accumulator for `v`: an opaque (object) value is copied, as it is added into."""
    if v.dtype != object or v.shape != ():
        return v
    out = np.empty((), dtype=object)
    out[()] = v[()] + 0
    return out


def _add_into(acc, new):
    """acc + new, an opaque value (a TensorArray's gradient) added in place (`+=`) into `acc`,
    which the reverse pass owns: its cost is the new entries', not the whole array's."""
    if acc.dtype == object and acc.shape == ():
        x = acc[()]
        x += new[()]
        acc[()] = x
        return acc
    return acc + new


def _same_specs(values, specs):
    return all(isinstance(v, (np.ndarray, np.generic)) and s.kind == "numpy" and v.shape == s.shape and
               v.dtype == s.dtype.np_dtype for v, s in zip(values, specs))


def run_while(h, op, record=None, saved=()):
    """Runs a while loop on the host: its initial values, then one cached plan per iteration
    computing body(v) and cond(body(v)) together. With `record` (a list), each iteration's
    loop values and the values of the body tensors `saved` are appended to it."""
    n = op.get_attr("n_loop_vars")
    phs = list(op.get_attr("loop_vars"))
    body = list(op.get_attr("body"))
    limit = op.get_attr("maximum_iterations")
    if limit is not None and not isinstance(limit, int):
        (limit,) = h.evaluate([convert_to_tensor(limit)])
    limit = None if limit is None else int(limit)
    current = [np.asarray(v) for v in h.evaluate(list(op.inputs[:n]))]
    step_elements = body + [op.get_attr("cond_next")] + list(saved)
    base_feeds, base_values = h.with_feeds(h.feeds, h.values, *loop_constants(h, op))
    loop_feeds, loop_values = h.with_feeds(base_feeds, base_values, phs, current)
    (go,) = h.evaluate([op.get_attr("cond")], loop_feeds, loop_values)
    i = 0
    plan, specs = None, None
    first = h.runner.plan(step_elements, loop_feeds, h.decisions)
    if first.kind == "eager" and all(loop_feeds[p].shape == tuple(v.shape) for p, v in zip(phs, current)) and \
            all(p.shape.is_fully_defined() for p in phs):
        # small state: iterate in this process, one eager plan run per iteration
        h.runner.check_initialized(first.state)
        while go and (limit is None or i < limit):
            loop_values.update(zip(phs, current))
            out, _ = h.runner.run_plan(first, step_elements, loop_values, fast=True)
            if record is not None:
                record.append((current, out[n + 1:]))
            current, go = out[:n], out[n]
            i += 1
        return [np.asarray(v) for v in current]
    while bool(go) and (limit is None or i < limit):
        loop_feeds, loop_values = h.with_feeds(base_feeds, base_values, phs, current)
        out, plan, specs = _run_cached(h, step_elements, loop_feeds, loop_values, phs, plan, specs)
        if record is not None:
            record.append((current, [np.asarray(v) for v in out[n + 1:]]))
        current = [np.asarray(v) for v in out[:n]]
        go = out[n]
        i += 1
    return current
