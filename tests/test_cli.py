"""The command line, run as a user would, in a subprocess."""

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


def test_bad_command_exits_nonzero():
    out = run("no-such-command")
    assert out.returncode != 0
    assert "usage" in out.stderr.lower()
    out = run()
    assert out.returncode != 0
