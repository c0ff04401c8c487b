"""How an EagerPlan runs its steps (`StepCode`: interpreted, then generated code); a step's
failure is its op's error as the evaluator words it (`graph/evaluate.py`). Kernels bound to
their compile-time inputs are `Bound`s (`bound`)."""

from __future__ import annotations

from typing import NamedTuple

from ..graph.evaluate import apply, raise_failure


class KernelStep(NamedTuple):
    """One step of an EagerPlan: `fn(xp, *env[inputs], **attrs)` sets `outputs` (with `ctx=` when
    `run_state`: a random op's counter); `op` is the op its failure names."""

    op: object
    fn: object
    inputs: list
    outputs: list
    attrs: dict
    run_state: bool


class _Instr(NamedTuple):
    """A KernelStep as the interpreter runs it: `output` its one output (None: several), `frees` the
    values dropped after it, `label` what a trace names it."""

    op: object
    fn: object
    inputs: tuple
    attrs: dict | None
    run_state: bool
    output: object
    outputs: list
    frees: tuple | None
    label: tuple


class StepCode:
    """How an EagerPlan runs its steps. The first runs of a plan interpret them (a loop over one
    tuple per step, values in the run's env); its third untraced run turns them into one generated
    Python function, each step a call of its kernel on registers (a list; feeds and constants read
    from env first), outputs dropped after their last reader, fetched and committed ones written
    back to env at the end. Generating costs Python's compiler time per step,
    so plans run once or twice (initializers, evaluations, a test's runs) never pay it; a
    training loop's plan gains (bench_word2vec). Traced runs (RunOptions) always interpret.

    A kernel's exception names its op (`evaluate.raise_failure`, with the values it was given); a
    bound kernel that fails runs its op's own kernel on every input first (`Bound`)."""

    GENERATE_AT = 3

    def __init__(self, steps, frees, labels, kept):
        self.steps, self.frees, self.labels, self.kept = steps, frees, labels, kept
        self._program = [_Instr(s.op, s.fn, tuple(s.inputs), s.attrs or None, s.run_state,
                                s.outputs[0] if len(s.outputs) == 1 else None, s.outputs, f or None, label)
                         for s, f, label in zip(steps, frees, labels)]
        self._code = None
        self._runs = 0

    def run(self, env, xp, rc, trace):
        if trace is None:
            if self._code is not None:
                return self._code(env, xp, rc)
            self._runs += 1
            if self._runs >= self.GENERATE_AT:
                self._code = self._make()
                return self._code(env, xp, rc)
        return self._interpret(env, xp, rc, trace)

    def _interpret(self, env, xp, rc, trace):
        for op, fn, inputs, attrs, run_state, output, outputs, frees, label in self._program:
            args = [env[t] for t in inputs]
            kwargs = attrs or {}
            if run_state:
                kwargs = dict(kwargs, ctx=rc.eager_ctx(op))
            try:
                if trace is not None:
                    with trace.op(*label):
                        out = fn(xp, *args, **kwargs)
                else:
                    out = fn(xp, *args, **kwargs)
            except Exception as e:  # an OpError keeps its class, and gets its op named
                raise_failure(op, e, args)
            del args
            if output is not None:
                # a multi-output op type (split, unstack) may have one output: its kernel's 1-tuple
                env[output] = out[0] if isinstance(out, (tuple, list)) else out
            else:
                for t, v in zip(outputs, out):
                    env[t] = v
            out = None
            if frees is not None:
                for t in frees:
                    del env[t]

    def _make(self):
        slots = {}  # tensor -> its register
        consts = {"_SEQ": (tuple, list), "_failed": self._failed}
        head, body = [], []

        def slot(t):
            r = slots.get(t)
            if r is None:  # a value the run's env holds (a feed, a constant)
                r = slots[t] = len(slots)
                head.append(f"    R[{r}] = env[t{r}]")
                consts[f"t{r}"] = t
            return r

        read_env = set()
        args_of = []
        for i, (step, frees) in enumerate(zip(self.steps, self.frees)):
            before = len(slots)
            args = [slot(t) for t in step.inputs]
            read_env.update(r for r in args if r >= before)
            args_of.append(args)
            consts[f"f{i}"] = step.fn
            call = f"f{i}(" + ", ".join(["xp"] + [f"R[{r}]" for r in args])
            if step.run_state:
                consts[f"o{i}"] = step.op
                call += f", ctx=rc.eager_ctx(o{i})"
            if step.attrs:
                consts[f"k{i}"] = step.attrs
                call += f", **k{i}"
            call += ")"
            body += [f"        i = {i}", f"        v = {call}"]
            outputs = step.outputs
            if len(outputs) == 1:
                r = slots[outputs[0]] = len(slots)
                # a multi-output op type (split, unstack) may have one output: its kernel's 1-tuple
                body.append(f"        R[{r}] = v[0] if isinstance(v, _SEQ) else v")
            else:
                for j, t in enumerate(outputs):
                    r = slots[t] = len(slots)
                    body.append(f"        R[{r}] = v[{j}]")
            body.append("        v = None")
            for t in frees:
                if slots[t] not in read_env:  # (a value read from env stays there)
                    body.append(f"        R[{slots[t]}] = None")
        tail = []
        for t in self.kept:
            r = slots.get(t)
            if r is not None and r not in read_env:
                consts[f"t{r}"] = t
                tail.append(f"        env[t{r}] = R[{r}]")
        self._args = args_of
        src = "\n".join(["def steps(env, xp, rc):", "    i = -1", f"    R = [None] * {max(len(slots), 1)}"]
                        + head + ["    try:"] + (body or ["        pass"]) + tail
                        + ["    except Exception as e:  # an OpError keeps its class, and gets its op named",
                           "        _failed(i, e, R)"])
        exec(compile(src, f"<dflow plan of {len(self.steps)} steps>", "exec"), consts)
        return consts["steps"]

    def _failed(self, i, e, registers):
        """Raises step i's exception as its op's failure."""
        if i < 0:
            raise e
        raise_failure(self.steps[i].op, e, [registers[r] for r in self._args[i]])


class Bound:
    """A step's kernel bound to its inputs known at compile time (OpDef `bind`); `inputs` are the
    others, the ones it takes."""

    __slots__ = ("kernel", "known", "inputs", "op")

    def __init__(self, kernel, known, inputs, op):
        self.kernel, self.known, self.inputs, self.op = kernel, known, inputs, op

    def __call__(self, xp, *args):
        try:
            return self.kernel(xp, *args)
        except Exception:  # noqa: BLE001 - the op's own kernel on every input says what failed
            return apply(self.op, xp, self.all_args(args))  # (its error, worded, passes the step as it is)

    def all_args(self, args):
        """Every input's value, in the op's order, from the values this kernel took."""
        rest = iter(args)
        return [self.known[i] if i in self.known else next(rest) for i in range(len(self.known) + len(args))]


def bound(step, consts):
    """The step's kernel bound to its inputs known at compile time, or None."""
    opdef = step.opdef
    if opdef.bind is None or opdef.traits.run_state:
        return None
    known = {i: consts[t] for i, t in enumerate(step.inputs) if t is not None and t in consts}
    if not known:
        return None
    try:
        kernel = opdef.bind(step.op, known)
    except Exception:  # noqa: BLE001 - a value the kernel refuses: it runs (and fails) unbound
        return None
    if kernel is None:
        return None
    return Bound(kernel, known, [t for i, t in enumerate(step.inputs) if i not in known], step.op)
