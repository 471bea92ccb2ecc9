"""Row partitions of a Dask array kept on the workers, and rounds of small results over them.

:func:`partition` turns a row-chunked ``dask.array.Array`` ``X`` (dense or scipy.sparse chunks) and labels
``y`` (a Dask or NumPy array) into :class:`Partitions`: one pinned future per row chunk, held by the worker
that computed it, whose value is a :class:`Block` ``(X_k, y_k, weight_k)`` with the labels mapped to ±1.
``X`` is never gathered on the client; the client keeps only what a round returns.

A round (:meth:`Partitions.map`, :meth:`Partitions.map_state`) runs one function on every block where it
lives and gathers its small results (sums of d or d² numbers). It does not go through the scheduler: each
worker serving partitions runs a :class:`._round_server.RoundServer` (a Dask actor) holding its blocks and the
rounds' states, and a round is one call to each server (2–3 ms of latency on a two-core machine, against
15–25 ms for a round of tasks). The servers are placed where the blocks are, balanced by rows
(:meth:`Partitions._placement`). When a worker is lost, its server is made again on another worker (the
scheduler recomputes the blocks it held from their source graph: the tasks that loaded them from files, zarr
or an in-memory array), the states it held are rebuilt by replaying the rounds that made them (their lineage,
kept by the client), and its part of the round runs again, up to :data:`ROUND_RETRIES` times. A round that
cannot be completed raises :class:`WorkerLostError`: a caller never sums an incomplete set of partitions.

The blocks and how they are made from the chunks (held in memory, or streamed from ``.npy`` files a slice at a
time) are in :mod:`.blocks`.

Use by a backend (the API the distributed backends share)::

    parts = partition(X, y, client=client, sample_weight=None)
    sums = parts.map(lambda block, w: block.X @ w ... )        # one result per partition, in order
    states, out = parts.map_state(step, states, *args)         # per-partition states kept on the workers

``func(block, *args)`` (``map``) and ``func(block, state, *args) -> (new_state, small)`` (``map_state``)
must be picklable (module-level functions) and deterministic (a replay must rebuild the same state);
``state`` is None in the first round.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import warnings
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._round_server import RoundServer
from ._sources import MAPPED_COPY_WARNING, mapped_copy, workers_hold
from .blocks import (
    Block,
    DiskRows,
    block_is_sparse,
    block_on_disk,
    block_rows,
    block_summary,
    raw_block,
    signed_block,
)

__all__ = ["Block", "DiskRows", "Partitions", "StateVersion", "WorkerLostError", "get_client", "is_dask_array",
           "partition"]

#: how often a failed round is submitted again before :class:`WorkerLostError`
ROUND_RETRIES = 3


#: errors of a lost worker or connection (a round is submitted again after them); others are raised
_LOST: tuple[type, ...] = (concurrent.futures.CancelledError, asyncio.CancelledError, ConnectionError, TimeoutError)
_LOST_NAMES = frozenset({"KilledWorker", "CommClosedError", "StreamClosedError", "FutureCancelledError"})


def _connection_lost(exc: BaseException) -> bool:
    """Whether ``exc`` is one of the errors of a lost worker or connection."""
    return isinstance(exc, _LOST) or type(exc).__name__ in _LOST_NAMES


def _by_worker(place: Sequence[str]) -> dict[str, list[int]]:
    """The partitions of each worker, from the worker of each partition."""
    groups: dict[str, list[int]] = {}
    for j, where in enumerate(place):
        groups.setdefault(where, []).append(j)
    return groups


class WorkerLostError(RuntimeError):
    """A round could not be completed on every partition (workers lost beyond what can be recomputed)."""


def is_dask_array(X: Any) -> bool:
    """Whether ``X`` is a ``dask.array.Array`` (without importing Dask when it is not loaded)."""
    return type(X).__module__.split(".")[0] == "dask" and hasattr(X, "chunks") and hasattr(X, "to_delayed")


def get_client(client: Any = None):
    """``client`` checked, or the current ``dask.distributed`` client.

    Raises
    ------
    TypeError
        ``client`` is not a ``distributed.Client``.
    ValueError
        No client was given and none is running (start one: ``distributed.Client(LocalCluster())``).
    """
    from distributed import Client

    if client is not None:
        if not isinstance(client, Client):
            raise TypeError(f"client must be a dask.distributed.Client, got {type(client).__name__}")
        return client
    from distributed import get_client as current

    try:
        return current()
    except ValueError:
        raise ValueError("a dask array X needs a dask.distributed client: pass client= or start one first "
                         "(for instance distributed.Client(distributed.LocalCluster()))") from None


@dataclass(eq=False)
class _Server:
    """The client's handle of a :class:`._round_server.RoundServer`: the actor, its future (which keeps it),
    its partitions, its worker and the state versions it holds."""

    actor: Any
    future: Any
    parts: tuple
    address: str
    held: set = field(default_factory=set)


class StateVersion:
    """The states a :meth:`Partitions.map_state` round left on the workers; give it to a later round to start
    from them. The workers free the states once this object is dropped (at their next round)."""

    __slots__ = ("__weakref__", "version")

    def __init__(self, version: int, dropped: list) -> None:
        self.version = version
        weakref.finalize(self, dropped.append, version)

    def __repr__(self) -> str:
        return f"StateVersion({self.version})"


# --------------------------------------------------------------------------------------------- partitions
class Partitions:
    """The row partitions of one data set, kept on the workers as pinned futures.

    Attributes
    ----------
    client : distributed.Client
    futures : list of distributed.Future or of tuples of them
        One per partition, in row order; each holds a :class:`Block` (a tuple: blocks its round server
        concatenates, :meth:`per_worker`). Kept while this object lives.
    sizes : ndarray of int
        Rows per partition.
    n, d : int
    classes : ndarray of shape (2,)
        The two labels, sorted (``classes[1]`` is +1 in every block).
    weight_sum : float
        ``Σ_i s_i`` over all rows.
    sparse : bool
        Whether the chunks are scipy.sparse.
    rounds, bytes_sent : int
        Rounds run so far and the bytes of the small results gathered (what the client received).
    """

    def __init__(self, client, futures: list, sizes: np.ndarray, d: int, classes: np.ndarray, weight_sum: float,
                 sparse: bool) -> None:
        self.client, self.futures, self.sizes, self.d = client, futures, np.asarray(sizes), int(d)
        self.classes, self.weight_sum, self.sparse = classes, float(weight_sum), bool(sparse)
        self.n = int(self.sizes.sum())
        self.rounds = 0
        self.bytes_sent = 0
        self.bytes_received = 0
        self.resubmitted = 0
        self.replayed = 0
        self._per_worker: Partitions | None = None
        self._round_servers: list[_Server] | None = None
        #: the worker of each partition when :meth:`per_worker` grouped them (else :meth:`_placement` decides)
        self._where: list[str] | None = None
        #: each state version's ``(func, parent version, args, kwargs)``: the rounds that made it
        self._lineage: dict[int, tuple] = {}
        self._live: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._dropped: list[int] = []
        self._versions = itertools.count()

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n, self.d)

    @property
    def k(self) -> int:
        """The number of partitions."""
        return len(self.futures)

    # ------------------------------------------------------------------------------------------ rounds
    def _servers(self) -> list[_Server]:
        """One :class:`._round_server.RoundServer` per worker that serves partitions (made once, placed by
        :meth:`_placement`)."""
        if self._round_servers is None:
            groups = _by_worker(self._where or self._placement())
            self._round_servers = [self._serve(where, parts) for where, parts in groups.items()]
        return self._round_servers

    def _placement(self) -> list[str]:
        """The worker serving each partition: the one holding it, then partitions moved from the worker with
        the most rows to the one with the fewest while that lowers the larger of the two (the scheduler may
        have put two workers' blocks on one; a moved block is copied once, when its server is made)."""
        workers = sorted(self.client.scheduler_info(n_workers=-1)["workers"])
        holders = self.client.who_has(self.futures)
        loads = dict.fromkeys(workers, 0)
        place = []
        for j, f in enumerate(self.futures):
            held = [w for w in holders.get(f.key, ()) if w in loads]
            where = min(held, key=loads.get) if held else min(loads, key=loads.get) if loads else ""
            place.append(where)
            if where:
                loads[where] += int(self.sizes[j])
        while len(loads) > 1:
            hi, lo = max(loads, key=loads.get), min(loads, key=loads.get)
            movable = [j for j, w in enumerate(place) if w == hi and loads[lo] + self.sizes[j] < loads[hi]]
            if not movable:
                break
            j = min(movable, key=lambda j: abs(loads[hi] - loads[lo] - 2 * int(self.sizes[j])))
            place[j] = lo
            loads[hi] -= int(self.sizes[j])
            loads[lo] += int(self.sizes[j])
        return place

    def _serve(self, where: str, parts: Sequence[int]) -> _Server:
        """A server of ``parts`` made on the worker ``where`` (any worker when it is gone)."""
        from distributed import Actor, wait

        future = self.client.submit(RoundServer, {j: self.futures[j] for j in parts}, actor=True, pure=False,
                                    workers=[where] if where else None, allow_other_workers=bool(where))
        with self.client.as_current():  # the proxy binds to this client, the default one or not
            wait([future])
            address = min(self.client.who_has([future]).get(future.key, ()) or (where,))
            actor = Actor(RoundServer, address, future.key)
        return _Server(actor, future, tuple(parts), address)

    def _call(self, server: _Server, method: str, *args: Any):
        """Call ``method`` of a server (an actor future)."""
        return getattr(server.actor, method)(*args)

    def _is_lost(self, exc: BaseException, server: _Server) -> bool:
        """Whether ``exc`` is the loss of the server's worker (or of the connection to it), not the round's own
        error."""
        if _connection_lost(exc):
            return True
        text = str(exc)
        if "Actor was lost" in text or "contact Actor" in text:
            return True
        try:
            return server.address not in self.client.scheduler_info()["workers"]
        except Exception:  # pragma: no cover - the scheduler itself is unreachable
            return True

    def _ensure(self, server: _Server, version: int | None) -> None:
        """Make the server hold the states of ``version``: replay its lineage from the latest version the server
        holds (a server made anew after a lost worker holds none)."""
        if version is None or version in server.held:
            return
        chain = []
        v: int | None = version
        while v is not None and v not in server.held:
            chain.append(v)
            v = self._lineage[v][1]
        for v in reversed(chain):  # only the versions the caller still holds are kept
            func, parent, args, kwargs = self._lineage[v]
            forget = () if parent is None or parent in self._live else (parent,)
            self._call(server, "run_state", func, server.parts, parent, v, forget, args, kwargs).result()
            server.held.difference_update(forget)
            server.held.add(v)
        self.replayed += len(chain)

    def _round(self, what: str, method: str, parent: int | None, *call: Any) -> list:
        """Run a round on every server; a server lost with its worker is made again on another worker (its
        states replayed) and its part of the round run again, up to :data:`ROUND_RETRIES` times."""
        errors: list[str] = []
        servers = self._servers()
        pending = list(range(len(servers)))
        results: dict[int, Any] = {}
        for _ in range(ROUND_RETRIES + 1):
            calls, failed = {}, []
            for i in pending:
                try:
                    self._ensure(servers[i], parent)
                    calls[i] = self._call(servers[i], method, call[0], servers[i].parts, *call[1:])
                except Exception as exc:
                    if not self._is_lost(exc, servers[i]):
                        raise
                    errors.append(f"{type(exc).__name__}: {exc}")
                    failed.append(i)
            for i, answer in calls.items():
                try:
                    out = answer.result()
                except Exception as exc:
                    if not self._is_lost(exc, servers[i]):
                        raise
                    errors.append(f"{type(exc).__name__}: {exc}")
                    failed.append(i)
                    continue
                results.update(zip(servers[i].parts, out, strict=True))
            if not failed:
                out = [results[k] for k in range(self.k)]
                self.rounds += 1
                self.bytes_received += sum(_nbytes(o) for o in out)
                return out
            self.resubmitted += 1
            for i in failed:  # made again where the scheduler puts the blocks
                try:
                    servers[i] = self._serve("", servers[i].parts)
                except Exception as exc:
                    if not _connection_lost(exc):
                        raise
                    errors.append(f"{type(exc).__name__}: {exc}")
            pending = sorted(failed)
        raise WorkerLostError(f"{what} failed {ROUND_RETRIES + 1} times on the cluster: " + "; ".join(errors[-2:]))

    def serve(self) -> Partitions:
        """Make the round servers now: each worker's blocks placed (:meth:`_placement`, a moved block copied once)
        and merged where they are served. The first round does it otherwise; call it to keep that one-time cost
        out of a timed fit, as the data's loading is. Returns ``self``."""
        self._servers()
        return self

    def busy_seconds(self) -> list[float]:
        """Seconds each worker serving these partitions has spent computing rounds (the compute of the busiest
        one bounds a fit's time from below; the rest is the client and the messages)."""
        return [self._call(server, "busy_seconds").result() for server in self._servers()]

    def map(self, func: Callable, *args: Any, **kwargs: Any) -> list:
        """``[func(block_k, *args, **kwargs) for every partition k]``, run where each block lives.

        The arguments travel to every worker (keep them small: vectors of d numbers); the results come back
        to the client in partition order. A lost worker costs the round, never a partial sum.
        """
        self.bytes_sent += self.k * (_nbytes(args) + _nbytes(kwargs))
        return self._round(f"the round {getattr(func, '__name__', func)}", "run", None, func, args, kwargs)

    def map_state(self, func: Callable, states: StateVersion | None, *args: Any,
                  **kwargs: Any) -> tuple[StateVersion, list]:
        """One round of a stateful method: ``func(block_k, state_k, *args) -> (new_state_k, small_k)``.

        ``states`` is what this method returned for an earlier round (None in the first round: ``state_k`` is
        None); any earlier version may be given again (a refused step starts again from the state before it).
        Returns the new states (kept on the workers until the returned object is dropped) and the small
        results gathered in partition order. The states of a lost worker are made again on another worker by
        replaying the rounds that led to them (their lineage, kept by the client), so a lost worker costs a
        round and the replay of its partitions, never the fit.
        """
        self.bytes_sent += self.k * (_nbytes(args) + _nbytes(kwargs))
        parent = None if states is None else states.version
        child = next(self._versions)
        forget = self._collect()
        self._lineage[child] = (func, parent, args, kwargs)
        small = self._round(f"the round {getattr(func, '__name__', func)}", "run_state", parent, func, parent,
                            child, forget, args, kwargs)
        for server in self._round_servers or ():
            server.held.difference_update(forget)
            server.held.add(child)
        made = StateVersion(child, self._dropped)
        self._live[child] = made
        return made, small

    def free_states(self) -> None:
        """Make the servers drop the state versions their callers have dropped (each stateful round does so
        too; a backend calls this when its fit ends, so the workers do not keep its last states)."""
        gone = self._collect()
        if not gone or not self._round_servers:
            return
        for server in self._round_servers:
            try:
                self._call(server, "forget", gone).result()
            except Exception as exc:  # a lost server holds nothing any more
                if not self._is_lost(exc, server):
                    raise
            server.held.difference_update(gone)

    def _collect(self) -> list[int]:
        """The versions dropped since the last round (the servers forget them); the lineage keeps the ancestors
        of the versions still held by the caller."""
        if not self._dropped:
            return []
        gone, self._dropped[:] = list(self._dropped), []
        needed: set[int] = set()
        for v in list(self._live.keys()):
            while v is not None and v not in needed:
                needed.add(v)
                v = self._lineage[v][1]
        for v in [v for v in self._lineage if v not in needed]:
            del self._lineage[v]
        return gone

    def sum(self, func: Callable, *args: Any, **kwargs: Any) -> Any:
        """The sum over the partitions of ``func(block_k, *args)`` (arrays or tuples of arrays/floats)."""
        return _add(self.map(func, *args, **kwargs))

    def release(self) -> None:
        """Drop the futures (the workers free the blocks)."""
        self.futures = []
        self._per_worker = None
        self._round_servers = None

    def per_worker(self) -> Partitions:
        """The same rows as one block per worker: the blocks a worker holds, concatenated there once (cached).

        A round then calls one function per worker instead of one per chunk (BLAS on one larger block). The
        blocks are grouped by :meth:`_placement` (where they are, balanced by rows); each partition of the
        result is a group, concatenated by its round server when the server is made (on that worker; again on
        another worker if it is lost, from the blocks, which the scheduler recomputes when needed). Kept as
        they are (``self``) when a block is streamed from disk, when there is one block per worker already, or
        when a second copy of the rows would not fit the workers' memory (:func:`._sources.workers_hold` of
        twice the data). The row order within a merged block is the blocks' order; ``start`` is its first
        block's.
        """
        if self._per_worker is not None:
            return self._per_worker
        self._per_worker = self
        if self.sparse or not workers_hold(self.client, 2 * 8.0 * self.n * self.d):
            return self
        if any(self.client.gather([self.client.submit(block_on_disk, f, pure=False) for f in self.futures])):
            return self
        groups = _by_worker(self._placement())
        if len(groups) == self.k:
            return self
        members = [tuple(self.futures[j] for j in group) for group in groups.values()]
        sizes = np.array([int(self.sizes[group].sum()) for group in groups.values()])
        merged = Partitions(self.client, members, sizes, self.d, self.classes, self.weight_sum, self.sparse)
        merged._where = list(groups)
        merged._per_worker = merged
        self._per_worker = merged
        return merged


def _nbytes(value: Any) -> int:
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, (list, tuple)):
        return sum(_nbytes(v) for v in value)
    if isinstance(value, dict):
        return sum(_nbytes(v) for v in value.values())
    if isinstance(value, (float, int, np.floating, np.integer, bool)):
        return 8
    return 0


def _add(parts: list) -> Any:
    """Elementwise sum of equally structured results (arrays, numbers, tuples/lists/dicts of them)."""
    first = parts[0]
    if isinstance(first, dict):
        return {key: _add([p[key] for p in parts]) for key in first}
    if isinstance(first, (tuple, list)):
        return type(first)(_add([p[j] for p in parts]) for j in range(len(first)))
    total = first.copy() if isinstance(first, np.ndarray) else first
    for p in parts[1:]:
        total = total + p
    return total


# ------------------------------------------------------------------------------------------ building
def _row_pieces(values: Any, chunks: tuple, name: str, n: int) -> list:
    """``values`` (None, a Dask or a NumPy array of length n) cut along ``chunks`` (delayed or arrays)."""
    if values is None:
        return [None] * len(chunks)
    if is_dask_array(values):
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1 or values.shape[0] != n:
            raise ValueError(f"{name} must have shape ({n},) like the rows of X, got {values.shape}")
        return list(values.rechunk({0: chunks}).to_delayed().ravel())
    arr = np.asarray(values)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim == 0 and name == "sample_weight":
        arr = np.full(n, float(arr))
    if arr.shape[:1] != (n,) or arr.ndim != 1:
        raise ValueError(f"{name} has {arr.shape[0] if arr.ndim else 0} entries but X has {n} samples")
    edges = np.concatenate([[0], np.cumsum(chunks)])
    return [arr[lo:hi] for lo, hi in itertools.pairwise(edges)]


def partition(X: Any, y: Any, *, client: Any = None, sample_weight: Any = None,
              hold: bool | None = None) -> Partitions:
    """Persist the row partitions of ``(X, y)`` on the workers of ``client``.

    Parameters
    ----------
    X : dask.array.Array of shape (n, d)
        Chunked by rows (dense or scipy.sparse chunks). Column chunks are merged into one (``rechunk``: every
        partition holds whole rows).
    y : dask.array.Array or ndarray of shape (n,)
        Labels of any two distinct values.
    client : distributed.Client, optional
        The current client by default (:func:`get_client`).
    sample_weight : dask.array.Array or ndarray of shape (n,), optional
    hold : bool, optional
        Whether chunks that are whole ``.npy`` files opened with ``mmap_mode`` are read once into the workers'
        memory (True) or streamed from disk at every pass (False). By default they are held when the float64
        data, shared over the workers, take at most a quarter of the smallest ``memory_limit``
        (:func:`._sources.workers_hold`).

    Warns
    -----
    UserWarning
        ``X`` is ``da.from_array`` of a ``numpy.memmap``: dask copied the file into the client's memory, and
        the rows are sent from there (:func:`._sources.mapped_copy`); ``da.from_npy_stack`` streams instead.

    Returns
    -------
    Partitions
        One pinned future per row chunk; the labels mapped to ±1 on the workers.

    Raises
    ------
    TypeError
        ``X`` is not a dask array, or ``client`` not a client.
    ValueError
        ``X`` is not two-dimensional or holds NaN / infinity (the rows are named), ``y`` does not hold two
        classes, a length differs, or ``sample_weight`` is negative, not finite or zero everywhere.
    """
    import dask

    if not is_dask_array(X):
        raise TypeError(f"X must be a dask.array.Array here, got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(f"X must be two-dimensional (n_samples, n_features), got shape {X.shape}")
    if any(np.isnan(s) for s in X.shape):
        raise ValueError("X has unknown chunk sizes: call X.compute_chunk_sizes() first")
    n, d = (int(s) for s in X.shape)
    if n == 0 or d == 0:
        raise ValueError(f"X is empty: shape {X.shape}")
    client = get_client(client)
    copied = mapped_copy(X)
    if copied is not None:
        warnings.warn(MAPPED_COPY_WARNING, UserWarning, stacklevel=2)
    if hold is None:
        hold = workers_hold(client, 8.0 * n * d) and not _sparse_meta(X)
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    chunks = X.chunks[0]
    if copied is not None:  # the rows go straight to the workers, not in a graph through the scheduler
        edges = np.concatenate([[0], np.cumsum(chunks)])
        xs = [client.scatter(np.asarray(copied[lo:hi]), direct=True) for lo, hi in itertools.pairwise(edges)]
    else:
        xs = list(X.to_delayed().ravel())
    ys = _row_pieces(y, chunks, "y", n)
    ws = _row_pieces(sample_weight, chunks, "sample_weight", n)
    starts = np.concatenate([[0], np.cumsum(chunks)])[:-1]
    raw = client.compute([dask.delayed(raw_block, pure=True)(x, yk, wk, int(s), bool(hold))
                          for x, yk, wk, s in zip(xs, ys, ws, starts, strict=True)])
    summaries = client.gather([client.submit(block_summary, r, pure=False) for r in raw])
    if not all(s["weight_ok"] for s in summaries):
        raise ValueError("sample_weight must be finite and non-negative")
    weight_sum = float(sum(s["weight_sum"] for s in summaries))
    if sample_weight is not None and not weight_sum > 0:
        raise ValueError("sample_weight must have at least one positive entry")
    try:
        classes = np.unique(np.concatenate([s["labels"] for s in summaries]))
    except TypeError as exc:
        raise TypeError(f"y holds labels that cannot be compared: {exc}") from exc
    if classes.size != 2:
        raise ValueError(f"y must hold exactly two classes, got {classes.size}: {classes[:5].tolist()}")
    blocks = [client.submit(signed_block, r, classes[1], pure=False) for r in raw]
    client.gather([client.submit(block_rows, b, pure=False) for b in blocks])  # the blocks exist before raw goes
    del raw
    sparse = bool(client.submit(block_is_sparse, blocks[0], pure=False).result())
    return Partitions(client, blocks, np.array([s["n"] for s in summaries]), d, classes, weight_sum, sparse)


def _sparse_meta(X: Any) -> bool:
    """Whether the dask array's chunks are sparse (its ``_meta`` is not a NumPy array)."""
    return not isinstance(getattr(X, "_meta", None), np.ndarray)
