"""tf.logging: TF1's functions on the `tensorflow` logger (levels, verbosity, every-n, the caller's line)."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

import dflow as tf

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def records(caplog):
    """The tensorflow logger's records (it propagates to the root logger, where caplog listens)."""
    logger = logging.getLogger("tensorflow")
    level = logger.level
    caplog.set_level(logging.DEBUG)
    tf.logging.set_verbosity(tf.logging.DEBUG)
    yield caplog
    logger.setLevel(level)


def test_levels_are_the_logging_modules():
    assert (tf.logging.DEBUG, tf.logging.INFO, tf.logging.WARN, tf.logging.ERROR, tf.logging.FATAL) == \
        (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL)
    assert tf.get_logger() is logging.getLogger("tensorflow") is tf.compat.v1.get_logger()


def test_functions_log_at_their_level_with_the_callers_line(records):
    tf.logging.debug("d %d", 1)
    tf.logging.info("i %s", "x")
    tf.logging.warning("w")
    tf.logging.warn("w2")
    tf.logging.error("e")
    tf.logging.fatal("f")  # logs; does not end the program (TF1)
    tf.logging.vlog(15, "v")
    tf.logging.log(tf.logging.INFO, "l")
    got = [(r.name, r.levelno, r.getMessage()) for r in records.records]
    assert got == [("tensorflow", 10, "d 1"), ("tensorflow", 20, "i x"), ("tensorflow", 30, "w"),
                   ("tensorflow", 30, "w2"), ("tensorflow", 40, "e"), ("tensorflow", 50, "f"),
                   ("tensorflow", 15, "v"), ("tensorflow", 20, "l")]
    assert {Path(r.pathname).name for r in records.records} == {"test_logging.py"}
    assert {r.funcName for r in records.records} == {"test_functions_log_at_their_level_with_the_callers_line"}


def test_set_verbosity_filters(records):
    tf.logging.set_verbosity(tf.logging.ERROR)
    assert tf.logging.get_verbosity() == tf.logging.ERROR
    tf.logging.info("hidden")
    tf.logging.warning("hidden")
    tf.logging.error("shown")
    assert [r.getMessage() for r in records.records] == ["shown"]


def test_log_every_n_and_first_n_count_per_line(records):
    for i in range(7):
        tf.logging.log_every_n(tf.logging.INFO, "every %d", 3, i)
        tf.logging.log_first_n(tf.logging.INFO, "first %d", 2, i)
    tf.logging.log_if(tf.logging.INFO, "if", False)
    tf.logging.log_if(tf.logging.INFO, "if %d", True, 1)
    assert [r.getMessage() for r in records.records] == ["every 0", "first 0", "first 1", "every 3", "every 6",
                                                         "if 1"]


def test_output_format_alone_and_under_app_run(tmp_path):
    """Alone: TF1's `INFO:tensorflow:...` lines on stderr; under tf.app.run: absl's format, once."""
    script = tmp_path / "log.py"
    script.write_text(
        "import sys\n"
        "import dflow as tf\n"
        "tf.logging.info('not shown: default verbosity is WARN')\n"
        "tf.logging.set_verbosity(tf.logging.INFO)\n"
        "def main(argv):\n"
        "    tf.logging.info('hello %d', 3)\n"
        "    tf.logging.warning('careful')\n"
        "if sys.argv[1:] == ['app']:\n"
        "    tf.app.run()\n"
        "main([])\n")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    alone = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert alone.returncode == 0, alone.stderr
    assert alone.stderr.splitlines() == ["INFO:tensorflow:hello 3", "WARNING:tensorflow:careful"]
    app = subprocess.run([sys.executable, str(script), "app"], capture_output=True, text=True, env=env, timeout=120)
    assert app.returncode == 0, app.stderr
    lines = app.stderr.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("I") and lines[0].endswith("log.py:6] hello 3"), lines
    assert lines[1].startswith("W") and lines[1].endswith("log.py:7] careful"), lines
