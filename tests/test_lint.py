"""The code base is ruff clean (configuration in pyproject.toml)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_clean():
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "robustsvm", "tests", "benchmarks", "notebooks"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
