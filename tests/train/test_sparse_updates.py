"""Sparse gradients applied as row updates: optimizers give the dense answers, rows not looked
up stay bit-identical, and a step writes only the looked-up rows (storage/patch.py counters), on
the in-process path and through Dask."""

from __future__ import annotations

import numpy as np
import pytest

import dflow as tf
from dflow.storage import patch
from tests.conftest import make_session

V, D = 40, 3
INIT = np.random.default_rng(0).standard_normal((V, D)).astype(np.float32)
IDS = np.array([3, 7, 3, 11], np.int32)

OPTIMIZERS = {
    "gd": lambda: tf.train.GradientDescentOptimizer(0.1),
    "momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "adagrad": lambda: tf.train.AdagradOptimizer(0.1),
    "adam": lambda: tf.train.AdamOptimizer(0.1),
    "rmsprop": lambda: tf.train.RMSPropOptimizer(0.1, momentum=0.5),
    "rmsprop-centered": lambda: tf.train.RMSPropOptimizer(0.1, momentum=0.5, centered=True),
    "ftrl": lambda: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01),
}


def _train(make_opt, sparse, mode="eager", steps=3):
    g = tf.Graph()
    with g.as_default():
        emb = tf.Variable(INIT, name="emb")
        x = tf.gather(emb, IDS) if sparse else tf.matmul(tf.one_hot(IDS, V), emb)
        loss = tf.reduce_sum(tf.square(x - 1.0))
        (grad, _), = make_opt().compute_gradients(loss)
        assert isinstance(grad, tf.IndexedSlices) == sparse
        train = make_opt().minimize(loss)
        init = tf.global_variables_initializer()
    with make_session(mode, graph=g) as s:
        s.run(init)
        for _ in range(steps):
            s.run(train)
        return s.run(emb)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_sparse_update_equals_dense(name):
    sparse, dense = _train(OPTIMIZERS[name], True), _train(OPTIMIZERS[name], False)
    untouched = np.setdiff1d(np.arange(V), IDS)
    if name == "ftrl":  # the dense rule recomputes every row from its slots; TF1's sparse one only these
        np.testing.assert_allclose(sparse[IDS], dense[IDS], rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_allclose(sparse, dense, rtol=1e-5, atol=1e-6)
    if name != "adam":  # TF1's Adam moves every row (its slots decay densely)
        assert np.array_equal(sparse[untouched], INIT[untouched])  # bit-identical


@pytest.mark.parametrize("mode", ["eager", "sync", "threads", "processes"])
def test_sparse_update_matches_across_schedulers(mode):
    np.testing.assert_allclose(_train(OPTIMIZERS["momentum"], True, mode), _train(OPTIMIZERS["momentum"], True),
                               rtol=1e-6)


@pytest.mark.parametrize("mode", ["eager", "sync", "threads"])
def test_a_step_writes_only_the_looked_up_rows(mode):
    """The committed array is updated in place: no copy of the variable, only its rows written."""
    vocab, dim = 20000, 16
    g = tf.Graph()
    with g.as_default():
        emb = tf.Variable(tf.zeros([vocab, dim]), name="emb")
        ids = tf.placeholder(tf.int32, [8])
        loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(emb, ids) - 1.0))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        # no tensor of the embedding's size between the loss and the update but the variable and its scatter
        sized = [op for op in g.get_operations() if op.type not in ("VariableV2", "ScatterSub", "Assign", "Fill",
                                                                    "Const", "Identity") and
                 any(t.shape.is_fully_defined() and t.shape.num_elements() >= vocab * dim for t in op.outputs)]
        assert sized == []
        init = tf.global_variables_initializer()
    with make_session(mode, graph=g) as s:
        s.run(init)
        before = s.run(emb)
        held = s.variables.values[emb.op.name]
        patch.reset_counters()
        s.run(train, {ids: [1, 2, 2, 5, 9, 9, 9, 0]})
        assert s.variables.values[emb.op.name] is held  # applied in place
        assert patch.TOUCHED["bytes_copied"] == 0
        assert patch.TOUCHED["rows"] == 8 and patch.TOUCHED["bytes_in_place"] == 8 * dim * 4
        after = s.run(emb)
    changed = np.nonzero((after != before).any(axis=1))[0]
    assert changed.tolist() == [0, 1, 2, 5, 9]
    np.testing.assert_allclose(after[9], np.full(dim, 3.0))  # three lookups: 0 - 0.5 * 3 * 2 * (0 - 1)
    assert not before.any()  # a fetched value is a copy: the in-place update did not change it


def test_in_place_update_never_changes_a_value_a_run_reads():
    """A fetched variable, and a reader's snapshot, keep their values (copy-on-write)."""
    emb = tf.Variable(np.zeros([6, 2], np.float32))
    up = tf.scatter_add(emb, [1], [[1.0, 1.0]])
    with tf.Session() as s:
        s.run(emb.initializer)
        v0 = s.run(emb)
        view = s.run(emb[1:3])
        s.run(up.op)
        assert not v0.any() and not view.any()
        np.testing.assert_array_equal(s.run(up), [[0, 0], [2, 2], [0, 0], [0, 0], [0, 0], [0, 0]])
        np.testing.assert_array_equal(s.run(emb)[1], [2, 2])  # fetching the scatter committed it too


def test_scatter_sub_and_chained_scatters():
    v = tf.Variable(np.arange(8, dtype=np.float32).reshape(4, 2))
    a = tf.scatter_sub(v, [0, 0, 3], tf.ones([3, 2]))
    with tf.control_dependencies([a]):
        b = tf.scatter_update(v, [1], [[9.0, 9.0]])
    with tf.Session() as s:
        s.run(v.initializer)
        s.run(b.op)
        np.testing.assert_array_equal(s.run(v), [[-2, -1], [9, 9], [4, 5], [5, 6]])


def test_scatter_sub_commits_in_place_with_repeated_rows():
    v = tf.Variable(np.arange(8, dtype=np.float32).reshape(4, 2))
    c = tf.scatter_sub(v, [2, 2, 0], [[1.0, 2.0], [3.0, 4.0], [0.5, 0.5]])
    with tf.Session() as s:
        s.run(v.initializer)
        held = s.variables.values[v.op.name]
        s.run(c.op)
        assert s.variables.values[v.op.name] is held  # the committed array itself, rows subtracted
        np.testing.assert_array_equal(s.run(v), [[-0.5, 0.5], [2, 3], [0, -1], [6, 7]])


def test_clip_by_global_norm_keeps_indexed_slices():
    emb = tf.Variable(INIT)
    loss = tf.reduce_sum(tf.square(tf.gather(emb, IDS)))
    (g,) = tf.gradients(loss, [emb])
    (clipped,), norm = tf.clip_by_global_norm([g], 1.0)
    assert isinstance(clipped, tf.IndexedSlices)
    with tf.Session() as s:
        s.run(emb.initializer)
        values, n = s.run([clipped.values, norm])
    raw = 2 * INIT[IDS]
    np.testing.assert_allclose(n, np.sqrt((raw ** 2).sum()), rtol=1e-5)  # TF1: the norm of the values
    np.testing.assert_allclose(values, raw / max(n, 1.0), rtol=1e-5)


# rows 3 and 11 after three steps of tf.gather(emb, [3, 7, 3, 11]) on a 12 x 3 embedding, squared
# error to 1 (TF 2.21's tf.compat.v1, its sparse kernels)
TF1_ROWS = {
    "momentum": [[2.223328, 1.876568, 1.517684], [0.971532, 0.951309, 0.960033]],
    "nesterov": [[1.981598, 1.703358, 1.41539], [1.04975, 1.085093, 1.069847]],
    "adagrad": [[-1.040817, -0.400318, 0.259946], [0.740269, 0.428587, 0.565145]],
    "adam": [[-0.965957, -0.324089, 0.339637], [0.835152, 0.512373, 0.652232]],
    "rmsprop": [[-0.273491, 0.310985, 0.823624], [0.868755, 0.730022, 0.795713]],
    "rmsprop-centered": [[-0.196163, 0.375022, 0.859278], [0.871623, 0.741206, 0.802678]],
    "ftrl": [[-0.997754, -0.371017, 0.256543], [0.586773, 0.389242, 0.488472]],
    "gd": [[0.510669, 0.649373, 0.792926], [0.764913, 0.597905, 0.669951]],
}


@pytest.mark.parametrize("name", sorted(TF1_ROWS))
def test_sparse_updates_give_tf1s_rows(name):
    init = np.random.default_rng(0).standard_normal((12, 3)).astype(np.float32)
    emb = tf.Variable(init)
    loss = tf.reduce_sum(tf.square(tf.gather(emb, [3, 7, 3, 11]) - 1.0))
    train = OPTIMIZERS[name]().minimize(loss)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for _ in range(3):
            s.run(train)
        got = s.run(emb)
    np.testing.assert_allclose(got[[3, 11]], TF1_ROWS[name], atol=2e-6)
    if name != "adam":
        untouched = [0, 1, 2, 4, 5, 6, 8, 9, 10]
        assert np.array_equal(got[untouched], init[untouched])


def test_sparse_training_on_a_cluster(sess_factory):
    """On a distributed cluster the scatter commits the whole new value (not in place), same answer."""
    g = tf.Graph()
    with g.as_default():
        emb = tf.Variable(INIT, name="emb")
        train = OPTIMIZERS["adagrad"]().minimize(tf.reduce_sum(tf.square(tf.gather(emb, IDS) - 1.0)))
        init = tf.global_variables_initializer()
    s = sess_factory("distributed", graph=g)
    s.run(init)
    for _ in range(3):
        s.run(train)
    np.testing.assert_allclose(s.run(emb), _train(OPTIMIZERS["adagrad"], True), rtol=1e-6)
