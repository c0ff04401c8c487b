"""Small adapters from a scheduler choice to one `get(dsk, keys)` interface."""

from __future__ import annotations

from abc import ABC, abstractmethod

import dask.local
import dask.multiprocessing
import dask.threaded

from ..errors import InvalidArgumentError, UnavailableError


class Executor(ABC):
    name = "base"
    is_local = True

    @abstractmethod
    def get(self, dsk, keys):
        """Computes `keys` (a nested list of keys) of the task graph `dsk`."""

    def close(self):
        pass


class SyncExecutor(Executor):
    name = "sync"

    def get(self, dsk, keys):
        return dask.local.get_sync(dsk, keys)


class ThreadsExecutor(Executor):
    name = "threads"

    def __init__(self, num_workers=None):
        self.num_workers = num_workers

    def get(self, dsk, keys):
        return dask.threaded.get(dsk, keys, num_workers=self.num_workers)


class ProcessesExecutor(Executor):
    name = "processes"

    def __init__(self, num_workers=None):
        self.num_workers = num_workers

    def get(self, dsk, keys):
        return dask.multiprocessing.get(dsk, keys, num_workers=self.num_workers)


class DistributedExecutor(Executor):
    name = "distributed"
    is_local = False

    def __init__(self, client, owned=False):
        self.client = client
        self.owned = owned

    def get(self, dsk, keys):
        return self.client.get(dsk, keys, sync=True)

    def close(self):
        if self.owned:
            self.client.close()


def make_executor(scheduler, target=""):
    """The executor for a Session's `scheduler` (or `target` address) argument."""
    if scheduler is None and target:
        scheduler = target
    if scheduler is None or scheduler == "threads" or scheduler == "threading":
        return ThreadsExecutor()
    if scheduler in ("sync", "synchronous", "single-threaded"):
        return SyncExecutor()
    if scheduler in ("processes", "multiprocessing"):
        return ProcessesExecutor()
    if isinstance(scheduler, str) and "://" in scheduler:
        from distributed import Client

        try:
            client = Client(scheduler, timeout="10s")
        except OSError as e:
            raise UnavailableError(None, None, f"Cannot connect to the Dask scheduler at {scheduler!r}: {e}") from e
        return DistributedExecutor(client, owned=True)
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - distributed is a dependency
        Client = ()
    if isinstance(scheduler, Client):
        return DistributedExecutor(scheduler)
    raise InvalidArgumentError(None, None, f"Unknown scheduler {scheduler!r}: expected 'sync', 'threads', "
                               "'processes', a distributed.Client or an address 'tcp://host:port'.")
