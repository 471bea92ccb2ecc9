"""The round states a worker's :class:`._round_server.RoundServer` holds, moved to files when the worker runs
short of memory.

The states of a fit on data larger than a worker's memory (the interior point's per-sample variables, about
300 bytes a row) may not fit either: Dask spills the results of tasks to disk, but a server's states are its
own. :class:`SpilledStates` keeps them in memory while the worker process's resident memory stays below a
share of its ``memory_limit`` (Dask's own ``distributed.worker.memory.target``, 0.6 by default), and above it
writes the oldest ones to files in the worker's local directory (``pickle``, protocol 5), reading one back when
a round needs it.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["SpilledStates"]


def _worker_limits() -> tuple[float | None, str]:
    """``(the resident memory above which states go to files, the folder for them)`` on this worker (no limit
    and the temporary folder outside a worker or without a ``memory_limit``)."""
    try:
        import dask
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return None, tempfile.gettempdir()
    limit = getattr(getattr(worker, "memory_manager", None), "memory_limit", None)
    target = dask.config.get("distributed.worker.memory.target", 0.6) or 0.6
    return (float(limit) * float(target) if limit else None), str(worker.local_directory)


class SpilledStates:
    """A mapping ``(version, partition) → state``, some values in files.

    Parameters
    ----------
    limit : float, optional
        Resident bytes of the process above which states are written to files. By default (None) the worker's
        memory target; outside a worker, or on a worker without a ``memory_limit``, states are never written.
    folder : str, optional
        Where the files go (the worker's local directory by default).
    """

    def __init__(self, limit: float | None = None, folder: str | None = None) -> None:
        found_limit, found_folder = _worker_limits()
        self.limit = found_limit if limit is None else float(limit)
        self.folder = tempfile.mkdtemp(prefix="robustsvm-states-", dir=folder or found_folder)
        self.memory: dict[tuple[int, int], Any] = {}
        self.files: dict[tuple[int, int], str] = {}
        #: states written to files and read back so far
        self.written = self.read = 0

    def __contains__(self, key: tuple[int, int]) -> bool:
        return key in self.memory or key in self.files

    def __iter__(self) -> Iterator[tuple[int, int]]:
        yield from self.memory
        yield from self.files

    def __getitem__(self, key: tuple[int, int]) -> Any:
        if key in self.memory:
            return self.memory[key]
        with open(self.files[key], "rb") as f:
            self.read += 1
            return pickle.load(f)

    def put(self, key: tuple[int, int], value: Any, keep: Iterable[tuple[int, int]] = ()) -> None:
        """Hold ``value``; then, while the process is above the limit, write the oldest states but ``key`` and
        ``keep`` to files."""
        self.memory[key] = value
        if self.limit is None:
            return
        import psutil

        process = psutil.Process()
        spare = set(keep) | {key}
        for old in [k for k in self.memory if k not in spare]:
            if process.memory_info().rss <= self.limit:
                break
            path = os.path.join(self.folder, f"{old[0]}-{old[1]}.pkl")
            with open(path, "wb") as f:
                pickle.dump(self.memory.pop(old), f, protocol=5)
            self.files[old] = path
            self.written += 1

    def drop(self, versions: Iterable[int]) -> None:
        """Forget every state of ``versions`` (their files deleted)."""
        gone = set(versions)
        if not gone:
            return
        for key in [k for k in self.memory if k[0] in gone]:
            del self.memory[key]
        for key in [k for k in self.files if k[0] in gone]:
            os.remove(self.files.pop(key))

    def __del__(self) -> None:
        for path in self.files.values():
            try:
                os.remove(path)
            except OSError:
                pass
        try:
            os.rmdir(self.folder)
        except OSError:
            pass
