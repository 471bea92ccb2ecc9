"""The worker's side of a round: a :class:`RoundServer` per worker holds that worker's partitions and the
states of the stateful rounds, and runs a round's function on them when the client calls it.

The server is a Dask actor (``client.submit(RoundServer, blocks, actor=True)``): a call goes from the client
to the worker and back as one message each way, where a round of tasks goes through the scheduler's
task-graph machinery (about 15–25 ms a round on a two-core machine against 2–3 ms). A state is kept under
``(version, partition)``; the client names the version a round starts from and the one it makes, and which
versions it no longer needs (:class:`.data.Partitions` keeps each version's lineage, so a server lost with
its worker is rebuilt on another worker by replaying the rounds that made the states it held).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor

from ._spilled_states import SpilledStates
from ._worker_memory import reuse_freed_memory
from .blocks import merge_blocks

__all__ = ["RoundServer"]


class RoundServer:
    """The partitions one worker holds and their round states.

    Parameters
    ----------
    blocks : dict of int to Block or tuple of Block
        The worker's partitions by their index in :class:`.data.Partitions` (the blocks themselves: the
        futures the actor was submitted with are resolved on the worker, so nothing is copied); a tuple is
        one partition of several blocks, concatenated here (:func:`.blocks.merge_blocks`).
    """

    def __init__(self, blocks: dict) -> None:
        self.blocks = {k: merge_blocks(*b) if isinstance(b, tuple) else b for k, b in blocks.items()}
        #: the states by (version, partition), moved to files when the worker runs short of memory
        self.states = SpilledStates()
        #: seconds spent in the rounds' functions (wall time of this worker's compute)
        self.busy = 0.0
        #: the server's own thread: the rounds run there, not on the worker's actor thread (which the worker's
        #: statistical profiler samples every 10 ms, at a cost measured in docs/distributed.md)
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="robustsvm-rounds")
        #: whether this worker's malloc now reuses freed arrays (:mod:`._worker_memory`)
        self.reuses_memory = reuse_freed_memory()

    async def run(self, func: Callable, parts: Sequence[int], args: tuple, kwargs: dict) -> list:
        """``[func(block_k, *args, **kwargs) for k in parts]``."""
        return await asyncio.get_running_loop().run_in_executor(self._thread, self._run, func, parts, args, kwargs)

    async def run_state(self, func: Callable, parts: Sequence[int], parent: int | None, child: int,
                        forget: Iterable[int], args: tuple, kwargs: dict) -> list:
        """For each partition ``k`` of ``parts``: ``state, small = func(block_k, state[parent, k], *args)``,
        keeping ``state`` as version ``child``, and drops the versions in ``forget`` (before the round, the
        parent after it). Returns the smalls.

        Raises
        ------
        KeyError
            A partition does not hold version ``parent`` (the client replays its lineage first).
        """
        return await asyncio.get_running_loop().run_in_executor(self._thread, self._run_state, func, parts, parent,
                                                                child, forget, args, kwargs)

    def _run(self, func: Callable, parts: Sequence[int], args: tuple, kwargs: dict) -> list:
        t0 = time.perf_counter()
        out = [func(self.blocks[k], *args, **kwargs) for k in parts]
        self.busy += time.perf_counter() - t0
        return out

    def _run_state(self, func: Callable, parts: Sequence[int], parent: int | None, child: int,
                   forget: Iterable[int], args: tuple, kwargs: dict) -> list:
        t0 = time.perf_counter()
        forget = set(forget)
        self.forget(forget - {parent})  # before the round: at most the parent and the child are held
        out = []
        for k in parts:
            state = None if parent is None else self.states[(parent, k)]
            new, small = func(self.blocks[k], state, *args, **kwargs)
            del state
            self.states.put((child, k), new)
            out.append(small)
        self.forget(forget & {parent})
        self.busy += time.perf_counter() - t0
        return out

    def versions(self) -> list[int]:
        """The state versions held."""
        return sorted({v for v, _ in self.states})

    def memory_reuse(self) -> bool:
        """Whether :func:`._worker_memory.reuse_freed_memory` set this worker's malloc thresholds."""
        return self.reuses_memory

    def busy_seconds(self) -> float:
        """Seconds this server has spent in rounds' functions."""
        return self.busy

    def forget(self, versions: Iterable[int]) -> None:
        """Drop the states of ``versions`` (every partition)."""
        self.states.drop(versions)
