"""Devices: DeviceSpec and canonical strings (TF1's forms), ConfigProto, device queries, the
placement check (soft placement, logging, errors naming op and device), GPU resource annotations
on a distributed cluster, and host/device transfers (GPU parts skipped without cupy and a GPU)."""

from __future__ import annotations

import logging

import dask.array as da
import numpy as np
import pytest

import dflow as tf
from dflow.devices import (
    ConfigProto,
    DeviceSpec,
    canonical_device,
    device_type,
    is_gpu_device,
    list_logical_devices,
    list_physical_devices,
)
from dflow.schedule import placement
from dflow.schedule.placement import check_placement

HAS_GPU = tf.test.is_gpu_available()
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="needs cupy and a GPU")


def test_public_names():
    assert tf.DeviceSpec is DeviceSpec and tf.ConfigProto is ConfigProto
    assert tf.config.list_physical_devices is list_physical_devices
    assert tf.config.experimental.list_physical_devices("CPU") == list_physical_devices("CPU")


# ---- DeviceSpec --------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, want", [
    ("/gpu:0", "/device:GPU:0"), ("/cpu:0", "/device:CPU:0"), ("gpu:1", "/device:GPU:1"),
    ("/GPU:0", "/device:GPU:0"), ("/device:gpu:2", "/device:GPU:2"), ("/gpu:*", "/device:GPU:*"),
    ("/job:w/replica:0/task:1/device:GPU:0", "/job:w/replica:0/task:1/device:GPU:0"),
    ("/job:worker/task:1", "/job:worker/task:1"), ("/task:1/cpu:0", "/task:1/device:CPU:0"),
    ("/job:w/gpu:0", "/job:w/device:GPU:0"), ("/replica:2", "/replica:2"), ("", ""),
    ("/device:XLA_CPU:0", "/device:XLA_CPU:0"),
])
def test_canonical_strings_match_tf1(spec, want):
    assert canonical_device(spec) == want
    assert DeviceSpec.from_string(spec).to_string() == want


@pytest.mark.parametrize("spec", ["/device:CPU", "/foo:1", "/gpu:x", "/job:a:b", "bad", "/task:x",
                                  "/device:GPU:0:1"])
def test_malformed_strings_raise_value_error(spec):
    with pytest.raises(ValueError):
        DeviceSpec.from_string(spec)


def test_device_spec_fields_merge_replace_and_equality():
    d = DeviceSpec(job="w", replica=0, task=1, device_type="gpu", device_index=0)
    assert d.to_string() == "/job:w/replica:0/task:1/device:GPU:0" == str(d)
    assert (d.job, d.replica, d.task, d.device_type, d.device_index) == ("w", 0, 1, "GPU", 0)
    assert d == DeviceSpec.from_string(str(d)) and hash(d) == hash(DeviceSpec.from_string(str(d)))
    assert DeviceSpec(device_type="GPU").to_string() == "/device:GPU:*"
    assert d.replace(device_type="CPU").to_string() == "/job:w/replica:0/task:1/device:CPU:0"
    m = DeviceSpec.from_string("/job:w/task:1")
    assert m.make_merged_spec(DeviceSpec.from_string("/gpu:0")).to_string() == "/job:w/task:1/device:GPU:0"
    assert m.to_string() == "/job:w/task:1"  # make_merged_spec copies
    m.merge_from("/cpu:0")
    assert m.to_string() == "/job:w/task:1/device:CPU:0"
    assert m.parse_from_string("/gpu:1").to_string() == "/job:w/task:1/device:GPU:1"
    assert device_type("/gpu:0") == "GPU" and device_type("") is None and is_gpu_device(d)
    with pytest.raises(ValueError):
        DeviceSpec(task="one")


def test_device_context_accepts_strings_specs_and_none():
    with tf.device(DeviceSpec(job="w", task=1)):
        with tf.device(DeviceSpec(device_type="GPU", device_index=0)):
            a = tf.constant(1.0)
        with tf.device(None):
            b = tf.constant(1.0)
    assert a.op.device == "/job:w/task:1/device:GPU:0" and a.device == a.op.device
    assert b.op.device == ""


def test_op_devices_are_canonical_as_in_tf1():
    with tf.device("/gpu:0"):
        a = tf.constant(1.0)
    with tf.device("/job:w/task:1/cpu:0"):
        b = tf.constant(1.0)
    assert a.op.device == "/device:GPU:0" and b.op.device == "/job:w/task:1/device:CPU:0"


# ---- ConfigProto and device queries ----------------------------------------------------------
def test_config_proto_fields_as_tf1():
    c = ConfigProto(allow_soft_placement=True, log_device_placement=False)
    assert c.allow_soft_placement and not c.log_device_placement
    assert c.intra_op_parallelism_threads == 0 and c.device_count == {}
    c.gpu_options.allow_growth = True
    assert not ConfigProto().gpu_options.allow_growth  # each config owns its options
    assert ConfigProto(device_count={"GPU": 0}).device_count["GPU"] == 0
    assert ConfigProto(gpu_options=tf.GPUOptions(per_process_gpu_memory_fraction=0.5)) \
        .gpu_options.per_process_gpu_memory_fraction == 0.5
    with pytest.raises(ValueError, match="foo"):
        ConfigProto(foo=1)
    with pytest.raises(AttributeError):
        c.no_such_field = 1
    assert ConfigProto(device_count={"GPU": 0}).visible_gpus(4) == 0
    assert ConfigProto(gpu_options=tf.GPUOptions(visible_device_list="1")).visible_gpus(4) == 1


def test_device_queries():
    cpus = list_physical_devices("CPU")
    assert cpus == [("/physical_device:CPU:0", "CPU")] and cpus[0].device_type == "CPU"
    assert len(list_physical_devices("GPU")) == (0 if not HAS_GPU else len(list_physical_devices("GPU")))
    assert bool(list_physical_devices("GPU")) == HAS_GPU
    assert list_logical_devices("CPU")[0].name == "/device:CPU:0"
    assert list_physical_devices()[0].device_type == "CPU"


# ---- placement ---------------------------------------------------------------------------------
def _graph_with_gpu_op():
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/gpu:0"):
        y = tf.multiply(x, x, name="mul")
    return x, y


def test_missing_gpu_without_soft_placement_names_op_and_device():
    _, y = _graph_with_gpu_op()
    ops = tf.get_default_graph().get_operations()
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        check_placement(ops, ConfigProto(), False)
    msg = str(info.value)
    assert "mul" in msg and "/device:GPU:0" in msg and "allow_soft_placement" in msg
    assert info.value.op is y.op


def test_soft_placement_moves_to_cpu_and_logs(caplog):
    x, y = _graph_with_gpu_op()
    ops = tf.get_default_graph().get_operations()
    with caplog.at_level(logging.INFO, logger="dflow.placement"):
        placed = check_placement(ops, ConfigProto(allow_soft_placement=True), False)
    assert placed[y.op] == "/device:CPU:0" and placed[x.op] == ""
    assert any("mul" in r.getMessage() and "/device:GPU:0" in r.getMessage() for r in caplog.records)


def test_log_device_placement_logs_every_op(caplog, capsys):
    x, y = _graph_with_gpu_op()
    ops = tf.get_default_graph().get_operations()
    with caplog.at_level(logging.INFO, logger="dflow.placement"):
        placed = check_placement(ops, ConfigProto(log_device_placement=True), 1)
    assert placed[y.op] == "/device:GPU:0"
    lines = [r.getMessage() for r in caplog.records]
    assert "mul: (Mul): /job:localhost/replica:0/task:0/device:GPU:0" in lines
    assert "x: (Placeholder): /job:localhost/replica:0/task:0/device:CPU:0" in lines
    assert capsys.readouterr().err.splitlines() == lines  # printed on stderr too, as TF1's placer does


def test_log_device_placement_in_a_session_prints_tf1_lines(capsys):
    """The seed's snippet: TF 1.x printed "add: (Add): /job:localhost/replica:0/task:0/device:CPU:0"
    and the two Const lines (TF 2.21's compat.v1 prints the same with AddV2)."""
    with tf.Graph().as_default():
        v1 = tf.constant([1.0, 2.0, 3.0], shape=[3], name="v1")
        v2 = tf.constant([1.0, 2.0, 3.0], shape=[3], name="v2")
        sum12 = v1 + v2
        with tf.Session(config=tf.ConfigProto(log_device_placement=True)) as sess:
            np.testing.assert_allclose(sess.run(sum12), [2.0, 4.0, 6.0])
    err = capsys.readouterr().err.splitlines()
    cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
    assert {f"add: (Add): {cpu}", f"v1: (Const): {cpu}", f"v2: (Const): {cpu}"} <= set(err), err


@pytest.mark.parametrize("available, config, ok", [
    (1, None, True), (True, None, True), (lambda: 2, None, True), (False, None, False),
    (1, ConfigProto(device_count={"GPU": 0}), False),
])
def test_gpu_availability_forms(available, config, ok):
    _, y = _graph_with_gpu_op()
    with tf.device("/gpu:1"):
        z = tf.identity(y, name="second")
    ops = tf.get_default_graph().get_operations()
    if not ok:
        with pytest.raises(tf.errors.InvalidArgumentError, match="mul"):
            check_placement(ops, config, available)
        return
    n = available() if callable(available) else available
    if n is True or n >= 2:
        assert check_placement(ops, config, available)[z.op] == "/device:GPU:1"
    else:  # one GPU: GPU:1 is missing
        with pytest.raises(tf.errors.InvalidArgumentError, match="second.*/device:GPU:1"):
            check_placement(ops, config, available)


def test_malformed_device_is_refused_where_it_is_given():
    # TF1: tf.device parses the spec on entry and raises ValueError for an unknown field
    with pytest.raises(ValueError, match="nonsense"):
        with tf.device("/nonsense:3"):
            tf.constant(1.0, name="odd")


def test_session_refuses_a_gpu_op_without_a_gpu():
    if HAS_GPU:
        pytest.skip("a GPU is present")
    x, y = _graph_with_gpu_op()
    with tf.Session(config=ConfigProto(allow_soft_placement=False)) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="mul"):
            sess.run(y, {x: np.ones(3, np.float32)})


def test_session_soft_placement_runs_on_cpu_and_logs(caplog):
    if HAS_GPU:
        pytest.skip("a GPU is present")
    x, y = _graph_with_gpu_op()
    with caplog.at_level(logging.INFO, logger="dflow.placement"):
        with tf.Session(config=ConfigProto(allow_soft_placement=True)) as sess:
            np.testing.assert_allclose(sess.run(y, {x: np.full(3, 2.0, np.float32)}), 4.0)
    assert any("mul" in r.getMessage() for r in caplog.records)


# ---- boundaries, transfers, resources ---------------------------------------------------------
def test_boundaries_and_resources():
    assert placement.needs_transfer("", "/device:GPU:0") and not placement.needs_transfer("", "/device:CPU:0")
    assert placement.gpu_resources("/job:w/device:GPU:0") == {"GPU": 1}
    assert placement.gpu_resources("/device:CPU:0") is None and placement.gpu_resources("") is None
    with placement.annotate("/device:GPU:0"):
        a = da.ones(4, chunks=2) + 1
    assert all(layer.annotations == {"resources": {"GPU": 1}} for layer in a.__dask_graph__().layers.values())
    with placement.annotate(""):
        b = da.ones(4, chunks=2) + 1
    assert not any(layer.annotations for layer in b.__dask_graph__().layers.values())


def test_to_host_passes_numpy_chunks_through():
    x = da.from_array(np.arange(6.0), chunks=2)
    np.testing.assert_array_equal(placement.to_host(x).compute(), np.arange(6.0))
    assert placement.chunk_to_host(np.float32(2)) == 2


def _where(*_):
    from distributed import get_worker

    return get_worker().name


def test_gpu_annotated_tasks_run_on_gpu_workers():
    from distributed import Client, LocalCluster, Worker

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        cluster.worker_spec["gpu"] = {"cls": Worker, "options": {"resources": {"GPU": 1}, "nthreads": 1}}
        cluster.sync(cluster._correct_state)
        client.wait_for_workers(3)
        gpu_keys = {("g", i) for i in range(6)}
        dsk = {("h", i): (_where,) for i in range(6)}
        dsk.update({("g", i): (_where, ("h", i)) for i in range(6)})
        got = client.get(placement.with_resources(dsk, gpu_keys), [sorted(gpu_keys), [("h", 0)]])
    assert got[0] == ["gpu"] * 6


@needs_gpu
def test_transfers_round_trip_through_the_gpu():
    import cupy

    x = da.from_array(np.arange(6.0), chunks=2)
    on_gpu = placement.to_device(x)
    assert isinstance(on_gpu.compute(), cupy.ndarray)
    np.testing.assert_array_equal(placement.to_host(on_gpu).compute(), np.arange(6.0))


# ---- data parallelism (dflow.parallel) ---------------------------------------------------------
def _model(x):
    w = tf.get_variable("w", [3, 2], initializer=tf.glorot_uniform_initializer(seed=3))
    return tf.matmul(x, w), tf.reduce_sum(x, axis=1)


def test_tower_devices_and_shard_sizes():
    from dflow import parallel

    want = [f"/device:GPU:{i % max(1, len(list_physical_devices('GPU')))}" for i in range(3)] if HAS_GPU \
        else ["/device:CPU:0"] * 3
    assert parallel.tower_devices(3) == want
    assert parallel.tower_devices(2, device_type="CPU") == ["/device:CPU:0"] * 2
    assert parallel.tower_devices(2, device_type="GPU")[1] == "/device:GPU:1" or HAS_GPU
    assert parallel.shard_sizes(11, 3) == [4, 4, 3] and parallel.shard_sizes(4, 4) == [1] * 4
    assert parallel.num_workers(None) == 1
    with pytest.raises(ValueError):
        parallel.shard_sizes(4, 0)


def test_make_parallel_shares_variables_and_matches_one_tower():
    from dflow import parallel
    from tests.conftest import run_modes

    x = tf.placeholder(tf.float32, [None, 3])
    y, s = parallel.make_parallel(_model, 3, x=x)
    assert len(tf.global_variables()) == 1
    devices = {op.device for op in tf.get_default_graph().get_operations() if op.type == "MatMul"}
    assert devices == set(parallel.tower_devices(3))
    xv = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w = sess.run("w:0")
    yv, sv = run_modes([y, s], {x: xv, "w:0": w})
    np.testing.assert_allclose(yv, xv @ w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sv, xv.sum(1), rtol=1e-5)


@pytest.mark.parametrize("mode", ["eager", "threads", "distributed"])
def test_data_parallel_one_tower_per_worker(mode, sess_factory):
    from dflow import parallel

    sess = sess_factory(mode)
    n = 3 if mode != "distributed" else parallel.num_workers(sess)
    assert mode != "distributed" or n == 2
    x = tf.placeholder(tf.float32, [None, 3], chunks=(parallel.shard_sizes(7, n), 3))
    y, s = parallel.data_parallel(_model, {"x": x}, num_shards=None if mode == "distributed" else n, session=sess)
    assert len(tf.global_variables()) == 1
    assert len([op for op in tf.get_default_graph().get_operations() if op.type == "MatMul"]) == n
    xv = np.random.default_rng(1).standard_normal((7, 3)).astype(np.float32)
    sess.run(tf.global_variables_initializer())
    w = sess.run("w:0")
    yv, sv = sess.run([y, s], {x: xv})
    np.testing.assert_allclose(yv, xv @ w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sv, xv.sum(1), rtol=1e-5)


# ---- config fields are validated when the config is made (issue #14) --------------------------


@pytest.mark.parametrize("make, error, match", [
    (lambda: tf.ConfigProto(log_device_placement="yes"), TypeError, r"'yes' has type str.*log_device_placement"),
    (lambda: tf.ConfigProto(intra_op_parallelism_threads=1.5), TypeError, "intra_op_parallelism_threads"),
    (lambda: tf.GPUOptions(per_process_gpu_memory_fraction="half"), TypeError, "per_process_gpu_memory_fraction"),
    (lambda: tf.GPUOptions(per_process_gpu_memory_fraction=-0.5), ValueError, "per_process_gpu_memory_fraction"),
    (lambda: tf.ConfigProto(gpu_options={"deferred_deletion_bytes": -1}), ValueError, "deferred_deletion_bytes"),
    (lambda: tf.ConfigProto(device_count=[("GPU", 0)]), TypeError, "device_count"),
])
def test_config_fields_of_the_wrong_type_or_sign_are_refused(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_valid_config_fields_are_kept():
    c = tf.ConfigProto(allow_soft_placement=True, device_count={"GPU": 0}, intra_op_parallelism_threads=2,
                       gpu_options=tf.GPUOptions(per_process_gpu_memory_fraction=0.5, allow_growth=True))
    c.gpu_options.visible_device_list = "0"
    assert c.gpu_options.per_process_gpu_memory_fraction == 0.5 and c.device_count == {"GPU": 0}
    with pytest.raises(TypeError, match="allow_growth"):
        c.gpu_options.allow_growth = "no"
