"""tf.app.run and tf.app.flags / tf.flags as TF1 (absl-py underneath), in subprocesses with argv.

Expected behaviours are TF 2.21's `tf.compat.v1.app` (probed with the same script): unknown
flags pass through to main's argv, main's result is the exit status, a flag read before parsing
parses sys.argv (and then an unknown flag is UnrecognizedFlagError).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import dflow as tf

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """\
import sys
import dflow as tf

flags = tf.app.flags
flags.DEFINE_string("name", "world", "who")
flags.DEFINE_integer("steps", 3, "how many")
flags.DEFINE_float("lr", 0.1, "learning rate")
flags.DEFINE_boolean("verbose", False, "chatty")
flags.DEFINE_bool("fast", True, "quick")
flags.DEFINE_list("layers", ["a", "b"], "layer names")
flags.DEFINE_enum("mode", "train", ["train", "eval"], "what to do")
tf.flags.DEFINE_string(flag_name="old", default_value="o", docstring="TF's old keyword names")
if "--required" in sys.argv:
    flags.DEFINE_string("must", None, "required")
    flags.mark_flag_as_required("must")
FLAGS = flags.FLAGS
if "--early" in sys.argv:
    print("early", FLAGS.name)  # before tf.app.run: parses sys.argv itself (TF1)


def main(argv):
    print("argv", argv[1:])
    print("flags", FLAGS.name, FLAGS.steps, FLAGS.lr, FLAGS.verbose, FLAGS.fast, FLAGS.layers, FLAGS.mode,
          FLAGS.old)
    return FLAGS.steps - 3


if __name__ == "__main__":
    tf.app.run()
"""


def run_script(tmp_path, *args):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def lines(out, prefix):
    return [line for line in out.stdout.splitlines() if line.startswith(prefix)]


def test_defaults_and_exit_status(tmp_path):
    out = run_script(tmp_path)
    assert out.returncode == 0, out.stderr
    assert lines(out, "argv") == ["argv []"]
    assert lines(out, "flags") == ["flags world 3 0.1 False True ['a', 'b'] train o"]


def test_flags_parsed_unknown_ones_passed_to_main(tmp_path):
    out = run_script(tmp_path, "--name=x", "--steps", "5", "--lr=2", "--verbose", "--nofast", "--layers=c,d,e",
                     "--mode", "eval", "--old=n", "--unknown=3", "pos1")
    assert out.returncode == 2, out.stderr  # main returned steps - 3
    assert lines(out, "argv") == ["argv ['--unknown=3', 'pos1']"]
    assert lines(out, "flags") == ["flags x 5 2.0 True False ['c', 'd', 'e'] eval n"]


@pytest.mark.parametrize("args,error", [
    (["--mode=bad"], "IllegalFlagValueError: flag --mode=bad: value should be one of <train|eval>"),
    (["--steps=abc"], "IllegalFlagValueError: flag --steps=abc"),
    (["--early", "--name=y"], "UnrecognizedFlagError: Unknown command line flag 'early'"),
    (["--required"], "Flag --must must have a value other than None"),
])
def test_bad_command_lines(tmp_path, args, error):
    out = run_script(tmp_path, *args)
    assert out.returncode == 1 and error in out.stderr, (out.returncode, out.stderr)


def test_flag_read_before_run_parses_argv(tmp_path):
    script = tmp_path / "early.py"
    script.write_text("import dflow as tf\n"
                      "tf.flags.DEFINE_integer('n', 1, 'n')\n"
                      "print('n', tf.flags.FLAGS.n)\n")
    out = subprocess.run([sys.executable, str(script), "--n=4"], capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0 and out.stdout.strip() == "n 4", out.stderr


def test_namespace():
    assert tf.app.flags is tf.flags and tf.compat.v1.app.flags is tf.flags
    for name in ["DEFINE_string", "DEFINE_integer", "DEFINE_float", "DEFINE_boolean", "DEFINE_bool", "DEFINE_list",
                 "DEFINE_enum", "FLAGS", "mark_flag_as_required", "UnrecognizedFlagError", "FlagValues"]:
        assert hasattr(tf.flags, name), name
