"""Pin a benchmark process to one CPU, so that the solvers it compares run on the same core.

On a virtual machine the CPUs need not be alike: on the 2-core machines these benchmarks are run on, one core took
1.5× longer than the other over the same compiled dcd epoch (0.68 against 1.06 ms, the same process pinned to one
core and then to the other, twice in a row), and a process moved by the scheduler mid-run would time one solver on
the fast core and the next on the slow one. Pinning removes that factor from the ratios of a run; it does not
remove the load of other tenants, which the interleaved rounds are for.
"""

from __future__ import annotations

import os

__all__ = ["add_cpu_argument", "command_option", "describe", "pin", "pin_run"]


def pin(cpu: int | None = None) -> int | None:
    """Pin this process (and the processes it starts later) to ``cpu``: by default the last CPU it may run on;
    ``cpu < 0`` leaves the affinity alone. Returns the CPU pinned to, or None (not pinned, or no affinity API)."""
    if not hasattr(os, "sched_setaffinity") or (cpu is not None and cpu < 0):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    target = allowed[-1] if cpu is None else int(cpu)
    if target not in allowed:
        raise ValueError(f"--cpu {target} is not one of the CPUs this process may use: {allowed}")
    os.sched_setaffinity(0, {target})
    return target


def pin_run(cpu: int | None, quick: bool) -> int | None:
    """The benchmarks' rule: a full run is pinned (to ``cpu``, by default the last CPU allowed), a ``--quick`` one
    only when ``cpu`` is given (the test suite runs quick benchmarks in its own process). Returns what :func:`pin`
    does."""
    return None if quick and cpu is None else pin(cpu)


def command_option(cpu: int | None) -> str:
    """`` --cpu K`` for the command line a results file records, or nothing."""
    return f" --cpu {cpu}" if cpu is not None else ""


def describe(cpu: int | None) -> str:
    """A phrase for a results header: where the process ran."""
    return f"pinned to CPU {cpu} (benchmarks/pinning.py)" if cpu is not None else "not pinned to a CPU"


def add_cpu_argument(parser) -> None:
    """The ``--cpu`` option of a benchmark's command line."""
    parser.add_argument("--cpu", type=int, default=None,
                        help="CPU to pin the run to (default: the last one allowed, in a full run; -1: do not pin)")
