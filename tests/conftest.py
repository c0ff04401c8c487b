"""Shared fixtures: sessions over every execution mode and a real distributed LocalCluster.

`mode` is one of "eager" (the in-process path for small plans), "sync", "threads", "processes"
and "distributed" (a 2-worker LocalCluster on loopback, started once per test session).
Op tests use `run_modes` / the `sess_factory` fixture to compare every mode with numpy.

Whole-program tests (a TF1 program run on default `tf.Session()`s) are marked `program`
(`@pytest.mark.program`, or `pytestmark = pytest.mark.program` for a whole module). Each such test
runs once per PROGRAM_MODES entry, with the mode last in its id (`test_x[dask-sync]`,
`test_y[3-dask-processes]`):

- `inprocess`: plain defaults (small plans take the in-process eager path);
- `dask-sync`, `dask-threads`, `dask-processes`: inside
  `session_defaults(scheduler=..., small_plan_bytes=0)`, so every Session created without a
  `target`/`scheduler` sends every plan through Dask on that scheduler. Sessions that name a
  scheduler themselves are unaffected.

The `program_mode` fixture gives the mode's name (None in unmarked tests), for tests that must pass
it on, e.g. to a subprocess (`program_mode_command`).

Known failures are declared on the marker, as strict xfails, so that a fix shows as XPASS(strict)
and the entry must be removed: `@pytest.mark.program(xfail={key: reason})`, where `key` is a mode
name, "dask" (the three dask modes) or a whole parametrization id such as "3-dask-sync", and the
value a reason or a dict of pytest.mark.xfail arguments (`dict(reason=..., raises=SomeError)`:
failing otherwise is then a failure). Several `program` markers on one test (module + function)
add up their xfail tables; the closest wins for a key.

`program(slow={key: reason})` (keys as for xfail) marks those runs `slow`: deselected by default,
run with `-m slow`. It is for the few runs that cost tens of seconds and repeat what the test's
other modes already show.

`program(extra={"chunked-sync": dict(scheduler="sync", chunks=3)})` adds runs with explicit Session
arguments, which the test gets from the `session_kwargs` fixture ({} in the PROGRAM_MODES) and
passes to its `tf.Session(**session_kwargs)`; `program(modes=[...])` restricts the PROGRAM_MODES.

`tf_python` (slow tests only) is an interpreter with TensorFlow and dflow's dependencies, for tests
that have TensorFlow read what dflow wrote or share a process with dflow: $TF_PYTHON when set,
else a throw-away virtual environment made once (`tensorflow-cpu`, `tf-keras` and this checkout
installed into it, under $DFLOW_TF_ENV or the system temp directory); the test is skipped when
neither can be had. Such a test runs TensorFlow in a subprocess with `PYTHONPATH` at the checkout.

`-m "not program"` deselects them; `--program-modes=inprocess,dask-sync` runs only some modes.

Cost: `dask-processes` starts a spawn process pool once per test process (~1 s; Sessions share it)
and ships every run's task graph to it (~15 ms a run, ~100 ms for word2vec's), so the two 1000-step programs of
tests/train/test_tf1_examples.py use `program(modes=[...])` to skip it (~15 s each) and run on
threads only with `-m slow` (sync shows the same trajectory), as do the examples of hundreds of
runs on processes (tests/test_examples.py); every other program runs in all four modes.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import dflow as tf

LOCAL_MODES = ["eager", "sync", "threads"]
ALL_MODES = ["eager", "sync", "threads", "processes", "distributed"]


REPO = pathlib.Path(__file__).resolve().parents[1]


def _throwaway_tf_env():
    """A venv with tensorflow-cpu, tf-keras and this checkout (editable), made once; None if pip fails."""
    root = pathlib.Path(os.environ.get("DFLOW_TF_ENV") or pathlib.Path(tempfile.gettempdir()) / "dflow-test-tfenv")
    py = root / "bin" / "python"
    stamp = root / ".complete"
    if stamp.exists():
        return str(py)
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(root)], check=True, capture_output=True,
                       timeout=300)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "tensorflow-cpu", "tf-keras", "-e", str(REPO)],
                       check=True, capture_output=True, timeout=1800)
    except (subprocess.SubprocessError, OSError):
        return None
    stamp.write_text("ok\n")
    return str(py)


@pytest.fixture(scope="session")
def tf_python():
    """An interpreter with TensorFlow 2.x and dflow's dependencies (see the module doc)."""
    py = os.environ.get("TF_PYTHON", "").strip() or _throwaway_tf_env()
    if not py:
        pytest.skip("no TF_PYTHON and no throw-away TensorFlow environment could be made")
    return py


def run_tf(tf_python, code, timeout=600):
    """Runs `code` under `tf_python` with this checkout first on the path; returns its stdout.

    A failure raises AssertionError with the child's stderr."""
    env = dict(os.environ, PYTHONPATH=str(REPO), TF_CPP_MIN_LOG_LEVEL="3", TF_USE_LEGACY_KERAS="1")
    proc = subprocess.run([tf_python, "-c", code], capture_output=True, text=True, timeout=timeout, env=env)
    assert proc.returncode == 0, f"TensorFlow subprocess failed:\n{proc.stderr[-4000:]}"
    return proc.stdout


@pytest.fixture(scope="session")
def dask_client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=":0", silence_logs=40)
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def make_session(mode, graph=None, chunks="auto", client=None):
    """A Session running in `mode` (see module doc); dask modes never take the eager path."""
    if mode == "eager":
        return tf.Session(graph=graph, chunks=chunks, small_plan_bytes=1 << 30)
    if mode == "distributed":
        return tf.Session(graph=graph, scheduler=client, chunks=chunks)
    return tf.Session(graph=graph, scheduler=mode, chunks=chunks, small_plan_bytes=0)  # "threads" too: Dask


@pytest.fixture(autouse=True)
def _fresh_default_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


@pytest.fixture(params=LOCAL_MODES)
def mode(request):
    return request.param


@pytest.fixture(params=ALL_MODES)
def any_mode(request):
    return request.param


@pytest.fixture
def sess_factory(request):
    """sess_factory(mode, chunks=...) -> Session; distributed mode uses the shared LocalCluster."""
    opened = []

    def factory(mode, graph=None, chunks="auto"):
        client = request.getfixturevalue("dask_client") if mode == "distributed" else None
        s = make_session(mode, graph=graph, chunks=chunks, client=client)
        opened.append(s)
        return s

    yield factory
    for s in opened:
        s.close()


def rand(shape, dtype=np.float32, seed=0, *, lo=None, hi=None, scale=1.0):
    """Test values of `dtype` drawn from `np.random.default_rng(seed)`: floats standard normal times
    `scale` (uniform on [lo, hi) when `lo` is given), complex numbers with such real then imaginary
    parts, integers uniform on [lo, hi) (default [-5, 6), [0, 6) unsigned), bools fair coin flips."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        lo = (0 if dtype.kind == "u" else -5) if lo is None else lo
        return rng.integers(lo, 6 if hi is None else hi, shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind == "c":
        return (scale * (rng.standard_normal(shape) + 1j * rng.standard_normal(shape))).astype(dtype)
    if lo is not None:
        return rng.uniform(lo, hi, shape).astype(dtype)
    return (rng.standard_normal(shape) * scale).astype(dtype)


def run_modes(fetches, feed_dict=None, modes=LOCAL_MODES, chunks=2, graph=None):
    """Runs `fetches` in each local mode (dask modes with small `chunks`, so several chunks are
    exercised); asserts the modes agree and returns the first result."""
    results = []
    for m in modes:
        with make_session(m, graph=graph, chunks=chunks) as s:
            results.append(s.run(fetches, feed_dict))
    for m, r in zip(modes[1:], results[1:]):
        _assert_same(results[0], r, f"{modes[0]} vs {m}")
    return results[0]


def _assert_same(a, b, what):
    if isinstance(a, dict):
        for k in a:
            _assert_same(a[k], b[k], what)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), what
        for x, y in zip(a, b):
            _assert_same(x, y, what)
    elif a is None:
        assert b is None, what
    else:
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, f"{what}: shapes {a.shape} != {b.shape}"
        assert a.dtype == b.dtype, f"{what}: dtypes {a.dtype} != {b.dtype}"
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=what)
        else:
            np.testing.assert_array_equal(a, b, err_msg=what)


# ---- whole-program tests on every path (see the module doc) -------------------------------------

PROGRAM_MODES = {"inprocess": None, "dask-sync": "sync", "dask-threads": "threads", "dask-processes": "processes"}
DASK_PROGRAM_MODES = [m for m in PROGRAM_MODES if m != "inprocess"]


def pytest_addoption(parser):
    parser.addoption("--program-modes", default=",".join(PROGRAM_MODES),
                     help="comma-separated modes that `program` tests run in (default: all of "
                          + ", ".join(PROGRAM_MODES) + ")")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "program(xfail={mode or id: reason}, slow={mode or id: reason}, modes=[...], "
        "extra={name: Session kwargs}): a "
        "whole TF1 program run on default Sessions, multiplied over PROGRAM_MODES (tests/conftest.py)")


def _program_markers(node):
    return list(node.iter_markers("program"))


def _program_extras(node):
    """name -> Session kwargs of the closest `program(extra=...)` marker."""
    for marker in _program_markers(node):
        if "extra" in marker.kwargs:
            return marker.kwargs["extra"]
    return {}


@pytest.hookimpl(trylast=True)  # after @pytest.mark.parametrize: the mode is last in the test id
def pytest_generate_tests(metafunc):
    markers = _program_markers(metafunc.definition)
    if not markers:
        return
    wanted = [m.strip() for m in metafunc.config.getoption("--program-modes").split(",") if m.strip()]
    unknown = set(wanted) - set(PROGRAM_MODES)
    if unknown:
        raise pytest.UsageError(f"--program-modes: unknown {sorted(unknown)}; known: {list(PROGRAM_MODES)}")
    for marker in markers:  # the closest marker naming `modes` restricts them
        if "modes" in marker.kwargs:
            wanted = [m for m in wanted if m in marker.kwargs["modes"]]
            break
    wanted += list(_program_extras(metafunc.definition))
    metafunc.parametrize("program_mode", wanted, ids=wanted, indirect=True)


def _program_keys(item, table, callspec, mode):
    """The values of `program(<table>={key: ...})` entries that apply to this parametrization."""
    return [why for marker in _program_markers(item) for key, why in marker.kwargs.get(table, {}).items()
            if key in (callspec.id, mode) or (key == "dask" and mode in DASK_PROGRAM_MODES)]


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: a `slow` entry is deselected like a slow test
def pytest_collection_modifyitems(config, items):
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or "program_mode" not in callspec.params:
            continue
        mode = callspec.params["program_mode"]
        known = _program_keys(item, "xfail", callspec, mode)
        if known:
            why = known[0] if isinstance(known[0], dict) else {"reason": known[0]}
            item.add_marker(pytest.mark.xfail(strict=True, **why))
        if _program_keys(item, "slow", callspec, mode):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def program_mode(request):
    """The PROGRAM_MODES entry (or `extra` name) this `program` test runs in, None elsewhere; dask
    modes run the test inside session_defaults(scheduler=..., small_plan_bytes=0)."""
    mode = getattr(request, "param", None)
    if PROGRAM_MODES.get(mode) is None:
        yield mode
        return
    from dflow.schedule.session import session_defaults

    with session_defaults(scheduler=PROGRAM_MODES[mode], small_plan_bytes=0):
        yield mode


@pytest.fixture
def session_kwargs(request, program_mode):
    """Keyword arguments for the test's explicit `tf.Session(**session_kwargs)`: {} in the
    PROGRAM_MODES (which act through session_defaults), the `extra` entry's otherwise."""
    return dict(_program_extras(request.node).get(program_mode, {}))


def program_mode_command(mode, path):
    """argv running the script `path` as `python path` would, in PROGRAM_MODES `mode`."""
    import sys

    scheduler = PROGRAM_MODES.get(mode)
    if scheduler is None:
        return [sys.executable, str(path)]
    code = ("import runpy, sys\n"
            "from dflow.schedule.session import session_defaults\n"
            "path = sys.argv[1]\n"
            "sys.argv = sys.argv[1:]\n"
            "sys.path[0] = __import__('os').path.dirname(path)\n"
            f"with session_defaults(scheduler={scheduler!r}, small_plan_bytes=0):\n"
            "    runpy.run_path(path, run_name='__main__')\n")
    return [sys.executable, "-c", code, str(path)]
