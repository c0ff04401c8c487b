"""`dflow run` end to end: `python -m dflow.cli run SCRIPT ...` in subprocesses on small TF1 scripts."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dflow.cli import main, split_run_args

ROOT = Path(__file__).resolve().parents[2]
ENV = {"PYTHONPATH": str(ROOT), "PATH": os.path.dirname(sys.executable) + ":/usr/bin:/bin"}

TF1_SCRIPT = """\
import sys
import numpy as np
import dflow as tf

tf.app.flags.DEFINE_integer("steps", 2, "training steps")
FLAGS = tf.app.flags.FLAGS


def main(argv):
    x = tf.placeholder(tf.float32, [None, 2])
    w = tf.Variable(np.ones((2, 1), np.float32))
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(FLAGS.steps):
            sess.run(train, {x: [[1.0, 2.0], [3.0, 4.0]]})
        print("session", sess.scheduler, sess.memory_budget)
        print("w", sess.run(w).ravel().round(5).tolist())
    with tf.Session(scheduler="threads", small_plan_bytes=0) as own:  # a Session naming its scheduler keeps it
        print("own", own.scheduler)
    print("argv", argv, __name__)
    return 3


if __name__ == "__main__":
    tf.app.run()
"""


def dflow_cli(*args, cwd, timeout=180):
    return subprocess.run([sys.executable, "-m", "dflow.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env=ENV, timeout=timeout)


def lines(out, prefix):
    return [line for line in out.stdout.splitlines() if line.startswith(prefix)]


def expected_w(steps):
    """The script's weights after `steps` of gradient descent, in numpy."""
    import numpy as np

    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    w = np.ones((2, 1), np.float32)
    for _ in range(steps):
        w = w - 0.1 * (2.0 / 2.0) * x.T @ (x @ w - 1.0)
    return w.ravel().round(5).tolist()


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(TF1_SCRIPT)
    return path


def test_run_on_a_scheduler_with_flags_and_exit_status(script, tmp_path):
    out = dflow_cli("run", "train.py", "--steps", "3", "--scheduler", "sync", "--memory-budget", "2GB", "pos",
                    "--", "--scheduler=x", cwd=tmp_path)
    assert out.returncode == 3, out.stderr  # main's result, through tf.app.run's sys.exit
    assert lines(out, "session") == ["session sync 2000000000"]
    assert lines(out, "own") == ["own threads"]
    assert lines(out, "argv") == ["argv ['train.py', 'pos', '--scheduler=x'] __main__"]
    got = eval(lines(out, "w")[0][2:])
    assert got == pytest.approx(expected_w(3), rel=1e-5)


def test_run_without_options_uses_the_sessions_defaults(script, tmp_path):
    out = dflow_cli("run", str(script), cwd=ROOT)
    assert out.returncode == 3, out.stderr
    assert lines(out, "session") == ["session threads None"]
    assert eval(lines(out, "w")[0][2:]) == pytest.approx(expected_w(2), rel=1e-5)


def test_as_tensorflow(tmp_path):
    (tmp_path / "tf1.py").write_text(
        "import sys\n"
        "import tensorflow.compat.v1 as tf\n"
        "import tensorflow as tf_top\n"
        "from tensorflow.compat.v1 import logging as tf_logging\n"
        "import dflow\n"
        "tf.disable_eager_execution()\n"
        "tf.disable_v2_behavior()\n"
        "assert tf is dflow and tf_top is dflow and tf_logging is dflow.logging\n"
        "assert dflow.__spec__.name == 'dflow'\n"
        "a = tf.constant([[1.0, 2.0]])\n"
        "with tf.Session() as sess:\n"
        "    print('sum', sess.run(tf.reduce_sum(a)), sess.scheduler)\n"
        "import tensorflow.keras\n"
        "from tensorflow.keras.layers import Dense\n"
        "print('keras', tensorflow.keras is dflow.keras, Dense is dflow.keras.layers.Dense)\n"
        "try:\n"
        "    import tensorflow.no_such_module\n"
        "except ModuleNotFoundError as e:\n"
        "    print('missing', e.name)\n"
        "    print(e)\n")
    out = dflow_cli("run", "--as-tensorflow", "--scheduler", "threads", "--always-dask", "--workers", "2", "tf1.py", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert lines(out, "sum") == ["sum 3.0 threads"]
    assert lines(out, "keras") == ["keras True True"]
    assert lines(out, "missing") == ["missing tensorflow.no_such_module"]
    assert "No module named 'tensorflow.no_such_module'" in out.stdout and "--as-tensorflow" in out.stdout
    # without the option the script's import is the real one (absent here): no alias leaks
    plain = dflow_cli("run", "tf1.py", cwd=tmp_path)
    assert plain.returncode == 1 and "ModuleNotFoundError" in plain.stderr


@pytest.mark.slow  # a process pool starts (~5 s on a busy machine)
def test_unguarded_script_on_processes_runs_once(tmp_path):
    """Worker processes spawned during the run do not run the script's top level again; the
    script's own functions reach them (py_func)."""
    (tmp_path / "flat.py").write_text(
        "import os\n"
        "import numpy as np\n"
        "import dflow as tf\n"
        "print('top-level', os.getpid(), flush=True)\n"
        "def double(a):\n"
        "    return (a * 2).astype(np.float32)\n"
        "x = tf.placeholder(tf.float32, [4])\n"
        "with tf.Session() as sess:\n"
        "    print('result', sess.scheduler, sess.run(tf.py_func(double, [x], tf.float32), {x: [1, 2, 3, 4]}))\n")
    out = dflow_cli("run", "flat.py", "--scheduler", "processes", "--workers", "1", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert len(lines(out, "top-level")) == 1, out.stdout
    assert lines(out, "result") == ["result processes [2. 4. 6. 8.]"]


def test_in_process_run_leaves_nothing_behind(tmp_path, capsys):
    """After a run (even a failing one) the session settings, the tensorflow aliases, sys.argv,
    sys.path and __main__ are as before."""
    import dflow

    (tmp_path / "ok.py").write_text(
        "import sys\n"
        "import tensorflow.compat.v1 as tf\n"
        "import dflow\n"
        "assert tf is dflow and sys.modules['__main__'].__file__ == __file__\n"
        "print('settings', dflow.config.default_session_settings(), sys.argv)\n"
        "if sys.argv[1:] == ['fail']:\n"
        "    raise RuntimeError('failed')\n")
    before = (list(sys.argv), list(sys.path), sys.modules["__main__"], list(sys.meta_path))
    assert main(["run", "--as-tensorflow", "--scheduler", "sync", "--memory-budget", "1GB",
                 str(tmp_path / "ok.py"), "x"]) == 0
    assert capsys.readouterr().out == ("settings {'scheduler': 'sync', 'memory_budget': 1000000000} "
                                       f"['{tmp_path / 'ok.py'}', 'x']\n")
    with pytest.raises(RuntimeError, match="failed"):
        main(["run", "--as-tensorflow", str(tmp_path / "ok.py"), "fail"])
    assert (list(sys.argv), list(sys.path), sys.modules["__main__"], list(sys.meta_path)) == before
    assert dflow.config.default_session_settings() == {}
    assert not [m for m in sys.modules if m == "tensorflow" or m.startswith("tensorflow.")]
    assert dflow.__spec__.name == "dflow" and dflow.compat.__spec__.name == "dflow.compat"


def test_script_exception_is_the_scripts_traceback(tmp_path):
    (tmp_path / "boom.py").write_text("raise ValueError('boom')\n")
    out = dflow_cli("run", "boom.py", cwd=tmp_path)
    assert out.returncode == 1 and "ValueError: boom" in out.stderr


def test_bad_options(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.py").write_text("")
    assert main(["run", "nope.py"]) == 2
    assert "no such script: nope.py" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["run", "ok.py", "--memory-budget", "lots"])
    assert e.value.code == 2 and "--memory-budget: expected a size" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["run", "ok.py", "--scheduler", "fast"])
    assert e.value.code == 2 and "--scheduler: expected sync, threads" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["run", "--workers", "0", "ok.py"])
    assert e.value.code == 2 and "--workers: expected a positive integer" in capsys.readouterr().err
    assert main([]) == 2 and "inspect-checkpoint" in capsys.readouterr().out


@pytest.mark.slow  # the client retries for its 10 s timeout
def test_unreachable_scheduler(tmp_path, capsys):
    (tmp_path / "ok.py").write_text("")
    with pytest.raises(SystemExit) as e:
        main(["run", str(tmp_path / "ok.py"), "--scheduler", "tcp://127.0.0.1:9"])
    assert e.value.code == 1 and "cannot connect to the Dask scheduler at tcp://127.0.0.1:9" in capsys.readouterr().err


def test_help_and_version(capsys):
    from dflow.version import __version__

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"dflow {__version__}"
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and "run" in out and "inspect-checkpoint" in out
    with pytest.raises(SystemExit) as e:
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and "--scheduler" in out and "--as-tensorflow" in out


@pytest.mark.parametrize("tokens,own,rest", [
    (["s.py"], ["s.py"], []),
    (["s.py", "--steps", "3", "--scheduler", "sync", "x"], ["s.py", "--scheduler", "sync"], ["--steps", "3", "x"]),
    (["--scheduler=sync", "--as-tensorflow", "s.py", "-h"], ["--scheduler=sync", "--as-tensorflow", "s.py"], ["-h"]),
    (["-h"], ["-h"], []),
    (["s.py", "--workers", "2", "--", "--workers", "5"], ["s.py", "--workers", "2"], ["--workers", "5"]),
    (["--memory-budget", "1GB", "s.py", "a", "--", "--", "b"], ["--memory-budget", "1GB", "s.py"], ["a", "--", "b"]),
])
def test_split_run_args(tokens, own, rest):
    assert split_run_args(tokens) == (own, rest)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dask_cluster_commands(tmp_path):
    """A scheduler and one worker started with the `dask` command, as a cluster is; killed afterwards."""
    dask = os.path.join(os.path.dirname(sys.executable), "dask")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--dashboard-address", "127.0.0.1:0"], cwd=tmp_path, env=ENV,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        procs.append(subprocess.Popen([dask, "worker", address, "--nworkers", "1", "--nthreads", "1"], cwd=tmp_path,
                                      env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from distributed import Client

        deadline = time.monotonic() + 120
        while True:
            try:
                with Client(address, timeout="5s") as client:
                    client.wait_for_workers(1, timeout=60)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@pytest.mark.slow
def test_run_against_a_cluster_started_with_dask_commands(script, tmp_path, dask_cluster_commands):
    out = dflow_cli("run", "train.py", "--scheduler", dask_cluster_commands, "--steps", "2", cwd=tmp_path, timeout=300)
    assert out.returncode == 3, out.stderr
    assert lines(out, "session") == ["session distributed None"]
    assert eval(lines(out, "w")[0][2:]) == pytest.approx(expected_w(2), rel=1e-5)
    assert f"using the Dask scheduler at {dask_cluster_commands} (1 worker); dashboard: http" in out.stderr


@pytest.mark.slow
def test_run_on_a_local_cluster_of_its_own(script, tmp_path):
    out = dflow_cli("run", "train.py", "--scheduler", "distributed", "--workers", "1", "--memory-budget", "1GB",
                    cwd=tmp_path, timeout=300)
    assert out.returncode == 3, out.stderr
    assert lines(out, "session") == ["session distributed 1000000000"]
    assert eval(lines(out, "w")[0][2:]) == pytest.approx(expected_w(2), rel=1e-5)
    assert "started a local Dask cluster of 1 worker process at tcp://127.0.0.1:" in out.stderr
    assert "dashboard: http://127.0.0.1:" in out.stderr


def test_as_tensorflow_maps_tf1_scripts_internal_imports(tmp_path):
    """The seed's `from tensorflow.python.framework import graph_util` / `from tensorflow.python.platform
    import gfile` PB save-and-restore snippets, and other internal imports TF1 scripts use."""
    (tmp_path / "pb.py").write_text(
        "import tensorflow as tf\n"
        "from tensorflow.python.framework import graph_util\n"
        "from tensorflow.python.platform import gfile\n"
        "from tensorflow.python.ops import array_ops, math_ops, nn_ops, init_ops, variable_scope\n"
        "from tensorflow.python.ops.rnn_cell_impl import BasicLSTMCell\n"
        "from tensorflow.python.training import saver as saver_lib\n"
        "from tensorflow.python.framework import dtypes, ops\n"
        "from tensorflow.contrib import rnn\n"
        "from tensorflow.contrib.learn.python.learn import learn_runner\n"
        "import tensorflow.python.saved_model.tag_constants as tag_constants\n"
        "import dflow\n"
        "assert graph_util is dflow.graph_util and gfile is dflow.gfile and rnn is dflow.contrib.rnn\n"
        "assert array_ops.concat is dflow.concat and nn_ops.relu is dflow.nn.relu and dtypes.float32 is dflow.float32\n"
        "assert BasicLSTMCell is dflow.nn.rnn_cell.BasicLSTMCell and saver_lib.Saver is dflow.train.Saver\n"
        "assert learn_runner.run is dflow.contrib.learn.learn_runner.run and ops.Graph is dflow.Graph\n"
        "assert tag_constants.SERVING == 'serve'\n"
        "save_file = 'model.pb'\n"
        "x = tf.Variable(tf.random_uniform([3]))\n"
        "y = tf.Variable(tf.random_uniform([3]))\n"
        "z = tf.add(x, y, name='op_to_store')\n"
        "with tf.Session() as sess:\n"
        "    sess.run(tf.global_variables_initializer())\n"
        "    zv = sess.run(z)\n"
        "    constant_graph = graph_util.convert_variables_to_constants(sess, sess.graph_def, ['op_to_store'])\n"
        "    with tf.gfile.FastGFile(save_file, mode='wb') as f:\n"
        "        f.write(constant_graph.SerializeToString())\n"
        "tf.reset_default_graph()\n"
        "with tf.Session() as sess:\n"
        "    with gfile.FastGFile(save_file, 'rb') as f:\n"
        "        graph_def = tf.GraphDef()\n"
        "        graph_def.ParseFromString(f.read())\n"
        "    sess.graph.as_default()\n"
        "    tf.import_graph_def(graph_def, name='')\n"
        "    sess.run(tf.global_variables_initializer())\n"
        "    z = sess.graph.get_tensor_by_name('op_to_store:0')\n"
        "    print('same', bool((sess.run(z) == zv).all()))\n"
        "from tensorflow.python.keras import backend as K\n"
        "print('pykeras', K is dflow.keras.backend)\n"
        "for name in ('tensorflow.python.debug', 'tensorflow.python.tools.freeze_graph', 'tensorflow.contrib.crf'):\n"
        "    try:\n"
        "        __import__(name)\n"
        "    except ModuleNotFoundError as e:\n"
        "        print('missing', e.name, '|', e)\n"
        "try:\n"
        "    from tensorflow.python.ops.array_ops import no_such_op\n"
        "except ImportError as e:\n"
        "    print('noname', e)\n")
    out = dflow_cli("run", "--as-tensorflow", "pb.py", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert lines(out, "same") == ["same True"]
    assert lines(out, "pykeras") == ["pykeras True"]
    missing = lines(out, "missing")
    assert [m.split(" | ")[0] for m in missing] == [
        "missing tensorflow.python.debug", "missing tensorflow.python.tools",  # the first module it lacks
        "missing tensorflow.contrib.crf"]
    assert "tensorflow.python.framework" in missing[0] and "cannot map" not in missing[0]
    assert "dflow does not provide tf.contrib.crf, a TF1 name" in missing[2]
    assert "no_such_op" in lines(out, "noname")[0]
