"""The command line, run as a user would, in a subprocess."""

import re
import subprocess
import sys


def run(*args):
    return subprocess.run([sys.executable, "-m", "robustsvm", *args], capture_output=True, text=True, timeout=600)


def test_demo_prints_table():
    out = run("demo")
    assert out.returncode == 0, out.stderr
    assert "Wisconsin" in out.stdout
    assert "clarabel" in out.stdout and "accuracy" in out.stdout
    assert "optimal" in out.stdout
    # one-time compilation is reported apart from the solve times, and says so
    first = next(line for line in out.stdout.splitlines() if line.startswith("first call"))
    assert "not in the time column" in first and "numba" in first and re.search(r"dcd \d+\.\d+ s", first)
    assert "one-time compilation excluded" in out.stdout


def test_bad_command_exits_nonzero():
    out = run("no-such-command")
    assert out.returncode != 0
    assert "usage" in out.stderr.lower()
    out = run()
    assert out.returncode != 0


def test_demo_rows_agree_with_clarabel_within_certificates():
    import io

    from robustsvm.cli.demo import run_demo

    rows = run_demo(out=io.StringIO())
    reference = {r["model"]: r for r in rows if r["solver"] == "clarabel"}
    assert len(reference) >= 5
    for r in rows:
        ref = reference[r["model"]]
        scale = max(1.0, abs(ref["objective"]))
        # nobody beats the conic optimum (beyond Clarabel's own gap) ...
        assert r["objective"] >= ref["objective"] - ref["gap"] - 1e-7 * scale, r
        # ... and a solver that says optimal is within its own certificate of it
        if r["status"] == "optimal":
            assert r["objective"] - ref["objective"] <= r["gap"] + 1e-6 * scale, r
    # every solver had its untimed first call, and every row says how long it took
    assert {r["solver"] for r in rows} == {r["solver"] for r in rows if r["first_call"] > 0}
    signed = [r for r in rows if r["model"].startswith("SVM  hinge + L2, signs")]
    free = [r for r in rows if r["model"] == "SVM  hinge + L2" and r["solver"] == "clarabel"]
    assert signed[0]["objective"] > free[0]["objective"]  # the clinical signs bind
