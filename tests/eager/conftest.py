"""Eager tests run inside `tfe.eager_mode()` (the `eager` fixture); every test leaves the process
in graph mode, so the rest of the suite is unaffected."""

import pytest

import dflow as tf
import dflow.contrib.eager as tfe
from dflow.graph import graph as graph_mod


@pytest.fixture(autouse=True)
def _graph_mode_after():
    before = graph_mod.installed_executors()
    yield
    assert graph_mod.installed_executors() == before, "an eager test left the executor stacks changed"
    assert not tf.executing_eagerly()


@pytest.fixture
def eager():
    with tfe.eager_mode():
        yield
