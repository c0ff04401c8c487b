"""The `dflow` command: run an unchanged TF1 script on a chosen scheduler, inspect a checkpoint, run
a saved model over a dataset larger than memory.

    dflow run train.py --steps 1000 --scheduler tcp://10.0.0.5:8786 --memory-budget 2GB
    dflow run --as-tensorflow train_tf1.py            # `import tensorflow as tf` gives dflow
    dflow inspect-checkpoint ckpt/                     # variables, dtypes, shapes, checksums
    dflow explain train.py --memory-budget 2GB         # also print each distinct run's plan
    dflow graph model.ckpt-100.meta --format svg -o graph.svg   # a picture of a saved graph
    dflow coverage tf.contrib                          # which of TF1's names dflow provides
    dflow predict export/ --input data.zarr --output preds.zarr --memory-budget 2GB  # batch inference

`dflow run` and `dflow explain` take their own options (`--scheduler`, `--workers`,
`--memory-budget`, `--as-tensorflow`, `--[no-]progress`) anywhere before a `--`; every other argument
after SCRIPT, and everything after `--`, is the script's `sys.argv[1:]`. The script runs as `__main__` (runpy) with every Session
it creates without naming a scheduler using these settings (`dflow.config.set_default_session_settings`).
`dflow predict MODEL --input DATA --output OUT.zarr` is batch inference (see cli/predict.py).
"""

from __future__ import annotations

import argparse
import sys

from ..version import __version__
from .coverage import coverage_command
from .graph import graph_command
from .inspect import inspect_checkpoint
from .predict import predict_command
from .run import run_script

__all__ = ["main"]

# dflow run's own options: name -> takes a value
RUN_OPTIONS = {"--scheduler": True, "--workers": True, "--memory-budget": True, "--as-tensorflow": False,
               "--progress": False, "--no-progress": False, "--always-dask": False}


def _bytes(text):
    """argparse type of --memory-budget: "2GB", "512MiB" or a number of bytes."""
    from dask.utils import parse_bytes

    try:
        value = parse_bytes(text)
    except (ValueError, TypeError) as e:
        raise argparse.ArgumentTypeError(f"expected a size such as 2GB or 512MiB, got {text!r} ({e})") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive size, got {text!r}")
    return value


_SCHEDULERS = ("sync", "synchronous", "single-threaded", "threads", "threading", "processes", "multiprocessing",
               "distributed")


def _scheduler(text):
    """argparse type of --scheduler: a scheduler name or a scheduler address (tcp://HOST:PORT)."""
    if text in _SCHEDULERS or "://" in text:
        return text
    raise argparse.ArgumentTypeError(f"expected sync, threads, processes, distributed or an address "
                                     f"tcp://HOST:PORT, got {text!r}")


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _add_run_options(parser):
    """SCRIPT and dflow's own options, shared by `dflow run` and `dflow explain`."""
    parser.add_argument("script", metavar="SCRIPT", help="the Python file to run")
    parser.add_argument("--scheduler", type=_scheduler, default=None,
                        help="sync, threads, processes, distributed (a local cluster started for this run) or the "
                     "address of a Dask scheduler, tcp://HOST:PORT (default: each Session's own default)")
    parser.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                        help="worker threads or processes (for distributed: the local cluster's worker processes)")
    parser.add_argument("--memory-budget", type=_bytes, default=None, metavar="SIZE",
                        help="each Session's memory budget, e.g. 2GB: plans whose tasks cannot fit are refused")
    parser.add_argument("--always-dask", action="store_true",
                        help="send every plan through Dask (by default the default scheduler runs small in-memory "
                        "plans in this process, as a Session(scheduler='threads') does)")
    parser.add_argument("--as-tensorflow", action="store_true",
                        help="make `import tensorflow as tf` and `import tensorflow.compat.v1 as tf` give dflow")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="a progress bar for scheduler calls longer than 2 s (default: when stderr is a terminal)")


def _parser():
    parser = argparse.ArgumentParser(
        prog="dflow", description="dflow: TensorFlow 1.x programs on Dask. Run a TF1 script on a scheduler of "
        "your choice, or inspect a checkpoint.")
    parser.add_argument("--version", action="version", version=f"dflow {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser(
        "run", allow_abbrev=False, help="run a TF1 script with every Session on the given scheduler",
        description="Run SCRIPT as __main__ with ARGS as its sys.argv[1:]. dflow's options below may come "
        "before or after SCRIPT; use -- to pass an option of the same name to the script.",
        usage="dflow run [-h] [--scheduler SCHEDULER] [--workers N] [--memory-budget SIZE] [--always-dask] "
        "[--as-tensorflow] [--[no-]progress] SCRIPT [ARGS...] [-- ARGS...]")
    _add_run_options(run)
    explain = sub.add_parser(
        "explain", allow_abbrev=False, help="run a TF1 script, printing each distinct Session.run's plan",
        description="Run SCRIPT as `dflow run` does, printing on stderr, before each distinct Session.run "
        "(by fetch and feed names) is first run, its plan: stages, each task's projected memory and the "
        "projected peak (Session.explain).",
        usage="dflow explain [-h] [--scheduler SCHEDULER] [--workers N] [--memory-budget SIZE] [--always-dask] "
        "[--as-tensorflow] [--[no-]progress] SCRIPT [ARGS...] [-- ARGS...]")
    _add_run_options(explain)
    inspect = sub.add_parser("inspect-checkpoint", help="list a checkpoint's variables (dtypes, shapes, checksums)",
                             description="List the variables of a checkpoint (a prefix written by Saver.save, "
                             "or a directory: its latest checkpoint) like TF's inspect_checkpoint.")
    inspect.add_argument("path", metavar="PATH", help="a checkpoint prefix or a checkpoint directory")
    inspect.add_argument("--tensor-name", "--tensor_name", default=None, metavar="NAME",
                         help="print this variable's value")
    inspect.add_argument("--all-tensors", "--all_tensors", action="store_true",
                         help="print every variable's value")
    inspect.add_argument("--verify", action="store_true",
                         help="read every variable and check it against its stored checksum")
    graph = sub.add_parser("graph", help="a picture of a saved graph (graph file, .meta or SavedModel) via graphviz",
                           description="Draw a saved graph: ops in boxes nested by name scope, tensors as "
                           "edges labelled with their shapes, control inputs dashed.")
    graph.add_argument("path", metavar="FILE", help="a graph file, a meta graph (.meta) or a SavedModel directory")
    graph.add_argument("--format", default="svg", choices=["dot", "svg", "png", "pdf"],
                       help="dot: the DOT text (no Graphviz program needed); others run Graphviz's dot")
    graph.add_argument("-o", "--output", default=None, metavar="OUT", help="the file to write (default: stdout)")
    graph.add_argument("--tags", default=None, help="a SavedModel's meta graph tags, comma separated")
    predict = sub.add_parser(
        "predict", help="run a saved model over a dataset larger than memory into a Zarr group",
        description="Run MODEL (a SavedModel directory, a frozen graph .pb, or a .meta file and its checkpoint) "
        "over DATA (a Zarr array or group, a .npy file, or TFRecord files of tf.train.Example) chunk by chunk, "
        "writing one Zarr array per output into the group OUT.zarr, which appears only when all succeeded.")
    predict.add_argument("model", metavar="MODEL", help="a SavedModel directory, a frozen graph .pb or a .meta file")
    predict.add_argument("--input", required=True, metavar="DATA",
                         help="a Zarr array or group (one array per input key), a .npy file, or TFRecord files "
                         "(a path or a glob)")
    predict.add_argument("--output", required=True, metavar="OUT.zarr", help="the Zarr group to write")
    predict.add_argument("--signature", default=None, metavar="NAME",
                         help="the signature to run (default: serving_default)")
    predict.add_argument("--tags", default=None, help="a SavedModel's meta graph tags, comma separated (default: serve)")
    predict.add_argument("--inputs", default=None, metavar="NAMES",
                         help="input tensors (x:0) or signature keys, comma separated (needed without a signature)")
    predict.add_argument("--outputs", default=None, metavar="NAMES",
                         help="output tensors or signature keys, comma separated (needed without a signature)")
    predict.add_argument("--checkpoint", default=None, metavar="PREFIX",
                         help="the checkpoint of a .meta model (default: the latest one in its directory)")
    predict.add_argument("--batch-size", type=_positive_int, default=None, metavar="N",
                         help="rows per batch and per output chunk (default: the input's Zarr chunks; 1024 for "
                         "TFRecords)")
    predict.add_argument("--scheduler", type=_scheduler, default=None,
                         help="sync, threads, processes, distributed (a local cluster) or tcp://HOST:PORT")
    predict.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                         help="worker threads or processes")
    predict.add_argument("--memory-budget", type=_bytes, default=None, metavar="SIZE",
                         help="the run's memory budget, e.g. 2GB: a plan that cannot fit is refused")
    predict.add_argument("--overwrite", action="store_true", help="replace OUT.zarr if it is a Zarr group")
    predict.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                         help="a progress bar (default: when stderr is a terminal)")
    coverage = sub.add_parser("coverage", help="which of TF1's public names dflow provides",
                              description="List TF1's public names that `import dflow as tf` provides and lacks: "
                              "a line per module, or a module's names (MODULE such as tf.nn or tf.contrib.summary).")
    coverage.add_argument("module", metavar="MODULE", nargs="?", default=None, help="a TF1 module, e.g. tf.nn")
    return parser, {"run": run, "explain": explain}


def split_run_args(tokens):
    """(dflow's own option tokens, the script's argv tail) of the tokens after `dflow run`.

    dflow's options (RUN_OPTIONS, -h/--help before SCRIPT) are taken wherever they stand before `--`;
    the first other token is SCRIPT; the rest, and all after `--`, are the script's."""
    own, script_args, script = [], [], None
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        name = tok.split("=", 1)[0]
        if tok == "--":
            script_args += tokens[i + 1:]
            break
        if name in RUN_OPTIONS:
            own.append(tok)
            if RUN_OPTIONS[name] and "=" not in tok and i + 1 < len(tokens):
                own.append(tokens[i + 1])
                i += 1
        elif script is None:
            own.append(tok)  # SCRIPT, or -h / an unknown option argparse reports
            script = None if tok.startswith("-") else tok
        else:
            script_args.append(tok)
        i += 1
    return own, script_args


def main(argv=None):
    """The `dflow` console script; returns the exit status (a script's own `sys.exit` passes through)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser, script_parsers = _parser()
    if argv and argv[0] in script_parsers:
        own, script_args = split_run_args(argv[1:])
        args = script_parsers[argv[0]].parse_args(own)
        return run_script(args.script, script_args, scheduler=args.scheduler, workers=args.workers,
                          memory_budget=args.memory_budget, as_tensorflow=args.as_tensorflow,
                          progress=args.progress, explain=argv[0] == "explain", always_dask=args.always_dask)
    args = parser.parse_args(argv)
    if args.command == "inspect-checkpoint":
        return inspect_checkpoint(args.path, tensor_name=args.tensor_name, all_tensors=args.all_tensors,
                                  verify=args.verify)
    if args.command == "graph":
        tags = [t for t in args.tags.split(",") if t] if args.tags else None
        return graph_command(args.path, args.format, args.output, tags)
    if args.command == "predict":
        return predict_command(args)
    if args.command == "coverage":
        return coverage_command(args.module)
    parser.print_help()
    return 2
