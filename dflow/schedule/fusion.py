"""Fusion of elementwise chains: one chunk kernel per chain instead of one Dask task per op.

While lowering, an elementwise op does not become a dask array at once: it becomes an `Expr`,
a node over external inputs (dask arrays), inlined scalar constants and other Exprs. An Expr is
turned into one `da.elemwise` call (`materialize`) only when something other than a single
elementwise consumer needs it, so a chain of 1000 ops becomes one blockwise layer whose chunk
kernel runs the 1000 eager kernels back to back on each chunk.
"""

from __future__ import annotations

import itertools

import dask.array as da

from ..dask_compat import concatenate3, elemwise
from ..errors import raise_kernel_failure
from ..graph.evaluate import namespace, quiet
from .memory import max_chunk_bytes

_ids = itertools.count()


class Ext:
    """A leaf: an input that is already a dask array (`tensor`: the graph tensor it holds)."""

    __slots__ = ("array", "tensor")

    def __init__(self, array, tensor=None):
        self.array = array
        self.tensor = tensor


def unknown_size_leaves(root):
    """The tensors of the leaves of an Expr whose sizes are data-dependent (unknown chunk sizes)."""
    out, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for a in node.args:
            if isinstance(a, Expr):
                stack.append(a)
            elif isinstance(a, Ext) and a.tensor is not None and any(d != d for d in a.array.shape):
                out.append(a.tensor)
    return list(dict.fromkeys(out))


class Const:
    """A leaf: a 0-d constant inlined into the kernel."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class Expr:
    """One elementwise op applied to leaves or other Exprs; `materialize` memoizes its array."""

    __slots__ = ("fn", "attrs", "args", "op_name", "shape", "dtype", "_array", "monotone")

    def __init__(self, fn, attrs, args, op_name, shape, dtype, monotone=()):
        self.fn = fn
        self.attrs = attrs
        self.args = args
        self.op_name = op_name
        self.shape = shape
        self.dtype = dtype
        self.monotone = monotone  # the op's OpDef `monotone`
        self._array = None

    def materialize(self, log=None):
        if self._array is None:
            self._array, leaves = _materialize(self)
            if log is not None:
                log.append((self.op_name, leaves, self._array))
        return self._array


def _materialize(root):
    kernel, leaves = compile_expr(root)
    name = f"{root.op_name.replace('/', '.')}-fused-{next(_ids)}-{id(kernel):x}"
    return elemwise(kernel, *_aligned(leaves), dtype=root.dtype.np_dtype, name=name), leaves


def monotone_in(root, leaf):
    """Whether chain `root` is non-decreasing in its leaf array `leaf` (every op on a path from it
    reads it only through its OpDef `monotone` inputs; a chain of float dtype)."""
    memo = {}

    def reads(node):  # whether `node` depends on the leaf
        if isinstance(node, Ext):
            return node.array is leaf
        if not isinstance(node, Expr):
            return False
        if node._array is not None:
            return node._array is leaf
        if id(node) not in memo:
            memo[id(node)] = any(reads(a) for a in node.args)
        return memo[id(node)]

    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if not isinstance(node, Expr) or node._array is not None or id(node) in seen:
            continue
        seen.add(id(node))
        if not node.dtype.is_floating:
            return False
        for i, a in enumerate(node.args):
            if reads(a):
                if i not in node.monotone:
                    return False
                stack.append(a)
    return reads(root)


def compile_expr(root):
    """(FusedKernel, leaf dask arrays) of the chain ending at `root` (nothing is built in dask)."""
    leaves, leaf_index = [], {}
    consts = []
    program = []  # (fn, arg slots, attrs, op name); slots index into [leaves..., consts..., steps...]
    slot_of = {}
    order = []
    # iterative post-order over the Expr DAG (chains can be thousands deep)
    stack = [(root, False)]
    seen = set()
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for a in node.args:
            if isinstance(a, Expr) and a._array is None and id(a) not in seen:
                stack.append((a, False))
    for node in order:
        for a in node.args:
            if isinstance(a, Expr) and a._array is not None:
                a = Ext(a._array)
            if isinstance(a, Ext) and id(a.array) not in leaf_index:
                leaf_index[id(a.array)] = len(leaves)
                leaves.append(a.array)
    n_leaves = len(leaves)
    for node in order:
        for a in node.args:
            if isinstance(a, Const):
                slot_of[id(a)] = n_leaves + len(consts)
                consts.append(a.value)
    base = n_leaves + len(consts)
    for i, node in enumerate(order):
        slots = []
        for a in node.args:
            if isinstance(a, Expr):
                slots.append(leaf_index[id(a._array)] if a._array is not None else slot_of[id(a)])
            elif isinstance(a, Ext):
                slots.append(leaf_index[id(a.array)])
            else:
                slots.append(slot_of[id(a)])
        slot_of[id(node)] = base + i
        program.append((node.fn, tuple(slots), node.attrs, node.op_name))
    return FusedKernel(tuple(program), tuple(consts)), leaves


def _unknown(a):
    return any(c != c for dim in a.chunks for c in dim)


def _aligned(leaves):
    """Leaves whose blocks pair up correctly. Dask pairs blocks by position; for arrays of unknown
    (data-dependent) chunk sizes, as two boolean_mask results, the i-th blocks need not hold the
    same rows. Unless every such leaf is one and the same array, each leaf is merged into a single
    block (correct for any sizes; a size mismatch then fails in the kernel, as in numpy)."""
    unknown = {a.name for a in leaves if getattr(a, "ndim", 0) and _unknown(a) and a.npartitions > 1}
    if not unknown or (len(unknown) == 1 and all(a.name in unknown or not a.ndim or a.size == 1 for a in leaves)):
        return leaves
    return [_single_block(a) if getattr(a, "ndim", 0) and a.npartitions > 1 else a for a in leaves]


def _single_block(a):
    """`a` as one block (its blocks concatenated in one task; works for unknown chunk sizes)."""
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    if not _unknown(a):
        return a.rechunk(tuple((-1,) * a.ndim))
    name = f"one-block-{tokenize(a.name)}"
    layer = {(name,) + (0,) * a.ndim: (concatenate3, a.__dask_keys__())}
    chunks = tuple((sum(dim),) if not any(c != c for c in dim) else (float("nan"),) for dim in a.chunks)
    return da.Array(HighLevelGraph.from_collections(name, layer, dependencies=[a]), name, chunks, meta=a._meta)


class FusedKernel:
    """The chunk kernel of a fused chain: runs each op's eager kernel in order on one chunk.

    Each intermediate is dropped right after its last use, so a chain of n ops holds a few
    chunk-sized arrays at a time, not n of them.
    """

    __slots__ = ("program", "consts", "frees", "__name__")

    def __init__(self, program, consts):
        self.program = program
        self.consts = consts
        self.frees = _last_uses(program)
        self.__name__ = "fused"

    def __call__(self, *chunks):
        xp = namespace(chunks)
        with quiet():  # silent as TF1 on any worker thread (a cluster's too)
            return self.eager(xp, *chunks)

    def eager(self, xp, *chunks):
        """The chain on whole arrays of namespace `xp` (an eager kernel's signature); on large
        chunks by row slabs into one output, so intermediates stay a few MB (in cache)."""
        if all(getattr(c, "nbytes", 0) <= 4 * SLAB_BYTES for c in chunks):
            return self._run(xp, chunks)  # small: whole (the slab machinery costs a small step more than it saves)
        out, n0 = None, None
        for start, stop, r in self._slabs(xp, chunks):
            if start is None:
                return r  # small chunks, or broadcasting along axis 0: run whole
            if out is None:
                n0 = max(c.shape[0] for c in chunks if getattr(c, "ndim", 0) == r.ndim)
                out = xp.empty((n0,) + tuple(r.shape[1:]), dtype=r.dtype)
            out[start:stop] = r
        return out

    def iter_slabs(self, xp, chunks):
        """The chain's result on consecutive row slabs (one slab: the whole result when the chunks
        are small or a slab's result does not keep its rows), for a consumer that streams them (a
        Zarr write): the task then holds its inputs and one slab, never the whole result."""
        for _, _, r in self._slabs(xp, chunks):
            yield r

    def _slabs(self, xp, chunks):
        """(start, stop, result) per row slab of axis 0; inputs not spanning axis 0 (a bias, a column
        statistic) are passed whole. One (None, None, whole result) when the chunks are small or
        the first slab's result does not keep its rows."""
        rows = _slab_rows(chunks)
        if not rows:
            yield None, None, self._run(xp, chunks)
            return
        ndim = max(getattr(c, "ndim", 0) for c in chunks)
        n0 = max(c.shape[0] for c in chunks if getattr(c, "ndim", 0) == ndim)
        split = [getattr(c, "ndim", 0) == ndim and c.shape[0] == n0 for c in chunks]
        for start in range(0, n0, rows):
            stop = min(n0, start + rows)
            r = self._run(xp, [c[start:stop] if s else c for c, s in zip(chunks, split)])
            if start == 0 and (getattr(r, "ndim", 0) != ndim or r.shape[0] != stop - start):
                yield None, None, self._run(xp, chunks)  # broadcasting along axis 0: no slabs
                return
            yield start, stop, r

    def _run(self, xp, chunks):
        regs = list(chunks)
        regs.extend(self.consts)
        for (fn, slots, attrs, op_name), frees in zip(self.program, self.frees):
            try:
                regs.append(fn(xp, *[regs[s] for s in slots], **attrs))
            except Exception as e:
                raise_kernel_failure(None, e, op_type="fused", op_name=op_name)
            for s in frees:
                regs[s] = None
        return regs[-1]

    def __reduce__(self):
        return (FusedKernel, (self.program, self.consts))


SLAB_BYTES = 4 << 20  # chunks whose largest input is over 4× this run by slabs of about this size


def _slab_rows(chunks):
    """Rows per slab for these chunks, or 0 to run them whole (small, or not arrays)."""
    arrays = [c for c in chunks if getattr(c, "ndim", 0)]
    if not arrays or not all(hasattr(c, "nbytes") for c in arrays):
        return 0  # (array-API arrays without nbytes run whole)
    ndim = max(c.ndim for c in arrays)
    n0 = max(c.shape[0] for c in arrays if c.ndim == ndim)
    big = max(c.nbytes for c in arrays)
    if big <= 4 * SLAB_BYTES or n0 < 2:
        return 0
    row = max(c.nbytes // c.shape[0] for c in arrays if c.ndim == ndim and c.shape[0] == n0)
    return max(1, SLAB_BYTES // max(1, row))


def fused_scratch_chunks(leaves, arr):
    """Output-chunk-sized buffers a fused task holds besides its output, for the memory projection:
    none when its chunks are large enough to run by slabs, else one (two intermediates alive)."""
    sizes = [max_chunk_bytes(a) for a in list(leaves) + [arr]]
    return 0 if all(b is not None for b in sizes) and max(sizes) > 4 * SLAB_BYTES else 1


def _last_uses(program):
    """For each step, the register slots whose last reader it is (the result slot is kept)."""
    last = {}
    for i, (_, slots, _, _) in enumerate(program):
        for s in slots:
            last[s] = i
    frees = [[] for _ in program]
    for s, i in last.items():
        frees[i].append(s)
    return tuple(tuple(f) for f in frees)


class Group:
    """A fused chain of a Program: its root step (whose output leaves the chain), the tensors it
    reads from outside (`leaves`) and its kernel over them."""

    __slots__ = ("root", "leaves", "kernel")

    def __init__(self, root, leaves, kernel):
        self.root = root
        self.leaves = leaves
        self.kernel = kernel


def fusable_step(step):
    d = step.opdef
    return d.traits.elementwise and not step.select and len(step.outputs) == 1 and not d.traits.run_state and \
        not d.traits.stateful and d.eager is not None


def fusion_groups(program):
    """{op: Group} for the elementwise chains of `program` with two or more ops, by the rule the
    Dask lowering fuses with (`Program.fuses_into_consumer`): an elementwise op whose output only
    its single elementwise consumer reads runs inside that consumer's kernel."""
    by_tensor = {}
    for step in program.steps:
        if fusable_step(step):
            by_tensor[step.outputs[0]] = step
    consumer_fusable = set()
    for step in program.steps:
        if fusable_step(step):
            for t in step.inputs:
                if t in by_tensor and program.fuses_into_consumer(t):
                    consumer_fusable.add(t)
    groups = {}
    for step in program.steps:
        if not fusable_step(step) or step.outputs[0] in consumer_fusable:
            continue
        # a root: collect its interior (post-order, so producers come first)
        order, leaves, leaf_slot, seen = [], [], {}, set()
        stack = [(step, False)]
        while stack:
            s, done = stack.pop()
            if done:
                order.append(s)
                continue
            if s in seen:
                continue
            seen.add(s)
            stack.append((s, True))
            for t in reversed(s.inputs):
                if t in consumer_fusable and by_tensor[t] not in seen:
                    stack.append((by_tensor[t], False))
        if len(order) < 2:
            continue
        for s in order:
            for t in s.inputs:
                if t not in consumer_fusable and t not in leaf_slot:
                    leaf_slot[t] = len(leaves)
                    leaves.append(t)
        slot_of = dict(leaf_slot)
        program_steps = []
        for i, s in enumerate(order):
            slots = tuple(slot_of[t] for t in s.inputs)
            slot_of[s.outputs[0]] = len(leaves) + i
            program_steps.append((s.opdef.eager, slots, s.op._attrs, s.op._name))
        group = Group(step, leaves, FusedKernel(tuple(program_steps), ()))
        for s in order:
            groups[s.op] = group
    return groups


# ---- epilogues: a chain run inside its producer's kernel, slab by slab (in-process plans) ------


def epilogue_producers(program, groups):
    """({chain root op: (producer step, leaf slot, op after which the fused step runs)}, {producer
    output: chain result}) for the fused chains of `fusion_groups` that run inside their
    producer's kernel on row slabs of its output while they are in cache (OpDef `epilogue`:
    Conv2D + BiasAdd + Relu).

    The chain must read the producer's single output, which nothing else reads, fetches or
    commits, except ops reading only its shape (OpDef `shape_only`: the Shape of a gradient's
    unbroadcast): they read the chain's result instead (the second map), which has the same shape
    and dtype. The chain's other leaves must broadcast into that output without growing it and
    without spanning its rows (lower rank: a bias, a scalar), so a slab of rows gives the same
    slab of the chain's result, which is written back into the producer's buffer. The fused step
    runs as soon as its inputs are ready (after the producer and the other leaves' ops), so before
    the root's consumers; the shape readers must come after that point."""
    producer_of = {s.outputs[0]: s for s in program.steps
                   if s.opdef.traits.epilogue and len(s.outputs) == 1 and not s.select and not s.opdef.traits.run_state}
    position = {s.op: i for i, s in enumerate(program.steps)}
    shape_readers = {}
    for i, step in enumerate(program.steps):
        for t in step.inputs:
            if t in producer_of and step.opdef.traits.shape_only:
                shape_readers.setdefault(t, []).append(i)
    fused, reroute = {}, {}
    for group in {id(g): g for g in groups.values()}.values():
        found = [(i, t) for i, t in enumerate(group.leaves) if t in producer_of]
        if len(found) != 1:
            continue
        slot, t = found[0]
        result, readers = group.root.outputs[0], shape_readers.get(t, [])
        others = [leaf for leaf in group.leaves if leaf is not t]
        if t in program.kept or program.reads.get(t, 0) != 1 + len(readers) or result.dtype != t.dtype or \
                not _same_shape(result.shape, t.shape) or \
                not all(leaf is not None and _broadcasts_into(leaf.shape, t.shape) for leaf in others):
            continue
        ready = max([position[producer_of[t].op]] + [position.get(leaf.op, -1) for leaf in others])
        if all(i > ready for i in readers):
            fused[group.root.op] = (producer_of[t], slot, program.steps[ready].op)
            reroute[t] = result
    return fused, reroute


def _same_shape(a, b):
    return a.ndims is not None and a.ndims == b.ndims and a.as_list() == b.as_list()


def _broadcasts_into(leaf, out):
    """A leaf of known, lower rank whose every dim is 1 or the (known) dim of `out` it meets."""
    if leaf.ndims is None or out.ndims is None or leaf.ndims >= out.ndims or not leaf.is_fully_defined():
        return False
    tail = out.as_list()[out.ndims - leaf.ndims:]
    return all(d == 1 or d == o for d, o in zip(leaf.as_list(), tail))
