"""The state rules of ARCHITECTURE "State", on every scheduler (eager, sync, threads, processes,
distributed):

- a read sees the value at the start of the run unless a control/data dependency orders it after
  an assign to that variable (then it sees the latest such assign);
- two assigns to one variable that no dependency orders are an InvalidArgumentError naming the
  variable and both ops, before anything runs;
- a run that raises (bad feed, kernel error, error inside a task) changes no variable;
- reading an uninitialized variable is a FailedPreconditionError naming it;
- two sessions on one graph hold independent values; a distributed session keeps values on the
  cluster and ships a value once per change.

The processes scheduler runs with one process pool shared by this module's tests (through
`dask.multiprocessing.get`): a Session starts its own spawn pool on its first run, seconds each
on a busy machine, which would make these tests minutes long. `test_processes_default_pool` runs
the central example on the stock path once.
"""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor

import dask.multiprocessing
import numpy as np
import pytest

import dflow as tf
from dflow import errors
from dflow.schedule import compiler as compiler_mod
from dflow.schedule import plan as plan_mod


@pytest.fixture(scope="module")
def _process_pool():
    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))
    yield pool
    pool.shutdown()


@pytest.fixture
def new_session(any_mode, sess_factory, monkeypatch, request):
    """new_session(graph=None) -> a Session in `any_mode`, chunks of 2 (several chunks per variable)."""
    if any_mode == "processes":
        shared, real_get = request.getfixturevalue("_process_pool"), dask.multiprocessing.get

        def get(dsk, keys, pool=None, **kwargs):  # the session's own pool is then never started
            return real_get(dsk, keys, pool=shared, **kwargs)

        monkeypatch.setattr(dask.multiprocessing, "get", get)
    return lambda graph=None: sess_factory(any_mode, graph=graph, chunks=2)


def _ab():
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    c = a + b
    with tf.control_dependencies([c]):
        asg = tf.assign(a, 5.0)
    return a, b, c, asg


# ---- reads: start of run, or after an ordered assign ------------------------------------------------

def test_tf1_example_gives_5_3_on_every_run(new_session):
    a, b, c, asg = _ab()
    s = new_session()
    for _ in range(3):
        s.run([a.initializer, b.initializer])
        assert s.run([asg, c]) == [5.0, 3.0]
    assert s.run([asg, c]) == [5.0, 7.0]  # a is 5 at the start of this run
    s.run(a.initializer)
    assert s.run([c, asg]) == [3.0, 5.0]


def test_processes_default_pool():
    a, b, c, asg = _ab()
    with tf.Session(scheduler="processes", chunks=2) as s:
        s.run([a.initializer, b.initializer])
        assert s.run([asg, c]) == [5.0, 3.0]
        assert s.run(a) == 5.0


def test_reads_ordered_after_an_assign_see_it(new_session):
    a, b, c, asg = _ab()
    with tf.control_dependencies([asg]):
        d = a + 1  # reads a's handle after asg
        r = a.read_value()
        i = tf.identity(a)
        gate = tf.no_op()
    with tf.control_dependencies([gate]):
        later = a * 10  # ordered after asg through gate
    with tf.control_dependencies([tf.group(asg)]):
        grouped = a - 1
    snap = a.value()  # created with the variable: ordered after nothing
    s = new_session()
    s.run(tf.global_variables_initializer())
    assert s.run([c, d, r, i, later, grouped, snap, a, b]) == [3.0, 6.0, 5.0, 5.0, 50.0, 4.0, 1.0, 1.0, 2.0]
    assert s.run([a, snap]) == [5.0, 5.0]


def test_swap_in_one_run_reads_start_values(new_session):
    a = tf.Variable([1.0, 2.0], name="a")
    b = tf.Variable([3.0, 4.0], name="b")
    swap = tf.group(tf.assign(a, b), tf.assign(b, a))
    inc = tf.assign_add(a, [1.0, 1.0])
    s = new_session()
    s.run(tf.global_variables_initializer())
    for want_a, want_b in (([3, 4], [1, 2]), ([1, 2], [3, 4]), ([3, 4], [1, 2])):
        s.run(swap)
        got = s.run([a, b])
        np.testing.assert_array_equal(got[0], want_a)
        np.testing.assert_array_equal(got[1], want_b)
    got = s.run([inc, inc, a])  # one op fetched twice runs once
    np.testing.assert_array_equal(got[0], [4, 5])
    np.testing.assert_array_equal(got[1], [4, 5])
    np.testing.assert_array_equal(got[2], [3, 4])


def test_chain_of_ordered_assigns(new_session):
    v = tf.Variable(0.0, name="v")
    s1 = tf.assign(v, 1.0)
    with tf.control_dependencies([s1]):
        s2 = tf.assign_add(v, 2.0)
        r1 = v * 10  # after s1 only
    with tf.control_dependencies([s2]):
        s3 = tf.assign_sub(v, 0.5)
        r2 = v * 10  # after s1 and s2
    s4 = tf.assign(v, s3 * 2)  # ordered after s3 by data
    with tf.control_dependencies([s1]):
        x = tf.identity(7.0)
    s = new_session()
    s.run(v.initializer)
    assert s.run([s1, s2, s3, s4, r1, r2, v]) == [1.0, 3.0, 2.5, 5.0, 10.0, 30.0, 0.0]
    assert s.run(v) == 5.0
    s5 = tf.assign(v, x)  # after s1 through x: not a conflict
    assert s.run([s1, s5, v]) == [1.0, 7.0, 5.0]
    assert s.run(v) == 7.0


def test_nested_control_dependencies_and_none(new_session):
    a = tf.Variable(0.0, name="a")
    b = tf.Variable(0.0, name="b")
    ia, ib = tf.assign_add(a, 1.0), tf.assign_add(b, 1.0)
    with tf.control_dependencies([ia]):
        with tf.control_dependencies([ib]):
            both = tf.no_op()
        with tf.control_dependencies(None):
            neither = tf.no_op()
            fresh = tf.identity(tf.constant(3.0))
        only_a = tf.no_op()
    s = new_session()
    s.run(tf.global_variables_initializer())
    assert s.run(both) is None
    assert s.run([a, b]) == [1.0, 1.0]
    assert s.run([neither, fresh]) == [None, 3.0]
    assert s.run([a, b]) == [1.0, 1.0]
    s.run(only_a)
    assert s.run([a, b]) == [2.0, 1.0]


def test_group_tuple_no_op_identity(new_session):
    a = tf.Variable(1.0, name="a")
    b = tf.Variable([1.0, 2.0, 3.0], name="b")
    ia = tf.assign_add(a, 1.0)
    ib = tf.assign_sub(b, [1.0, 1.0, 1.0])
    g = tf.group(ia, ib)
    t = tf.tuple([a, ia])  # each output after both: the read of a is ordered after ia
    t2 = tf.tuple([b.value(), tf.constant(4.0)], control_inputs=[ib])
    s = new_session()
    s.run(tf.global_variables_initializer())
    assert s.run([g, tf.no_op(), tf.identity(a)]) == [None, None, 1.0]
    assert s.run(a) == 2.0
    np.testing.assert_array_equal(s.run(b), [0, 1, 2])
    assert s.run(t) == [3.0, 3.0]
    got = s.run(t2)  # b.value() is not ordered after ib: it reads b at the start of the run
    np.testing.assert_array_equal(got[0], [0, 1, 2])
    assert got[1] == 4.0
    np.testing.assert_array_equal(s.run(b), [-1, 0, 1])


def test_feeding_a_variable_overrides_the_read(new_session):
    v = tf.Variable(3.0, name="v")
    s = new_session()
    s.run(v.initializer)
    assert s.run(v * 2, {v: 10.0}) == 20.0
    assert s.run(v) == 3.0


# ---- conflicts ---------------------------------------------------------------------------------

def test_unordered_assigns_are_an_error_naming_the_variable_and_both_ops(new_session):
    v = tf.Variable(1.0, name="counter")
    w = tf.Variable(1.0, name="other")
    first = tf.assign(v, 2.0, name="first")
    second = tf.assign_add(v, 3.0, name="second")
    s = new_session()
    s.run(tf.global_variables_initializer())
    messages = set()
    for fetch in ([first, second], [second, first], tf.group(first, second), [tf.group(first), second]):
        with pytest.raises(errors.InvalidArgumentError) as info:
            s.run(fetch)
        msg = str(info.value)
        assert "'counter'" in msg and "'first'" in msg and "'second'" in msg, msg
        messages.add(msg)
    assert len(messages) == 1  # deterministic: the same ops named whatever the fetch order
    with pytest.raises(errors.InvalidArgumentError, match="counter/Assign"):
        s.run([v.initializer, second])  # an initializer is an assign too
    assert s.run([tf.assign_add(w, 1.0), first]) == [2.0, 2.0]  # different variables: no conflict
    assert s.run([v, w]) == [2.0, 2.0]


# ---- rollback -----------------------------------------------------------------------------------

def _rollback_graph():
    a = tf.Variable(1.0, name="a")
    v = tf.Variable(np.zeros(5, np.float32), name="v")
    x = tf.placeholder(tf.float32, [None], name="x")
    idx = tf.placeholder(tf.int32, [None], name="idx")
    inc = tf.assign_add(a, 10.0)
    set_v = tf.assign(v, tf.reshape(x, [5]))  # fails at run time unless x has 5 elements
    scat = tf.scatter_update(v, idx, [9.0])  # fails inside its task for an index out of range
    return a, v, x, idx, inc, set_v, scat


def test_failed_runs_change_no_variable(new_session):
    a, v, x, idx, inc, set_v, scat = _rollback_graph()
    s = new_session()
    s.run(tf.global_variables_initializer())
    five = np.arange(5, dtype=np.float32)
    failing = [
        ({x: np.ones((2, 2), np.float32), idx: [0]}, [inc, set_v]),  # feed shape vs placeholder
        ({x: np.array(["a", "b"]), idx: [0]}, [inc, set_v]),  # feed dtype
        ({idx: [0]}, [inc, set_v]),  # placeholder x not fed
        ({x: np.ones(4, np.float32)}, [inc, set_v]),  # kernel error: reshape 4 elements to [5]
        ({idx: [7]}, [inc, scat]),  # IndexError raised inside the scatter's task
    ]
    for feed, fetch in failing:
        with pytest.raises(errors.InvalidArgumentError):
            s.run(fetch, feed)
        assert s.run(a) == 1.0, feed
        np.testing.assert_array_equal(s.run(v), np.zeros(5), err_msg=str(feed))
    got = s.run([inc, set_v], {x: five})
    assert got[0] == 11.0
    np.testing.assert_array_equal(got[1], five)
    np.testing.assert_array_equal(s.run(scat, {idx: [4]}), [0, 1, 2, 3, 9])
    assert s.run(a) == 11.0


def test_failed_chained_run_keeps_the_earlier_committed_values(new_session):
    a, v, x, idx, inc, set_v, scat = _rollback_graph()
    with tf.control_dependencies([inc]):
        late = tf.scatter_add(v, idx, [1.0])  # runs after inc in the same run, then fails
    s = new_session()
    s.run(tf.global_variables_initializer())
    s.run(inc)
    with pytest.raises(errors.InvalidArgumentError):
        s.run(late, {idx: [-1]})
    assert s.run(a) == 11.0
    np.testing.assert_array_equal(s.run(late, {idx: [2]}), [0, 0, 1, 0, 0])
    assert s.run(a) == 21.0


# ---- initialization ---------------------------------------------------------------------------

def test_uninitialized_reads_name_the_variable(new_session):
    a = tf.Variable(1.0, name="ready")
    w = tf.Variable(np.ones(4, np.float32), name="weights")
    flags = [tf.is_variable_initialized(a), tf.is_variable_initialized(w)]
    report = tf.report_uninitialized_variables()
    s = new_session()
    assert [str(n) for n in s.run(report)] == ["ready", "weights"]
    s.run(a.initializer)
    for fetch in (w, a + w, tf.assign_add(w, np.ones(4, np.float32)), tf.reduce_sum(w)):
        with pytest.raises(errors.FailedPreconditionError, match="weights"):
            s.run(fetch)
    assert s.run(flags) == [True, False]
    assert [str(n) for n in s.run(report)] == ["weights"]
    np.testing.assert_array_equal(s.run(tf.assign(w, np.full(4, 2.0, np.float32))), [2, 2, 2, 2])
    assert s.run(flags) == [True, True]
    assert s.run(report).shape == (0,)
    assert s.run(a + tf.reduce_sum(w)) == 9.0


def test_two_sessions_on_one_graph_are_independent(new_session):
    v = tf.Variable(np.zeros(3, np.float32), name="v")
    inc = tf.assign_add(v, np.ones(3, np.float32))
    s1, s2 = new_session(), new_session()
    s1.run(v.initializer)
    with pytest.raises(errors.FailedPreconditionError):
        s2.run(v)
    v.load(np.full(3, 100.0, np.float32), s2)
    for k in range(1, 4):
        np.testing.assert_array_equal(s1.run(inc), np.full(3, k))
        np.testing.assert_array_equal(s2.run(inc), np.full(3, 100 + k))
    s1.close()
    np.testing.assert_array_equal(s2.run(v), np.full(3, 103))


# ---- scatters and a loop on every scheduler ------------------------------------------------------------

def test_scatters_match_numpy(new_session):
    rng = np.random.default_rng(3)
    init = rng.standard_normal((5, 3)).astype(np.float32)
    idx_u, upd_u = np.array([4, 0], np.int32), rng.standard_normal((2, 3)).astype(np.float32)
    idx_a, upd_a = np.array([1, 1, 3], np.int64), rng.standard_normal((3, 3)).astype(np.float32)
    v = tf.Variable(init, name="v")
    up = tf.scatter_update(v, idx_u, upd_u)
    with tf.control_dependencies([up]):
        add = tf.scatter_add(v, idx_a, upd_a)
    s = new_session()
    s.run(v.initializer)
    want_u = init.copy()
    want_u[idx_u] = upd_u
    want_a = want_u.copy()
    np.add.at(want_a, idx_a, upd_a)
    got_u, got_a, start = s.run([up, add, v])
    np.testing.assert_array_equal(got_u, want_u)
    np.testing.assert_allclose(got_a, want_a, rtol=1e-6)
    np.testing.assert_array_equal(start, init)
    np.testing.assert_allclose(s.run(v), want_a, rtol=1e-6)


def test_assign_add_loop_is_exact(any_mode, new_session):
    n = 20 if any_mode == "distributed" else 50  # ~0.1 s per run of a two-variable group there
    v = tf.Variable(0.0, name="v")
    w = tf.Variable(np.zeros(5, np.float32), name="w")
    step = tf.group(tf.assign_add(v, 1.0), tf.assign_add(w, np.full(5, 0.25, np.float32)))
    s = new_session()
    s.run(tf.global_variables_initializer())
    for _ in range(n):
        s.run(step)
    assert s.run(v) == n
    np.testing.assert_array_equal(s.run(w), np.full(5, n * 0.25, np.float32))


# ---- distributed: values stay on the cluster ------------------------------------------------------------

@pytest.mark.parametrize("any_mode", ["distributed"])
def test_distributed_ships_a_value_once_per_change(new_session, monkeypatch):
    shipped, gathered = [], []
    real_scatter, real_to_host = plan_mod.RemoteValue.scatter.__func__, plan_mod.RemoteValue.to_host

    def scatter(cls, client, value, chunks):
        shipped.append(value.nbytes)
        return real_scatter(cls, client, value, chunks)

    def to_host(self):
        gathered.append(self.shape)
        return real_to_host(self)

    monkeypatch.setattr(plan_mod.RemoteValue, "scatter", classmethod(scatter))
    monkeypatch.setattr(plan_mod.RemoteValue, "to_host", to_host)
    v = tf.Variable(np.zeros(6, np.float32), name="v")
    inc = tf.assign_add(v, np.ones(6, np.float32))
    s = new_session()
    s.run(v.initializer)  # computed on the cluster: nothing shipped
    for _ in range(5):
        s.run(inc)
    assert shipped == [] and gathered == []
    v.load(np.full(6, 10.0, np.float32), s)
    for _ in range(5):
        s.run(inc)
    assert shipped == [24] and gathered == []  # the loaded value, once
    np.testing.assert_array_equal(s.run(v), np.full(6, 15.0))
    np.testing.assert_array_equal(v.eval(s), np.full(6, 15.0))


@pytest.mark.parametrize("any_mode", ["distributed"])
@pytest.mark.parametrize("one_task", [True, False])  # a small plan as one task, or a task per chunk
def test_distributed_scheduler_state_stays_bounded(new_session, dask_client, one_task, monkeypatch):
    """Each run's value is computed from the previous one; the session cuts that lineage when it
    commits (the scheduler holds the value as data), so the task table does not grow with runs."""
    v = tf.Variable(np.zeros(4, np.float32), name="v")
    inc = tf.assign_add(v, 1.0)
    if not one_task:
        monkeypatch.setattr(compiler_mod, "ONE_TASK_BYTES", 0)
    s = new_session()
    s.run(v.initializer)

    def n_tasks():
        return dask_client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))

    for _ in range(5):
        s.run(inc)
    time.sleep(0.2)  # releases are one-way messages
    before = n_tasks()
    runs = 30
    for _ in range(runs):
        s.run(inc)
    np.testing.assert_array_equal(s.run(v), np.full(4, 5.0 + runs))
    time.sleep(0.2)
    assert n_tasks() - before <= 4, f"{n_tasks() - before} more tasks after {runs} runs"
