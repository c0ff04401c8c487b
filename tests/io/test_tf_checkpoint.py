"""TensorFlow's own V2 checkpoints: the fixtures TensorFlow wrote (tools/make_tf_checkpoint_fixtures.py)
restored through `Saver.restore` and read through every checkpoint function; `Saver(format=
"tensorflow")` round trips; damaged, mismatched and foreign input; the table format itself. The slow
test has TensorFlow (env TF_PYTHON) restore what dflow wrote."""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dflow as tf
from dflow.cli.inspect import inspect_checkpoint
from dflow.errors import DataLossError, InvalidArgumentError, NotFoundError
from dflow.io import sstable
from dflow.io import tf_checkpoint as tfc
from dflow.storage.values import StoredValue

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "tf_checkpoints")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    EXPECTED = json.load(_f)
ARRAYS = dict(np.load(os.path.join(FIXTURES, "expected.npz")))


def _expected(fixture, name):
    key = f"{fixture}/{name}"
    if key in ARRAYS:
        return ARRAYS[key]
    doc = EXPECTED["values"][key]
    if "b64" in doc:
        return np.array([base64.b64decode(s) for s in doc["b64"]], dtype=object).reshape(doc["shape"])
    return np.asarray(doc["float"], np.float32).reshape(doc["shape"])


def _table(fixture):
    return EXPECTED["tables"][fixture]["variables"]


def _copy(fixture, tmp_path):
    """A writable copy of a fixture directory; its checkpoint's prefix."""
    shutil.copytree(os.path.join(FIXTURES, fixture), tmp_path / fixture)
    return str(tmp_path / EXPECTED["tables"][fixture]["prefix"])


def _zeros_like_table(fixture, skip=("bfloat16",)):
    """dflow variables of the checkpoint's names, shapes and dtypes, holding zeros (or b"")."""
    out = {}
    for name, dtype, shape in _table(fixture):
        if dtype in skip:
            continue
        init = np.full(shape, b"", dtype=object) if dtype == "string" else np.zeros(shape, dtype=np.dtype(dtype))
        out[name] = tf.Variable(init, name=name, dtype=getattr(tf, dtype))
    return out


# ---- TensorFlow's checkpoints, restored --------------------------------------------------------


@pytest.mark.parametrize("fixture", ["mlp", "dtypes", "partitioned", "sharded", "resource"])
def test_saver_restores_what_tensorflow_saved(fixture):
    variables = _zeros_like_table(fixture)
    saver = tf.train.Saver(variables)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver.restore(sess, os.path.join(FIXTURES, EXPECTED["tables"][fixture]["prefix"]))
        for name, v in variables.items():
            got, want = sess.run(v), _expected(fixture, name)
            assert np.asarray(got).dtype == want.dtype, name
            np.testing.assert_array_equal(got, want, err_msg=name)


def test_restore_from_a_copied_directory_finds_the_checkpoint_by_name():
    """TF1's `checkpoint` file names /home/trainer/runs/mlp/model.ckpt-2 (absolute, another
    machine's): the checkpoint of that name in the directory is the one meant."""
    d = os.path.join(FIXTURES, "mlp")
    assert tf.train.latest_checkpoint(d) == os.path.join(d, "model.ckpt-2")
    state = tf.train.get_checkpoint_state(d)
    assert state.model_checkpoint_path == "/home/trainer/runs/mlp/model.ckpt-2"
    assert tf.train.checkpoint_exists(os.path.join(d, "model.ckpt-2"))
    assert not tf.train.checkpoint_exists(os.path.join(d, "model.ckpt-1"))
    variables = _zeros_like_table("mlp")
    with tf.Session() as sess:
        tf.train.Saver(variables).restore(sess, tf.train.latest_checkpoint(d))
        np.testing.assert_array_equal(sess.run(variables["global_step"]), 2)
        np.testing.assert_array_equal(sess.run(variables["hidden/kernel/Adam_1"]),
                                      _expected("mlp", "hidden/kernel/Adam_1"))


@pytest.mark.parametrize("fixture", ["mlp", "dtypes", "partitioned", "sharded"])
def test_list_variables_load_variable_and_readers(fixture):
    prefix = os.path.join(FIXTURES, EXPECTED["tables"][fixture]["prefix"])
    table = _table(fixture)
    assert tf.train.list_variables(prefix) == [(n, s) for n, _, s in table]
    assert tf.train.list_variables(os.path.join(FIXTURES, fixture)) == [(n, s) for n, _, s in table]
    for reader in (tf.train.load_checkpoint(prefix), tf.train.NewCheckpointReader(prefix),
                   tf.compat.v1.train.NewCheckpointReader(prefix)):
        assert reader.format == "tensorflow"
        assert reader.get_variable_to_shape_map() == {n: s for n, _, s in table}
        assert reader.get_variable_to_dtype_name_map() == {n: d for n, d, _ in table}
        for name, dtype, _ in table:
            want = _expected(fixture, name)
            np.testing.assert_array_equal(reader.get_tensor(name), want)
            assert reader.get_variable_to_dtype_map()[name].name == ("float32" if dtype == "bfloat16" else dtype)
        assert not reader.has_tensor("nope")
        with pytest.raises(NotFoundError, match="nope"):
            reader.get_tensor("nope")
        reader.close()
    name = table[0][0]
    np.testing.assert_array_equal(tf.train.load_variable(prefix, name), _expected(fixture, name))


def test_bfloat16_reads_as_float32_but_restores_only_into_bfloat16():
    prefix = os.path.join(FIXTURES, "dtypes", "model.ckpt")
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "bf16"), _expected("dtypes", "bf16"))
    assert tf.train.load_variable(prefix, "bf16")[:2].tolist() == [1.5, -2.25]
    v = tf.Variable(np.zeros(3, np.float32), name="bf16")
    with tf.Session() as sess, pytest.raises(InvalidArgumentError, match="bf16.*bfloat16"):
        sess.run(v.initializer)
        tf.train.Saver([v]).restore(sess, prefix)


def test_init_from_checkpoint_of_a_tensorflow_checkpoint():
    prefix = os.path.join(FIXTURES, "mlp", "model.ckpt-2")
    with tf.variable_scope("net"):
        k = tf.get_variable("kernel", [4, 8], initializer=tf.zeros_initializer())
        b = tf.get_variable("bias", [8], initializer=tf.zeros_initializer())
    tf.train.init_from_checkpoint(prefix, {"hidden/": "net/"})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(k), _expected("mlp", "hidden/kernel"))
        np.testing.assert_array_equal(sess.run(b), _expected("mlp", "hidden/bias"))


def test_inspect_checkpoint_prints_tensorflows_table():
    out = io.StringIO()
    assert inspect_checkpoint(os.path.join(FIXTURES, "dtypes"), verify=True, tensor_name="i8", out=out) == 0
    text = out.getvalue()
    assert "(TensorFlow V2 format): 16 variables" in text
    assert "bf16 (bfloat16) [3] crc32c:" in text and "scope/words (string) [5] crc32c:" in text
    assert "[-128    0  127]" in text and "verified" in text


def test_a_v1_checkpoint_is_refused_naming_its_format(capsys):
    path = os.path.join(FIXTURES, "v1", "model.ckpt")
    v = tf.Variable([0.0, 0.0], name="w")
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(NotFoundError, match="TensorFlow's V1 format"):
            tf.train.Saver([v]).restore(sess, path)
    with pytest.raises(NotFoundError, match="V1 format"):
        tf.train.list_variables(path)
    assert inspect_checkpoint(path) == 1
    assert "V1 format" in capsys.readouterr().err


# ---- damaged and mismatched input: the right error, nothing half-restored --------------------------


def _restore_mlp_expecting(prefix, error, match):
    """Restores the mlp fixture's variables (set to ones first) from `prefix`; the error must come and
    every variable must still be ones."""
    variables = {n: tf.Variable(np.ones(s, np.dtype(d)), name=n) for n, d, s in _table("mlp")}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(error, match=match):
            tf.train.Saver(variables).restore(sess, prefix)
        for name, v in variables.items():
            np.testing.assert_array_equal(sess.run(v), np.ones_like(sess.run(v)), err_msg=name)


@pytest.mark.parametrize("cut", [1, 30, 200])
def test_a_truncated_index_is_data_loss_naming_the_file(cut, tmp_path):
    prefix = _copy("mlp", tmp_path)
    with open(prefix + ".index", "r+b") as f:
        f.truncate(os.path.getsize(prefix + ".index") - cut)
    _restore_mlp_expecting(prefix, DataLossError, r"model\.ckpt-2\.index")


def test_a_flipped_bit_in_the_index_is_data_loss(tmp_path):
    prefix = _copy("mlp", tmp_path)
    with open(prefix + ".index", "r+b") as f:
        f.seek(20)
        b = f.read(1)
        f.seek(20)
        f.write(bytes([b[0] ^ 0x10]))
    _restore_mlp_expecting(prefix, DataLossError, r"model\.ckpt-2\.index.*checksum")


@pytest.mark.parametrize("fixture", ["mlp", "dtypes"])
def test_each_flipped_byte_in_a_data_shard_is_data_loss_naming_file_and_tensor(fixture, tmp_path):
    prefix = _copy(fixture, tmp_path)
    data = prefix + ".data-00000-of-00001"
    original = open(data, "rb").read()
    reader = tfc.read_tf_checkpoint(prefix)
    for name in reader.keys():
        entry = reader._entry(name)
        if not entry.size:
            continue
        flipped = bytearray(original)
        flipped[entry.offset + entry.size // 2] ^= 0x01
        with open(data, "wb") as f:
            f.write(flipped)
        with pytest.raises(DataLossError, match=rf"data-00000-of-00001, tensor '{name}'.*checksum"):
            tfc.read_tf_checkpoint(prefix).read(name)
    with open(data, "wb") as f:
        f.write(original)


def test_a_damaged_data_shard_restores_nothing(tmp_path):
    prefix = _copy("mlp", tmp_path)
    data = prefix + ".data-00000-of-00001"
    size = os.path.getsize(data)
    with open(data, "r+b") as f:  # the last tensor in the file: every other one read fine before it
        f.seek(size - 2)
        b = f.read(1)
        f.seek(size - 2)
        f.write(bytes([b[0] ^ 0x80]))
    _restore_mlp_expecting(prefix, DataLossError, "data-00000-of-00001, tensor .*checksum mismatch")


def test_a_truncated_or_missing_data_shard_is_data_loss(tmp_path):
    prefix = _copy("mlp", tmp_path)
    data = prefix + ".data-00000-of-00001"
    with open(data, "r+b") as f:
        f.truncate(os.path.getsize(data) // 2)
    _restore_mlp_expecting(prefix, DataLossError, "data-00000-of-00001, tensor .*truncated")
    os.remove(data)
    _restore_mlp_expecting(prefix, DataLossError, "data file .*data-00000-of-00001 of tensor .* missing")


@pytest.mark.parametrize("change", ["shape", "dtype", "missing"])
def test_mismatched_variables_are_refused_naming_them(change):
    prefix = os.path.join(FIXTURES, "mlp", "model.ckpt-2")
    variables = {n: tf.Variable(np.ones(s, np.dtype(d)), name=n) for n, d, s in _table("mlp")}
    if change == "shape":
        variables["out/bias"] = tf.Variable(np.ones(2, np.float32), name="out_bias2")
        error, match = InvalidArgumentError, r"out_bias2.*shape \[1\], the variable \[2\]"
    elif change == "dtype":
        variables["out/bias"] = tf.Variable(np.ones(1, np.float64), name="out_bias64")
        error, match = InvalidArgumentError, "out_bias64.*dtype float32, the variable float64"
    else:
        variables["not/there"] = tf.Variable(np.ones(1, np.float32), name="extra")
        error, match = NotFoundError, r"not/there not found in checkpoint .*extra"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(error, match=match):
            tf.train.Saver(variables).restore(sess, prefix)
        for name, v in variables.items():
            assert np.all(sess.run(v) == 1), name


# ---- writing TensorFlow's format -----------------------------------------------------------------

VALUES = {
    "scope/w": np.arange(24, dtype=np.float32).reshape(6, 4),
    "scope/inner/b": np.linspace(0, 1, 5),
    "count": np.int64(7),
    "half": np.array([1.5, -2.0], np.float16),
    "flags": np.array([True, False, True]),
    "c": np.array([1 + 2j, -3j], np.complex64),
    "i8": np.array([-5, 5], np.int8),
    "u16": np.array([0, 65535], np.uint16),
    "words": np.array([b"a", b"", "ünï".encode(), b"\x00\xff"], dtype=object),
}


def _variables(values, scale=1):
    out = {}
    for name, value in values.items():
        v = value if value.dtype == object else (value * scale).astype(value.dtype)
        out[name] = tf.Variable(v, name=name, dtype=tf.string if value.dtype == object else None)
    return out


def test_saver_writes_tensorflows_format_and_restores_it(tmp_path):
    variables = _variables(VALUES)
    saver = tf.train.Saver(variables, format="tensorflow")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = saver.save(sess, str(tmp_path / "model"), global_step=3, write_meta_graph=False)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model-3.data-00000-of-00001", "model-3.index"]
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix
    reader = tfc.read_tf_checkpoint(prefix)
    assert reader.keys() == sorted(VALUES)
    tf.reset_default_graph()
    fresh = {n: tf.Variable(np.zeros_like(v) if v.dtype != object else np.full(v.shape, b"", object),
                            name=n, dtype=tf.string if v.dtype == object else None) for n, v in VALUES.items()}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver(fresh).restore(sess, str(tmp_path))
        for name, v in fresh.items():
            got = sess.run(v)
            assert np.asarray(got).dtype == VALUES[name].dtype, name
            np.testing.assert_array_equal(got, VALUES[name], err_msg=name)


def test_max_to_keep_deletes_only_the_files_the_saver_wrote(tmp_path):
    v = tf.Variable(np.ones(3, np.float32), name="v")
    saver = tf.train.Saver([v], format="tensorflow", max_to_keep=2)
    foreign = ["model-1.data-notes.txt", "model-1.index.bak", "model-10.index", "other.index"]
    for name in foreign:
        (tmp_path / name).write_text("not ours")
    with tf.Session() as sess:
        sess.run(v.initializer)
        for step in range(1, 5):
            saver.save(sess, str(tmp_path / "model"), global_step=step, write_meta_graph=False)
    kept = sorted(n for n in os.listdir(tmp_path) if n not in foreign)
    assert kept == ["checkpoint", "model-3.data-00000-of-00001", "model-3.index", "model-4.data-00000-of-00001",
                    "model-4.index"]
    assert all((tmp_path / n).read_text() == "not ours" for n in foreign)
    assert saver.last_checkpoints == [str(tmp_path / "model-3"), str(tmp_path / "model-4")]


def test_sharded_saver_writes_a_shard_per_device(tmp_path):
    with tf.device("/cpu:0"):
        a = tf.Variable(np.ones((2, 2), np.float32), name="a")
    with tf.device("/cpu:1"):
        b = tf.Variable(np.arange(3), name="b")
    saver = tf.train.Saver([a, b], format="tensorflow", sharded=True)
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        sess.run(tf.global_variables_initializer())
        prefix = saver.save(sess, str(tmp_path / "model"), write_meta_graph=False)
    shards = sorted(n for n in os.listdir(tmp_path) if ".data-" in n)
    assert shards == ["model.data-00000-of-00002", "model.data-00001-of-00002"]
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "b"), np.arange(3))


def test_saving_over_a_prefix_replaces_the_other_format(tmp_path):
    v = tf.Variable(np.ones(3, np.float32), name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        tf.train.Saver([v]).save(sess, str(tmp_path / "m"), write_meta_graph=False)
        tf.train.Saver([v], format="tensorflow").save(sess, str(tmp_path / "m"), write_meta_graph=False)
        assert tf.train.load_checkpoint(str(tmp_path / "m")).format == "tensorflow"
        assert not os.path.exists(tmp_path / "m")
        tf.train.Saver([v]).save(sess, str(tmp_path / "m"), write_meta_graph=False)
        assert tf.train.load_checkpoint(str(tmp_path / "m")).format == "dflow"
        assert not os.path.exists(tmp_path / "m.index")
    with pytest.raises(ValueError, match="format"):
        tf.train.Saver([v], format="onnx")


def test_a_large_variable_streams_into_a_stored_value_in_pieces(tmp_path, monkeypatch):
    """Under a memory budget the restored value goes straight to disk, read in bounded pieces."""
    monkeypatch.setattr(tfc, "PIECE_BYTES", 1 << 16)
    value = np.random.default_rng(1).standard_normal((3000, 500)).astype(np.float32)  # 6 MB
    tfc.write_tf_checkpoint(str(tmp_path / "big"), {"big": value})
    reads = []
    real = tfc._pread
    monkeypatch.setattr(tfc, "_pread", lambda fd, view, offset: reads.append(len(view)) or real(fd, view, offset))
    v = tf.Variable(np.zeros(value.shape, np.float32), name="big")
    with tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="16MB") as sess:
        sess.run(v.initializer)
        tf.train.Saver([v]).restore(sess, str(tmp_path / "big"))
        assert isinstance(sess.variables.values["big"], StoredValue)
        assert reads and max(reads) <= 1 << 16
        np.testing.assert_array_equal(sess.run(v), value)
    # a damaged shard under the same budget: DataLossError and the stored variable unchanged
    data = str(tmp_path / "big.data-00000-of-00001")
    with open(data, "r+b") as f:
        f.seek(os.path.getsize(data) - 5)
        f.write(b"\x00\x01\x02")
    with tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="16MB") as sess:
        sess.run(v.initializer)
        with pytest.raises(DataLossError, match="tensor 'big'"):
            tf.train.Saver([v]).restore(sess, str(tmp_path / "big"))
        assert float(np.abs(sess.run(v)).max()) == 0.0


def test_a_stored_value_is_written_chunk_by_chunk(tmp_path):
    value = np.arange(3000 * 500, dtype=np.float32).reshape(3000, 500)
    v = tf.Variable(value, name="big")
    with tf.Session(scheduler="threads", small_plan_bytes=0, memory_budget="16MB") as sess:
        sess.run(v.initializer)
        assert isinstance(sess.variables.values["big"], StoredValue)
        prefix = tf.train.Saver([v], format="tensorflow").save(sess, str(tmp_path / "m"), write_meta_graph=False)
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "big"), value)


# ---- the table format and slice keys -------------------------------------------------------------


def test_tables_of_many_blocks_round_trip_and_detect_damage():
    items = [(f"key/{i:05d}".encode(), bytes([i % 251]) * (i % 37)) for i in range(500)]
    data = sstable.build_table(items, block_size=256, restart_interval=4)
    assert sstable.read_table(data, "t") == items
    for pos in range(0, len(data) - 48, 97):
        broken = bytearray(data)
        broken[pos] ^= 0x04
        with pytest.raises(DataLossError, match="TensorFlow table t"):
            sstable.read_table(bytes(broken), "t")
    with pytest.raises(ValueError, match="sorted"):
        sstable.build_table([(b"b", b""), (b"a", b"")])


def test_slice_keys_are_tensorflows():
    """The keys TF wrote for `emb`'s three slices are the ones dflow computes."""
    reader = tfc.read_tf_checkpoint(os.path.join(FIXTURES, "partitioned", "model.ckpt"))
    assert sorted(reader._slices) == sorted(tfc.encode_tensor_name_slice("emb", [(a, n), (0, 4)])
                                            for a, n in [(0, 4), (4, 3), (7, 3)])
    assert tfc.encode_tensor_name_slice("a\x00b", [(0, -1)]) == b"\x00a\x00\xffb\x00\x01\x01\x01\x80\x7f"
    for value in (0, 1, -1, 63, -64, 64, -65, 8191, 8192, -(2 ** 40), 2 ** 62, -(2 ** 63)):
        code = tfc._signed_num_increasing(value)
        assert len(code) <= 10
    codes = [tfc._signed_num_increasing(v) for v in (-(2 ** 63), -(2 ** 40), -65, -64, -1, 0, 1, 63, 64, 2 ** 62)]
    assert codes == sorted(codes)  # OrderedCode: byte order is numeric order


# ---- TensorFlow reads what dflow wrote (slow; TF_PYTHON) -----------------------------------------

TF_READ = textwrap.dedent("""
    import json, os, sys
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
    prefix, spec = sys.argv[1], json.loads(sys.argv[2])
    variables = {n: tf.Variable(tf.zeros(s, dtype=d), name=n) for n, (d, s) in spec.items()}
    with tf.Session() as sess:
        tf.train.Saver(variables).restore(sess, prefix)
        out = {}
        for n, v in variables.items():
            x = sess.run(v)
            out[n] = [b.hex() for b in np.asarray(x, dtype=object).ravel()] if x.dtype == object else \\
                [str(x.dtype), np.ascontiguousarray(x).tobytes().hex()]
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_tensorflow_restores_what_dflow_wrote(tmp_path):
    tf_python = os.environ.get("TF_PYTHON")
    if not tf_python:
        pytest.skip("TF_PYTHON names no Python with TensorFlow")
    values = dict(VALUES, big=np.random.default_rng(2).standard_normal((700, 300)).astype(np.float32))
    variables = _variables(values)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver(variables, format="tensorflow").save(sess, str(tmp_path / "model"), global_step=5,
                                                            write_meta_graph=False)
    spec = {n: ["string" if v.dtype == object else str(v.dtype), list(v.shape)] for n, v in values.items()}
    # TensorFlow finds it through dflow's `checkpoint` file, too
    prefix = str(tmp_path / "model-5")
    run = subprocess.run([tf_python, "-c", TF_READ, prefix, json.dumps(spec)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    for name, value in values.items():  # the very bytes dflow wrote, and the values meant
        if value.dtype == object:
            assert got[name] == [bytes(b).hex() for b in value.ravel()], name
        else:
            written = tf.train.load_variable(prefix, name)
            assert got[name] == [str(value.dtype), written.tobytes().hex()], name
            np.testing.assert_array_equal(written, value, err_msg=name)
    latest = subprocess.run([tf_python, "-c", "import sys, tensorflow as tf; "
                             "print(tf.train.latest_checkpoint(sys.argv[1]))", str(tmp_path)],
                            capture_output=True, text=True, timeout=300)
    assert latest.stdout.strip().splitlines()[-1] == prefix, latest.stderr[-2000:]
    assert sys.executable  # the test's own interpreter never imported TensorFlow
    assert "tensorflow" not in sys.modules


def test_a_large_tensor_is_read_in_parallel_pieces_in_order(tmp_path, monkeypatch):
    """Past two pieces a tensor's bytes are read on a few threads, piece by piece; the CRC is still
    taken in order (a damaged piece anywhere is caught), and a truncated file is DataLossError."""
    monkeypatch.setattr(tfc, "PIECE_BYTES", 1 << 12)
    value = np.random.default_rng(2).standard_normal((300, 100)).astype(np.float32)  # 117 KiB: 30 pieces
    prefix = str(tmp_path / "par")
    tfc.write_tf_checkpoint(prefix, {"w": value})
    np.testing.assert_array_equal(tfc.read_tf_checkpoint(prefix).read("w"), value)
    data = prefix + ".data-00000-of-00001"
    raw = bytearray(open(data, "rb").read())
    raw[50_000] ^= 0x10  # a bit in a middle piece
    open(data, "wb").write(bytes(raw))
    with pytest.raises(DataLossError, match="checksum mismatch"):
        tfc.read_tf_checkpoint(prefix).read("w")
    open(data, "wb").write(bytes(raw[:90_000]))
    with pytest.raises(DataLossError, match="truncated"):
        tfc.read_tf_checkpoint(prefix).read("w")
