"""How a plan's graph is reshaped for a cluster (dflow/schedule/cluster_graph.py): each source chunk
runs in one task with what is computed from it alone, so it is read once and never held between
tasks or moved; the graph computes the same values, stays acyclic, and a reduction over chunks
stays parallel.

Random layered graphs (hypothesis) check the rewrite against the original on the sync scheduler;
a logistic-regression step on the shared 2-worker LocalCluster counts the Zarr chunk reads and
the tasks the workers ran."""

from __future__ import annotations

import collections
import operator

import dask
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dflow as tf
from dflow.dask_compat import Task, TaskRef
from dflow.schedule.cluster_graph import chunk_regions

CALLS = collections.Counter()


def _source(name, i):
    CALLS[(name, i)] += 1
    return 10 * i + len(name)


def _add(*xs):
    return sum(xs) % 1_000_003


# ---- random layered graphs ---------------------------------------------------------------------------
@st.composite
def layered_graphs(draw):
    """A graph of layers of `n` blocks: sources, blockwise layers reading block i of earlier layers,
    reductions (one block reading every block of a layer), broadcasts (block i of a layer and
    the one block of a reduction or a one-block source). Returns (graph, output keys)."""
    n = draw(st.integers(1, 4))
    graph, layers = {}, []  # layers: (name, blocks)
    for j in range(draw(st.integers(1, 3))):
        name = f"src{j}"
        for i in range(n):
            graph[(name, i)] = Task((name, i), _source, name, i)
        layers.append((name, n))
    graph[("const", 0)] = Task(("const", 0), _source, "const", 0)
    layers.append(("const", 1))
    for j in range(draw(st.integers(1, 8))):
        name = f"op{j}"
        kind = draw(st.sampled_from(["blockwise", "blockwise", "reduce", "broadcast"]))
        wide = [lay for lay in layers if lay[1] == n]
        one = [lay for lay in layers if lay[1] == 1]
        if kind == "reduce" or not wide:
            src, blocks = draw(st.sampled_from(wide or one))
            graph[(name, 0)] = Task((name, 0), _add, *[TaskRef((src, i)) for i in range(blocks)])
            layers.append((name, 1))
            continue
        ins = draw(st.lists(st.sampled_from(wide), min_size=1, max_size=3, unique=True))
        extra = [draw(st.sampled_from(one))] if kind == "broadcast" else []
        for i in range(n):
            refs = [TaskRef((src, i)) for src, _ in ins] + [TaskRef((src, 0)) for src, _ in extra]
            graph[(name, i)] = Task((name, i), _add, *refs)
        layers.append((name, n))
    read = {d for node in graph.values() for d in node.dependencies}
    outputs = {k for k in graph if k not in read}
    return graph, outputs


def _values(graph, outputs):
    CALLS.clear()
    got = dict(zip(sorted(outputs), dask.get(graph, sorted(outputs), scheduler="sync")))
    return got, dict(CALLS)


@settings(max_examples=150, deadline=None)
@given(layered_graphs())
def test_regions_compute_the_same_values_reading_each_source_once(case):
    graph, outputs = case
    want, _ = _values(graph, outputs)
    new = chunk_regions(graph, outputs)
    assert set(new) >= outputs
    got, calls = _values(new, outputs)  # (a cycle would fail here)
    assert got == want
    assert all(n == 1 for n in calls.values()), calls
    # a region never holds two blocks of one layer: a reduction over chunks stays outside, parallel
    for key, node in new.items():
        if key not in graph or node is not graph[key]:
            inner = getattr(node, "args", ())[0] if node.func is not operator.getitem else None
            names = [k[0] for k in getattr(inner, "value", {})] if inner is not None else []
            assert len(names) == len(set(names)), names


def test_a_chunk_read_by_two_paths_runs_in_one_task_with_both():
    """x_i read by f_i and by g_i (which also reads f_i): one task per chunk; the sum over chunks
    stays a task of its own; the constant every chunk reads stays outside."""
    g = {("c", 0): Task(("c", 0), _source, "c", 0)}
    for i in range(3):
        g[("x", i)] = Task(("x", i), _source, "x", i)
        g[("f", i)] = Task(("f", i), _add, TaskRef(("x", i)), TaskRef(("c", 0)))
        g[("g", i)] = Task(("g", i), _add, TaskRef(("x", i)), TaskRef(("f", i)))
        g[("h", i)] = Task(("h", i), _add, TaskRef(("f", i)))
    g[("s", 0)] = Task(("s", 0), _add, *[TaskRef(("g", i)) for i in range(3)], *[TaskRef(("h", i)) for i in range(3)])
    new = chunk_regions(g, {("s", 0)})
    want, _ = _values(g, {("s", 0)})
    got, calls = _values(new, {("s", 0)})
    assert got == want and set(calls.values()) == {1}
    regions = [k for k in new if str(k[0]).startswith("dflow-region-")]
    assert len(regions) == 3  # one per chunk, each with x_i, f_i, g_i, h_i; g_i and h_i taken out of it
    assert ("c", 0) in new and ("s", 0) in new
    assert {k for k in new if k[0] in ("x", "f")} == set()


def test_a_cycle_through_a_reduction_is_not_fused():
    """x_i - mean(x): the deviation reads x_i and a value computed from every chunk; fusing it with
    x_i's region would make a cycle, so the graph keeps it outside and still runs."""
    g = {}
    for i in range(2):
        g[("x", i)] = Task(("x", i), _source, "x", i)
        g[("sq", i)] = Task(("sq", i), _add, TaskRef(("x", i)))
    g[("m", 0)] = Task(("m", 0), _add, TaskRef(("sq", 0)), TaskRef(("sq", 1)))
    for i in range(2):
        g[("d", i)] = Task(("d", i), _add, TaskRef(("x", i)), TaskRef(("m", 0)))
    out = {("d", 0), ("d", 1)}
    want, _ = _values(g, out)
    got, _ = _values(chunk_regions(g, out), out)
    assert got == want


# ---- on the cluster ----------------------------------------------------------------------------------
def _count_reads():
    from dflow.storage import chunks

    if not hasattr(chunks.ChunkIO, "_dflow_test_read"):
        chunks.ChunkIO._dflow_test_read = chunks.ChunkIO.read
        chunks.ChunkIO._dflow_test_reads = collections.Counter()

        def read(self, coords, out=None):
            chunks.ChunkIO._dflow_test_reads[(self.root, tuple(coords))] += 1
            return chunks.ChunkIO._dflow_test_read(self, coords, out)

        chunks.ChunkIO.read = read
    chunks.ChunkIO._dflow_test_reads.clear()


def _reads():
    from dflow.storage import chunks

    return dict(chunks.ChunkIO._dflow_test_reads)


def _stop_counting():
    from dflow.storage import chunks

    if hasattr(chunks.ChunkIO, "_dflow_test_read"):
        chunks.ChunkIO.read = chunks.ChunkIO._dflow_test_read
        del chunks.ChunkIO._dflow_test_read, chunks.ChunkIO._dflow_test_reads


@pytest.mark.timeout(180)
@pytest.mark.parametrize("small_workers", [False, True])
def test_a_logistic_step_reads_each_chunk_once_in_one_task_per_chunk(dask_client, tmp_path, monkeypatch,
                                                                     small_workers):
    """A full-batch GD step over a Zarr X of 4 row chunks: the forward pass and the gradient of a
    chunk run in one task, so each chunk of X and y is read once a run, also where the workers'
    memory would otherwise have each reader read it again, and the values are numpy's."""
    import zarr
    from distributed import get_task_stream

    from dflow.schedule import compiler

    monkeypatch.setattr(compiler, "ONE_TASK_BYTES", 0)  # a task per chunk, as large plans run
    if small_workers:  # as on workers of 512MB with 100 MB chunks: sources would be read by each reader
        from dflow.schedule import cluster_executor

        monkeypatch.setattr(cluster_executor, "REREAD_TASKS", 10**12)
    rng = np.random.default_rng(0)
    n, d = 400, 6
    X = rng.standard_normal((n, d)).astype(np.float32)
    Y = (X[:, :1] > 0).astype(np.float32)
    for name, a in (("X", X), ("y", Y)):
        zarr.create_array(str(tmp_path / f"{name}.zarr"), shape=a.shape, chunks=(100, a.shape[1]),
                          dtype="float32")[:] = a
    x, y = tf.io.read_zarr(str(tmp_path / "X.zarr")), tf.io.read_zarr(str(tmp_path / "y.zarr"))
    w = tf.Variable(tf.zeros([d, 1]), name="w")
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=tf.matmul(x, w)))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    dask_client.run(_count_reads)
    try:
        with tf.Session(scheduler=dask_client, small_plan_bytes=0) as s:
            s.run(w.initializer)
            s.run([train, loss])  # (the first run of a plan)
            dask_client.run(_count_reads)
            with get_task_stream(dask_client) as ts:
                s.run([train, loss])
            reads = collections.Counter()
            for per_worker in dask_client.run(_reads).values():
                reads.update(per_worker)
            got = s.run(w)
    finally:
        dask_client.run(_stop_counting)
    assert len(reads) == 8 and set(reads.values()) == {1}, reads  # 4 chunks of X and 4 of y, once each
    regions = [t for t in ts.data if str(t["key"][0] if isinstance(t["key"], tuple) else t["key"])
               .startswith("dflow-region-")]
    assert len(regions) == 4
    want = np.zeros((d, 1))
    for _ in range(2):
        p = 1 / (1 + np.exp(-(X @ want)))
        want -= 0.5 * X.T @ (p - Y) / n
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
