"""The benchmark suite as a script: the same as ``robustsvm bench`` (see :mod:`robustsvm.bench`).

Run from the repository root::

    .venv/bin/python benchmarks/bench_suite.py            # full suite, ~10-15 min
    .venv/bin/python benchmarks/bench_suite.py --quick    # tiny sizes, seconds

It writes ``benchmarks/results/suite.md`` and ``docs/figures/scaling_*.png``.
"""

import sys

from robustsvm.bench import main

if __name__ == "__main__":
    sys.exit(main(prog="python benchmarks/bench_suite.py"))
