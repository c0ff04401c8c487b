"""`dflow run`: an unchanged TF1 script run as `__main__`, every Session it creates on one scheduler.

The settings go through `dflow.config.set_default_session_settings`, which a Session reads when
its caller names no scheduler (or target), budget or worker count: a script that names its own keeps
them. `--scheduler distributed` starts one local cluster for the whole run (every Session of the
script shares it, and its dashboard) and closes it at the end; `tcp://HOST:PORT` uses a running
one. Either way the dashboard link is printed on stderr, so the script's stdout stays its own.
"""

from __future__ import annotations

import contextlib
import os
import sys

from .. import config
from .as_tensorflow import tensorflow_aliases
from .explain import explaining
from .progress import TaskProgress

__all__ = ["run_script"]


def _say(message):
    print(f"dflow: {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _local_cluster(workers, memory_budget):
    """A LocalCluster on loopback for the run (one single-threaded worker process per core, or
    `workers`, each limited to its share of the budget), with a dashboard on a free port."""
    from distributed import LocalCluster

    n = workers or os.cpu_count() or 1
    limit = max(1, memory_budget // n) if memory_budget else "auto"
    with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, memory_limit=limit, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", silence_logs=40) as cluster:
        _say(f"started a local Dask cluster of {n} worker process{'es' if n > 1 else ''} at "
             f"{cluster.scheduler_address}; dashboard: {cluster.dashboard_link}")
        yield cluster.scheduler_address


def _announce_cluster(address):
    """Connects once to the scheduler at `address` to print its dashboard link; exits with a clear
    message when nothing answers there."""
    from distributed import Client

    try:
        with Client(address, timeout="10s") as client:
            workers = len(client.scheduler_info().get("workers", {}))
            _say(f"using the Dask scheduler at {address} ({workers} worker{'s' if workers != 1 else ''}); "
                 f"dashboard: {client.dashboard_link}")
    except OSError as e:
        _say(f"cannot connect to the Dask scheduler at {address}: {e}")
        raise SystemExit(1) from None


def _run_as_main(path):
    """Runs the file at `path` as the `__main__` module, as `python path` would, except that its
    module spec is named `__main__`: processes spawned while it runs (the processes scheduler's
    pool, a LocalCluster's workers) then do not run the script again on start (multiprocessing
    re-imports a main module known only by its path; dask ships the script's functions by value)."""
    import builtins
    import importlib.machinery
    import types

    loader = importlib.machinery.SourceFileLoader("__main__", path)
    code = compile(loader.get_data(path), path, "exec", dont_inherit=True)
    module = types.ModuleType("__main__")
    module.__dict__.update(__file__=path, __builtins__=builtins, __loader__=loader, __cached__=None,
                           __spec__=importlib.machinery.ModuleSpec("__main__", loader, origin=path))
    saved = sys.modules["__main__"]
    sys.modules["__main__"] = module
    try:
        exec(code, module.__dict__)
    finally:
        sys.modules["__main__"] = saved


@contextlib.contextmanager
def _script_context(script, path, script_args):
    """sys.argv and sys.path as `python SCRIPT ARGS...` would set them; restored afterwards."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [script, *script_args]
    sys.path.insert(0, os.path.dirname(path))
    try:
        yield
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path


def run_script(script, script_args=(), scheduler=None, workers=None, memory_budget=None, as_tensorflow=False,
               progress=None, explain=False, always_dask=False):
    """Runs `script` as `__main__` with `script_args`; returns 0, or raises the script's SystemExit.
    `progress`: show a bar for scheduler calls over 2 s (None: when stderr is a terminal).
    `explain`: print the plan of each distinct Session.run on stderr the first time (dflow explain).
    `always_dask`: every Session sends every plan through Dask (small_plan_bytes=0)."""
    path = os.path.abspath(script)
    if not os.path.isfile(path):
        _say(f"no such script: {script}")
        return 2
    with contextlib.ExitStack() as stack:
        if scheduler == "distributed":
            scheduler = stack.enter_context(_local_cluster(workers, memory_budget))
        elif scheduler is not None and "://" in scheduler:
            _announce_cluster(scheduler)
        config.set_default_session_settings(scheduler=scheduler, memory_budget=memory_budget, num_workers=workers,
                                            small_plan_bytes=0 if always_dask else None)
        stack.callback(config.set_default_session_settings)
        if as_tensorflow:
            stack.enter_context(tensorflow_aliases())
        if explain:
            stack.enter_context(explaining())
        if progress or (progress is None and sys.stderr.isatty()):
            stack.enter_context(TaskProgress())
        stack.enter_context(_script_context(script, path, list(script_args)))
        _run_as_main(path)
    return 0
