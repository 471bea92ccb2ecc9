"""HiGHS: offered by default for linear programs only, bounded on QPs, and silent on standard output."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import replace

import numpy as np
import pytest

import robustsvm as rs
from robustsvm.backends import registry
from robustsvm.backends.conic import default_backends, is_linear_program
from robustsvm.conic import ConicProgram

from .conftest import make_classification

pytestmark = pytest.mark.skipif("highs" not in registry._REGISTRY, reason="HiGHS is not installed")


def run(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "robustsvm", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize("problem, lp", [
    (rs.Problem(), True),
    (rs.Problem(penalty=rs.L1(0.1), uncertainty=rs.Box(0.1)), True),
    (rs.Problem(penalty=rs.L1(0.1), uncertainty=rs.Ball(0.1, p=np.inf), intercept=False), True),
    (rs.Problem(penalty=rs.L1(0.1), uncertainty=rs.Ball(0.1, p=1) & rs.Box(0.2)), True),
    (rs.Problem(penalty=rs.L2(0.1)), False),
    (rs.Problem(loss=rs.SquaredHinge(), penalty=rs.L1(0.1)), False),
    (rs.Problem(penalty=rs.L1(0.1), intercept=rs.L2(1.0)), False),
    (rs.Problem(penalty=rs.L1(0.1), uncertainty=rs.Box(0.1, widths=[1.0, 2.0, 0.5])), True),
])
def test_linear_programs_are_told_apart_by_the_compiled_program(problem, lp):
    """The model-level test agrees with CVXPY's own classification of the compiled program."""
    X, y = make_classification(20, 3, seed=1)
    assert is_linear_program(problem) is lp
    program = ConicProgram(problem.normalize(X, y), with_l2=problem.penalty.l2 > 0)  # as a single solve compiles
    assert program.cvxpy_problem.is_lp() is lp
    assert ("highs" in default_backends(problem)) is lp
    assert "highs" in rs.backends.capable_backends(problem)  # still available by name


def _recording_highs(monkeypatch):
    """Replace the HiGHS backend by one that records whether it ran (and then runs HiGHS)."""
    calls = []
    original = registry.get_backend("highs")

    def solve(model, **options):
        calls.append(model)
        return original.solve(model, **options)

    monkeypatch.setitem(registry._REGISTRY, "highs", replace(original, solve=solve))
    return calls


def test_no_default_path_reaches_highs_on_a_qp(monkeypatch):
    calls = _recording_highs(monkeypatch)
    X, y = make_classification(60, 4, seed=2)
    qp = rs.Problem(penalty=rs.L2(0.1), uncertainty=rs.Box(0.1, widths=[1.0, 2.0, 0.5, 1.0]), intercept=False)
    table = rs.compare(qp, X, y)
    assert "highs" not in [row["solver"] for row in table]
    rs.RobustSVC(l2=0.1, uncertainty=rs.Box(0.1), solver="auto").fit(X, y)
    rs.RobustSVC(l2=0.1, uncertainty=rs.Box(0.1)).fit(X, y)
    qp.solve(X, y)
    assert calls == []
    # an LP is still offered HiGHS by default, and HiGHS solves it to the package's certificate
    lp = rs.Problem(penalty=rs.L1(0.05), uncertainty=rs.Box(0.1))
    rows = {row["solver"]: row for row in rs.compare(lp, X, y)}
    assert len(calls) == 1 and rows["highs"]["status"] == "optimal"
    assert abs(rows["highs"]["objective"] - rows["clarabel"]["objective"]) <= rows["clarabel"]["gap"] + \
        rows["highs"]["gap"] + 1e-9


def test_cli_compare_default_list_leaves_highs_out_of_a_qp():
    out = run("compare", "wdbc", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["rows"]
    assert "highs" not in [r["solver"] for r in rows]
    assert "clarabel" in [r["solver"] for r in rows]


def test_fit_with_highs_prints_json_only():
    out = run("fit", "wdbc", "--solver", "highs", "--json")
    assert out.returncode == 0, out.stderr
    spec = json.loads(out.stdout)  # the HiGHS banner would make this fail
    assert spec["solution"]["solver"] == "highs"
    assert "Running HiGHS" not in out.stdout


def test_cli_compare_with_highs_named_prints_json_only():
    out = run("compare", "wdbc", "--solvers", "clarabel,highs", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["rows"]
    assert [r["solver"] for r in rows] == ["clarabel", "highs"]


def test_verbose_solver_output_goes_to_stderr():
    code = textwrap.dedent("""
        import robustsvm as rs
        from tests.conftest import make_classification
        X, y = make_classification(30, 3, seed=0)
        rs.Problem(penalty=rs.L1(0.1)).solve(X, y, solver="highs", verbose=True)
        print("END")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "END\n"
    assert "HiGHS" in out.stderr


#: a QP on which HiGHS's QP solver does not finish without a limit (HiGHS 1.16: past 90 s, Clarabel 0.1 s)
_HANGING_QP = """
import warnings
import numpy as np, robustsvm as rs
from tests.conftest import standardized
X, y = standardized("wisconsin", n=400, seed=0)
widths = np.random.default_rng(1).uniform(0.1, 3.0, X.shape[1])
prob = rs.Problem(penalty=rs.L2(0.00336), uncertainty=rs.Box(0.2, widths=widths), intercept=False)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    sol = prob.solve(X, y, solver="highs")
ref = prob.solve(X, y, solver="clarabel")
print(sol.status, sol.objective, sol.gap, ref.objective, ref.gap)
"""


def test_explicit_highs_on_a_hard_qp_stops_at_its_iteration_limit():
    """The limit is HiGHS's ``qp_iteration_limit``, which its QP solver checks; the status says it stopped."""
    out = subprocess.run([sys.executable, "-c", _HANGING_QP], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    status, objective, gap, ref_objective, ref_gap = out.stdout.split()
    assert status in ("max_iter", "optimal")
    if status == "max_iter":  # the package's certificate still bounds the distance to the optimum
        assert float(objective) - (float(ref_objective) - float(ref_gap)) <= float(gap) + 1e-9


def test_solves_in_threads_restore_standard_output():
    """Concurrent solves share one redirection of descriptor 1; the last one to end restores it."""
    code = textwrap.dedent("""
        import os, threading
        import robustsvm as rs
        from robustsvm.conic import solver_output
        from tests.conftest import make_classification
        X, y = make_classification(30, 3, seed=0)
        before = os.fstat(1).st_ino
        def work():
            for _ in range(3):
                rs.Problem(penalty=rs.L1(0.1)).solve(X, y, solver="highs")
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads: t.start()
        for t in threads: t.join()
        assert os.fstat(1).st_ino == before
        print("END")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "END\n"
