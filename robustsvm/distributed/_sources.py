"""Where a partition's rows come from: read on the workers, held in their memory when they fit.

Two rules of :func:`.data.partition`:

* **Held or streamed.** Rows in ``.npy`` files opened with ``mmap_mode`` are loaded once into the workers'
  memory when the float64 data, shared over the workers, take at most :data:`HOLD_FRACTION` of the smallest
  worker ``memory_limit`` (:func:`workers_hold`); each round then reads memory, not the file. Larger data stay on
  disk and every pass streams them a slice at a time.
* **Files, not their bytes.** ``da.from_array(np.load(path, mmap_mode="r"))`` cannot stream from the
  workers: ``da.from_array`` copies the array it is given (``x.copy()``), so the mapped file is read whole
  into the client's memory when the dask array is built, and the file's name is lost. :func:`mapped_copy` finds
  such a copy in the graph; :func:`.data.partition` then warns, naming ``da.from_npy_stack``, and sends the
  row chunks straight to the workers (``client.scatter``) rather than inside one large graph through the
  scheduler.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["HOLD_FRACTION", "MAPPED_COPY_WARNING", "mapped_copy", "workers_hold"]

#: the share of a worker's ``memory_limit`` its part of the data may take and still be held in memory
#: (the rest: the interior point's per-row variables, about 25 numbers per row, and Dask's own margin)
HOLD_FRACTION = 0.25


def mapped_copy(X: Any) -> np.ndarray | None:
    """The ``numpy.memmap`` copy that ``da.from_array`` embedded in ``X``'s graph when ``X`` is exactly that
    array cut into chunks (its graph: the array and the slicing tasks), else None."""
    from dask.highlevelgraph import HighLevelGraph, MaterializedLayer

    graph = X.__dask_graph__()
    if not isinstance(graph, HighLevelGraph) or len(graph.layers) != 2:
        return None
    for layer in graph.layers.values():
        if isinstance(layer, MaterializedLayer) and len(layer.mapping) == 1:
            (value,) = layer.mapping.values()
            if isinstance(value, np.memmap) and value.shape == X.shape:
                return value
    return None


MAPPED_COPY_WARNING = (
    "X was built by da.from_array from a numpy.memmap: dask copied the mapped file into this process's memory "
    "when it built the array, so the client sends the rows to the workers. Open the rows with "
    "da.from_npy_stack(folder, mmap_mode='r') (write them once with da.to_npy_stack): each worker then reads "
    "its own chunks from disk.")


def workers_hold(client: Any, nbytes: float) -> bool:
    """Whether ``nbytes`` of rows, shared over the workers, take at most :data:`HOLD_FRACTION` of the smallest
    worker ``memory_limit`` (workers without a limit hold anything)."""
    try:
        info = client.scheduler_info(n_workers=-1)
    except TypeError:  # older distributed: every worker is listed
        info = client.scheduler_info()
    workers = list(info.get("workers", {}).values())
    if not workers:
        return False
    limits = [float(w.get("memory_limit") or 0) for w in workers]
    if all(lim <= 0 for lim in limits):
        return True
    smallest = min(lim for lim in limits if lim > 0)
    return nbytes / len(workers) <= HOLD_FRACTION * smallest
