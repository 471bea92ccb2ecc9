"""CVXPY is imported by the conic paths only: not by ``import robustsvm``, ``--version`` or a first-order fit."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

FIRST_ORDER_FIT = """
import sys
import numpy as np
import robustsvm as rs

rng = np.random.default_rng(0)
X = rng.normal(size=(120, 5))
y = (X[:, 0] + 0.5 * rng.normal(size=120) > 0).astype(int)
sol = rs.Problem(penalty=rs.L2(0.1), signs=[1, 0, 0, 0, 0]).solve(X, y, solver="dcd", tol=1e-8)
est = rs.RobustSVC(l2=0.1, uncertainty=rs.Box(0.05), solver="robust-dcd").fit(X, y)
assert sol.status == "optimal" and est.solution_.status == "optimal", (sol.status, est.solution_.status)
print("cvxpy" in sys.modules)
sol = rs.Problem(penalty=rs.L2(0.1)).solve(X, y)  # Clarabel through CVXPY: imported now
print("cvxpy" in sys.modules, sol.status)
"""


VERSION_THEN_MODULES = """
import runpy, sys
sys.argv = ["robustsvm", "--version"]
try:
    runpy.run_module("robustsvm", run_name="__main__")
except SystemExit:
    pass
print("cvxpy" in sys.modules)
"""


def _python(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, check=True, env=os.environ.copy())


def test_import_robustsvm_does_not_import_cvxpy():
    out = _python("-c", "import sys, robustsvm; print(sorted(m for m in sys.modules if m.startswith(('robustsvm.', "
                        "'cvxpy', 'numba', 'scipy'))))")
    assert out.stdout.strip() == "[]"  # the first public name read imports the package's modules
    # all of them, the backends included: the import-time report lists every module imported, none of cvxpy's
    report = _python("-X", "importtime", "-c", "import robustsvm; robustsvm.Problem").stderr
    assert "robustsvm.backends.dcd" in report and "robustsvm.problem" in report
    assert not [line for line in report.splitlines() if line.rsplit("|", 1)[-1].strip().split(".")[0] == "cvxpy"]


def test_a_submodule_named_like_a_public_name_does_not_hide_it():
    out = _python("-c", "import robustsvm.compare, robustsvm as rs; print(callable(rs.compare), rs.Problem.__name__)")
    assert out.stdout.split() == ["True", "Problem"]


def test_version_and_a_first_order_fit_do_not_import_cvxpy():
    check = VERSION_THEN_MODULES
    out = _python("-c", check).stdout.split()
    assert out[-1] == "False" and out[0] == "robustsvm"
    lines = _python("-c", FIRST_ORDER_FIT).stdout.split("\n")
    assert lines[0] == "False"
    assert lines[1] == "True optimal"


def test_conic_status_names_are_cvxpys():
    cp = pytest.importorskip("cvxpy")
    from robustsvm.conic import STATUS

    assert set(STATUS) == {cp.OPTIMAL, cp.OPTIMAL_INACCURATE, cp.USER_LIMIT, cp.INFEASIBLE,
                           cp.INFEASIBLE_INACCURATE, cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE, cp.SOLVER_ERROR}


def test_the_registered_conic_backends_are_cvxpys_installed_solvers():
    cp = pytest.importorskip("cvxpy")
    import robustsvm as rs
    from robustsvm.backends.conic import CONIC_SOLVERS

    registered = {row["name"].upper() for row in rs.solvers()} & set(CONIC_SOLVERS)
    assert registered == set(cp.installed_solvers()) & set(CONIC_SOLVERS)


def test_a_solution_read_through_its_own_module_finds_the_json_format(tmp_path):
    import numpy as np

    import robustsvm as rs

    X = np.random.default_rng(0).normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    rs.Problem(penalty=rs.L2(1.0)).solve(X, y, solver="dcd").to_json(tmp_path / "s.json")
    read = f"from robustsvm.solution import Solution; print(Solution.from_json({str(tmp_path / 's.json')!r}).solver)"
    assert _python("-c", read).stdout.strip() == "dcd"


def test_every_public_name_loads():
    out = _python("-c", "import robustsvm as rs; missing = [n for n in rs.__all__ if not hasattr(rs, n)]; "
                        "print(missing, sorted(set(rs.__all__) - set(dir(rs))))")
    assert out.stdout.strip() == "[] []"
